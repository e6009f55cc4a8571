"""Checks of the kernels a design calls: their C++ exists and defines what ``entry=`` calls (and
not the generated entry itself), each core links one object of each C++ file and no symbol two
of its objects both define (and a kernel made for one AI Engine architecture runs on a device
of it: :mod:`aiedsl.kernels.arch`, which ``kernel test`` and ``kernel profile`` hold a design to
as well).

These are the mistakes a build would otherwise write out silently and Peano would report, far
from the design, as an unknown identifier or a function defined twice (lld, as a symbol defined
twice; or, for another architecture's variant, as an mmul shape or intrinsic the target lacks,
with cycles of the wrong device in every report).
"""

from __future__ import annotations

import os
from fractions import Fraction
from typing import Sequence

from aiedsl.errors import DesignError, listed
from aiedsl.ir.core_ops import Call
from aiedsl.ir.design import Design
from aiedsl.ir.kernel import Charge, Kernel
from aiedsl.ir.program import calls
from aiedsl.kernels.cscan import Exported, extern_c
from aiedsl.kernels.source import check_file_kernel, kernel_source, source_file
from aiedsl.kernels.units import KernelUnit, kernel_units, source_key, unit_of
from aiedsl.targets import TargetModel


def check_kernel_sources(d: Design, found_only: bool = False,
                         missing_only: bool = False) -> None:
    """Each template kernel's template is there and renders with its ``params``; each file
    kernel's ``source=`` exists, includes no file of its own (it is built alone, as
    ``kernels/<name>.cc``), and declares the function its ``entry=`` calls but no ``extern "C"``
    function of the kernel's own name; a kernel without ``entry=`` names one it defines.
    ``found_only``: judge only the kernels whose file is there (a missing file is left for the
    full check, later); ``missing_only``: only those whose file is not (the rest were judged
    by a ``found_only`` pass: scanning them again costs a cold ``aiedsl sim`` milliseconds)."""
    for unit in kernel_units(d.kernels):
        for k in unit.kernels:
            if found_only and k.source_kind == "file" and source_file(k) is None:
                continue
            if missing_only and (k.source_kind != "file" or source_file(k) is not None):
                continue
            # kernel_source raises when the file is missing, or a template does not render
            try:
                check_file_kernel(k, kernel_source(k), unit.file)
            except DesignError as e:
                raise with_design_call(e, d, k) from None


def check_uncalled_sources(kernels: Sequence[Kernel], target: TargetModel) -> None:
    """:func:`check_kernel_sources`'s checks of ``kernels``, those a design file declares that
    no core calls (:func:`~aiedsl.kernels.cases.uncalled_kernels`): ``aiedsl kernel test`` runs
    such a kernel alone, so an author declares one before calling it, and its declaration's
    mistakes (an ``entry=`` naming no function, a scalar of another size than the C++ takes)
    passed ``aiedsl check`` while its test refused them. One made for another architecture
    than ``target``'s (``arch=``) is left, as its test leaves it."""
    for k in kernels:
        if k.arch is not None and k.arch != target.arch:
            continue
        check_file_kernel(k, kernel_source(k), unit_of(None, k).file)


_USE_RULES = ("kernel entry", "kernel signature")
"""The rules a kernel's declaration breaks in how a design uses it (what ``entry=`` calls, the
arguments it passes): their errors name the design's call too."""


def with_design_call(e: DesignError, d: Design, k: Kernel) -> DesignError:
    """Error ``e`` about kernel ``k``'s declaration, with design ``d``'s first call of ``k`` as
    a related line when ``k`` is declared in another file (a helper module shared by designs,
    as the README suggests): its declare() line alone does not say which design, or where,
    met the error. Another error is returned as it is."""
    if e.rule not in _USE_RULES or e.loc != k.loc:
        return e
    call = next((c for core in d.cores for c in calls(core) if c.kernel == k.symbol), None)
    if call is None or call.loc.file == k.loc.file:
        return e
    return DesignError(e.rule, e.message, loc=e.loc, limit=e.limit, found=e.found, fix=e.fix,
                       related=[*e.related,
                                (f"the call of '{k.symbol}' in design '{d.name}'", call.loc)])


