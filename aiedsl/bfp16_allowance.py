"""What the comparison of an output allows for npu2's bfp16 unit.

On npu2 the library matmuls' bf16 4x8x8 mmul runs on the bfp16 unit, which quantizes A and B
(:mod:`aiedsl.kernels.bfp16`), so a design's reference made of exact bf16 products (a GEMM's
``A32 @ B32``) differs from what the cores compute by more than a bf16 sum's rounding. For an
output those kernels store, from a host ``A`` (M x K) and ``B`` (K x N) (their ``a`` and ``b``
traced back through fifos and links to the runtime's fills), each element's allowance is the
difference that quantization makes to it, for the run's own A and B: |M(Q(A), Q(B)) - M(A, B)|,
where Q is the kernels' quantization (blocks of 8 along K, in their rounding mode) and M the
product as the kernel stores it (a sum in f32, or, for a bf16 C, a sum rounded to bf16 at every
call's K step), plus one term's worth of a step in both operands
(:func:`element_allowance`). The comparison adds it to the element's tolerance
(:func:`aiedsl.compare.compare`) and names the largest in the PASS/FAIL line.

Why each element's own difference and not a bound of the format (each input off by at most one
step of its block, so a product by ``|a| step_b + |b| step_a + step_a step_b``, summed over K):
for standard-normal 512 x 512 inputs that bound is 16.7 per element on average, larger than 54%
of the elements (22.7 RMS), and would pass a result of zeros, while the quantization's own
differences stay under 1.8. Nor the largest difference, allowed to every element: a few rows
of A far larger than the rest (outlier activations) make it theirs, and with one row a
thousand times the others a reference with half of C zeroed passed. The step's worth added to
each (at most ``max|A[i]| max|B[:, j]| / 32``: a step is at most 1/64 of its block's largest
value) leaves room for an NPU whose conversion differs from the model in a detail (a tie:
:mod:`aiedsl.kernels.bfp16` says what is not known), which moves one of an element's terms by
a step. What a mantissa rounding past 127 does (saturate, or move its block to the next
exponent) moves every term of the block, common in pixel data (255 is 127.5 steps): each
element is allowed the larger of its two differences, one under each. An NPU whose conversion
differs more (another exponent, another rounding mode) fails, as it should: the model would be
wrong.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass

import numpy as np

from aiedsl.tolerances import Allowance
from aiedsl.dtypes import dtype as lookup_dtype
from aiedsl.ir.core_ops import Acquire, BufferArg, Call
from aiedsl.ir.dataflow import Dataflow
from aiedsl.ir.design import Design
from aiedsl.ir.kernel import Kernel
from aiedsl.ir.program import walk
from aiedsl.ir.runtime import Transfer
from aiedsl.kernels.bfp16 import OVERFLOWS, to_bfp16
from aiedsl.kernels.cascade import CASCADE_ROUNDING, matmul_cascade_bfp16_ref
from aiedsl.kernels.matmul import matmul_bfp16_ref, mm_rounding
from aiedsl.operand_largest import row_col_largest

_ROWS = 1 << 20
"""Elements of the product computed at a time (rows of A times N): float32 copies of a slice."""


@dataclass(frozen=True)
class Bfp16Product:
    """The product a design's bfp16 kernels store into an output: ``C = A @ B`` of host
    tensors ``a`` and ``b``, quantized with ``rounding``; a bf16 C rounded every ``step`` of K
    (None: an f32 C, summed without rounding)."""

    a: str
    b: str
    rounding: str
    step: int | None
    kernels: tuple[str, ...]
    """The bfp16 kernels' symbols."""


def bfp16_operands(k: Kernel) -> tuple[int, int, int | None, str] | None:
    """For a library kernel whose bf16 mmul runs on npu2's bfp16 unit (its reference models
    it): the positions of its A, B and stored C arguments (None: it puts its sums on the
    cascade) and the rounding mode its quantization runs in; None for any other kernel."""
    if not k.shipped:
        return None
    names = [a.name for a in k.args]
    if k.reference == reference_name(matmul_bfp16_ref):
        c = names.index("c")
        dt = np.dtype(lookup_dtype(k.args[c].dtype).numpy)
        return names.index("a"), names.index("b"), c, mm_rounding(dt)
    if k.reference == reference_name(matmul_cascade_bfp16_ref):
        return (names.index("a"), names.index("b"), names.index("c") if "c" in names else None,
                CASCADE_ROUNDING)
    return None


def reference_name(fn: Callable[..., None]) -> str:
    """How a kernel's IR names reference ``fn`` (:attr:`aiedsl.ir.Kernel.reference`)."""
    return f"{fn.__module__}:{fn.__qualname__}"


