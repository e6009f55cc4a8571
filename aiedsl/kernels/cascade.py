"""The stages of a K-split bf16 GEMM whose partial sums pass by the accumulator cascade: the
first core puts A @ B, middle ones get, add and put, the last gets and stores C.

The reference computes on the blocked buffers exactly as ``kernels_cpp/mm_cascade.cc`` does (on
npu2, whose bf16 4x8x8 mmul runs on the bfp16 unit, :func:`matmul_cascade_bfp16_ref`: A and B
quantized as :mod:`aiedsl.kernels.bfp16` says, rounded to nearest even, which mm_cascade.cc sets
for the call as mm.cc does); the cost is the matmul's
(:func:`~aiedsl.kernels.matmul.matmul_step` per K step), the patch's cascade words in place of
its C loads or stores (:func:`cascade_cycles`).

Example
-------
::

    from aiedsl.kernels import matmul_cascade
    first = matmul_cascade(64, 64, 64, "put")        # matmul_cascade_put_bf16_f32_...
"""

from __future__ import annotations

import numpy as np

from aiedsl.dtypes import bf16
from aiedsl.errors import DesignError
from aiedsl.ir.types import TensorType
from aiedsl.kernels.args import buffer
from aiedsl.kernels.base import Kernel, declare
from aiedsl.kernels.bfp16 import bfp16_accumulate
from aiedsl.kernels.layout import block, unblock
from aiedsl.kernels.matmul import MATMUL_PATCH, matmul_step
from aiedsl.kernels.params import kernel_target, positive_size
from aiedsl.source_loc import caller_loc
from aiedsl.targets import TargetModel

CASCADE_ROLES = ("put", "put_get", "get")
"""The stages of a cascade chain: the first core puts, middle ones get and put, the last gets."""


def _patch_blocks(m: int, n: int, r: int, t: int) -> np.ndarray:
    """Indices of C's blocks (blocked layout) in the order the cascade carries them: 2x2
    patches row by row, each patch's blocks (0,0), (0,1), (1,0), (1,1)."""
    mb, nb = m // r, n // t
    return np.array([(bm + i) * nb + bn + j for bm in range(0, mb, 2)
                     for bn in range(0, nb, 2) for i in (0, 1) for j in (0, 1)])


def matmul_cascade_ref(a: np.ndarray, b: np.ndarray, *rest: np.ndarray, m: int, k: int, n: int,
                       r: int, s: int, t: int, role: str, **_: object) -> None:
    """One stage of the cascade GEMM, as mm_cascade.cc computes it: the partial sum so far (the
    cascade input, in patch order) plus A @ B in f32, put on (patch order) or stored in C."""
    A = unblock(a, m, k, r, s).astype(np.float32)
    B = unblock(b, k, n, s, t).astype(np.float32)
    prod = block(A @ B, r, t).reshape(-1, r * t)
    order = _patch_blocks(m, n, r, t)
    if role == "put":
        (cout,) = rest
        cout.reshape(-1, r * t)[...] = prod[order]
        return
    if role == "put_get":
        cin, cout = rest
        acc = cin.reshape(-1, r * t)[np.argsort(order)] + prod
        cout.reshape(-1, r * t)[...] = acc[order]
        return
    c, cin = rest
    c.reshape(-1, r * t)[...] = cin.reshape(-1, r * t)[np.argsort(order)] + prod


CASCADE_ROUNDING = "conv_even"
"""The rounding mode mm_cascade.cc's calls run in on npu2, which the bfp16 conversion of A and B
rounds by: conv_even, set for the call (as mm.cc sets it)."""


def matmul_cascade_bfp16_ref(a: np.ndarray, b: np.ndarray, *rest: np.ndarray, m: int, k: int,
                             n: int, r: int, s: int, t: int, role: str, **_: object) -> None:
    """One stage of the cascade GEMM on npu2, as mm_cascade.cc computes it there: the partial
    sum so far (zero for the first stage) with A @ B added on the bfp16 unit
    (:func:`~aiedsl.kernels.bfp16.bfp16_accumulate`, rounding :data:`CASCADE_ROUNDING`), put on
    (patch order) or stored in C."""
    A = unblock(a, m, k, r, s).astype(np.float32)
    B = unblock(b, k, n, s, t).astype(np.float32)
    order = _patch_blocks(m, n, r, t)
    if role == "put":
        acc = np.zeros((m, n), np.float32)
    else:
        got = rest[0] if role == "put_get" else rest[1]
        acc = unblock(got.reshape(-1, r * t)[np.argsort(order)].reshape(-1), m, n, r, t
                      ).astype(np.float32)
    bfp16_accumulate(acc, A, B, CASCADE_ROUNDING)
    blocks = block(acc, r, t).reshape(-1, r * t)
    if role == "get":
        rest[0].reshape(-1, r * t)[...] = blocks
    else:
        rest[-1].reshape(-1, r * t)[...] = blocks[order]


NPU1_PATCH_WORDS = 4
"""Cascade words of a 2x2 patch on npu1 (four 4x4 f32 blocks, a word each), which the npu1
calibration of :data:`~aiedsl.kernels.matmul.MATMUL_PATCH` counts in place of the patch's C
loads or stores (kernels_cpp/mm_cascade.cc)."""


def patch_words(r: int, t: int, target: TargetModel) -> int:
    """Cascade words of one 2x2 patch of ``r x t`` f32 blocks on ``target``: 4 on npu1 (a 4x4
    block is one 512-bit word), 8 on npu2 (a 4x8 block is two)."""
    return 4 * r * t * 32 // target.cascade_bits