def check_kernel_objects(d: Design) -> None:
    """Each core links one object of each C++ file: kernels of one file compiled with
    different ``defines=`` are two objects, each defining what the file defines outside
    templates (mlir-aie's ``extern "C"`` functions, a plain helper), and lld, which aiecc links
    a core with, refuses a symbol defined twice. Cores of their own may each call one."""
    units = kernel_units(d.kernels)
    of = {k.symbol: u for u in units for k in u.kernels}
    key = {u.name: source_key(u.kernels[0]) for u in units}  # (it looks for the file)
    for core in d.cores:
        seen: dict[tuple[str, ...], tuple[KernelUnit, Call]] = {}
        for call in calls(core):
            unit = of[call.kernel]
            other, first = seen.setdefault(key[unit.name], (unit, call))
            if other is unit:
                continue
            source = os.path.normpath(unit.kernels[0].source)  # ./mv.cc as mv.cc
            flags = [" ".join(u.flags) or "no defines" for u in (other, unit)]
            names = _outside_templates(unit.kernels[0])
            entry = d.kernel(call.kernel).entry
            same = entry is not None and entry == d.kernel(first.kernel).entry
            each = (f"each defining {listed(names)}" if names else
                    f"each instantiating {entry} with its own defines under one symbol, of "
                    "which the linker keeps either silently: one kernel would run with the "
                    "other's defines" if same else f"each defining whatever {source} defines "
                    "outside templates (its text shows no function there: a variable would "
                    "clash), and each instantiating its templates with its own defines under "
                    "the same symbols, of which the linker keeps either silently")
            raise DesignError(
                "kernel objects", f"{core.name} calls kernels '{first.kernel}' and "
                f"'{call.kernel}', which are compiled from {source} with different defines "
                f"({flags[0]}; {flags[1]}): it would link two objects of {source}, {each}",
                loc=call.loc,
                limit="one object of each C++ file per core (lld refuses a symbol defined "
                "twice, and keeps one of a template's instantiations)",
                found=f"{other.object} ({flags[0]}) and {unit.object} ({flags[1]})",
                fix="give both kernels the same defines=, make the setting a template "
                    "parameter in entry=, or call them from different cores",
                related=[(f"the call of '{first.kernel}'", first.loc)])
        _check_exports(core.name, [u for u, _ in seen.values()],
                       {u.name: c for u, c in seen.values()})


def _check_exports(core: str, units: list[KernelUnit], calls_of: dict[str, Call]) -> None:
    """The objects a core links (``units``, in the order of its first calls of them, each
    ``calls_of`` by unit name) define each symbol once: two C++ files that both define a
    helper with external linkage (``int32_t bump(int32_t)``), or one defining an ``extern
    "C"`` function that another kernel's entry is named, pass every other check and fail at
    lld, far from the design. An ``extern "C"`` function is its name; a C++ one is its
    namespaces, name and parameter types (overloads are symbols of their own)."""
    if len(units) < 2:
        return
    seen: dict[str, tuple[KernelUnit, str, str, int]] = {}  # symbol -> unit, name, C/C++, line
    for unit in units:
        mine: dict[str, tuple[str, str, int]] = {
            k.symbol: (k.symbol, "C", 0) for k in unit.kernels}  # 0: the generated entry
        for e in _exported(unit.kernels[0]):
            mine[e.symbol] = (e.name, e.linkage, e.line)  # the file's line, when it has one
        for symbol, (name, linkage, line) in mine.items():
            first = seen.setdefault(symbol, (unit, name, linkage, line))
            if first[0] is not unit:
                raise _twice(core, symbol, first, (unit, name, linkage, line), calls_of)


def _twice(core: str, symbol: str, first: tuple[KernelUnit, str, str, int],
           second: tuple[KernelUnit, str, str, int], calls_of: dict[str, Call]) -> DesignError:
    """The error for ``symbol`` defined by two objects ``core`` links: at the declaration of
    the kernel whose object the core links second."""
    (ua, name, linkage, la), (ub, _, _, lb) = first, second
    ka = next(k for k in ua.kernels if k.symbol == calls_of[ua.name].kernel)
    kb = next(k for k in ub.kernels if k.symbol == calls_of[ub.name].kernel)
    fa, fb = (os.path.normpath(u.kernels[0].source) for u in (ua, ub))
    what = (f'extern "C" function \'{symbol}\'' if linkage == "C"
            else f"C++ function {symbol}")

    def where(file: str, line: int, unit: KernelUnit) -> str:
        if line:
            return f"{file}:{line}"
        entry = next(k for k in unit.kernels if k.symbol == symbol)
        return f"the generated entry of kernel '{entry.symbol}' ({file})"

    helpers = [f for f, line in ((fa, la), (fb, lb)) if line]  # a kernel's symbol is not moved
    fix = (f"make '{name}' static or inline in {' or '.join(dict.fromkeys(helpers))}, or "
           "rename it in one of them" if len(helpers) == 2 else
           f"make '{name}' static or inline in {helpers[0]}, or rename it there"
           if helpers else "give the kernels different symbols")
    return DesignError(
        "kernel objects", f"kernels '{ka.symbol}' ({fa}) and '{kb.symbol}' ({fb}) both define "
        f"the {what}, and {core} links both objects: lld would refuse it as a duplicate symbol",
        loc=kb.loc, limit="each symbol with external linkage defined once among the objects a "
        "core links (a static or inline function, a template or one in an unnamed namespace "
        "is each object's own)", found=f"{where(fa, la, ua)} and {where(fb, lb, ub)}",
        related=[(f"kernel '{ka.symbol}' is declared", ka.loc),
                 (f"{core} calls '{ka.symbol}'", calls_of[ua.name].loc),
                 (f"and '{kb.symbol}'", calls_of[ub.name].loc)],
        fix=fix)


