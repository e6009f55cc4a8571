"""The front end: the Python constructs a design file is written with."""

from aiedsl.lang.buffer import Buffer
from aiedsl.lang.channel import Channel, channel
from aiedsl.lang.context import define, refuse
from aiedsl.lang.core import herd
from aiedsl.lang.loops import loop
from aiedsl.lang.design import DesignHandle, design
from aiedsl.lang.fifo import ObjectFifo, fifo, join
from aiedsl.lang.gemm import gemm_runtime
from aiedsl.lang.local import LocalRef, local
from aiedsl.lang.placement import coretile, memtile, shim
from aiedsl.lang.rtp import BarrierRef, RtpRef, barrier, rtp
from aiedsl.lang.runtime import runtime
from aiedsl.lang.tiles import tiles
from aiedsl.lang.tensor import Tensor

__all__ = [
    "BarrierRef", "Buffer", "Channel", "DesignHandle", "LocalRef", "ObjectFifo", "RtpRef",
    "Tensor", "barrier", "channel", "coretile", "define", "design", "fifo", "gemm_runtime",
    "herd", "join", "local", "loop", "memtile", "refuse", "rtp", "runtime", "shim", "tiles",
]
