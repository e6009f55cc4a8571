"""Herds and core programs: ``@herd``, ``loop`` and kernel calls, recorded as each core's program.

A herd's core function runs once per core at trace time with that core's index; what it records
(acquires, releases, kernel calls, loops) is the core's program. ``loop(n)`` records one loop of
``n`` iterations and runs its body once: loops stay loops.

Example
-------
::

    @herd(cols=4, rows=4)
    def core(x, y):
        for _ in loop(tiles_per_core):
            with c[x, y].produce() as acc:
                zero(acc)
                for _ in loop(K // k):
                    with a[y].consume() as ta, b[x].consume() as tb:
                        matmul(ta, tb, acc)
"""

from __future__ import annotations

import dis
import inspect
import re
import sys
from types import TracebackType
from typing import Any, Callable, Iterator, Literal, NoReturn, Sequence

from aiedsl.errors import DesignError
from aiedsl.ir.core_ops import (
    MAX_LOOP_COUNT, BufferArg, Call, LocalArg, Loop, RtpArg, ScalarArg,
)
from aiedsl.ir.cores import Core, Herd
from aiedsl.ir.kernel import KernelArg
from aiedsl.ir.loc import Loc
from aiedsl.lang.buffer import Acquisition, Buffer
from aiedsl.lang.callables import check_traced
from aiedsl.lang.context import _CORE, active, current_core, current_design, design_trace
from aiedsl.lang.fifo import ObjectFifo
from aiedsl.lang.local import LocalRef
from aiedsl.lang.names import decorated_name
from aiedsl.lang.rtp import RtpRef, RtpValue
from aiedsl.lang.trace import CoreTrace, LeftEarly, Scope
from aiedsl.library_code import is_users
from aiedsl.source_loc import (
    caller_loc, decorator_loc, file_loc, source_lines, written_arguments,
)
from aiedsl.targets import DEFAULT_DEVICE, get_target
from aiedsl.targets.geometry import STEP
from aiedsl.values import array_text, as_int, by_type, shown


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
    """What ``for i in loop(n)`` binds ``i`` to: a placeholder that refuses every use.

    The body is traced once and becomes one ``scf.for`` body, so no Python value can stand for
    each iteration's index: a number here would be baked into the program, the same in every
    iteration, without a word. Write ``for _ in loop(n)``.
    """

    __slots__ = ("of",)

    def __init__(self, of: loop) -> None:
        self.of = of

    def __repr__(self) -> str:
        return f"<the index of loop({self.of.count})>"

    def refuse(self, how: str, loc: Loc | None = None) -> NoReturn:
        """A DesignError saying the index was used ``how`` (at ``loc``, or the caller's line)."""
        raise DesignError(
            "loop", f"the index of the loop({self.of.count}) at line {self.of.loc.line} is "
            f"{how}", loc=loc or caller_loc(), limit="a loop() body is traced once and runs as "
            "one scf.for body: its index has no Python value (it would be 0 in every iteration)",
            fix="write `for _ in loop(n)`; for values that change per iteration, " + (
                "unroll with Python's range() or send them through a fifo or an rtp"
                if self.of.count <= UNROLL_ADVISED else
                "send them through a fifo or an rtp, or keep a count in a local() your kernel "
                f"advances (Python's range() would make {self.of.count} copies of the body, and "
                f"a few hundred overflow the core's {_program_memory()} of program memory, "
                "which only the build finds)"))

    def __index__(self) -> NoReturn:
        self.refuse("used as an integer")

    __int__ = __index__

    def __float__(self) -> NoReturn:
        self.refuse("used as a number")

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
                              fix="use an integer >= 1 (// divides exactly)")
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
            return LoopIndex(self.of)
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
                scope.left = LeftEarly("break", at)
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
                           loc=where, related=[("left here", left.at)], fix=fix)
    named = f": {left.exception}" if left.exception else ""
    return DesignError(
        "loop", f"a loop() body was left at line {left.at.line} by an exception caught outside "
        f"the loop{named}", loc=where,
        limit="a loop() body is traced once, as the whole body of its scf.for: it runs to its "
        "end", related=[("the exception left the body here", left.at)],
        fix="catch it inside the loop() body, or let it leave the core function (aiedsl then "
        "reports it at its line)")


