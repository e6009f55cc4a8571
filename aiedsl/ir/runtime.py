"""The host side of the design IR: the host tensors the runtime sequence takes, and its ops
(transfers, waits, runtime-parameter writes, barrier sets)."""

from __future__ import annotations

from typing import Annotated, Literal, Union

from pydantic import Field

from aiedsl.ir.base import _Node
from aiedsl.ir.loc import Loc
from aiedsl.ir.types import Pattern, TensorType


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
