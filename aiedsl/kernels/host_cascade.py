"""The cascade words a kernel's host build moves in a call: a word's size, which the host
header's ``get_scd_*`` and ``put_mcd`` move, and the error for a call whose C++ got or put
other counts than the kernel's ``cascade_in=`` and ``cascade_out=`` declare
(:func:`cascade_mismatch`, raised by :func:`~aiedsl.kernels.host_load.load_native`'s callable
after the call returns).

Example
-------
>>> WORD_BYTES
64
"""

from __future__ import annotations

from aiedsl.errors import DesignError, counted
from aiedsl.ir.kernel import Kernel
from aiedsl.ir.types import TensorType
from aiedsl.targets import CASCADE_BITS

WORD_BYTES = CASCADE_BITS // 8
"""Bytes in one cascade word: what the host header's ``get_scd_*`` and ``put_mcd`` move, of
whatever type (``aiedsl_cascade`` hands a call its words as bytes)."""
_GET_WORD = {"f32": "get_scd_v16accfloat", "i32": "get_scd_v16acc32",
             "bf16": "get_scd_v32bfloat16", "i16": "get_scd_v32int16", "i8": "get_scd_v64int8",
             "u8": "get_scd_v64uint8"}
"""The one-word get of each element type, as llvm-aie's aiev2_streams.h and aie2p_streams.h
spell it, for naming the intrinsic in a report."""


def cascade_mismatch(k: Kernel, got: int, put: int) -> DesignError:
    """The error for kernel ``k``'s C++ having got ``got`` cascade words and put ``put`` in a
    call, where its ``cascade_in=`` and ``cascade_out=`` declare other counts: on the array the
    core would stall waiting for a word that never comes, or its neighbour for one never put."""
    sides = (("cascade_in", k.cascade_in, got, "got",
              _GET_WORD.get(k.cascade_in.dtype, "get_scd") if k.cascade_in else "get_scd"),
             ("cascade_out", k.cascade_out, put, "put", "put_mcd"))
    wrong = [(what, t, n, t.nbytes // WORD_BYTES if t is not None else 0, verb, fn)
             for what, t, n, verb, fn in sides
             if n != (t.nbytes // WORD_BYTES if t is not None else 0)]

    def per(t: TensorType | None) -> int:
        """Values of ``t``'s type in one cascade word (f32's when there is no ``t``)."""
        return WORD_BYTES // (t.dt.itemsize if t is not None else 4)

    def fix(what: str, t: TensorType | None, n: int, words: int, verb: str, fn: str) -> str:
        declare = (f"{what}=Tensor[{n * per(t)}, {t.dtype if t is not None else 'f32'}] (the "
                   f"{counted(n, 'word')} it {verb}s)" if n else f"no {what}=")
        if t is None:
            return f"declare {declare}, or remove the C++'s {fn} calls"
        return f"make the C++ call {fn} {words} times per call, or declare {declare}"

    return DesignError(
        "kernel cascade", f"kernel '{k.symbol}' moves other cascade words than it declares: "
        + "; ".join(f"its C++ {verb} {counted(n, 'word')} in a call, where "
                    + (f"{what}={t} is {words}" if t is not None else f"it declares no {what}")
                    for what, t, n, words, verb, _ in wrong),
        loc=k.loc,
        limit="; ".join((f"{what}={t}: {counted(words, 'word')} of {CASCADE_BITS} bits "
                         f"({per(t)} values each) {verb} per call" if t is not None
                         else f"no {what}: no words {verb}")
                        for what, t, _, words, verb, _ in wrong),
        found="; ".join(f"{counted(n, 'word')} {verb} ({fn}) per call"
                        for _, _, n, _, verb, fn in wrong),
        fix="; ".join(fix(*w) for w in wrong))
