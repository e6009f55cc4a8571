"""The matmul kernel: blocked ``C += A @ B`` for the native mmul shapes, with its numpy
reference, its form for the simulator and its cost; the cascade stages (:mod:`.cascade`) and
the convolutions (:mod:`.conv`) build on them.

The reference computes on the blocked buffers exactly as ``kernels_cpp/mm.cc`` does; the cost
formula is documented in its header. On npu2 a bf16 matmul's 4x8x8 mmul runs on the bfp16 unit
(:data:`~aiedsl.targets.kernel_arch.BFP16_MMUL`, which aiedsl's builds define for AIE2P): its
reference (:func:`matmul_bfp16_ref`) quantizes A and B as the core does
(:mod:`aiedsl.kernels.bfp16`).

Example
-------
::

    from aiedsl.kernels import matmul
    mm = matmul(64, 64, 64)                          # matmul_bf16_f32_64x64x64_4x8x4
"""

from __future__ import annotations

import functools

import numpy as np

from aiedsl.dtypes import DType, bf16, i16
from aiedsl.errors import DesignError
from aiedsl.ir.types import TensorType
from aiedsl.kernels.args import buffer
from aiedsl.kernels.base import Kernel, declare
from aiedsl.kernels.bfp16 import bfp16_accumulate
from aiedsl.kernels.layout import block, unblock
from aiedsl.kernels.params import MAX_SHIFT, kernel_target, positive_size
from aiedsl.kernels.prepared import Accumulator, Prepared, Reorder
from aiedsl.lang.tensor import lookup_dtype
from aiedsl.source_loc import caller_loc
from aiedsl.values import as_int, shown

MATMUL_OUT = {"bf16": "f32", "i8": "i32", "i16": "i32"}
"""The accumulating output type of each matmul input type (the default output)."""
MATMUL_OUTS = {"bf16": ("f32", "bf16"), "i8": ("i32", "i8", "i16"), "i16": ("i32", "i16")}
"""Every output type of each matmul input type: the combinations of mlir-aie's AIE2 and AIE2P
matmul (``aie_kernels/aie2/mm.cc`` and ``aie2p/mm.cc``, their ``combos``: bf16_f32, bf16_bf16,
i8_i32, i8_i8, i8_i16, i16_i32, i16_i16), with the mmul shape of the input type
(:attr:`~aiedsl.targets.TargetModel.mmul_shapes`: mlir-aie's for each combination). The
accumulating one sums across calls without loss (f32, or i32 keeping its low bits); bf16 -> bf16
accumulates a call in f32 and rounds C to bf16 (nearest even) as it stores it; an i8 or i16 C
is loaded shifted left by ``shift`` into the 32-bit accumulator (the AIE API's for 8- and
16-bit inputs), the call's products are added (modulo 2^32, as the accumulator's lanes keep
them) and the sum is stored shifted right by ``shift``, rounded to nearest even and saturated.
A narrow C is so rounded (and saturated) once per call: a K loop of calls rounds its partial
sums K/k times (see kernels_cpp/mm.cc, "Narrow outputs"; :func:`matmul_narrow` rounds an int32
tile of sums once). mlir-aie's own narrow integer outputs store with no shift, in whatever
rounding and saturation modes the core is in."""
MATMUL_PATCH = {"bf16": 7, "i8": 11, "i16": 7}
"""Cycles per 2x2 patch of C outside the inner loop (C load/store, pipeline fill): bf16 and i8
calibrated to Taka et al.'s single-core measurements on npu1; i16 assumed like bf16. The output
type does not change it: a narrow C moves fewer bytes, and its conversion rides in the store
slot, overlapped like the wide C's loads and stores with the neighbouring patches."""
MATMUL_PATCH_FAMILY = "npu1"
"""The device family :data:`MATMUL_PATCH` was calibrated on: a kernel whose cycles hold it (the
matmuls, the cascade stages, the convolutions) is npu1's model on any other."""
_PATCH_SOURCE = {
    "bf16": "a per-patch overhead calibrated to Taka et al. single-core measurements",
    "i8": "a per-patch overhead calibrated to Taka et al. single-core measurements",
    "i16": "a per-patch overhead assumed like bf16's (no single-core i16 measurement; mlir-aie "
           "#2735 traced IRON's i16 kernel at about 75-80% of peak, so this may be high)"}
