"""Whether a kernel's scalar fits the C++ parameter it is passed to: every value of its dtype
one the parameter's type holds (a narrower integer, a float for an integer, an integer a float
cannot hold exactly), and the one error that names every scalar of a kernel that does not fit,
with the declarations that do (``narrows_to=`` where an rtp slot's 32-bit word feeds it).

:mod:`aiedsl.kernels.signature` holds the rest of a declaration against its C++ function and
calls :func:`scalar_misfit` for each scalar, :func:`misfits_error` for those that misfit.
"""

from __future__ import annotations

from dataclasses import dataclass

from aiedsl.dtypes import DTYPES, DType
from aiedsl.dtypes import dtype as lookup_dtype
from aiedsl.errors import DesignError, counted, listed
from aiedsl.ir.kernel import Kernel, KernelArg
from aiedsl.kernels.cscan.signatures import C_TYPES, Param

SAME_TYPE = {"int8_t": "signed char", "uint8_t": "unsigned char", "int16_t": "short",
         "short int": "short", "signed short": "short", "uint16_t": "unsigned short",
         "int32_t": "int", "signed": "int", "signed int": "int", "uint32_t": "unsigned int",
         "unsigned": "unsigned int", "int64_t": "long long", "uint64_t": "unsigned long long"}
"""C++'s names of one type (on the core, as ``<stdint.h>`` defines them): a pointer to one
converts to a pointer to the other; ``char`` is a type of its own."""


_SIGNIFICANT_BITS = {"bfloat16": 8, "float": 24, "double": 53}
"""Bits of precision of the C++ floating-point types (the implicit leading one counted): every
integer up to 2 to that power in magnitude is one they hold exactly."""


def _int_ranges(base: str) -> list[tuple[int, int]]:
    """The values integer C type ``base`` holds, as (lowest, highest): one range, or, for
    ``char``, whose signedness is the compiler's, both it may have."""
    bits = 8 * C_TYPES[base][0]
    signed = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1)
    unsigned = (0, (1 << bits) - 1)
    if base == "char":
        return [signed, unsigned]
    return [unsigned] if base.startswith(("u", "unsigned")) else [signed]


def _holds(base: str, d: DType) -> bool:
    """Does C type ``base`` hold every value of dtype ``d`` exactly, so that converting one to
    it (as a C++ call does) changes nothing?"""
    is_float = C_TYPES[base][1]
    if not d.is_float:
        lo, hi = _int_ranges(d.cpp)[0]  # int8_t, uint8_t, int16_t, int32_t
        if is_float:
            return max(-lo, hi) <= 1 << _SIGNIFICANT_BITS[base]
        return any(a <= lo and hi <= b for a, b in _int_ranges(base))
    # a float converted to an integer loses its fraction; bf16 and f32 share float's exponent
    # range, so only the significand can be short
    return is_float and _SIGNIFICANT_BITS[base] >= _SIGNIFICANT_BITS[d.cpp]


def _dtype_of(base: str) -> DType | None:
    """The aiedsl dtype whose C++ type is ``base`` (under any of its names), if there is one."""
    same = SAME_TYPE.get(base, base)
    return next((d for d in DTYPES.values() if SAME_TYPE.get(d.cpp, d.cpp) == same), None)


@dataclass(frozen=True)
class Misfit:
    """A scalar of another type than its parameter's, and its error's parts: ``message``,
    ``found`` and ``fix`` as one error says them, ``how`` the fix in a word (``narrow``: the
    C++ type, or narrows_to= it; ``type``: the C++ type, or the C++ changed; ``cpp``: the C++
    changed), ``spelled`` the declarations it suggests."""

    arg: KernelArg
    param: Param
    nth: str
    message: str
    found: str
    fix: str
    how: str
    have: DType
    base: str
    spelled: tuple[str, ...]


