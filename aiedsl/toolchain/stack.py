"""Whether each kernel's stack frame fits the stack of the cores that call it, as Peano says.

A core's stack is ``stack_size`` bytes of its data memory (``@herd(stack=...)``); nothing on the
AIE checks it at run time, so a kernel with a large local array writes past it into whatever
buffer lies beyond, silently. Peano compiles each kernel with ``-fstack-usage`` (clang's option,
any LLVM target: ``AsmPrinter::emitStackUsage``), which writes ``<object stem>.su`` beside the
object, a line per function emitted::

    kernels/k.cc:k\t8224\tstatic

(the source file, then ``:line`` when there is debug information, then the function's name,
mangled unless ``extern "C"``, its frame in bytes and ``static`` or ``dynamic``). The kernel's
``extern "C"`` entry calls the C++ function its declaration names (``entry=``); that call is
usually inlined, and the function may be listed under its mangled name all the same (an
external function is emitted whether or not its one call was inlined), so the file cannot say
whether the two frames stack. A kernel needs at least the larger of its entry's frame and the
frame of its own instantiation of the function ``entry=`` names: the one whose mangled template
arguments are those ``entry=`` spells (``big<2048>``: ``_Z3bigILi2048EE...``). Several kernels
of one object may call one template (``big<64>``, ``big<2048>``), so another kernel's
instantiation never counts; when the arguments cannot be read (a type aiedsl does not spell, an
expression), the smallest frame of the name counts only when no other kernel of the object calls
a function of that name. A lower bound all the same (the core's own code, which aiecc compiles,
and deeper calls add to it), so a kernel over its core's stack is certainly over.

A kernel without ``entry=`` is the source's own ``extern "C"`` function: only its frame is
counted. The functions it calls that the compiler did not inline add theirs on the core, but a
``.su`` file has no call graph (nor could the text say which of the file's templates it calls),
so they cannot be added without guessing: the check says nothing of them.

>>> parse_su("kernels/k.cc:k\\t8224\\tstatic\\n")
{'k': 8224}
>>> mangled_name("_ZN2ns11passthroughIiLi1024EEvPT_S1_")
'passthrough'
>>> mangled_name("_ZN2ns6KernelIiE3runEPi"), mangled_name("_ZL4workPKiPi")
('run', 'work')
>>> mangled_arguments("_Z3bigILi2048EEvPiS0_"), entry_arguments("ns::big<int16_t, 2048>")
([('value', 2048)], [('type', ('s',)), ('value', (2048,))])
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Sequence

from aiedsl.errors import ToolchainError
from aiedsl.ir.design import Design
from aiedsl.ir.kernel import Kernel
from aiedsl.ir.program import calls
from aiedsl.kernels.units import kernel_units

SUFFIX = ".su"


def parse_su(text: str) -> dict[str, int]:
    """Frame bytes by function name, from the text of a ``.su`` file (the largest when a name
    is listed twice; lines that are not ``where:name<TAB>bytes<TAB>kind`` are skipped)."""
    out: dict[str, int] = {}
    for line in text.splitlines():
        fields = line.split("\t")
        if len(fields) < 3 or ":" not in fields[0] or not fields[1].isdigit():
            continue
        name = fields[0].rsplit(":", 1)[1]
        out[name] = max(out.get(name, 0), int(fields[1]))
    return out


def mangled_name(symbol: str) -> str | None:
    """The unqualified name of the function an Itanium-mangled ``symbol`` names (the last
    source name of its nested name, template arguments skipped), or None when it is not one
    aiedsl reads."""
    parts = _mangled(symbol)
    return None if parts is None else parts[0]


Argument = tuple[str, object]
"""A template argument as :func:`mangled_arguments` reads it: ``("value", 2048)`` for an integer
(or bool) literal, ``("type", "i")`` for a builtin type by its mangled letter; None in a list
for one it does not read."""


def mangled_arguments(symbol: str) -> list[Argument | None] | None:
    """The template arguments of the function an Itanium-mangled ``symbol`` names (``[]`` for a
    function that is not a template); None when they cannot be told apart: not a name aiedsl
    reads, or the template arguments of an enclosing class (``Kernel<int>::run``)."""
    parts = _mangled(symbol)
    return None if parts is None else parts[1]


def _mangled(symbol: str) -> tuple[str, list[Argument | None] | None] | None:
    """:func:`mangled_name` and :func:`mangled_arguments` of ``symbol``, or None."""
    if not symbol.startswith("_Z"):
        return None
    i, last = 2, None
    arguments: list[Argument | None] | None = []
    nested = symbol[i:i + 1] == "N"
    if nested:
        i += 1
        while i < len(symbol) and symbol[i] in "rVK":  # the member function's qualifiers
            i += 1
    while i < len(symbol):
        if symbol[i] == "L":  # internal linkage: a static function
            i += 1
        if not symbol[i:i + 1].isdigit():
            break
        name, i = _source_name(symbol, i)
        if name is None:
            return None
        if last is not None and arguments != []:  # an enclosing class's arguments: unread
            arguments = None
        last = name
        if arguments is not None:
            arguments = []
        if symbol[i:i + 1] == "I":  # template arguments: read, a nested name may go on
            end = _skip_arguments(symbol, i)
            if end < 0:
                return None
            if arguments is not None:
                arguments = _read_arguments(symbol[i + 1:end - 1])
            i = end
        if not nested:
            break
    return None if last is None else (last, arguments)


_BUILTIN = "vwbcahstijlmxynofdeg"
"""The mangled letters of C++'s builtin types (``i`` int, ``s`` short, ``f`` float ...)."""


