"""Which mlir-aie's op spellings ``aie.mlir`` is written in.

mlir-aie changed three spellings aiedsl writes after upstream 1e400306 (2026-03-14), the
version whose parser and passes took every shipped design (``../shared/reference``):

* ``aie.objectfifo.acquire`` returns the acquired elements as memrefs
  (``%a_0, %a_1 = aie.objectfifo.acquire @f(Consume, 2) : memref<..>, memref<..>``; its
  results are ``Variadic<AnyMemRef>``), and ``aie.objectfifo.subview.access`` is gone;
* ``aiex.npu.rtp_write``'s value is an ``i32`` SSA operand with its type after the op
  (``aiex.npu.rtp_write(@buf, 0, %v) : i32``; PR 3225);
* ``aie.use_lock``'s count is a required ``i32`` SSA operand (PR 3308, July 2026).

``"2026-11"`` writes those, as read from mlir-aie's op definitions (``AIEOps.td``,
``AIEX.td``) and custom parsers (``AIEDialect.cpp``) at upstream cdc27acc; no aie-opt of that
version ran here. Every other op aiedsl writes is spelled alike in both.

``"auto"`` (the default) writes ``"2026-03"``'s, unless the build finds mlir-aie's aie-opt and
aie-translate, whose lowering of it fails at its first step (reading ``aie.mlir``) and then
succeeds on the same design in ``"2026-11"``'s: the spelling written is then one the installed
mlir-aie took whole, never a guess (:func:`aiedsl.api.building`). With no mlir-aie found the
output is the same on every machine.
"""

from __future__ import annotations

from typing import Literal, get_args

MlirSyntax = Literal["2026-03", "2026-11"]
"""An mlir-aie spelling aiedsl can write: ``"2026-03"`` (upstream 1e400306, the default) or
``"2026-11"`` (upstream cdc27acc: acquire returning memrefs, SSA rtp values and lock counts)."""
SYNTAXES: tuple[str, ...] = get_args(MlirSyntax)
DEFAULT: MlirSyntax = "2026-03"
NEWER: MlirSyntax = "2026-11"
AUTO = "auto"
"""Write :data:`DEFAULT`'s spelling unless the mlir-aie found lowers only :data:`NEWER`'s."""
CHOICES: tuple[str, ...] = (AUTO, *SYNTAXES)
"""What ``--mlir-syntax`` and ``mlir_syntax=`` take."""
MLIR_AIE: dict[str, str] = {
    "2026-03": "upstream 1e400306 (2026-03-14), the spelling every shipped design was lowered "
               "with",
    "2026-11": "upstream cdc27acc (late 2026), read from its op definitions, not run here",
}
"""The mlir-aie each spelling is written for."""

SPELLED = "// spelled for mlir-aie "
"""How the comment line begins that says which spelling ``aie.mlir`` is in, when it is not
:data:`DEFAULT`'s (what :func:`spelled_line` writes and a tool's failure is read by:
:mod:`aiedsl.toolchain.mlir_syntax`)."""


def spelled_line(syntax: MlirSyntax) -> str:
    """The comment line ``aie.mlir`` carries for ``syntax`` ("" for :data:`DEFAULT`'s).

    >>> spelled_line("2026-11")[:34]
    '// spelled for mlir-aie 2026-11: u'
    """
    return "" if syntax == DEFAULT else f"{SPELLED}{syntax}: {MLIR_AIE[syntax]}"
