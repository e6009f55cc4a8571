"""The runtime sequence, run: shim transfers issued in order, waits, rtp writes and barrier
sets, each at the cost the target's timing model gives the firmware."""

from __future__ import annotations

from bisect import bisect_right

from aiedsl.checks.task_queues import queue_fix
from aiedsl.ir.runtime import Transfer
from aiedsl.ir.sequence import shim_bd_ids
from aiedsl.sim.processes import PAUSE, Gen, Proc, Token
from aiedsl.sim.patterns import bursts_per_byte
from aiedsl.sim.shim import ShimRtpWrite, ShimSetLock, ShimTransfer, Step, shim_program
from aiedsl.sim.state import Machine, SimFault


def run_runtime(m: Machine, p: Proc) -> Gen:
    """Run the runtime sequence ``m.invocations`` times: the shim transfers, waits and rtp
    writes of :func:`shim_program`.

    Issuing a transfer takes the firmware ``shim_task_s`` (its BD, address patch and queue
    push); the transfer starts no earlier. An rtp write takes ``register_write_s`` and lands
    when it is done. Waits cost nothing beyond waiting. An invocation ends when its last
    instruction is done (the host's wait returns then: nothing in the instruction stream waits
    for a core, mlir-aie lowers ``dma_wait`` to ``npu.sync`` on a shim channel,
    ``AIEDmaToNpu.cpp``, ``DmaWaitToSyncPattern``); the next starts the target's fixed
    invocation cost (``TimingModel.invocation_s``, what the host spends between the two) later,
    on host arrays of its own, while the cores carry on (:func:`~aiedsl.sim.core.run_core`).
    """
    program = shim_program(m.design, m.target)
    gap = m.target.timing.invocation_s * m.clock_hz
    for n in range(m.invocations):
        if n:
            p.time += gap
            m.host = m.hosts[n - 1]
            if m.engine.times and m.engine.times[0] < p.time:
                yield PAUSE  # what the cores do in between comes first
        p.info["invocation"] = n + 1
        m.barriers_at.append({key: len(lock.units) for key, lock in m.barrier_locks.items()})
        yield from _sequence(m, p, program)
        m.ends.append(p.time)
    p.info["done"] = True


def _sequence(m: Machine, p: Proc, program: tuple[Step, ...]) -> Gen:
    """Run one invocation of the runtime sequence ``program``."""
    engine = m.engine
    costs = m.costs
    pending: dict[str, list[Token]] = {}
    for op in program:
        if isinstance(op, ShimSetLock):
            # one register write: the lock takes the value, whatever it held
            _work(p, costs.register_write, f"set barrier {op.barrier} = {op.value}", engine.trace)
            if engine.times and engine.times[0] < p.time:
                # a core may pass a wait on the value this set replaces: earlier clocks first
                yield PAUSE
            lock = m.barrier_locks[(op.barrier, op.core)]
            lock.units.clear()
            if op.value:
                engine.release(lock, op.value, p.time)
            continue
        if isinstance(op, ShimRtpWrite):
            # one register write into the core's memory; nothing waits for it
            _work(p, costs.register_write, f"rtp_write {op.rtp}[{op.index}] = {op.value}",
                  engine.trace)  # the value in the label: a trace shows which one went in
            m.rtps[op.rtp].writes[op.index].append((p.time, op.value))
            continue
        if isinstance(op, ShimTransfer):
            flat = m.host[op.tensor].reshape(-1)
            _work(p, costs.task, f"issue {op.op} {op.fifo}", engine.trace)
            per_byte = bursts_per_byte(op.pattern, flat.itemsize, costs.burst_bytes)
            token = None
            if op.token:  # a wait takes the oldest token of its channel, waited for or not
                procs = m.fill_procs if op.op == "fill" else m.drain_procs
                token = Token(f"{op.op} {op.fifo}", op.loc, procs.get(op.fifo))
                pending.setdefault(op.fifo, []).append(token)
            q = (m.fill_queues if op.op == "fill" else m.drain_queues)[op.fifo]
            q.issued.append((p.time, op))
            engine.enqueue(q, (flat, op.pattern, token, p.time, per_byte))
        else:
            token = pending[op.fifo].pop(0)
            p.info["waiting"] = m.design.runtime[op.order]  # the IR's Wait, for explanations
            if engine.trace:  # drawn to where the run stops, if it stops in it (sim.trace)
                what = "drain" if op.direction == "S2MM" else "fill"
                # the transfer's line, and the wait's where that is another (an rt.sync())
                at = token.loc.line if token.loc is not None else op.loc.line
                lines = f"line {at}" + (f"; the wait: line {op.loc.line}"
                                        if at != op.loc.line else "")
                p.open = (p.time, f"waits for the {what} of '{op.fifo}' ({lines})")
            yield ("done", token)
            if p.open is not None and p.time > p.open[0]:  # a wait that took time: drawn too
                p.spans.append((p.open[0], p.time, p.open[1]))
            p.open = None
            p.info.pop("waiting", None)


