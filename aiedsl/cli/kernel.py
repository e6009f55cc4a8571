"""``aiedsl kernel``: test micro-kernels on the host (``kernel test``), profile their AIE API
operations (``kernel profile``) and print a library kernel's declared cost (``kernel cost``).

:mod:`aiedsl.cli.commands` registers :data:`kernel_app` as its ``kernel`` group. As there,
only typer and the standard library load at start-up (and :data:`aiedsl.targets.DEFAULT_DEVICE`,
whose package loads no target model until one is asked for): each command imports what it
needs.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, List, Optional

import typer

from aiedsl.cli.common import CONTEXT, DefineOpt, DeviceOpt, NameOpt, SeedOpt, load, say
from aiedsl.targets import DEFAULT_DEVICE

kernel_app = typer.Typer(rich_markup_mode=None, context_settings=CONTEXT,
                         help="Test micro-kernels on the host and estimate their cost.")


@kernel_app.callback(invoke_without_command=True)
def _kernel_root(ctx: typer.Context) -> None:
    if ctx.invoked_subcommand is None:
        say(ctx.get_help())
        raise typer.Exit()


@kernel_app.command("test")
def kernel_test(
    # str, not Path: Path reads "" as ".", which names no kernel file
    given: Optional[str] = typer.Argument(None, metavar="PATH", help="A kernel C++ file (tests "
                                          "the library kernels made from it) or a design file "
                                          "(tests the kernels it declares)."),
    all_: bool = typer.Option(False, "--all", help="Test every library kernel at several sizes."),
    define: Optional[List[str]] = DefineOpt,
    device: Optional[str] = DeviceOpt,
    name: Optional[str] = NameOpt,
    seed: int = SeedOpt,
    full_range: bool = typer.Option(
        False, "--full-range", help="Draw integer inputs over their types' whole range "
        "(-32768..32767 for i16; by default wider than 8 bits stay within |x| < 2^(bits/2-1), "
        "so that sums fit), the smallest and largest at the same places in every input of "
        "one size: where wrapping and saturation differ."),
) -> None:
    """Compile kernels with the host's g++ against aiedsl's AIE API header and compare each
    with its numpy reference. Exit 1 when one differs."""
    path = None if given is None else _path(given)
    if all_ and path is not None:
        raise typer.BadParameter(f"--all and {path} exclude each other: give a kernel file or "
                                 "a design file, or --all alone", param_hint="PATH")
    if not all_ and path is None:
        raise typer.BadParameter("give a kernel file or a design file, or --all",
                                 param_hint="PATH")
    from aiedsl.cli.common import tell
    from aiedsl.errors import DesignError
    from aiedsl.kernels.cases import design_cases, uncalled_kernels
    from aiedsl.kernels.host_build import prebuild
    from aiedsl.kernels.host_check import check_kernel
    from aiedsl.kernels.samples import library_cases
    from aiedsl.user_errors import command_line_text

    notes: dict[str, str] = {}  # what is said before a kernel's results, by symbol
    if path is not None and path.suffix == ".py":
        handle = load(path, define, device, name)
        cases = design_cases(handle, each=True, corners=True)
        notes = _uncalled(uncalled_kernels(handle))
        if not cases:
            for line in notes.values():
                say(line)
            say(_no_kernels(handle, "test", bool(notes)))
            return
    else:
        _library_only(path, define, name, "test")
        cases = library_cases(path)
        if device:  # as kernel profile: the variants that device uses
            cases = [c for c in cases if _made_for(c.kernel, device)]
        if not cases:
            assert path is not None
            raise _no_library_kernel(path, "test")
    failed: set[str] = set()  # kernels a case of which does not match
    unbuilt: list[Any] = []  # kernels whose C++ does not build for the host, with the error
    wrong: list[str] = []  # kernels whose C++ moves other cascade words than they declare
    symbols = [c.kernel.symbol for c in cases]
    start = time.perf_counter()
    prebuild([(c.kernel, c.cpp, c.aie_arch) for c in cases])  # several at a time; said below
    for case in cases:
        if case.kernel.symbol in notes:
            say(notes.pop(case.kernel.symbol))
        try:
            result = check_kernel(case, seed, full_range)
        except DesignError as e:
            if e.rule == "kernel cascade" and len(cases) > 1:
                # its C++ moves other words, or in another order, than it declares: said, and
                # the others go on (a cascade tester's get kernel went untested behind it)
                tell(command_line_text(e) + "\n")
                wrong.append(case.kernel.symbol)
                continue
            if e.rule != "host kernel build" or len(cases) == 1:
                raise
            # one kernel's C++ that does not build stops no other's test: said (once, for the
            # kernels of one file that share it, whose errors differ only in the declaring
            # line: the message names them all) and the others go on
            if all((e.message, e.found) != (seen.message, seen.found) for _, seen in unbuilt):
                tell(command_line_text(e) + "\n")
            unbuilt.append((case.kernel.symbol, e))
            continue
        if not result.passed:
            failed.add(case.kernel.symbol)
        if symbols.count(case.kernel.symbol) > 1:  # run with other scalars: which, said
            say(f"{case.kernel.symbol} with {case.shown}:")
        for line in result.lines:
            say(line)
    for line in notes.values():  # those not run: said, not passed over
        say(line)
    kernels = set(symbols)
    no_build, moved = list(dict.fromkeys(s for s, _ in unbuilt)), list(dict.fromkeys(wrong))
    built = len(kernels - set(no_build) - set(moved))
    # (a kernel whose C++ fails one run and moves other cascade words in another: one kernel)
    say(f"{built - len(failed - set(no_build) - set(moved))} of {len(kernels)} kernels match "
        "their references"
        + (" on integer inputs over their types' whole range" if full_range else "")
        + (f"; {len(no_build)} did not build for the host ({', '.join(no_build)}: "
           "said above)" if no_build else "")
        + (f"; {len(moved)} moved cascade words otherwise than "
           f"{'it declares' if len(moved) == 1 else 'they declare'} ({', '.join(moved)}: said "
           "above)" if moved else "")
        + f" ({time.perf_counter() - start:.1f} s)")
    if unbuilt or wrong:
        raise typer.Exit(2)  # a design error, as a build that stops the command is
    if failed:
        raise typer.Exit(1)


@kernel_app.command("profile")
def kernel_profile(
    given: str = typer.Argument(..., metavar="PATH", help="A kernel C++ file (profiles the "
                                "library kernels made from it) or a design file (profiles the "
                                "kernels it declares)."),
    define: Optional[List[str]] = DefineOpt,
    device: Optional[str] = DeviceOpt,
    name: Optional[str] = NameOpt,
    seed: int = SeedOpt,
) -> None:
    """Run kernels on the host with their AIE API operations counted by unit, and print the
    cycles per call those need at best (the busiest unit), MACs per cycle and the binding
    unit. A kernel that crashes, or writes outside its buffers or into an input, prints FAIL
    as `kernel test` does, and the command exits 1; so does a design's kernel declaring
    cycles= below that bound, with a WARNING line."""
    path = _path(given)
    from aiedsl.kernels.cases import design_cases
    from aiedsl.kernels.samples import library_cases
    from aiedsl.kernels.profile import profile_cases

    uncalled: dict[str, str] = {}  # what is said before a kernel's profile, by symbol
    if path.suffix == ".py":
        from aiedsl.kernels.cases import uncalled_kernels

        handle = load(path, define, device, name)
        # a profile per set of scalar values the calls pass, as a kernel declared without
        # cycles= is charged
        cases, dev = design_cases(handle, each=True), handle.ir.device
        uncalled = _uncalled(uncalled_kernels(handle))
        if not cases:
            for line in uncalled.values():
                say(line)
            say(_no_kernels(handle, "profile", bool(uncalled)))
            return
    else:
        _library_only(path, define, name, "profile")
        cases, dev = library_cases(path), device or DEFAULT_DEVICE
        cases = [c for c in cases if _made_for(c.kernel, dev)]
        if not cases:
            raise _no_library_kernel(path, "profile")
    failed = 0
    for case, prof in zip(cases, profile_cases(cases, dev, seed)):
        failed += bool(prof.faults)
        k = case.kernel
        if k.symbol in uncalled:
            say(uncalled.pop(k.symbol))
        notes = []
        if path.suffix == ".py" and k.cycles_source == "declared" and prof.counted \
                and prof.ran:
            # what the simulator charges beside what the C++ needs at best: a cycles= far
            # from it is a slip no other command points out
            if k.cycles < prof.cycles:
                # below a lower bound: the core cannot run the call that fast, and the
                # simulator's times for it are off by as much (exit 1, as for a fault)
                failed += 1
                notes.append(below_bound(k.cycles, prof.cycles))
            else:
                notes.append(f"  declared: cycles={k.cycles:,}, {k.cycles / prof.cycles:.1f}x "
                             "this estimate (the simulator charges what is declared; the "
                             "estimate is a lower bound)")
        charged = next((p for p in k.profiles if p.scalars == case.scalars), None)
        if charged is not None and prof.ran:
            # the profile the design made as it loaded, which the report and the simulator
            # charge these calls (the same run, unless the C++'s work depends on its data)
            notes.append(f"  charged: {charged.cycles:,} cycles per call by the simulator (no "
                         "cycles= declared: this profile, made as the design loaded)")
        for line in prof.lines(notes):
            say(line)
    for line in uncalled.values():  # those not run: said, not passed over
        say(line)
    if failed:  # as `kernel test`: the C++ (or its declared cost) is wrong
        raise typer.Exit(1)


def _uncalled(uncalled: List[Any]) -> dict[str, str]:
    """The line said of each kernel a design's file declares that no core calls
    (:class:`~aiedsl.kernels.cases.Uncalled`), by symbol: before its results when it runs
    alone, else after every result, saying why it did not run."""
    return {u.kernel.symbol: u.line() for u in uncalled}


def _no_kernels(handle: Any, command: str, declared: bool) -> str:
    """What ``kernel test`` (``command``) or ``kernel profile`` says of a design that calls no
    kernel and whose file declares none that can run alone (``declared``: it declares some,
    said above): nothing to run, in one line, where "0 of 0 kernels match" read like a
    result."""
    if declared:
        return (f"{handle.ir.name} calls no kernel, and none its file declares can run alone "
                f"(above): no kernel to {command}")
    return (f"{handle.ir.name} calls no kernel and its file declares none (its data moves by "
            f"DMA only): no kernel to {command}")


def below_bound(declared: int, bound: int) -> str:
    """The line ``kernel profile`` prints under a kernel declaring ``cycles=declared``, below
    its profile's lower bound of ``bound`` cycles per call."""
    return (f"  WARNING: declared cycles={declared:,} is below this lower bound of {bound:,} "
            f"cycles per call: the simulator charges the declared {declared:,}, so its times "
            f"for these calls are optimistic by {bound / declared:.3g}x or more; fix: declare "
            f"cycles= of at least {bound:,} (the bound counts the AIE API calls as the C++ "
            "makes them: if a trace on the NPU measured fewer cycles, the compiler may have "
            "merged some of them)")


