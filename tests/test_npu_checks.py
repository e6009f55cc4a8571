"""Runs on the NPU, against the recording pyxrt of ``test_toolchain.py``: a tensor updated in
place starts every run from the inputs, and a design is run only on an NPU of the generation it
was built for (the name XRT gives the device, read as mlir-aie's host runtime reads it)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_toolchain import PASSTHROUGH, FakeXrt, fake_npu, fake_tools  # noqa: F401

import aiedsl
from aiedsl.errors import ToolchainError
from aiedsl.toolchain.generation import npu_generation
from aiedsl.toolchain.xrt import NpuSession

IN_PLACE = '''
import numpy as np
from aiedsl import Tensor, design, fifo, herd, i16, i32, loop, runtime
from aiedsl.kernels import scale

@design(device="npu1_1col")
def inplace(x: Tensor[4096, i16], factor: Tensor[1, i32]):
    of_factor = fifo(Tensor[1, i32], name="infactor")
    of_in = fifo(Tensor[1024, i16], name="in")
    of_out = fifo(Tensor[1024, i16], name="out")
    scale_k = scale(1024)

    @herd()
    def core():
        with of_factor.consume() as f:
            for _ in loop(4):
                with of_out.produce() as dst, of_in.consume() as src:
                    scale_k(src, dst, f, 1024)

    with runtime() as rt:
        rt.fill(of_in, x)
        rt.fill(of_factor, factor)
        rt.drain(of_out, x)

@inplace.reference
def reference(x, factor):
    return (x.astype(np.int64) * int(factor[0])).astype(np.int16)
'''
"""A tester's: ``x`` is filled from and drained into (scaled in place by ``factor``)."""


# -- a tensor updated in place ------------------------------------------------------------------

def test_a_tensor_updated_in_place_is_written_again_before_each_npu_run(
        fake_npu: FakeXrt, fake_tools: dict[str, Path]) -> None:
    """A tester's: `run --warmup 2 --iters 3` wrote x once and ran five times, each run scaling
    what the one before left: the last run's x was scaled five times, and the check FAILed a
    correct design, its note blaming a race of the drain with the fill."""
    (fake_tools["root"] / "inplace.py").write_text(IN_PLACE)
    art = aiedsl.build(fake_tools["root"] / "inplace.py", output="out")
    fake_npu.behave = "scale"
    x = (np.arange(4096) % 100 - 50).astype(np.int16)
    result = art.run(x, np.array([3], dtype=np.int32), target="npu", iters=3, warmup=2)
    assert result.passed, [c.line() for c in result.checks]
    np.testing.assert_array_equal(result.outputs["x"], x * 3)
    # x (group 3) is written before each of the five launches; factor (group 4), which no
    # drain writes, once (and the instructions, group 1, at load)
    steps = [c for c in fake_npu.calls if c[0] in ("launch", "sync")]
    assert steps == [("sync", 1, "to_device"), ("sync", 3, "to_device"), ("sync", 4, "to_device"),
                     ("launch", 3, 1, 4, [3, 4])] + [
        ("sync", 3, "to_device"), ("launch", 3, 1, 4, [3, 4])] * 4 + [
        ("sync", 3, "from_device")]
    assert result.timing.rewritten == ("x",) and len(result.latencies) == 3
    assert result.lines()[2] == (
        "  'x' is updated in place: written and synced to the device again before each run, "
        "outside the timed span, so that every run starts from the inputs")


def test_a_single_run_writes_its_in_place_tensor_once(fake_npu: FakeXrt,
                                                      fake_tools: dict[str, Path]) -> None:
    (fake_tools["root"] / "inplace.py").write_text(IN_PLACE)
    art = aiedsl.build(fake_tools["root"] / "inplace.py", output="out")
    fake_npu.behave = "scale"
    result = art.run(target="npu")
    assert result.passed
    assert fake_npu.calls.count(("sync", 3, "to_device")) == 1
    assert result.timing.rewritten == () and "in place" not in " ".join(result.lines())


def test_tensors_not_updated_in_place_are_written_once(fake_npu: FakeXrt) -> None:
    result = aiedsl.build(PASSTHROUGH, output="out").run(target="npu", iters=3, warmup=1)
    assert result.passed
    assert fake_npu.calls.count(("sync", 3, "to_device")) == 1
    assert result.timing.rewritten == ()


# -- the NPU's generation -----------------------------------------------------------------------

