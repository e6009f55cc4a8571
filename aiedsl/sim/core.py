"""A compute core's traced program, run: compiled once into a flat instruction list (every
lookup done ahead: :mod:`aiedsl.sim.core_program`), then interpreted with object-fifo
acquire/release semantics, kernel calls by their references on the real buffers (what they
compute on is :mod:`aiedsl.sim.operands`; a core-local buffer is the core's own array, the same
from call to call; what each call runs and reads is found by :mod:`aiedsl.sim.call_refs`),
cascade words (:mod:`aiedsl.sim.cascade_stream`), runtime-parameter reads and barrier waits."""

from __future__ import annotations

from array import array
from typing import Any, Callable, Generator

import numpy as np

from aiedsl.dtypes import unwritten
from aiedsl.errors import DesignError
from aiedsl.ir.cores import Core
from aiedsl.sim.call_refs import INDEX, RTP, read_rtp
from aiedsl.sim.cascade_stream import (
    WORD_BYTES, Early, cascade_get, cascade_payloads, cascade_put, cascade_through,
)
from aiedsl.sim.core_program import ACQ as _ACQ
from aiedsl.sim.core_program import BAR as _BAR
from aiedsl.sim.core_program import CALL as _CALL
from aiedsl.sim.core_program import LOOP as _LOOP
from aiedsl.sim.core_program import REL as _REL
from aiedsl.sim.core_program import End, compile_core
from aiedsl.sim.processes import NEXT_INVOCATION, PAUSE, Gen, Proc, Request
from aiedsl.sim.operands import accumulate, finish_shared, write_back_taken
from aiedsl.sim.state import CallLimit, Machine, Ring, SimFault
from aiedsl.user_errors import user_exception


def _arguments(m: Machine, p: Proc, core: Core, ins: tuple[Any, ...], counters: list[int]
               ) -> list[Any]:
    """Call ``ins``'s arguments as its kernel takes them: the buffers it acquired (through
    the cells the acquires filled), rtp slots read at the core's clock, loop indices (from
    ``counters``: the iterations each loop around the call has left), constants."""
    return [views[cell[0]][cell[1][i]] if cell.__class__ is list
            else read_rtp(core, p, i, views, ins[4], m.design) if cell is RTP
            else views - counters[i] if cell is INDEX
            else views for cell, i, views in ins[3]]


def _run(core: Core, ins: tuple[Any, ...], args: list[Any],
         accs: dict[tuple[int, int], Any], cascade: list[np.ndarray] | None) -> None:
    """Run call ``ins``'s kernel on ``args`` and the ``cascade`` arrays (its get's words, a
    fresh array for its put): a kept output written back first where the call reads it, the
    user's failure in the design's terms, and what it may have written marked as no DMA
    chunk's any more."""
    k = ins[1]
    if cascade is not None:
        args = args + cascade
    acc = ins[9]
    if ins[13] and accs:  # a buffer this call reads otherwise: written back first
        write_back_taken(accs, ins[3], acc[0] if acc is not None else -1)
    try:
        if acc is not None:
            accumulate(acc, accs, ins[3], ins[7], args)
        elif ins[7] is None:
            ins[2](*args)
        else:
            finish_shared(ins[7], args)
    except DesignError:  # already the design's terms (a native kernel's crash)
        raise
    except Exception as err:  # the user's reference (or a native build) failed
        raise user_exception(err, f"running kernel '{k.symbol}' for {core.name} "
                             f"(called at {ins[4].loc})", k.loc) from err
    if ins[8] is not None:  # what the call may have written copies no chunk now
        for cell, i, fills in ins[8]:
            fl = fills.get(cell[0])
            if fl is not None:
                fl[cell[1][i]] = None


