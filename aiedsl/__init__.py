"""aiedsl: a declarative tile-program language for AMD AIE2 NPUs, embedded in Python.

Example design file::

    from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
    from aiedsl.kernels import passthrough

    @design(device="npu1_1col")
    def copy(inp: Tensor[4096, i32], out: Tensor[4096, i32]):
        a = fifo(Tensor[1024, i32])     # named 'a' in messages and in the MLIR
        b = fifo(Tensor[1024, i32])
        copy_k = passthrough(Tensor[1024, i32])

        @herd()
        def core():
            for _ in loop(4):
                with a.consume() as x, b.produce() as y:
                    copy_k(x, y)

        with runtime() as rt:
            rt.fill(a, inp)
            rt.drain(b, out)

    @copy.reference                 # what `aiedsl sim` compares the outputs with
    def reference(inp):
        return inp.copy()

Every public name loads its module on first use (PEP 562), so ``import aiedsl`` and the
command line's ``--help`` stay quick; a design file pays only for what it imports.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from aiedsl.version import __version__

_WHERE = {
    **dict.fromkeys(("bf16", "f32", "i8", "i16", "i32", "u8", "u16", "u32"), "aiedsl.dtypes"),
    **dict.fromkeys(("DesignError", "ToolchainError"), "aiedsl.errors"),
    "Deadlock": "aiedsl.sim.explain",
    **dict.fromkeys(("SimResult", "simulate"), "aiedsl.sim"),
    "Timing": "aiedsl.sim.summary",
    "load_design": "aiedsl.loader",
    "load_json": "aiedsl.design_json",
    # Each front-end name from the module that defines it: aiedsl.lang re-exports nothing, so
    # that ``aiedsl.lang.fifo`` stays the module and never becomes the function of that name.
    "Buffer": "aiedsl.lang.buffer",
    **dict.fromkeys(("Channel", "channel"), "aiedsl.lang.channel"),
    **dict.fromkeys(("define", "refuse"), "aiedsl.lang.context"),
    "herd": "aiedsl.lang.core",
    "loop": "aiedsl.lang.loops",
    **dict.fromkeys(("DesignHandle", "design"), "aiedsl.lang.design"),
    **dict.fromkeys(("ObjectFifo", "fifo", "join"), "aiedsl.lang.fifo"),
    "gemm_runtime": "aiedsl.lang.gemm",
    "local": "aiedsl.lang.local",
    **dict.fromkeys(("coretile", "memtile", "shim"), "aiedsl.lang.placement"),
    **dict.fromkeys(("barrier", "rtp"), "aiedsl.lang.rtp"),
    "runtime": "aiedsl.lang.runtime",
    "tiles": "aiedsl.lang.tiles",
    "Tensor": "aiedsl.lang.tensor",
    **dict.fromkeys(("Artifacts", "RunResult", "build"), "aiedsl.api"),
    "DirectoryBusy": "aiedsl.builddir.lock",
}

__all__ = [
    "Artifacts", "Buffer", "Channel", "Deadlock", "DesignError", "DesignHandle", "DirectoryBusy",
    "ObjectFifo",
    "RunResult", "SimResult", "Tensor", "Timing", "ToolchainError", "__version__", "barrier",
    "bf16", "build", "channel", "coretile", "define", "design", "f32", "fifo", "gemm_runtime",
    "herd", "i8", "i16", "i32", "join", "load_design", "load_json", "local", "loop", "memtile",
    "refuse", "rtp", "runtime", "shim", "simulate", "tiles", "u8", "u16", "u32"
]

if TYPE_CHECKING:  # what the lazy names are, for type checkers and editors
    from aiedsl.api import Artifacts, RunResult, build
    from aiedsl.builddir.lock import DirectoryBusy
    from aiedsl.dtypes import bf16, f32, i8, i16, i32, u8, u16, u32
    from aiedsl.errors import DesignError, ToolchainError
    from aiedsl.lang.buffer import Buffer
    from aiedsl.lang.channel import Channel, channel
    from aiedsl.lang.context import define, refuse
    from aiedsl.lang.core import herd
    from aiedsl.lang.design import DesignHandle, design
    from aiedsl.lang.fifo import ObjectFifo, fifo, join
    from aiedsl.lang.gemm import gemm_runtime
    from aiedsl.lang.local import local
    from aiedsl.lang.loops import loop
    from aiedsl.lang.placement import coretile, memtile, shim
    from aiedsl.lang.rtp import barrier, rtp
    from aiedsl.lang.runtime import runtime
    from aiedsl.lang.tensor import Tensor
    from aiedsl.lang.tiles import tiles
    from aiedsl.design_json import load_json
    from aiedsl.loader import load_design
    from aiedsl.sim import SimResult, simulate
    from aiedsl.sim.explain import Deadlock
    from aiedsl.sim.summary import Timing


def __dir__() -> list[str]:
    """The public names (what ``dir(aiedsl)`` and completion list): not the lazy loader's own
    imports."""
    return sorted(__all__)


def __getattr__(name: str) -> Any:
    """Load the module that holds ``name`` on first use and keep the name here."""
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'aiedsl' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value
