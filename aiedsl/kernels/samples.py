"""The library at several sizes, to test and profile: what ``aiedsl kernel test --all`` runs,
and the cases ``aiedsl kernel test/profile FILE.cc`` take for the kernels made from a file."""

from __future__ import annotations

from pathlib import Path

from aiedsl.ir.types import TensorType
from aiedsl.kernels.base import Kernel
from aiedsl.kernels.cases import KernelCase
from aiedsl.kernels.library import (
    CASCADE_ROLES, add, conv2d_1x1, conv2d_3x3, exp_bf16, gelu, layer_norm, matmul,
    matmul_cascade, matmul_narrow, mul, passthrough, reduce_max, reduce_sum, relu, rgba2gray,
    rms_norm, scale, silu, softmax, sub, threshold, vector_scalar, zero,
)
from aiedsl.kernels.text import KernelText, unit_text
from aiedsl.kernels.units import KernelUnit, unit_key
from aiedsl.targets.kernel_arch import AIE_ARCH


def samples() -> list[Kernel]:
    """Every library kernel at several sizes: what ``aiedsl kernel test --all`` runs."""
    T = TensorType
    out = []
    for device in ("npu1", "npu2"):
        out += [matmul(m, k, n, "bf16", device=device)
                for m, k, n in ((8, 8, 16), (16, 32, 16), (32, 16, 64), (64, 64, 64))]
        out += [matmul(m, k, n, "i8", device=device)
                for m, k, n in ((16, 8, 16), (32, 64, 32), (64, 232, 64))]
        # narrow C: bf16 rounded at every call; i8 scaled, rounded and saturated
        out += [matmul(m, k, n, "bf16", "bf16", device=device)
                for m, k, n in ((16, 32, 16), (32, 56, 32))]
        out += [matmul(m, k, n, "i8", "i8", shift=sh, device=device)
                for (m, k, n), sh in (((16, 8, 16), 0), ((32, 64, 32), 6), ((16, 72, 32), 9))]
        # i16 C from i8 or i16 inputs: scaled, rounded and saturated to int16
        out += [matmul(m, k, n, "i8", "i16", shift=sh, device=device)
                for (m, k, n), sh in (((16, 8, 16), 0), ((32, 64, 32), 6))]
        out += [matmul(m, k, n, "i16", "i16", shift=sh, device=device)
                for (m, k, n), sh in (((8, 4, 16), 0), ((32, 32, 32), 8))]
        # an int32 tile of sums narrowed once
        out += [matmul_narrow(m, n, "i8", "i8", shift=sh, device=device)
                for (m, n), sh in (((16, 16), 0), ((64, 64), 12))]
        out += [matmul_narrow(32, 32, din, "i16", shift=4, device=device)
                for din in ("i8", "i16")]
        out += [matmul(m, k, n, "i16", device=device)
                for m, k, n in ((8, 4, 16), (32, 32, 32), (64, 64, 64))]
    # a C block is one cascade word on npu1 (4x4), two on npu2 (4x8)
    out += [matmul_cascade(m, k, n, role, device=device) for role in CASCADE_ROLES
            for device, sizes in (("npu1", ((8, 8, 8), (32, 64, 16))),
                                  ("npu2", ((8, 8, 16), (32, 64, 32))))
            for m, k, n in sizes]
    for dt, sizes in (("f32", (16, 4096)), ("i32", (16, 1024)), ("bf16", (32, 2048)),
                      ("i16", (32,))):
        out += [zero(T(shape=(n,), dtype=dt)) for n in sizes]
    for dt, sizes in (("i32", (16, 1024)), ("i16", (64,)), ("bf16", (512,))):
        out += [passthrough(T(shape=(n,), dtype=dt)) for n in sizes]
    out += [scale(n) for n in (32, 1024)]
    out += [threshold(n) for n in (64, 1024)]
    out += [rgba2gray(n) for n in (32, 1920)]
    for dt, sizes in (("i16", (32, 1024)), ("i32", (16, 256)), ("bf16", (32, 1024))):
        out += [add(T(shape=(n,), dtype=dt)) for n in sizes]
        out += [sub(T(shape=(n,), dtype=dt)) for n in sizes]
        out += [mul(T(shape=(n,), dtype=dt)) for n in sizes]
        out += [vector_scalar(op, T(shape=(n,), dtype=dt)) for op in ("add", "mul")
                for n in sizes[:1]]
    out += [rms_norm(r, c) for r, c in ((1, 16), (4, 256))]
    for device in ("npu1", "npu2"):  # ResNet-50 bottleneck pointwise shapes, one row
        out += [conv2d_1x1(w, ci, co, shift=sh, relu=rl, device=device)
                for w, ci, co, sh, rl in ((16, 64, 64, 6, True), (32, 256, 64, 9, True),
                                          (16, 64, 256, 7, False))]
        out += [conv2d_3x3(w, ci, co, shift=sh, relu=rl, device=device)
                for w, ci, co, sh, rl in ((16, 16, 16, 10, False), (48, 64, 64, 13, True))]
    for device in ("npu1", "npu2"):  # polynomial exp, and AIE2P's hardware exp2
        out += [f(n, device=device) for f in (exp_bf16, silu, gelu) for n in (16, 1024)]
        out += [softmax(r, c, device=device) for r, c in ((1, 16), (4, 256))]
    out += [layer_norm(r, c) for r, c in ((1, 32), (4, 256))]
    for dt, sizes in (("bf16", (32, 1024)), ("i8", (64,)), ("i16", (32, 512)), ("i32", (16,))):
        out += [relu(T(shape=(n,), dtype=dt)) for n in sizes]
    for rows, cols in ((1, 32), (8, 256)):
        out += [reduce_sum(rows, cols, "i16"), reduce_max(rows, cols, "i16"),
                reduce_max(rows, cols, "bf16")]
    out += [reduce_sum(4, 64, "i32"), reduce_max(4, 64, "i32")]
    return out


def library_cases(source: Path | None = None) -> list[KernelCase]:
    """Library kernels at several sizes (:func:`samples`), or only those made from the C++ file
    named like ``source``, ready to build on the host, each for the architecture it was made
    for (its ``__AIE_ARCH__`` and that architecture's macros: npu2's bf16 matmuls quantize to
    bfp16 on the host as their references do).

    The kernels one source makes with the same defines for one architecture and operand types
    share one generated file, as a design's do (:class:`~aiedsl.kernels.units.KernelUnit`): one
    host build for all of them (mm.cc's 52 kernels: 8 builds, not 52 of about a second each).
    The operand types part them because what a library's C++ instantiates is said of each
    kernel built from it (npu2's bf16 mmuls on the bfp16 unit: not of an int8 matmul)."""
    lib = [k for k in samples() if source is None or k.ir.source == source.name]
    shared: dict[tuple[object, ...], list[Kernel]] = {}
    for k in lib:
        shared.setdefault((*unit_key(k.ir), k.ir.arch, *k.ir.operand_dtypes), []).append(k)
    texts: dict[str, KernelText] = {}
    for ks in shared.values():
        text = unit_text(None, KernelUnit(ks[0].ir.symbol, tuple(k.ir for k in ks)))
        texts.update((k.ir.symbol, text) for k in ks)
    return [KernelCase(k.ir, texts[k.ir.symbol], k.run_reference,
                       {a.name: k.ir.params[a.name] for a in k.ir.args  # type: ignore[misc]
                        if a.kind == "scalar" and a.name in k.ir.params},
                       AIE_ARCH[k.ir.arch] if k.ir.arch is not None else None)
            for k in lib]