def _read_arguments(text: str) -> list[Argument | None] | None:
    """The template arguments ``text`` (what is between a mangled ``I`` and its ``E``) holds,
    each read or None; None when they cannot be split apart."""
    out: list[Argument | None] = []
    i = 0
    while i < len(text):
        c = text[i]
        if c in _BUILTIN:
            out.append(("type", c))
            i += 1
        elif c == "L":  # a literal: L <builtin type> <number> E (n: negative), or another
            end = _skip_arguments(text, i)
            if end < 0:
                return None
            m = re.fullmatch(r"L([bcahstijlmxy])(n?)(\d+)E", text[i:end])
            out.append(("value", (-1 if m[2] else 1) * int(m[3])) if m else None)
            i = end
        else:  # a type aiedsl does not read: skipped whole
            end = _skip_type(text, i)
            if end < 0:
                return None
            out.append(None)
            i = end
    return out


def _skip_type(text: str, i: int) -> int:
    """Where the mangled type starting at ``i`` ends; -1 if aiedsl cannot tell."""
    c = text[i]
    if c in "PROKVr":  # pointer, reference, const ...: then the type
        return _skip_type(text, i + 1) if i + 1 < len(text) else -1
    if c in _BUILTIN:
        return i + 1
    if c.isdigit():  # a class, maybe a template of its own
        name, end = _source_name(text, i)
        if name is None:
            return -1
        return _skip_arguments(text, end) if text[end:end + 1] == "I" else end
    if c == "D":  # DF16b (bfloat16), DF16_, Dh, Dn ...
        m = re.match(r"DF\d+[b_]|D[a-zA-Z]", text[i:])
        return -1 if m is None else i + m.end()
    if c in "NXJ":  # a nested name, an expression, an argument pack: up to their E
        return _skip_arguments(text, i)
    if c in "ST":  # a substitution or a template parameter: S_, S0_, T_, T1_ (St: std::)
        if text.startswith("St", i):
            return _skip_type(text, i + 2)
        end = text.find("_", i)
        return -1 if end < 0 else end + 1
    return -1


def entry_arguments(entry: str | None) -> list[tuple[str, tuple[object, ...]] | None] | None:
    """The template arguments an ``entry=`` expression gives the function it calls, each as
    the mangled forms it may take: ``("value", (64,))``, ``("type", ("i", "l"))`` (int32_t is
    int or long, as the target's C library says), None for one aiedsl does not read (a type it
    does not know, an expression). ``[]`` for a function called without; None when an
    enclosing class takes template arguments (``Kernel<int>::run``) or there is no entry."""
    if entry is None:
        return None
    head = entry.split("(", 1)[0].strip()
    depth, start = 0, -2  # where the last name begins, after the last :: outside <...>
    for i, c in enumerate(head):
        depth += (c == "<") - (c == ">")
        if depth == 0 and head.startswith("::", i):
            start = i
    last = head[start + 2:]
    if "<" in head[:max(start, 0)]:
        return None
    if "<" not in last:
        return []
    inner = last[last.index("<") + 1:last.rindex(">")]
    parts, depth, word = [], 0, ""
    for c in inner:
        if c == "," and depth == 0:
            parts.append(word)
            word = ""
            continue
        depth += (c == "<") - (c == ">")
        word += c
    parts.append(word)
    return [_entry_argument(" ".join(p.split())) for p in parts]