def _path(given: str) -> Path:
    """PATH as typed, refused when empty (a Path would read "" as the working directory)."""
    if not given:
        raise typer.BadParameter("the path is empty: give a kernel file or a design file",
                                 param_hint="PATH")
    return Path(given)


def _library_only(path: Path | None, define: Optional[List[str]], name: Optional[str],
                  command: str) -> None:
    """Refuse what a library kernel file's run would ignore: a file at PATH that is not
    aiedsl's own of that name (a user's ``passthrough.cc`` was passed over for the library's,
    which then passed), and ``-D`` (a library kernel's sizes are its samples'). A bare name,
    or a path to aiedsl's own file, names the library's."""
    from aiedsl.kernels.paths import KERNELS_CPP

    if name:
        raise typer.BadParameter(f"--name {name} chooses a design in a design file; a library "
                                 "kernel file has none", param_hint="--name")
    if define:
        raise typer.BadParameter(f"-D {define[0]} sets a design's define(), and {command}s of "
                                 "a library kernel file take none (they run its sample sizes)",
                                 param_hint="-D")
    if path is None or path.parent == Path("."):
        if path is None or not path.exists():
            return  # a bare name: the library's file of that name
    library = KERNELS_CPP / path.name
    if path.exists() and library.exists() and path.resolve() == library.resolve():
        return
    if path.exists() and library.exists():
        raise typer.BadParameter(
            f"{path} is not aiedsl's {path.name} (a library kernel file is named by its name "
            f"alone, or by its path in aiedsl): a file of yours is tested through a design that "
            f"declares it: declare(..., source=\"{path.name}\") and `aiedsl kernel {command} "
            "DESIGN.py`", param_hint="PATH")
    if not path.exists() and path.parent != Path("."):
        raise typer.BadParameter(f"{path} does not exist", param_hint="PATH")


