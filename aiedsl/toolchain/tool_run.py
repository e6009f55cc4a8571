"""Running one toolchain step (a Peano compile, aiecc, a lowering tool) and saying its failure
at the design line its output names.

Every tool runs in a process group of its own, its output (stdout, then stderr) captured to its
log with the command line first; a failure is a :class:`~aiedsl.errors.ToolchainError` carrying
the command, the tail of the output and the design line the output points at: aiecc reports the
``loc(...)`` of the emitted MLIR, which carry design lines; clang reports ``kernels/<name>.cc``
lines, which map to the declaration of the kernel whose entry or source they are in.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from aiedsl.errors import ToolchainError
from aiedsl.ir.design import Design
from aiedsl.ir.loc import Loc
from aiedsl.kernels.text import unit_text
from aiedsl.kernels.units import kernel_units
from aiedsl.shell import shell_line
from aiedsl.text import tool_output
from aiedsl.toolchain.mlir_syntax import hint

TAIL_LINES = 15
"""Lines of a failed tool's output an error shows (its log keeps the whole)."""


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
