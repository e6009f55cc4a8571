"""Device names: what an unknown one most likely means (IRON's class names, another case,
mlir-aie's older spellings), in the design's error and in ``get_target``'s."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from aiedsl.errors import DesignError
from aiedsl.loader import load_design
from aiedsl.targets import get_target
from aiedsl.targets.devices import device_hint


@pytest.mark.parametrize("name, hint", [
    ("NPU1Col1", "'npu1_1col' (IRON's NPU1Col1 is mlir-aie's npu1_1col)"),
    ("NPU2Col7", "'npu2_7col' (IRON's NPU2Col7 is mlir-aie's npu2_7col)"),
    ("NPU1Col4", "'npu1' (IRON's NPU1Col4 is older mlir-aie's npu1_4col, which mlir-aie since "
                 "PR 2397 calls npu1)"),
    ("NPU2", "'npu2' (device names are lower case)"),
    ("npu", "'npu1' (mlir-aie called the Phoenix NPU 'npu' before naming it npu1)"),
    ("npu1_4col", "'npu1' (older mlir-aie and IRON's NPU1Col4 called it npu1_4col; mlir-aie "
                  "since PR 2397 calls it npu1)"),
    ("npu2_8col", "'npu2' (mlir-aie's npu2 is the whole 8-column array)"),
    ("npu1_5col", None), ("NPU1Col5", None), ("npu3", None), ("xcvc1902", None), (3, None),
])
def test_a_device_name_close_to_a_known_one_gets_it_named(name: object, hint: str | None) -> None:
    assert device_hint(name) == hint


def test_get_target_names_the_device_meant() -> None:
    with pytest.raises(KeyError) as e:
        get_target("NPU1Col2")
    assert e.value.args[0] == ("unknown device 'NPU1Col2'; did you mean 'npu1_2col' (IRON's "
                               "NPU1Col2 is mlir-aie's npu1_2col)?")


def test_a_design_on_irons_device_name_is_told_mlir_aies(tmp_path) -> None:
    src = open("designs/passthrough.py").read().replace('device="npu1_1col"', 'device="NPU1Col1"')
    path = tmp_path / "pt.py"
    path.write_text(src)
    with pytest.raises(DesignError) as e:
        load_design(path)
    assert e.value.rule == "device"
    assert e.value.fix == "use 'npu1_1col' (IRON's NPU1Col1 is mlir-aie's npu1_1col)"


def test_a_library_kernel_outside_a_design_on_an_unknown_device_is_a_design_error(
        design_file) -> None:
    """A library kernel's device= is checked as design(device=...) is: it was get_target's
    KeyError, printed as `error [python error]: KeyError ...`."""
    path = design_file('''
        from aiedsl.kernels import matmul

        mm = matmul(64, 64, 64, device="NPU1Col1")
        ''')
    with pytest.raises(DesignError) as e:
        load_design(path)
    assert str(e.value) == (
        "d.py:3: error [device]: unknown device 'NPU1Col1'\n"
        "  found: NPU1Col1\n"
        "  fix: use 'npu1_1col' (IRON's NPU1Col1 is mlir-aie's npu1_1col)")
    path = design_file('''
        from aiedsl.kernels import exp_bf16

        e = exp_bf16(1024, device="npu3")
        ''')
    with pytest.raises(DesignError) as e:
        load_design(path)
    assert str(e.value) == (
        "d.py:3: error [device]: unknown device 'npu3'\n"
        "  found: npu3\n"
        "  fix: use one of npu1, npu1_1col, npu1_2col, npu1_3col, npu2, npu2_1col, npu2_2col, "
        "npu2_3col, npu2_4col, npu2_5col, npu2_6col, npu2_7col")


def test_irons_npu1col4_is_refused_with_mlir_aies_renaming(tmp_path) -> None:
    """IRON's NPU1Col4 ported as device="npu1_4col": mlir-aie since PR 2397 calls the whole
    4-column Phoenix array npu1 (issue 2371 dropped the 5-column one) and has no npu1_4col, so
    aiedsl, which emits the current name, refuses the old one (exit 2), saying both."""
    src = open("designs/passthrough.py").read().replace('device="npu1_1col"',
                                                         'device="npu1_4col"')
    path = tmp_path / "pt.py"
    path.write_text(src)
    line = src.splitlines().index(next(x for x in src.splitlines() if "npu1_4col" in x)) + 1
    r = subprocess.run([sys.executable, "-m", "aiedsl", "check", "pt.py"], capture_output=True,
                       text=True, cwd=tmp_path, env={**os.environ, "COLUMNS": "80"})
    assert (r.returncode, r.stdout, r.stderr) == (2, "", (
        f"pt.py:{line}: error [device]: unknown device 'npu1_4col'\n"
        "  found: npu1_4col\n"
        "  fix: use 'npu1' (older mlir-aie and IRON's NPU1Col4 called it npu1_4col; mlir-aie "
        "since PR 2397 calls it npu1)\n"))
