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


ORDER_WORDS = 4096
"""The words put whose order the host header records (``CASCADE_ORDER_WORDS``)."""


def waits_for(gets: int, puts: int, step: tuple[int, int] | None, j: int) -> int:
    """The words of its get a call's put word ``j`` waits for, as the simulator streams it
    (:func:`aiedsl.sim.cascade_stream.shares`): with ``step`` (g, p), g more before each p
    puts; without, its share, ceil((j + 1) gets / puts).

    >>> waits_for(16, 16, None, 0), waits_for(16, 16, (16, 16), 0), waits_for(8, 8, (4, 4), 5)
    (1, 16, 8)
    """
    if step is None:
        return -(-(j + 1) * gets // puts)
    g, p = step
    return (j // p + 1) * g


def order_mismatch(k: Kernel, got_at_put: list[int], gets: int, puts: int) -> DesignError | None:
    """The error for kernel ``k``'s C++ having got more of its cascade input before a put than
    its declared order lets (``got_at_put[j]``: the words it had got when it put word j), or
    None. The simulator and the hang check stream the call in the declared order: a C++ that
    takes its whole get first, declared to stream, passed both and hangs on the NPU when a fifo
    between the chain's cores closes a cycle (a cascade tester), and a false deadlock is said
    the other way."""
    step = k.cascade_step
    late = next((j for j, got in enumerate(got_at_put) if got > waits_for(gets, puts, step, j)),
                None)
    if late is None:
        return None
    g0 = got_at_put[0]
    p0 = next((j for j, got in enumerate(got_at_put) if got != g0), len(got_at_put))
    fits = (g0 > 0 and p0 > 0 and gets % g0 == 0 and puts % p0 == 0
            and gets // g0 == puts // p0
            and all(got <= waits_for(gets, puts, (g0, p0), j)
                    for j, got in enumerate(got_at_put)))
    g, p = (g0, p0) if fits else (gets, puts)
    declared = (f"cascade_step={step}" if step is not None else
                f"no cascade_step (word j of its put waits for ceil((j + 1) x {gets} / {puts}) "
                "words of its get)")
    return DesignError(
        "kernel cascade", f"kernel '{k.symbol}' gets more of its cascade input before it puts "
        f"than it declares: its C++ had got {got_at_put[late]} word(s) when it put word "
        f"{late}, where {declared} lets it have {waits_for(gets, puts, step, late)}",
        loc=k.loc, limit="a call gets and puts in the order it declares: the simulator and the "
        "hang check stream its words so, and a chain whose cores also share fifos hangs on the "
        "NPU, or runs, by that order",
        found=f"{got_at_put[late]} word(s) got before put word {late}",
        fix=f"declare cascade_step=({g}, {p}) (its C++ gets {g} word(s), then puts {p}), and "
        "check the design again")
