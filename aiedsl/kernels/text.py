"""Render the C++ files of a design's kernels (``kernels/<name>.cc``), one per unit
(:mod:`aiedsl.kernels.units`): the kernels declared from one source with the same defines.

The file is the source (a file in ``kernels_cpp/``, one beside the design, or a rendered
template) once, followed by the ``extern "C"`` entry of each kernel that declares ``entry=``,
whose name carries the kernel's shape (a kernel without ``entry=`` is a function the source
defines itself). :class:`KernelText` remembers where the source's lines sit in the file, so a
compiler's complaint about ``kernels/<name>.cc:57`` can be shown at the user's own file and line.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from aiedsl.dtypes import dtype
from aiedsl.errors import display_path, stable_path
from aiedsl.ir.design import Design
from aiedsl.ir.kernel import Kernel
from aiedsl.ir.loc import Loc
from aiedsl.ir.program import calls
from aiedsl.kernels.paths import KERNEL_TEMPLATES, KERNELS_CPP
from aiedsl.kernels.source import KernelSource, kernel_source
from aiedsl.kernels.units import KernelUnit, kernel_units, unit_of
from aiedsl.render import render
from aiedsl.version import __version__


@dataclass(frozen=True)
class KernelText:
    """The C++ of ``kernels/<name>.cc`` (one unit) and where its source part came from."""

    name: str
    """The unit's name: the file is ``kernels/<name>.cc``."""
    text: str
    source: KernelSource
    first_line: int
    """Line of :attr:`text` where the source's first line is (1-based)."""
    symbols: tuple[str, ...]
    """The kernels it holds."""
    flags: tuple[str, ...] = ()
    """The ``-DNAME=VALUE`` words every compile of it takes (its kernels' ``defines=``)."""
    entries: tuple[tuple[int, int, str], ...] = ()
    """(first line, last line, symbol) of each generated ``extern "C"`` entry, in file
    order."""
    declared: tuple[tuple[str, Loc], ...] = ()
    """(symbol, declaration line) of each kernel it holds."""
    callees: tuple[tuple[str, str], ...] = ()
    """(symbol, name of the C++ function it runs) of each kernel it holds: its ``entry=``
    without template arguments, or its own name (no ``entry=``)."""

    @property
    def label(self) -> str:
        """Its kernels, as messages name them: ``k``, ``a and b``."""
        s = self.symbols
        return s[0] if len(s) == 1 else f"{', '.join(s[:-1])} and {s[-1]}"

    def kernel_at(self, line: int) -> str | None:
        """The kernel whose generated entry holds ``line`` of the file (None: another line,
        such as the generated block's closing ``} // extern "C"``, which is no kernel's)."""
        return next((symbol for first, last, symbol in self.entries if first <= line <= last),
                    None)

    def origin(self, line: int) -> str:
        """``file:line`` a line of the generated file comes from (the user's file when it is
        in the copied source, else the generated file itself)."""
        n = self.source.text.count("\n") + 1
        if self.source.path is not None and self.first_line <= line < self.first_line + n:
            return f"{display_path(str(self.source.path))}:{line - self.first_line + 1}"
        return f"kernels/{self.name}.cc:{line}"

    def map_output(self, output: str, name: str) -> str:
        """Rewrite ``<dir>/name:LINE`` in a compiler's ``output`` (the file it compiled, wherever
        that was) to the lines they came from, and the line numbers in the gutter of the code
        excerpts below them (``    8 | ...``) too; a bare ``<dir>/name`` (``: In function``)
        to the file of the next line named."""
        pattern = re.compile(r"(?:[^\s:'\"]*/)?" + re.escape(name) + r"(?::(\d+))?")
        lines = output.split("\n")
        shift = 0  # what to take off the excerpts' line numbers: the diagnostic's, above them
        out = []
        for i, ln in enumerate(lines):
            gutter = _GUTTER.match(ln)
            if gutter is not None:
                if shift:
                    width = len(gutter[1]) + len(gutter[2])
                    ln = f"{int(gutter[2]) - shift:>{width}}" + ln[gutter.end(2):]
                out.append(ln)
                continue
            at = _LOCATED.match(ln)
            if at is not None:
                ours = pattern.fullmatch(at[1]) is not None
                shift = self.first_line - 1 if ours and self._in_source(int(at[2])) else 0
            ln = pattern.sub(lambda m: self.origin(int(m[1])) if m[1] else
                             self._next_file(lines[i + 1:], pattern), ln)
            out.append(ln)
        return "\n".join(out)

    def layout(self) -> str:
        """What the lines of ``kernels/<name>.cc`` hold, for a compiler's message that names
        lines of it other than the user's (a generated entry's call, the end of the file):
        the file is aiedsl's, written into a build's ``kernels/`` but found nowhere else."""
        src = self.source.text
        last = self.first_line + src.count("\n") - (1 if src.endswith("\n") else 0)
        parts = [f"lines 1 to {self.first_line - 1} are aiedsl's comments",
                 f"lines {self.first_line} to {last} are {self.source.label}'s lines 1 to "
                 f"{last - self.first_line + 1}"]
        for first, end, symbol in self.entries:
            parts.append(f"lines {first} to {end} are the extern \"C\" entry {symbol}, "
                         f"{self.entry_call(symbol)}")
        return (f"kernels/{self.name}.cc is the file aiedsl generates and compiles (`aiedsl "
                f"build` writes it into the build's kernels/): " + "; ".join(parts))

    def entry_call(self, symbol: str) -> str:
        """What kernel ``symbol``'s generated entry calls, and where its ``entry=`` is:
        ``calling f<64>(a, b) (entry= at d.py:12)``."""
        first = next((f for f, _, s in self.entries if s == symbol), None)
        lines = self.text.split("\n")
        call = lines[first].strip().rstrip(";") if first is not None and first < len(lines) \
            else "its entry="
        at = dict(self.declared).get(symbol)
        return f"calling {call}" + (f" (entry= at {at})" if at is not None else "")

    def _in_source(self, line: int) -> bool:
        """Is ``line`` of the generated file one of the user's file (:meth:`origin`)?"""
        return self.origin(line) != f"kernels/{self.name}.cc:{line}"

    def _next_file(self, lines: list[str], pattern: re.Pattern[str]) -> str:
        """The file the first ``name:LINE`` in ``lines`` comes from (the generated file if
        none): what a bare ``name: In function ...`` heads."""
        for ln in lines:
            m = pattern.search(ln)
            if m is not None and m[1]:
                return self.origin(int(m[1])).rsplit(":", 1)[0]
        return f"kernels/{self.name}.cc"


