"""The design IR: plain, frozen pydantic models that serialize to ``design.json``.

The front end (``aiedsl.lang``) builds one :class:`Design`; the checks, the placer, code generation,
reports and the simulator only read it. Passes that add information (placement) return a new
``Design`` built with ``model_copy(update=...)``; nothing mutates a node.

Names: a fifo is named by its symbol in the emitted MLIR (``a_0``), a core by its tile-index in its
herd (``core[1,2]``), a kernel by its C symbol (``matmul_bf16_f32_64x64x64_4x8x4``).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from aiedsl.ir.base import _Node
from aiedsl.ir.cores import Barrier, Cascade, Core, Herd, Local, Rtp
from aiedsl.ir.fifos import Endpoint, Fifo, Link
from aiedsl.ir.kernel import Kernel
from aiedsl.ir.loc import Loc
from aiedsl.ir.physical import Physical
from aiedsl.ir.runtime import HostTensor, RuntimeOp, Transfer

IR_VERSION = 1
"""The version of the design IR's schema, written first in every ``design.json``: raised when a
field changes meaning or goes, so a tool reading the file can tell which it has."""


class Design(_Node):
    """A whole design: the single IR every stage of aiedsl reads."""

    # the schema says its one value (a const), while pydantic takes any int, so that
    # validate() words another version's refusal (a design.json's other fields may differ)
    ir_version: int = Field(default=IR_VERSION, json_schema_extra={"const": IR_VERSION})
    """The schema's version (:data:`IR_VERSION`) this IR follows."""
    name: str
    """The design's name (the ``@design`` function's, or ``name=``)."""
    device: str
    """mlir-aie device name (``npu1``, ``npu2_4col`` ...)."""
    loc: Loc
    """Where the ``@design`` function is."""
    defines: dict[str, bool | int | float | str] = {}
    """The ``define(...)`` parameters and the values they took."""
    tensors: tuple[HostTensor, ...]
    """The runtime sequence's arguments, in order."""
    fifos: tuple[Fifo, ...]
    """Every object fifo (a channel's fifos one by one), in declaration order."""
    links: tuple[Link, ...] = ()
    """Every link through a memtile or a core tile, in declaration order."""
    herds: tuple[Herd, ...]
    """Every herd, in declaration order."""
    cores: tuple[Core, ...]
    """Every core of every herd, with its program."""
    kernels: tuple[Kernel, ...] = ()
    """Every kernel the cores call."""
    runtime: tuple[RuntimeOp, ...]
    """The runtime sequence, op by op."""
    rtps: tuple[Rtp, ...] = ()
    """Runtime-parameter buffers, in declaration order."""
    barriers: tuple[Barrier, ...] = ()
    """Runtime barriers, in declaration order."""
    locals: tuple[Local, ...] = ()
    """Core-local buffers, in declaration order."""
    cascades: tuple[Cascade, ...] = ()
    """Accumulator cascade links between cores, from each herd's ``cascade=``."""
    flows: Literal["circuit", "packet"] = "circuit"
    """How fifo streams cross the switches: circuit-switched (a wire each) or packet-switched
    (aiecc ``--packet-sw-objFifos``: every fifo an ``aie.packet_flow`` with its own packet id,
    streams sharing wires)."""
    placed: bool = False
    """True once every tile is decided (after :func:`aiedsl.place.place`)."""
    physical: Physical | None = None
    """DMA channels, BDs, locks, addresses and stream routes (after allocation and routing)."""

    def fifo(self, name: str) -> Fifo:
        """The fifo called ``name``."""
        for f in self.fifos:
            if f.name == name:
                return f
        raise KeyError(name)

    def kernel(self, symbol: str) -> Kernel:
        """The kernel with C symbol ``symbol``."""
        for k in self.kernels:
            if k.symbol == symbol:
                return k
        raise KeyError(symbol)

    def rtp(self, name: str) -> Rtp:
        """The runtime-parameter buffer called ``name``."""
        for r in self.rtps:
            if r.name == name:
                return r
        raise KeyError(name)

    def local(self, name: str) -> Local:
        """The core-local buffer called ``name``."""
        for b in self.locals:
            if b.name == name:
                return b
        raise KeyError(name)

    def barrier(self, name: str) -> Barrier:
        """The runtime barrier called ``name``."""
        for b in self.barriers:
            if b.name == name:
                return b
        raise KeyError(name)

    def tensor(self, name: str) -> HostTensor:
        """The host tensor called ``name``."""
        for t in self.tensors:
            if t.name == name:
                return t
        raise KeyError(name)

    def filled_tensors(self) -> list[str]:
        """The host tensors the runtime fills (the design's inputs), in argument order."""
        filled = {t.tensor for t in self.runtime if isinstance(t, Transfer) and t.op == "fill"}
        return [t.name for t in self.tensors if t.name in filled]

    def shim_end(self, t: Transfer) -> Endpoint:
        """The host (shim) end of the fifo a runtime transfer fills or drains."""
        f = self.fifo(t.fifo)
        if t.op == "fill":
            return f.producer
        return next(c for c in f.consumers if c.kind == "shim")