def _through(m: Machine, p: Proc, core: Core, ins: tuple[Any, ...],
             accs: dict[tuple[int, int], Any], compute: bool, body: int, counters: list[int]
             ) -> Generator[Request, Any, float]:
    """Run call ``ins``, which gets and puts, as :func:`cascade_through` streams it; returns
    when its last word fit. Its kernel runs once its whole get is in; the words of its put
    its downstream neighbour takes before then are made by a trial run on what it got so far
    (:class:`~aiedsl.sim.cascade_stream.Early`), which the real run checks."""
    k, call = ins[1], ins[4]
    get, put, words_in, words_out, step, trial_ref = ins[6]
    if not compute:
        return (yield from cascade_through(m, p, call, get, put, words_in, words_out, step,
                                           body, None))
    args = _arguments(m, p, core, ins, counters)  # its buffers, the rtps read at its start
    first_in = get.got
    cin_type, cout_type = k.cascade_in, k.cascade_out

    def trial() -> tuple[np.ndarray, int]:
        """The call's put made from the words it got so far, the rest of its get poison, on
        copies of everything it reads and writes (the core's own arrays stay as they are)."""
        got = get.got - first_in
        cin = unwritten(tuple(cin_type.shape), np.dtype(cin_type.dt.numpy))
        cin.reshape(-1).view(np.uint8)[:got * WORD_BYTES] = get.peek(got * WORD_BYTES)
        cout = np.zeros(cout_type.shape, np.dtype(cout_type.dt.numpy))
        try:
            trial_ref(*_copies(ins, args, accs), cin, cout)
        except DesignError:  # already the design's terms (a native kernel's crash)
            raise
        except Exception as err:  # the user's reference failed on the words so far
            raise user_exception(
                err, f"running kernel '{k.symbol}' for {core.name} (called at {call.loc}) on "
                f"the first {got} of its {words_in} cascade words, the rest undefined (poison), "
                "to make the words its neighbour takes before the rest come in", k.loc) from err
        return cout.reshape(-1).view(np.uint8), got

    early = Early(trial, k, core.name, call, (words_in, words_out), step)
    put.early = early

    def made() -> None:
        """The real run, the whole get in: the put's values, checked against what went out
        early, and the rest of them on the link."""
        cascade = cascade_payloads(k, (get, put))
        _run(core, ins, args, accs, cascade)
        out = cascade[-1].reshape(-1).view(np.uint8)
        early.check(out)
        put.early = None
        if early.handed < out.size:
            put.values.append(out[early.handed:])

    try:
        return (yield from cascade_through(m, p, call, get, put, words_in, words_out, step,
                                           body, made))
    finally:
        if put.early is early:  # a fault before the kernel ran
            put.early = None


def _copies(ins: tuple[Any, ...], args: list[Any], accs: dict[tuple[int, int], Any]
            ) -> list[Any]:
    """Copies of a call's array arguments for a trial run (one copy per memory: an argument
    given twice stays one array), a kept output (an accumulator's) as the call would read
    it; other arguments as they are."""
    out: list[Any] = []
    made: dict[tuple[int, int], np.ndarray] = {}
    for a, (cell, i, _) in zip(args, ins[3]):
        if not isinstance(a, np.ndarray):
            out.append(a)
            continue
        key = (a.__array_interface__["data"][0], a.nbytes)
        copy = made.get(key)
        if copy is None:
            copy = made[key] = a.copy()
            kept = accs.get((cell[0], cell[1][i])) if cell.__class__ is list else None
            if kept is not None:
                kept[2](kept[1], copy)
        out.append(copy if copy.shape == a.shape else copy.reshape(a.shape))
    return out


PASSES_PER_INVOCATION = 64
"""Passes of its program a core may make per invocation simulated before it is not started
again: a balanced design makes one (a core runs ahead by at most the pass it starts as it ends);
the cap only ends a run where cores feeding each other would go round while the runtime waits,
which then stops as a deadlock."""


