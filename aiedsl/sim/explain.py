"""Explain a deadlock in the design's own terms: who waits for whom, back to the cause.

Starting from the runtime sequence (which must finish), follow each blocked process to the one
that could unblock it, until the chain meets itself (a cycle) or ends at a process that will never
act again (a shim channel with no transfer queued, a core whose program is over).
"""

from __future__ import annotations

from aiedsl.errors import DesignError
from aiedsl.ir import Acquire, Loc, Wait
from aiedsl.sim.engine import Proc
from aiedsl.sim.machine import Machine


class Deadlock(DesignError):
    """Nothing can move and the runtime sequence is not done (exit code 3)."""

    exit_code = 3


def _tile(p: Proc) -> str:
    t = p.info.get("tile")
    return f"({t[0]},{t[1]})" if t else ""


def _next(p: Proc) -> Proc | None:
    """The process ``p`` waits for, if any."""
    req = p.request
    if req is None:
        return None
    kind = req[0]
    if kind == "acq":
        return req[1].releaser
    if kind == "get":
        return req[1].conn.sender
    if kind == "sent":
        chunk = req[1]
        for q in _receivers_of(p):
            if any(entry[0] is chunk for entry in q.queue):
                return q.owner
        return None
    if kind == "done":
        return req[1].owner
    return None


def _receivers_of(p: Proc):  # type: ignore[no-untyped-def]
    conn = p.info.get("conn")
    return conn.ports if conn is not None else []


def _say(m: Machine, p: Proc) -> tuple[str, Loc | None]:
    """One line about what ``p`` is waiting for."""
    req = p.request
    fifo = p.info.get("fifo")
    if p.kind == "runtime":
        op = p.info.get("waiting")
        if isinstance(op, Wait):
            return f"the runtime waits for its drain of '{op.fifo}' to complete", op.loc
        return "the runtime sequence is blocked", p.info.get("loc")
    if p.kind == "core":
        op = p.info.get("waiting")
        if isinstance(op, Acquire):
            what = "data to arrive" if op.port == "consume" else "a free buffer (all are full, " \
                "waiting to be sent)"
            return (f"{p.name} {_tile(p)} waits to acquire '{op.fifo}' ({op.port}): "
                    f"{what}", op.loc)
        return f"{p.name} {_tile(p)} is blocked", p.info.get("loc")
    where = "shim" if p.info.get("shim") else "memtile" if p.info.get("link") else "core DMA"
    loc = p.info.get("loc")
    if req is None:
        return f"{p.name} is idle", loc
    kind = req[0]
    if kind == "work":
        verb = "fills" if p.kind == "mm2s" else "drains"
        return (f"the shim DMA {_tile(p)} for '{fifo}' has no transfer left: the runtime never "
                f"{verb} '{fifo}' (enough)", _transfer_loc(m, fifo))
    if kind == "get":
        return f"the {where} DMA {_tile(p)} receiving '{fifo}' waits for data", loc
    if kind == "sent":
        return (f"the {where} DMA {_tile(p)} sending '{fifo}' waits for a receiver to take it "
                "(its buffers are full)", loc)
    if kind == "acq":
        lock = req[1]
        if p.kind == "s2mm":
            return (f"the {where} DMA {_tile(p)} receiving '{fifo}' waits for a free buffer "
                    f"({lock.name})", loc)
        return (f"the {where} DMA {_tile(p)} sending '{fifo}' waits for a full buffer "
                f"({lock.name})", loc)
    return f"{p.name} waits ({kind})", loc


def _transfer_loc(m: Machine, fifo: str | None) -> Loc | None:
    for op in m.design.runtime:
        if getattr(op, "fifo", None) == fifo and op.op in ("fill", "drain"):
            return op.loc
    f = m.design.fifo(fifo) if fifo else None
    return f.loc if f else None


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
        if p.finished:
            break
        p = _next(p)
        if p is not None and id(p) in seen:
            cycle = True
    lines = []
    for i, q in enumerate(chain):
        text, loc = _say(m, q)
        if q.finished and q.kind == "core":
            text = f"{q.name} {_tile(q)} has finished its program: it will not produce or " \
                   "consume more"
            loc = q.info.get("loc")
        where = f" ({loc.file}:{loc.line})" if loc else ""
        lines.append(("  " if i == 0 else "  <- ") + text + where)
    if cycle and p is not None:
        lines.append(f"  <- back to {p.name}: a wait-for cycle")
    first_loc = next((_say(m, q)[1] for q in chain if _say(m, q)[1]), None)
    blocked = [q for q in m.engine.procs if q.request is not None and q.kind == "core"]
    summary = (f"deadlock: nothing can move and the runtime sequence is not done "
               f"({len(blocked)} core(s) blocked)")
    fix = ("make the runtime fill and drain exactly what the cores take and give, in an order "
           "that lets data flow (drains issued before they are waited on), and check every "
           "acquire is matched by a release")
    err = Deadlock("deadlock", summary, loc=None, fix=fix)
    err.chain = lines  # type: ignore[attr-defined]
    err.first_loc = first_loc  # type: ignore[attr-defined]
    err.message = summary + "\n" + "\n".join(lines)
    err.args = (err.render(),)
    return err
