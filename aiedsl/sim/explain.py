"""Explain a deadlock in the design's own terms: who waits for whom, back to the cause.

Starting from the runtime sequence (which must finish), follow each blocked process to the one
that could unblock it, until the chain meets itself (a cycle) or ends at a process that will never
act again (a shim channel with no transfer left, a core whose program is over). A shim channel
whose next transfer the runtime issues only after the wait it is blocked in points back to the
runtime: that is a cycle too.

Each line names the process (a core, the DMA of a core, a memtile or shim DMA, the runtime), the
fifo it moves and what it waits for, with the design line of the construct involved (the acquire,
the fifo's declaration, the link, the runtime transfer or ``rt.sync()``).
"""

from __future__ import annotations

from aiedsl.ir.program import walk
from aiedsl.errors import DesignError
from aiedsl.ir.core_ops import Acquire, BarrierWait, Call
from aiedsl.ir.design import Design
from aiedsl.ir.loc import Loc
from aiedsl.ir.runtime import Transfer, Wait
from aiedsl.place.objectfifo import lower
from aiedsl.sim.blocked import loc_of_fifo, pending_receivers, proc_words, unissued, waits_for
from aiedsl.sim.explain_sync import (
    barrier_fix, barrier_wait, cascade_fix, cascade_wait, set_after_the_wait,
)
from aiedsl.sim.depth_fix import end_depth_phrase
from aiedsl.sim.processes import Proc
from aiedsl.sim.state import Machine


class Deadlock(DesignError):
    """Nothing can move and the runtime sequence is not done (exit code 3). ``chain`` holds
    the wait-for chain's lines, ``first_loc`` the first design line they name, which is also
    the error's own ``loc`` (where the runtime, or the first process of the chain, waits), so
    the headline starts ``file:line:`` as every other error's does, for an editor or a CI
    problem matcher to jump to."""

    exit_code = 3
    chain: list[str]
    """The wait-for chain, a line per waiter (as the message lists them)."""
    first_loc: Loc | None = None
    """The first design line the chain names (also :attr:`loc`)."""
    full_fifo: str | None = None
    """The fifo the fix asks more depth of, when a cycle is its cause and one depth is given to
    every end of it (:mod:`aiedsl.sim.depth_fix` then finds how much)."""
    full_end: tuple[str, int, int] | None = None
    """When only depths per end can give :attr:`full_fifo` room (a core's end over a DMA, with
    one depth for every end, holds its largest acquire + 1 buffers whatever the depth): the
    full end's port (``produce``, ``consume``: every consumer's), the buffers it holds, and the
    buffers the other ends hold (kept as they are by the search)."""
    depth_if_found: bool = False
    """The depth is an alternative to the fix's first remedy (a runtime waiting on a transfer a
    full fifo stalls): said only when a depth that ends the run is found."""


