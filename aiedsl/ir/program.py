"""Facts read off core programs: what each core acquires and releases per run."""

from __future__ import annotations

from collections import Counter
from typing import Any, Iterator, Literal, TypeVar

from aiedsl.dtypes import dtype as lookup_dtype
from aiedsl.ir.core_ops import (Acquire, BarrierWait, BufferArg, Call, LocalArg, Loop, Op,
                                Release)
from aiedsl.ir.cores import Core
from aiedsl.ir.design import Design
from aiedsl.ir.kernel import Kernel
from aiedsl.ir.runtime import Transfer


_Kind = TypeVar("_Kind", Acquire, Call)


def walk(body: tuple[Op, ...], mult: int = 1) -> Iterator[tuple[Op, int]]:
    """Every op in ``body`` with how many times it runs per invocation, loops entered."""
    # one generator with a stack of the loops entered, not one per loop (every check walks
    # every core's program: each nested generator passed each op on)
    stack = [(iter(body), mult)]
    while stack:
        ops, times = stack[-1]
        for op in ops:
            yield op, times
            if isinstance(op, Loop):
                stack.append((iter(op.body), times * op.count))
                break
        else:
            stack.pop()


def stopping_core(d: Design) -> Core | None:
    """The first core that runs its program once (``forever=False``) and waits on something in
    it (an acquire, a barrier wait, a cascade): a second run of the design would wait for it,
    stopped, so the design runs once per load. None when there is none (a core run once that
    waits on nothing holds no later run up)."""
    cascading = {k.symbol for k in d.kernels
                 if k.cascade_in is not None or k.cascade_out is not None}
    for core in d.cores:
        if not core.forever and any(
                isinstance(op, (Acquire, BarrierWait))
                or (isinstance(op, Call) and op.kernel in cascading)
                for op, _ in walk(core.body)):
            return core
    return None


def _ops(body: tuple[Op, ...], kind: type[_Kind], out: list[_Kind]) -> list[_Kind]:
    """``out`` with every op of ``kind`` in ``body`` added, in :func:`walk`'s order."""
    for op in body:
        if isinstance(op, kind):
            out.append(op)
        if isinstance(op, Loop):
            _ops(op.body, kind, out)
    return out


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
    return {op.result: op for op in _ops(core.body, Acquire, [])}


def calls(core: Core) -> list[Call]:
    """Every kernel call, in program order."""
    return _ops(core.body, Call, [])


def calls_in_loops(core: Core) -> list[tuple[Call, tuple[int, ...]]]:
    """Every kernel call, in program order, with the counts of the loops around it, outermost
    first (what an :class:`~aiedsl.ir.core_ops.IndexArg` of the call ranges over)."""
    out: list[tuple[Call, tuple[int, ...]]] = []

    def visit(body: tuple[Op, ...], counts: tuple[int, ...]) -> None:
        for op in body:
            if isinstance(op, Call):
                out.append((op, counts))
            elif isinstance(op, Loop):
                visit(op.body, counts + (op.count,))

    visit(core.body, ())
    return out


def calls_per_run(d: Design) -> int:
    """Kernel calls one invocation of design ``d`` makes, over all its cores.

    >>> from aiedsl.loader import load_design
    >>> calls_per_run(load_design("designs/gemm_bf16.py").ir)  # 8^3 matmuls, 64 zeroings
    576
    """
    return sum(mult for c in d.cores for op, mult in walk(c.body) if isinstance(op, Call))


def ops_per_run(d: Design) -> int:
    """Arithmetic operations one invocation of design ``d`` performs (kernels' declared ops,
    each call its own for a kernel counting them per call)."""
    kernels = {k.symbol: k for k in d.kernels}
    return sum(kernels[op.kernel].call_ops(op.args) * mult for c in d.cores
               for op, mult in walk(c.body) if isinstance(op, Call))


Rounding = Literal["once", "chain", "sum"]
"""How many roundings an output element may carry: one (a single element-wise kernel, or none),
a chain of float kernels each rounding its result, or a kernel that sums into what it writes."""

_LEVELS = ("none", "once", "chain", "sum")


