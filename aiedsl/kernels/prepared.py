"""A kernel's reference split for the simulator (:class:`Prepared`): operands it makes once and
shares between cores, the element moves it can compose with a DMA's (:class:`Reorder`), and an
output it keeps in its own layout between calls (:class:`Accumulator`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable


@dataclass(frozen=True)
class Prepared:
    """A kernel's reference in two steps, so the simulator can share the first between cores.

    ``operands`` maps positions of input buffers to pure functions of their contents, and
    ``finish`` does the rest: ``finish(*[operands[i](x) if i in operands else x ...])`` does
    exactly what ``reference(*args, **params)`` does. When a broadcast fill brings the same
    data to several cores, the simulator makes each operand once per fill (e.g. matmul's A tile
    unblocked and widened to f32 once for the four cores of a row) and hands the others the
    same, read-only, array.
    """

    operands: dict[int, Callable[[Any], Any]]
    finish: Callable[..., None]
    accumulator: Accumulator | None = None
    """How the kernel may keep one output in a layout of its own between calls, if it may."""
    reorders: dict[int, Reorder] = field(default_factory=dict)
    """The operands that only move and widen elements, and how (see :class:`Reorder`)."""


@dataclass(frozen=True, eq=False)
class Reorder:
    """An operand function that only moves elements and widens them: ``operands[i](x)`` is
    ``x.reshape(-1)[order].astype(dtype).reshape(shape)``, exactly.

    When a buffer holds data a DMA gathered in an order of its own (a memtile packing mmul
    blocks), the simulator then makes the operand from the data before that gather in one
    step, the two orders composed (often to none: the kernel unpacks what the memtile packed).
    """

    order: Any
    """Where each element of the operand comes from (indices into the flat buffer)."""
    dtype: Any
    shape: tuple[int, ...]


@dataclass(frozen=True)
class Accumulator:
    """An output a kernel only adds into, kept by the simulator in the kernel's own layout
    from call to call on the same buffer (matmul's C row-major, not in mmul blocks), and
    written back to the buffer before anything else reads it: the core releases it, or
    another call takes it.

    ``load(buffer)`` makes the private copy, ``store(acc, buffer)`` writes it back, and
    ``finish(*args)`` (with the private copy at ``position``) adds one call's result into it;
    load, one or more finishes and store must leave the buffer bit for bit as the same calls
    of ``Prepared.finish`` do.
    """

    position: int
    load: Callable[[Any], Any]
    store: Callable[[Any, Any], None]
    finish: Callable[..., None]
