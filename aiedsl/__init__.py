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
    "simulate": "aiedsl.sim",
    "load_design": "aiedsl.loader",
    "load_json": "aiedsl.design_json",
    **dict.fromkeys((
        "Buffer", "Channel", "DesignHandle", "ObjectFifo", "Tensor", "barrier", "channel",
        "coretile", "define", "design", "fifo", "gemm_runtime", "herd", "join", "local", "loop",
        "memtile", "refuse", "rtp", "runtime", "shim", "tiles"), "aiedsl.lang"),
    **dict.fromkeys(("Artifacts", "RunResult", "build"), "aiedsl.api"),
}

__all__ = [
    "Artifacts", "Buffer", "Channel", "Deadlock", "DesignError", "DesignHandle", "ObjectFifo",
    "RunResult", "Tensor", "ToolchainError", "__version__", "barrier", "bf16", "build", "channel",
    "coretile", "define", "design", "f32", "fifo", "gemm_runtime", "herd", "i8", "i16", "i32",
    "join", "load_design", "load_json", "local", "loop", "memtile", "refuse", "rtp", "runtime",
    "shim", "simulate", "tiles", "u8", "u16", "u32",
]

if TYPE_CHECKING:  # what the lazy names are, for type checkers and editors
    from aiedsl.api import Artifacts, RunResult, build
    from aiedsl.dtypes import bf16, f32, i8, i16, i32, u8
    from aiedsl.errors import DesignError, ToolchainError
    from aiedsl.lang import (
        Buffer, Channel, DesignHandle, ObjectFifo, Tensor, barrier, channel, coretile, define,
        design, fifo, gemm_runtime, herd, join, local, loop, memtile, refuse, rtp, runtime, shim,
        tiles,
    )
    from aiedsl.design_json import load_json
    from aiedsl.loader import load_design
    from aiedsl.sim import simulate
    from aiedsl.sim.explain import Deadlock


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
