"""A compute core's traced program, run: compiled once into a flat instruction list (every
lookup done ahead), then interpreted with object-fifo acquire/release semantics, kernel calls by
their references on the real buffers (what they compute on is :mod:`aiedsl.sim.operands`; a
core-local buffer is the core's own array, the same from call to call; what each call runs and
reads is found by :mod:`aiedsl.sim.call_refs`), cascade words (:mod:`aiedsl.sim.cascade_stream`),
runtime-parameter reads and barrier waits."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Generator

import numpy as np

from aiedsl.dtypes import held, unwritten
from aiedsl.errors import DesignError
from aiedsl.ir.core_ops import (Acquire, BarrierWait, BufferArg, Call, LocalArg, Loop, Op, Release,
                                RtpArg)
from aiedsl.ir.cores import Core
from aiedsl.sim.call_refs import RTP, before_the_call, read_rtp, reference, trial_reference
from aiedsl.sim.cascade_stream import (
    WORD_BYTES, Early, cascade_get, cascade_payloads, cascade_put, cascade_through,
)
from aiedsl.sim.engine import PAUSE, Gen, Lock, Proc, Request
from aiedsl.sim.operands import (
    accumulate, accumulating, accumulating_call, fill_tracking, finish_shared, ring_views,
    write_back_taken,
)
from aiedsl.sim.state import Machine, Ring, SimFault
from aiedsl.user_errors import user_exception


@dataclass(eq=False, slots=True)
class _End:
    """One fifo end of a core while its program runs: the ring, the locks its acquires and
    releases use, the slots it holds (oldest first) and the slot its next acquire gets."""

    key: tuple[str, str]
    ring: Ring
    acquire: Lock
    release: Lock
    held: list[int] = field(default_factory=list)
    next: int = 0
    depth: int = 0
    listed: bool = False
    """Whether the core's ``held`` (for explanations) lists this end yet: in the order the
    ends were first acquired."""
    stalled: float = 0.0
    """Cycles the core waited at this end's acquires (for data, or for a free buffer)."""


_ACQ, _REL, _CALL, _LOOP, _NEXT, _BAR = range(6)
"""Opcodes of a compiled core program."""