def _exported(k: Kernel) -> tuple[Exported, ...]:
    """The functions kernel ``k``'s C++ (read with its defines) defines with external
    linkage."""
    return extern_c(kernel_source(k).text, k.defines).exported


def _outside_templates(k: Kernel) -> list[str]:
    """The functions kernel ``k``'s C++ file (read with its defines) defines outside
    templates, which two objects of it would both define: its own ``extern "C"`` functions
    and its plain C++ ones (the generated entries are each kernel's own, and a template's
    instances are merged by the linker)."""
    if k.source_kind != "file":
        return []
    scan = extern_c(kernel_source(k).text, k.defines)
    return sorted({f.name for f in scan.functions if f.sure} | set(scan.cpp_linkage))


def check_kernel_costs(d: Design, target: TargetModel) -> None:
    """A kernel's declared operations fit in its cycles, call by call: at most two per MAC a core
    of ``target`` can do per cycle with its operands. More would report a throughput the device
    cannot reach.

    Every call is held to it: a kernel profiled for its cycles (``cycles=None``) is charged,
    call by call, the profile of the scalars it passes, as is one declaring ``ops=`` as a
    function of them; judged by its first call's alone, a kernel called once with n=1024 and
    3000 times with n=16 reported 1,323.7 GOPS on one npu1 core (its 65,536 operations in the
    2 cycles of n=16). The call that breaks it the most is named, with its scalars.

    A kernel is held to its operand type's own peak: judged against the device's largest
    (i8's), a bf16 matmul declared at 1.8 times its peak passed, and an i16 one at four times.
    One reading two types (an i16 by i8 multiply) is held to the larger of their peaks (it may
    multiply the narrower type by itself; the modes mixing them are slower:
    :data:`~aiedsl.targets.devices._NPU1_MACS`' comment); a kernel reading no buffer, to the
    largest of any type.

    Its cycles also fit what it writes: a declared kernel of fixed size (no scalar argument)
    writes each "out" buffer whole (what its reference does, and what ``check`` takes "out" to
    mean: an element passed "out" holds what the call wrote; an "inout" one may be updated in
    part, a histogram's bins), and a core stores at most
    :attr:`~aiedsl.targets.TargetModel.core_store_bytes_per_cycle` a cycle (:func:`_store_bound`:
    a kernel tuner's cycles=1 for 1 KB stored passed, and the run was timed by it)."""
    for k in d.kernels:
        macs, whose = _peak(k, target)
        charges = k.charges()
        worst = max(charges, key=lambda c: Fraction(c.ops, max(c.cycles, 1)))
        if worst.ops <= worst.cycles * 2 * macs:
            _store_bound(k, target)  # the operations' bound first: the likelier mistake
            continue
        profiled = k.cycles_source == "profile"
        per_call = k.ops_source == "per call"
        cycles = f"{worst.cycles:,} cycle{'s' * (worst.cycles != 1)}"
        if per_call and worst.shown:  # the count of ops= for these calls' scalars
            what = (f"kernel '{k.symbol}' counts {worst.ops:,} operations for its calls with "
                    f"{worst.shown} (its ops=), " + (f"and its profile gives them {cycles}"
                                                      if profiled else f"in {cycles} per call"))
        elif worst.shown:  # one ops= for calls its profile gives different cycles
            what = (f"kernel '{k.symbol}' declares {worst.ops:,} operations per call, and its "
                    f"profile with {worst.shown} gives those calls {cycles}")
        else:
            what = (f"kernel '{k.symbol}' declares {worst.ops:,} operations per call in "
                    f"{cycles}" + (" (its profile)" if profiled else ""))
        found = f"{_per_cycle(worst)} per cycle" + (f" with {worst.shown}" if worst.shown else "")
        others = [c for c in charges if c is not worst]
        if others:
            found += "; " + "; ".join(
                f"{c.ops:,} in {c.cycles:,} cycles with {c.shown} ({_per_cycle(c)} per cycle)"
                for c in others[:3]) + ("; ..." if len(others) > 3 else "")
        fix = ("count ops as one call's arithmetic (a multiply-accumulate is 2) and cycles as "
               "its time")
        scalars = [a.name for a in k.args if a.kind == "scalar"]
        if scalars and not per_call and len({c.cycles for c in charges}) > 1:
            # cycles vary with the scalars while ops= is one number: it holds for no call
            # but the one it was counted for
            fix += (f"; a kernel whose work varies with its scalars counts it per call: "
                    f"ops=lambda {', '.join(scalars)}: ... (its operations for those values)")
        raise DesignError(
            "kernel cost", what, loc=k.loc, limit=f"at most {2 * macs} per cycle "
            f"({target.name}'s {whose}; a MAC counting 2)", found=found, fix=fix)