_TYPE_LETTERS: dict[str, tuple[str, ...]] = {
    "bool": ("b",), "char": ("c",), "signed char": ("a",), "unsigned char": ("h",),
    "short": ("s",), "short int": ("s",), "unsigned short": ("t",), "int": ("i",),
    "signed": ("i",), "signed int": ("i",), "unsigned": ("j",), "unsigned int": ("j",),
    "long": ("l",), "unsigned long": ("m",), "long long": ("x",), "unsigned long long": ("y",),
    "float": ("f",), "double": ("d",), "int8_t": ("a",), "uint8_t": ("h",),
    "int16_t": ("s",), "uint16_t": ("t",), "int32_t": ("i", "l"), "uint32_t": ("j", "m"),
    "int64_t": ("l", "x"), "uint64_t": ("m", "y"),
}


def _entry_argument(text: str) -> tuple[str, tuple[object, ...]] | None:
    """One template argument of an ``entry=`` (:func:`entry_arguments`)."""
    text = text.removeprefix("std::")
    if text in _TYPE_LETTERS:
        return ("type", _TYPE_LETTERS[text])
    if text in ("true", "false"):
        return ("value", (int(text == "true"),))
    m = re.fullmatch(r"([+-]?)(0[xX][0-9a-fA-F]+|[1-9][0-9]*|0)[uUlL]*", text)
    if m is None:
        return None
    return ("value", ((-1 if m[1] == "-" else 1) * int(m[2], 0),))


def arguments_match(entry: list[tuple[str, tuple[object, ...]] | None] | None,
                    mangled: list[Argument | None] | None) -> bool | None:
    """Are ``mangled`` (:func:`mangled_arguments`) the template arguments ``entry``
    (:func:`entry_arguments`) gives? True or False when that is certain, None when it is not
    (an argument not read, or defaulted ones the entry leaves out)."""
    if entry is None or mangled is None:
        return None
    certain = len(entry) == len(mangled)
    for want, got in zip(entry, mangled):
        if want is None or got is None:
            certain = False
            continue
        if want[0] != got[0] or got[1] not in want[1]:
            return False
        certain = certain and len(want[1]) == 1
    return True if certain else None


def _source_name(symbol: str, i: int) -> tuple[str | None, int]:
    """The ``<length><name>`` at ``i``, and where it ends."""
    j = i
    while j < len(symbol) and symbol[j].isdigit():
        j += 1
    n = int(symbol[i:j])
    name = symbol[j:j + n]
    return (name if len(name) == n else None), j + n


def _skip_arguments(symbol: str, i: int) -> int:
    """Where the template arguments opening at ``i`` (``I ... E``) end; -1 if they do not."""
    opened: list[str] = []  # the parts an E closes, innermost last
    typed = True  # False right after a literal's L: its type comes first
    while i < len(symbol):
        c = symbol[i]
        if not typed:
            typed = True
            if c.isdigit():  # a named type (an enum: L6Layout1E), skipped whole
                _, i = _source_name(symbol, i)
            else:  # a builtin's letter (Li64E)
                i += 1
            continue
        if c == "D" and symbol[i + 1:i + 2] == "F":  # DF16b (bfloat16), DF16_: no source name
            i += 2
            while i < len(symbol) and symbol[i].isdigit():
                i += 1
            i += 1
            continue
        if c.isdigit():
            if opened and opened[-1] == "L":  # a literal's value (Li1024E): a number
                while i < len(symbol) and symbol[i].isdigit():
                    i += 1
                continue
            name, i = _source_name(symbol, i)  # a name: skipped whole (it may hold an E)
            if name is None:
                return -1
            continue
        if c in "ILXN":
            opened.append(c)
            typed = c != "L"
        elif c == "E":
            if not opened:
                return -1
            opened.pop()
            if not opened:
                return i + 1
        i += 1
    return -1


