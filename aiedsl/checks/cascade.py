"""Cascade checks: directions the hardware has, one link in and out per core, kernels that get
or put only where a link is, and as many words put as got per run on each link (else a core
hangs). The link between two neighbours is a stream of 512-bit words: how either core groups
its words into calls does not matter, only the totals (a put of two 128-value calls feeds a get
of one 256-value call). Nor does the order of a call's gets and puts: a call that gets and puts
passes the words on as they come (the simulator's stream, ``aiedsl.sim.cascade_stream``), and
these totals hold whatever that order, so nothing here assumes a call gets all its words before
it puts one (whether such a ring of calls moves is the simulator's to say).

The rules mirror mlir-aie: ``CascadeFlowOp::verify`` (neighbouring compute tiles) and
``ConfigureCascadeOp::verify`` (AIE2: input from north or west, output to south or east), which
``aie-lower-cascade-flows`` applies to every ``aie.cascade_flow``; a tile has one cascade input
and one output port (one ``aie.configure_cascade`` per tile).
"""

from __future__ import annotations

from collections import Counter

from aiedsl.ir.program import walk
from aiedsl.errors import DesignError
from aiedsl.ir.core_ops import Call
from aiedsl.ir.cores import Cascade
from aiedsl.ir.design import Design
from aiedsl.targets import TargetModel
from aiedsl.targets.geometry import OPPOSITE


def check_cascades(d: Design, target: TargetModel) -> None:
    """The cascade rules above, on the design's herds, links and calls."""
    for h in d.herds:
        if h.cascade is not None and h.cascade not in target.cascade_out:
            allowed = " or ".join(f"'{x}'" for x in sorted(target.cascade_out))
            raise DesignError(
                "cascade", f"herd '{h.name}' passes its cascade {h.cascade}", loc=h.loc,
                limit=f"on {target.name} a core's cascade output goes "
                f"{' or '.join(sorted(target.cascade_out))} and its input comes from "
                f"{' or '.join(sorted(OPPOSITE[x] for x in target.cascade_out))} (mlir-aie's "
                "ConfigureCascadeOp::verify)", found=f"cascade='{h.cascade}'",
                fix=f"use cascade={allowed}, and give the chain's first core the put-only "
                "kernel and its last the get-only one")
    ins = Counter(c.dst for c in d.cascades)
    outs = Counter(c.src for c in d.cascades)
    for what, count in (("input", ins), ("output", outs)):
        for name, n in count.items():
            if n > 1:
                link = next(c for c in d.cascades if (c.dst if what == "input" else c.src) == name)
                raise DesignError(
                    "cascade", f"{name} has {n} cascade {what}s", loc=link.loc,
                    limit=f"one cascade {what} per core", found=str(n),
                    fix="chain each core to one neighbour")
    kernels = {k.symbol: k for k in d.kernels}
    has_in = {c.dst: c for c in d.cascades}
    has_out = {c.src: c for c in d.cascades}
    put: Counter[str] = Counter()
    got: Counter[str] = Counter()
    first: dict[tuple[str, str], Call] = {}
    # per (core, side): per kernel, [calls per run, words per call, its first call]
    detail: dict[tuple[str, str], dict[str, list]] = {}
    for core in d.cores:
        for op, mult in walk(core.body):
            if not isinstance(op, Call):
                continue
            k = kernels[op.kernel]
            for side, t, links, verb in (("in", k.cascade_in, has_in, "reads"),
                                         ("out", k.cascade_out, has_out, "writes")):
                if t is None:
                    continue
                if core.name not in links:
                    herd = next(h for h in d.herds if h.name == core.herd)
                    why = (f"herd '{herd.name}' has no cascade" if herd.cascade is None else
                           f"the herd's cascade='{herd.cascade}' "
                           f"{'starts' if side == 'in' else 'ends'} at {core.name}")
                    chain = _chain(core.name, has_in, has_out)
                    order = (f" (the chain runs {' -> '.join(chain)}: give {chain[0]} the "
                             f"put-only kernel and {chain[-1]} the get-only one)"
                             if len(chain) > 1 else "")
                    raise DesignError(
                        "cascade", f"{core.name} calls '{k.symbol}', which {verb} the cascade, "
                        f"but {core.name} has no cascade {side}put: {why}", loc=op.loc,
                        fix=("call a kernel without a cascade input on the chain's first core"
                             if side == "in" else
                             "call a kernel without a cascade output on the chain's last core")
                        + order if herd.cascade is not None else
                        "give the herd cascade='east' (or 'south')")
                words = t.nbytes * 8 // target.cascade_bits
                (got if side == "in" else put)[core.name] += words * mult
                first.setdefault((core.name, side), op)
                detail.setdefault((core.name, side), {}).setdefault(
                    k.symbol, [0, words, op])[0] += mult
    for c in d.cascades:
        if put[c.src] != got[c.dst]:
            call = first.get((c.dst, "in")) or first.get((c.src, "out"))
            more = put[c.src] - got[c.dst]
            room = target.cascade_fifo_words
            rule, what = (
                ("hang: cascade", "the cascade stream blocks, and the getter waits forever for "
                 "words never put") if more < 0 else
                ("hang: cascade", "the cascade stream blocks, and the putter waits forever once "
                 f"the link holds the {room} words it can") if more > room else
                ("cascade", f"the last {more} stay in the link unread (it holds {room}): a "
                 "later get would read them in place of its own"))
            raise DesignError(
                rule, f"{c.src} puts {put[c.src]} cascade word(s) per run and {c.dst} gets "
                f"{got[c.dst]}: {what}",
                loc=call.loc if call else c.loc,
                limit="every word one core puts, its neighbour gets, in the same run",
                found=f"{put[c.src]} put, {got[c.dst]} got",
                fix=f"make {c.src}'s puts and {c.dst}'s gets move as many words per run: "
                f"{_calls(c.src, put[c.src], 'puts', detail.get((c.src, 'out'), {}))}; "
                f"{_calls(c.dst, got[c.dst], 'gets', detail.get((c.dst, 'in'), {}))} (the calls "
                "need not pair up: the cascade is a stream of words)")


def _calls(core: str, total: int, verb: str, kernels: dict[str, list]) -> str:
    """``core[0,0] puts 8 ('k_put': 2 calls of 4 words, line 21)``: a core's words on one
    side of a link per run, by kernel."""
    if not kernels:
        return f"{core} {verb} none"
    each = ", ".join(f"'{k}': {n} call{'s' if n != 1 else ''} of {w} word{'s' if w != 1 else ''}"
                     f", line {op.loc.line}" for k, (n, w, op) in kernels.items())
    return f"{core} {verb} {total} ({each})"


def _chain(name: str, has_in: dict[str, Cascade], has_out: dict[str, Cascade]
           ) -> list[str]:
    """The cores of the cascade chain through core ``name``, first to last (cascade='south'
    runs from a herd's top row down, 'east' from its first column on)."""
    first = name
    while first in has_in:
        first = has_in[first].src
    out = [first]
    while out[-1] in has_out:
        out.append(has_out[out[-1]].dst)
    return out
