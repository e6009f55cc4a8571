"""Where a blocked process of the simulator is, for a deadlock report: the process in words,
the process it waits for, where the runtime sequence stopped."""

from __future__ import annotations

from aiedsl.ir.loc import Loc
from aiedsl.ir.runtime import Transfer
from aiedsl.sim.processes import Proc
from aiedsl.sim.state import Machine


def _tile_words(p: Proc) -> str:
    t = p.info.get("tile")
    return f"({t[0]},{t[1]})" if t else ""


def proc_words(p: Proc) -> str:
    """How a process is named in a report: ``the DMA of core[0,0] (0,2) sending 'b'``."""
    if p.kind == "runtime":
        return "the runtime"
    if p.kind == "core":
        return f"{p.name} {_tile_words(p)}"
    fifo = p.info.get("fifo")
    sends = p.kind == "mm2s"
    if p.info.get("shim"):
        return f"the shim DMA {_tile_words(p)} {'filling' if sends else 'draining'} '{fifo}'"
    verb = "sending" if sends else "receiving"
    if p.info.get("link"):
        where = "memtile" if p.info["link"].via == "memtile" else "core tile"
        return f"the {where} {_tile_words(p)} DMA {verb} '{fifo}'"
    return f"the DMA of {p.info.get('core')} {_tile_words(p)} {verb} '{fifo}'"


def runtime_pos(m: Machine) -> int:
    """Index in the runtime sequence of the op the runtime is blocked in (its length if none)."""
    rt = m.runtime
    op = rt.info.get("waiting") if rt is not None else None
    for i, o in enumerate(m.design.runtime):
        if o is op:
            return i
    return len(m.design.runtime)


def unissued(m: Machine, p: Proc) -> Transfer | None:
    """The next transfer for shim channel ``p`` that the runtime has not issued yet, if any."""
    kind = "fill" if p.kind == "mm2s" else "drain"
    for op in m.design.runtime[runtime_pos(m) + 1:]:
        if isinstance(op, Transfer) and op.op == kind and op.fifo == p.info.get("fifo"):
            return op
    return None


def pending_receivers(p: Proc, chunk: object) -> list[Proc]:
    """Receivers that have not taken ``chunk`` yet; those not even receiving come first."""
    conn = p.info.get("conn")
    ports = conn.ports if conn is not None else []
    pending = [q for q in ports
               if q.owner is not None and any(entry[0] is chunk for entry in q.queue)]
    pending.sort(key=lambda q: _receiving(q.owner, q))
    return [q.owner for q in pending]


def _receiving(p: Proc, port: object) -> bool:
    req = p.request
    return req is not None and req[0] == "get" and req[1] is port


def waits_for(m: Machine, p: Proc) -> Proc | None:
    """The process ``p`` waits for, if any."""
    req = p.request
    if req is None:
        return None
    kind = req[0]
    if kind in ("acq", "acq_eq"):  # a barrier's lock (acq_eq): the runtime sets it
        return req[1].releaser
    if kind == "get":
        return req[1].conn.sender
    if kind == "sent":
        pending = pending_receivers(p, req[1])
        return pending[0] if pending else None
    if kind == "done":
        return req[1].owner
    if kind == "work" and unissued(m, p) is not None:
        return m.runtime
    return None


def loc_of_fifo(m: Machine, p: Proc) -> Loc | None:
    """The design line of what a DMA process moves: its link's, else its fifo's."""
    if p.info.get("link") is not None:
        return p.info.get("loc")
    name = p.info.get("fifo")
    return m.design.fifo(name).loc if name else None
