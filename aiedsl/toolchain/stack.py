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
smallest frame of a function by the entry's name: a lower bound (the core's own code, which
aiecc compiles, and deeper calls add to it), so a kernel over its core's stack is certainly
over.

>>> parse_su("kernels/k.cc:k\\t8224\\tstatic\\n")
{'k': 8224}
>>> mangled_name("_ZN2ns11passthroughIiLi1024EEvPT_S1_")
'passthrough'
>>> mangled_name("_ZN2ns6KernelIiE3runEPi"), mangled_name("_ZL4workPKiPi")
('run', 'work')
"""

from __future__ import annotations

from pathlib import Path

from aiedsl.errors import ToolchainError
from aiedsl.ir import Design, Kernel
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
    if not symbol.startswith("_Z"):
        return None
    i, last = 2, None
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
        last = name
        if symbol[i:i + 1] == "I":  # template arguments: skipped, a nested name may go on
            i = _skip_arguments(symbol, i)
            if i < 0:
                return None
        if not nested:
            break
    return last


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


def kernel_frame(k: Kernel, frames: dict[str, int]) -> int | None:
    """The least stack kernel ``k`` needs, from the frames of its ``.su`` file; None when its
    entry is not listed."""
    own = frames.get(k.symbol)
    if own is None:
        return None
    callee = entry_function(k)
    apart = [size for name, size in frames.items()
             if callee is not None and name != k.symbol and mangled_name(name) == callee]
    return max(own, min(apart)) if apart else own


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
            frame = kernel_frame(k, frames)
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
