"""What to say when an mlir-aie's parser refuses the spelling aiedsl wrote.

aiedsl's MLIR (``aiedsl/codegen/templates/mlir_ops.j2``) is by default mlir-aie's as of upstream
1e400306 (2026-03-14), whose parser and verifiers took every shipped design
(``../shared/reference``'s ``mlir-aie-lowered``); ``--mlir-syntax 2026-11``
(:mod:`aiedsl.codegen.syntax`) writes the three spellings mlir-aie changed since, read from its
ODS definitions (``AIEOps.td``, ``AIEX.td``) at a later upstream commit (cdc27acc), not run
here:

* ``aie.use_lock(%lock, Acquire, 1)``: the count became a required ``i32`` SSA operand
  (PR 3308, "Enable dynamic lock acquisition", July 2026): ``aie.use_lock(%lock, Acquire,
  %c1)``.
* ``aiex.npu.rtp_write(@buf, 3, 7)``: the value became an ``i32`` SSA operand with its type
  after it (PR 3225, "Carry npu scalar op fields as SSA operands", mid 2026):
  ``aiex.npu.rtp_write(@buf, 3, %v) : i32``. mlir-air's bump from mlir-aie
  1.3.4.dev19+g92e9475 to 1.3.5.dev52+g660e1a0 (its PR 1732, 2026-07-14) lists both.
* ``aie.objectfifo.acquire ... : !aie.objectfifosubview<...>`` with
  ``aie.objectfifo.subview.access``: after the objectfifo rework the acquire returns the
  acquired elements as memrefs (``%a, %b = aie.objectfifo.acquire @f(Consume, 2) :
  memref<...>, memref<...>``) and the access op is gone.

An aiecc or aie-opt of such an mlir-aie fails on the first of the old ones it reads;
:func:`hint` says why, and what to build with, so that the failure is not read as the
design's.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Callable

from aiedsl.codegen.syntax import NEWER, SPELLED

WRITTEN_FOR = "upstream 1e400306 (2026-03-14)"
"""The mlir-aie whose parser aiedsl's MLIR is known to pass."""

CHANGED = ("aie.use_lock", "aiex.npu.rtp_write", "aie.objectfifo.acquire",
           "aie.objectfifo.subview.access")
"""The ops whose spelling later mlir-aie changed (see the module's text)."""

NEWER_MARK = SPELLED + NEWER
"""How the comment line of an ``aie.mlir`` written in the 2026-11 spelling begins
(:func:`aiedsl.codegen.syntax.spelled_line`)."""
HEADER_LINES = 5
"""The lines at the top of ``aie.mlir`` read for that comment (its header's)."""
_ERROR = re.compile(r"(?:([^\s:'\"]+\.mlir):(\d+):\d+)?[^\n]*?: error: (.*)")
"""An MLIR diagnostic: at a line of an MLIR file the tool read (when it is one), its words."""
_REFUSED = re.compile(r"expected SSA operand|is unknown|unregistered operation|"
                      r"must be variadic of memref")
"""The words of a parser or verifier refusing a spelling (not a design's values): an operand
where an attribute was, an op it no longer has, a result type it no longer takes."""
_QUOTED_OP = re.compile(r"'((?:aie|aiex)\.[\w.]+)'")
"""An op a diagnostic names (``'aie.objectfifo.acquire' op result #0 must be ...``)."""


def hint(output: str, cwd: Path) -> str:
    """What to add to a tool's failure when its ``output`` refuses one of the :data:`CHANGED`
    spellings (the op named in an error, or on the MLIR line the error points at, read from
    ``cwd``): "" otherwise.

    >>> hint("aie.mlir:7:31: error: expected SSA operand", folder)     # doctest: +SKIP
    "; the MLIR was written in mlir-aie's spelling as of upstream 1e400306 ..."
    """
    read: dict[Path, list[str]] = {}  # each file the errors point into, read once
    newer = any(_line_of(cwd / "aie.mlir", n, read).startswith(NEWER_MARK)
                for n in range(1, HEADER_LINES + 1))  # written in the 2026-11 spelling
    # an older mlir-aie's words for the new spellings are not known: any error at them
    ops = named_ops(output, lambda name, number: _line_of(cwd / name, number, read),
                    any_error=newer)
    if not ops:
        return ""
    if newer:
        return (f"; the MLIR was written with --mlir-syntax 2026-11 (mlir-aie upstream cdc27acc's "
                f"spelling, read from its op definitions, not run here), and this mlir-aie "
                f"refuses its {', '.join(ops)}: an mlir-aie from before mid-2026 takes the "
                "default spelling: build without --mlir-syntax")
    return (f"; the MLIR was written in mlir-aie's spelling as of {WRITTEN_FOR}, and this "
            f"mlir-aie refuses its {', '.join(ops)}: later mlir-aie takes aie.use_lock's count "
            "and aiex.npu.rtp_write's value as SSA values (PRs 3308 and 3225, mlir-aie 1.3.5, "
            "July 2026) and, after its objectfifo rework, returns aie.objectfifo.acquire's "
            "elements as memrefs: build with --mlir-syntax 2026-11 (mlir_syntax=\"2026-11\" "
            "from Python), written from mlir-aie's op definitions and not yet run through its "
            "parser, or use an mlir_aie from before them (mlir-air pinned 1.3.4.dev19+g92e9475 "
            "until July 2026)")


def named_ops(output: str, line_of: Callable[[str, int], str], *, any_error: bool) -> list[str]:
    """The :data:`CHANGED` ops the errors in a tool's ``output`` name, or stand on the MLIR
    line an error points at (``line_of(file, number)``: that line of a file the tool read, ""
    when there is none), in the order found; ``any_error``: at every error, else only at
    those whose words refuse a spelling (:data:`_REFUSED`)."""
    ops: list[str] = []
    for line in output.splitlines():
        m = _ERROR.search(line)
        if m is None or not (any_error or _REFUSED.search(m[3])):
            continue
        named = [op for op in _QUOTED_OP.findall(m[3]) if op in CHANGED]
        if not named and m[1]:
            text = line_of(m[1], int(m[2]))
            named = [op for op in CHANGED if re.search(rf"{re.escape(op)}\b(?!\.)", text)]
        ops += [op for op in named if op not in ops]
    return ops


def may_be_spelling(output: str) -> bool:
    """Whether a tool's ``output`` has an error that a spelling could cause: one at a position
    of ``aie.mlir`` itself (the parser's; a verifier's is at the design line the op's
    ``loc(...)`` gives), or one naming a :data:`CHANGED` op."""
    for line in output.splitlines():
        m = _ERROR.search(line)
        if m is not None and (Path(m[1] or "").name == "aie.mlir" or any(
                op in CHANGED for op in _QUOTED_OP.findall(m[3]))):
            return True
    return False


def first_error(output: str) -> str:
    """The first MLIR error in a tool's ``output`` as the tool said it (its last line when it
    said none in that form)."""
    for line in output.splitlines():
        if _ERROR.search(line):
            return line.strip()
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    return lines[-1] if lines else "(no output)"


def _line_of(path: Path, number: int, read: dict[Path, list[str]]) -> str:
    """Line ``number`` (1-based) of ``path``, "" when there is none to read; ``read`` keeps
    the files read so far."""
    if path not in read:
        try:
            read[path] = path.read_text(errors="replace").splitlines()
        except OSError:
            read[path] = []
    lines = read[path]
    return lines[number - 1] if 0 < number <= len(lines) else ""