_GUTTER = re.compile(r"^( *)(\d+)(?= \|)")
"""A code excerpt's line in g++'s output: ``    8 |     aie::store_v(...)``."""
_ENTRY_LINE = re.compile(r"^void (\w+)\(", re.M)
"""The first line of a generated ``extern "C"`` entry (kernel.cc.j2)."""
_LOCATED = re.compile(r"^\s*(?:In file included from\s+|from\s+)?([^\s:]+):(\d+):")
"""A line of g++'s output about a place: ``path:line:col: error: ...``."""


def kernel_text(d: Design | None, k: Kernel) -> KernelText:
    """The generated C++ holding kernel ``k`` as design ``d`` uses it: its unit's file (or, ``d``
    None, a file of ``k`` alone)."""
    return unit_text(d, unit_of(d, k))


def unit_text(d: Design | None, unit: KernelUnit) -> KernelText:
    """The C++ of ``unit`` (``kernels/<name>.cc``) as design ``d`` uses it (``d`` None: alone)."""
    first = unit.kernels[0]
    src = kernel_source(first)
    # The file records paths as stable_path does (not as the user's working directory sees them).
    home = os.path.dirname((d or first).loc.path)
    origin = src.label
    mine = src.path or src.template
    if mine is not None and not any(mine.is_relative_to(d) for d in (KERNELS_CPP,
                                                                       KERNEL_TEMPLATES)):
        origin = stable_path(str(mine), home)  # a file or template of the user's
    views = []
    for k in unit.kernels:
        params, names = [], []
        for a in k.args:
            cpp = dtype(a.dtype).cpp
            params.append(f"{cpp} *{a.name}" if a.kind == "buffer" else f"{cpp} {a.name}")
            names.append(a.name)
        sites = sorted({f"{stable_path(c.loc.path, home)}:{c.loc.line}" for core in d.cores
                        for c in calls(core) if c.kernel == k.symbol}) if d else []
        views.append({"symbol": k.symbol, "cost": k.cost, "entry": k.entry, "calls": sites,
                      "params": params, "names": names})
    text = render("kernel.cc.j2", version=__version__, unit=unit.name, kernels=views,
                  entries=[v for v in views if v["entry"]], origin=origin, source=src.text,
                  flags=unit.flags, design=d.name if d else None)
    first_line = text[:text.index(src.text)].count("\n") + 1
    after = text.index(src.text) + len(src.text)
    entries = tuple((text.count("\n", 0, m.start()) + 1,
                     text.count("\n", 0, text.index("\n}", m.start())) + 2, m[1])
                    for m in _ENTRY_LINE.finditer(text, after))
    return KernelText(unit.name, text, src, first_line, tuple(unit.symbols), tuple(unit.flags),
                      entries, tuple((k.symbol, k.loc) for k in unit.kernels),
                      tuple((k.symbol, re.split(r"[<(\s]", (k.entry or k.symbol).strip())[0]
                             .split("::")[-1]) for k in unit.kernels))


def render_kernels(d: Design) -> dict[str, str]:
    """``{"kernels/<name>.cc": text}`` for every unit of ``d``'s kernels."""
    return {u.file: unit_text(d, u).text for u in kernel_units(d.kernels)}
