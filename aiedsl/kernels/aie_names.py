"""The names the real AIE API and Peano's intrinsic headers declare at the global scope (so a
kernel's ``entry=`` may name them, after the file, outside every namespace), per architecture:
``aie2`` (NPU1, AIE-ML) and ``aie2p`` (NPU2, AIE-MLv2).

aiedsl's host stand-in of the AIE API (``kernels_cpp/host/aie_api/``) declares only what its
kernels use, so it cannot say which names the real headers lack; these lists can. Their sources:

- Xilinx's AIE API, ``include/aie_api/types.hpp`` (read in ``jgmelber/aie_api`` at commit
  ``2b7eedf``): the global ``int8 ... uint32`` aliases, ``int4``/``uint4``, ``bfloat16``,
  ``float16``, ``float8``, ``bfloat8``, the complex ``cint8 ... cbfloat16``, the accumulator
  tags ``acc72``, ``acc80``, ``cacc32 ... cacc80``, ``caccfloat``, ``accauto``,
  ``exact_acc32``/``exact_acc64``, the block types ``bfp16ebs8``/``bfp16ebs16`` and ``mx4``,
  ``mx6``, ``mx9`` (each under an ``#if`` on ``__AIE_ARCH__``: 20 is aie2, 21 aie2p).
- Peano (``Xilinx/llvm-aie``), ``clang/lib/Headers/aiebase_typedefs.h``: the scalar types
  (``int4_t``, ``bint8_t``, ``uint1_t``, ...), ``cint16``, ``cint32``, ``cfloat``, ``acc48``,
  ``cacc48``, ``acc32``, ``acc64``, ``accfloat``, ``addr_t``, ``mask64``, ``sparsity_t``, and
  the vector classes ``v<N><element>`` (``v16int32``, ``v64int4``, ``v16cint16``,
  ``v16bfloat16``, ``v8acc64``, ``v16accfloat``, ``v64bfp16ebs8`` on aie2p, with ``_sparse``,
  ``_compress`` and ``_unaligned`` forms); ``aiev2/aiev2_aie_api_compat.h`` and
  ``aie2p/aie2p_aie_api_compat.h``: ``acc16 ... acc56``, ``cacc16 ... cacc64``,
  ``cint32_w64``, ``caccfloat`` and ``cbfloat16`` (aie2), ``bfp16ebs8``/``bfp16ebs16``
  (aie2p), and more ``v<N><element>`` classes (``v16cint16``, ``v8caccfloat``,
  ``v16cbfloat16``, ...); ``aiev2/aiev2_defines.h``, ``aie2p/aie2p_defines.h``,
  ``aiev2/aiev2_enums.h`` and ``aie2p/aie2p_enums.h``: the macros (``rnd_conv_even``,
  ``cmp_slt``, ``crSat``, the shuffle modes ``T16_32x2_lo``, ``INTLV_lo_8o16``, ...).
  (AMD UG1603, AIE-ML kernel programming, lists the AIE-ML vector element types.)

The vector classes follow one pattern (UG1583's ``v<lanes><type>``, as ``v16int32``): a lane
count, a power of two up to 512, and an element type of :data:`ELEMENTS`; the pattern accepts a
few combinations no header declares (``v512float``), never refusing one that one does.

The intrinsic headers also declare thousands of functions (``srs``, ``concat``,
``extract_v8int32``, ...), overloaded and renamed between releases: they are not listed, and a
name ``entry=`` spells as a call is not refused (:mod:`aiedsl.kernels.entry_scope`).

Example
-------
>>> [n for n in ("int4", "cint16", "v16bfloat16", "bfp16ebs8", "rnd_floor", "TILE")
...  if aie_name(n)]
['int4', 'cint16', 'v16bfloat16', 'bfp16ebs8', 'rnd_floor']
>>> aie_name("v64bfp16ebs8", "aie2"), aie_name("v64bfp16ebs8", "aie2p")
(False, True)
"""

from __future__ import annotations

import functools
import re

ARCHES = ("aie2", "aie2p")
"""The architectures aiedsl builds for: NPU1's AIE-ML (``__AIE_ARCH__ == 20``) and NPU2's
AIE-MLv2 (``__AIE_ARCH__ == 21``)."""

_BOTH = frozenset("""
int8 int16 int32 uint8 uint16 uint32 int4 uint4 int4_t uint4_t int2_t uint2_t int5_t uint5_t
int6_t uint6_t bint8_t buint8_t uint1_t bfloat16 float16 float8 bfloat8
cint8 cint16 cint32 cint64 cuint8 cuint16 cuint32 cuint64 cint8_t cint16_t cint32_t cint64_t
cuint8_t cuint16_t cuint32_t cuint64_t cfloat cfloat_t cbfloat16 cint32_w64
acc16 acc24 acc32 acc40 acc48 acc48_t acc56 acc64 acc72 acc80 accfloat accauto
cacc16 cacc24 cacc32 cacc40 cacc48 cacc48_t cacc56 cacc64 cacc72 cacc80 caccfloat
exact_acc32 exact_acc64 bfp16ebs8 bfp16ebs16 mx4 mx6 mx9
addr_t mask64 sparsity_t sparse_fifo_t fifo_state_t
""".split())
"""Types and tags both architectures' AIE API and intrinsic headers declare at the global
scope (types.hpp, aiebase_typedefs.h, the ``*_aie_api_compat.h``; see the module's
docstring)."""