def _fills(d: Design, flow: Dataflow, fifo: str) -> set[str] | None:
    """The host tensors whose fills reach ``fifo`` through links only; None when another
    core's kernel made what it holds."""
    out: set[str] = set()
    todo, seen = [fifo], set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        f = flow.fifos[name]
        if f.producer.kind == "shim":
            out |= {t.tensor for t in d.runtime
                    if isinstance(t, Transfer) and t.op == "fill" and t.fifo == name}
        elif name in flow.link_of_dst:
            todo += flow.link_of_dst[name].srcs
        else:
            return None
    return out


def _drains(d: Design, flow: Dataflow, fifo: str) -> set[str]:
    """The host tensors the runtime drains what ``fifo`` holds into, through links only."""
    out: set[str] = set()
    todo, seen = [fifo], set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        for end in flow.fifos[name].consumers:
            if end.kind == "shim":
                out |= {t.tensor for t in d.runtime
                        if isinstance(t, Transfer) and t.op == "drain" and t.fifo == name}
        if name in flow.link_of_src:
            todo += flow.link_of_src[name].dsts
    return out


def bfp16_product(d: Design, tensor: str,
                  operands: Callable[[Kernel], tuple[int, int, int | None, str] | None]
                  = bfp16_operands) -> tuple[tuple[str, ...], Bfp16Product | None]:
    """The bfp16 kernels (:func:`bfp16_operands`, or the kernels ``operands`` finds the A, B
    and C of) whose results reach output ``tensor`` (through fifos, links, other cores and
    cascades), and
    the product they store into it when it can be told: every one's A from one host tensor,
    its B from another, one rounding mode (and, for a bf16 C, one K step), and the C of at
    least one drained into ``tensor`` through fifos and links alone. ``((), None)`` when no
    such kernel reaches it; ``(kernels, None)`` when some do but the product cannot be told
    (an operand another core made, a core-local one, several tensors)."""
    flow = Dataflow(d)
    kernels = {k.symbol: k for k in d.kernels}
    found: list[str] = []
    a_from: set[str] = set()
    b_from: set[str] = set()
    modes: set[str] = set()
    steps: set[int | None] = set()
    stored = False
    traced = True
    reaching = {c.name for c in d.cores if tensor in flow.downstream(c.name)}
    while True:  # and the cores whose partial sums reach those by the cascade
        more = {src for src, dst in flow.cascade_to.items() if dst in reaching} - reaching
        if not more:
            break
        reaching |= more
    for core in d.cores:
        if core.name not in reaching:
            continue
        fifo_of = {op.result: op.fifo for op, _ in walk(core.body) if isinstance(op, Acquire)}
        for op, _ in walk(core.body):
            if not isinstance(op, Call):
                continue
            k = kernels[op.kernel]
            how = operands(k)
            if how is None:
                continue
            if k.symbol not in found:
                found.append(k.symbol)
            ia, ib, ic, mode = how
            modes.add(mode)
            out_dt = k.args[ic].dtype if ic is not None else "f32"
            steps.add(int(k.params["k"]) if out_dt == "bf16" else None)
            for i, into in ((ia, a_from), (ib, b_from)):
                arg = op.args[i]
                fifo = fifo_of.get(arg.value) if isinstance(arg, BufferArg) else None
                fills = _fills(d, flow, fifo) if fifo is not None else None
                if fills is None:
                    traced = False
                else:
                    into |= fills
            if ic is not None:
                arg = op.args[ic]
                fifo = fifo_of.get(arg.value) if isinstance(arg, BufferArg) else None
                stored |= fifo is not None and tensor in _drains(d, flow, fifo)
    if not found:
        return (), None
    if not (traced and stored and len(a_from) == len(b_from) == len(modes) == len(steps) == 1):
        return tuple(found), None
    return tuple(found), Bfp16Product(a_from.pop(), b_from.pop(), modes.pop(), steps.pop(),
                                      tuple(found))


def product_difference(a: np.ndarray, b: np.ndarray, rounding: str,
                       step: int | None = None) -> float:
    """The largest |M(Q(A), Q(B)) - M(A, B)| over the product's elements (see the module's
    docstring): ``step`` None for an f32 C, the K step of a bf16 C's roundings otherwise.
    Non-finite elements (an input's NaN or infinity) are left out."""
    worst = 0.0
    for diff in _differences(a, b, rounding, step):
        if diff.size:
            worst = max(worst, float(diff.max()))
    return worst


