"""The ``aie::mmul`` modes the host AIE API header has, read from its own table, for the fix of
a kernel whose mmul uses one it lacks (:func:`~aiedsl.kernels.host_errors.explain`).

>>> mmul_modes_fix(stderr, "aie::mmul<4, 4, 4, signed char, signed char, acc32>")  # doctest: +SKIP
"use one of the AIE API's mmul modes (M x K x N) for i8 x i8 on AIE2 (npu1): 4x8x4, ..."
"""

from __future__ import annotations

import re

_MMUL_MADE = re.compile(r"aie::mmul<(\d+), (\d+), (\d+), ([^,<>]+), ([^,<>]+)[,>]")
"""M, K, N and the two input types of the aie::mmul g++ was making."""
_MMUL_ARCH = re.compile(r"mmul_mode_ok\((\d+),")
"""The architecture (``__AIE_ARCH__``) the host header's mode check was asked about."""
_MMUL_ROW = re.compile(r"\{(2[01]), ('.'|\d+), ('.'|\d+), (\d+), (\d+), (\d+), ")
"""A row of the host header's ``mmul_modes`` table: arch, A's and B's type, M, K, N."""
_MMUL_TYPES = {"signed char": ("8", "i8"), "int8_t": ("8", "i8"),
               "unsigned char": ("8", "u8"), "uint8_t": ("8", "u8"),
               "short int": ("16", "i16"), "short": ("16", "i16"), "int16_t": ("16", "i16"),
               "short unsigned int": ("16", "u16"), "uint16_t": ("16", "u16"),
               "int": ("32", "i32"), "int32_t": ("32", "i32"),
               "unsigned int": ("32", "u32"), "uint32_t": ("32", "u32"),
               "bfloat16": ("'b'", "bf16"), "float": ("'f'", "f32")}
"""A C++ type as g++ names it in an instantiation: as the table keys it (bits, or a letter
for bfloat16 and float), and as aiedsl names it."""
_ARCH_NAMES = {"20": "AIE2 (npu1)", "21": "AIE2P (npu2)"}


def mmul_arch(stderr: str) -> str | None:
    """The architecture the host header's mode check was asked about, as messages name it
    (``AIE2P (npu2)``), or None when g++'s words do not say."""
    arch = _MMUL_ARCH.search(stderr)
    return _ARCH_NAMES.get(arch[1]) if arch else None


def mmul_modes_fix(stderr: str, what: str) -> str | None:
    """The fix for an ``aie::mmul`` of a mode the AIE API lacks: the modes it has for those
    input types on that architecture, read from the host header's table (the one the
    static_assert reads), or None when g++'s words do not say which."""
    from aiedsl.kernels.paths import KERNELS_CPP

    made, arch = _MMUL_MADE.search(what), _MMUL_ARCH.search(stderr)
    if made is None or arch is None:
        return None
    a, b = (_MMUL_TYPES.get(t.strip()) for t in made.groups()[3:])
    if a is None or b is None:
        return None
    (ta, name_a), (tb, name_b) = a, b
    text = (KERNELS_CPP / "host" / "aie_api" / "host_core.hpp").read_text()
    table = text[text.index("mmul_modes[] = {"):text.index("mmul_sparse_modes[]")]
    modes = [f"{m}x{k}x{n}" for row_arch, x, y, m, k, n in _MMUL_ROW.findall(table)
             if (row_arch, x, y) == (arch[1], ta, tb)]
    if not modes:
        return (f"these input types have no aie::mmul on {_ARCH_NAMES.get(arch[1], arch[1])}: "
                "multiply another way, or convert the inputs to types it has (listed in "
                "kernels_cpp/host/aie_api/host_core.hpp)")
    types = f"{name_a} x {name_b}"
    return (f"use one of the AIE API's mmul modes (M x K x N) for {types} on "
            f"{_ARCH_NAMES.get(arch[1], arch[1])}: {', '.join(modes)}")
