"""A file kernel's declaration held against the C++ function it calls: as many arguments as the
function takes, a buffer where it takes a pointer and a scalar where it takes a value, each
buffer's element type the one it points to, each scalar's type one its parameter takes, the
arguments in its order, and, for a function template, the template arguments the call must give.

Each is a mistake the compilers report far from the design, or not at all: through ``entry=``
g++ and Peano refuse the generated call in ``kernels/<name>.cc``, or convert a scalar to its
parameter's type unseen; without it the core calls the ``extern "C"`` function with whatever the
design declared, so a kernel reading 4-byte elements from a buffer of 2-byte ones runs past its
end, and one taking an ``int32_t`` given an f32 reads the float's bits. Only what the scan reads
soundly is judged (:meth:`~aiedsl.kernels.cscan.CScan.signature`): a type it does not know (a
typedef, a class, a template parameter) and an overloaded function are left to the compilers.
"""

from __future__ import annotations

import re

from aiedsl.dtypes import dtype as lookup_dtype
from aiedsl.errors import DesignError
from aiedsl.ir.kernel import Kernel, KernelArg
from aiedsl.kernels.cscan import CScan
from aiedsl.kernels.cscan.signatures import C_TYPES, Param, Signature
from aiedsl.kernels.cscan.tokens import identifier, lex
from aiedsl.kernels.entry_scope import LANGUAGE, file_scope
from aiedsl.lang.names import entry_head
from aiedsl.kernels.scalar_fit import SAME_TYPE, Misfit, misfits_error, quoted, scalar_misfit

_ORDINAL = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth")

def check_signature(k: Kernel, name: str, src_label: str, scan: CScan) -> None:
    """Kernel ``k``'s arguments fit ``name``, the function it calls in its C++ (``src_label``
    names the file; ``scan`` is its scan): see the module's docstring. Nothing is said where
    the scan cannot read the function's one signature."""
    sig = scan.signature(name)
    if k.entry is not None and scan.entry_complete:
        _check_entry_names(k, sig, name, src_label, scan)
    if sig is None:
        return
    where = f"{src_label}'s {name} (its line {sig.line})"
    takes = f"{name}({', '.join(p.text for p in sig.params)})"
    if k.entry is not None and sig.template is not None:
        _check_template_args(k, sig, name, where, scan)
    # a C call from the core gives every parameter: defaults apply only through entry=
    need = len(sig.params) - (sig.defaults if k.entry is not None else 0)
    if not sig.variadic and not need <= len(k.args) <= len(sig.params):
        count = f"{len(sig.params)}" if need == len(sig.params) else (
            f"{need} to {len(sig.params)}")
        raise DesignError(
            "kernel signature", f"kernel '{k.symbol}' declares {len(k.args)} argument"
            f"{'s' if len(k.args) != 1 else ''}, and {where} takes {count}", loc=k.loc,
            limit="the kernel's args= are the C++ function's parameters, in its order",
            found=f"args {', '.join(a.name for a in k.args) or 'none'}; {takes}",
            fix=f"declare one buffer() or scalar() per parameter of {name}, in its order")
    misfits: list[Misfit] = []  # the scalars of another type than their parameter's
    for i, (a, p) in enumerate(zip(k.args, sig.params)):
        nth = _ORDINAL[i] if i < len(_ORDINAL) else f"#{i + 1}"
        try:
            _check_argument(k, a, p, nth, where)
        except DesignError:
            if not misfits:
                raise
            # a misfit scalar comes first, as before; past another mistake (a buffer for a
            # value, say) the arguments may not be the parameters they seem: no more is judged
            break
        if a.kind == "scalar" and _valued(p):
            misfit = scalar_misfit(k, a, p, nth, where)
            if misfit is not None:
                misfits.append(misfit)
    if misfits:
        raise misfits_error(k, misfits)
    _check_order(k, sig, where, takes)