def element_allowance(a: np.ndarray, b: np.ndarray, rounding: str,
                      step: int | None = None) -> np.ndarray:
    """What each element of the product may be off by (float32, M x N): its own difference
    |M(Q(A), Q(B)) - M(A, B)|, plus one term's worth of a step in both operands
    (``max|A[i]| * max|B[:, j]| / 32``: a step is at most 1/64 of its block's largest value),
    the room for an NPU whose conversion differs from the model in a detail. Non-finite
    elements get 0 (the comparison judges them apart).

    >>> a = np.ones((1, 8), np.float32); a[0, 1] += 2.0 ** -7
    >>> element_allowance(a, np.ones((8, 1), np.float32), "floor").tolist()
    [[0.039306640625]]
    """
    A = np.asarray(a, dtype=np.float32)
    B = np.asarray(b, dtype=np.float32)
    rows, cols = row_col_largest(A, B)
    out = np.empty((A.shape[0], B.shape[1]), np.float32)
    size = max(1, _ROWS // max(B.shape[1], 1))
    for lo, diff in zip(range(0, A.shape[0], size), _differences(A, B, rounding, step,
                                                                 keep_shape=True)):
        np.multiply.outer(rows[lo:lo + size] / 32, cols, out=out[lo:lo + size])
        out[lo:lo + size] += diff
    return out


def _differences(a: np.ndarray, b: np.ndarray, rounding: str, step: int | None,
                 keep_shape: bool = False) -> Iterator[np.ndarray]:
    """|M(Q(A), Q(B)) - M(A, B)|, a slice of rows of the product at a time: its finite
    elements, or with ``keep_shape`` the slice whole, non-finite elements 0."""
    A = np.asarray(a, dtype=np.float32)
    B = np.asarray(b, dtype=np.float32)
    # under each thing a mantissa rounding past 127 may do (not known of the NPU: the larger
    # difference of the two is allowed; they differ only where a block maximum rounds up)
    models = [(to_bfp16(A, axis=1, rounding=rounding, overflow=o),
               to_bfp16(B, axis=0, rounding=rounding, overflow=o)) for o in OVERFLOWS]
    if len(models) > 1 and all(np.array_equal(q, r, equal_nan=True)
                               for q, r in zip(models[0], models[1])):
        models = models[:1]
    rows = max(1, _ROWS // max(B.shape[1], 1))
    with np.errstate(invalid="ignore", over="ignore"):
        for lo in range(0, A.shape[0], rows):
            diff = None
            for qa, qb in models:
                if step is None:  # the difference itself, without the products' cancellation
                    one = qa[lo:lo + rows] @ (qb - B) + (qa[lo:lo + rows] - A[lo:lo + rows]) @ B
                else:
                    one = (_rounded_sum(qa[lo:lo + rows], qb, step)
                           - _rounded_sum(A[lo:lo + rows], B, step))
                one = np.abs(one)
                diff = one if diff is None else np.fmax(diff, one)
            assert diff is not None
            finite = np.isfinite(diff)
            yield np.where(finite, diff, np.float32(0)) if keep_shape else diff[finite]


def _rounded_sum(a: np.ndarray, b: np.ndarray, step: int) -> np.ndarray:
    """a @ b summed ``step`` of K at a time into a bf16 C, rounded to nearest even after each
    step, as a bf16 matmul's calls store it."""
    bf16 = np.dtype(lookup_dtype("bf16").numpy)
    acc = np.zeros((a.shape[0], b.shape[1]), np.float32)
    for j in range(0, a.shape[1], step):
        acc = (acc + a[:, j:j + step] @ b[j:j + step]).astype(bf16).astype(np.float32)
    return acc


def bfp16_allowance(d: Design, tensor: str, inputs: Mapping[str, np.ndarray]
                    ) -> tuple[tuple[str, ...], Allowance | None]:
    """The bfp16 kernels that reach output ``tensor`` and, when the product they store can be
    told (:func:`bfp16_product`) and the run's inputs hold its A (M x K) and B (K x N) for a
    ``tensor`` of M x N, the allowance its comparison adds (:func:`product_difference`)."""
    kernels, product = bfp16_product(d, tensor)
    if product is None or product.a not in inputs or product.b not in inputs:
        return kernels, None
    a, b = inputs[product.a], inputs[product.b]
    shape = d.tensor(tensor).type.shape
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0] or len(shape) != 2 \
            or (a.shape[0], b.shape[1]) != tuple(shape):
        return kernels, None
    elements = element_allowance(a, b, product.rounding, product.step)
    return kernels, Allowance(float(elements.max(initial=0.0)),
                              f"the bfp16 quantization of '{product.a}' and '{product.b}' "
                              f"(npu2's bf16 mmul, {product.rounding})", elements)