_MACROS_BOTH = frozenset("""
AIE_VECTOR_LDST_ALIGN __AIE_ARCH_NAME__ __AIE_ARCH_NAME_STR__ __AIE_MODEL_VERSION__
__AIE_ARCH_MODEL_VERSION__ __AIE_MODEL_VERSION_NAME_STR__
rnd_floor rnd_ceil rnd_sym_floor rnd_sym_ceil rnd_neg_inf rnd_pos_inf rnd_sym_zero rnd_sym_inf
rnd_conv_even rnd_conv_odd cmp_seq cmp_sne cmp_sge cmp_slt cmp_sgeu cmp_sltu
ups_shrt ups_long ups_nohi ups_dohi crSat crRnd crFPMask crF2IMask crF2FMask crSCDEn crMCDEn
""".split())
"""Macros both architectures' ``*_defines.h`` define."""

_MACROS = {
    "aie2": _MACROS_BOTH | frozenset(
        "__AIE2__ crVaddSign crPackSign crSRSSign crUPSSign crUnpackSign".split()),
    "aie2p": _MACROS_BOTH | frozenset("""
        __AIE2P__ crF2BMask crSRSMode crUPSMode crUnpackSize crPackSize srsSign0 srsSign1
        upsSign0 upsSign1 packSign0 packSign1 unpackSign0 unpackSign1 vaddSign0 vaddSign1
        crFPNlfMask crFPCnvFx2FlMask crFPCnvFl2FxMask srCarry srSS0 srMS0 srSRS_of srUPS_of
        srSparse_of srFifo_of srFifo_uf srFPFlags srF2IFlags srF2FFlags srF2BFlags srFPNlf
        srFPCnvFx2Fl srFPCnvFl2Fx OP_TERM_NEG_COMPLEX OP_TERM_NEG_COMPLEX_CONJUGATE_X
        OP_TERM_NEG_COMPLEX_CONJUGATE_Y OP_TERM_NEG_COMPLEX_CONJUGATE_X_Y
        OP_TERM_NEG_COMPLEX_CONJUGATE_BUTTERFLY OP_TERM_NEG_COMPLEX_BUTTERFLY
        """.split()),
}
"""Macros each architecture's ``*_defines.h`` defines, the shuffle modes aside
(:data:`_SHUFFLE`)."""

_SHUFFLE = re.compile(r"T\d+_\d+x\d+(?:_lo|_hi|_flip|_hilo)?|D?INTLV_(?:lo|hi)_\d+o\d+")
"""The shuffle-mode macros of ``aiev2_enums.h``/``aie2p_enums.h`` (``T16_32x2_lo``,
``T8_8x16_hilo``, ``DINTLV_lo_8o16``, ...)."""

ELEMENTS = {
    "aie2": frozenset("""
        int4 uint4 int8 uint8 int16 uint16 int32 uint32 int64 uint64 cint16 cuint16 cint32
        cuint32 float cfloat bfloat16 cbfloat16 acc32 acc64 accfloat cacc64 caccfloat
        """.split()),
    "aie2p": frozenset("""
        int4 uint4 int8 uint8 int16 uint16 int32 uint32 int64 uint64 cint16 cuint16 cint32
        cuint32 float cfloat bfloat16 cbfloat16 acc32 acc64 accfloat cacc64 caccfloat
        bfp16ebs8 bfp16ebs16
        """.split()),
}
"""The element types of the intrinsic vector classes ``v<N><element>`` each architecture's
headers declare (the block-float ones, ``v64bfp16ebs8``, are aie2p's)."""

_VECTOR = re.compile(r"v(\d+)([a-z]\w*?)(?:_sparse)?(?:_compress|_unaligned)?")


def aie_name(name: str, arch: str | None = None) -> bool:
    """Does the AIE API or Peano's intrinsic headers declare ``name`` at the global scope (a
    type, a tag, a vector class or a macro), on ``arch`` (``"aie2"``, ``"aie2p"``; None:
    either)? See the module's docstring for the sources."""
    arches = ARCHES if arch is None else (arch,)
    return any(_declares(name, a) for a in arches)


@functools.lru_cache(maxsize=1024)
def _declares(name: str, arch: str) -> bool:
    if name in _BOTH or name in _MACROS[arch] or _SHUFFLE.fullmatch(name):
        return True
    m = _VECTOR.fullmatch(name)
    if m is None:
        return False
    lanes = int(m[1])
    return 1 <= lanes <= 512 and lanes & (lanes - 1) == 0 and m[2] in ELEMENTS[arch]