def herd(cols: int = 1, rows: int = 1, *, anchor: tuple[int, int] | None = None,
         name: str | None = None, stack: int | None = None,
         cascade: Literal["east", "south"] | None = None
         ) -> Callable[[Callable[..., Any]], Any]:
    """Declare a ``cols x rows`` rectangle of cores running one core function.

    The function takes the core's index ``(x, y)`` (column, row inside the herd), or nothing for
    a 1x1 herd. ``anchor=(col, row)`` pins core ``(0, 0)`` to that tile; otherwise placement
    chooses. ``stack`` overrides the bytes of stack each core reserves. ``cascade="east"``
    chains each row's cores by the accumulator cascade, west to east (``"south"``: each
    column's, north to south); kernels with ``cascade_in``/``cascade_out`` use it. Only
    ``"east"`` and ``"south"`` are accepted: an AIE2 core sends its cascade east or south and
    receives it from the west or north (``check`` refuses ``"north"`` and ``"west"``).

    Example: ``@herd(cols=4, rows=1, cascade="east")`` chains core[0,0] -> ... -> core[3,0].
    """
    loc = caller_loc()
    if callable(cols):  # @herd written bare: Python hands the function over as cols
        raise DesignError(
            "herd", f"@herd is applied to '{getattr(cols, '__name__', cols)}' without its "
            "parentheses", loc=decorator_loc(loc, cols, "herd"),
            limit="@herd(...) makes the decorator: bare, it would take "
            "the function for its cols and trace no core", found="@herd",
            fix="write @herd() for one core, or @herd(cols=..., rows=...)")

    def decorate(fn: Callable[..., Any]) -> Herd:
        b = current_design("@herd", loc)  # @herd's line: applying it, 3.10 gives the def's
        hname = decorated_name(fn, name, "herd", 'herd(name="core")', loc)
        outer = _CORE.get()
        if outer is not None:  # it was traced as one more herd, idle, without a word
            around = outer.name.partition("[")[0]  # the herd of core 'core[0,0]'
            raise DesignError(
                "herd", f"herd '{hname}' is declared inside the core function of herd "
                f"'{around}'", loc=loc, limit="a herd is declared in the design function: a "
                "core function is its core's program, traced once per core, and declares no "
                "cores", found=f"@herd inside herd '{around}'",
                fix="move the @herd and its function out into the @design function, beside the "
                "other herds")
        check_traced(fn, "core function", "@herd", "herd", loc)
        size = {}
        for what, v in (("cols", cols), ("rows", rows)):
            number = as_int(v)  # numpy's integers too, as plain ints
            if number is None or number < 1:
                raise DesignError("herd", f"herd '{hname}' has {what}={shown(v)}", loc=loc,
                                  found=shown(v), fix=f"give {what} as a positive integer")
            size[what] = number
        ncols, nrows = size["cols"], size["rows"]
        t = b.target
        # Placement says precisely why a herd does not fit; this only stops absurd sizes
        # (-D COLS=2000) before one core per cell is traced.
        if ncols * nrows > 4 * t.cols * t.rows:
            raise DesignError(
                "herd placement", f"herd '{hname}' ({ncols}x{nrows}) does not fit on {t.name}",
                loc=loc, limit=f"{t.cols} column(s) x {t.rows} core row(s)",
                found=f"{ncols} column(s) x {nrows} row(s)", fix="a smaller herd, or a device "
                "with more columns (--device)")
        pin = None
        if anchor is not None:
            at = [as_int(v) for v in anchor] if isinstance(anchor, tuple) else []
            col, row = at if len(at) == 2 else (None, None)
            if col is None or row is None or col < 0 or row < 0:
                raise DesignError("herd", f"herd '{hname}' has anchor={shown(anchor)}", loc=loc,
                                  limit="a (column, row) pair of non-negative ints",
                                  found=shown(anchor), fix="write e.g. anchor=(0, 2)")
            pin = (col, row)  # plain ints (numpy's given too)
        memory = b.target.core.memory
        reserved = None if stack is None else as_int(stack)
        if stack is not None and (reserved is None or not 0 <= reserved <= memory):
            raise DesignError("herd", f"herd '{hname}' has stack={shown(stack)}", loc=loc,
                              limit=f"bytes from 0 to the core's {memory} of data memory",
                              found=shown(stack),
                              fix=f"give the stack in bytes, e.g. stack={b.target.default_stack}")
        if cascade is not None and cascade not in STEP:  # a direction the checks judge
            runs = " or ".join(f"'{d}'" for d in sorted(b.target.cascade_out))
            raise DesignError("cascade", f"herd '{hname}' has cascade={cascade!r}", loc=loc,
                              limit=f"{runs} (the directions an {b.target.arch.upper()} "
                              "cascade runs)", found=repr(cascade),
                              fix="write cascade='east' to chain each row west to east")
        nparams = len(inspect.signature(fn).parameters)
        if nparams not in (0, 2) or (nparams == 0 and (ncols, nrows) != (1, 1)):
            raise DesignError(
                "herd", f"core function '{fn.__name__}' takes {nparams} argument(s)", loc=loc,
                fix="take the core index as (x, y); only a 1x1 herd may take none")
        h = Herd(name=hname, cols=ncols, rows=nrows, anchor=pin, cascade=cascade, loc=loc)
        b.add_herd(h)
        for y in range(nrows):
            for x in range(ncols):
                cb = CoreTrace(name=f"{hname}[{x},{y}]",
                               max_ops=b.target.program_memory // 4)
                with active(_CORE, cb):
                    fn(x, y) if nparams == 2 else fn()
                if len(cb.scopes) != 1:
                    raise left_early(cb.scopes[-1], loc)
                b.cores.append(Core(
                    name=cb.name, herd=hname, index=(x, y), body=tuple(cb.scopes[0].ops),
                    stack=reserved if reserved is not None else b.target.default_stack,
                    loc=loc))
        return h

    return decorate


def call_kernel(symbol: str, args: tuple[Any, ...], loc: Loc,
                params: Sequence[KernelArg] = ()) -> None:
    """Record a kernel call in the current core (used by :class:`aiedsl.kernels.Kernel`).
    ``params`` are the kernel's declared arguments, which say how a fifo passed whole should
    have been acquired (consume() for one it reads, produce() for one it writes)."""
    core = current_core(f"calling kernel '{symbol}'")
    _not_acquired(symbol, args, loc, params)
    out: list[Any] = []
    for i, a in enumerate(args):
        if isinstance(a, Buffer):
            if a.acquired_by is not None and a.acquired_by is not core:
                _foreign_buffer(symbol, i, a, core.name, loc)
            if a.count != 1:
                raise DesignError(
                    "kernel call", f"argument {i} of '{symbol}' is a {a.count}-element acquire "
                    f"of '{a.fifo.name}'", loc=loc, fix="pass one element: buf[0], buf[1], ...")
            out.append(BufferArg(value=a.value, index=a.index))
        elif isinstance(a, RtpValue):
            out.append(RtpArg(rtp=a.rtp.name, index=a.index, dtype=a.rtp.type.dtype, loc=a.loc))
        elif isinstance(a, LocalRef):
            a.use(core.name, loc)
            out.append(LocalArg(local=a.name, loc=loc))
        elif _is_bool(a):
            # no aiedsl dtype is a bool (MLIR's i1): True would be taken as 1 silently
            raise DesignError(
                "kernel call", f"argument {i} of '{symbol}' is the bool {a!r}", loc=loc,
                limit="an acquired buffer, or an int or float scalar", found=repr(a),
                fix=f"pass {int(a)} (int(flag)) for an integer scalar")
        elif isinstance(a, LoopIndex):
            a.refuse(f"passed to kernel '{symbol}' (argument {i})", loc)
        elif (value := _number(a)) is not None:
            out.append(ScalarArg(value=value, dtype="i32" if isinstance(value, int) else "f32"))
        elif isinstance(a, RtpRef):
            # IRON passes a whole RTP buffer to a kernel; here a call reads its slots
            raise DesignError(
                "kernel call", f"argument {i} of '{symbol}' is the whole rtp '{a.name}' "
                f"({a.type.numel} x {a.type.dtype})", loc=loc,
                limit="a kernel call takes one slot of an rtp, as a scalar argument "
                f"({a.name}[0]); a whole rtp is not a buffer argument",
                found=f"rtp '{a.name}'",
                fix=f"pass the slot the kernel reads, {a.name}[0], for each scalar (nine "
                "coefficients are nine scalar arguments)")
        else:
            raise DesignError(
                "kernel call", f"argument {i} of '{symbol}' is {_described(a)}",
                loc=loc, limit="an acquired buffer (one element), a local, an int or float "
                "scalar, or an rtp slot (thr[0])", found=_described(a),
                fix="pass acquired buffers, locals, int or float scalars, and rtp slots "
                "(thr[0])")
    core.emit(Call(kernel=symbol, args=tuple(out), loc=loc))


def _foreign_buffer(symbol: str, i: int, a: Buffer, user: str, loc: Loc) -> NoReturn:
    """Refuse argument ``i`` of a call of ``symbol`` in core ``user``'s program: buffer ``a``,
    which another core acquired (one kept in a global, a closure, a default argument). The
    call's argument names a buffer by its acquire's result name alone, which in ``user``'s
    program is one of its own acquires, or none: the call was silently re-bound to that core's
    own element of the same name (or a [stale read] named a buffer the user never passed)."""
    assert a.acquired_by is not None
    owner = a.acquired_by.name
    if owner == user:  # another trace of a core of that name: another design, or a reload
        owner = f"another trace of {owner} (another design's, or an earlier load's)"
    at = a.acquired_at
    where = f" at line {at.line}" if at is not None else ""
    raise DesignError(
        "kernel call", f"argument {i} of '{symbol}' in {user} is an element of "
        f"{a.fifo.written()} that {owner} acquired{where}", loc=loc,
        limit="a kernel takes elements its own core acquired: a call names one by its "
        f"acquire in the calling core's program, so another core's would be read as one of "
        f"{user}'s own (or none)",
        found=f"{a.fifo.written()} acquired by {owner}, passed by {user}",
        related=[(f"acquired by {owner}", at)] if at is not None else None,
        fix=f"pass an element {user} acquires itself, in the core function it runs; to use "
        f"{a.acquired_by.name}'s data there, send it through a fifo {a.acquired_by.name} "
        f"produces into and {user} consumes")


def _described(a: Any) -> str:
    """A value as a message names it: its type and its repr, but never an object's address
    (``<... object at 0x7f...>`` differs from run to run and tells the user nothing), and a
    numpy array by its shape and type."""
    array = array_text(a)
    if array is not None:
        return array
    text = repr(a)
    if re.search(r" at 0x[0-9a-fA-F]+>", text) or len(text) > 80:
        return by_type(a)
    return f"{type(a).__name__} {text}"


def _not_acquired(symbol: str, args: tuple[Any, ...], loc: Loc,
                  params: Sequence[KernelArg]) -> None:
    """Refuse a kernel call given a fifo or a channel itself, or what ``consume()`` or
    ``produce()`` returned outside a ``with`` (it acquires nothing there): a kernel takes the
    element a ``with`` acquires. The fix writes the whole ``with`` line for the call."""
    from aiedsl.lang.channel import Channel

    first = next((i for i, a in enumerate(args)
                  if isinstance(a, (ObjectFifo, Channel, Acquisition))), None)
    if first is None:
        return
    a = args[first]
    if isinstance(a, Acquisition):
        # one `as` name per acquisition, however often it is passed: two names for one would
        # acquire twice; an acquisition of n elements passes them as name[0], name[1], ...
        made = list({id(x): x for x in args if isinstance(x, Acquisition)}.values())
        as_name = dict(zip(map(id, made), _element_names([_assigned_at(x) for x in made])))
        opened = ", ".join(f"{x!r} as {as_name[id(x)]}" for x in made)
        uses: dict[int, int] = {}
        passed_args = []
        written = written_arguments(loc, len(args)) or ["..."] * len(args)
        for x, text in zip(args, written):
            if not isinstance(x, Acquisition):
                passed_args.append(text)
                continue
            k = uses[id(x)] = uses.get(id(x), -1) + 1
            passed_args.append(as_name[id(x)] if x.n == 1 else f"{as_name[id(x)]}[{k % x.n}]")
        passed = ", ".join(passed_args)
        raise DesignError(
            "kernel call", f"{a!r} is called without `with`, so it acquires nothing; its "
            f"result is passed to '{symbol}' as argument {first}", loc=a.loc,
            limit="consume() and produce() acquire elements in a `with` statement, which "
            "releases them where its block ends; a kernel takes the element its `as` names",
            found=f"{a!r} outside a with", related=[(f"the call of '{symbol}'", loc)],
            fix=f"acquire in a with and call the kernel inside its block: `with {opened}:` "
            f"then {symbol}({passed})")
    ports = []
    for i, x in enumerate(args):
        if isinstance(x, (ObjectFifo, Channel)):
            access = params[i].access if i < len(params) else "in"
            ports.append("consume" if access == "in" else "produce")
    names = _element_names([{"consume": "src", "produce": "dst"}[p] for p in ports])
    which = iter(zip(ports, names))
    clauses: list[str] = []
    call: list[str] = []
    for x in args:
        if isinstance(x, (ObjectFifo, Channel)):
            port, name = next(which)
            fifo = x.written() if isinstance(x, ObjectFifo) else \
                f"{x.name}[{'y' if len(x.shape) == 1 else 'x, y'}]"
            clauses.append(f"{fifo}.{port}() as {name}")
            call.append(name)
        else:
            call.append("...")
    what = (f"fifo {_fifo_named(a)} itself" if isinstance(a, ObjectFifo) else
            f"{a.described()} itself")
    raise DesignError(
        "kernel call", f"argument {first} of '{symbol}' is {what}, not an element acquired "
        "from it", loc=loc, limit="a kernel takes elements a `with` acquires: consume() for "
        "one it reads, produce() for one it writes", found=what,
        fix=f"acquire them and call the kernel inside the block: `with {', '.join(clauses)}:` "
        f"then {symbol}({', '.join(call)})")


def _fifo_named(f: ObjectFifo) -> str:
    """A fifo in a message: ``'a'``, or ``a[0] ('a_0')`` for a channel's."""
    return f"'{f.name}'" if f.channel is None else f"{f.written()} ('{f.name}')"


def _element_names(names: list[str]) -> list[str]:
    """``names`` made distinct, as the ``as`` names of one ``with``: ``src, src2``."""
    out: list[str] = []
    for n in names:
        k, name = 1, n
        while name in out:
            k += 1
            name = f"{n}{k}"
        out.append(name)
    return out


def _assigned_at(made: Acquisition) -> str:
    """The plain name the line of ``made`` assigns it to: ``x`` for ``x = a.consume()``, ``y``
    for ``b.produce()`` in ``x, y = a.consume(), b.produce()``; else ``x``."""
    import ast

    lines = source_lines(made.loc.path)  # read afresh: another d.py may have been read before
    if not 0 < made.loc.line <= len(lines):
        return "x"
    try:
        tree = ast.parse(lines[made.loc.line - 1].strip())
    except SyntaxError:  # the call spreads over several lines
        return "x"
    node = tree.body[0] if tree.body else None
    if not isinstance(node, ast.Assign) or len(node.targets) != 1:
        return "x"
    target, value = node.targets[0], node.value
    pairs = (list(zip(target.elts, value.elts)) if isinstance(target, ast.Tuple)
             and isinstance(value, ast.Tuple) else [(target, value)])
    fifo = made.fifo.channel or made.fifo.name
    for name, call in pairs:  # the one whose call is this fifo's consume() (or produce())
        text = ast.unparse(call)
        if isinstance(name, ast.Name) and text.startswith(fifo) and f".{made.port}(" in text:
            return name.id
    return "x"


def _is_bool(a: Any) -> bool:
    """Python's or numpy's bool (``np.bool_`` is not a subclass of ``bool``)."""
    if isinstance(a, bool):
        return True
    np = sys.modules.get("numpy")  # numpy is only loaded when the design imported it
    return np is not None and isinstance(a, np.bool_)


def _number(a: Any) -> int | float | None:
    """``a`` as a Python int or float: a Python number as it is, a numpy integer or floating
    scalar (``np.int32(5)``, ``x.max()``, bf16 included) as its Python value; None for anything
    else (bools are rejected before)."""
    integer = as_int(a)
    if integer is not None:
        return integer
    if isinstance(a, float):
        return float(a)  # np.float64 is a float: as Python's
    np = sys.modules.get("numpy")
    if np is None or not isinstance(a, np.generic) or a.ndim != 0:
        return None
    ml = sys.modules.get("ml_dtypes")  # bfloat16 is not an np.floating
    if isinstance(a, np.floating) or (ml is not None and isinstance(a, ml.bfloat16)):
        return float(a)
    return None