"""Where each input type's :data:`MATMUL_PATCH` comes from, as the kernel's cost says it."""
PUBLISHED: dict[tuple[str, str, tuple[int, ...]], tuple[float, str]] = {
    ("npu1", "bf16", (64, 104, 64)): (112.6, "Taka et al. arXiv 2512.13282, npu1"),
    ("npu1", "i8", (64, 232, 64)): (233.0, "Taka et al. arXiv 2512.13282, npu1")}
"""Measured single-core MACs per cycle to compare the model with."""


def srs(acc: np.ndarray, shift: int, dt: np.dtype) -> np.ndarray:
    """What ``to_vector<T>(shift)`` makes of int64 accumulators in mm.cc's modes: shift right
    rounding to nearest, ties to even (``conv_even``), then saturate to ``dt``'s range."""
    acc = np.asarray(acc, dtype=np.int64)
    if shift:
        q = acc >> shift
        rem = acc - (q << shift)
        half = np.int64(1) << (shift - 1)
        q = q + ((rem > half) | ((rem == half) & ((q & 1) == 1)))
    else:
        q = acc
    info = np.iinfo(dt)
    return np.clip(q, info.min, info.max).astype(dt)


def matmul_ref(a: np.ndarray, b: np.ndarray, c: np.ndarray, *, m: int, k: int, n: int, r: int,
               s: int, t: int, shift: int = 0, **_: object) -> None:
    """C += A @ B on blocked buffers, as mm.cc computes it: floats in f32 (as ``aie::mmul``
    accumulates; a bf16 C is loaded exactly and rounded to nearest even when stored), integers
    exactly; an i32 C keeps its low bits; an i8 C is loaded shifted left by ``shift``, the
    call's products added and the sum stored shifted back right, rounded to nearest even and
    saturated: C' = sat8(round((C 2^shift + A B) / 2^shift)), one rounding per call.
    """
    wide = _wide(c.dtype)
    _matmul_finish(_operand(a, m, k, r, s, wide), _operand(b, k, n, s, t, wide), c, r=r, t=t,
                   shift=shift)


def _wide(dt: np.dtype) -> type:
    """What mm.cc accumulates a C of ``dt`` in: f32 for floats, exact integers for ints."""
    return np.int64 if dt.kind in "iu" else np.float32


def _operand(x: np.ndarray, rows: int, cols: int, br: int, bc: int, wide: type) -> np.ndarray:
    """A blocked input buffer as the product reads it: row-major, widened."""
    return unblock(x, rows, cols, br, bc).astype(wide)


def _matmul_finish(A: np.ndarray, B: np.ndarray, c: np.ndarray, *, r: int, t: int,
                   shift: int = 0) -> None:
    """C += A @ B from row-major widened operands (see :func:`matmul_ref`)."""
    flt = c.dtype.kind not in "iu"
    wide = _wide(c.dtype)
    prod = block(A @ B, r, t)  # same element sums as C + A @ B, in C's blocked order
    flat = c.reshape(-1)  # a view of the simulator's buffers (contiguous); else a copy
    if c.dtype == wide:
        flat += prod
    elif flt or c.dtype.itemsize >= 4:
        flat[...] = (flat.astype(wide) + prod).astype(c.dtype)
    else:  # the sum as the 32-bit accumulator lane holds it, then narrowed
        lane = ((flat.astype(wide) << shift) + prod).astype(np.int32)
        flat[...] = srs(lane, shift, c.dtype)
    if not c.flags.c_contiguous:
        c[...] = flat.reshape(c.shape)


def matmul_prepared(m: int, k: int, n: int, r: int, s: int, t: int, dout: np.dtype,
                    shift: int = 0) -> Prepared:
    """:func:`matmul_ref` split for the simulator: A and B unblocked and widened (shared by
    the cores a broadcast feeds), then the product added into C. A C of the accumulating type
    itself (f32) may stay row-major across the calls of a K loop: each call's sums are the
    same elementwise adds in the same order, and it is put back in blocks once."""
    wide = _wide(dout)
    acc = None
    if np.dtype(wide) == dout:
        acc = Accumulator(
            2, functools.partial(_unblock_acc, rows=m, cols=n, br=r, bc=t),
            functools.partial(_block_acc, br=r, bc=t), _matmul_add)
    return Prepared({0: functools.partial(_operand, rows=m, cols=k, br=r, bc=s, wide=wide),
                     1: functools.partial(_operand, rows=k, cols=n, br=s, bc=t, wide=wide)},
                    functools.partial(_matmul_finish, r=r, t=t, shift=shift), acc,
                    {0: _unblocking(m, k, r, s, wide), 1: _unblocking(k, n, s, t, wide)})