def rounding(d: Design, tensor: str) -> Rounding:
    """How many roundings an element of output ``tensor`` may carry, following its drains back
    through links and cores to the kernels that wrote it.

    ``"sum"``: a kernel on the way sums into what it writes (:attr:`~aiedsl.ir.Kernel.sums`);
    ``"chain"``: a float kernel on the way read what another float kernel wrote (in the same
    core, or through fifos, links and cores), or rounds within a call
    (:attr:`~aiedsl.ir.Kernel.chained`); ``"once"`` otherwise. :func:`aiedsl.compare.compare`
    allows a chain or a sum an absolute error besides the relative one.

    >>> from aiedsl.loader import load_design
    >>> rounding(load_design("designs/gemm_bf16.py").ir, "C")
    'sum'
    """
    kernels, link_of, writes = _writes(d)
    memo: dict[str, str] = {}

    def level(name: str) -> str:
        """The most roundings an element of fifo ``name`` may carry ("none": straight from
        host memory)."""
        if name in memo:
            return memo[name]
        memo[name] = "none"  # a cycle adds nothing new
        got = [level(s) for s in link_of[name].srcs] if name in link_of else []
        for fifo_of, made, call in writes.get(name, []):
            k = kernels[call.kernel]
            if k.sums:
                got.append("sum")
            elif _buffers(k, call, out=True):
                ins = _buffers(k, call, out=False)
                before = max((level(fifo_of[v]) for v in ins), key=_LEVELS.index,
                             default="none")
                if k.exact:  # a copy or selection passes on what it was given
                    got.append(before if before != "none" else
                               "once" if set(ins) & made else "none")
                    continue
                again = before != "none" or bool(set(ins) & made) or k.chained
                got.append("sum" if before == "sum" else "chain" if again else "once")
        memo[name] = max(got, key=_LEVELS.index, default="none")
        return memo[name]

    worst = max((level(f) for f in _drained(d, tensor)), key=_LEVELS.index, default="none")
    return "once" if worst == "none" else worst  # type: ignore[return-value]


def writing_kernels(d: Design, tensor: str) -> set[str]:
    """The kernels whose results reach output ``tensor``: those that write its drains' fifos,
    and, back through links and the buffers they read, those that wrote what they read (a
    sibling call of the same cores that writes something else is not among them).

    >>> from aiedsl.loader import load_design
    >>> sorted(writing_kernels(load_design("designs/gemm_bf16.py").ir, "C"))
    ['matmul_bf16_f32_64x64x64_4x8x4', 'zero_f32_4096']
    """
    kernels, link_of, writes = _writes(d)
    seen: set[str] = set()
    found: set[str] = set()

    def visit(name: str) -> None:
        if name in seen:
            return
        seen.add(name)
        for src in link_of[name].srcs if name in link_of else []:
            visit(src)
        for fifo_of, _, call in writes.get(name, []):
            found.add(call.kernel)
            for v in _buffers(kernels[call.kernel], call, out=False, floats=False):
                visit(fifo_of[v])

    for f in _drained(d, tensor):
        visit(f)
    return found


def _drained(d: Design, tensor: str) -> list[str]:
    """The fifos the runtime drains into ``tensor``."""
    return [t.fifo for t in d.runtime
            if isinstance(t, Transfer) and t.op == "drain" and t.tensor == tensor]


def _writes(d: Design) -> tuple[dict[str, Kernel], dict[str, Any],
                                dict[str, list[tuple[dict[str, str], set[str], Call]]]]:
    """What :func:`rounding` and :func:`writing_kernels` follow: the kernels by symbol, the link
    feeding each fifo, and per fifo (a core-local buffer as a fifo of its core) the calls that
    write it, each with its core's acquire results by fifo and the buffers a rounding kernel
    of that core writes."""
    kernels = {k.symbol: k for k in d.kernels}
    link_of = {n: link for link in d.links for n in link.dsts}
    writes: dict[str, list[tuple[dict[str, str], set[str], Call]]] = {}
    for c in d.cores:
        fifo_of = {op.result: op.fifo for op, _ in walk(c.body) if isinstance(op, Acquire)}
        # a core's copy of a local is followed as a fifo of its own: a running sum kept there
        # and copied out is a sum
        fifo_of.update({_LOCAL + b.name: f"{_LOCAL}{b.name}@{c.name}" for b in d.locals
                        if c.name in b.cores})
        made = {v for op, _ in walk(c.body)  # buffers a rounding kernel of this core writes
                if isinstance(op, Call) and not kernels[op.kernel].exact
                for v in _buffers(kernels[op.kernel], op, out=True)}
        for op, _ in walk(c.body):
            if isinstance(op, Call):
                for v in _buffers(kernels[op.kernel], op, out=True, floats=False):
                    writes.setdefault(fifo_of[v], []).append((fifo_of, made, op))
    return kernels, link_of, writes


_LOCAL = "local:"
"""How :func:`rounding` names a core-local buffer among acquire results (no result has a
colon)."""



def _buffers(k: Kernel, call: Call, *, out: bool, floats: bool = True) -> list[str]:
    """The acquired buffers and locals ``call`` writes (``out``) or only reads, as floats
    unless ``floats`` is False (a local as ``local:<name>``)."""
    return [arg.value if isinstance(arg, BufferArg) else _LOCAL + arg.local
            for a, arg in zip(k.args, call.args)
            if isinstance(arg, (BufferArg, LocalArg)) and (a.access != "in") == out
            and (not floats or lookup_dtype(a.dtype).is_float)]
