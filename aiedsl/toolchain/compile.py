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

import hashlib
import json
import os
import re
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Callable

from aiedsl.builddir.build import compiling
from aiedsl.builddir.marker import SCRIPT_LIST
from aiedsl.builddir.swap import install_outputs
from aiedsl.errors import DesignError, ToolchainError, listed
from aiedsl.ir.design import Design
from aiedsl.ir.loc import Loc
from aiedsl.kernels.text import unit_text
from aiedsl.kernels.units import kernel_units
from aiedsl.shell import argv_strings, shell_line
from aiedsl.targets import TargetModel, get_target
from aiedsl.text import encoded, tool_output
from aiedsl.toolchain.commands import aiecc_argv, kernel_compile_argv
from aiedsl.toolchain.discover import Tool, Tools
from aiedsl.toolchain.elf import ElfError, program_end
from aiedsl.toolchain.insts import read_header
from aiedsl.toolchain.manifest import build_manifest
from aiedsl.toolchain.mlir_syntax import hint
from aiedsl.toolchain.stack import SUFFIX as STACK_SUFFIX
from aiedsl.toolchain.stack import kernel_frames, stack_overflow
from aiedsl.version import __version__

OUTPUTS = ("aie.xclbin", "insts.bin")
MANIFEST, CACHE = "manifest.json", "cache.json"
PROJECT = "aie.mlir.prj"
"""aiecc's project folder for ``aie.mlir``: its intermediate files, the core ELFs among them."""
TAIL_LINES = 15

Progress = Callable[[int, int, str], None]
"""Called before each step with (step index, number of steps, label)."""


@dataclass(frozen=True)
class Step:
    """One tool invocation."""

    label: str
    argv: list[str]
    log: str
    """Log file, relative to the build directory."""
    writes: tuple[str, ...] = ()
    """What the step must leave, relative to the build directory (a Peano step's object file),
    checked as soon as it ends: a tool that exits 0 without it is named, not the next one."""


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


def tool_input(rel: str) -> bool:
    """Is generated file ``rel`` one the tools read (``aie.mlir``, ``kernels/*``)? The cache key
    hashes these, and a rebuild keeps the previous tool outputs only while these are unchanged
    (:func:`aiedsl.builddir.build.write_build`)."""
    return rel == "aie.mlir" or rel.startswith("kernels/")


