"""Facts read off core programs: what each core acquires and releases per run."""

from __future__ import annotations

from collections import Counter
from typing import Iterator

from aiedsl.dtypes import dtype as lookup_dtype
from aiedsl.ir.nodes import Acquire, Call, Core, Design, Loop, Op, Release


def walk(body: tuple[Op, ...], mult: int = 1) -> Iterator[tuple[Op, int]]:
    """Every op in ``body`` with how many times it runs per invocation, loops entered."""
    for op in body:
        yield op, mult
        if isinstance(op, Loop):
            yield from walk(op.body, mult * op.count)


def released(core: Core) -> Counter[tuple[str, str]]:
    """Elements released per run, keyed by (fifo, port)."""
    out: Counter[tuple[str, str]] = Counter()
    for op, mult in walk(core.body):
        if isinstance(op, Release):
            out[(op.fifo, op.port)] += op.count * mult
    return out


def max_acquire(core: Core) -> Counter[tuple[str, str]]:
    """Largest single acquire, keyed by (fifo, port)."""
    out: Counter[tuple[str, str]] = Counter()
    for op, _ in walk(core.body):
        if isinstance(op, Acquire):
            out[(op.fifo, op.port)] = max(out[(op.fifo, op.port)], op.count)
    return out


def acquires(core: Core) -> dict[str, Acquire]:
    """Acquires by result name."""
    return {op.result: op for op, _ in walk(core.body) if isinstance(op, Acquire)}


def calls(core: Core) -> list[Call]:
    """Every kernel call, in program order."""
    return [op for op, _ in walk(core.body) if isinstance(op, Call)]


def calls_per_run(d: Design) -> int:
    """Kernel calls one invocation of design ``d`` makes, over all its cores.

    >>> from aiedsl.loader import load_design                      # doctest: +SKIP
    >>> calls_per_run(load_design("designs/gemm_bf16.py").ir)  # 8^3 matmuls, 64 zeroings
    576
    """
    return sum(mult for c in d.cores for op, mult in walk(c.body) if isinstance(op, Call))


def ops_per_run(d: Design) -> int:
    """Arithmetic operations one invocation of design ``d`` performs (kernels' declared ops)."""
    ops = {k.symbol: k.ops for k in d.kernels}
    return sum(ops[op.kernel] * mult for c in d.cores for op, mult in walk(c.body)
               if isinstance(op, Call))


def rounds_twice(d: Design) -> bool:
    """Can an output element of ``d`` carry more than one float rounding: does a kernel sum
    into what it writes (:attr:`~aiedsl.ir.Kernel.sums`), or does one float kernel's result
    reach another float kernel (in the same core, or through fifos, links and other cores)?
    Then an element near zero may be off by a rounding of a larger value (a bf16 product
    rounded, then cancelled by an addition), and outputs are compared with an absolute
    tolerance besides the relative one (:func:`aiedsl.compare.compare`)."""
    kernels = {k.symbol: k for k in d.kernels}
    if any(k.sums for k in kernels.values()):
        return True
    made: set[str] = set()  # fifos a float kernel writes
    read: set[str] = set()  # fifos a float kernel reads
    for c in d.cores:
        fifo_of = {op.result: op.fifo for op, _ in walk(c.body) if isinstance(op, Acquire)}
        written_here: set[str] = set()
        for op, _ in walk(c.body):
            if not isinstance(op, Call):
                continue
            k = kernels[op.kernel]
            for a, arg in zip(k.args, op.args):
                if a.kind != "buffer" or not lookup_dtype(a.dtype).is_float:
                    continue
                name = getattr(arg, "value", None)
                if name is None:
                    continue
                if a.access == "in":
                    if name in written_here:
                        return True  # a result read back by a later call of the same core
                    read.add(fifo_of[name])
                else:
                    written_here.add(name)
                    made.add(fifo_of[name])
    downstream = {src: set(link.dsts) for link in d.links for src in link.srcs}
    todo, seen = list(made), set(made)
    while todo:
        for nxt in downstream.get(todo.pop(), ()):
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return bool(seen & read)