def _store_bound(k: Kernel, target: TargetModel) -> None:
    """Refuse declared ``cycles=`` below the cycles kernel ``k``'s stores take: the bytes of
    its "out" buffers over what a core stores a cycle. Not for a kernel taking a scalar (its
    size may be one: it may write part of a buffer) or profiled for its cycles (the profile
    counts its stores); not for "inout" buffers, which a kernel may update in part."""
    if k.cycles_source != "declared" or any(a.kind == "scalar" for a in k.args):
        return
    written = [a for a in k.args if a.kind == "buffer" and a.access == "out"
               and a.type is not None]
    stored = sum(a.type.nbytes for a in written if a.type is not None)
    per_cycle = target.core_store_bytes_per_cycle
    need = -(-stored // per_cycle)
    if k.cycles >= need:
        return
    names = " and ".join(f"'{a.name}'" for a in written)
    raise DesignError(
        "kernel cost", f"kernel '{k.symbol}' declares {k.cycles:,} cycle"
        f"{'s' * (k.cycles != 1)} per call, but storing what it writes ({names}: {stored:,} B) "
        f"takes at least {need:,}", loc=k.loc,
        limit=f"at least {need:,} cycles: {stored:,} B over the {per_cycle} bytes a core of "
        f"{target.name} stores a cycle (one {per_cycle * 8}-bit vector store)",
        found=f"cycles={k.cycles:,}",
        fix=f"declare cycles= of at least {need:,}, or leave it out for aiedsl kernel profile "
            "to estimate it from the C++; a kernel that writes only part of its buffer takes "
            "the size as a scalar argument")


def _per_cycle(c: Charge) -> str:
    """Operations per cycle of charge ``c``, rounded up: ``1,525``."""
    return f"{-(-c.ops // max(c.cycles, 1)):,}"


def _peak(k: Kernel, target: TargetModel) -> tuple[int, str]:
    """The MACs per cycle kernel ``k``'s operations are held to on ``target``, and how the
    check's limit says whose they are."""
    types = k.operand_dtypes
    macs, best = target.operand_peak(types)
    if best is not None:
        how = target.emulated_macs.get(best)
        own = f"{best} peak of {macs} MACs per cycle"
        if best == "bf16" and target.bfp16_macs is not None and target.bfp16_macs > macs:
            # a kernel on the bfp16 unit's 8x8x8 mmul (a tester: an honest 430 MACs per cycle
            # was refused at the 4x8x8's 256)
            own = (f"bf16 peak of {target.bfp16_macs} MACs per cycle on its bfp16 unit (an 8x8x8 "
                   f"mmul_bfp16_bfp16; {macs} in the 4x8x8 mmul aiedsl's matmul runs)")
            macs = target.bfp16_macs
        if len(types) == 1:
            return macs, f"{own}, the type of its operands" + (f", {how}" if how else "")
        return macs, (f"{own}, the largest of its operand types' ({', '.join(types)}): it may "
                      f"multiply {best} values by each other" + (f", {how}" if how else ""))
    top = max(target.macs_per_cycle, key=lambda key: target.macs_per_cycle[key])
    return macs, f"{top.split('_')[0]} peak of {macs} MACs per cycle, the largest of any type"