def _unblocking(rows: int, cols: int, br: int, bc: int, wide: type) -> Reorder:
    """What :func:`_operand` does, as a :class:`Reorder`."""
    order = unblock(np.arange(rows * cols), rows, cols, br, bc).reshape(-1)
    return Reorder(order, np.dtype(wide), (rows, cols))


def _unblock_acc(c: np.ndarray, *, rows: int, cols: int, br: int, bc: int) -> np.ndarray:
    """C's blocked buffer as a row-major copy to add into."""
    return unblock(c.reshape(-1), rows, cols, br, bc)


def _block_acc(acc: np.ndarray, c: np.ndarray, *, br: int, bc: int) -> None:
    """The row-major copy written back into C's buffer in its blocks."""
    c[...] = block(acc, br, bc).reshape(c.shape)


def _matmul_add(A: np.ndarray, B: np.ndarray, acc: np.ndarray) -> None:
    """acc += A @ B, row-major (the same sums :func:`_matmul_finish` adds in blocks)."""
    np.add(acc, A @ B, out=acc)


def mm_rounding(dout: np.dtype) -> str:
    """The rounding mode mm.cc's call runs in on npu2 for a C of ``dout``, which the bfp16
    conversion of A and B rounds by (:mod:`aiedsl.kernels.bfp16`): conv_even, which it sets for
    the call whatever C is (as IRON's aie_kernels/aie2p/mm.cc does under ROUND_CONV_EVEN, which
    IRON's GEMM passes; floor, the reset mode, would bias every conversion the same way: the largest
    difference the quantization makes at 512^3, seed 0, was 1.77 under floor, 1.06 so)."""
    return "conv_even"


def matmul_bfp16_ref(a: np.ndarray, b: np.ndarray, c: np.ndarray, *, m: int, k: int, n: int,
                     r: int, s: int, t: int, **_: object) -> None:
    """C += A @ B on blocked buffers as mm.cc computes it on npu2, whose bf16 4x8x8 mmul runs on
    the bfp16 unit: A's rows and B's columns quantized to bfp16ebs8 in blocks of 8 along K
    (rounded by :func:`mm_rounding`'s mode), each block's products summed exactly and added to
    C's f32 accumulator block after block along K (:func:`~aiedsl.kernels.bfp16.bfp16_accumulate`),
    a bf16 C rounded to nearest even when stored, once per call."""
    _bfp16_finish(_operand(a, m, k, r, s, np.float32), _operand(b, k, n, s, t, np.float32), c,
                  r=r, t=t)


def _bfp16_finish(A: np.ndarray, B: np.ndarray, c: np.ndarray, *, r: int, t: int) -> None:
    """C += A @ B on the bfp16 unit from row-major f32 operands (see :func:`matmul_bfp16_ref`)."""
    acc = unblock(c.reshape(-1), A.shape[0], B.shape[1], r, t).astype(np.float32)
    bfp16_accumulate(acc, A, B, mm_rounding(c.dtype))
    c[...] = block(acc, r, t).astype(c.dtype).reshape(c.shape)


def _bfp16_add(A: np.ndarray, B: np.ndarray, acc: np.ndarray) -> None:
    """acc += A @ B on the bfp16 unit, row-major f32 (the sums :func:`_bfp16_finish` adds)."""
    bfp16_accumulate(acc, A, B, mm_rounding(acc.dtype))


def matmul_bfp16_prepared(m: int, k: int, n: int, r: int, s: int, t: int,
                          dout: np.dtype) -> Prepared:
    """:func:`matmul_bfp16_ref` split for the simulator as :func:`matmul_prepared` splits
    :func:`matmul_ref`: A and B unblocked and widened once (the quantization, a small part of the
    work, is each call's), an f32 C kept row-major across the calls of a K loop."""
    acc = None
    if np.dtype(dout) == np.float32:
        acc = Accumulator(
            2, functools.partial(_unblock_acc, rows=m, cols=n, br=r, bc=t),
            functools.partial(_block_acc, br=r, bc=t), _bfp16_add)
    return Prepared({0: functools.partial(_operand, rows=m, cols=k, br=r, bc=s, wide=np.float32),
                     1: functools.partial(_operand, rows=k, cols=n, br=s, bc=t,
                                          wide=np.float32)},
                    functools.partial(_bfp16_finish, r=r, t=t), acc,
                    {0: _unblocking(m, k, r, s, np.float32),
                     1: _unblocking(k, n, s, t, np.float32)})


