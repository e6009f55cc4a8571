"""Runtime parameters: small buffers in a core's memory that the host writes while the design runs.

IRON's ``Buffer(..., use_write_rtp=True)``: one xclbin serves several scalar settings, because
the runtime sequence writes them (``aiex.npu.rtp_write``) instead of the core's code holding
them as constants. A buffer lives in the memory of the one core that reads it (IRON places a
``Buffer`` in the worker it is passed to; here, in the core whose function reads it); a herd
declares one per core, as IRON declares one per worker.

Example
-------
::

    thr = [rtp(Tensor[16, i32], name=f"thr{i}") for i in range(2)]

    @herd(cols=2)
    def core(x, y):
        for _ in loop(LINES):
            with of_in[x].consume() as src, of_out[x].produce() as dst:
                threshold(src, dst, thr[x][0], LINE)     # loaded before each call

    with runtime() as rt:
        rt.rtp_write(thr[0], 0, 50)                      # before the fills the core waits for
        ...

The core reads a slot when its kernel call runs (``memref.load`` right before ``func.call``),
so what it reads is ordered by the data it waits for: write the parameter before the fills
that feed the calls meant to see it, and change it only after the drains of the calls that
used the old value (:func:`aiedsl.checks.rtp.check_rtps` holds a design to that). When the
data does not order them (a core reads a parameter before it waits for data), a runtime
:func:`barrier` does: the core waits on it, the runtime sets it after writing the parameter.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NoReturn

from aiedsl.errors import DesignError
from aiedsl.ir.core_ops import BarrierWait
from aiedsl.ir.loc import Loc
from aiedsl.ir.types import TensorType
from aiedsl.lang.context import _CORE, current_design
from aiedsl.lang.names import check_name
from aiedsl.lang.novalue import NoValue
from aiedsl.lang.trace import DesignTrace
from aiedsl.source_loc import caller_loc
from aiedsl.values import as_int, shown

RTP_DTYPES = ("i32",)
"""Element types an rtp may have: mlir-aie's ``rtp_write`` writes a 32-bit word at
``address + 4 * index`` (``RtpToWrite32Pattern``), so only 4-byte integer slots line up with
the index the host writes."""


@dataclass(eq=False)
class RtpRef:
    """A runtime-parameter buffer as a design function sees it; ``thr[i]`` in a core function
    reads slot ``i``."""

    name: str
    type: TensorType
    loc: Loc
    core: str | None = None
    """The core it lives in: the first core whose function reads it."""
    read_at: Loc | None = None

    def __getitem__(self, index: object) -> "RtpValue":
        loc = caller_loc()
        cb = _CORE.get()
        if cb is None:
            raise DesignError(
                "rtp", f"rtp '{self.name}' is read outside a core function", loc=loc,
                fix="read it (thr[0]) inside the @herd function and pass it to a kernel call; "
                "the runtime writes it with rt.rtp_write")
        n = self.type.numel
        slot = as_int(index)  # numpy's integers too, as a plain int
        if slot is None or not 0 <= slot < n:
            raise DesignError(
                "rtp", f"rtp '{self.name}' is read at index {shown(index)}", loc=loc,
                limit=f"an int from 0 to {n - 1} (it holds {n} {self.type.dtype})",
                found=shown(index), fix=f"read a slot from 0 to {n - 1}, or declare it larger")
        if self.core is None:
            self.core, self.read_at = cb.name, loc
        elif self.core != cb.name:
            assert self.read_at is not None
            raise DesignError(
                "rtp", f"rtp '{self.name}' is read by {cb.name}, but it lives in "
                f"{self.core}", loc=loc, limit="an rtp is a buffer in the memory of the one "
                "core that reads it (the first core whose function reads it)",
                found=cb.name, related=[(f"{self.core} reads it", self.read_at)],
                fix=_per_core_fix(self.core, cb.name, _one_herd(self.core, cb.name)))
        return RtpValue(self, slot, loc)

    def __repr__(self) -> str:
        return f"rtp({self.name!r}, {self.type})"


@dataclass(frozen=True, eq=False)
class RtpValue(NoValue):
    """Slot ``index`` of an rtp, read in a core function: pass it to a kernel's scalar
    parameter of the rtp's type. It is not a Python number: the value is only known when the
    design runs.

    Every use as one is refused with the same message: a truth test, ``==`` (which would pick
    one branch of an ``if`` at trace time, silently), ``<`` and the other comparisons,
    arithmetic, ``int()``, ``float()`` and numpy (:class:`~aiedsl.lang.novalue.NoValue`'s
    operators; only ``==`` and truth had it, the others said Python's TypeError)."""

    rtp: RtpRef
    index: int
    loc: Loc

    def _refuse(self, how: str, fix: str | None = None) -> NoReturn:
        # one message for every use: what the slot is, not which operator met it
        at = caller_loc()
        raise DesignError(
            "rtp", f"rtp '{self.rtp.name}'[{self.index}] is used as a Python value", loc=at,
            related=[("read here", self.loc)] if at != self.loc else None,
            fix="the host writes it while the design runs: pass it to a kernel call, which "
            "reads it then")

    def __bool__(self) -> NoReturn:
        self._refuse("is tested as a truth value")

    def __index__(self, *ndigits: object) -> NoReturn:  # round(x, 2) passes one
        self._refuse("is used as a number")

    __int__ = __trunc__ = __floor__ = __ceil__ = __round__ = __float__ = __complex__ = __index__


def rtp(type: TensorType, *, name: str) -> RtpRef:
    """Declare a runtime-parameter buffer of ``type`` (e.g. ``Tensor[16, i32]``), named ``name``
    (its symbol in the MLIR). It is placed in the core that reads it; the runtime sequence
    writes it with ``rt.rtp_write(buf, index, value)``.
    """
    loc = caller_loc()
    b = current_design("rtp(...)")
    name = check_name(name, "rtp name", loc)
    if not isinstance(type, TensorType):
        raise DesignError("rtp", f"rtp '{name}' has type {shown(type)}, not a Tensor[...] type",
                          loc=loc, found=shown(type),
                          fix="write e.g. rtp(Tensor[16, i32], name=\"thr\")")
    if type.dtype not in RTP_DTYPES:
        raise DesignError(
            "rtp", f"rtp '{name}' holds {type.dtype}", loc=loc,
            limit="i32 slots: mlir-aie's rtp_write writes a 32-bit word at 4 * index bytes",
            found=type.dtype, fix=f"declare it as Tensor[{type.numel}, i32] and let the kernel "
            "narrow the value" + (
                "; a float goes as its bits: rt.rtp_write(buf, i, int(np.float32(x).view("
                "np.int32))), read in the kernel as std::bit_cast<float>(slot) (or send it "
                "as a fixed-point integer)" if type.dtype in ("f32", "bf16") else ""))
    if len(type.shape) != 1:
        raise DesignError("rtp", f"rtp '{name}' has shape {list(type.shape)}", loc=loc,
                          limit="one dimension (rtp_write indexes it by a single slot)",
                          found=str(list(type.shape)), fix=f"write Tensor[{type.numel}, i32]")
    if name in b.rtps or name in b.barriers:
        first = b.rtps[name].loc if name in b.rtps else b.barriers[name].loc
        raise DesignError("rtp", f"two rtps or barriers are named '{name}'", loc=loc,
                          related=[("the first", first)], fix="give each its own name")
    _not_local(b, "rtp", name, loc)
    ref = RtpRef(name, type, loc)
    b.rtps[name] = ref
    return ref


@dataclass(eq=False)
class BarrierRef:
    """A runtime barrier as a design function sees it (IRON's ``WorkerRuntimeBarrier``): a core
    function waits on it with :meth:`wait_for_value`, the runtime sets it with
    ``rt.set_barrier``. Each core that waits gets a lock of its own in its tile, and the runtime
    sets all of them."""

    name: str
    init: int
    loc: Loc
    cores: list[str]

    def wait_for_value(self, value: int) -> None:
        """In a core function: wait until the barrier holds ``value`` (IRON's meaning:
        ``aie.use_lock(lock, Acquire, value)``, AIE2's acquire-equal). The wait leaves the value
        in the lock, so once the runtime set it, every wait for it passes until a set replaces
        it: a wait in a loop after one ``rt.set_barrier(b, 1)`` passes on every iteration."""
        loc = caller_loc()
        cb = _CORE.get()
        if cb is None:
            raise DesignError(
                "barrier", f"barrier '{self.name}' is waited on outside a core function",
                loc=loc, fix="call wait_for_value inside the @herd function; the runtime sets "
                "the barrier with rt.set_barrier")
        top = current_design("wait_for_value").target.max_lock_value
        number = as_int(value)  # numpy's integers too, as a plain int
        if number is None or not 1 <= number <= top:
            raise DesignError(
                "barrier", f"barrier '{self.name}' is waited on for value {shown(value)}",
                loc=loc, limit=f"an int from 1 to {top} (a lock's value)", found=shown(value),
                fix="wait for a value rt.set_barrier gives it, e.g. 1")
        if cb.name not in self.cores:
            self.cores.append(cb.name)
        cb.emit(BarrierWait(barrier=self.name, value=number, loc=loc))


def barrier(*, name: str, initial: int = 0) -> BarrierRef:
    """Declare a runtime barrier named ``name`` whose locks start at ``initial``: cores wait on
    it (``b.wait_for_value(1)``) until the runtime sets it (``rt.set_barrier(b, 1)``), e.g. to
    read a runtime parameter only after the host wrote it. A wait leaves the value in the lock
    and a set replaces it (it does not add to it): to hold a core again, wait for a new value
    (1 for the first pass, 2 for the second) and set that value when the core may go on.
    """
    loc = caller_loc()
    b = current_design("barrier(...)")
    name = check_name(name, "barrier name", loc)
    top = b.target.max_lock_value
    start = as_int(initial)  # numpy's integers too, as a plain int
    if start is None or not 0 <= start <= top:
        raise DesignError("barrier", f"barrier '{name}' has initial={shown(initial)}", loc=loc,
                          limit=f"an int from 0 to {top} (a lock's value)",
                          found=shown(initial), fix="start it at 0 and set it from the runtime")
    if name in b.barriers or name in b.rtps:
        first = b.barriers[name].loc if name in b.barriers else b.rtps[name].loc
        raise DesignError("barrier", f"two rtps or barriers are named '{name}'", loc=loc,
                          related=[("the first", first)], fix="give each its own name")
    _not_local(b, "barrier", name, loc)
    ref = BarrierRef(name, start, loc, [])
    b.barriers[name] = ref
    return ref


def _not_local(b: DesignTrace, what: str, name: str, loc: Loc) -> None:
    """Refuse ``name`` for an rtp or barrier when a core-local buffer has it (one MLIR symbol
    table holds them all)."""
    if name in b.locals:
        raise DesignError(what, f"{what} '{name}' has the name of a local declared before",
                          loc=loc, related=[("the local", b.locals[name].loc)],
                          limit="locals, rtps, barriers, fifos and kernels share one MLIR "
                          "symbol table", found=name, fix="give each its own name")


def _one_herd(first: str, other: str) -> tuple[int, int] | None:
    """The (cols, rows) of the herd whose cores ``first`` and ``other`` both are (``h[0,0]``,
    ``h[1,0]``); None when they are two herds'."""
    herd, _, _ = first.partition("[")
    if other.partition("[")[0] != herd:
        return None
    b = current_design("reading an rtp")
    return next(((h.cols, h.rows) for h in b.herds if h.name == herd), None)


def _per_core_fix(first: str, other: str, shape: tuple[int, int] | None) -> str:
    """The fix of an rtp read by two cores, ``first`` and ``other`` (``h[0,0]``, ``h[0,1]``),
    ``shape`` their herd's (cols, rows) when both are one herd's: one rtp per core of it,
    indexed as its layout tells the cores apart (a herd in rows by y: indexing by x gave every
    core the first rtp; a herd of both by x and y, not by the coordinate these two differ in)."""
    if shape is not None and 1 in shape:
        size, at = ("rows", "y") if shape[0] == 1 else ("cols", "x")
        return ("declare one rtp per core, e.g. thr = [rtp(Tensor[16, i32], name=f\"thr{i}\") "
                f"for i in range({size})], and read thr[{at}][0]")
    return ("declare one rtp per core, e.g. thr = {(i, j): rtp(Tensor[16, i32], "
            "name=f\"thr{i}_{j}\") for i in range(cols) for j in range(rows)}, and read "
            "thr[x, y][0]")
