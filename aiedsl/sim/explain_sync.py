"""A deadlock through the cores' synchronisation, said and fixed: a cascade call waiting for its
neighbour (through a call that gets and puts, as the words stream), a core waiting on a runtime
barrier, and what to change."""

from __future__ import annotations

from aiedsl.ir.core_ops import Acquire, BarrierWait, Call
from aiedsl.ir.runtime import SetBarrier, Wait
from aiedsl.sim.processes import Proc
from aiedsl.sim.state import Machine
from aiedsl.sim.blocked import proc_words, runtime_pos, waits_for


def cascade_wait(m: Machine, p: Proc, op: Call) -> str:
    """A core stuck in a cascade call: a get waits for words its upstream neighbour has not
    put, a put for its downstream neighbour to take words (the link holds only a few). A
    neighbour inside a call that gets and puts passes words on only as its own other side
    lets it."""
    link, side, first, end = p.info["cascade"]
    words = f"word {first}" if end == first + 1 else f"words {first}-{end - 1}"
    if side == "get":
        through = through_call(m, link.src, "get")
        why = (f"its call of '{through}' passes the next on once its own get brings it in"
               if through else "it has not reached the call that puts the next")
        return (f"{proc_words(p)} waits at the cascade for {link.src} to put words: its call of "
                f"'{op.kernel}' gets {words} of the stream, and {link.src} has put "
                f"{link.put} so far ({why})")
    through = through_call(m, link.dst, "put")
    why = (f"its call of '{through}' takes the next once the words it passed on were taken"
           if through else "it has not reached the call that gets the next")
    return (f"{proc_words(p)} waits at the cascade for {link.dst} to take words: its call of "
            f"'{op.kernel}' puts {words} of the stream, the link holds {link.room} not taken, "
            f"and {link.dst} has taken {link.got} so far ({why})")


def through_call(m: Machine, core: str, side: str) -> str | None:
    """The kernel of the call that gets and puts ``core`` is stuck in, waiting on its
    ``side`` ("get": for words to come in, "put": for room), or None."""
    q = m.cores.get(core)
    call = q.info.get("waiting") if q is not None else None
    wait = q.info.get("cascade") if q is not None else None
    if not isinstance(call, Call) or wait is None or wait[1] != side:
        return None
    k = m.design.kernel(call.kernel)
    return call.kernel if k.cascade_in is not None and k.cascade_out is not None else None


def cascade_fix(m: Machine, chain: list[Proc]) -> str:
    """The fix for a cycle through a cascade call: the core the stuck cascade call waits for
    waits, before its own cascade call, to acquire what comes only after the first one; it
    should acquire it after its cascade call."""
    room = m.target.cascade_fifo_words
    through = any(k.cascade_in is not None and k.cascade_out is not None
                  for k in m.design.kernels)  # the clause only where such a call exists
    why = (f"on the cascade a put waits only for its neighbour to take words, the link "
           f"holding {room}, " + ("a get only for its words to be put, and a call that gets and "
                                  "puts passes the words on as they come" if through else
                                  "and a get only for its words to be put"))
    for q in chain:
        if q.kind != "core" or q.info.get("cascade") is None:
            continue
        other = waits_for(m, q)  # its neighbour on the link
        op = other.info.get("waiting") if other is not None else None
        if other is not None and isinstance(op, Acquire) and other.info.get("cascade") is None:
            return (f"break the cycle: {other.name} waits to acquire '{op.fifo}' ({op.port}, "
                    f"line {op.loc.line}) before the cascade call {q.name} waits for, and "
                    f"'{op.fifo}' can only come once {q.name}'s cascade call is done; acquire "
                    f"'{op.fifo}' after {other.name}'s cascade call ({why})")
    return (f"break the cycle: {why}, so neither neighbour may wait, before its cascade call, "
            "for data the other sends only after its own; make both reach their cascade calls "
            "first (acquire after the call, or move the data both need ahead of it)")


def barrier_wait(m: Machine, p: Proc, op: BarrierWait) -> str:
    """A core waiting on a runtime barrier: the value it waits for, the value its lock holds,
    and the values the runtime's sets gave it so far (a set replaces the value; a wait passes
    only while the lock holds the value it waits for)."""
    lock = m.barrier_locks[(op.barrier, p.name)]
    b = m.design.barrier(op.barrier)
    done = runtime_pos(m) if m.runtime is not None and not m.runtime.finished \
        else len(m.design.runtime)
    issued = [s for i, s in enumerate(m.design.runtime)
              if i < done and isinstance(s, SetBarrier) and s.barrier == op.barrier]
    sets = [f"{s.value} (line {s.loc.line})" for s in issued]
    if len(sets) > 4:
        sets = [*sets[:2], f"{len(sets) - 3} more", sets[-1]]
    given = ("the runtime set it to " + ", then ".join(sets) if issued
             else "the runtime has not set it")
    return (f"{proc_words(p)} waits for barrier '{op.barrier}' to hold {op.value}; it holds "
            f"{len(lock.units)} (it started at {b.init}; {given})")


def barrier_fix(m: Machine, gate: BarrierWait) -> str:
    """The fix for a core stuck at ``gate``: set the value it waits for, or stop replacing it
    before the core gets there."""
    b = m.design.barrier(gate.barrier)
    held = [s for s in m.design.runtime
            if isinstance(s, SetBarrier) and s.barrier == b.name and s.value == gate.value]
    if not held and b.init != gate.value:
        return (f"rt.set_barrier('{b.name}', {gate.value}) in the runtime sequence where the "
                f"core may go on: nothing sets barrier '{b.name}' to {gate.value}")
    return (f"set barrier '{b.name}' to another value only once the core is past its wait for "
            f"{gate.value} (e.g. after an rt.sync() on a drain the core reaches past that "
            "wait): a wait passes only while the barrier holds its value, and a set replaces "
            "the value")


def set_after_the_wait(m: Machine, gate: BarrierWait) -> tuple[Wait, SetBarrier] | None:
    """When the runtime is stuck in a wait and sets ``gate``'s barrier to the value it waits
    for only after it: that wait and the set (the runtime waits for the core, the core for the
    set)."""
    rt = m.runtime
    sync = rt.info.get("waiting") if rt is not None and not rt.finished else None
    if not isinstance(sync, Wait):
        return None
    pos = runtime_pos(m)
    later = next((s for s in m.design.runtime[pos + 1:] if isinstance(s, SetBarrier)
                  and s.barrier == gate.barrier and s.value == gate.value), None)
    return (sync, later) if later is not None else None