def _check_argument(k: Kernel, a: KernelArg, p: Param, nth: str, where: str) -> None:
    """Argument ``a`` of kernel ``k``, its ``nth``, is the kind of argument parameter ``p``
    takes (a buffer for a pointer, a scalar for a value that the call binds), and a buffer's
    elements are the type ``p`` points to. A scalar's type is
    :func:`~aiedsl.kernels.scalar_fit.scalar_misfit`'s."""
    if a.kind == "buffer" and not p.pointer and p.base is not None:
        # (a typedef or a template parameter may be a pointer: only a C type is a value)
        raise DesignError(
            "kernel signature", f"kernel '{k.symbol}' passes buffer '{a.name}' as the {nth} "
            f"argument of {where}, which takes a value there: {p.text}", loc=k.loc,
            limit="a buffer argument is a pointer parameter in the C++",
            found=f"buffer('{a.name}', ...) for {p.text}",
            fix=f"declare it scalar('{a.name}', ...), or check the order of args=")
    if a.kind == "scalar" and p.pointer:
        raise DesignError(
            "kernel signature", f"kernel '{k.symbol}' passes scalar '{a.name}' as the {nth} "
            f"argument of {where}, which takes a pointer there: {p.text}", loc=k.loc,
            limit="a pointer parameter in the C++ is a buffer argument",
            found=f"scalar('{a.name}', ...) for {p.text}",
            fix=f"declare it buffer('{a.name}', Tensor[...]), or check the order of args=")
    if a.kind == "scalar" and p.reference and k.entry is None:
        # the core's func.call passes the value; the C ABI takes a reference's address
        value = f"{p.base} {p.name}" if p.base and p.name else "a plain value"
        raise DesignError(
            "kernel signature", f"kernel '{k.symbol}' passes scalar '{a.name}' as the {nth} "
            f"argument of {where}, which takes a C++ reference there: {p.text}", loc=k.loc,
            limit="a scalar argument is a parameter taken by value: the core's call passes "
            "the value, where the C ABI passes a reference as an address (the kernel would "
            "read the value as a pointer)", found=f"scalar('{a.name}', ...) for {p.text}",
            fix=f"take it by value in the C++ ({value})")
    if a.kind == "scalar" and p.reference and k.entry is not None and "&&" in p.text:
        # the generated entry passes its own parameter, an lvalue
        value = f"{p.base} {p.name}" if p.base and p.name else "a plain value"
        raise DesignError(
            "kernel signature", f"kernel '{k.symbol}' passes scalar '{a.name}' as the {nth} "
            f"argument of {where}, which takes an rvalue reference there: {p.text}",
            loc=k.loc, limit="the generated entry passes each scalar as its own parameter, "
            "which an rvalue reference (&&) does not bind (g++: cannot bind rvalue reference "
            "to lvalue)", found=f"scalar('{a.name}', ...) for {p.text}",
            fix=f"take it by value ({value}) or by const reference in the C++")
    if a.kind == "buffer" and p.base is not None and p.base != "void":
        _check_element(k, a.name, a.dtype, p, nth, where)


def _valued(p: Param) -> bool:
    """Is ``p`` a parameter of a C type, not a pointer (a scalar's type is judged there)?"""
    return not p.pointer and p.base is not None and p.base != "void"


def _check_element(k: Kernel, arg: str, dt: str, p: Param, nth: str, where: str) -> None:
    """A buffer's elements are what the parameter points to: the same C++ type through
    ``entry=`` (the generated call converts no pointer), the same size and kind without."""
    have = lookup_dtype(dt)
    base = p.base or ""
    size, is_float = C_TYPES[base]
    if k.entry is not None:
        ok = SAME_TYPE.get(base, base) == SAME_TYPE.get(have.cpp, have.cpp)
    else:
        ok = size == have.itemsize and is_float == have.is_float
    if ok:
        return
    kind = "floating-point" if is_float else "integer"
    raise DesignError(
        "kernel signature", f"kernel '{k.symbol}' passes buffer '{arg}' of {dt} "
        f"({have.cpp}, {have.itemsize}-byte elements) as the {nth} argument of {where}, "
        f"which takes {p.text} ({size}-byte {kind} elements)", loc=k.loc,
        limit="a buffer's element type is the type its C++ parameter points to" + (
            " (through entry=, the generated call passes a pointer of the buffer's type, and "
            "C++ converts no pointer to another element type)" if k.entry is not None else ""),
        found=f"{dt} for {p.text}",
        fix=f"declare '{arg}' with the element type the C++ takes, or point the C++ "
            f"parameter at {have.cpp}")


def _check_order(k: Kernel, sig: Signature, where: str, takes: str) -> None:
    """Arguments named as the C++ names its parameters, but in another order: swapped."""
    theirs = [p.name for p in sig.params]
    mine = [a.name for a in k.args]
    if len(theirs) != len(mine) or None in theirs or theirs == mine or (
            sorted(n or "" for n in theirs) != sorted(mine)):
        return
    first = next(i for i, (a, b) in enumerate(zip(mine, theirs)) if a != b)
    raise DesignError(
        "kernel signature", f"kernel '{k.symbol}' declares its arguments in the order "
        f"{', '.join(mine)}; {where} takes the same names in the order "
        f"{', '.join(n or '' for n in theirs)}", loc=k.loc,
        limit="the kernel's args= are the C++ function's parameters, in its order",
        found=f"argument {first + 1} is '{mine[first]}' here and '{theirs[first]}' in {takes}",
        fix=f"list args= in {', '.join(n or '' for n in theirs)} order (and pass them so "
            "in the core's call)")


