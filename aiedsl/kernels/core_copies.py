"""Each core's own copy of the kernels' host builds, as each core of the array has its own
program and data memory: what ``sim --kernels native`` calls.

On the NPU every core links its own ELF from the kernels' objects (mlir-aie,
python/compiler/aiecc/main.py: ``process_core`` links ``corefile(".", device_name, core,
"elf")``, ``{device}_core_{col}_{row}.elf``, with that tile's own linker script), loaded into
that core's memory: a ``static`` or global variable of a kernel is the core's own, and two
cores calling one kernel each count their own calls. The host loads a library once per
process, so the simulation's one child running every core's calls would share one copy of the
variables among all the cores (core 0 saw its counter go 0 1 4 5, core 1 2 3 6 7). So each
core runs a copy of the library loaded for it (:func:`~aiedsl.kernels.host.load_copy`), at its
first call of a kernel built from it; the kernels of one source share the core's copy, as they
share its ELF. A core's copy starts with the variables' initial values, whatever the process
ran before (a library loaded and called in the simulating process, which a forked child
inherits as it was left).

The rounding and saturation modes are the core's control registers, not a library's data:
the simulator hands each call its core's modes and keeps what the call left, across the
core's libraries (:func:`~aiedsl.kernels.host.load_native`).
"""

from __future__ import annotations

import ctypes
from pathlib import Path
from typing import Callable, Sequence

from aiedsl.ir.kernel import Kernel
from aiedsl.kernels.host import HostBuild, load_copy, load_native


class CoreCopies:
    """The callables of ``kernels`` (each kernel with :func:`~aiedsl.kernels.host.native`'s
    or :func:`~aiedsl.kernels.host.load_native`'s callable) per core: ``copies(core,
    index)`` is kernel ``index``'s, run in ``core``'s copy of its library, loaded at the
    core's first call of that library. A callable that is no host build (a Python function
    standing for a kernel) is every core's."""

    def __init__(self, kernels: Sequence[tuple[Kernel, Callable[..., None]]]) -> None:
        self._kernels = list(kernels)
        self._libraries: dict[tuple[str, Path], ctypes.CDLL] = {}
        self._fns: dict[tuple[str, int], Callable[..., None]] = {}

    def __call__(self, core: str, index: int) -> Callable[..., None]:
        fn = self._fns.get((core, index))
        if fn is None:
            fn = self._fns[(core, index)] = self._load(core, index)
        return fn

    def _load(self, core: str, index: int) -> Callable[..., None]:
        """Kernel ``index``'s callable in ``core``'s copy of its library (loaded if the core
        has none yet)."""
        k, shared = self._kernels[index]
        build = getattr(shared, "build", None)
        if not isinstance(build, HostBuild):
            return shared
        lib = self._libraries.get((core, build.path))
        if lib is None:
            lib = self._libraries[(core, build.path)] = load_copy(build.path)
        return load_native(k, build.path, build.aie_arch, lib=lib, kt=getattr(shared, "kt", None))

    @property
    def loaded(self) -> int:
        """How many copies are loaded (one per core and library called so far)."""
        return len(self._libraries)

    def close(self) -> None:
        """Unload the copies (their callables must not be called after): a process that
        runs the kernels itself (no child to end with the simulation) would keep every
        simulation's copies otherwise."""
        import _ctypes

        unload = getattr(_ctypes, "dlclose", None) or getattr(_ctypes, "FreeLibrary", None)
        self._fns.clear()
        libraries, self._libraries = self._libraries, {}
        if unload is not None:
            for lib in libraries.values():
                unload(lib._handle)
