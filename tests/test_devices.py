"""Device names: what an unknown one most likely means (IRON's class names, another case,
mlir-aie's older spellings), in the design's error and in ``get_target``'s."""

from __future__ import annotations

import os
from pathlib import Path
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


@pytest.mark.parametrize("name, hint", [
    ("npu4", "'npu2' (the amdxdna driver's npu4, Strix, is an XDNA2 NPU: mlir-aie's npu2)"),
    ("npu6", "'npu2' (the amdxdna driver's npu6, Krackan, is an XDNA2 NPU: mlir-aie's npu2)"),
])
def test_the_drivers_names_of_strix_are_told_as_npu2(name: str, hint: str) -> None:
    """--device npu4 said only "unknown device" (a tester): the Linux driver calls Strix npu4."""
    from aiedsl.targets import device_hint

    assert device_hint(name) == hint


def test_the_wider_device_offered_keeps_the_family_first() -> None:
    from aiedsl.targets import DEVICES, wider_device

    assert wider_device(DEVICES["npu1_1col"]).name == "npu1_2col"  # type: ignore[union-attr]
    assert wider_device(DEVICES["npu1"]).name == "npu2_5col"  # type: ignore[union-attr]
    assert wider_device(DEVICES["npu2"]) is None
    assert wider_device(DEVICES["npu1"], lambda t: t.cols >= 8).name == "npu2"  # type: ignore


VADD_8X4 = '''
import numpy as np
from aiedsl import Tensor, bf16, channel, define, design, herd, loop, memtile, runtime
from aiedsl.kernels import add

COLS, ROWS, P, ITER = 8, define("ROWS", 4), 1024, 2
N = ITER * COLS * ROWS * P

@design(device="npu2")
def vadd8(A: Tensor[N, bf16], B: Tensor[N, bf16], C: Tensor[N, bf16]):
    a = channel(Tensor[P, bf16], shape=[COLS, ROWS], via=memtile, split=1)
    b = channel(Tensor[P, bf16], shape=[COLS, ROWS], via=memtile, split=1)
    c = channel(Tensor[P, bf16], shape=[COLS, ROWS], via=memtile, join=1)
    k = add(Tensor[P, bf16])

    @herd(cols=COLS, rows=ROWS)
    def core(x, y):
        for _ in loop(ITER):
            with a[x, y].consume() as ta, b[x, y].consume() as tb, c[x, y].produce() as tc:
                k(ta, tb, tc)

    with runtime() as rt:
        for x in range(COLS):
            pat = (x * ROWS * P, [ITER, ROWS, P], [COLS * ROWS * P, P, 1])
            rt.fill(a[x, :], A, pat)
            rt.fill(b[x, :], B, pat)
            rt.drain(c[x, :], C, pat)

@vadd8.reference
def reference(A, B):
    return (A.astype(np.float32) + B.astype(np.float32)).astype(A.dtype)
'''


def test_splits_over_the_memtiles_channels_are_told_to_take_fewer_parts(tmp_path: Path) -> None:
    """An 8x4 herd fed by two 4-way splits per column needs 72 memtile outputs of npu2's 48:
    the fix said only to pass fewer fifos through memtiles, which the shims (16 outputs)
    could not take either (a tester). Fewer parts fits, and passes."""
    from aiedsl.checks import check_design
    from aiedsl.sim import simulate

    path = tmp_path / "vadd8.py"
    path.write_text(VADD_8X4)
    with pytest.raises(DesignError) as e:
        check_design(load_design(path).ir)
    assert e.value.fix is not None and e.value.fix.startswith(
        "split over fewer parts (each part of a split leaves its memtile on a DMA channel of "
        "its own: a herd of fewer rows or columns, each core doing more), or pass fewer fifos ")
    handle = load_design(path, {"ROWS": 2})
    check_design(handle.ir)
    assert simulate(handle).passed


def test_a_pin_past_the_last_column_offers_a_wider_device_of_the_family(
        tmp_path: Path) -> None:
    """shim(3) on npu1_1col: npu1 has that column (a tester asked for the device); shim(7)
    there offers none, npu2 being another machine."""
    src = (Path(__file__).parent.parent / "designs" / "passthrough.py").read_text()
    for column, fix in ((3, "pin column 0, or use --device npu1 (4 columns)"),
                        (7, "pin column 0")):
        path = tmp_path / f"p{column}.py"
        path.write_text(src.replace('to_mem = fifo(Tensor[TILE, i32], name="in_l3"',
                                    f'to_mem = fifo(Tensor[TILE, i32], name="in_l3", '
                                    f'shim=shim({column})').replace(
            "from aiedsl import ", "from aiedsl import shim, "))
        from aiedsl.checks import check_design

        with pytest.raises(DesignError) as e:
            check_design(load_design(path).ir)
        assert e.value.fix == fix
