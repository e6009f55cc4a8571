"""Per-run balance: every consumer of a fifo takes exactly what its producer puts in (what
the drains write is :mod:`aiedsl.checks.outputs`)."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

from aiedsl.errors import DesignError
from aiedsl.ir.core_ops import Acquire, Loop
from aiedsl.ir.design import Design
from aiedsl.ir.fifos import Fifo, Link
from aiedsl.ir.loc import Loc
from aiedsl.ir.program import released, walk


WHOLE = ("whole fifo elements per transfer: aiedsl checks and simulates each rt.fill and "
         "rt.drain as whole elements (on the NPU the stream would run on into the element the "
         "next transfer finishes, which aiedsl does not model)")


def _whole_fix(d: Design, f: Fifo, numel: int | None) -> str:
    """How to move whole elements of ``f``: the transfer's nearest whole counts (when the host
    tensor is of ``f``'s type and moved ``numel`` elements), and, for a fifo whose other end is a
    memtile link (no kernel reads its elements), the largest smaller element dividing every
    transfer of it."""
    fix = "move whole fifo elements per transfer"
    if numel is None:
        fix += " (the DMA moves bytes: count them in the fifo's element type)"
    else:
        per = f.elem.numel
        near = [n for n in (numel // per * per, -(-numel // per) * per) if n]
        fix = (f"move a multiple of {per} elements in each transfer of '{f.name}' (here "
               f"{' or '.join(map(str, near))} rather than {numel})")
    moved = [d.tensor(t.tensor).type.dt.itemsize * t.pattern.numel for t in d.runtime
             if t.op in ("fill", "drain") and t.fifo == f.name]
    linked = any(f.name in (*link.srcs, *link.dsts) for link in d.links)
    whole = math.gcd(*moved)
    g = whole // f.elem.dt.itemsize
    if linked and 0 < g < f.elem.numel and whole % f.elem.dt.itemsize == 0:
        fix += (f", or give '{f.name}' elements of {g} ({g} x {f.elem.dtype} divides every "
                "transfer of it, and a memtile link, not a kernel, takes its elements)")
    return fix


def check_balance(d: Design) -> None:
    """Per run, every consumer of a fifo takes exactly what its producer puts in.

    Counts are in elements of each fifo; a runtime fill or drain counts the bytes its pattern
    moves (the DMA moves bytes: a host tensor may be typed differently from the fifo), in whole
    fifo elements. A mismatch hangs on the NPU (a consumer waits for data that never comes, or a
    producer for space that never frees).
    """
    produced: dict[str, Fraction] = {}
    taken: dict[str, dict[str, Fraction]] = {f.name: {} for f in d.fifos}
    retyped: dict[str, str] = {}  # fifo -> its first transfer from or to another element type
    for core in d.cores:
        for (name, port), n in released(core).items():
            if port == "produce":
                produced[name] = Fraction(n)
            else:
                taken[name][core.name] = Fraction(n)
    for t in d.runtime:
        if t.op in ("fill", "drain"):
            f = d.fifo(t.fifo)
            host = d.tensor(t.tensor).type
            moved = t.pattern.numel * host.dt.itemsize
            runs = Fraction(moved, f.elem.nbytes)
            if runs.denominator != 1:
                fix = _whole_fix(d, f, t.pattern.numel if host.dtype == f.elem.dtype else None)
                if host.dtype == f.elem.dtype:
                    found = f"{t.pattern.numel} / {f.elem.numel} = {float(runs):g}"
                    what = (f"{t.pattern.numel} elements, not a whole number of its "
                            f"{f.elem.numel}-element buffers")
                else:
                    found = f"{moved} B / {f.elem.nbytes} B = {float(runs):g}"
                    what = (f"{moved} bytes ({t.pattern.numel} x {host.dtype}), not a whole "
                            f"number of its {f.elem.nbytes}-byte buffers ({f.elem})")
                raise DesignError("fill/drain size", f"rt.{t.op} of '{f.name}' moves {what}",
                                  loc=t.loc, limit=WHOLE, found=found, fix=fix)
            # a tensor typed other than its fifo changes the count only if the sizes differ
            if host.dt.itemsize != f.elem.dt.itemsize and f.name not in retyped:
                retyped[f.name] = (f"rt.{t.op} of '{t.tensor}' ({host}) moves {moved} bytes, "
                                   f"{_n(runs)} element(s) of {f.elem}: is {host.dtype} the "
                                   "tensor's type you meant?")
            book = produced if t.op == "fill" else taken[f.name]
            key = f.name if t.op == "fill" else "the runtime (rt.drain)"
            if t.op == "fill":
                produced[key] = produced.get(key, Fraction(0)) + runs
            else:
                book[key] = book.get(key, Fraction(0)) + runs
    by_name = {f.name: f for f in d.fifos}
    links = {n: link for link in d.links for n in link.dsts}

    def count(name: str) -> Fraction:
        """Elements put into fifo ``name`` per run (by its producer or its link)."""
        if name in produced:
            return produced[name]
        link = links.get(name)
        if link is None:
            return Fraction(0)
        if link.kind == "join":  # one joined element takes one element of every part
            return min((sent(s) for s in link.srcs), default=Fraction(0))
        if link.kind == "split":  # every part gets one element per parent element
            return sent(link.srcs[0])
        src = link.srcs[0]  # a forward may regroup: count in elements of the new size
        return sent(src) * by_name[src].elem.numel / by_name[name].elem.numel

    def sent(name: str) -> Fraction:
        """Elements of fifo ``name`` its consumers receive per run: each sent ``repeat``
        times."""
        return count(name) * by_name[name].repeat

    def feeders(name: str) -> list[str]:
        """``name`` and the fifos whose elements reach it through links, nearest first."""
        out, todo = [name], [name]
        while todo:
            link = links.get(todo.pop(0))
            for s in link.srcs if link is not None else ():
                if s not in out:
                    out.append(s)
                    todo.append(s)
        return out

    for link in d.links:
        if link.kind == "join":
            counts = {s: sent(s) for s in link.srcs}
            if len(set(counts.values())) > 1:
                # the parts whose count is not the most parts' (a core of a herd that runs one
                # more iteration), by the core that makes each, at its acquire (a tester: "o3"
                # named no core of the herd, nor a line of its loop)
                values = list(counts.values())
                usual = max(values, key=values.count)
                makers = {s: by_name[s].producer.core for s in link.srcs
                          if by_name[s].producer.kind == "core"}
                programs = {p.name: p for p in d.cores}
                related = []
                most = values.count(usual) * 2 > len(values)  # else each part is named
                for part, made_of in counts.items():
                    program = programs.get(makers.get(part) or "")
                    if (most and made_of == usual) or program is None:
                        continue
                    at = next((op.loc for op, _ in walk(program.body) if isinstance(op, Acquire)
                               and (op.fifo, op.port) == (part, "produce")), program.loc)
                    related.append((f"{program.name} makes {_n(made_of)} element(s) of '{part}' "
                                    "per run" + (f", the other parts {_n(usual)}" if most else ""),
                                    at))
                raise DesignError(
                    "balance", f"join into '{link.dsts[0]}' gets different counts from its "
                    "parts per run", loc=link.loc,
                    found=", ".join(f"{part}: {_n(made_of)}" + (
                        f" ({makers[part]})" if part in makers else "")
                        for part, made_of in counts.items()),
                    related=related,
                    fix="make every core of a join produce the same number of elements")
    for f in d.fifos:
        base = count(f.name)
        made = base * f.repeat
        for c in f.consumers:
            if c.is_link_end:
                continue
            who = c.core if c.kind == "core" and c.core else "the runtime (rt.drain)"
            got = taken[f.name].get(who, Fraction(0))
            cores = [e for e in f.consumers if e.kind == "core"]
            if got != made:
                shared_out = len(cores) > 1 and got * len(cores) == made
                src = f.producer
                maker = (f"{src.core} makes" if src.kind == "core" else
                         "the runtime fills" if src.kind == "shim" else "the memtile forwards"
                         if src.kind == "memtile" else f"the core tile {src.tile} forwards")
                sends = f"{maker} {_n(made)} element(s) per run" if f.repeat == 1 else (
                    f"{maker} {_n(base)} element(s) per run and sends each {f.repeat} times "
                    f"(repeat={f.repeat}): {_n(made)} in all")
                unrepeated = f.repeat > 1 and got == base
                # the fills the count comes from, when links stand between them and this fifo
                # (a forward's line alone did not say which fill moved too little)
                upstream = feeders(f.name)
                fills = _fill_lines([t for t in d.runtime
                                     if t.op == "fill" and t.fifo in upstream[1:]])
                raise DesignError(
                    "balance", f"fifo '{f.name}': {sends}, but {who} takes {_n(got)}",
                    loc=c.loc, limit=f"every consumer takes exactly {_n(made)}", found=_n(got),
                    related=[("produced here", src.loc), *fills],
                    fix="make loop counts and fill/drain sizes agree (each element "
                    f"{f.elem}); a mismatch hangs on the NPU" + (
                        f". '{f.name}' has {len(cores)} consuming cores, and a fifo broadcasts: "
                        "each receives every element; to give each core its own, use a fifo "
                        "per core (channel(..., shape=[n]) indexed by the core) or split one at "
                        "a memtile" if shared_out else "")
                    + (f". With repeat={f.repeat} every element arrives {f.repeat} times in a "
                       f"row: " + (f"drain {f.repeat} times as many" if c.kind == "shim" else
                                   f"take {f.repeat} times as many (a `for _ in "
                                   f"loop({f.repeat}):` around the consume)")
                       + ", or leave repeat out" if unrepeated else "")
                    + (f". {retyped[f.name]}" if f.name in retyped else "")
                    + ("" if shared_out or unrepeated else _reuse(f, links.get(f.name), made,
                                                                  got))
                    + ("" if shared_out or unrepeated else _runs_once(d, who, made, got))
                    + _forever_loop(d, f, made, got))


def _fill_lines(fills: list[Any]) -> list[tuple[str, Loc]]:
    """The first three lines of ``fills`` (runtime transfers) as an error's related lines, once
    per line with how many fills it makes (a Python loop in the runtime makes several at one
    line, which read as the same line repeated)."""
    at: dict[tuple[str, str, int], list[Any]] = {}
    for t in fills:
        at.setdefault((f"rt.fill of '{t.fifo}' from '{t.tensor}'", t.loc.file, t.loc.line),
                      []).append(t)
    return [(text + (f" ({len(same)} fills)" if len(same) > 1 else ""), same[0].loc)
            for (text, _, _), same in list(at.items())[:3]]


def _reuse(f: Fifo, link: Link | None, made: Fraction, got: Fraction) -> str:
    """A hint for a core taking a whole multiple of what a memtile sends it, unrepeated: MLIR-
    AIR's L2 reuse (a put in a loop over one L2 buffer), which the memtile does with
    ``repeat=`` (each element sent that many times in a row)."""
    times = got / made if made else Fraction(0)
    if f.repeat != 1 or f.producer.kind != "memtile" or link is None or times.denominator != 1 \
            or times < 2:
        return ""
    knob = (f"channel '{f.channel}'" if f.channel is not None else
            f"the {link.kind} that makes '{f.name}'")
    return (f". If the core takes each element {times} times in a row (data reused from the "
            f"memtile), give {knob} repeat={times}: the memtile then sends each one {times} "
            "times")


def _runs_once(d: Design, who: str, made: Fraction, got: Fraction) -> str:
    """A hint for a core taking a whole fraction of what it is sent with no loop at all: the
    body of an IRON Worker, ported as it is, which IRON repeats forever and aiedsl runs once."""
    core = next((c for c in d.cores if c.name == who), None)
    if core is None or not got or made <= got or (made / got).denominator != 1 or \
            any(isinstance(op, Loop) for op, _ in walk(core.body)):
        return ""
    if not core.forever:  # it runs once by its own choice: the loop is what is missing
        return (f". {who}'s function has no loop and runs once (forever=False): wrap it in "
                f"`for _ in loop({_n(made / got)}):`")
    return (f". {who}'s function has no loop: it is the work of one run (an IRON Worker's body "
            f"repeats forever; aiedsl's runs once per run): wrap it in "
            f"`for _ in loop({_n(made / got)}):`")


FOREVER_COUNT = 2**31 - 1
"""Iterations from which a core's loop is taken for a forever loop: mlir-aie's placed designs
write ``range_(sys.maxsize)`` (or ``0xFFFFFFFF``) around a core's body, a loop no run ends."""


