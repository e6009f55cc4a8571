"""What a core function holds of a fifo: the :class:`Acquisition` that ``a.consume()`` and
``a.produce()`` return, and the :class:`Buffer` of elements acquired.

The fifo handle (:class:`~aiedsl.lang.fifo.ObjectFifo`) makes both, so this module does not
import it: a handle knows its fifo as :class:`AcquiredFrom`, and tells a fifo from anything else
by its record (an ``ObjectFifo`` is the only kind of :class:`~aiedsl.lang.trace.FifoRecord`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator, NoReturn, Protocol

from aiedsl.errors import DesignError
from aiedsl.ir.core_ops import Port
from aiedsl.ir.loc import Loc
from aiedsl.ir.types import TensorType
from aiedsl.lang.novalue import NoValue
from aiedsl.lang.records import FifoRecord
from aiedsl.lang.trace import CoreTrace
from aiedsl.library_vectors import ELTWISE_DTYPES, library_lanes, takes_vectors
from aiedsl.source_loc import caller_loc
from aiedsl.values import as_int, shown


class AcquiredFrom(Protocol):
    """The fifo an acquisition or buffer came from, as they use it (an
    :class:`~aiedsl.lang.fifo.ObjectFifo`)."""

    name: str
    elem: TensorType
    channel: str | None

    def acquire(self, port: Port, n: int = 1, *, _loc: Loc | None = None) -> Buffer:
        """Acquire ``n`` elements on ``port`` without releasing them."""

    def release(self, port: Port, n: int = 1, *, _loc: Loc | None = None) -> None:
        """Release ``n`` elements on ``port``."""

    def written(self) -> str:
        """The fifo as a core function writes it (``a[0]``, ``a``)."""


class Acquisition:
    """What ``a.consume()`` and ``a.produce()`` return: a context manager that acquires the
    elements as its ``with`` block starts (its ``as`` name is the :class:`Buffer`) and releases
    them as the block ends. Made without ``with`` it acquires nothing: a kernel given one says
    so, at the line that made it (:attr:`loc`)."""

    def __init__(self, fifo: AcquiredFrom, port: Port, n: int, loc: Loc) -> None:
        self.fifo, self.port, self.n = fifo, port, n
        self.loc = loc
        """The line of the ``consume()`` or ``produce()`` that made it."""
        self.held: Buffer | None = None
        """What its ``with`` acquired (None before it starts)."""

    def __enter__(self) -> "Buffer":
        self.held = self.fifo.acquire(self.port, self.n, _loc=caller_loc())
        return self.held

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 _: object) -> None:
        if kind is None:  # an error inside the block goes up as it is, nothing released
            self.fifo.release(self.port, self.n, _loc=caller_loc())
        elif self.held is not None and self.held.acquired_by is not None:
            # a loop() body this leaves, the exception caught outside the loop, names it
            self.held.acquired_by.raised = value

    def __repr__(self) -> str:
        return f"{self.fifo.written()}.{self.port}({self.n if self.n != 1 else ''})"


@dataclass(frozen=True, init=False, eq=False)
class Buffer(NoValue):
    """Elements acquired from a fifo inside a core: pass it to kernels.

    With ``consume(2)``, ``buf[0]`` and ``buf[1]`` are the two elements; a Buffer of one element
    can be passed directly. Only ``acquire``, ``consume`` and ``produce`` make one: IRON's
    ``Buffer(type, initial_value=...)``, a core's own memory, is :func:`aiedsl.local` here.
    """

    fifo: AcquiredFrom
    value: str
    """The acquire's result name, which a kernel call's argument names it by: unique in the
    program of the core that acquired it only."""
    count: int
    index: int = 0
    acquired_by: CoreTrace | None = None
    """The program of the core that acquired it: a call in another core's would name one of
    that core's own acquires (or none) by :attr:`value`."""
    acquired_at: Loc | None = None
    """The line that acquired it."""

    def __init__(self, fifo: Any = None, value: str = "", count: int = 1, index: int = 0,
                 acquired_by: CoreTrace | None = None, acquired_at: Loc | None = None,
                 **iron: Any) -> None:
        if iron.get("use_write_rtp"):  # IRON's runtime-parameter Buffer
            raise DesignError(
                "rtp", "Buffer(..., use_write_rtp=True) here is rtp(...): aiedsl's Buffer is an "
                "element a core acquired from a fifo", loc=caller_loc(),
                found=f"Buffer({_args_text(fifo, iron)})",
                fix="write rtp(Tensor[...], name=...) in the design function, "
                "rt.rtp_write(buf, index, value) in the runtime sequence, and pass buf[i] to "
                "kernels (from aiedsl import rtp)")
        if iron or not isinstance(fifo, FifoRecord):  # IRON's Buffer, written as in IRON
            raise DesignError(
                "local", "Buffer(...) here is an element a core acquired from a fifo, which "
                "acquire(), consume() and produce() make; IRON's Buffer, a core's own memory, "
                "is local(...)", loc=caller_loc(), found=f"Buffer({_args_text(fifo, iron)})",
                fix="write local(Tensor[...], initial=..., name=...) in the design function and "
                "pass it to kernels in the core function (from aiedsl import local)")
        object.__setattr__(self, "fifo", fifo)
        object.__setattr__(self, "value", value)
        object.__setattr__(self, "count", count)
        object.__setattr__(self, "index", index)
        object.__setattr__(self, "acquired_by", acquired_by)
        object.__setattr__(self, "acquired_at", acquired_at)

    def __getitem__(self, i: int) -> "Buffer":
        if isinstance(i, slice):
            _no_value(self, "is sliced")
        index = as_int(i)  # numpy's integers too; never a bool
        if index is None or not 0 <= index < self.count:
            n = self.count
            more = (f", or acquire {index + 1} at once (consume({index + 1}) or "
                    f"produce({index + 1}))" if index is not None and index >= n else "")
            raise DesignError(
                "acquire", f"element {shown(i)} of a {n}-element acquire of "
                f"'{self.fifo.name}'", loc=caller_loc(),
                limit=f"indices 0 to {n - 1}: the acquire holds {n} element{'s' * (n > 1)}",
                found=shown(i),
                related=[("the acquire", self.acquired_at)] if self.acquired_at else [],
                fix=(f"index 0..{n - 1}" if n > 1 else "index 0, or pass the acquired element "
                     "itself") + more)
        return Buffer(self.fifo, self.value, 1, index, self.acquired_by, self.acquired_at)

    def __iter__(self) -> Iterator["Buffer"]:
        return iter([self[i] for i in range(self.count)])

    @property
    def type(self) -> TensorType:
        """The element type."""
        return self.fifo.elem

    def __bool__(self) -> NoReturn:
        _no_value(self, "is used as a condition")

    def __setitem__(self, key: object, value: object) -> NoReturn:
        _no_value(self, "is assigned to")

    def _refuse(self, how: str, fix: str | None = None) -> NoReturn:
        _no_value(self, how, fix)


