"""``aiedsl build --compile``: Peano for each kernel, then aiecc, for the build directory.

The tools run beside the build directory, in its staging folder, on the files the build wrote
(:func:`aiedsl.builddir.build.compiling`); what they make goes in when they are done (an
interrupted compile changes nothing there). Every tool runs with its output captured to
``logs/<step>.log`` (the command line first). A tool that fails stops the build with its command,
the tail of its output and, when the output names one, the design line it comes from (aiecc
reports the ``loc(...)`` of the emitted MLIR, which carry design lines; clang reports
``kernels/<name>.cc`` lines, which map to the declaration of the kernel whose entry or source they
are in); its logs and what it left
go in, but not a half-written xclbin. A successful compile leaves ``aie.xclbin``, ``insts.bin``,
``manifest.json`` and ``cache.json``; the same inputs later skip the tools. Whatever the tools
leave (aiecc's intermediate files too) is listed in the build directory's marker, so a rebuild
keeps it.

Example
-------
>>> gen = generate(load_design("designs/passthrough.py"))     # doctest: +SKIP
>>> write(gen, "build/passthrough")                            # doctest: +SKIP
>>> compile_build(gen, Path("build/passthrough"), find_tools())  # doctest: +SKIP
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Callable

from aiedsl.builddir.build import compiling
from aiedsl.builddir.marker import SCRIPT_LIST
from aiedsl.builddir.swap import install_outputs
from aiedsl.errors import ToolchainError, listed
from aiedsl.ir.design import Design
from aiedsl.ir.loc import Loc
from aiedsl.kernels.units import kernel_units
from aiedsl.shell import argv_strings, shell_line
from aiedsl.targets import TargetModel, get_target
from aiedsl.toolchain.commands import aiecc_argv, kernel_compile_argv
from aiedsl.toolchain.compile_outputs import (
    CACHE,
    MANIFEST,
    OUTPUTS,
    cache_hit,
    cache_key,
    digests,
    not_what_aiecc_writes,
    tool_input,
)
from aiedsl.toolchain.discover import Tool, Tools
from aiedsl.toolchain.manifest import build_manifest
from aiedsl.toolchain.program_memory import PROJECT, core_programs, program_over, program_overflow
from aiedsl.toolchain.stack import SUFFIX as STACK_SUFFIX
from aiedsl.toolchain.stack import kernel_frames, stack_overflow
from aiedsl.toolchain.tool_run import Step, run_step

Progress = Callable[[int, int, str], None]
"""Called before each step with (step index, number of steps, label)."""


@dataclass(frozen=True)
class Compiled:
    """What ``--compile`` left in the build directory."""

    out: Path
    cached: bool
    manifest: dict
    seconds: float


def plan_steps(d: Design, target: TargetModel, tools: Tools) -> list[Step]:
    """The tool invocations for design ``d`` on ``target``: one Peano compile per kernel unit
    (the kernels of one source and defines, :mod:`aiedsl.kernels.units`), then aiecc."""
    assert tools.clang.path and tools.aiecc.path and tools.headers.path
    # a unit of one kernel is named as the kernel; of several, as the file they share
    steps = [Step(f"Peano {u.name if len(u.kernels) == 1 else u.file}",
                  argv_strings(kernel_compile_argv(target, u.file, u.object,
                                                   clang=str(tools.clang.path),
                                                   include=str(tools.headers.path),
                                                   defines=u.flags)),
                  f"logs/{u.name}.log", writes=(u.object,))
             for u in sorted(kernel_units(d.kernels), key=lambda u: u.file)]
    steps.append(Step("aiecc", argv_strings(aiecc_argv(aiecc=str(tools.aiecc.path),
                                                       spelling=tools.aiecc_spelling,
                                                       packet=d.flows == "packet")),
                      "logs/aiecc.log"))
    return steps


def script_outputs(files: dict[str, str]) -> list[str]:
    """What ``build.sh`` writes into the build of ``files`` when run by hand (what
    ``--compile`` writes): each kernel's object, aiecc's outputs and its project folder (of
    which only what it records in :data:`~aiedsl.builddir.marker.SCRIPT_LIST` is aiedsl's),
    and that record."""
    stems = [PurePosixPath(rel).stem for rel in files
             if rel.startswith("kernels/") and rel.endswith(".cc")]
    return [*(f"{s}{ext}" for s in stems for ext in (".o", STACK_SUFFIX)), *OUTPUTS,
            f"{PROJECT}/", SCRIPT_LIST]


def unusable_tools(d: Design, tools: list[Tool], out: Path, *, npu_run: bool = False,
                   loc: Loc | None = None) -> ToolchainError:
    """The error for compiling design ``d`` in ``out`` without ``tools`` (each missing, or
    found unusable: :attr:`Tool.problem`). ``npu_run``: the compile of ``run --target npu``,
    which does not fall back to the simulator, and runs only what aiedsl compiled itself.
    ``loc``: the Python line that asked (None for the command line's), whose words the fix
    uses."""
    missing = [t for t in tools if t.path is None]
    said = []
    if missing:
        plural = len(missing) > 1 or missing[0].plural
        said.append(f"{listed([t.name for t in missing])} {'are' if plural else 'is'} missing")
    said += [f"{t.name} {t.problem}" for t in tools if t.path is not None]
    notes = [line for t in tools for line in (
        (f"{t.name}: {t.how}" if t.path is None else f"{t.name}: {t.path} ({t.how}): "
         f"{t.detail}"), f"  to get {'them' if t.plural else 'it'}: {t.install}")]
    npu, sim = ("target='npu'", "target='sim'") if loc else ("--target npu", "--target sim")
    if npu_run:
        fix = (f"install them (`aiedsl doctor` shows what aiedsl finds): {npu} runs what "
               "aiedsl compiled itself, whose manifest.json gives the buffers to load (a "
               f"build.sh run by hand writes none); meanwhile {sim} runs {d.name} on the "
               "simulator")
    else:
        runs = "run() uses" if loc else "`aiedsl run` uses"
        fix = (f"install them; meanwhile the MLIR and C++ are in {out}/ (build.sh compiles them "
               f"by hand) and {runs} the simulator; `aiedsl doctor` shows what aiedsl finds")
    return ToolchainError("toolchain", f"cannot compile {d.name}: {'; '.join(said)}",
                          exit_code=4, notes=notes, fix=fix, loc=loc)


def no_target(d: Design, target: TargetModel, clang: Tool) -> ToolchainError | None:
    """The error for a Peano whose clang++ lists no target for ``d``'s cores (an llvm-aie too
    old for npu2's aie2p); None when it lists it, or said nothing of its targets."""
    if not clang.targets or target.arch in clang.targets:
        return None
    return ToolchainError(
        "toolchain", f"cannot compile {d.name}: Peano (llvm-aie) has no {target.arch} target, "
        f"which the cores of {d.device} need", exit_code=4,
        found=f"{clang.path} lists {', '.join(clang.targets)}",
        fix=f"install a newer llvm-aie: {clang.install}")


def compile_build(d: Design, files: dict[str, str], out: Path, tools: Tools,
                  progress: Progress | None = None, *, npu_run: bool = False,
                  loc: Loc | None = None) -> Compiled:
    """Compile the build in ``out`` (already written from ``files``); skip when the cache holds.
    ``npu_run``: for ``run --target npu`` (what an error says to do); ``loc``: the Python line
    that asked (None for the command line's), where a tool's error is said.

    Raises a DesignError when ``out`` no longer holds ``files`` (another build replaced it).
    """
    start = time.perf_counter()
    missing = tools.missing(compile_only=True)
    if missing:
        raise unusable_tools(d, missing, out, npu_run=npu_run, loc=loc)
    target = get_target(d.device)
    wrong = no_target(d, target, tools.clang)
    if wrong is not None:
        raise wrong
    steps = plan_steps(d, target, tools)
    key = cache_key(files, steps, tools)
    # Under the build directory's lock (no other build swaps it away meanwhile), once it is
    # checked to hold these files still; the tools run beside it, on these files.
    with compiling(out, files, design=d.name, tool_input=tool_input,
                   writes=("logs", MANIFEST, CACHE)) as work:
        cached = cache_hit(out, key)
        if cached is not None:
            return Compiled(out, True, cached, time.perf_counter() - start)
        previous = (*OUTPUTS, MANIFEST, CACHE,
                    *(f"{u.name}{STACK_SUFFIX}" for u in kernel_units(d.kernels)))
        try:
            manifest = _compile(d, target, work, out, tools, steps, key, progress)
        except ToolchainError:
            # The logs and what the tools left are the failure's to explain; an xclbin or
            # instructions they left are not whole, and the previous compile's are not these
            # inputs' (not credited for tools that wrote nothing).
            install_outputs(work, out, keep=lambda name: name not in OUTPUTS, drop=previous,
                            last=(MANIFEST, CACHE))
            raise
        install_outputs(work, out, keep=lambda name: True, drop=previous,
                        last=(MANIFEST, CACHE))
    return Compiled(out, False, manifest, time.perf_counter() - start)


def _compile(d: Design, target: TargetModel, work: Path, out: Path, tools: Tools,
             steps: list[Step], key: str, progress: Progress | None) -> dict:
    """Run ``steps`` in ``work`` (logs and errors naming build directory ``out``, where they go)
    and write the manifest and cache key there; returns the manifest."""
    (work / "logs").mkdir(exist_ok=True)
    frames: dict[str, int] = {}
    for i, step in enumerate(steps):
        if step is steps[-1]:  # the kernels are compiled: before aiecc links them, their stack
            frames = kernel_frames(d, work)
            overflow = stack_overflow(d, frames)
            if overflow is not None:
                raise overflow
        if progress:
            progress(i, len(steps), step.label)
        try:
            run_step(step, work, tools.env, d, shown=out)
        except ToolchainError as e:
            overflow = program_overflow(d, target, work, out, step, e)
            if overflow is None:
                raise
            raise overflow from e
        gone = [name for name in step.writes if not (work / name).is_file()]
        if gone:
            raise ToolchainError(
                step.label.split()[0], f"{step.label} finished but did not write "
                f"{', '.join(gone)}", exit_code=5, notes=[f"$ {shell_line(step.argv)}"],
                found=f"see {out / step.log}",
                fix="check the Peano installation (PEANO_INSTALL_DIR; `aiedsl doctor` shows "
                    "what aiedsl finds)")
    absent = [name for name in OUTPUTS if not (work / name).is_file()]
    if absent:
        raise ToolchainError(
            "aiecc", f"aiecc finished but did not write {', '.join(absent)}", exit_code=5,
            found=f"see {out / 'logs' / 'aiecc.log'}",
            fix="check the aiecc version (aiedsl emits mlir-aie's 2026 syntax)")
    junk = not_what_aiecc_writes(work, out)
    if junk is not None:
        raise junk
    programs = core_programs(d, target, work)
    over = program_over(d, target, programs, [], out / "logs" / "aiecc.log", finished=True)
    if over is not None:  # a program the loader refuses cannot be what aie.xclbin holds
        raise over
    manifest = build_manifest(d, target, tools, key, (work / "insts.bin").stat().st_size,
                              programs, frames)
    (work / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
    (work / CACHE).write_text(json.dumps({"key": key, "outputs": digests(work)}) + "\n")
    return manifest