def entry_function(k: Kernel) -> str | None:
    """The unqualified name of the C++ function kernel ``k``'s entry calls
    (``ns::matmul<64, 64>`` -> ``matmul``, ``Kernel<int>::run`` -> ``run``); None for a kernel
    without ``entry=``, whose symbol is the source's own function."""
    if k.entry is None:
        return None
    plain, depth = [], 0
    for c in k.entry.split("(", 1)[0]:  # template arguments dropped, nested ones too
        depth += (c == "<") - (c == ">")
        if depth == 0 and c not in "<>":
            plain.append(c)
    return "".join(plain).strip().rsplit("::", 1)[-1].strip()


def kernel_frame(k: Kernel, frames: dict[str, int],
                 others: Sequence[Kernel] = ()) -> int | None:
    """The least stack kernel ``k`` needs, from the frames of its object's ``.su`` file
    (``others``: the object's other kernels); None when its entry is not listed.

    Its own instantiation of the function ``entry=`` calls counts, told by its template
    arguments; one whose arguments cannot be read counts only when no kernel of ``others``
    calls a function of that name (it may be theirs). A kernel without ``entry=``: its own
    frame (see the module's docstring)."""
    own = frames.get(k.symbol)
    if own is None:
        return None
    callee = entry_function(k)
    if callee is None:
        return own
    want = entry_arguments(k.entry)
    mine, unsure = [], []
    for name, size in frames.items():
        if name == k.symbol or mangled_name(name) != callee:
            continue
        match = arguments_match(want, mangled_arguments(name))
        if match:
            mine.append(size)
        elif match is None:
            unsure.append(size)
    if not mine and not any(entry_function(o) == callee for o in others if o is not k):
        mine = unsure
    return max(own, min(mine)) if mine else own


def kernel_frames(d: Design, out: Path) -> dict[str, int]:
    """The least stack each kernel of ``d`` needs, by symbol, read off the ``.su`` files Peano
    wrote in build directory ``out``, one per object (:mod:`aiedsl.kernels.units`: the kernels
    of one source share it); a kernel its object's file does not list is left out."""
    found = {}
    for unit in kernel_units(d.kernels):
        try:
            text = (out / f"{unit.name}{SUFFIX}").read_text(errors="replace")
        except OSError:
            continue
        frames = parse_su(text)
        for k in unit.kernels:
            frame = kernel_frame(k, frames, unit.kernels)
            if frame is not None:
                found[k.symbol] = frame
    return found


def stack_overflow(d: Design, frames: dict[str, int]) -> ToolchainError | None:
    """The error for the first call (core by core, in program order) of a kernel whose frame
    is larger than its core's stack; None when every one fits."""
    unit = {k.symbol: u.name for u in kernel_units(d.kernels) for k in u.kernels}
    for core in d.cores:
        for call in calls(core):
            need = frames.get(call.kernel)
            if need is None or need <= core.stack:
                continue
            suggest = (need // 1024 + 2) * 1024
            return ToolchainError(
                "kernel stack", f"kernel '{call.kernel}' needs at least {need:,} bytes of "
                f"stack, more than the {core.stack:,} {core.name} reserves",
                loc=call.loc, exit_code=5,
                limit=f"{core.stack:,} bytes of stack on {core.name} (its herd's stack=, "
                "mlir-aie's stack_size; nothing on the core checks it: a kernel past it writes "
                "over the buffers beyond)",
                found=f"{need:,} bytes: its largest frame as Peano compiled it "
                f"({unit[call.kernel]}{SUFFIX}, from -fstack-usage), before what the core's own "
                "code and deeper calls need",
                notes=[f"{core.name}'s herd: {core.loc.file}:{core.loc.line}"],
                fix=f"give the herd more stack, e.g. @herd(..., stack={suggest}) (it comes "
                "out of the core's data memory), or keep the kernel's large local arrays "
                "out of its frame (static, or a fifo buffer passed in)")
    return None
