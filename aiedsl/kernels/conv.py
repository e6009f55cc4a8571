"""The int8 convolutions of a ResNet bottleneck: the pointwise 1x1 layers (mm.cc's blocked
matmul from zero, narrowed and clamped) and the 3x3 middle layer (kernels_cpp/conv3x3.cc), one
row of pixels a call.

Example
-------
::

    from aiedsl.kernels import conv2d_1x1, conv2d_3x3
    pw = conv2d_1x1(64, 64, 64, shift=6)             # conv2d1x1_i8_64x64x64_4x8x8_shift6_relu
    mid = conv2d_3x3(56, 64, 64, shift=8)            # conv3x3_i8_56x64x64_4x8x8_shift8_relu
"""

from __future__ import annotations

import numpy as np

from aiedsl.dtypes import i8
from aiedsl.errors import DesignError
from aiedsl.ir.types import TensorType
from aiedsl.kernels.args import buffer
from aiedsl.kernels.base import Kernel, declare
from aiedsl.kernels.matmul import MATMUL_PATCH, matmul_cycles, matmul_ref, matmul_step, srs
from aiedsl.kernels.params import kernel_target, positive_size, scale_shift
from aiedsl.lang.tensor import lookup_dtype
from aiedsl.source_loc import caller_loc

def conv1x1_ref(a: np.ndarray, b: np.ndarray, c: np.ndarray, *, relu: int, **params: object
                ) -> None:
    """A 1x1 convolution as mm.cc computes it with ZERO_C: ``C = A @ B`` scaled by
    ``2**-shift``, rounded to nearest even and saturated to int8, then clamped at zero when
    ``relu``."""
    c[...] = 0
    matmul_ref(a, b, c, **params)  # type: ignore[arg-type]
    if relu:
        np.maximum(c, 0, out=c)


def conv2d_1x1(width: int, cin: int, cout: int, *, shift: int = 0, relu: bool = True,
               device: str | None = None) -> Kernel:
    """An int8 1x1 convolution of one row of ``width`` pixels: ``out[x, co] = relu(sat8(round(
    sum_ci in[x, ci] * w[ci, co] / 2**shift)))`` (the pointwise layers of a ResNet bottleneck).

    The row is ``width x cin`` activations and the weights ``cin x cout``, stored in the i8
    mmul's blocks (as :func:`matmul`'s A and B, ``block_dims`` on the memtile); the output is
    ``width x cout`` in C's blocks. It is mm.cc's blocked matmul starting from zero, narrowed
    with ``shift`` and clamped at zero: ``conv2d1x1_i8_64x64x64_4x8x8_shift6_relu``.
    """
    loc = caller_loc()
    width, cin, cout = (positive_size(v, what, "conv2d_1x1", fix="give the layer's size", loc=loc)
                        for what, v in (("width", width), ("cin", cin), ("cout", cout)))
    shift = scale_shift(shift, "conv2d_1x1", loc=loc)
    target = kernel_target(device)
    r, s, t = target.mmul_shapes["i8"]
    load = target.core_load_bytes_per_cycle
    if width % (2 * r) or cin % s or cout % (2 * t):
        raise DesignError(
            "kernel", f"conv2d_1x1 of {width} pixels, {cin} -> {cout} channels does not fit the "
            f"{r}x{s}x{t} mmul with 2x2 blocking", loc=loc,
            limit=f"width % {2 * r} == 0, cin % {s} == 0, cout % {2 * t} == 0",
            found=f"{width}x{cin}x{cout}", fix="pad the row or the channels")
    dt = "i8"
    return declare(
        f"conv2d1x1_i8_{width}x{cin}x{cout}_{r}x{s}x{t}_shift{shift}{'_relu' if relu else ''}",
        source="mm.cc",
        entry=f"matmul_blocked<int8_t, int8_t, {r}, {s}, {t}, {width}, {cin}, {cout}, {shift}, "
        f"true, {'true' if relu else 'false'}>",
        args=[buffer("a", TensorType(shape=(width, cin), dtype=dt), blocks=(r, s)),
              buffer("b", TensorType(shape=(cin, cout), dtype=dt), blocks=(s, t)),
              buffer("c", TensorType(shape=(width, cout), dtype=dt), "out", blocks=(r, t))],
        reference=conv1x1_ref,
        cycles=matmul_cycles(width, cin, cout, r, s, t, lookup_dtype(dt, loc), load),
        ops=2 * width * cin * cout,
        cost="as matmul i8 -> i8 (kernels_cpp/mm.cc with ZERO_C and RELU)",
        params={"m": width, "k": cin, "n": cout, "r": r, "s": s, "t": t, "shift": shift,
                "relu": int(relu)}, arch=target.arch)


