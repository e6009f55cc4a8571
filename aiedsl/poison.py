"""Memory nothing wrote, in a wrong output: the simulator fills it with a value of its own
(:func:`aiedsl.dtypes.unwritten`), and a FAIL whose wrong elements look like that value more than
chance says so (:func:`aiedsl.compare.compare`'s ``poison``)."""

from __future__ import annotations


import numpy as np

from aiedsl.dtypes import unwritten


def poison(dtype: str) -> float:
    """What the simulator fills memory of ``dtype`` that nothing wrote with (NaN, the smallest
    signed or the largest unsigned integer), as a float64."""
    from aiedsl.dtypes import dtype as lookup_dtype

    return float(unwritten((1,), np.dtype(lookup_dtype(dtype).numpy))[0])


def _around(x: np.ndarray, bits: int) -> np.ndarray:
    """|x| counted around a ``bits``-bit integer type's range (x modulo 2^bits, the nearer
    way), for whole float64 values."""
    span = 2.0 ** bits
    x = np.mod(x, span)
    return np.minimum(x, span - x)


def poison_marked(got: np.ndarray, want: np.ndarray, dtype: str, poison: float) -> np.ndarray:
    """Which elements of ``got`` (float64, each wrong against ``want``) look like memory nothing
    wrote, whose value is ``poison`` (:func:`_poison` of ``dtype``):

    * float: NaN where the reference is not (NaN stays NaN through any sum, product or copy);
    * signed integer: nearer ``poison``, the type's smallest value, than the wanted value,
      counting around the type's range as its arithmetic wraps (an accumulator that started at
      -2147483648 and summed -5 holds 2147483643): a sum that started at it lands there, while
      a wrong result of the design's own numbers lands near them; but not the type's largest
      value, which saturation gives;
    * unsigned integer: exactly ``poison``, the type's largest value (around the range, the
      value next to it is -1 and a sum from it is off by one, which tells nothing).
    """
    from aiedsl.dtypes import dtype as lookup_dtype

    dt = lookup_dtype(dtype)
    if dt.is_float:
        return np.isnan(got) & ~np.isnan(want)
    if poison > 0:  # unsigned: the poison is the largest value
        return np.asarray(got == poison)
    bits = 8 * dt.itemsize
    # the largest value, next to the poison around the range, is what saturation gives (an
    # int8 requantize's 127): not taken for it (a tester's ReLU'd int8 outputs were)
    return np.asarray((_around(got - poison, bits) < _around(got - want, bits))
                      & (got != -poison - 1))


def reference_holds(want: np.ndarray, dtype: str, poison: float, chunk: int) -> bool:
    """Does the reference itself hold values like the simulator's ``poison`` (a NaN, the
    unsigned poison, a signed value nearer the poison than 0)? Then a wrong element near it
    says nothing about unwritten memory (a u8 threshold's 255). ``want`` is read ``chunk``
    elements at a time (float64 copies of a slice, never of the whole)."""
    from aiedsl.dtypes import dtype as lookup_dtype

    dt = lookup_dtype(dtype)
    for lo in range(0, want.size, chunk):
        w = want[lo:lo + chunk].astype(np.float64)
        if dt.is_float:
            hit = np.isnan(w).any()
        elif poison > 0:
            hit = (w == poison).any()
        else:
            bits = 8 * dt.itemsize
            hit = (_around(w - poison, bits) < _around(w, bits)).any()
        if hit:
            return True
    return False


def beyond_chance(marked: int, wrong: int, dtype: str) -> bool:
    """Whether ``marked`` of ``wrong`` wrong elements looking like the simulator's poison
    point at unwritten memory rather than at a kernel's own wrong numbers: NaN always; an
    unsigned type's exact largest value when it is four times as common as one value of the
    type's range is by chance (a wrong rgba2gray weight gave one 255 in 359,228 wrong u8
    pixels, and the note sent its author looking for a missing zero call); a signed type's
    nearer-the-poison, half of them or more (about half of any wrong numbers may be)."""
    from aiedsl.dtypes import dtype as lookup_dtype

    dt = lookup_dtype(dtype)
    if dt.is_float or marked == wrong:
        return True
    if poison(dtype) > 0:
        return marked * 2 ** (8 * dt.itemsize) >= 4 * wrong
    return 2 * marked >= wrong


def poison_note(marked: int, wrong: int, dtype: str, poison: float) -> str:
    """The note under a simulated FAIL whose ``marked`` of ``wrong`` wrong
    elements look like the simulator's ``poison`` (:func:`poison_marked`): what that value is,
    what it means, and the fix."""
    from aiedsl.dtypes import dtype as lookup_dtype

    dt = lookup_dtype(dtype)
    one = marked == 1
    if wrong == 1:
        who = "the one wrong element is"
    elif marked == wrong:
        who = f"all {wrong:,} wrong elements are"
    else:
        who = f"{marked:,} of the {wrong:,} wrong elements {'is' if one else 'are'}"
    value = "NaN" if dt.is_float else f"{int(poison)}"
    if dt.is_float:
        look, why = "NaN where the reference is not", " (a sum it enters stays NaN)"
    elif poison > 0:
        look, why = value, f" ({dt}'s largest value)"
    else:
        bits = 8 * dt.itemsize
        look = (f"nearer {value} than the wanted value (counting around {dt}'s range: "
                f"{2 ** (bits - 1) - 1} is next to it)")
        why = f" ({dt}'s smallest value; a sum that starts there stays near it)"
    read = "it was read before anything wrote it" if one else \
        "they were read before anything wrote them"
    # A kernel computes NaN too (inf - inf, 0 x inf, inf / inf, after an overflow), and the
    # value carries no mark of where it came from: a softmax without its max subtraction got
    # the fix below, for an accumulator it zeroed (a transformer engineer)
    computed = ("; a kernel computes NaN as well, from inf - inf, 0 x inf or inf / inf after a "
                "value overflowed (an exp of a large input): if every element is written before "
                "it is read, look there") if dt.is_float else ""
    return (f"{who} {look}, and {value} is what the simulator fills {dt} memory nothing has "
            f"written with{why}: most likely {read}, as an accumulator a kernel sums into with "
            "no zero call first, elements no kernel writes that a drain sends, or elements of "
            "the output no drain writes; fix: zero each accumulator inside its produce() before "
            "the first kernel sums into it (aiedsl.kernels.zero(Tensor[...]) or your own zero "
            "kernel), have a kernel write every element a drain sends, and drain every element "
            f"of the output{computed}")