def _say(m: Machine, p: Proc) -> tuple[str, Loc | None]:
    """One line about what ``p`` is waiting for, and the design line it is about."""
    req = p.request
    subject = proc_words(p)
    if p.kind == "runtime":
        op = p.info.get("waiting")
        if isinstance(op, Wait) and req is not None:
            drain = req[1].loc
            where = ("at the end of its sequence" if op.by == "end" else
                     "at rt.wait()" if op.by == "wait" else "at rt.sync()")
            line = f" (line {drain.line})" if drain is not None else ""
            kind = req[1].name.split(" ", 1)[0]  # the token's transfer: a drain or a fill
            return (f"the runtime waits {where} for its {kind} of '{op.fifo}'{line} to "
                    "complete", op.loc)
        return "the runtime sequence is blocked", p.info.get("loc")
    if p.kind == "core":
        op = p.info.get("waiting")
        if isinstance(op, Acquire):
            many = f"{op.count} elements of " if op.count > 1 else ""
            readers = [c.core for c in m.design.fifo(op.fifo).consumers if c.kind == "core"]
            shared = m.design.physical.shared if m.design.physical else {}
            what = ("for data to arrive" if op.port == "consume" else
                    "for a free buffer (all are full, waiting for it to consume them itself: "
                    "nothing sends them)" if readers == [p.info.get("core", p.name)] else
                    f"for a free buffer ({_full(m, op.fifo)}, waiting for {readers[0]} to "
                    "consume: the two cores share them)" if op.fifo in shared else
                    f"for a free buffer ({_full(m, op.fifo)}, waiting to be sent)")
            held = p.info.get("held", {})
            holds = [f"{len(h)} element(s) of '{f}' ({port})" for (f, port), h in held.items()
                     if h and (f, port) != (op.fifo, op.port)]
            holding = f", while it holds {' and '.join(holds)}" if holds else ""
            return (f"{subject} waits to acquire {many}'{op.fifo}' ({op.port}) {what}{holding}",
                    op.loc)
        if isinstance(op, BarrierWait):
            return (barrier_wait(m, p, op), op.loc)
        if isinstance(op, Call) and p.info.get("cascade") is not None:
            return cascade_wait(m, p, op), op.loc
        return f"{subject} is blocked", p.info.get("loc")
    fifo = str(p.info.get("fifo"))  # every DMA process has its fifo
    loc = loc_of_fifo(m, p)
    if req is None:
        return f"{subject} is idle", loc
    kind = req[0]
    if kind == "work":
        later = unissued(m, p)
        verb = "fill" if p.kind == "mm2s" else "drain"
        if later is not None:
            return (f"{subject} has no transfer queued: the runtime issues its {verb} of "
                    f"'{fifo}' only after the wait it is blocked in", later.loc)
        moved = [op for op in m.design.runtime
                 if isinstance(op, Transfer) and op.op == verb and op.fifo == fifo]
        # the DMA moves bytes: a host tensor may be typed differently from the fifo
        nbytes = sum(op.pattern.numel * m.design.tensor(op.tensor).type.dt.itemsize
                     for op in moved)
        n = nbytes // m.design.fifo(fifo).elem.nbytes
        return (f"{subject} has no transfer left: the runtime {verb}s only {n} element(s) of "
                f"'{fifo}' in all", moved[0].loc if moved else loc)
    if kind == "get":
        port = req[1]
        if port.avail and len(port.conn.ports) > 1:
            return (f"{subject} waits for every receiver of the broadcast to take the element "
                    "with it", loc)
        return f"{subject} waits for data", loc
    if kind == "sent":
        conn = p.info.get("conn")
        if conn is not None and len(conn.ports) > 1:
            pending = pending_receivers(p, req[1])
            who = proc_words(pending[0]) if pending else "a receiver"
            return (f"{subject} waits for every receiver of the broadcast to take its element; "
                    f"{who} has not", loc)
        return f"{subject} waits for its receiver to take the element", loc
    if kind == "acq":
        core = p.info.get("core")
        if p.info.get("link") is not None:
            if p.kind == "s2mm":
                return (f"{subject} waits for a free buffer (all hold data not yet sent on)", loc)
            return f"{subject} waits for data to arrive", loc
        if p.kind == "s2mm":
            ring = p.info.get("ring")
            n = ring.depth if ring is not None else 0
            return (f"{subject} waits for {core} to release a buffer (all {n} hold data it has "
                    "not consumed)", loc)
        return f"{subject} waits for {core} to release an element to send", loc
    return f"{subject} waits ({kind})", loc





def _full(m: Machine, fifo: str) -> str:
    """``"all 2 buffers are full"``: the producer's end of ``fifo`` (the lowering's count)."""
    shared = m.design.physical.shared if m.design.physical else {}
    n = m.design.fifo(fifo).producer.depth if fifo in shared \
        else lower(m.design, m.target).end(fifo, "produce").size
    return "its one buffer is full" if n == 1 else f"all {n} buffers are full"


def _full_fifo(chain: list[Proc]) -> str | None:
    """The first fifo in ``chain`` with an end that waits for a free buffer: a core producing
    into it, or a DMA receiving it into a core's or a memtile's buffers."""
    for q in chain:
        op = q.info.get("waiting")
        if q.kind == "core" and isinstance(op, Acquire) and op.port == "produce":
            return op.fifo
        if q.kind == "s2mm" and q.request is not None and q.request[0] == "acq" and (
                q.info.get("fifo") is not None):
            return str(q.info["fifo"])
    return None


def _issued_after(d: Design, waiting: object) -> str:
    """The transfers the runtime issues after the wait ``waiting`` and before the next one, as
    a fix names them when there are several (`` (the fill of 'b' (line 22) and the drain of
    'c' (line 23) come after it)``): moving the one the chain names, a tester met the next
    deadlock at the other."""
    index = next((i for i, op in enumerate(d.runtime) if op is waiting), None)
    if index is None:
        return ""
    after = []
    for op in d.runtime[index + 1:]:
        if isinstance(op, Wait):
            break
        if isinstance(op, Transfer):
            after.append(f"the {op.op} of '{op.fifo}' (line {op.loc.line})")
    if len(after) < 2:  # the one there is, the chain names
        return ""
    return f" ({', '.join(after[:-1])} and {after[-1]} come after it)"