@pytest.mark.parametrize("name, generation", [
    # the amdxdna driver's names (xdna-driver npu1_regs.c, npu4_regs.c ...)
    ("RyzenAI-npu1", "npu1"), ("NPU Phoenix", "npu1"),
    ("RyzenAI-npu4", "npu2"), ("NPU Strix", "npu2"), ("NPU Strix Halo", "npu2"),
    ("NPU Krackan 1", "npu2"), ("RyzenAI-npu5", "npu2"), ("RyzenAI-npu6", "npu2"),
    ("NPU Gorgon Point 1", "npu2"),
    # not in mlir-aie's table: an early Strix, and a later family holding "npu1"
    ("RyzenAI-npu2", None), ("RyzenAI-npu10", None), ("", None),
])
def test_the_generation_of_a_device_name(name: str, generation: str | None) -> None:
    assert npu_generation(name) == generation


def test_a_design_for_npu2_is_refused_on_an_npu1_before_anything_is_compiled(
        fake_npu: FakeXrt, fake_tools: dict[str, Path]) -> None:
    art = aiedsl.build(PASSTHROUGH, output="out", device="npu2_1col")
    with pytest.raises(ToolchainError) as e:
        art.run(target="npu")
    assert str(e.value) == (
        "error [npu]: passthrough is built for npu2_1col, an npu2 device, but this machine's NPU "
        "is an npu1 (XRT names it 'RyzenAI-npu1')\n"
        "  limit: an xclbin runs on the NPU generation it was built for\n"
        "  fix: build it for this NPU with --device npu1 (device='npu1' from Python), or run it "
        "on an npu2 machine; --target sim runs it on the simulator")
    assert e.value.exit_code == 4
    assert fake_npu.calls == [("device", 0), ("get_info", "name")]
    assert not fake_tools["log"].exists()  # nothing compiled


def test_auto_runs_a_design_for_npu1_on_the_simulator_of_an_npu2_machine(
        fake_npu: FakeXrt, fake_tools: dict[str, Path]) -> None:
    fake_npu.name = "NPU Strix Halo"
    said: list[str] = []
    result = aiedsl.build(PASSTHROUGH, output="out").run(say=said.append)
    assert result.target == "sim" and result.passed
    assert said == [
        "passthrough is built for npu1_1col, an npu1 device, but this machine's NPU is an npu2 "
        "(XRT names it 'NPU Strix Halo'): running on the simulator"]


@pytest.mark.parametrize("name, said", [
    ("RyzenAI-npu2", "'RyzenAI-npu2': a name aiedsl does not know as npu1 or npu2"),
    (RuntimeError("query not supported"),
     "XRT did not give its name (RuntimeError: query not supported)"),
])
def test_an_npu_of_unknown_generation_runs_the_design_and_says_it_was_not_checked(
        fake_npu: FakeXrt, name: Any, said: str) -> None:
    fake_npu.name = name
    heard: list[str] = []
    result = aiedsl.build(PASSTHROUGH, output="out").run(target="npu", say=heard.append)
    assert result.target == "npu" and result.passed
    assert heard == [f"running on the NPU (NPU device 0, {said}; not checked against the npu1 "
                     "passthrough was built for (npu1_1col))"]


def test_a_pyxrt_without_the_device_name_query_runs_the_design(
        fake_npu: FakeXrt, monkeypatch: pytest.MonkeyPatch) -> None:
    """An older pyxrt has no xrt_info_device: the name is unread, never an error."""
    del fake_npu.xrt_info_device
    heard: list[str] = []
    result = aiedsl.build(PASSTHROUGH, output="out").run(target="npu", say=heard.append)
    assert result.passed
    assert heard[0].startswith("running on the NPU (NPU device 0, XRT did not give its name "
                               "(AttributeError: ")


def test_an_npu_session_refuses_a_manifest_of_another_generation_before_loading(
        fake_npu: FakeXrt, tmp_path: Path) -> None:
    manifest = {"design": "d", "device": "npu2", "xclbin": "aie.xclbin"}
    with pytest.raises(ToolchainError) as e:
        NpuSession(tmp_path, manifest, pyxrt=fake_npu)
    assert e.value.message.startswith("d is built for npu2, an npu2 device, but this machine's "
                                      "NPU is an npu1")
    assert fake_npu.calls == [("device", 0), ("get_info", "name")]


def test_doctor_names_the_npu_and_its_generation(
        fake_npu: FakeXrt, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    from aiedsl.cli.process import main

    monkeypatch.setenv("COLUMNS", "400")
    monkeypatch.setitem(sys.modules, "pyxrt", fake_npu)
    with pytest.raises(SystemExit):
        main(["doctor"])
    rows = [line.split() for line in capsys.readouterr().out.splitlines()]
    assert ["NPU", "found", "NPU", "device", "0,", "'RyzenAI-npu1':", "an", "npu1", "-"] in rows
