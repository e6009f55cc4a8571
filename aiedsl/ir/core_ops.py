"""What a core program is made of: its ops (acquire, release, call, loop, barrier wait), and
the arguments a kernel call passes."""

from __future__ import annotations

from typing import Annotated, Literal, Union

from pydantic import Field

from aiedsl.ir.base import _Node
from aiedsl.ir.loc import Loc

Port = Literal["produce", "consume"]

MAX_LOOP_COUNT = 2 ** 63 - 1
"""Most iterations of one loop: its count is an ``arith.constant ... : index`` bound of an
``scf.for``, and MLIR's index constants are 64-bit signed (2^63 would read as negative).
``loop()`` refuses more, and the IR's validation too."""


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


class IndexArg(_Node):
    """A kernel argument that is the index of a loop around the call (``for i in loop(n)``,
    then ``kern(..., i)``): 0 in the loop's first iteration, ``n - 1`` in its last. It is the
    ``scf.for``'s induction variable, cast (``arith.index_cast``) to the scalar's integer
    type."""

    kind: Literal["index"] = "index"
    """The tag that tells argument kinds apart in ``design.json``."""
    loop: int
    """Which loop's: 0 for the outermost ``loop()`` of the core's program around the call, 1
    for the one inside it, and so on."""
    loc: Loc
    """Where the core function passed it."""


Arg = Annotated[Union[BufferArg, ScalarArg, RtpArg, LocalArg, IndexArg],
                Field(discriminator="kind")]


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

Loop.model_rebuild()