def _work(p: Proc, cycles: float, label: str, trace: bool) -> None:
    """The firmware spends ``cycles`` on one step (a trace shows it on the runtime's track)."""
    if trace:
        p.spans.append((p.time, p.time + cycles, label))
    p.time += cycles
    p.busy += cycles


def check_task_queues(m: Machine) -> None:
    """No push found a shim channel's task queue full, as the run went.

    :func:`~aiedsl.checks.task_queues.check_task_queues` retires transfers only as the sequence
    shows them done (:mod:`aiedsl.ir.sequence`); this counts again on the run's own clocks, so
    that a flaw in that proof shows as an error rather than a PASS the NPU would not give (it
    drops a push onto a full queue and the run hangs). A transfer is outstanding from its push
    until its channel is done with it.
    """
    limit = m.target.shim_task_queue
    for queues, verb in ((m.fill_queues, "fills"), (m.drain_queues, "drains")):
        for q in queues.values():
            done = q.finished  # in order, never decreasing: the channel takes one at a time
            for i, (at, op) in enumerate(q.issued):
                oldest = min(bisect_right(done, at), i)  # the first not done at this push
                if i + 1 - oldest > limit:
                    tile = m.design.shim_end(op).tile
                    first = q.issued[oldest][1]
                    raise SimFault(
                        "shim task queue", f"{i + 1 - oldest} transfers ({verb} of '{q.name}') "
                        f"are outstanding on one DMA channel of shim tile {tile} when this one "
                        "is pushed", loc=op.loc,
                        limit=f"{limit} queued tasks per channel: the NPU drops a push onto a "
                        "full queue and the run hangs (mlir-aie PR 3734)",
                        found=f"{i + 1 - oldest} pushed and not done at cycle {at:.0f}",
                        related=[("the oldest still outstanding", first.loc)],
                        fix=queue_fix(op.op))


def check_shim_bds(m: Machine) -> None:
    """No transfer took a shim BD while the transfer holding it before was still queued or
    moving, as the run went.

    A queued task reads its BD only when it starts, so a BD written over before then runs the
    new transfer's descriptor on the old one's channel. The ids are the MLIR's
    (:func:`aiedsl.ir.sequence.shim_bd_ids`), handed on only once the sequence has shown a
    transfer done; this finds a flaw in that proof on the run's own clocks.
    """
    ids = shim_bd_ids(m.design)
    pushed: dict[tuple[int, int], float] = {}
    """By (invocation, runtime op): when the transfer was pushed (an op is pushed once per
    invocation, in order)."""
    done: dict[tuple[int, int], float] = {}
    for queues in (m.fill_queues, m.drain_queues):
        for q in queues.values():
            seen: dict[int, int] = {}
            for k, (at, op) in enumerate(q.issued):
                key = (seen.get(op.order, 0), op.order)
                seen[op.order] = key[0] + 1
                pushed[key] = at
                done[key] = q.finished[k] if k < len(q.finished) else float("inf")
    holder: dict[tuple[object, int], tuple[int, int]] = {}
    for key in sorted(pushed):  # in issue order
        i = key[1]
        op = m.design.runtime[i]
        assert isinstance(op, Transfer)
        tile = m.design.shim_end(op).tile
        before = holder.get((tile, ids[i]))
        holder[(tile, ids[i])] = key
        if before is None or done[before] <= pushed[key]:
            continue
        old = m.design.runtime[before[1]]
        assert isinstance(old, Transfer)
        state = "never done" if done[before] == float("inf") else \
            f"done at cycle {done[before]:.0f}"
        raise SimFault(
            "shim BD reuse", f"rt.{op.op} of '{op.fifo}' takes BD {ids[i]} of shim tile {tile} "
            f"while the {old.op} of '{old.fifo}' holding it is not done", loc=op.loc,
            limit="a shim BD is handed on once the transfer holding it is done: a queued task "
            "reads its BD only when it starts", found=f"pushed at cycle {pushed[key]:.0f}; the "
            f"{old.op} of '{old.fifo}' {state}",
            related=[(f"the {old.op} of '{old.fifo}'", old.loc)],
            fix=f"wait for the {old.op} of '{old.fifo}' ({_how(old.op)}) before this "
            "transfer. aiedsl took it to be done at a wait before this one: that is a flaw in "
            "aiedsl, please report it with this design")


def _how(op: str) -> str:
    return "wait=True and rt.sync()" if op == "fill" else "rt.sync()"
