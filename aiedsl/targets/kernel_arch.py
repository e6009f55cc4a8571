"""What a kernel compile for each AI Engine architecture defines, and what that makes of a bf16
matrix multiply: the ``__AIE_ARCH__`` number Peano predefines (and the AIE API reads), and the
AIE API macro that runs AIE2P's bf16 ``aie::mmul`` on the core's block-floating-point unit,
which aiedsl defines for every AIE2P kernel compile, Peano's (``build.sh``, ``--compile``) and
the host's (``aiedsl kernel test``, ``kernel profile``, ``sim --kernels native``) alike.

>>> arch_define_words("aie2p")
['-DAIE_API_EMULATE_BFLOAT16_MMUL_WITH_BFP16']
>>> arch_define_words("aie2")
[]
>>> RUNTIME_LIB_DIRS["aie2p"]
'AIE2P'
"""

from __future__ import annotations

from typing import Literal

Arch = Literal["aie2", "aie2p"]

AIE_ARCH: dict[str, int] = {"aie2": 20, "aie2p": 21}
"""``__AIE_ARCH__`` per architecture, as Peano's preincluded headers define it
(``aiev2_defines.h``, ``aie2p_version.h``) and the AIE API's ``config.hpp`` reads it."""

BFP16_MMUL = "AIE_API_EMULATE_BFLOAT16_MMUL_WITH_BFP16"
"""The AIE API macro (jgmelber/aie_api ``detail/mmul.hpp``: a mode "available through
block-floating-point emulation to increase throughput at the cost of accuracy. Enabled by
defining AIE_API_EMULATE_BFLOAT16_MMUL_WITH_BFP16 at compile time") under which AIE2P's bf16
4x8x8 and 8x8x8 ``aie::mmul`` convert A and B to ``bfp16ebs8`` and run one
``mac_8x8_8x8T_conf`` (``detail/aie2p/mmul_bf16_bf16.hpp``; the 8x8x8 widens B first with a
``mul_elem_64`` by ones); without it 4x8x8 is eight
element-wise ``mac_elem_32`` (``emulated_mmul_intrinsics.hpp``, ``mac_4x8_8x8_bf16``). AIE2P
has no bf16 matrix multiply. IRON's AIE2P GEMM defines it by default (amd/IRON
``iron/operators/gemm/op.py``: ``emulate_bf16_mmul_with_bfp16`` defaults to True, passed to
the kernel compile as ``-DAIE_API_EMULATE_BFLOAT16_MMUL_WITH_BFP16``), and mlir-aie's AIE2P
``aie_kernels/aie2p/mm.cc`` picks its bf16 shapes by it. The only place aiedsl spells it (the
host AIE API header reads it as the AIE API does: ``#if``)."""

ARCH_DEFINES: dict[str, tuple[str, ...]] = {"aie2": (), "aie2p": (BFP16_MMUL,)}
"""Macros every kernel compile for an architecture gets, after aiedsl's own (``-DNDEBUG``...) and
before a kernel's ``defines=``. AIE2 has a bf16 matrix multiply: nothing."""

BFP16_MMUL_SHAPES: tuple[tuple[int, int, int], ...] = ((4, 8, 8), (8, 8, 8))
"""The bf16 ``aie::mmul`` shapes (M, K, N) that run on the bfp16 unit under :data:`BFP16_MMUL`
(``mmul_bf16_bf16.hpp``); 4x8x4 and 8x8x4 stay element-wise bf16 multiplies, exact."""


RUNTIME_LIB_DIRS: dict[str, str] = {"aie2": "AIE2", "aie2p": "AIE2P"}
"""The folder of mlir-aie's runtime library for each architecture, under an install's
``aie_runtime_lib/`` (beside its ``include/``): the device-side headers kernels include with
``<...>``, ``vec_math.h`` and ``lut_based_ops.h`` (and ``lut_based_ops.cpp``, the tables those
functions read). mlir-aie's source tree has them as ``aie_runtime_lib/AIE2/`` and
``aie_runtime_lib/AIE2P/`` and installs them so; IRON adds the folder of the kernel's
architecture to every Peano compile of a kernel: mlir-aie ``python/iron/kernels/_common.py``
(``_runtime_lib_include``: ``aie_runtime_lib/<arch upper-cased>``) and amd/IRON
``iron/common/compilation/base.py`` (``KernelCompilationRule.compile``: the same folder, by
``get_kernel_dir().upper()``, before ``include/``). The one place aiedsl spells it
(:func:`aiedsl.toolchain.commands.kernel_compile_argv` puts it on Peano's line)."""


def arch_define_words(arch: str) -> list[str]:
    """The ``-DNAME`` words of :data:`ARCH_DEFINES` for ``arch`` (none for one it lacks)."""
    return [f"-D{name}" for name in ARCH_DEFINES.get(arch, ())]


def arch_of(aie_arch: int | None) -> str | None:
    """The architecture whose ``__AIE_ARCH__`` is ``aie_arch`` (None: none, or one unknown)."""
    return next((a for a, n in AIE_ARCH.items() if n == aie_arch), None)


def runs_bfp16(arch: str | None, dtype: str, shape: tuple[int, int, int]) -> bool:
    """Whether an ``aie::mmul`` of ``shape`` on ``dtype`` inputs runs on the bfp16 unit when
    compiled for ``arch`` with its :data:`ARCH_DEFINES`.

    >>> runs_bfp16("aie2p", "bf16", (4, 8, 8)), runs_bfp16("aie2", "bf16", (4, 8, 4))
    (True, False)
    """
    return (arch is not None and BFP16_MMUL in ARCH_DEFINES.get(arch, ()) and dtype == "bf16"
            and tuple(shape) in BFP16_MMUL_SHAPES)