def _check_template_args(k: Kernel, sig: Signature, name: str, where: str,
                         scan: CScan) -> None:
    """A call of a function template gives the template arguments no parameter deduces."""
    entry = k.entry or ""
    given = _template_args(entry)
    head = entry_head(entry) or name  # as spelled: ns::f, qualified
    for i, (arg, param) in enumerate(zip(given or (), sig.template or ())):
        if param in sig.types and re.fullmatch(r"[-+]?\d[\d']*[uUlL]*", arg):
            raise DesignError(
                "kernel entry", f"kernel '{k.symbol}' calls {where} with the template argument "
                f"{arg} for its type parameter {param} (entry=\"{entry}\"): a number is not a "
                "type", loc=k.loc, limit="template arguments fill the parameters in order: a "
                "type for typename and class, a value for the others",
                found=f"entry=\"{entry}\"; {name}'s template parameters: "
                      f"{', '.join(_kinded(sig))}",
                fix=f"give a type first, e.g. entry=\"{head}<{_example(sig, given or [], k)}>\"")
    undeducible = sig.undeducible()
    # template arguments fill the parameters in order: those past the given ones come from
    # deduction or defaults
    missing = [t for i, t in enumerate(sig.template or ())
               if t in undeducible and i >= len(given or ())]
    if missing:
        guesses = _missing_values(sig, missing, k)
        values = ", ".join([*(given or ()), *guesses.values()])
        what = ("without template arguments" if given is None else
                f"with {len(given)} template argument{'s' if len(given) != 1 else ''}")
        raise DesignError(
            "kernel entry", f"kernel '{k.symbol}' calls {where}, a function template, "
            f"{what} (entry=\"{entry}\"), and no argument's type gives its "
            f"{', '.join(missing)}: the compiler cannot deduce "
            f"{'it' if len(missing) == 1 else 'them'}", loc=k.loc,
            limit="entry= spells the call's template arguments that no parameter deduces",
            found=f"entry=\"{entry}\"; {name}'s template parameters: "
                  f"{', '.join(_kinded(sig))}",
            fix=f"give them in entry=, e.g. entry=\"{head}<{values}>\""
                + _guess_words(sig, guesses))
def _check_entry_names(k: Kernel, sig: Signature | None, name: str, src_label: str,
                       scan: CScan) -> None:
    """Every name in ``entry=``'s template arguments is one the generated call sees, after
    the file, outside every function and template (:mod:`aiedsl.kernels.entry_scope`): not a
    Python variable spelled inside the string, nor the template's own parameter name."""
    entry = k.entry or ""
    given = _template_args(entry)
    if not given:
        return
    unseen: list[str] = []
    scope = None
    for arg in given:
        toks = lex(arg, 0, len(arg))
        for j, t in enumerate(toks):
            word = t.text
            # a member or a qualified name (x.n, ns::N, S::N) is its class's or namespace's
            if (not identifier(t) or word in LANGUAGE or word in k.defines or word in unseen
                    or (j > 0 and toks[j - 1].text in ("::", ".", "->"))
                    or (j + 1 < len(toks) and toks[j + 1].text == "::")):
                continue
            scope = scope or file_scope(scan)
            if not scope.sees(word, called=j + 1 < len(toks) and toks[j + 1].text == "("):
                unseen.append(word)
    if not unseen or scope is None:
        return
    own = [w for w in unseen if sig is not None and w in (sig.template or ())]
    inner = [w for w in unseen if w not in own and (w in scope.code
                                                    or w in scope.template_params)]
    python = [w for w in unseen if w not in own and w not in inner]
    parts = []
    if python:
        parts.append(f"{quoted(python)} {_be(python)} nothing the C++ defines")
    if own and sig is not None:
        parts.append(f"{quoted(own)} {_be(own)} {'a' if len(own) == 1 else 'the'} template "
                     f"parameter{'s' * (len(own) != 1)} of {src_label}'s {name} (its line "
                     f"{sig.line})")
    if inner:
        parts.append(f"{quoted(inner)} {'is' if len(inner) == 1 else 'are'} declared in "
                     f"{src_label} only where that call does not see "
                     f"{'it' if len(inner) == 1 else 'them'} (in a function, a class, a "
                     "template's parameters or a named namespace)")
    why = ("entry= is C++ text, so a Python name inside the string is not its value"
           if not own and not inner else
           "entry= is C++ text, called from the extern \"C\" function aiedsl generates "
           "after the file, outside every function and template, where only the file's "
           "top-level names are seen" + ("; a Python name inside the string is not its value"
                               if python else ""))
    spelled = [_braced(arg, unseen) for arg in given]
    undeducible = sig.undeducible() if sig is not None else []
    missing = [t for i, t in enumerate(sig.template or ()) if t in undeducible
               and i >= len(given)] if sig is not None else []
    if missing:  # the fix gives them too
        fixed = f"{name}<{', '.join([*spelled, *(f'{{{m}}}' for m in missing)])}>"
    else:
        fixed = _braced(entry, unseen)
    values = "value" + "s" * (len(unseen) + len(missing) != 1)
    fix = f"put the {values} in the string, e.g. entry=f\"{fixed}\" in Python"
    if not own and not inner:  # a -D of a name the file spells would rewrite the file
        fix += (f", or pass {'it' if len(python) == 1 else 'them'} as defines="
                f"{{{', '.join(f'{w!r}: ...' for w in python)}}}")
    raise DesignError(
        "kernel entry", f"kernel '{k.symbol}' calls {name}<{', '.join(given)}> "
        f"(entry=\"{entry}\"), and {', and '.join(parts)}: {why}", loc=k.loc,
        limit="entry= names only what the C++ sees after the file: its defines=, a macro, a "
        "constant or a type the file declares outside every function, class and template, "
        "or a name of the C++ language, a standard header or the AIE API",
        found=f"{', '.join(repr(w) for w in unseen)} in entry=\"{entry}\"", fix=fix)