def _args_text(first: Any, keywords: dict[str, Any]) -> str:
    """The arguments of a call as written, shortly: ``type, initial_value=...``."""
    words = [] if first is None else ["..."]
    return ", ".join(words + [f"{k}=..." for k in keywords])


def _no_value(buf: Buffer, how: str, fix: str | None = None) -> NoReturn:
    raise DesignError(
        "core", f"a buffer of '{buf.fifo.name}' {how} in a core function", loc=caller_loc(),
        limit="a core function is traced once, not run: its buffers hold no values then, so "
        "Python and numpy cannot compute with them",
        fix=fix or "compute in a kernel: pass the buffer to one (" + _elementwise(buf.type)
        + "; a kernel's numpy reference says what it computes)")


def _elementwise(t: TensorType) -> str:
    """The kernels a fix points at for computing on an element of type ``t``: the library's
    element-wise ones when they take it (bf16, i16 or i32, whole vectors), else one of the
    user's own (naming vector_scalar for one i32 would end in its refusal of the size)."""
    if t.dtype in ELTWISE_DTYPES and takes_vectors(t):
        return "aiedsl.kernels has element-wise ones such as vector_scalar"
    if t.dtype in ELTWISE_DTYPES:
        why = (f"whole vectors of {library_lanes(t.dtype)} {t.dtype}, and "
               f"{t.written} holds {t.numel}")
    else:
        why = f"{', '.join(ELTWISE_DTYPES[:-1])} or {ELTWISE_DTYPES[-1]}, not {t.dtype}"
    return (f"one of your own, declared with declare(...) as README's \"Writing and testing a "
            f"kernel\" shows: the library's element-wise ones, such as vector_scalar, take "
            f"{why}")