def _no_library_kernel(path: Path, command: str) -> Exception:
    """The usage error for a C++ PATH no library kernel is made from: first that it does not
    exist, when it does not (a library kernel's source is named, from anywhere, by its name
    alone, so a missing path is only an error here)."""
    if not path.exists():
        return typer.BadParameter(f"{path} does not exist (nor is a library kernel made from a "
                                  f"file named {path.name})", param_hint="PATH")
    from aiedsl.lang.names import SOURCE_SUFFIXES

    if path.suffix not in SOURCE_SUFFIXES:  # source= takes C++ names only: say so first
        cpp = f"{path.stem or path.name}.cc"
        return typer.BadParameter(
            f"{path.name} is neither a design file (.py) nor a C++ file "
            f"({', '.join(SOURCE_SUFFIXES)}): if it holds your kernel's C++, rename it to a C++ "
            f"name ({cpp}), declare it with declare(..., source=\"{cpp}\") in a design and run "
            f"`aiedsl kernel {command} DESIGN.py`", param_hint="PATH")
    from aiedsl.kernels.paths import KERNEL_TEMPLATES, KERNELS_CPP

    if path.resolve().parent in (KERNELS_CPP.resolve(), KERNEL_TEMPLATES.resolve()):
        # a contributor's new file in the library's own folder: it has no samples yet
        return typer.BadParameter(
            f"no library kernel is made from {path.name} yet: a kernel of the library gets the "
            "sizes `kernel test` and `kernel profile` run from aiedsl/kernels/samples.py "
            "(kernels_cpp/README.md, \"Adding a kernel to the library\")", param_hint="PATH")
    return typer.BadParameter(
        f"no library kernel is made from {path.name}: declare your kernel with "
        f"declare(..., source=\"{path.name}\") in a design and run "
        f"`aiedsl kernel {command} DESIGN.py`", param_hint="PATH")


