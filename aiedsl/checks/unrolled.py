"""Loops that stay loops: a core program holds no long run of identical copies of one block.

A core function's ``for _ in loop(n):`` is traced once and becomes one ``scf.for``; Python's
``for _ in range(n):`` runs its body ``n`` times while tracing, so the core's program (and its
``aie.mlir``, and the ELF) holds ``n`` copies. When the copies are identical (the same ops, at
the same lines, on the same fifos, kernels and arguments) the loop was meant to be a
``loop(n)``: a few hundred copies overflow the core's 16 KB of program memory, which only
aiecc or the load would say, long after ``check``.

Copies are compared as the design wrote them: an op is its kind, its lines and what it names,
an acquire's result by the acquire that made it (each traced acquire names its result anew), a
loop by its count and body. An unroll that passes each copy something of its own (``for i in
range(4): k(w[i], ...)``, a channel index, a scalar) makes copies that differ, and stays
allowed.
"""

from __future__ import annotations

from collections.abc import Hashable

from aiedsl.errors import DesignError, counted
from aiedsl.ir.core_ops import Acquire, BarrierWait, BufferArg, Call, Loop, Op, Release
from aiedsl.ir.cores import Core
from aiedsl.ir.design import Design
from aiedsl.ir.loc import Loc
from aiedsl.ir.program import walk
from aiedsl.targets import TargetModel

MIN_COPIES = 16
"""Identical copies in a row that make a run an unrolled loop. Identical copies gain nothing
over ``loop(n)`` (a loop costs a counter and a branch per iteration, each copy its whole body
in program memory), but a few are harmless and may be written on purpose: a body unrolled twice
or four times (``for _ in range(2)``), a helper called a few times in a row. Sixteen sits well
above those, and far below the copies that overflow the program memory (the 720 rows of a 720p
image, one call each). The copies of an index-dependent unroll (``for i in range(4): k(w[i],
...)``, a channel index ``c[i]``, a scalar ``i``) differ and are never counted. Measured when
the rule was added: no core program of ``designs/``, ``bench/calibration/``, the test suite's
designs, ``tests/bad_inputs/`` or 2,000 fuzzed designs holds even two identical copies in a
row (``tests/test_unrolled.py`` keeps that true of the shipped designs)."""

MAX_MULTIPLICITY = 8
"""How many times one op may occur within the repeated block for the search below to find the
run: it looks for a period among the distances from each op to its next few occurrences. A
block each of whose ops occurs more than eight times in it would take hand-written repetition
inside a Python loop; such a run goes unreported rather than making the search slower."""


def check_unrolled_loops(d: Design, target: TargetModel) -> None:
    """No core program (nor any loop body in it) holds :data:`MIN_COPIES` or more identical
    copies of one block in a row. The search takes time about linear in the program's length:
    each op is compared with its next few equal ops, and a run is walked once per period."""
    ids: dict[Hashable, int] = {}
    memory = target.program_memory
    for core in d.cores:
        _body(core, core.body, ids, {}, memory)


def _body(core: Core, ops: tuple[Op, ...], ids: dict[Hashable, int],
          made: dict[str, Hashable], memory: int) -> int:
    """The id of the block ``ops``, after checking it and every loop body inside it."""
    seq = [_id(core, op, ids, made, memory) for op in ops]
    run = _first_run(seq)
    if run is not None:
        start, period, copies = run
        block = ops[start:start + period]
        inner = [op for op, _ in walk(block)]  # a copy that is a loop() holds its body's ops
        lines = sorted({op.loc.line for op in inner if op.loc.file == block[0].loc.file})
        span = (f"line {lines[0]}" if len(lines) == 1 else
                f"lines {', '.join(str(n) for n in lines[:-1])} and {lines[-1]}")
        raise DesignError(
            "unrolled loop", f"{core.name}'s program holds {copies} identical copies in a row "
            f"of the ops traced at {span} ({counted(len(inner), 'op')} each): a Python loop (for "
            "... "
            "in range(...)) ran its body once per iteration while the core function was traced",
            loc=block[0].loc,
            limit=f"fewer than {MIN_COPIES} identical copies in a row: loops stay loops "
            f"(scf.for), and each copy takes room in the core's {memory // 1024} KB of program "
            "memory", found=f"{copies} copies, {copies * len(inner)} ops",
            fix=f"write `for _ in loop({copies}):` instead of the Python loop: it keeps one copy, "
            "as a scf.for loop (range() is for unrolling what differs from one iteration to the "
            "next, such as w[i])")
    return ids.setdefault(tuple(seq), len(ids))


def _id(core: Core, op: Op, ids: dict[Hashable, int], made: dict[str, Hashable],
        memory: int) -> int:
    """A number per distinct op, the same for the copies of one op in an unrolled loop."""
    key: Hashable
    if isinstance(op, Acquire):
        key = ("acquire", op.fifo, op.port, op.count, _at(op.loc))
        made[op.result] = key
    elif isinstance(op, Release):
        key = ("release", op.fifo, op.port, op.count, _at(op.loc))
    elif isinstance(op, Call):
        key = ("call", op.kernel, _at(op.loc), tuple(
            ("buffer", made.get(a.value, a.value), a.index) if isinstance(a, BufferArg) else a
            for a in op.args))
    elif isinstance(op, Loop):
        key = ("loop", op.count, _at(op.loc), _body(core, op.body, ids, made, memory))
    elif isinstance(op, BarrierWait):
        key = ("wait", op.barrier, op.value, _at(op.loc))
    else:  # pragma: no cover - every op kind is listed above
        key = ("op", id(op))
    return ids.setdefault(key, len(ids))


def _at(loc: Loc) -> tuple[str, int]:
    return loc.file, loc.line


def _first_run(seq: list[int], least: int = MIN_COPIES) -> tuple[int, int, int] | None:
    """The first run of at least ``least`` copies of one block in ``seq``: (its start,
    the block's length, the copies), or None.

    A run of copies of a block of length p is a stretch where each op equals the one p after
    it, and its first op recurs p, 2p, ... later; p is the distance from that op to its m-th
    next occurrence, m being how often it occurs in the block. So each position tries the
    distances to its next :data:`MAX_MULTIPLICITY` occurrences, nearest first, and walks the
    stretch of equal ops at that distance around it; ``reach`` keeps the stretch walked per
    distance, so no stretch is walked twice."""
    n = len(seq)
    if n < least:
        return None
    where: dict[int, list[int]] = {}
    rank = []
    for i, x in enumerate(seq):
        at = where.setdefault(x, [])
        rank.append(len(at))
        at.append(i)
    reach: dict[int, int] = {}
    for i, x in enumerate(seq):
        at = where[x]
        for nxt in at[rank[i] + 1:rank[i] + 1 + MAX_MULTIPLICITY]:
            p = nxt - i
            if i + (least - 1) * p >= n:
                break  # the next occurrences are further still
            if i < reach.get(p, 0):
                continue  # inside a stretch walked already
            start, end = i, i  # seq[j] == seq[j + p] for start <= j < end
            while end + p < n and seq[end] == seq[end + p]:
                end += 1
            while start > 0 and seq[start - 1] == seq[start - 1 + p]:
                start -= 1
            reach[p] = end
            copies = (end - start + p) // p
            if copies >= least:
                return start, p, copies
    return None