def cascade_patch(r: int, t: int, target: TargetModel) -> int:
    """Cycles per patch outside the K loop: the matmul's (calibrated on npu1, its four cascade
    words moved one a cycle in place of the C block loads or stores) plus a cycle for each
    further word a patch moves at the target's cascade rate (npu2's eight words: 4 more)."""
    extra = patch_words(r, t, target) - NPU1_PATCH_WORDS
    return MATMUL_PATCH["bf16"] + -(-extra // target.cascade_words_per_cycle)


def cascade_cycles(m: int, k: int, n: int, r: int, s: int, t: int, target: TargetModel) -> int:
    """Cycles per call: per 2x2 patch of C, K/s steps of the matmul's (4 ``r x s x t`` mmuls
    at the core's bf16 MAC rate, or the A and B block loads if longer) plus
    :func:`cascade_patch`; 20 per call."""
    macs = target.macs_per_cycle["bf16_f32"]
    step = matmul_step(r, s, t, bf16, target.core_load_bytes_per_cycle, macs)
    return (m // (2 * r)) * (n // (2 * t)) * (step * (k // s) + cascade_patch(r, t, target)) + 20


def matmul_cascade(m: int, k: int, n: int, role: str, *, device: str | None = None) -> Kernel:
    """One stage of a K-split bf16 GEMM whose partial sums pass by the accumulator cascade.

    ``role`` is ``"put"`` (the chain's first core: ``a, b``, puts A @ B), ``"put_get"`` (a
    middle core: gets, adds A @ B, puts) or ``"get"`` (the last core: ``a, b, c``, stores C =
    cascade + A @ B, f32). A and B are blocked as :func:`matmul`'s; the cascade carries the
    m x n f32 accumulators, 16 values per 512-bit word: one 4x4 block a word on npu1 (4x8x4
    mmul), two words a 4x8 block on npu2 (4x8x8; AIE2P's cascade is AIE2's 512 bits: mlir-aie's
    NPU2 target model inherits getAccumulatorCascadeSize). Call them on a herd with
    ``cascade="east"``. Symbol: ``matmul_cascade_put_bf16_f32_64x64x64_4x8x4``.
    """
    loc = caller_loc()
    if role not in CASCADE_ROLES:
        raise DesignError("kernel", f"matmul_cascade has role={role!r}", loc=loc,
                          limit="'put' (first core), 'put_get' (middle) or 'get' (last)",
                          found=repr(role), fix="give the stage's place in the chain")
    m, k, n = (positive_size(v, what, "matmul_cascade", fix="use // for integer division",
                             loc=loc) for what, v in (("m", m), ("k", k), ("n", n)))
    target = kernel_target(device)
    r, s, t = target.mmul_shapes["bf16"]
    load = target.core_load_bytes_per_cycle
    macs = target.macs_per_cycle["bf16_f32"]
    if m % (2 * r) or k % s or n % (2 * t):
        raise DesignError(
            "kernel", f"matmul_cascade tile {m}x{k}x{n} does not fit the {r}x{s}x{t} mmul with "
            "2x2 blocking", loc=loc, limit=f"m % {2 * r} == 0, k % {s} == 0, n % {2 * t} == 0",
            found=f"{m}x{k}x{n}", fix=f"choose m a multiple of {2 * r}, k of {s}, n of {2 * t}")
    acc = TensorType(shape=(m, n), dtype="f32")
    patch = patch_words(r, t, target)
    args = [buffer("a", TensorType(shape=(m, k), dtype="bf16"), blocks=(r, s)),
            buffer("b", TensorType(shape=(k, n), dtype="bf16"), blocks=(s, t))]
    if role == "get":
        args.append(buffer("c", acc, "out", blocks=(r, t)))
    return declare(
        f"matmul_cascade_{role}_bf16_f32_{m}x{k}x{n}_{r}x{s}x{t}", source="mm_cascade.cc",
        entry=f"matmul_cascade_{role}<bfloat16, {r}, {s}, {t}, {m}, {k}, {n}>", args=args,
        reference=(matmul_cascade_bfp16_ref if target.runs_bfp16("bf16", (r, s, t)) else
                   matmul_cascade_ref), cycles=cascade_cycles(m, k, n, r, s, t, target),
        ops=2 * m * k * n,
        cost=f"(m/{2 * r})(n/{2 * t})({matmul_step(r, s, t, bf16, load, macs)}(k/{s})+"
        f"{cascade_patch(r, t, target)})+20: as matmul, a 2x2 patch's {patch} cascade words "
        f"({patch // 4} a {r}x{t} f32 block, {target.cascade_words_per_cycle} a cycle) in "
        f"place of its C loads or stores: npu1's calibrated {MATMUL_PATCH['bf16']} per patch"
        + (f", plus {cascade_patch(r, t, target) - MATMUL_PATCH['bf16']} for its words past "
           f"npu1's {NPU1_PATCH_WORDS}" if patch > NPU1_PATCH_WORDS else "")
        + " (kernels_cpp/mm_cascade.cc)",
        params={"m": m, "k": k, "n": n, "r": r, "s": s, "t": t, "role": role},
        cascade_in=acc if role != "put" else None, cascade_out=acc if role != "get" else None,
        # the middle stage gets a 2x2 patch's words, adds its product, puts them, patch by
        # patch (mm_cascade.cc): the simulator streams its calls so
        cascade_step=(patch, patch) if role == "put_get" else None, arch=target.arch)
