"""``loop(n)``: one loop of ``n`` iterations in a core's program, whose body runs once at trace
time (loops stay loops: an ``scf.for``), its index a :class:`LoopIndex` that a kernel call may pass
and that refuses to be used as a value; and how a body left early (break, return, an exception)
is told apart and said."""

from __future__ import annotations

import dis
import sys
from types import TracebackType
from typing import Iterator, NoReturn

from aiedsl.errors import DesignError
from aiedsl.ir.core_ops import MAX_LOOP_COUNT, Loop
from aiedsl.ir.loc import Loc
from aiedsl.lang.context import current_core, design_trace
from aiedsl.lang.trace import CoreTrace, LeftEarly, Scope
from aiedsl.library_code import is_users
from aiedsl.source_loc import caller_loc, exits_from_with, file_loc
from aiedsl.targets import DEFAULT_DEVICE, get_target
from aiedsl.values import as_int, shown

UNROLL_ADVISED = 16
"""The most iterations a loop's index error suggests unrolling with Python's range(): as many
identical copies make :mod:`aiedsl.checks.unrolled` call the run a loop, and copies that differ
(each passed its own index) cost program memory alike."""


def _program_memory() -> str:
    """The traced design's core program memory, as a message says it (``16 KB``)."""
    b = design_trace()
    size = (b.target if b is not None else get_target(DEFAULT_DEVICE)).program_memory
    return f"{size // 1024} KB"


class LoopIndex:
    """What ``for i in loop(n)`` binds ``i`` to: the loop's index, which a kernel call inside
    the loop may pass as an integer scalar (``kern(buf, i)``: 0 in the first iteration,
    ``n - 1`` in the last), and which refuses every other use.

    The body is traced once and becomes one ``scf.for`` body, so no Python value can stand for
    each iteration's index: a number here would be baked into the program, the same in every
    iteration, without a word. Only a kernel receives it, as the ``scf.for``'s induction
    variable.
    """

    __slots__ = ("core", "of", "token")

    def __init__(self, of: loop, token: object = None, core: CoreTrace | None = None) -> None:
        self.of, self.token, self.core = of, token, core

    def depth_in(self, core: CoreTrace, how: str, loc: Loc) -> int:
        """Which loop around the call being traced in ``core`` this is the index of (0 for the
        outermost); refused, saying it was used ``how``, outside its loop."""
        if self.core is core:
            for depth, scope in enumerate(core.scopes[1:]):
                if scope.opener is self.token:
                    return depth
        kept = self.core is not None and self.core is not core
        whose = ("" if self.core is None else
                 f"{self.core.name}'s (kept from that core's trace)" if kept and
                 self.core.name != core.name else
                 f"another trace's {self.core.name}'s (kept from an earlier design's trace)")
        raise DesignError(
            "loop", f"the index of the loop({self.of.count}) at line {self.of.loc.line} is "
            f"{how} " + (f"by {core.name}, but it is {whose}" if kept else "outside that loop"),
            loc=loc, limit="a loop's index is each iteration's own: only a call inside the loop's "
            "body, in the core that runs it, has one to pass",
            found=self._found(),
            fix="make the call inside the for's body, in the core function itself (each core "
            "traces its own loops), or pass a constant")

    def _found(self) -> str:
        return f"the index of loop({self.of.count}), line {self.of.loc.line}"

    def __repr__(self) -> str:
        return f"<the index of loop({self.of.count})>"

    def refuse(self, how: str, loc: Loc | None = None, same: str = "it would be 0") -> NoReturn:
        """A DesignError saying the index was used ``how`` (at ``loc``, or the caller's line);
        ``same``: what a value standing for it would be in every iteration."""
        raise DesignError(
            "loop", f"the index of the loop({self.of.count}) at line {self.of.loc.line} is "
            f"{how}", loc=loc or caller_loc(), found=self._found(),
            limit="a loop() body is traced once and runs as "
            f"one scf.for body: its index has no Python value ({same} in every iteration)",
            fix="pass the index itself to a kernel, as an integer scalar (kern(buf, i)), and "
            "compute with it in the C++; for other values that change per iteration, " + (
                "unroll with Python's range() or send them through a fifo or an rtp"
                if self.of.count <= UNROLL_ADVISED else
                "send them through a fifo or an rtp (Python's range() would make "
                f"{self.of.count} copies of the body, and a few hundred overflow the core's "
                f"{_program_memory()} of program memory, which only the build finds)"))

    def __index__(self) -> NoReturn:
        self.refuse("used as an integer")

    __int__ = __index__

    def __float__(self) -> NoReturn:
        self.refuse("used as a number")

    def __format__(self, spec: str) -> NoReturn:
        # text of it (a name f"k_{i}") would be the same in every iteration; repr() stays,
        # for messages and debugging
        self.refuse("formatted into text", same="its text would be the same")

    def __str__(self) -> NoReturn:
        self.refuse("formatted into text", same="its text would be the same")

    def __bool__(self) -> NoReturn:
        self.refuse("tested as a truth value")

    def _compared(self, other: object) -> NoReturn:
        self.refuse("compared with a value")

    __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = _compared  # type: ignore[assignment]
    __hash__ = object.__hash__

    def _computed(self, other: object) -> NoReturn:
        self.refuse("used in arithmetic")

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _computed
    __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = __truediv__ = __rtruediv__ = _computed
    __pow__ = __rpow__ = __lshift__ = __rshift__ = __and__ = __or__ = __xor__ = _computed




