"""aiedsl: a declarative tile-program language for AMD AIE2 NPUs, embedded in Python.

Example design file::

    from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
    from aiedsl.kernels import passthrough

    @design(device="npu1_1col")
    def copy(inp: Tensor[4096, i32], out: Tensor[4096, i32]):
        a, b = fifo(Tensor[1024, i32]), fifo(Tensor[1024, i32])
        copy_k = passthrough(Tensor[1024, i32])

        @herd()
        def core():
            for _ in loop(4):
                with a.consume() as x, b.produce() as y:
                    copy_k(x, y)

        with runtime() as rt:
            rt.fill(a, inp)
            rt.drain(b, out)
"""

from aiedsl.dtypes import bf16, f32, i8, i16, i32, u8
from aiedsl.errors import DesignError
from aiedsl.lang import (
    Buffer, Channel, DesignHandle, ObjectFifo, Tensor, channel, define, design, fifo, gemm_runtime,
    herd, join,
    loop, memtile, runtime, shim, tiles,
)

__version__ = "0.1.0"

_API = ("Artifacts", "RunResult", "build")


def __getattr__(name: str):  # type: ignore[no-untyped-def]
    """``aiedsl.build`` and friends load the build/run machinery only when first used, so that
    design files, which import aiedsl, stay quick to load."""
    if name in _API:
        from aiedsl import api

        return getattr(api, name)
    raise AttributeError(f"module 'aiedsl' has no attribute {name!r}")

__all__ = [
    "Artifacts", "Buffer", "Channel", "DesignError", "DesignHandle", "ObjectFifo", "RunResult",
    "Tensor", "bf16", "build",
    "channel", "define", "design", "f32", "fifo", "gemm_runtime", "herd", "i8", "i16", "i32", "join", "loop",
    "memtile", "runtime", "shim", "tiles", "u8",
]
