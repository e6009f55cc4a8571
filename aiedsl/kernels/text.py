"""Render each kernel a design calls as one self-contained C++ file (``kernels/<symbol>.cc``).

The file is the kernel's source (a file in ``kernels_cpp/`` or a rendered template) followed by
the ``extern "C"`` entry point whose name carries the kernel's shape. :class:`KernelText`
remembers where the source's lines sit in the file, so a compiler's complaint about
``kernels/<symbol>.cc:57`` can be shown at the user's own file and line.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from aiedsl.dtypes import dtype
from aiedsl.errors import display_path, stable_path
from aiedsl.ir import Design, Kernel
from aiedsl.ir.program import calls
from aiedsl.kernels.paths import KERNELS_CPP
from aiedsl.kernels.source import KernelSource, kernel_source
from aiedsl.render import render
from aiedsl.version import __version__


@dataclass(frozen=True)
class KernelText:
    """The C++ of ``kernels/<symbol>.cc`` and where its source part came from."""

    symbol: str
    text: str
    source: KernelSource
    first_line: int
    """Line of :attr:`text` where the source's first line is (1-based)."""

    def origin(self, line: int) -> str:
        """``file:line`` a line of the generated file comes from (the user's file when it is
        in the copied source, else the generated file itself)."""
        n = self.source.text.count("\n") + 1
        if self.source.path is not None and self.first_line <= line < self.first_line + n:
            return f"{display_path(str(self.source.path))}:{line - self.first_line + 1}"
        return f"kernels/{self.symbol}.cc:{line}"

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

    def _in_source(self, line: int) -> bool:
        """Is ``line`` of the generated file one of the user's file (:meth:`origin`)?"""
        return self.origin(line) != f"kernels/{self.symbol}.cc:{line}"

    def _next_file(self, lines: list[str], pattern: re.Pattern[str]) -> str:
        """The file the first ``name:LINE`` in ``lines`` comes from (the generated file if
        none): what a bare ``name: In function ...`` heads."""
        for ln in lines:
            m = pattern.search(ln)
            if m is not None and m[1]:
                return self.origin(int(m[1])).rsplit(":", 1)[0]
        return f"kernels/{self.symbol}.cc"


_GUTTER = re.compile(r"^( *)(\d+)(?= \|)")
"""A code excerpt's line in g++'s output: ``    8 |     aie::store_v(...)``."""
_LOCATED = re.compile(r"^\s*(?:In file included from\s+|from\s+)?([^\s:]+):(\d+):")
"""A line of g++'s output about a place: ``path:line:col: error: ...``."""


def kernel_text(d: Design | None, k: Kernel) -> KernelText:
    """The generated C++ of kernel ``k`` as design ``d`` uses it (or on its own, ``d`` None)."""
    src = kernel_source(k)
    params, names = [], []
    for a in k.args:
        cpp = dtype(a.dtype).cpp
        params.append(f"{cpp} *{a.name}" if a.kind == "buffer" else f"{cpp} {a.name}")
        names.append(a.name)
    # The file records paths as stable_path does (not as the user's working directory sees them).
    home = os.path.dirname((d or k).loc.file)
    origin = src.label
    if src.path is not None and not src.path.is_relative_to(KERNELS_CPP):
        origin = stable_path(str(src.path), home)
    sites = sorted({f"{stable_path(c.loc.file, home)}:{c.loc.line}" for core in d.cores
                    for c in calls(core) if c.kernel == k.symbol}) if d else []
    text = render("kernel.cc.j2", version=__version__, k=k, origin=origin, source=src.text,
                  design=d.name if d else None, calls=sites, params=params, names=names)
    first = text[:text.index(src.text)].count("\n") + 1
    return KernelText(k.symbol, text, src, first)


def render_kernel(d: Design | None, k: Kernel) -> str:
    """The C++ text of kernel ``k`` as design ``d`` uses it (or on its own, ``d`` None)."""
    return kernel_text(d, k).text


def render_kernels(d: Design) -> dict[str, str]:
    """``{"kernels/<symbol>.cc": text}`` for every kernel of ``d``."""
    return {f"kernels/{k.symbol}.cc": render_kernel(d, k) for k in d.kernels}
