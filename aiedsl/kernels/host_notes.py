"""What a kernel's host build tells of how its C++ computes on the NPU, beside what it computes
here: notes ``aiedsl kernel test`` and ``aiedsl sim --kernels native`` give under a FAIL (a
PASS agrees with it already), which fail nothing themselves.

* A bf16 ``aie::mmul`` of 4x8x8 or 8x8x8 in a kernel built for npu2 runs on the bfp16 unit
  (:data:`~aiedsl.targets.kernel_arch.BFP16_MMUL`, which aiedsl's AIE2P compiles define as
  IRON's do): A and B are quantized to bfp16ebs8 first, on the NPU and in the host build alike
  (:mod:`aiedsl.kernels.bfp16`), so a reference written as exact bf16 products differs from the
  kernel by far more than a sum's rounding. The host header records the shapes as the kernel's
  library loads (``aiedsl_bfp16_mmuls``: the mmuls its C++ instantiates, called or not).
  aiedsl's own kernels are not noted: their references model the quantization.

>>> print(bfp16_note("mm_64", ((4, 8, 8),)))  # doctest: +NORMALIZE_WHITESPACE
mm_64's C++ runs its bf16 aie::mmul<4, 8, 8> on npu2's bfp16 unit, as aiedsl compiles
npu2 kernels (AIE_API_EMULATE_BFLOAT16_MMUL_WITH_BFP16, as IRON's): A and B are quantized to
bfp16ebs8 (blocks of 8 along K sharing the block's largest exponent, 8-bit mantissas) before
they are multiplied, here as on the NPU, so a reference of exact bf16 products differs from it
by far more than a sum's rounding; quantize the reference's A and B with
aiedsl.kernels.bfp16.to_bfp16 (A along its rows, B along its columns, in the kernel's rounding
mode), as the README's "npu2's bf16 matrix multiply" shows
"""

from __future__ import annotations

from collections.abc import Sequence

from aiedsl.targets.kernel_arch import BFP16_MMUL, BFP16_MMUL_SHAPES

BFP16_BITS = {shape: 1 << i for i, shape in enumerate(BFP16_MMUL_SHAPES)}
"""The bit of ``aiedsl_host::bfp16_mmuls`` each bf16 mmul shape (M, K, N) sets: the host
header's order, 4x8x8 then 8x8x8 (``detail::bfp16_compiled``)."""


def bfp16_shapes(bits: int) -> tuple[tuple[int, int, int], ...]:
    """The mmul shapes a host build's ``aiedsl_bfp16_mmuls`` names.

    >>> bfp16_shapes(3)
    ((4, 8, 8), (8, 8, 8))
    """
    return tuple(shape for shape, bit in BFP16_BITS.items() if bits & bit)


def mmul_words(shapes: Sequence[tuple[int, int, int]]) -> str:
    """``shapes`` as the AIE API spells them: ``aie::mmul<4, 8, 8> and aie::mmul<8, 8, 8>``."""
    return " and ".join(f"aie::mmul<{m}, {k}, {n}>" for m, k, n in shapes)


def bfp16_note(symbol: str, shapes: Sequence[tuple[int, int, int]]) -> str:
    """The note for kernel ``symbol`` whose C++ runs bf16 mmuls of ``shapes`` on the bfp16
    unit (one line, without ``note:``)."""
    mmuls = mmul_words(shapes)
    return (f"{symbol}'s C++ runs its bf16 {mmuls} on npu2's bfp16 unit, as aiedsl compiles "
            f"npu2 kernels ({BFP16_MMUL}, as IRON's): A and B are quantized to bfp16ebs8 "
            "(blocks of 8 along K sharing the block's largest exponent, 8-bit mantissas) before "
            "they are multiplied, here as on the NPU, so a reference of exact bf16 products "
            "differs from it by far more than a sum's rounding; quantize the reference's A and "
            "B with aiedsl.kernels.bfp16.to_bfp16 (A along its rows, B along its columns, in "
            "the kernel's rounding mode), as the README's \"npu2's bf16 matrix multiply\" shows")


def conversions_left_out(cycles: str) -> str:
    """What cycles of a bf16 mmul on npu2's bfp16 unit leave out, said where ``cycles`` (``the
    cycles``, ``this estimate``) are given: the simulator's note, ``kernel profile``'s and
    ``kernel cost``'s.

    >>> conversions_left_out("this estimate")[:60]
    'the two conversions to bfp16 each mmul needs run in the core'
    """
    return (f"the two conversions to bfp16 each mmul needs run in the core's one store slot "
            f"and are not in {cycles}, which they could make up to twice as many (README: "
            "npu2's bf16 matrix multiply)")
