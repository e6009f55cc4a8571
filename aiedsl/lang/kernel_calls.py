"""Kernel calls in a core's program: each argument (an acquired element, a local, an rtp slot, a
number) judged where the call is written, and the call recorded in the current core."""

from __future__ import annotations

import re
import sys
from typing import Any, NoReturn, Sequence

from aiedsl.errors import DesignError
from aiedsl.ir.core_ops import BufferArg, Call, IndexArg, LocalArg, RtpArg, ScalarArg
from aiedsl.ir.kernel import KernelArg
from aiedsl.ir.loc import Loc
from aiedsl.lang.buffer import Acquisition, Buffer
from aiedsl.lang.context import current_core
from aiedsl.lang.fifo import ObjectFifo
from aiedsl.lang.local import LocalRef
from aiedsl.lang.loops import LoopIndex
from aiedsl.lang.rtp import RtpRef, RtpValue
from aiedsl.source_loc import parse_python, source_lines, written_arguments
from aiedsl.values import array_text, as_int, by_type


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
            out.append(IndexArg(loop=a.depth_in(core, f"passed to kernel '{symbol}' "
                                                f"(argument {i})", loc), loc=loc))
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
                "scalar, an rtp slot (thr[0]), or a loop's index", found=_described(a),
                fix="pass acquired buffers, locals, int or float scalars, rtp slots "
                "(thr[0]), and loop indices (for i in loop(n))")
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
        tree = parse_python(lines[made.loc.line - 1].strip())
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
