"""Inputs on rounding ties, for ``aiedsl kernel test``: a kernel that narrows wide integers
(an int32 accumulator shifted, rounded and saturated to int8: a requantize) rounds the values
halfway between two results one way or the other, and random inputs almost never land there
(a tester's round-half-up kernel passed against a round-half-even reference: one tie in 8,192
outputs, rounded alike). These inputs are nothing but ties, at every shift the type's drawn
range holds.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from aiedsl.dtypes import drawn_range
from aiedsl.dtypes import dtype as lookup_dtype
from aiedsl.ir.kernel import Kernel
from aiedsl.ir.program import Rounding

if TYPE_CHECKING:
    from aiedsl.kernels.cases import KernelCase


def _int_bytes(dt: str) -> int:
    """The element size of integer type ``dt``; 0 for a float type."""
    d = lookup_dtype(dt)
    return 0 if d.name in ("bf16", "f32") else d.itemsize


def tie_inputs(k: Kernel) -> list[int]:
    """The argument indices of kernel ``k``'s integer input buffers of 16 bits or more, when
    it writes an integer buffer narrower than one of them (it narrows, and so rounds); else
    none.

    >>> from aiedsl.kernels import matmul_narrow, passthrough
    >>> from aiedsl import Tensor, i32
    >>> tie_inputs(matmul_narrow(16, 16, "i8", "i8", shift=4).ir)
    [0]
    >>> tie_inputs(passthrough(Tensor[64, i32]).ir)
    []
    """
    wide = [i for i, a in enumerate(k.args) if a.kind == "buffer" and a.access != "out"
            and _int_bytes(a.dtype) >= 2]
    narrowest = min((_int_bytes(a.dtype) for a in k.args if a.kind == "buffer"
                     and a.access != "in" and _int_bytes(a.dtype)), default=0)
    if not wide or not narrowest or narrowest >= max(_int_bytes(k.args[i].dtype) for i in wide):
        return []
    return wide


def most_shift(dt: str) -> int:
    """The largest shift whose ties :func:`ties` draws in type ``dt``: a tie at shift s is
    at least 2^(s-1) away from 0, inside the drawn range.

    >>> most_shift("i32"), most_shift("i16")
    (15, 7)
    """
    _, hi = drawn_range(dt)
    return hi.bit_length()


def ties(shape: tuple[int, ...], dt: str, rng: np.random.Generator) -> np.ndarray:
    """Values of integer type ``dt`` each halfway between two multiples of 2^s, for s from 1
    to :func:`most_shift` by element in turn: ``r * 2^s + 2^(s-1)``, ``r`` random within the
    type's drawn range but of a parity and sign each round of shifts sets: even and positive
    first (where rounding half up and half to even differ), then even and negative, odd and
    positive, odd and negative (where the symmetric modes differ). A random parity missed the
    difference at a shift on one seed in four (a reviewer).

    >>> t = ties((30,), "i32", np.random.default_rng(0))
    >>> all(int(v) % 2**s == 2**(s - 1) for s, v in zip([*range(1, 16)] * 2, t))
    True
    >>> [(int(v) >> s) % 2 for s, v in zip(range(1, 16), t)] == [0] * 15
    True
    """
    lo, hi = drawn_range(dt)
    top = most_shift(dt)
    n = int(np.prod(shape))
    i = np.arange(n)
    shifts = 1 + i % top
    odd, negative = (i // top) // 2 % 2, (i // top) % 2
    half = np.left_shift(1, shifts - 1)
    # r in [low, high] with r * 2^s >= lo and r * 2^s + half <= hi, then of the parity and
    # sign asked where the range holds one (0 is even and counts as positive)
    low = np.where(negative == 1, -((-lo) >> shifts), 0)
    high = np.where(negative == 1, -1, (hi - half) >> shifts)
    high = np.maximum(high, low)
    r = np.floor(rng.random(n) * (high - low + 1)).astype(np.int64) + low
    wrong = (r % 2) != odd
    r = np.where(wrong & (r + 1 <= high), r + 1, np.where(wrong & (r - 1 >= low), r - 1, r))
    values = r * np.left_shift(1, shifts) + half
    return values.reshape(shape).astype(np.dtype(lookup_dtype(dt).numpy))


def tie_pass(case: KernelCase, run: Callable[..., None], args_ref: list[Any],
             args_cpp: list[Any], seed: int, rounds: Rounding) -> list[str]:
    """``kernel test``'s lines for the runs on ties of a kernel that narrows
    (:func:`tie_inputs`): one per wide input, that input on ties and the other wide ones 0
    (a sum with a random bias would move them off), the rest as ``args_ref``/``args_cpp``
    hold them. Nothing when every run agrees with the reference; else the first that does not,
    as FAIL lines."""
    from aiedsl.compare import compare
    from aiedsl.kernels.faults import FILLS, call_limit
    from aiedsl.kernels.guarded import GuardedCall, in_child

    k = case.kernel
    wide = tie_inputs(k)
    rng = np.random.default_rng(seed)
    for j in wide:
        ref = [a.copy() if isinstance(a, np.ndarray) else a for a in args_ref]
        for i in wide:
            ref[i] = np.zeros_like(ref[i])
        ref[j] = ties(ref[j].shape, k.args[j].dtype, rng)
        cpp = [a.copy() if isinstance(a, np.ndarray) else a for a in ref]
        case.run_reference(ref)
        outcome = in_child(GuardedCall(k, run, cpp, FILLS[0]), call_limit(k))
        if isinstance(outcome, str):  # it crashed on these inputs
            return [f"FAIL {k.symbol}: with '{k.args[j].name}' on rounding ties: {outcome}"]
        results = outcome[0]
        name = k.args[j].name
        others = [k.args[i].name for i in wide if i != j]
        for i, a in enumerate(k.args):
            if a.kind != "buffer" or a.access == "in":
                continue
            c = compare(f"{k.symbol}.{a.name}", results[i], ref[i], a.dtype, rounds=rounds)
            if not c.passed:
                at = tuple(c.worst_index) if c.worst_index is not None else None
                held = f" ('{name}' {int(ref[j][at])} there)" if at is not None and \
                    ref[j].shape == results[i].shape else ""
                return [f"FAIL {k.symbol}: '{name}' on rounding ties (each element halfway "
                        f"between two multiples of 2^s, s from 1 to {most_shift(k.args[j].dtype)}"
                        + (f"; {', '.join(repr(o) for o in others)} 0" if others else "")
                        + f"), the C++ rounds otherwise than the reference{held}",
                        f"  {c.line()}"]
    return []