def _compile(m: Machine, core: Core, rings: dict[tuple[str, str, str], Ring],
             kernels: dict[str, Any]) -> list[tuple[Any, ...]]:
    """Flatten a core program into instructions with every lookup done once.

    Loops become ``(_LOOP, n, end)`` / ``(_NEXT, start)``. An acquire stores what it got in the
    cell of its result name (``[end, slots]``, the latest acquire of that name wins, as the
    program reads it); a call's buffer argument reads that cell through views of every slot of
    every end acquired under the name, already in the kernel parameter's shape.
    """
    ends: dict[tuple[str, str], _End] = {}
    cells: dict[str, list[Any]] = {}
    local_cells: dict[str, list[Any]] = {}
    """Per local the core uses, a cell as an acquire's (``[key, [slot]]``) that never changes:
    its one buffer, which the views of its arguments hold under ``key``."""
    acquired: dict[str, list[_End]] = {}
    kdecl = {k.symbol: k for k in m.design.kernels}
    refs = {k.symbol: reference(k, kernels) for k in m.design.kernels}
    out: list[tuple[Any, ...]] = []

    def end(fifo: str, port: str) -> _End:
        key = (fifo, port)
        if key not in ends:
            ring = rings[(fifo, port, core.name)]
            ends[key] = (_End(key, ring, ring.cons, ring.prod, depth=ring.depth)
                         if port == "consume" else
                         _End(key, ring, ring.prod, ring.cons, depth=ring.depth))
        return ends[key]

    def scan(ops: tuple[Op, ...]) -> None:
        for op in ops:
            if isinstance(op, Loop):
                scan(op.body)
            elif isinstance(op, Acquire):
                acquired.setdefault(op.result, []).append(end(op.fifo, op.port))

    def emit(ops: tuple[Op, ...]) -> None:
        for op in ops:
            if isinstance(op, Loop):
                if op.count < 1:  # as scf.for: no iteration (the body ran once before its
                    continue      # count was tested; validation refuses such a loop first)
                at = len(out)
                out.append((_LOOP, op.count, 0))
                emit(op.body)
                if len(out) == at + 1:
                    # nothing to do however often: stepping loop(2**62) would never end, and
                    # the core's compiler deletes an empty loop (the timing model charges none)
                    out.pop()
                    continue
                out.append((_NEXT, at))
                out[at] = (_LOOP, op.count, len(out))
            elif isinstance(op, BarrierWait):
                out.append((_BAR, m.barrier_locks[(op.barrier, core.name)], op.value, op))
            elif isinstance(op, Acquire):
                cell = cells.setdefault(op.result, [None, None])
                e = end(op.fifo, op.port)
                out.append((_ACQ, e, op.count, cell, op, id(e)))
            elif isinstance(op, Release):
                out.append((_REL, end(op.fifo, op.port), op.count, op))
            elif isinstance(op, Call):
                k = kdecl[op.kernel]
                prepared = getattr(kernels.get(op.kernel), "prepared", None)
                args: list[tuple[Any, ...]] = []
                for pos, (a, param) in enumerate(zip(op.args, k.args)):
                    if isinstance(a, BufferArg):
                        assert param.type is not None, "a buffer parameter has a type"
                        shape = param.type.shape
                        # a prepared kernel's operand is only read, to make what it computes on
                        read = prepared is not None and pos in prepared.operands
                        views = {id(e): ring_views(e.ring, shape, read)
                                 for e in acquired.get(a.value, [])}
                        args.append((cells.setdefault(a.value, [None, None]), a.index, views))
                    elif isinstance(a, LocalArg):  # the core's own copy, read and written
                        assert param.type is not None, "a buffer parameter has a type"
                        buf = m.locals[(a.local, core.name)]
                        cell = local_cells.setdefault(a.local, [id(buf), [0]])
                        args.append((cell, 0, {cell[0]: [buf.reshape(param.type.shape)]}))
                    elif isinstance(a, RtpArg):
                        args.append((RTP, a, m.rtps[a.rtp]))
                    else:  # the constant as the C++ receives it (0.3 as bf16: 0.30078125)
                        args.append((None, 0, held(a.value, param.dtype)))
                casc = None
                bits = m.target.cascade_bits
                if k.cascade_in is not None or k.cascade_out is not None:
                    # (the link it gets from, the link it puts on, the words of each, how its
                    # C++ interleaves them, and for a call that gets and puts the kernel's
                    # unchecked callable for trial runs): each side meets only its own
                    # neighbour (a link missing is refused by check)
                    get = m.cascades.get((core.name, "in")) if k.cascade_in else None
                    put = m.cascades.get((core.name, "out")) if k.cascade_out else None
                    casc = (get, put,
                            k.cascade_in.nbytes * 8 // bits if k.cascade_in else 0,
                            k.cascade_out.nbytes * 8 // bits if k.cascade_out else 0,
                            k.cascade_step,
                            trial_reference(k, kernels, core.name, op)
                            if get is not None and put is not None else None)
                shared, dirty = fill_tracking(op, k, kernels.get(op.kernel), acquired, cells,
                                              local_cells)
                acc = accumulating(op, kernels.get(op.kernel))
                uses_cascade = k.cascade_in is not None or k.cascade_out is not None
                # its own cycles: a kernel profiled for them, the profile of this call's
                # scalars (k(a, c, 1024) is charged what the C++ does with 1024)
                body = k.call_cycles(op.args)
                # a cascade call moves its words no faster than the core can
                if casc is not None:
                    body = max(body, -(-max(casc[2], casc[3])
                                       // m.target.cascade_words_per_cycle))
                # a kernel that tells its calls apart (a native one, to name the call that
                # crashed) gets a callable per call site
                at_call = getattr(kernels.get(op.kernel), "at_call", None)
                ref = refs[op.kernel] if at_call is None else at_call(core.name, op)
                if at_call is None:  # a reference (a native kernel sees the one memory)
                    ref = before_the_call(ref, k, op)
                # (_CALL, kernel, reference, argument cells, op, reads an rtp, cascade,
                #  shared operands, written buffers, accumulator, uses the cascade, cycles,
                #  the whole call as one function of the kept outputs (or None),
                #  [appended by _mark_takers] takes a kept output's buffer)
                out.append((_CALL, k, ref, args, op,
                            any(isinstance(a, RtpArg) for a in op.args), casc, shared, dirty,
                            acc, uses_cascade, body + m.costs.call,
                            None if uses_cascade or dirty is not None else
                            accumulating_call(acc, args, shared)))

    scan(core.body)
    emit(core.body)
    return _mark_takers(out)


def _mark_takers(code: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """Append to each call whether it may take, as a plain buffer, one an accumulating call
    keeps its output for (it then writes that back first), and to each release whether its
    end may hold such an output; most cannot, and skip the look."""
    kept_ends: set[int] = set()
    for ins in code:
        if ins[0] == _CALL and ins[9] is not None:
            kept_ends.update(ins[3][ins[9][0]][2])  # the views by end of its output
    out = []
    for ins in code:
        if ins[0] == _CALL:
            keep = ins[9][0] if ins[9] is not None else -1
            takes = any(pos != keep and cell.__class__ is list and kept_ends.intersection(views)
                        for pos, (cell, _, views) in enumerate(ins[3]))
            ins = (*ins, takes)
        elif ins[0] == _REL:
            ins = (*ins, id(ins[1]) in kept_ends)
        out.append(ins)
    return out


def _arguments(m: Machine, p: Proc, core: Core, ins: tuple[Any, ...]) -> list[Any]:
    """Call ``ins``'s arguments as its kernel takes them: the buffers it acquired (through
    the cells the acquires filled), rtp slots read at the core's clock, constants."""
    return [views[cell[0]][cell[1][i]] if cell.__class__ is list
            else read_rtp(core, p, i, views, ins[4], m.design) if cell is RTP
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
             accs: dict[tuple[int, int], Any], compute: bool, body: int
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
    args = _arguments(m, p, core, ins)  # the buffers it holds, the rtps read at its start
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
    run would spin up to the cap). Only the first
    ``m.invocations`` passes count towards the busy time and the operations: a later pass is
    the work of an invocation the run does not simulate."""
    code = _compile(m, core, rings, kernels)
    p.info["held"] = {}  # what the core holds, for deadlock explanations
    p.info["ends"] = {}  # the fifo ends it has acquired, for the timing summary
    heap = m.engine.heap
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
    while True:
        yield from _one_pass(m, p, core, code, accs, counted=passes < m.invocations)
        passes += 1
        p.info["passes"] = passes
        kept = {key: len(h) for key, h in p.info["held"].items() if h}
        if kept and "ended_holding" not in p.info:  # a missing release: deadlock reports say it
            p.info["ended_holding"] = kept
        if heap and heap[0][0] < p.time:  # the runtime's end, if earlier, goes first
            yield PAUSE
        if (not blocks or n_code == 0 or m.runtime is None or m.runtime.finished
                or passes >= PASSES_PER_INVOCATION * m.invocations):
            return


def _one_pass(m: Machine, p: Proc, core: Core, code: list[tuple[Any, ...]],
              accs: dict[tuple[int, int], tuple[Any, Any, Callable[[Any, Any], None]]],
              counted: bool) -> Gen:
    """One pass of ``core``'s compiled program ``code`` on process ``p``; ``counted``: its
    calls count towards the core's busy time and the run's operations."""
    engine = m.engine
    costs = m.costs
    held: dict[tuple[str, str], list[int]] = p.info["held"]
    ends: dict[tuple[str, str], _End] = p.info["ends"]
    info = p.info
    compute = m.compute
    release = engine.release
    wake = engine.wake
    heap = engine.heap
    acquire_cost, release_cost = costs.acquire, costs.release
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
                    if heap and heap[0][0] < t:
                        yield PAUSE
                else:
                    info["waiting"] = ins[4]
                    yield ("acq", e.acquire, need)
                    del info["waiting"]
                e.stalled += p.time - before
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
            if ins[5] and heap and heap[0][0] < p.time:
                # an rtp is read at this cycle: let every earlier event (a runtime write) go first
                yield PAUSE
            casc = ins[6]  # None unless the call gets from or puts on a cascade
            start = p.time
            if casc is not None and casc[5] is not None:
                # it gets and puts: the stream passes through it, its puts going out as its
                # gets come in (its kernel runs once the last is in)
                body = ins[11] - m.costs.call
                end = yield from _through(m, p, core, ins, accs, compute, body)
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
                    _run(core, ins, _arguments(m, p, core, ins), accs, cascade)
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
                m.kernel_calls += 1
                # a kernel counting ops= per call: this call's own (n=16 does not do n=1024's)
                m.ops += k.call_ops(ins[4].args) if k.op_counts else k.ops
            if engine.trace:
                computed = start + cost
                p.spans.append((start, computed, k.symbol))
                if p.time > computed:  # the cascade's stall: waiting, not computing (core_busy)
                    p.spans.append((computed, p.time, f"cascade stall ({k.symbol})"))
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
            if heap and heap[0][0] < p.time:
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
