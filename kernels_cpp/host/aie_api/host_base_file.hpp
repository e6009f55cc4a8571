// aie_api/host_base_file.hpp -- read by a host build after the precompiled aie_api/aie.hpp
// (aiedsl/kernels/host_pch.py forces it with -include, and defines AIEDSL_HOST_PCH): the file
// being compiled, which the precompiled header's own __BASE_FILE__ cannot name (host_core.hpp's
// kernel_line).
#ifndef AIEDSL_HOST_BASE_FILE_HPP
#define AIEDSL_HOST_BASE_FILE_HPP
extern "C" __attribute__((visibility("hidden"))) const char *aiedsl_base_file() {
  return __BASE_FILE__;
}
#endif
