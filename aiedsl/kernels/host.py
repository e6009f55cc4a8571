"""Kernels on the host: compile a kernel's C++ with g++ against aiedsl's host AIE API header,
load it with ctypes and run it on numpy buffers (what ``aiedsl kernel test``
(:mod:`~aiedsl.kernels.host_check`), ``kernel profile`` and ``sim --kernels native`` run).

Example
-------
(needs g++; ``kernel_ir`` a declared kernel's IR, ``a, b, c`` its arrays)

>>> fn = native(kernel_ir, kernel_text(None, kernel_ir))     # doctest: +SKIP
>>> fn(a, b, c)                         # runs the C++ on the arrays   # doctest: +SKIP

:func:`native` is two steps, each its own function: :func:`build_native` (build, or find
cached: a :class:`HostBuild`, the library's path and the ``aie_arch`` it was built for) and
:func:`load_native` (load a build: the callable), which another process can run on a build
made here.

The steps live in modules of their own, whose names this module re-exports for the importers
that use them from here: building in :mod:`~aiedsl.kernels.host_build` (what is compiled, with
which flags, cached where), the first compiler error's place and kernel in
:mod:`~aiedsl.kernels.host_first_error`, loading and running in
:mod:`~aiedsl.kernels.host_load`, and the cascade words a call moves in
:mod:`~aiedsl.kernels.host_cascade`.
"""

from __future__ import annotations

# not used here: tests reach the compiler's subprocess.run through this module (to stop it)
import subprocess  # noqa: F401
from typing import Callable

from aiedsl.ir.kernel import Kernel
from aiedsl.kernels.host_build import (  # noqa: F401 (re-exported: importers find them here)
    CXX_FLAGS, HOST_INCLUDE, HostBuild, build_native, compile_host)
from aiedsl.kernels.host_cascade import cascade_mismatch  # noqa: F401 (likewise)
from aiedsl.kernels.host_load import (  # noqa: F401 (likewise)
    COUNTED, RESET_MODES, WORK, load_copy, load_native)
from aiedsl.kernels.text import KernelText


def native(k: Kernel, kt: KernelText, aie_arch: int | None = None) -> Callable[..., None]:
    """A callable running kernel ``k``'s generated C++ ``kt`` on numpy arrays and scalars
    (built for ``aie_arch`` when given: see :func:`compile_host`): :func:`build_native`, then
    :func:`load_native`."""
    build = build_native(k, kt, aie_arch)
    return load_native(k, build.path, build.aie_arch, kt=kt)