class loop:
    """``for _ in loop(n):`` records one ``scf.for`` of ``n`` iterations; the body runs once.

    Use it inside core functions. ``break`` and ``continue`` are not allowed: the body is traced
    once and becomes the loop's body. Like ``range(n)``, the object may be iterated again: each
    ``for`` over it records a loop of its own (``L = loop(4)``, then two ``for _ in L:``, are
    two loops of four iterations, each with its own body), in the core that iterates it.
    """

    def __init__(self, count: int) -> None:
        self.loc = caller_loc()
        n = as_int(count)  # numpy's integers too, as a plain int
        if n is None or n < 1:
            raise DesignError("loop", f"loop({shown(count)}) needs a positive integer count",
                              loc=self.loc, found=shown(count),
                              fix="leave the loop out where its count is 0: a Python `if` "
                              "around it in the core function (decided while tracing, so "
                              "nothing of it is emitted)" if n == 0 else
                              "use an integer >= 1 (// divides exactly)")
        count = n
        if count > MAX_LOOP_COUNT:
            # the count becomes an MLIR index constant: 64-bit, and the loop compares signed
            raise DesignError("loop", f"loop({count}) has more iterations than an MLIR index "
                              "constant holds", loc=self.loc,
                              limit=f"1 to {MAX_LOOP_COUNT} (2^63 - 1)", found=str(count),
                              fix="use a count of at most sys.maxsize (2^63 - 1)")
        self.count = count
        current_core("loop(...)")  # refused outside a core function, at this line

    def __iter__(self) -> _LoopTrace:
        """Start recording one loop: its body is what runs until the ``for`` asks for the next
        iteration. A fresh iterator each time, as ``range``'s: one kept in the object (it was)
        ended at the first ``for``, and a second ``for`` over the object recorded an
        ``scf.for`` with an empty body, its ops traced into the enclosing scope once."""
        return _LoopTrace(self, current_core("loop(...)"))