def _capped_end(m: Machine, chain: list[Proc]) -> tuple[str, str, int] | None:
    """The first full core end in ``chain`` whose buffer count a larger ``depth`` would not
    change, as (fifo, port, buffers): a core's end of a fifo crossing a DMA, given one depth for
    all ends, holds its largest acquire + 1 buffers whatever the depth (mlir-aie's
    ``findObjectFifoSize``; only depth 1 with single acquires differs)."""
    shared = m.design.physical.shared if m.design.physical else {}
    for q in chain:
        op = q.info.get("waiting")
        if q.kind == "core" and isinstance(op, Acquire) and op.port == "produce":
            fifo, port, index = op.fifo, "produce", 0
        elif q.kind == "s2mm" and q.info.get("core") and q.request is not None \
                and q.request[0] == "acq":
            fifo, port = str(q.info["fifo"]), "consume"
            index = next(i for i, c in enumerate(m.design.fifo(fifo).consumers)
                         if c.core == q.info["core"])
        else:
            continue
        f = m.design.fifo(fifo)
        if fifo in shared or f.depth_per_end:
            return None  # one ring of the producer's depth, or depths given per end: depth counts
        size = lower(m.design, m.target).end(fifo, port, index).size
        return None if size == 1 else (fifo, port, size)
    return None


def _linked_depth(m: Machine, fifo: str) -> str | None:
    """For a part of a memtile split or join, the depth that gives the part more room, as a
    fix: the memtile's buffers are the parent's (a split's input) or the joined fifo's (a
    join's output), one whole element each, whatever the part's own depths
    (``createObjectFifoElements`` makes the link's buffers for that end alone), so a bigger
    depth there lets one more element wait in the memtile. None for a fifo of no such link."""
    for link in m.design.links:
        if link.kind == "split" and fifo in link.dsts:
            parent = m.design.fifo(link.srcs[0])
            end = next(c for c in parent.consumers if c.is_link_end)
            per_end = parent.depth_per_end
            knob = "consumer_depth" if per_end else "depth"
            return (f"give '{parent.name}', the fifo '{fifo}' is split from, more depth: "
                    f"{knob}={end.depth + 1} or more (now {end.depth}); the memtile keeps each "
                    f"element of '{parent.name}' whole until every part of it is sent, in "
                    f"the buffers of '{parent.name}'; the depth split() gives its parts does "
                    "not count there")
        if link.kind == "join" and fifo in link.srcs:
            joined = m.design.fifo(link.dsts[0])
            depth = joined.producer.depth
            return (f"give '{joined.name}', the fifo '{fifo}' is joined into, more depth: "
                    f"join(..., depth={depth + 1}) or more (now {depth}); the memtile keeps "
                    f"each element of '{joined.name}' whole until every part of it came, in "
                    f"the buffers of '{joined.name}'; the consumer_depth of '{fifo}' does not "
                    "count there")
    return None




def _other_ends(m: Machine, fifo: str, port: str, size: int) -> tuple[str, int, int] | None:
    """(port, ``size``, the buffers every other end of ``fifo`` holds) for the depth search of
    the ends on ``port`` (:attr:`Deadlock.full_end`), or None when the other ends hold different
    counts (one ``depth=``/``consumer_depth=`` cannot keep them)."""
    ends = lower(m.design, m.target)
    f = m.design.fifo(fifo)
    other = ({ends.end(fifo, "produce").size} if port == "consume" else
             {ends.end(fifo, "consume", i).size for i in range(len(f.consumers))})
    return (port, size, other.pop()) if len(other) == 1 else None


def _ended_holding(p: Proc) -> bool:
    """``p`` is a core whose program ended holding elements, and which started it again."""
    return p.kind == "core" and not p.finished and bool(p.info.get("ended_holding"))


def _finished(m: Machine, p: Proc) -> tuple[str, Loc | None]:
    """A core whose program is over (or ended holding elements and started again): name what it
    still holds, at the acquire that took it."""
    again = _ended_holding(p)
    held = (list(p.info["ended_holding"].items()) if again else
            [(key, len(h)) for key, h in p.info.get("held", {}).items() if h])
    if not held:
        return (f"{proc_words(p)} has finished its program: it will not produce or consume more",
                p.info.get("loc"))
    (fifo, port), n = held[0]
    loc = None
    for core in m.design.cores:
        if core.name == p.name:
            loc = next((op.loc for op, _ in reversed(list(walk(core.body)))
                        if isinstance(op, Acquire) and (op.fifo, op.port) == (fifo, port)), None)
    if again:  # its program loops forever: it went on to its next pass still holding them
        return (f"{proc_words(p)} ended its program still holding {n} element(s) of '{fifo}' "
                f"({port}) and started it again: it never releases them",
                loc or p.info.get("loc"))
    return (f"{proc_words(p)} has finished its program still holding {n} element(s) of '{fifo}' "
            f"({port}): it never releases them", loc or p.info.get("loc"))