def run_core(m: Machine, p: Proc, core: Core, rings: dict[tuple[str, str, str], Ring],
             kernels: dict[str, Any]) -> Gen:
    """Interpret a core's program, compiled so each step is a few list operations, again each
    time it ends, as the NPU runs it.

    The core's program is the body of a loop that never ends (aiedsl's ``aie.mlir.j2`` wraps it
    in an ``scf.for`` to ``c_forever``, as mlir-aie's IRON does: ``python/iron/worker.py``,
    ``Worker.resolve``, ``range_(sys.maxsize)`` unless ``while_true=False``): the core starts
    its next pass at once, whatever the runtime is doing, and so reaches the next invocation's
    first waits with the barrier values and rtp slots of that moment. The run's horizon is the
    runtime's end: a pass that ends after the runtime's last invocation has ended is not
    started again (it would block at its first acquire, or spin: no data comes), nor is a
    program with no acquire, barrier wait or cascade call (its passes could never block: the
    run would spin up to the cap); a core of ``forever=False`` runs it once. Only the first
    ``m.invocations`` passes count towards the busy time and the operations: a later pass is
    the work of an invocation the run does not simulate."""
    code = compile_core(m, core, rings, kernels)
    p.info["held"] = {}  # what the core holds, for deadlock explanations
    p.info["ends"] = {}  # the fifo ends it has acquired, for the timing summary
    times = m.engine.times
    accs: dict[tuple[int, int], tuple[Any, Any, Callable[[Any, Any], None]]] = {}
    """Outputs kept in a kernel's own layout (:class:`~aiedsl.kernels.prepared.Accumulator`), by
    (end, slot): (the buffer, the private copy, how to write it back)."""
    n_code = len(code)
    # a cascade call blocks as an acquire does (a get stalls the core while the stream is empty,
    # a put while it is full: aiedsl.targets.model, TargetModel.cascade_fifo_words, after AM020's
    # Cascade Stream Interface), so a core whose program only gets and puts waits there for the
    # next invocation's words and must be started again
    blocks = any(ins[0] in (_ACQ, _BAR) or (ins[0] == _CALL and ins[6] is not None)
                 for ins in code)
    passes = 0
    p.info["calls"] = array("d")  # the counted calls' (start, end), for the timing summary
    while True:
        yield from _one_pass(m, p, core, code, accs, counted=passes < m.invocations)
        passes += 1
        p.info["passes"] = passes
        if passes == m.invocations:  # the work the run times ends here; later passes' is not
            p.info["counted_end"] = p.time
        kept = {key: len(h) for key, h in p.info["held"].items() if h}
        if kept and "ended_holding" not in p.info:  # a missing release: deadlock reports say it
            p.info["ended_holding"] = kept
        if times and times[0] < p.time:  # the runtime's end, if earlier, goes first
            yield PAUSE
        if (not core.forever or not blocks or n_code == 0 or m.runtime is None
                or m.runtime.finished or passes >= PASSES_PER_INVOCATION * m.invocations):
            return


