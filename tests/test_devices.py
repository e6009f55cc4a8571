"""Device names: what an unknown one most likely means (IRON's class names, another case,
mlir-aie's older spellings), in the design's error and in ``get_target``'s."""

from __future__ import annotations

import pytest

from aiedsl.errors import DesignError
from aiedsl.loader import load_design
from aiedsl.targets import get_target
from aiedsl.targets.devices import device_hint


@pytest.mark.parametrize("name, hint", [
    ("NPU1Col1", "'npu1_1col' (IRON's NPU1Col1 is mlir-aie's npu1_1col)"),
    ("NPU2Col7", "'npu2_7col' (IRON's NPU2Col7 is mlir-aie's npu2_7col)"),
    ("NPU1Col4", "'npu1' (IRON's NPU1Col4 is mlir-aie's npu1)"),
    ("NPU2", "'npu2' (device names are lower case)"),
    ("npu", "'npu1' (mlir-aie called the Phoenix NPU 'npu' before naming it npu1)"),
    ("npu1_4col", "'npu1' (mlir-aie's npu1 is the whole 4-column array)"),
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
