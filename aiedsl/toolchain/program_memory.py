"""What the cores' programs take of their program memory, read off the ELFs aiecc leaves, and
the error naming the core that does not fit.

aie-rt's ELF loader refuses a program that ends past the program memory, with a message that
names no core (``Overflow of program memory``); mlir-aie since PR 3618 links against the real
size (``will not fit in region 'program'``). Either way the core ELFs in aiecc's project folder
say which core is over, and by how much.
"""

from __future__ import annotations

import re
from pathlib import Path

from aiedsl.errors import ToolchainError
from aiedsl.ir.design import Design
from aiedsl.targets import TargetModel
from aiedsl.toolchain.elf import ElfError, program_end
from aiedsl.toolchain.tool_run import Step

PROJECT = "aie.mlir.prj"
"""aiecc's project folder for ``aie.mlir``: its intermediate files, the core ELFs among them."""


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


def program_overflow(d: Design, target: TargetModel, work: Path, out: Path, step: Step,
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
    over = program_over(d, target, programs, err.notes, out / step.log, finished=False)
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


def program_over(d: Design, target: TargetModel, programs: dict[str, int], notes: list[str],
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
