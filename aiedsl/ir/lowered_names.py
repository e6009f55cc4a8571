"""The symbols mlir-aie's objectfifo lowering gives what it makes, spelled in one place.

``aie-objectFifo-stateful-transform`` (AIEObjectFifoStatefulTransform.cpp) splits a fifo into one
objectfifo per end, then creates each end's buffers and locks, and a shim allocation per shim
end. The plan of the lowering (:mod:`aiedsl.place.objectfifo`), the symbol check
(:mod:`aiedsl.checks.symbols`) and the reader of the real lowering's output
(:mod:`aiedsl.toolchain.physical`) all spell those names through these functions, so a change of
spelling in mlir-aie is one change here.

>>> consumer_end("a", 1, consumers=2), buffer_name("a_cons", 0), lock_names("a_cons", 0)
('a_1_cons', 'a_cons_buff_0', ('a_cons_prod_lock_0', 'a_cons_cons_lock_0'))
>>> fifo_of("a_0_cons_buff_1")
'a_0'
"""

from __future__ import annotations

import re

SHIM_ALLOC_SUFFIX = "_shim_alloc"
"""Appended to a fifo's name for its ``aie.shim_dma_allocation`` (older mlir-aie used the fifo's
own name; :mod:`aiedsl.toolchain.physical` reads both)."""

SPELLINGS = ("<fifo>_cons / <fifo>_<i>_cons, <end>_buff_<i>, <end>_prod_lock_<i>, "
             "<end>_cons_lock_<i> and <fifo>" + SHIM_ALLOC_SUFFIX)
"""What the lowering adds, as a user reads it in a rule."""

ENDINGS = "_cons, _buff_<i>, _prod_lock_<i>, _cons_lock_<i> or " + SHIM_ALLOC_SUFFIX
"""The endings of those names, as a fix names them."""

_OWNER = re.compile(r"(.+?)(?:_cons)?_(?:buff|prod_lock|cons_lock|lock)_\d+$")


def consumer_end(fifo: str, index: int, consumers: int) -> str:
    """The objectfifo made for consumer ``index`` of ``consumers``: ``a_cons``, ``a_1_cons``."""
    return f"{fifo}_{index}_cons" if consumers > 1 else f"{fifo}_cons"


def buffer_name(end: str, index: int) -> str:
    """Buffer ``index`` of an end's objectfifo: ``a_cons_buff_0``."""
    return f"{end}_buff_{index}"


def lock_names(end: str, index: int) -> tuple[str, str]:
    """The producer and consumer locks of pair ``index``: ``a_prod_lock_0``, ``a_cons_lock_0``."""
    return f"{end}_prod_lock_{index}", f"{end}_cons_lock_{index}"


def shim_alloc_name(fifo: str) -> str:
    """A shim end's ``aie.shim_dma_allocation`` symbol: ``a_shim_alloc``."""
    return fifo + SHIM_ALLOC_SUFFIX


def fifo_of(symbol: str) -> str:
    """The fifo a lowered buffer or lock belongs to: ``a_0_cons_buff_1`` -> ``a_0``."""
    m = _OWNER.match(symbol)
    return m.group(1) if m else symbol
