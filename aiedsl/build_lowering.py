"""mlir-aie's lowering of a build, in a spelling the mlir-aie found takes.

A build (:func:`aiedsl.api.building`) whose ``mlir_syntax`` is ``"auto"`` writes the default
spelling (:mod:`aiedsl.codegen.syntax`); when the mlir-aie found refuses it as aie-opt reads
``aie.mlir``, and takes the whole design in the newer one, the build is that one.
"""

from __future__ import annotations

from pathlib import Path

from aiedsl.codegen.syntax import AUTO, DEFAULT, NEWER
from aiedsl.emit import Generated, respelled
from aiedsl.toolchain.discover import Tool
from aiedsl.toolchain.lower import Lowering, failed_reading, lower_design
from aiedsl.toolchain.mlir_syntax import CHANGED, first_error, may_be_spelling, named_ops


def lower_build(gen: Generated, out: Path, aie_opt: Tool, aie_translate: Tool, *,
                auto: bool) -> tuple[Generated, Lowering, str]:
    """``gen`` lowered by mlir-aie's passes: the build (perhaps respelled), its
    :class:`~aiedsl.toolchain.lower.Lowering`, and why it was respelled ("" when it was not).

    With ``auto``, a lowering that fails at its first step (aie-opt reading ``aie.mlir``) with
    an error a spelling could cause (:func:`~aiedsl.toolchain.mlir_syntax.may_be_spelling`) is
    tried again on ``aie.mlir`` in :data:`~aiedsl.codegen.syntax.NEWER`'s spelling, kept when
    the whole lowering then succeeds: that mlir-aie reads the newer spelling, so the failure
    was the older one's. When the second fails too, the first failure is raised, saying so
    (and no longer offering the newer spelling)."""

    def lowered(g: Generated) -> Lowering:
        return lower_design(g.design, g.files, out, aie_opt, aie_translate, usage=g.usage,
                            hang=g.hang.line() if g.hang is not None else "")

    lowering = lowered(gen)
    text = gen.files["aie.mlir"]
    said = "\n".join(lowering.logs.values())
    if not (auto and failed_reading(lowering) and may_be_spelling(said)
            and any(op in text for op in CHANGED)):
        return gen, lowering, ""
    newer = respelled(gen, NEWER)
    again = lowered(newer)
    if again.ok:
        lines = text.splitlines()
        ops = named_ops(said, lambda name, n: lines[n - 1] if name == "aie.mlir" and
                        0 < n <= len(lines) else "", any_error=True)
        return newer, again, (
            f"{aie_opt.version or 'the aie-opt found'} refused aie.mlir in mlir-aie "
            f"{DEFAULT}'s spelling" + (f" (its {', '.join(ops)})" if ops else "")
            + f": {first_error(said)}")
    error = lowering.error
    assert error is not None
    error.notes.append(
        f"aiedsl then wrote aie.mlir in mlir-aie {NEWER}'s spelling (--mlir-syntax {AUTO}), "
        f"which this mlir-aie refused too: {first_error(chr(10).join(again.logs.values()))}")
    if error.hint and error.fix:
        error.fix = error.fix.replace(error.hint, "")
    error.args = (error.render(),)
    return gen, lowering, ""
