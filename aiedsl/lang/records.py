"""What tracing records of a design's data movement, as plain data: each fifo as declared
(:class:`FifoRecord`) with the endpoints tracing finds for it, each memtile link, and each step
of the runtime sequence. :mod:`aiedsl.lang.trace` keeps them; :func:`aiedsl.lang.to_ir.to_ir`
makes the IR from them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from aiedsl.ir.fifos import EndpointKind
from aiedsl.ir.loc import Loc
from aiedsl.ir.types import Dim, Pattern, TensorType
from aiedsl.lang.tensor import HostTensorRef

LinkKind = Literal["forward", "split", "join"]


@dataclass
class EndpointUse:
    """One endpoint of a fifo, as recorded during tracing."""

    kind: EndpointKind
    core: str | None
    loc: Loc
    pin: tuple[int, int] | None = None
    depth: int | None = None
    dims: tuple[Dim, ...] = ()


@dataclass(eq=False)
class FifoRecord:
    """What a design declared of one object fifo; endpoints are added as tracing finds them.

    The design function holds it as an :class:`~aiedsl.lang.fifo.ObjectFifo`.
    """

    name: str
    elem: TensorType
    depth: int
    loc: Loc
    dims_to_stream: tuple[Dim, ...] = ()
    dims_from_stream: tuple[Dim, ...] = ()
    dims_per_consumer: dict[str, tuple[Dim, ...]] | None = None
    """``dims_from_stream`` given per consumer (``{"core[0,1]": [...]}``), as mlir-aie's
    ``{%tile fromStream [...], ...}``."""
    consumer_depth: int | dict[str, int] | None = None
    memtile_depth: int | None = None
    """Buffers of its memtile end, if a memtile consumes it (a channel's ``host_depth=``: the
    cores' fifo of a channel they fill owns the memtile's buffers); unlike ``consumer_depth``
    it names no end that must exist."""
    repeat: int = 1
    """Times its producer's DMA sends each element (``repeat=``: mlir-aie's ``repeat_count``)."""
    shim_pin: tuple[int, int] | None = None
    channel: str | None = None
    index: tuple[int, ...] = ()
    producer: EndpointUse | None = None
    consumers: list[EndpointUse] = field(default_factory=list)


@dataclass
class LinkRecord:
    """A forward, split or join of fifos at a memtile (or a core tile's memory)."""

    kind: LinkKind
    srcs: list[FifoRecord]
    dsts: list[FifoRecord]
    offsets: list[int]
    pin: tuple[int, int] | None
    loc: Loc
    end: EndpointKind = "memtile"


@dataclass
class TransferRecord:
    """An ``rt.fill``, ``rt.drain`` or wait as traced, before its fifo is followed to the fifo
    the shim talks to."""

    op: Literal["fill", "drain", "wait"]
    fifo: FifoRecord
    tensor: HostTensorRef | None
    pattern: Pattern | None
    wait: bool
    loc: Loc
    waits_for: Literal["fill", "drain"] = "drain"
    """For a wait: the kind of transfer it waits for (which way its fifo is followed)."""
    by: Literal["sync", "wait", "end"] = "sync"
    """For a wait: ``rt.sync()``, ``rt.wait(fifo)``, or the sync the sequence's end implies."""


@dataclass
class RtpWriteRecord:
    """An ``rt.rtp_write`` as traced."""

    rtp: str
    index: int
    value: int
    loc: Loc
    op: str = "rtp_write"


@dataclass
class SetBarrierRecord:
    """An ``rt.set_barrier`` as traced."""

    barrier: str
    value: int
    loc: Loc
    op: str = "set_barrier"


RuntimeRecord = TransferRecord | RtpWriteRecord | SetBarrierRecord