def _be(names: list[str]) -> str:
    return "is" if len(names) == 1 else "are"


def _braced(text: str, names: list[str]) -> str:
    """``text`` as an f-string's inside, each of ``names`` standing alone (not a member, not
    qualified) put in braces: ``f<R, C>`` -> ``f<{R}, {C}>``; a brace of its own doubled."""
    out = text.replace("{", "{{").replace("}", "}}")
    for n in names:
        out = re.sub(rf"(?<![\w:.])(?<!->){n}(?!\w|\s*::)", f"{{{n}}}", out)
    return out


def _kinded(sig: Signature) -> list[str]:
    """A template's parameters as its head writes them: ``typename T``, ``N``."""
    return [f"typename {t}" if t in sig.types else t for t in sig.template or ()]


def _missing_values(sig: Signature, missing: list[str], k: Kernel) -> dict[str, str]:
    """A value for each of the ``missing`` template parameters of ``sig`` as a fix can write it:
    a type parameter the C type of ``k``'s first buffer; a value parameter the element count
    its buffers share (a kernel's size parameter, as a rule), else ``...`` to put in. Never a
    ``{N}`` placeholder: an f-string would put in the design's own N, often the whole
    tensor's length, not the buffer's."""
    buffers = [a.type for a in k.args if a.kind == "buffer" and a.type is not None]
    counts = {t.numel for t in buffers}
    out: dict[str, str] = {}
    for m in missing:
        if m in sig.types:
            out[m] = _first_ctype(k)
        elif len(counts) == 1:
            out[m] = str(next(iter(counts)))
        else:
            out[m] = "..."
    return out


def _guess_words(sig: Signature, guesses: dict[str, str]) -> str:
    """What the fix's values for the missing template parameters are, to check against the
    C++."""
    said = [f"{name} = {value} (" + ("its first buffer's C type" if name in sig.types else
                                     "the elements of each of its buffers") + ")"
            for name, value in guesses.items() if value != "..."]
    blank = [name for name, value in guesses.items() if value == "..."]
    words = []
    if said:
        words.append(f"{', '.join(said)}: check that the C++ takes "
                     f"{'it' if len(said) == 1 else 'them'} so")
    if blank:
        words.append(f"put in {' and '.join(blank)} for '...'")
    return f" ({'; '.join(words)})" if words else ""


def _first_ctype(k: Kernel) -> str:
    """The C type of ``k``'s first buffer (int16_t without one): what a fix puts in for a type
    template parameter."""
    return lookup_dtype(next((a.dtype for a in k.args if a.kind == "buffer"), "i16")).cpp


def _example(sig: Signature, given: list[str], k: Kernel) -> str:
    """Template arguments for ``sig`` from those ``given``: for each type parameter the C type
    of ``k``'s first buffer (int32_t for i32), the values given moved on to the value
    parameters after it."""
    ctype = _first_ctype(k)
    values = iter(given)
    return ", ".join(ctype if t in sig.types else next(values, f"{{{t}}}")
                     for t in sig.template or ())


def _template_args(entry: str) -> list[str] | None:
    """The template arguments ``entry`` spells after the function's name, split at the top
    level of ``<>`` and ``()`` (None when it spells none)."""
    at = entry.find("<")
    if at < 0 or "(" in entry[:at]:
        return None
    out, depth, cur = [], 0, ""
    for ch in entry[at + 1:]:
        if ch in "<(":
            depth += 1
        elif ch in ">)":
            if depth == 0:
                break
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    out.append(cur.strip())
    return [a for a in out if a]