def scalar_misfit(k: Kernel, a: KernelArg, p: Param, nth: str, where: str) -> Misfit | None:
    """A scalar is a value its parameter takes. Without ``entry=`` the core calls the ``extern
    "C"`` function directly and converts nothing: the scalar has the parameter's size and kind,
    or an integer scalar's ``narrows_to=`` type has them (its value is checked to lie in that
    type's range, so the wider integer holds it extended, as a C caller passes it). Through
    ``entry=`` the generated call converts the scalar to the parameter's type: the type holds
    every value the scalar can carry (those of its ``narrows_to=`` type, when it has one).
    None when it is; else what is wrong, for :func:`misfits_error`."""
    have = lookup_dtype(a.dtype)
    narrow = None if a.narrows_to is None else lookup_dtype(a.narrows_to)
    base = p.base or ""
    size, is_float = C_TYPES[base]
    if k.entry is None:
        bits_of = [have] + ([narrow] if narrow is not None and not narrow.is_float else [])
        if any(d.itemsize == size and d.is_float == is_float for d in bits_of):
            return None
    elif _holds(base, narrow or have):
        return None
    kind = "floating-point number" if is_float else "integer"
    ints = _int_ranges(base)[0] if not is_float else (0, 0)
    outside = f"a value outside {ints[0]} to {ints[1]}"
    if k.entry is None:
        how = "the core's call converts nothing: "
        if have.is_float != is_float:
            how += f"the C++ receives the {have.name}'s bits as {_an(base)}, not its value"
        elif have.itemsize < size:
            how += (f"the C++ reads {size} bytes where the call passes {have.itemsize}, the "
                    f"upper {size - have.itemsize} whatever the register held")
        else:
            how += (f"the C++ reads {counted(size, 'byte')} of the call's {have.itemsize}, so "
                    + (f"it receives part of the {have.name}'s bits, not its value" if is_float
                       else f"{outside} is not what it receives"))
    else:
        how = f"the generated call converts the {have.cpp} to {base}"
        if have.is_float and not is_float:
            how += ", truncating it (2.5 arrives as 2)"
        elif have.is_float:
            how += f", rounding it to {_SIGNIFICANT_BITS[base]} significant bits"
        elif is_float:
            how += (f": an integer beyond {1 << _SIGNIFICANT_BITS[base]} in magnitude arrives "
                    "rounded")
        else:
            how += f": {outside} arrives changed"
    want = _dtype_of(base)
    equals = f", equals={a.equals}" if a.equals is not None else ""  # kept in what fix spells
    spelled: tuple[str, ...] = ()
    if want is None:
        fix_how = "cpp"
        fix = f"change the C++ parameter to {have.cpp}" + (
            f" (no aiedsl scalar type has {size} bytes)" if k.entry is None else "")
    elif want.is_float == have.is_float and _holds(have.cpp, want) and (
            k.entry is not None or not want.is_float):
        # a narrower type of the scalar's kind: narrows_to= says the C++ takes it so, and
        # holds the values passed (an rtp slot's i32 words too) to its range
        fix_how = "narrow"
        spelled = (f"scalar('{a.name}', {want.name}{equals})",
                   f"scalar('{a.name}', {have.name}{equals}, narrows_to={want.name})")
        fix = (f"declare it {spelled[0]}, or {spelled[1]} to pass {_an(have.name)}"
               + (" (as an rtp slot holds)" if have.name == "i32" else "")
               + f" whose values `aiedsl check` keeps in {base}'s range")
    else:
        fix_how, spelled = "type", (f"scalar('{a.name}', {want.name}{equals})",)
        fix = (f"declare it {spelled[0]}, the type the C++ takes, "
               f"or change the C++ parameter to {have.cpp}")
    narrowed = f", narrows_to={narrow.name}" if narrow is not None else ""
    return Misfit(
        a, p, nth, message=f"kernel '{k.symbol}' passes scalar '{a.name}' of {a.dtype} "
        f"({have.cpp}{narrowed}, {counted(have.itemsize, 'byte')}) as the {nth} argument of "
        f"{where}, which takes {p.text} ({_an(f'{size}-byte {kind}')}), and {how}",
        found=f"{a.dtype}{f' (narrows_to={narrow.name})' if narrow else ''} for {p.text}",
        fix=fix, how=fix_how, have=have, base=base, spelled=spelled)


def misfits_error(k: Kernel, misfits: list[Misfit]) -> DesignError:
    """The error of kernel ``k``'s scalars of other types than their parameters': the first
    one's, as it is alone; with more, a clause naming them ends its message, a found: line
    says each, and the fix gives every one's declaration."""
    first, more = misfits[0], misfits[1:]
    limit = ("a scalar's type is its C++ parameter's: the same size and kind, or an integer "
             "scalar's narrows_to= type (without entry=, the core's call converts nothing)"
             if k.entry is None else
             "a scalar's type is one whose every value its C++ parameter holds (through "
             "entry=, the generated call converts the scalar to the parameter's type; with "
             "narrows_to=, every value of that type)")
    if not more:
        return DesignError("kernel signature", first.message, loc=k.loc, limit=limit,
                           found=first.found, fix=first.fix)
    names = quoted([m.arg.name for m in more])
    one = len(more) == 1
    message = (f"{first.message}; and {counted(len(more), 'more scalar')} "
               f"{'does' if one else 'do'} not fit {'its' if one else 'their'} "
               f"parameter{'' if one else 's'} either: {names}")
    # each further one on a line of its own (the fields are one line each otherwise)
    found = "\n".join([first.found] + [
        f"  found: {m.found} (scalar '{m.arg.name}', the {m.nth} argument)" for m in more])
    return DesignError("kernel signature", message, loc=k.loc, limit=limit, found=found,
                       fix=_misfits_fix(misfits))


def _misfits_fix(misfits: list[Misfit]) -> str:
    """One fix for every misfit scalar: their declarations together when each is fixed alike
    from the same dtype, else each one's fix in turn."""
    have = misfits[0].have
    how = misfits[0].how
    if how == "cpp" or any(m.how != how or m.have != have for m in misfits):
        return "; ".join(f"for '{m.arg.name}', {m.fix}" for m in misfits)
    first = listed([m.spelled[0] for m in misfits])
    if how == "type":
        return (f"declare them {first}, the types the C++ takes, or change the C++ "
                f"parameters to {have.cpp}")
    bases = list(dict.fromkeys(m.base for m in misfits))
    ranges = (f"{bases[0]}'s range" if len(bases) == 1 else
              f"the ranges of {listed(bases)}")
    return (f"declare them {first}, or {listed([m.spelled[1] for m in misfits])} to pass "
            f"{have.name}s" + (" (as rtp slots hold)" if have.name == "i32" else "")
            + f" whose values `aiedsl check` keeps in {ranges}")


def _an(noun: str) -> str:
    """``noun`` after its indefinite article, as it is read aloud: ``an int32_t``, ``a
    uint8_t``, ``an unsigned int``, ``an f32``, ``an 8-byte integer``, ``a 4-byte integer``."""
    spoken_vowel = ("8", "11", "18", "a", "e", "i", "o", "unsigned", "f16", "f32", "f64")
    return f"{'an' if noun.startswith(spoken_vowel) else 'a'} {noun}"


def quoted(names: list[str]) -> str:
    """``'R'``, ``'R' and 'C'``, ``'R', 'C' and 'X'``."""
    q = [f"'{n}'" for n in names]
    return q[0] if len(q) == 1 else f"{', '.join(q[:-1])} and {q[-1]}"