def conv3x3_ref(top: np.ndarray, mid: np.ndarray, bot: np.ndarray, w: np.ndarray,
                out: np.ndarray, *, width: int, cin: int, cout: int, s: int, t: int,
                shift: int, relu: int, **_: object) -> None:
    """One output row of an int8 3x3 convolution as conv3x3.cc computes it: exact int64 sums
    over the nine taps with zero padding, narrowed by ``2**-shift`` (nearest even, saturated),
    clamped at zero when ``relu``. ``w`` holds the taps in the mmul's B blocks."""
    acc = np.zeros((width, cout), dtype=np.int64)
    taps = w.reshape(9, cin // s, cout // t, s, t).transpose(0, 1, 3, 2, 4).reshape(9, cin, cout)
    for kh, row in enumerate((top, mid, bot)):
        padded = np.zeros((width + 2, cin), dtype=np.int64)
        padded[1:-1] = row.reshape(width, cin)
        for kw in range(3):
            acc += padded[kw:kw + width] @ taps[kh * 3 + kw].astype(np.int64)
    res = srs(acc, shift, np.dtype(np.int8))
    if relu:
        res = np.maximum(res, 0)
    out.reshape(width, cout)[...] = res


def conv3x3_lane_moves(r: int) -> int:
    """Lane moves (shuffle-unit instructions) per channel step of conv3x3.cc's 2x2 patch with
    ``r``-pixel mmul blocks. Every two channel steps (one 128-bit load of ``2s`` channels per
    pixel) the patch gathers its ``2r`` pixels as two gathers of ``r``: each zips its pixels
    two by two (``r/2`` ``interleave_zip`` of 128-bit vectors, one VSHUFFLE each: a VSHUFFLE
    writes one 512-bit register) and joins the zipped 2-pixel halves into the two steps'
    ``r``-pixel A blocks with ``r/2`` concats of 128-bit parts, one move each (the AIE API
    shifts them into place); a concat of 256-bit or wider parts pairs registers and moves
    nothing. These are the counts ``kernel profile`` makes
    (kernels_cpp/host/aie_api/host_lanes.hpp), one a cycle: the core has one slot for them
    (llvm-aie's AIE2P VSHUFFLE and VSHIFT are both mv-slot instructions; its vector MACs issue
    in the vec slot, beside them).

    >>> conv3x3_lane_moves(4), conv3x3_lane_moves(8)
    (4, 8)
    """
    gathers, zips, concats = 2, r // 2, r // 2  # per two channel steps
    return gathers * (zips + concats) // 2


def conv3x3_mac_load(r: int, s: int, t: int, macs: int, load_bytes: int) -> int:
    """Cycles per channel step of the 2x2 patch for its MACs and loads, as matmul's step
    (:func:`~aiedsl.kernels.matmul.matmul_step`): 4 ``r x s x t`` mmuls at the core's ``macs``
    int8 MACs per cycle, or the bytes loaded at ``load_bytes`` a cycle if longer. A step's
    gather loads the bytes of matmul's two A blocks (``2r`` pixels' 128-bit loads of ``2s``
    channels every two steps: ``2rs`` bytes a step), its two B blocks are matmul's.

    >>> conv3x3_mac_load(4, 8, 8, 256, 64), conv3x3_mac_load(8, 8, 8, 512, 128)
    (4, 4)
    """
    return matmul_step(r, s, t, i8, load_bytes, macs)


def conv2d_3x3(width: int, cin: int, cout: int, *, shift: int = 0, relu: bool = True,
               device: str | None = None) -> Kernel:
    """One output row of an int8 3x3 convolution (stride 1, zero padding 1) from three input
    rows, for a ResNet bottleneck's middle layer: ``conv3x3_i8_56x64x64_4x8x8_shift8_relu``.

    Input rows are ``width x cin`` row-major (HWC), the weights nine taps (kh, kw) each
    ``cin x cout`` in the i8 mmul's B blocks, the output ``width x cout`` row-major. Call it
    ``k(top, mid, bot, w, out)``.
    """
    loc = caller_loc()
    width, cin, cout = (positive_size(v, what, "conv2d_3x3", fix="give the layer's size", loc=loc)
                        for what, v in (("width", width), ("cin", cin), ("cout", cout)))
    shift = scale_shift(shift, "conv2d_3x3", loc=loc)
    target = kernel_target(device)
    r, s, t = target.mmul_shapes["i8"]
    if width % (2 * r) or cin % (2 * s) or cout % (2 * t):
        raise DesignError(
            "kernel", f"conv2d_3x3 of {width} pixels, {cin} -> {cout} channels does not fit the "
            f"{r}x{s}x{t} mmul with 2x2 blocking", loc=loc,
            limit=f"width % {2 * r} == 0, cin % {2 * s} == 0 (two channel steps per 128-bit "
            f"gather), cout % {2 * t} == 0",
            found=f"{width}x{cin}x{cout}", fix="pad the row or the channels")
    row = TensorType(shape=(width, cin), dtype="i8")
    mac_load = conv3x3_mac_load(r, s, t, target.macs_per_cycle["i8_i32"],
                                target.core_load_bytes_per_cycle)
    moves = conv3x3_lane_moves(r)
    # NOTE: loads counted as instructions rather than bytes (a 128-bit pixel load takes a
    # load slot as a 512-bit one does) bind neither: (r pixel loads + the B blocks' 2 x 512
    # bits) over two slots is 4 a step on npu1 (256-bit loads), 5 on npu2, under the step.
    step = max(mac_load, moves)
    patch = MATMUL_PATCH["i8"]  # its C stores and pipeline fill, as matmul's i8 patch
    cycles = (width // (2 * r)) * (cout // (2 * t)) * (9 * (cin // s) * step + patch) + 20
    return declare(
        f"conv3x3_i8_{width}x{cin}x{cout}_{r}x{s}x{t}_shift{shift}{'_relu' if relu else ''}",
        source="conv3x3.cc",
        entry=f"conv3x3_i8<{r}, {s}, {t}, {width}, {cin}, {cout}, {shift}, "
        f"{'true' if relu else 'false'}>",
        args=[buffer("top", row), buffer("mid", row), buffer("bot", row),
              buffer("w", TensorType(shape=(9 * cin, cout), dtype="i8")),
              buffer("out", TensorType(shape=(width, cout), dtype="i8"), "out")],
        reference=conv3x3_ref, cycles=cycles, ops=2 * 9 * width * cin * cout,
        cost=f"(w/{2 * r})(cout/{2 * t})(9 (cin/{s}) {step} + {patch}) + 20: per channel step "
        f"of a 2x2 patch the larger of its 4 {r}x{s}x{t} mmuls with their A and B loads "
        f"({mac_load}, as matmul's step) and the {moves} lane moves gathering A pixel by pixel "
        f"({r // 2} zips and {r // 2} concats of 128-bit parts a gather, one gather a step), "
        "the patch's C stores and pipeline fill as matmul's (kernels_cpp/conv3x3.cc; an "
        "estimate)",
        params={"width": width, "cin": cin, "cout": cout, "r": r, "s": s, "t": t,
                "shift": shift, "relu": int(relu)}, arch=target.arch)