def _forever_loop(d: Design, f: Fifo, made: Fraction, got: Fraction) -> str:
    """A hint for a core of ``f`` whose loop runs :data:`FOREVER_COUNT` times or more: a placed
    mlir-aie design's forever loop, ported as it is, which aiedsl adds itself around every
    core's function (its count, one run's work, is then what the other end moves)."""
    ends = [("takes", f.consumers[0].core, got, made)] if (
        f.consumers and f.consumers[0].kind == "core") else []
    if f.producer.kind == "core":
        ends.append(("makes", f.producer.core, made, got))
    for verb, name, mine, theirs in ends:
        core = next((c for c in d.cores if c.name == name), None)
        loop = next(((op, times) for op, times in walk(core.body) if isinstance(op, Loop)
                     and op.count >= FOREVER_COUNT), None) if core is not None else None
        if core is None or loop is None or not mine:
            continue
        op, times = loop
        per = mine / (times * op.count)  # what one of its iterations moves
        want = theirs / per if per else Fraction(0)
        fix = (f"`for _ in loop({_n(want)}):`" if want and want.denominator == 1 else
               "the loop count that moves what the other end does")
        once = "" if core.forever else " (leave out forever=False, which drops it)"
        return (f". {name} {verb} them in a loop of {op.count:,} iterations "
                f"(line {op.loc.line}), the forever loop of mlir-aie's placed designs "
                "(`range_(sys.maxsize)`)? aiedsl puts a forever loop around a core's function "
                f"itself, as IRON's Worker does{once}: the function is one run's work; write "
                f"{fix}")
    return ""


def _n(x: Fraction) -> str:
    return str(x.numerator) if x.denominator == 1 else f"{float(x):.4g}"