def _one_pass(m: Machine, p: Proc, core: Core, code: list[tuple[Any, ...]],
              accs: dict[tuple[int, int], tuple[Any, Any, Callable[[Any, Any], None]]],
              counted: bool) -> Gen:
    """One pass of ``core``'s compiled program ``code`` on process ``p``; ``counted``: its
    calls count towards the core's busy time and the run's operations."""
    engine = m.engine
    costs = m.costs
    held: dict[tuple[str, str], list[int]] = p.info["held"]
    ends: dict[tuple[str, str], End] = p.info["ends"]
    info = p.info
    compute = m.compute
    release = engine.release
    wake = engine.wake
    times = engine.times
    acquire_cost, release_cost = costs.acquire, costs.release
    call_limit = m.call_limit
    calls = info["calls"]
    counters: list[int] = []
    pc = 0
    n_code = len(code)
    while pc < n_code:
        ins = code[pc]
        tag = ins[0]
        if tag == _ACQ:
            e, count, cell = ins[1], ins[2], ins[3]
            h = e.held
            if not e.listed:
                e.listed = True
                held[e.key] = h
                ends[e.key] = e
            need = count - len(h)
            if need > 0:  # elements already held take no lock operation
                before = p.time
                units = e.acquire.units
                if len(units) >= need:  # Engine.acquire inlined, then its yield point
                    t = p.time
                    if need == 1:
                        u = units.popleft()
                        if u > t:
                            t = u
                    else:
                        for _ in range(need):
                            u = units.popleft()
                            if u > t:
                                t = u
                    p.time = t
                    if times and times[0] < t:
                        yield PAUSE
                else:
                    info["waiting"] = ins[4]
                    yield ("acq", e.acquire, need)
                    del info["waiting"]
                e.stalled += p.time - before
                if engine.trace and p.time > before:  # why the core is idle: drawn
                    p.spans.append((before, p.time,
                                    ins[6] + ("" if counted else NEXT_INVOCATION)))
                p.time += acquire_cost
                first = e.next
                depth = e.depth
                if need == 1:
                    h.append(first)
                    e.next = first + 1 if first + 1 < depth else 0
                else:
                    h.extend([(first + i) % depth for i in range(need)])
                    e.next = (first + need) % depth
            cell[0] = ins[5]
            cell[1] = h[:count]
        elif tag == _CALL:
            k = ins[1]
            if ins[5] and times and times[0] < p.time:
                # an rtp is read at this cycle: let every earlier event (a runtime write) go first
                yield PAUSE
            casc = ins[6]  # None unless the call gets from or puts on a cascade
            start = p.time
            if casc is not None and casc[5] is not None:
                # it gets and puts: the stream passes through it, its puts going out as its
                # gets come in (its kernel runs once the last is in)
                body = ins[11] - m.costs.call
                end = yield from _through(m, p, core, ins, accs, compute, body, counters)
                p.time = end - body  # the stream's stall beyond the kernel's own cycles
            else:
                took = start  # when a get's last word came (its data stall included)
                cascade = None
                if casc is not None and casc[0] is not None:
                    took = yield from cascade_get(m, p, ins[4], casc[0], casc[2],
                                                   ins[11] - m.costs.call)
                if compute and ins[12] is not None and not (ins[13] and accs):
                    try:
                        ins[12](accs)
                    except Exception as err:  # the user's reference failed
                        raise user_exception(err, f"running kernel '{k.symbol}' for "
                                             f"{core.name} (called at {ins[4].loc})",
                                             k.loc) from err
                elif compute:
                    # the kernel reads or writes the cascade: its arrays follow the arguments
                    cascade = cascade_payloads(k, casc) if ins[10] else None
                    _run(core, ins, _arguments(m, p, core, ins, counters), accs, cascade)
                if casc is not None:
                    # a get's words stream in while the kernel runs: it ends when the last is in
                    body = ins[11] - m.costs.call
                    end = took if took > start + body else start + body
                    if casc[1] is not None:
                        put = cascade[-1] if compute and cascade is not None else None
                        end = yield from cascade_put(m, p, ins[4], casc[1], casc[3], start,
                                                      end, put)
                    p.time = end - body  # the stream's stall beyond the kernel's own cycles
            cost = ins[11]
            p.time += cost
            if counted:
                p.busy += cost
                calls.append(start)
                calls.append(start + cost)
                m.kernel_calls += 1
                if m.kernel_calls == call_limit:
                    raise CallLimit
                # a kernel counting ops= per call: this call's own (n=16 does not do n=1024's)
                m.ops += k.call_ops(ins[4].args) if k.op_counts else k.ops
            if engine.trace:
                computed = start + cost
                # a later pass is the next invocation's work, started as this one's ends (the
                # core's program loops): drawn, but not counted in this run's figures
                later = "" if counted else NEXT_INVOCATION
                # the loop indices it passes: which iteration a span is (a tester debugging
                # one block of a causal mask)
                at = ", ".join(f"{k.args[pos].name}={views - counters[i]}"
                               for pos, (cell, i, views) in enumerate(ins[3]) if cell is INDEX)
                p.spans.append((start, computed, k.symbol + (f" ({at})" if at else "") + later))
                if p.time > computed:  # the cascade's stall: waiting, not computing (core_busy)
                    p.spans.append((computed, p.time, f"cascade stall ({k.symbol}){later}"))
        elif tag == _REL:
            e, count = ins[1], ins[2]
            h = e.held
            if count > len(h):
                op = ins[3]
                raise SimFault(
                    "release", f"{core.name} releases {count} element(s) of "
                    f"'{op.fifo}' ({op.port}) but holds {len(h)}", loc=op.loc,
                    limit=f"at most the {len(h)} held", found=str(count),
                    fix="release only what was acquired")
            if ins[4] and accs:  # what leaves the core holds the kept output
                for slot in h[:count]:
                    kept = accs.pop((id(e), slot), None)
                    if kept is not None:
                        kept[2](kept[1], kept[0])
            del h[:count]
            p.time += release_cost
            lock = e.release
            if count == 1:
                lock.units.append(p.time)
                if lock.waiters:
                    wake(lock.waiters)
            else:
                release(lock, count, p.time)
        elif tag == _BAR:
            # Acquire (acquire-equal): wait until the lock holds the value, leave it there; the
            # same lock cost as a fifo's. A set the runtime makes before this clock goes first.
            info["waiting"] = ins[3]
            if times and times[0] < p.time:
                yield PAUSE
            yield ("acq_eq", ins[1], ins[2])
            del info["waiting"]
            p.time += costs.acquire
        elif tag == _LOOP:
            counters.append(ins[1])
        else:  # _NEXT
            counters[-1] -= 1
            if counters[-1]:
                pc = ins[1]  # back to the loop head's body
            else:
                counters.pop()
        pc += 1
    for buf, kept, store in accs.values():  # the buffers hold every call's result at the end
        store(kept, buf)
    accs.clear()
