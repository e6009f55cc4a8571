"""aiedsl's physical plan against what the real mlir-aie made of the same MLIR.

The reference material's ``mlir-aie-lowered/`` holds, for seven builds of the shipped designs, the
``aie.mlir`` aiedsl emitted and the real lowering of it (``physical.mlir``: buffers with
addresses and banks, locks, DMA channels and BD chains, switchbox and shim-mux connections,
packet flows). Each case builds the same design, checks that aiedsl still emits the same MLIR
(else the fixture no longer applies), and compares the plan with the lowering fact by fact,
printing every difference.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from aiedsl.checks import check_design
from aiedsl.codegen.mlir import render_mlir
from aiedsl.loader import load_design
from aiedsl.toolchain.physical import diff_physical, parse_physical
from aiedsl.targets import get_target
from shared_reference import reference_file

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = {
    "passthrough_npu1": ("passthrough", {}, None),
    "passthrough_npu2_1col": ("passthrough", {}, "npu2_1col"),
    "vector_scalar_mul_npu1": ("vector_scalar_mul", {}, None),
    "vector_scalar_mul_npu2": ("vector_scalar_mul", {}, "npu2"),
    "gemm_bf16_npu1_512": ("gemm_bf16", {}, None),
    "gemm_bf16_npu1_1024x512x768": ("gemm_bf16", {"M": "1024", "K": "512", "N": "768"}, None),
    "gemm_bf16_npu2_8x4_512": ("gemm_bf16", {"COLS": "8"}, "npu2"),
}


def _code(mlir: str) -> list[str]:
    return [line for line in mlir.splitlines() if not line.startswith("//")]


def planned(name: str):  # type: ignore[no-untyped-def]
    design, defines, device = FIXTURES[name]
    placed, _ = check_design(load_design(ROOT / "designs" / f"{design}.py", defines, device).ir)
    return placed


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_the_fixture_lowered_what_aiedsl_emits(name: str, in_root: Path) -> None:
    given = reference_file("mlir-aie-lowered", name, "input.mlir").read_text()
    placed = planned(name)
    assert _code(render_mlir(placed, get_target(placed.device))) == _code(given)


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_the_plan_is_the_lowering(name: str, in_root: Path) -> None:
    real = parse_physical(reference_file("mlir-aie-lowered", name, "physical.mlir").read_text())
    placed = planned(name)
    assert placed.physical is not None
    differences = diff_physical(placed.physical, real)
    assert not differences, f"{len(differences)} differences:\n" + "\n".join(differences)