def explain(m: Machine) -> Deadlock:
    """Build the deadlock report for machine ``m`` (call when nothing can move)."""
    assert m.runtime is not None
    chain: list[Proc] = []
    seen: set[int] = set()
    p: Proc | None = m.runtime
    cycle = False
    while p is not None and id(p) not in seen:
        chain.append(p)
        seen.add(id(p))
        if p.finished or _ended_holding(p):
            break
        p = waits_for(m, p)
        if p is not None and id(p) in seen:
            cycle = True
    lines = []
    locs = []
    for i, q in enumerate(chain):
        text, loc = _say(m, q)
        if (q.finished and q.kind == "core") or _ended_holding(q):
            text, loc = _finished(m, q)
        locs.append(loc)
        where = f" ({loc.file}:{loc.line})" if loc else ""
        lines.append(("  " if i == 0 else "  <- ") + text + where)
    if cycle and p is not None:
        lines.append(f"  <- back to {proc_words(p)}: a wait-for cycle")
    first_loc = next((loc for loc in locs if loc), None)
    blocked = [q for q in m.engine.procs if q.request is not None and q.kind == "core"]
    depth_fifo: str | None = None
    depth_end: tuple[str, int, int] | None = None
    summary = (f"nothing can move and the runtime sequence is not done "
               f"({len(blocked)} core(s) blocked)")
    gate = next((q.info["waiting"] for q in chain
                 if isinstance(q.info.get("waiting"), BarrierWait)), None)
    late = set_after_the_wait(m, gate) if gate is not None else None
    if late is not None:
        sync, set_ = late
        fix = (f"move rt.set_barrier('{set_.barrier}', {set_.value}) (line {set_.loc.line}) "
               f"before the rt.sync() at line {sync.loc.line}: that sync waits for a drain the "
               "core can only reach past its wait, so the set after it never comes")
    elif gate is not None:
        fix = barrier_fix(m, gate)
    elif cycle and p is m.runtime:
        waiting = m.runtime.info.get("waiting")
        where = "rt.wait()" if isinstance(waiting, Wait) and waiting.by == "wait" else "rt.sync()"
        token = m.runtime.request[1] if m.runtime.request is not None else None
        kind = token.name.split(" ", 1)[0] if token is not None else "transfer"
        fix = (f"issue every fill and drain that the waited {kind} depends on before the {where} "
               "that waits for it" + _issued_after(m.design, waiting))
        # A full fifo on the way also stalls the transfer: room for what the runtime does not
        # yet take out may end it too (said only if a depth is found that does).
        capped = _capped_end(m, chain)
        full = capped[0] if capped is not None else _full_fifo(chain)
        if capped is not None:
            depth_end = _other_ends(m, *capped)
            depth_fifo = capped[0] if depth_end is not None else None
            fix += ", or " + end_depth_phrase(capped[0], capped[2])
        elif full is not None and _linked_depth(m, full) is None and \
                not m.design.fifo(full).depth_per_end:
            depth_fifo = full
            fix += f", or give '{full}', the fifo that is full, more depth"
    elif cycle and any(q.kind == "core" and q.info.get("cascade") is not None
                       and isinstance(q.info.get("waiting"), Call) for q in chain):
        fix = cascade_fix(m, chain)
    elif cycle and (capped := _capped_end(m, chain)) is not None:
        fifo, port, size = capped
        knob = _linked_depth(m, fifo)
        if knob is None:
            depth_end = _other_ends(m, fifo, port, size)
            depth_fifo = fifo if depth_end is not None else None
        fix = ("break the cycle: no core may hold an element while it waits for data that can "
               "only come once that element moves; acquire in an order that lets data flow, "
               f"release sooner, or {end_depth_phrase(fifo, size)}") if knob is None else (
               "break the cycle: no core may hold an element while it waits for data that can "
               "only come once that element moves; acquire in an order that lets data flow, "
               f"release sooner, or {knob} (a core's end of '{fifo}' holds its largest "
               f"acquire + 1 buffers, here {size}, whatever the depth)")
    elif cycle:
        full = _full_fifo(chain)
        knob = _linked_depth(m, full) if full else None
        if full and knob is None:
            depth_fifo = None if m.design.fifo(full).depth_per_end else full
        fix = ("break the cycle: no core may hold an element while it waits for data that can "
               "only come once that element moves; acquire in an order that lets data flow, "
               "release sooner, or " + (knob if knob is not None else
                                        f"give '{full}', the fifo that is full, more depth"
                                        if full else "give the fifo that is full more depth"))
    else:
        fix = ("make the runtime fill and drain exactly what the cores take and give, in an "
               "order that lets data flow (drains issued before they are waited on), and check "
               "every acquire is matched by a release")
    err = Deadlock("deadlock", summary, loc=first_loc, fix=fix)
    err.full_fifo = depth_fifo
    err.full_end = depth_end
    err.depth_if_found = depth_fifo is not None and cycle and p is m.runtime
    err.chain = lines
    err.first_loc = first_loc
    err.message = summary + "\n" + "\n".join(lines)
    err.args = (err.render(),)
    return err
