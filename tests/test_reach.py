"""Bounds on a core's progress (aiedsl.ir.reach): the loop arithmetic agrees with walking
every iteration one by one (barrier waits matched to the values the barrier holds in turn, and
counted as passed; where a core stops next past a lower bound), and the shipped rtp design's
bounds are what its sequence says."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

from aiedsl.ir.core_ops import Acquire, BarrierWait, Call, Loop, Op, Release, RtpArg
from aiedsl.ir.loc import Loc
from aiedsl.ir.progress import END, Held, Progress, next_op, until_blocked, until_released
from aiedsl.ir.reach import Reach
from aiedsl.loader import load_design

AT = Loc(file="t.py", line=1)
FIFOS = ("a", "b", "o")


def _op(rng: random.Random, depth: int) -> Op:
    kind = rng.choice(["acq", "rel", "call", "bar", "loop"] if depth < 3
                      else ["acq", "rel", "call", "bar"])
    fifo = rng.choice(FIFOS)
    port = "produce" if fifo == "o" else "consume"
    if kind == "acq":
        return Acquire(fifo=fifo, port=port, count=rng.randint(1, 3), result="x", loc=AT)
    if kind == "rel":
        return Release(fifo=fifo, port=port, count=rng.randint(1, 2), loc=AT)
    if kind == "bar":
        return BarrierWait(barrier="g", value=rng.randint(1, 3), loc=AT)
    if kind == "call":
        return Call(kernel="k", loc=AT, args=tuple(
            RtpArg(rtp="r", index=i, dtype="i32", loc=AT) for i in rng.sample([0, 1], 1)))
    return Loop(count=rng.randint(1, 5), body=_body(rng, depth + 1), loc=AT)


def _body(rng: random.Random, depth: int = 0) -> tuple[Op, ...]:
    return tuple(_op(rng, depth) for _ in range(rng.randint(1, 4)))


def _unrolled(ops: tuple[Op, ...]) -> list[Op]:
    out: list[Op] = []
    for op in ops:
        if isinstance(op, Loop):
            for _ in range(op.count):
                out += _unrolled(op.body)
        else:
            out.append(op)
    return out


def _naive_blocked(ops: tuple[Op, ...], avail: dict[str, int], held: Held) -> Progress:
    p = Progress()
    for op in _unrolled(ops):
        if isinstance(op, Acquire) and op.port == "consume":
            key = (op.fifo, op.port)
            if p.released[key] + op.count > avail[op.fifo]:
                break
            p.acquired[key] = max(p.acquired[key], p.released[key] + op.count)
        elif isinstance(op, BarrierWait):  # the earliest value from the last wait's on
            values = held[op.barrier]
            at = next((i for i in range(p.gate[op.barrier], len(values))
                       if values[i] == op.value), None)
            if at is None:
                break
            p.gate[op.barrier] = at
            p.passed[op] += 1
        elif isinstance(op, Release):
            p.released[(op.fifo, op.port)] += op.count
        elif isinstance(op, Call):
            p.reads.update({(a.rtp, a.index) for a in op.args if isinstance(a, RtpArg)})
            p.released[(f"call {op.kernel}", "call")] += 1
    return p


def _naive_released(ops: tuple[Op, ...], targets: dict[tuple[str, str], int]) -> Progress:
    p = Progress()
    if all(t <= 0 for t in targets.values()):
        return p
    for op in _unrolled(ops):
        if isinstance(op, Acquire) and op.port == "consume":
            key = (op.fifo, op.port)
            p.acquired[key] = max(p.acquired[key], p.released[key] + op.count)
        elif isinstance(op, BarrierWait):
            p.passed[op] += 1
        elif isinstance(op, Release):
            p.released[(op.fifo, op.port)] += op.count
            if all(p.released[k] >= t for k, t in targets.items()):
                break
        elif isinstance(op, Call):
            p.reads.update({(a.rtp, a.index) for a in op.args if isinstance(a, RtpArg)})
            p.released[(f"call {op.kernel}", "call")] += 1
            if all(p.released[k] >= t for k, t in targets.items()):
                break
    return p


def test_loop_arithmetic_matches_walking_every_iteration() -> None:
    rng = random.Random(7)
    for _ in range(400):
        body = _body(rng)
        total = _naive_blocked(body, {"a": 10**9, "b": 10**9}, {"g": (1, 2, 3) * 99}).released
        avail = {f: rng.randint(0, total[(f, "consume")] + 2) for f in ("a", "b")}
        # the initial value, then the values the runtime set, in turn (repeats too)
        held = {"g": tuple(rng.choice([0, 1, 1, 2, 3]) for _ in range(rng.randint(1, 6)))}
        p = Progress()
        until_blocked(body, avail, held, p, {})
        want = _naive_blocked(body, avail, held)
        assert (+p.released, +p.reads, +p.acquired, +p.gate, +p.passed) == (
            +want.released, +want.reads, +want.acquired, +want.gate, +want.passed), (
                body, avail, held)
        keys = [k for k in total if total[k]]  # fifo releases and calls
        targets = {k: rng.randint(0, total[k]) for k in rng.sample(keys, min(len(keys), 2))}
        p = Progress()
        until_released(body, targets, p, {})
        want = _naive_released(body, targets)
        assert (+p.released, +p.reads, +p.acquired, +p.passed) == (
            +want.released, +want.reads, +want.acquired, +want.passed), (body, targets)


def _naive_next(ops: tuple[Op, ...], targets: dict[tuple[str, str], int]) -> tuple[Op | None,
                                                                                   int]:
    """Where a core stops once past ``targets``, going on through releases only: every
    iteration walked, as :meth:`Reach.next_stop` answers (the op, and a wait's pass)."""
    p = Progress()

    def met() -> bool:
        return all(p.released[k] >= t for k, t in targets.items())

    sliding = met()
    for op in _unrolled(ops):
        if sliding:
            if isinstance(op, Release):
                continue
            return op, (p.passed[op] + 1 if isinstance(op, BarrierWait) else 0)
        if isinstance(op, BarrierWait):
            p.passed[op] += 1
        elif isinstance(op, Release):
            p.released[(op.fifo, op.port)] += op.count
            sliding = met()
        elif isinstance(op, Call):
            p.released[(f"call {op.kernel}", "call")] += 1
            sliding = ("call k", "call") in targets and met()
    return None, 0


def test_the_next_stop_matches_walking_every_iteration() -> None:
    rng = random.Random(11)
    for _ in range(400):
        body = _body(rng)
        total = _naive_blocked(body, {"a": 10**9, "b": 10**9}, {"g": (1, 2, 3) * 99}).released
        keys = [k for k in total if total[k]]
        targets = {k: rng.randint(0, total[k]) for k in rng.sample(keys, min(len(keys), 2))}
        p = Progress()
        got = next_op(body, targets, p, {}, [False])
        mine = ((None, 0) if got is END else
                (got, p.passed[got] + 1) if isinstance(got, BarrierWait) else (got, 0))
        assert mine == _naive_next(body, targets), (body, targets)


def test_a_long_loop_is_walked_by_arithmetic() -> None:
    # 2**40 iterations: walking them one by one would never end
    body = (Loop(count=2**40, loc=AT, body=(
        Acquire(fifo="a", port="consume", count=2, result="x", loc=AT),
        Call(kernel="k", args=(RtpArg(rtp="r", index=0, dtype="i32", loc=AT),), loc=AT),
        Release(fifo="a", port="consume", count=1, loc=AT),
        Release(fifo="o", port="produce", count=1, loc=AT))),)
    p = Progress()
    assert until_blocked(body, {"a": 2**39}, {}, p, {})
    assert p.reads[("r", 0)] == 2**39 - 1  # the last call needs one element past them
    p = Progress()
    assert until_released(body, {("o", "produce"): 2**38}, p, {})
    assert p.reads[("r", 0)] == 2**38
    p = Progress()
    assert not until_blocked(body, {"a": 2**41}, {}, p, {})
    assert p.released == Counter({("a", "consume"): 2**40, ("o", "produce"): 2**40,
                                  ("call k", "call"): 2**40})


def test_a_long_loop_of_barrier_waits_is_matched_by_arithmetic() -> None:
    """A wait leaves the value in the lock: a wait for 1 on each of 2**40 iterations after one
    set of 1 (mlir-aie's color_threshold) passes every time; a body that waits for 1, then 2,
    passes once per 1 set before a 2."""
    call = Call(kernel="k", args=(RtpArg(rtp="r", index=0, dtype="i32", loc=AT),), loc=AT)

    def wait(v: int) -> BarrierWait:
        return BarrierWait(barrier="g", value=v, loc=AT)

    each = (Loop(count=2**40, loc=AT, body=(wait(1), call)),)
    p = Progress()
    assert not until_blocked(each, {}, {"g": (0, 1)}, p, {})
    assert (p.reads[("r", 0)], p.gate["g"]) == (2**40, 1)
    p = Progress()
    assert until_blocked(each, {}, {"g": (0,)}, p, {})  # not set yet
    assert p.reads[("r", 0)] == 0
    alternate = (Loop(count=2**40, loc=AT, body=(wait(1), call, wait(2), call)),)
    p = Progress()
    assert until_blocked(alternate, {}, {"g": (0, 1, 2, 1, 2, 2, 1)}, p, {})
    # two whole iterations (1, 2 twice), then the 1 at the end lets one more call start
    assert (p.reads[("r", 0)], p.gate["g"]) == (5, 6)


def test_threshold_rtp_bounds_at_each_write(in_root: Path) -> None:
    d = load_design(in_root / "designs" / "threshold_rtp.py").ir
    r = Reach(d)
    writes = [i for i, op in enumerate(d.runtime) if op.op == "rtp_write"]
    first, second = writes[0], writes[2]  # each pass writes both columns' slots
    for c, core in enumerate(("core[0,0]", "core[1,0]")):
        slot = (f"thr{c}", 0)
        assert r.could_run(core, first).reads[slot] == 0
        assert r.must_have_run(core, first).reads[slot] == 0
        # a pass is 8 lines per column: all filled, all drained and waited for
        assert r.could_run(core, second).reads[slot] == 8
        assert r.must_have_run(core, second).reads[slot] == 8
        assert r.could_run(core, len(d.runtime)).reads[slot] == 16
        assert r.upstream(core) == {f"in{c}"}
