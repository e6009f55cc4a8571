"""The design IR: plain, frozen pydantic models that serialize to ``design.json``.

The front end (``aiedsl.lang``) builds one :class:`Design`; the checks, the placer, code generation,
reports and the simulator only read it. Passes that add information (placement) return a new
``Design`` built with ``model_copy(update=...)``; nothing mutates a node.

Names: a fifo is named by its symbol in the emitted MLIR (``a_0``), a core by its tile-index in its
herd (``core[1,2]``), a kernel by its C symbol (``matmul_bf16_f32_64x64x64_4x8x4``).
"""

from __future__ import annotations

from typing import Annotated, Literal, Union

from pydantic import (BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler,
                      model_serializer)

from aiedsl.ir.loc import Loc
from aiedsl.ir.physical import Physical
from aiedsl.ir.types import Dim, Pattern, TensorType

TileKind = Literal["shim", "memtile", "core"]
EndpointKind = Literal["shim", "memtile", "core", "coretile"]
"""Who moves an endpoint's elements: the host (``shim``), a link's DMA in a memtile or in a core
tile's memory (``memtile``, ``coretile``), or a core program (``core``)."""
Port = Literal["produce", "consume"]
Coord = tuple[int, int]


class _Node(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


# --------------------------------------------------------------------------------------------
# Dataflow: fifos and memtile links


class Endpoint(_Node):
    """One end of a fifo: who produces or consumes its elements, and where."""

    kind: EndpointKind
    """Shim (host memory), a link in a memtile (L2) or in a core tile (L1), or a core program."""
    core: str | None = None
    """For ``kind == "core"``: the core's name (``"core[0,1]"``)."""
    tile: Coord | None = None
    """(col, row) once placed; set by the user when pinned."""
    depth: int
    """Buffers this endpoint holds (double buffering = 2)."""
    dims: tuple[Dim, ...] = ()
    """``dimensionsToStream`` on a producer, ``dimensionsFromStream`` on a consumer."""
    loc: Loc
    """Where this endpoint was established (the acquire, fill, drain or link)."""

    @property
    def tile_kind(self) -> TileKind:
        """The kind of tile this end is on (a ``coretile`` link end is on a core tile)."""
        return "core" if self.kind == "coretile" else self.kind

    @property
    def is_link_end(self) -> bool:
        """True for the end a link's DMA moves (in a memtile or a core tile)."""
        return self.kind in ("memtile", "coretile")

    def label(self) -> str:
        """How reports name this endpoint: ``core[0,1] (0,3)``, ``memtile (1,1)``, ``shim``."""
        name = {"core": self.core, "coretile": "core tile"}.get(self.kind, self.kind)
        return f"{name} {self.tile}" if self.tile else str(name)


class Fifo(_Node):
    """An object fifo: one producer, one or more consumers (broadcast), elements of one type."""

    name: str
    """Its name, which the ``aie.objectfifo`` in the MLIR takes as its symbol."""
    elem: TensorType
    """One element's shape and element type: what one acquire hands a core."""
    producer: Endpoint
    """Where its elements come from."""
    consumers: tuple[Endpoint, ...]
    """Where they go, one end each (more than one: a broadcast)."""
    loc: Loc
    """Where the fifo (or the channel it belongs to) was declared."""
    channel: str | None = None
    """The channel this fifo belongs to, when it was made by ``channel(...)``."""
    index: tuple[int, ...] = ()
    """Its index in that channel (``(1, 2)`` for ``c[1, 2]``)."""
    repeat: int = 1
    """How many times its producer's DMA sends each element (mlir-aie's ``repeat_count``): a
    memtile (or a core tile's link) sends every buffer this many times in a row without
    receiving it again, so each consumer takes ``repeat`` times what is sent in. 1: once.
    ``design.json`` leaves it out when it is 1."""

    @model_serializer(mode="wrap")
    def _without_default_repeat(self, handler: SerializerFunctionWrapHandler
                                ) -> dict[str, object]:
        # design.json of a fifo sent once is what it was before `repeat` existed
        out: dict[str, object] = handler(self)
        if self.repeat == 1:
            out.pop("repeat", None)
        return out


class Link(_Node):
    """A link: ``forward`` (1 -> 1), ``split`` (1 -> n at offsets), ``join`` (n -> 1).

    Links go through a memtile; a ``forward`` may also go through a core tile's memory
    (``via="core"``), which mlir-aie allows for 1 -> 1 links only (``ObjectFifoLinkOp::verify``:
    join and distribute are unavailable on compute or shim tiles).
    """

    kind: Literal["forward", "split", "join"]
    """``forward`` (one fifo to one), ``split`` (one to several) or ``join`` (several to one)."""
    srcs: tuple[str, ...]
    """The fifos it takes elements from (several for a join)."""
    dsts: tuple[str, ...]
    """The fifos it hands them on to (several for a split)."""
    offsets: tuple[int, ...] = ()
    """Element offsets into the parent: of each dst for a split, of each src for a join."""
    via: Literal["memtile", "core"] = "memtile"
    """The kind of tile whose memory holds the link's buffers."""
    tile: Coord | None = None
    """(col, row) of that tile once placed, or as pinned."""
    loc: Loc
    """Where it was declared: the ``forward``, ``split`` or ``join`` call, or the ``channel`` with
    ``via=``."""


# --------------------------------------------------------------------------------------------
# Core programs


class BufferArg(_Node):
    """A kernel argument that is an acquired fifo element."""

    kind: Literal["buffer"] = "buffer"
    """The tag that tells argument kinds apart in ``design.json``."""
    value: str
    """The acquire that produced it (its ``result``)."""
    index: int = 0
    """Which of the acquired elements."""


class ScalarArg(_Node):
    """A kernel argument that is a constant scalar."""

    kind: Literal["scalar"] = "scalar"
    """The tag that tells argument kinds apart in ``design.json``."""
    value: int | float
    """The value the call passes."""
    dtype: str
    """Its C type as a dtype name (``i32`` for a Python int, ``f32`` for a float)."""


class RtpArg(_Node):
    """A kernel argument read from a runtime parameter: slot ``index`` of rtp buffer ``rtp``,
    loaded (``memref.load``) right before the call, so each call sees the value the host last
    wrote."""

    kind: Literal["rtp"] = "rtp"
    """The tag that tells argument kinds apart in ``design.json``."""
    rtp: str
    """The :class:`Rtp` buffer's name."""
    index: int
    """The slot of the rtp buffer it reads."""
    dtype: str
    """The slot's element type (the rtp's dtype)."""
    loc: Loc
    """Where the core function read it (``thr[0]``)."""


class LocalArg(_Node):
    """A kernel argument that is a core-local buffer (:class:`Local`): the calling core's own
    copy of it, passed as a buffer (a memref, like an acquired fifo element)."""

    kind: Literal["local"] = "local"
    """The tag that tells argument kinds apart in ``design.json``."""
    local: str
    """The :class:`Local` buffer's name."""
    loc: Loc
    """Where the core function passed it."""


Arg = Annotated[Union[BufferArg, ScalarArg, RtpArg, LocalArg], Field(discriminator="kind")]


class Acquire(_Node):
    """Acquire ``count`` elements of ``fifo`` on ``port``; blocks until they are available."""

    op: Literal["acquire"] = "acquire"
    """The tag that tells core ops apart in ``design.json``."""
    fifo: str
    """The fifo's name."""
    port: Port
    """Which end the core takes: the one it consumes from or produces into."""
    count: int = 1
    """Elements taken at once."""
    result: str
    """Name of the acquired view, referenced by :class:`BufferArg`."""
    loc: Loc
    """The design-file line that acquired (the ``with ... .consume()`` or ``.produce()``)."""


class Release(_Node):
    """Release ``count`` elements of ``fifo`` on ``port``, handing them on."""

    op: Literal["release"] = "release"
    """The tag that tells core ops apart in ``design.json``."""
    fifo: str
    """The fifo's name."""
    port: Port
    """Which end the core hands on: the one it consumed from or produced into."""
    count: int = 1
    """Elements handed on at once."""
    loc: Loc
    """The design-file line of the release: the ``with`` block's, or the ``release(...)`` call."""


class Call(_Node):
    """Call a kernel on acquired buffers and scalars."""

    op: Literal["call"] = "call"
    """The tag that tells core ops apart in ``design.json``."""
    kernel: str
    """The kernel's C symbol."""
    args: tuple[Arg, ...]
    """What the call passes, in the kernel signature's order."""
    loc: Loc
    """The design-file line of the call."""


class Loop(_Node):
    """``count`` iterations of ``body``; stays a loop (``scf.for``), never unrolled."""

    op: Literal["loop"] = "loop"
    """The tag that tells core ops apart in ``design.json``."""
    count: int
    """Iterations."""
    body: tuple["Op", ...]
    """The ops of one iteration."""
    loc: Loc
    """The design-file line of the ``for ... in loop(...)``."""


class BarrierWait(_Node):
    """Wait until this core's lock of runtime barrier ``barrier`` holds ``value``, leaving the
    value there (``aie.use_lock(..., Acquire, value)``, IRON's ``wait_for_value``: AIE2's
    acquire-equal, which does not change the lock). Waits for a value the lock still holds pass
    at once, however many."""

    op: Literal["barrier_wait"] = "barrier_wait"
    """The tag that tells core ops apart in ``design.json``."""
    barrier: str
    """The :class:`Barrier`'s name."""
    value: int
    """The value waited for (the lock keeps it)."""
    loc: Loc
    """The design-file line of the wait."""


Op = Annotated[Union[Acquire, Release, Call, Loop, BarrierWait], Field(discriminator="op")]


class Herd(_Node):
    """A rectangle of cores running one SPMD core function, ``cols x rows``."""

    name: str
    """The ``@herd`` function's name; its cores are named after it (``core[0,1]``)."""
    cols: int
    """Cores across (tile columns)."""
    rows: int
    """Cores up (tile rows)."""
    anchor: Coord | None = None
    """(col, row) of core ``[0, 0]``: pinned by the user or set by placement."""
    cascade: Literal["north", "south", "east", "west"] | None = None
    """The direction each core passes its accumulator on (``"east"``: along each row), or
    None for no cascade."""
    loc: Loc
    """Where the herd was declared."""


class Core(_Node):
    """One core of a herd with its traced program (one invocation's worth of work)."""

    name: str
    """``"<herd>[x,y]"``."""
    herd: str
    """The name of its herd."""
    index: Coord
    """(x, y) inside the herd."""
    tile: Coord | None = None
    """(col, row) once placed."""
    body: tuple[Op, ...]
    """Its program: the traced ops, loops kept as loops."""
    stack: int
    """Bytes of stack reserved in data memory."""
    loc: Loc
    """Where its herd was declared."""


class Cascade(_Node):
    """An accumulator cascade link from core ``src`` to its neighbour ``dst``
    (``aie.cascade_flow``): a blocking stream of 512-bit words between two cores."""

    src: str
    """The name of the core that sends its accumulators."""
    dst: str
    """The name of the neighbour that receives them."""
    loc: Loc
    """The herd that declared it."""


class Rtp(_Node):
    """A runtime-parameter buffer (IRON's ``Buffer(..., use_write_rtp=True)``): an
    ``aie.buffer`` in the memory of the one core that reads it, which the runtime sequence writes
    word by word (``aiex.npu.rtp_write``) and the core reads before kernel calls."""

    name: str
    """Its ``sym_name`` in the emitted MLIR."""
    type: TensorType
    """Its shape and element type (one slot per element)."""
    core: str
    """The core it lives in (the core that reads it)."""
    loc: Loc
    """Where it was declared."""
    read_at: Loc
    """Where that core first read it (what put it in that core)."""


class Local(_Node):
    """A core-local buffer (IRON's ``Buffer(type, initial_value=...)`` handed to a ``Worker``):
    an ``aie.buffer`` in the memory of each core that passes it to a kernel, one copy per core,
    that no DMA and no other core touches. It holds :attr:`init` from when the design is
    loaded (mlir-aie writes a buffer's ``initial_value`` with the device's configuration, not at
    each run), and what kernels write into it stays from call to call, loop iteration to loop
    iteration and, on the NPU, run to run.

    Each copy's symbol is :attr:`name` when one core uses it, else ``<name>_<col>_<row>`` after
    its core's tile (:func:`aiedsl.place.alloc.local_buffer_name`), as ``design.json``'s
    ``physical.buffers`` list them with their addresses."""

    name: str
    """Its name as the design gave it (the ``sym_name`` of a copy used by one core)."""
    type: TensorType
    """Its shape and element type."""
    init: str | None = None
    """Its initial value: the bytes of every element in row-major order (little-endian, as
    the core's memory holds them), in hexadecimal; None when it has none (the memory then holds
    whatever was there before)."""
    cores: tuple[str, ...]
    """The cores that pass it to a kernel, each holding a copy of its own (in core order)."""
    loc: Loc
    """Where it was declared."""


class Barrier(_Node):
    """A runtime barrier (IRON's ``WorkerRuntimeBarrier``): one lock in each core that waits on
    it, which the runtime sequence sets (``aiex.set_lock``) and the core waits on until it holds
    a value (:class:`BarrierWait`)."""

    name: str
    """Its name, which the runtime sequence and the cores refer to it by."""
    init: int
    """The locks' initial value."""
    cores: tuple[str, ...]
    """The cores that wait on it, each with its own lock (in core order)."""
    loc: Loc
    """Where it was declared."""


# --------------------------------------------------------------------------------------------
# Kernels


class KernelArg(_Node):
    """One parameter of a kernel's C signature."""

    name: str
    """The parameter's name in the C signature."""
    kind: Literal["buffer", "scalar"]
    """An acquired buffer (a pointer in C) or a scalar."""
    type: TensorType | None = None
    """For buffers: the element type the kernel expects."""
    dtype: str
    """Element dtype (buffers) or scalar dtype."""
    access: Literal["in", "out", "inout"] = "in"
    """For buffers: whether the kernel reads it, writes it, or both."""
    blocks: tuple[int, int] | None = None
    """For 2-D buffers the kernel reads or writes in blocks: (block rows, block cols). The
    buffer holds the tile block after block (blocks row-major, each block row-major), as the
    mmul kernels expect; the checks compare it with what the fifo's DMA layouts deliver."""
    equals: int | None = None
    """For scalars: the only value the kernel is right for. Its C++ is compiled for it and does
    not read the argument (a library kernel's element count ``n``: passing less would not make
    the kernel do less), or reads it with buffers sized for it; ``check`` refuses any other
    value."""
    narrows_to: str | None = None
    """For scalars: the type the C++ converts the argument to before using it (``(int16_t)s``
    for the i32 scalar of an i16 kernel), when narrower than :attr:`dtype`. ``check`` refuses a
    value outside that type's range, which would otherwise wrap (or become infinity) unseen."""


class Kernel(_Node):
    """A micro-kernel: C symbol, C++ source, signature, numpy reference and cost."""

    symbol: str
    """C symbol, with its shape in the name (``matmul_bf16_f32_64x64x64_4x8x4``)."""
    source: str
    """The C++ it comes from: a file in ``kernels_cpp/`` or a template in ``aiedsl/kernels/``."""
    source_kind: Literal["file", "template"]
    """Whether :attr:`source` is a C++ file or a jinja2 template."""
    entry: str | None
    """C++ expression the generated ``extern "C"`` entry calls (``matmul_bf16_f32<64, 64, 64>``);
    None: :attr:`symbol` is an ``extern "C"`` function the source defines itself (mlir-aie's
    kernel files), which cores call directly, with no generated entry."""
    defines: dict[str, int | float | str] = {}
    """Preprocessor macros every compile of its C++ gets, ``-DNAME=VALUE`` (Peano's and the
    host's), sorted by name: the sizes an mlir-aie kernel file reads (``DIM_M``, ``BIT_WIDTH``).
    Kernels of one source with the same defines are compiled into one object."""
    args: tuple[KernelArg, ...]
    """Its C signature's parameters, in order."""
    params: dict[str, int | float | str]
    """Template parameters (sizes, mmul shape) the symbol and source were made from; a float
    only as the test value of a float scalar argument."""
    reference: str
    """``module:function`` of the numpy reference the simulator runs."""
    cycles: int
    """Estimated cycles per call."""
    cycles_source: Literal["declared", "profile"] = "declared"
    """Where :attr:`cycles` comes from: the declaration's ``cycles=``, or, when it gave none,
    the kernel's profile (``aiedsl kernel profile``: the busiest unit's cycles)."""
    arch: Literal["aie2", "aie2p"] | None = None
    """The AI Engine architecture its C++ variant and cycles were made for (a library kernel
    that differs by device, a kernel whose cycles come from a profile); None: any."""
    cascade_in: TensorType | None = None
    """What one call reads from the cascade (its upstream neighbour's accumulators), or None."""
    cascade_out: TensorType | None = None
    """What one call writes to the cascade (to its downstream neighbour), or None."""
    ops: int = 0
    """Arithmetic operations per call (a multiply-accumulate counts 2), for GFLOPS/GOPS."""
    exact: bool = False
    """Its results are copies or selections of its inputs (a copy, relu, a max): it rounds
    nothing, so the comparison of an output counts no rounding for it."""
    cost: str
    """The cost formula and its source, for reports."""
    loc: Loc
    """Where the design declared (or first used) it."""

    @property
    def reference_params(self) -> dict[str, int | float | str]:
        """The :attr:`params` the numpy reference gets as keywords: all but those named after a
        scalar argument, which only give that scalar a value to profile or test with (the call
        passes the scalar itself, so a reference naming its parameter after it would otherwise
        get it twice)."""
        scalars = {a.name for a in self.args if a.kind == "scalar"}
        return {k: v for k, v in self.params.items() if k not in scalars}

    @property
    def sums(self) -> bool:
        """Does a call add into what it writes, or reduce into it? True for a buffer it reads
        and writes (a matmul's accumulator), a cascade, or an output with fewer elements than
        its largest input (a reduction). Such an output may be an ulp of a partial sum off the
        reference's, so it is compared with an absolute tolerance (:func:`aiedsl.compare.compare`).
        """
        if self.exact:  # a max reduction selects, it does not sum
            return False
        buffers = [a for a in self.args if a.kind == "buffer" and a.type is not None]
        ins = [a.type.numel for a in buffers if a.access == "in" and a.type is not None]
        outs = [a.type.numel for a in buffers if a.access == "out" and a.type is not None]
        return (any(a.access == "inout" for a in buffers) or self.cascade_in is not None
                or self.cascade_out is not None or bool(ins and outs and min(outs) < max(ins)))


# --------------------------------------------------------------------------------------------
# Host side


class HostTensor(_Node):
    """A runtime argument: a host tensor the runtime sequence reads or writes."""

    name: str
    """The design function's argument name."""
    index: int
    """Its position among the runtime sequence's arguments (XRT buffer group 3 + index)."""
    type: TensorType
    """Its shape and element type."""
    loc: Loc
    """Where the design function declared it (its argument)."""


class Transfer(_Node):
    """Move a host tensor's elements into (``fill``) or out of (``drain``) a fifo."""

    op: Literal["fill", "drain"]
    """``fill`` (host to the fifo) or ``drain`` (the fifo to the host); also the tag that tells
    runtime ops apart in ``design.json``."""
    fifo: str
    """The fifo whose host end it fills or drains."""
    tensor: str
    """The host tensor it reads or writes."""
    pattern: Pattern
    """Which of the tensor's elements, in which order."""
    wait: bool = False
    """Issue a completion token that a later :class:`Wait` waits for."""
    loc: Loc
    """The design-file line of the ``fill`` or ``drain``."""


class Wait(_Node):
    """Wait until a waited transfer on ``fifo`` has completed."""

    op: Literal["wait"] = "wait"
    """The tag that tells runtime ops apart in ``design.json``."""
    fifo: str
    """The fifo whose oldest waited transfer it waits for."""
    loc: Loc
    """The design-file line of the ``rt.sync()`` or ``rt.wait(...)``; for the sync implied at
    the sequence's end, the ``with runtime()`` line."""
    by: Literal["sync", "wait", "end"] = "sync"
    """What the design wrote: ``rt.sync()`` or ``rt.wait(fifo)``; ``end`` for the sync the
    sequence's end implies."""


class RtpWrite(_Node):
    """Write ``value`` into slot ``index`` of runtime parameter ``rtp``, at this point of the
    runtime sequence (``aiex.npu.rtp_write``, lowered to one ``write32`` into the core's memory)."""

    op: Literal["rtp_write"] = "rtp_write"
    """The tag that tells runtime ops apart in ``design.json``."""
    rtp: str
    """The :class:`Rtp` buffer's name."""
    index: int
    """The slot written."""
    value: int
    """The 32-bit value written."""
    loc: Loc
    """The design-file line of the write."""


class SetBarrier(_Node):
    """Set every lock of barrier ``barrier`` to ``value`` (``aiex.set_lock``: one register write
    per lock; it replaces the lock's value, it does not add to it)."""

    op: Literal["set_barrier"] = "set_barrier"
    """The tag that tells runtime ops apart in ``design.json``."""
    barrier: str
    """The :class:`Barrier`'s name."""
    value: int
    """The value every one of its locks takes."""
    loc: Loc
    """The design-file line of the set."""


RuntimeOp = Annotated[Union[Transfer, Wait, RtpWrite, SetBarrier], Field(discriminator="op")]


IR_VERSION = 1
"""The version of the design IR's schema, written first in every ``design.json``: raised when a
field changes meaning or goes, so a tool reading the file can tell which it has."""


class Design(_Node):
    """A whole design: the single IR every stage of aiedsl reads."""

    ir_version: int = IR_VERSION
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


Loop.model_rebuild()