class _LoopTrace:
    """One ``for`` over a :class:`loop`: opens its body's scope in the core iterating it, hands
    out the index once, and records the ``Loop`` as the ``for`` asks for a second iteration."""

    def __init__(self, of: loop, core: CoreTrace) -> None:
        self.of, self.core = of, core
        self.started = self.done = False
        # the scope holds a token, not this iterator: the for's reference is then its only
        # one, and __del__ runs where the for drops it
        self.token = object()
        core.scopes.append(Scope(opener=self.token, loc=of.loc))

    def __iter__(self) -> _LoopTrace:
        return self

    def __next__(self) -> LoopIndex:
        if self.done:  # asked again after its end (by hand): its scope is gone
            raise StopIteration
        if not self.started:
            self.started = True
            return LoopIndex(self.of, self.token, self.core)
        self.done = True
        scope = self.core.scopes.pop()
        if scope.opener is not self.token:  # an inner loop's body was left early
            raise left_early(scope, self.of.loc)
        self.core.emit(Loop(count=self.of.count, body=tuple(scope.ops), loc=self.of.loc))
        raise StopIteration

    def __del__(self) -> None:
        # Python tells an iterator nothing when the for's body is left early; CPython drops
        # the iterator then, at once: by a POP_TOP for break and return (3.10 to 3.13), while
        # unwinding from the instruction that raised for an exception. Which one is kept on
        # the body's scope, for the message about the body left open.
        if self.done:
            return
        try:
            scope = next((s for s in self.core.scopes if s.opener is self.token), None)
            frame = sys._getframe(1)
            if scope is None or scope.left is not None or \
                    not is_users(frame.f_code.co_filename):
                return
            code = frame.f_code
            at = file_loc(code.co_filename, frame.f_lineno)
            if dis.opname[code.co_code[frame.f_lasti]] == "POP_TOP":
                # a break or return inside a with: the frame is at the with's line
                exits = exits_from_with(code.co_filename, frame.f_lineno)
                if len(exits) == 1:
                    at = file_loc(code.co_filename, exits[0])
                within = tuple(file_loc(code.co_filename, line) for line in exits)
                scope.left = LeftEarly("break", at, within=within if len(exits) > 1 else ())
                return
            raised = self.core.raised
            seen = raised is not None and any(
                tb.tb_frame is frame and tb.tb_lineno == frame.f_lineno
                for tb in _tracebacks(raised.__traceback__))
            scope.left = LeftEarly("exception", at, _exception_text(raised) if seen else None)
        except Exception:  # a finalizer must not raise: the message is then the generic one
            pass


def _tracebacks(tb: TracebackType | None) -> Iterator[TracebackType]:
    """The entries of traceback ``tb``, outermost first."""
    while tb is not None:
        yield tb
        tb = tb.tb_next


def _exception_text(e: BaseException | None) -> str | None:
    """``RuntimeError: boom`` (the type alone when it has no message)."""
    if e is None:
        return None
    text = str(e)
    return f"{type(e).__name__}: {text}" if text else type(e).__name__


def left_early(scope: Scope, fallback: Loc) -> DesignError:
    """The error for the ``loop()`` body ``scope`` left open: by ``break`` or ``return``, by an
    exception caught outside the loop (named when a ``with`` of the body saw it), or, when how
    was not seen, either."""
    where = scope.loc or fallback
    left = scope.left
    fix = ("do not break or return out of loop(); every iteration is the same program")
    if left is None:
        return DesignError("loop", "a loop() body ended early (break or return inside it, or "
                           "an exception caught outside the loop)", loc=where, fix=fix)
    if left.by == "break":
        return DesignError("loop", "a loop() body ended early (break or return inside it)",
                           loc=where, related=[("left here", left.at)] + [
                               ("a break or return inside that with", at)
                               for at in left.within], fix=fix)
    named = f": {left.exception}" if left.exception else ""
    return DesignError(
        "loop", f"a loop() body was left at line {left.at.line} by an exception caught outside "
        f"the loop{named}", loc=where,
        limit="a loop() body is traced once, as the whole body of its scf.for: it runs to its "
        "end", related=[("the exception left the body here", left.at)],
        fix="catch it inside the loop() body, or let it leave the core function (aiedsl then "
        "reports it at its line)")