def cache_key(files: dict[str, str], steps: list[Step], tools: Tools) -> str:
    """sha256 of everything the tools read: MLIR, kernel sources, command lines, tool versions."""
    h = hashlib.sha256()
    h.update(f"aiedsl {__version__}\n".encode())
    for rel in sorted(files):
        if tool_input(rel):
            h.update(f"{rel}\n".encode())
            h.update(encoded(files[rel]))  # the bytes the tools read
    for s in steps:
        h.update(shell_line(s.argv).encode())
    h.update(json.dumps(tools.versions(), sort_keys=True).encode())
    return h.hexdigest()


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
        cached = _cache_hit(out, key)
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
            overflow = _program_overflow(d, target, work, out, step, e)
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
    junk = _not_what_aiecc_writes(work, out)
    if junk is not None:
        raise junk
    programs = core_programs(d, target, work)
    over = _program_over(d, target, programs, [], out / "logs" / "aiecc.log", finished=True)
    if over is not None:  # a program the loader refuses cannot be what aie.xclbin holds
        raise over
    manifest = build_manifest(d, target, tools, key, (work / "insts.bin").stat().st_size,
                              programs, frames)
    (work / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
    (work / CACHE).write_text(json.dumps({"key": key, "outputs": _digests(work)}) + "\n")
    return manifest


def _digests(folder: Path) -> dict[str, str]:
    """sha256 of each output in ``folder``: a cache hit needs them as the tools wrote them (a CI
    cache restored in part, or a file cut short, is compiled again)."""
    return {name: hashlib.sha256((folder / name).read_bytes()).hexdigest() for name in OUTPUTS}


XCLBIN_MAGIC = b"xclbin2\0"
"""How every xclbin starts (XRT's ``axlf.m_magic``)."""


def _not_what_aiecc_writes(work: Path, out: Path) -> ToolchainError | None:
    """The error for an ``aie.xclbin`` or ``insts.bin`` in ``work`` that is not one (an aiecc
    that exited 0 having written something else: a broken install, a wrapper script); None
    when both look as they should. Only their heads are read: an instruction stream's
    operations are for ``aiedsl inspect`` to read, and a newer mlir-aie may add some."""
    log = out / "logs" / "aiecc.log"
    fix = (f"see {log}; check the mlir-aie installation (`aiedsl doctor` shows what aiedsl "
           "finds)")
    with open(work / "aie.xclbin", "rb") as f:
        head = f.read(len(XCLBIN_MAGIC))
    if head != XCLBIN_MAGIC:
        return ToolchainError(
            "aiecc", "aiecc finished but the aie.xclbin it wrote is not an xclbin",
            exit_code=5, limit="an xclbin starts with XRT's signature 'xclbin2'",
            found=f"its first bytes: {head!r}", fix=fix)
    try:
        read_header((work / "insts.bin").read_bytes(), "insts.bin")
    except DesignError as e:
        return ToolchainError(
            "aiecc", f"aiecc finished but the insts.bin it wrote is not an NPU instruction "
            f"stream: {e.message}", exit_code=5, limit=e.limit, found=e.found, fix=fix)
    return None


def core_programs(d: Design, target: TargetModel, out: Path) -> dict[str, int]:
    """Where each core's program ends in its program memory (bytes), read off the core ELFs
    aiecc leaves in its project folder (``aie.mlir.prj/<device>_core_<col>_<row>.elf``; older
    aiecc: ``core_<col>_<row>.elf``). A core whose ELF is not there is left out."""
    limit = target.program_memory
    prj = out / PROJECT
    names = {p.name: p for p in prj.glob("*.elf")} if prj.is_dir() else {}
    found = {}
    for core in d.cores:
        assert core.tile is not None, "core_programs needs a placed design"
        want = re.compile(rf"(?:.*_)?core_{core.tile[0]}_{core.tile[1]}\.elf")
        hits = sorted(n for n in names if want.fullmatch(n))
        if hits:
            try:
                found[core.name] = program_end(names[hits[0]], limit)
            except ElfError:
                continue  # not an ELF aiedsl can read: say nothing of it
    return found


def _program_overflow(d: Design, target: TargetModel, work: Path, out: Path, step: Step,
                      err: ToolchainError) -> ToolchainError | None:
    """For aiecc failing because a core's program does not fit its program memory (aie-rt's
    loader: ``Overflow of program memory``, which names no core; mlir-aie since PR 3618 links
    against the real size: ``will not fit in region 'program'``), the error that names the core
    and its size (read in ``work``, where aiecc ran; its log named in ``out``, where it goes).
    None for any other failure."""
    try:
        log = (work / step.log).read_text()
    except OSError:
        return None
    if "Overflow of program memory" not in log and "in region 'program'" not in log:
        return None
    programs = core_programs(d, target, work)
    over = _program_over(d, target, programs, err.notes, out / step.log, finished=False)
    if over is not None:
        return over
    limit = target.program_memory
    used = _programs_used(d, programs)
    fix = _PROGRAM_FIX.format(log=out / step.log)
    return ToolchainError(
        "program memory", f"a core's program does not fit its {limit:,} bytes of program "
        "memory; aiecc did not say which, and left no core ELF that is over",
        exit_code=5, limit=f"{limit:,} bytes of program memory per core",
        notes=[*err.notes, *used], fix="look for the core calling the most or the largest "
        "kernels: " + fix)


_PROGRAM_FIX = ("call fewer or smaller kernels on it (each kernel it calls is linked in whole), "
                "or let the objectfifo lowering unroll less (it repeats a loop body once per "
                "buffer of the fifos acquired in it: lower their depth); the whole output is in "
                "{log}")


def _programs_used(d: Design, programs: dict[str, int]) -> list[str]:
    """The note listing where each core's program ends (none when no ELF was read)."""
    tiles = {c.name: c.tile for c in d.cores}
    sizes = ", ".join(f"{name} {tiles[name]} {end:,} B" for name, end in programs.items())
    return [f"program memory used: {sizes}"] if programs else []


def _program_over(d: Design, target: TargetModel, programs: dict[str, int], notes: list[str],
                  log: Path, finished: bool) -> ToolchainError | None:
    """The error naming the core whose program (``programs``, read off its ELF) ends furthest
    past its program memory, at its line; None when every one fits. ``finished``: aiecc
    exited 0 all the same (its CDO step loads each ELF with aie-rt's loader, which refuses
    such a program, so the ELF read is not what ``aie.xclbin`` holds: a stale or broken one).
    ``notes`` come first under it."""
    limit = target.program_memory
    over = sorted((end, name) for name, end in programs.items() if end > limit)
    if not over:
        return None
    cores = {c.name: c for c in d.cores}
    end, name = over[-1]
    others = f" ({len(over) - 1} more core(s) over)" if len(over) > 1 else ""
    where = f"{name} on tile {cores[name].tile}"
    fix = _PROGRAM_FIX.format(log=log)
    if finished:
        message = (f"aiecc finished, but the ELF it left for {where} ends the program at byte "
                   f"{end:,}, past the {limit:,} of program memory{others}: aie-rt's loader "
                   "refuses such a program, so aie.xclbin cannot hold this one")
        fix = ("check the mlir-aie installation (`aiedsl doctor` shows what aiedsl finds); if "
               "the program is that large: " + fix)
    else:
        message = (f"{where}: its program ends at byte {end:,}, past the {limit:,} of program "
                   f"memory{others}")
    return ToolchainError(
        "program memory", message, loc=cores[name].loc, exit_code=5,
        limit=f"{limit:,} bytes of program memory per core (aie-rt's ELF loader refuses more)",
        found=f"{end:,} bytes", notes=[*notes, *_programs_used(d, programs)], fix=fix)


def _cache_hit(out: Path, key: str) -> dict | None:
    """The manifest when ``out`` holds outputs made from exactly these inputs, unchanged since
    they were written."""
    try:
        cache = json.loads((out / CACHE).read_text())
        if cache["key"] != key or cache["outputs"] != _digests(out):
            return None
        manifest = json.loads((out / MANIFEST).read_text())
    except (OSError, ValueError, KeyError, TypeError):  # (TypeError: a cache.json not a dict)
        return None
    return manifest


def run_step(step: Step, cwd: Path, env: dict[str, str], d: Design,
             shown: Path | None = None, fix: str = "") -> None:
    """Run ``step`` in ``cwd``, its output to ``cwd/step.log``; a failure raises a
    ToolchainError at the design line the output names. ``shown`` is the directory the error
    names for the log (``cwd`` unless the log is moved there); ``fix`` is said after it."""
    line = shell_line(step.argv)
    try:
        output, code = _run_tool(step.argv, cwd, env)
    except OSError as e:
        output, code = str(e), 127
    (cwd / step.log).write_text(f"$ {line}\n{output}")
    if code != 0:
        # its last lines as they were, control characters escaped (the log keeps them)
        tail = tool_output(output.strip()).split("\n")[-TAIL_LINES:]
        loc, where = _design_line(output, d)
        spelling = hint(output, cwd)
        raise ToolchainError(
            step.label.split()[0], f"{step.label} failed (exit {code})" + where, loc=loc,
            exit_code=5, notes=[f"$ {line}", *(f"  {t}" for t in tail)],
            fix=f"the whole output is in {(shown or cwd) / step.log}" + spelling + fix,
            hint=spelling)


def _run_tool(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[str, int]:
    """Run a tool to its end: its output (stdout, then stderr) and exit code.

    The tool gets a process group of its own, killed whole if aiedsl is interrupted (Ctrl-C,
    SIGTERM, SIGHUP): aiecc's own children would otherwise go on writing into the build
    directory after aiedsl has listed it and let go of its lock.
    """
    group = hasattr(os, "killpg")
    with subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
                          errors="replace",  # a compiler quotes a kernel's lines, any bytes
                          start_new_session=group) as proc:  # leaving it waits for the tool
        try:
            out, err = proc.communicate()
        except BaseException:
            try:
                if group:
                    os.killpg(proc.pid, signal.SIGKILL)
                else:
                    proc.kill()
            except OSError:  # already gone
                pass
            raise
    return (out or "") + (err or ""), proc.returncode


def _design_line(output: str, d: Design) -> tuple[Loc | None, str]:
    """The design line a tool's output points at, and a phrase saying how it was found."""
    # The design's own file names, found as they are (a generic path pattern would stop at a
    # space: 'my designs/d.py' read as 'designs/d.py'), also when a tool shortens one to its
    # last parts; the first mention in the output wins, the longest name at one place.
    files = {t.loc.file for t in d.tensors} | {d.loc.file}
    best: tuple[int, int, str, int] | None = None
    for f in files:
        parts = PurePosixPath(f).parts
        for i in range(len(parts)):
            tail = str(PurePosixPath(*parts[i:]))
            for m in re.finditer(rf"(?<![\w.-]){re.escape(tail)}:(\d+)", output):
                found = (m.start(), -len(tail), f, int(m[1]))
                if best is None or found < best:
                    best = found
    if best is not None:
        return Loc(file=best[2], line=best[3]), ""
    cc = re.search(r"kernels/(\w+)\.cc:(\d+)", output)
    if cc:
        for unit in kernel_units(d.kernels):
            if unit.name == cc[1]:
                kt, line = unit_text(d, unit), int(cc[2])
                origin = kt.origin(line)
                source = "" if origin.startswith("kernels/") else f", from {origin}"
                # a generated entry is its kernel's; the source shared by several, the first's
                symbol = kt.kernel_at(line) or unit.name
                k = next(k for k in unit.kernels if k.symbol == symbol)
                whose = (f"kernel '{symbol}'" if len(unit.kernels) == 1 or kt.kernel_at(line)
                         else f"the C++ of kernels {kt.label}")
                return k.loc, f" in {whose} (kernels/{cc[1]}.cc:{cc[2]}{source})"
    return None, ""