def matmul_step(r: int, s: int, t: int, din: DType, load_bytes: int, macs: int = 0) -> int:
    """Cycles per K step of a 2x2 patch: 4 native ``r x s x t`` mmuls at the core's ``macs``
    MACs per cycle for the input type (:attr:`~aiedsl.targets.TargetModel.macs_per_cycle`;
    0: one mmul per cycle, as every shape of :attr:`~aiedsl.targets.TargetModel.mmul_shapes`
    is), or the two A and two B block loads at the core's ``load_bytes`` per cycle
    (:attr:`~aiedsl.targets.TargetModel.core_load_bytes_per_cycle`) when those take longer."""
    mmul = -(-r * s * t // macs) if macs else 1
    return max(4 * mmul, -(-2 * (r * s + s * t) * din.itemsize // load_bytes))


def matmul_cycles(m: int, k: int, n: int, r: int, s: int, t: int, din: DType,
                  load_bytes: int, macs: int = 0) -> int:
    """Cycles per call: per 2x2 patch of C, K/s steps plus the patch overhead; 20 per call."""
    return (m // (2 * r)) * (n // (2 * t)) * (
        matmul_step(r, s, t, din, load_bytes, macs) * (k // s) + MATMUL_PATCH[din.name]) + 20


def matmul(m: int, k: int, n: int, dtype_in: DType | str = bf16,
           dtype_out: DType | str | None = None, *, shift: int = 0,
           device: str | None = None) -> Kernel:
    """``C += A @ B`` on an ``m x k`` by ``k x n`` tile, blocked for the device's native mmul.

    bf16 -> f32 or bf16 (4x8x4 on npu1, 4x8x8 on npu2), i8 -> i32, i8 or i16 (4x8x8 / 8x8x8),
    i16 -> i32 or i16 (4x4x4 / 4x4x8): mlir-aie's combinations and shapes
    (:data:`MATMUL_OUTS`); the shape comes from the design's device (``device`` outside a
    design). A bf16 C is accumulated in f32 within a call and rounded to bf16 when stored; an
    i8 or i16 C is loaded shifted left by ``shift`` and stored as the sum shifted right by
    ``shift``, rounded to nearest even and saturated, at every call (``shift`` is for a narrow
    integer C only: 0..23 for i8, 0..15 for i16): a K loop of n calls into one C rounds and
    saturates its partial sums n times. For one rounding, sum into an i32 C and narrow it once
    with :func:`matmul_narrow`. The cost is the input type's: its mmul at the core's MACs per
    cycle for it, whatever C is. A, B and C are stored in mmul blocks (see
    :mod:`aiedsl.kernels.layout`): pack them with ``block_dims`` on the memtile and unpack C
    with ``unblock_dims``. The symbol carries the tile and the mmul shape:
    ``matmul_bf16_f32_64x64x64_4x8x4``; an i8 C its shift too: ``matmul_i8_i8_..._shift4``.
    """
    din = lookup_dtype(dtype_in, caller_loc())
    if din.name not in MATMUL_OUT:
        raise DesignError("kernel", f"matmul of {din} is not in the library", loc=caller_loc(),
                          found=din.name, fix="use bf16, i8 or i16 inputs")
    outs = MATMUL_OUTS[din.name]
    dout = lookup_dtype(dtype_out or MATMUL_OUT[din.name], caller_loc())
    if dout.name not in outs:
        raise DesignError("kernel", f"matmul {din}->{dout} is not in the library",
                          loc=caller_loc(), found=f"{din}->{dout}",
                          fix=f"{din} inputs accumulate into {' or '.join(outs)}")
    narrow_int = not dout.is_float and dout.itemsize < 4
    most = narrow_shift_limit(dout) if narrow_int else 0
    bits = as_int(shift)  # numpy's integers too, as a plain int
    if bits is None or not 0 <= bits <= most:
        raise DesignError(
            "kernel", f"matmul {din}->{dout} has shift={shown(shift)}", loc=caller_loc(),
            limit=f"0..{MAX_SHIFT} for an i8 C, 0..{narrow_shift_limit(i16)} for an i16 C "
            "(C << shift must fit the 32-bit accumulator); 0 otherwise", found=shown(shift),
            fix=f"scale an {dout} C by 0..{most} bits" if narrow_int else
            "leave shift out: only an i8 or i16 C is scaled")
    shift = bits
    fix = "use // for integer division, e.g. matmul(M // 2, K, N)"
    m, k, n = (positive_size(v, what, "matmul", fix=fix)
               for what, v in (("m", m), ("k", k), ("n", n)))
    target = kernel_target(device)
    r, s, t = target.mmul_shapes[din.name]
    load = target.core_load_bytes_per_cycle
    # a narrow C sums in the accumulating type's accumulator: its MAC rate is that type's
    macs = target.macs_per_cycle[f"{din}_{MATMUL_OUT[din.name]}"]
    if m % (2 * r) or k % s or n % (2 * t):
        raise DesignError(
            "kernel", f"matmul tile {m}x{k}x{n} does not fit the {r}x{s}x{t} mmul with 2x2 "
            "blocking", loc=caller_loc(), limit=f"m % {2 * r} == 0, k % {s} == 0, "
            f"n % {2 * t} == 0", found=f"{m}x{k}x{n}",
            fix=f"choose m a multiple of {2 * r}, k of {s}, n of {2 * t}")
    bfp16 = target.runs_bfp16(din.name, (r, s, t))
    suffix, extra = (f"_shift{shift}", f", {shift}") if narrow_int else ("", "")
    elsewhere = ("" if target.family == MATMUL_PATCH_FAMILY
                 else f" ({MATMUL_PATCH_FAMILY}'s, assumed on {target.family})")
    return declare(
        f"matmul_{din}_{dout}_{m}x{k}x{n}_{r}x{s}x{t}{suffix}", source="mm.cc",
        entry=f"matmul_blocked<{din.cpp}, {dout.cpp}, {r}, {s}, {t}, {m}, {k}, {n}{extra}>",
        args=[buffer("a", TensorType(shape=(m, k), dtype=din.name), blocks=(r, s)),
              buffer("b", TensorType(shape=(k, n), dtype=din.name), blocks=(s, t)),
              buffer("c", TensorType(shape=(m, n), dtype=dout.name), "inout", blocks=(r, t))],
        reference=matmul_bfp16_ref if bfp16 else matmul_ref,
        cycles=matmul_cycles(m, k, n, r, s, t, din, load, macs),
        ops=2 * m * k * n,
        cost=f"(m/{2 * r})(n/{2 * t})({matmul_step(r, s, t, din, load, macs)}"
        f"(k/{s})+{MATMUL_PATCH[din.name]})+20: 4 {r}x{s}x{t} mmuls per 2x2 block step at the "
        f"core's {macs} {din} MACs per cycle, or its A and B block loads at {load} bytes per "
        f"cycle if longer, {_PATCH_SOURCE[din.name]}{elsewhere}, ~20 per call for the "
        "function's prologue and epilogue (kernels_cpp/mm.cc)",
        params={"m": m, "k": k, "n": n, "r": r, "s": s, "t": t,
                **({"shift": shift} if narrow_int else {})},
        prepared=(matmul_bfp16_prepared(m, k, n, r, s, t, np.dtype(dout.numpy)) if bfp16 else
                  matmul_prepared(m, k, n, r, s, t, np.dtype(dout.numpy), shift)),
        arch=target.arch)


def matmul_narrow_ref(acc: np.ndarray, c: np.ndarray, *, shift: int, **_: object) -> None:
    """C = sat(round(acc / 2^shift)) element by element, as mm.cc's ``matmul_narrow`` stores it
    (nearest even, saturated to C's type)."""
    c.reshape(-1)[...] = srs(acc.reshape(-1).astype(np.int64), shift, c.dtype)


def matmul_narrow(m: int, n: int, dtype_in: DType | str = "i8", dtype_out: DType | str = "i8",
                  *, shift: int = 0, device: str | None = None) -> Kernel:
    """The one narrowing of a K loop summed in int32: ``C = sat(round(ACC / 2**shift))`` for an
    ``m x n`` int32 tile ``ACC`` that :func:`matmul` (``dtype_in -> i32``) summed over the whole
    K loop, into an i8 or i16 C (rounded to nearest even and saturated once, where a narrow
    matmul C is rounded and saturated at every call). Element by element: C keeps ACC's mmul
    blocks. The symbol names the matmul's input type: ``matmul_narrow_i8_i8_64x64_4x8x8_shift4``.
    ``aiedsl kernel cost matmul_narrow --shape 64x64`` estimates it::

        acc = local(Tensor[m, n, i32])
        ...
        zero_acc(acc)
        for _ in loop(K // k):
            with a.consume() as ta, b.consume() as tb:
                mm(ta, tb, acc)                          # matmul(m, k, n, i8, i32)
        with c.produce() as tc:
            narrow(acc, tc)                              # matmul_narrow(m, n, i8, i8, shift=4)
    """
    loc = caller_loc()
    din = lookup_dtype(dtype_in, loc)
    dout = lookup_dtype(dtype_out, loc)
    if din.name not in ("i8", "i16") or dout.name not in ("i8", "i16"):
        raise DesignError(
            "kernel", f"matmul_narrow {din}->{dout} is not in the library", loc=loc,
            found=f"{din}->{dout}", limit="the int32 sums of an i8 or i16 matmul, narrowed to i8 "
            "or i16", fix="give dtype_in i8 or i16 (the matmul's inputs) and dtype_out i8 or i16")
    limit = narrow_shift_limit(dout)
    bits = as_int(shift)
    if bits is None or not 0 <= bits <= limit:
        raise DesignError("kernel", f"matmul_narrow to {dout} has shift={shown(shift)}", loc=loc,
                          limit=f"0..{limit} for an {dout} C, as matmul's", found=shown(shift),
                          fix=f"scale by 0..{limit} bits")
    fix = "give the core tile's rows and columns"
    m, n = (positive_size(v, what, "matmul_narrow", fix=fix, loc=loc)
            for what, v in (("m", m), ("n", n)))
    target = kernel_target(device)
    r, s, t = target.mmul_shapes[din.name]
    if (m * n) % (r * t):
        raise DesignError(
            "kernel", f"matmul_narrow tile {m}x{n} is not a whole number of {r}x{t} blocks",
            loc=loc, limit=f"m * n % {r * t} == 0", found=f"{m}x{n}",
            fix=f"narrow the tile of a matmul with the {r}x{s}x{t} mmul (m a multiple of "
            f"{2 * r}, n of {2 * t})")
    blocks = m * n // (r * t)
    step = narrow_step(r, t, dout, target.core_load_bytes_per_cycle,
                       target.core_store_bytes_per_cycle)
    return declare(
        f"matmul_narrow_{din}_{dout}_{m}x{n}_{r}x{s}x{t}_shift{bits}", source="mm.cc",
        entry=f"matmul_narrow<{din.cpp}, {dout.cpp}, {r}, {s}, {t}, {m}, {n}, {bits}>",
        args=[buffer("acc", TensorType(shape=(m, n), dtype="i32"), blocks=(r, t)),
              buffer("c", TensorType(shape=(m, n), dtype=dout.name), "out", blocks=(r, t))],
        reference=matmul_narrow_ref, cycles=blocks * step + 14, ops=m * n,
        cost=f"{step} per {r}x{t} block ({blocks} blocks) + 14: each block's {4 * r * t} bytes "
        f"of int32 loaded at {target.core_load_bytes_per_cycle} bytes per cycle and its "
        f"{r * t * dout.itemsize} narrowed bytes stored at {target.core_store_bytes_per_cycle}, "
        "the slower of the two, plus pipeline fill and drain (kernels_cpp/mm.cc)",
        params={"m": m, "n": n, "r": r, "s": s, "t": t, "shift": bits}, arch=target.arch)


def narrow_step(r: int, t: int, dout: DType, load_bytes: int, store_bytes: int) -> int:
    """Cycles per ``r x t`` block of :func:`matmul_narrow`: its int32 loads or its narrowed
    stores, whichever take longer (at least one cycle)."""
    return max(1, -(-4 * r * t // load_bytes), -(-r * t * dout.itemsize // store_bytes))


def narrow_shift_limit(dout: DType) -> int:
    """The largest right shift a narrow integer C of ``dout`` takes: C shifted left by it must
    still fit the 32-bit accumulator it is loaded into (23 for i8, 15 for i16)."""
    return 31 - 8 * dout.itemsize