def _made_for(k: Any, device: str) -> bool:
    """Is library kernel ``k`` the variant ``device`` would use (made for its architecture, or
    for any)?"""
    from aiedsl.targets import get_target

    return k.arch is None or k.arch == get_target(device).arch


@kernel_app.command("cost")
def kernel_cost(
    # the kernels are listed in the docstring: typer shows an argument's help= only with rich
    name: str = typer.Argument(..., metavar="KERNEL"),
    shape: str = typer.Option(..., "--shape", metavar="SHAPE", help="MxKxN for matmul and "
                              "matmul_cascade, MxN for matmul_narrow, WIDTHxCINxCOUT for the "
                              "convolutions, ROWSxCOLS for reductions, norms and softmax, N "
                              "otherwise."),
    dtype: Optional[str] = typer.Option(None, "--dtype", metavar="DTYPE",
                                        help="Element (matmul: input) type, spelled as a "
                                        "Tensor takes it (bf16 or bfloat16, i32 or int32) "
                                        "[default: the "
                                        "kernel's first: bf16, or i8 for the convolutions, "
                                        "i16 for scale, u8 for threshold and rgba2gray, "
                                        "i32 for reductions]."),
    device: str = typer.Option(DEFAULT_DEVICE, "--device", metavar="DEVICE",
                               help="Device whose core is estimated."),
) -> None:
    """Print a library kernel's declared cycles per call (its body; the simulator adds the call
    site's cycles, and says so) and the fraction of the core's peak. A bad value prints which
    option is wrong and what it takes, and exits 2.

    KERNEL is one of matmul, matmul_narrow, matmul_cascade, conv2d_1x1, conv2d_3x3, zero,
    passthrough, scale, threshold, rgba2gray, add, sub, mul, vector_scalar, relu, reduce_sum,
    reduce_max, rms_norm, layer_norm, exp_bf16, silu, gelu or softmax."""
    from aiedsl.kernels.cost import estimate

    for line in estimate(name, shape, dtype, device):
        say(line)
