"""Herds and their cores (each with its program), the cascades between cores, and what lives
in a core's memory beside its program: runtime parameters, local buffers, barrier locks."""

from __future__ import annotations

from typing import Literal

from aiedsl.ir.base import Coord, _Node
from aiedsl.ir.core_ops import Op
from aiedsl.ir.loc import Loc
from aiedsl.ir.types import TensorType


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
    forever: bool = True
    """Whether the core starts its program again each time it ends, as every run of the design
    needs (its ``aie.core`` loops to ``c_forever``: IRON's ``Worker``); False for a program run
    once, after which the core stops (IRON's ``Worker(while_true=False)``): the design then
    runs once per load."""


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
