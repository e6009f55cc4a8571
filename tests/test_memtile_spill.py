"""A memtile fifo too big for its memtile spills to a neighbouring memtile, as mlir-aie does
(test/objectFifo-stateful-transform/adjacent_memtile_allocation/onelargefifo_on_2memtile.mlir)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from aiedsl.checks import check_design
from aiedsl.errors import DesignError
from aiedsl.loader import load_design
from aiedsl.sim import simulate

BIGL2 = '''
    import numpy as np
    from aiedsl import Tensor, define, design, fifo, herd, i32, loop, runtime
    from aiedsl.kernels import passthrough as copy_kernel

    L2 = define("L2", 96000)
    T = define("T", 960)

    @design(device="npu1")
    def bigl2(inp: Tensor[L2, i32], out: Tensor[L2, i32]):
        a = fifo(Tensor[L2, i32], name="in0", depth=2)
        b = a.forward(Tensor[T, i32], name="in1")
        c = fifo(Tensor[T, i32], name="out1")
        d = c.forward(name="out0")
        copy = copy_kernel(Tensor[T, i32])

        @herd()
        def core():
            for _ in loop(L2 // T):
                with b.consume() as s, c.produce() as t:
                    copy(s, t)

        with runtime() as rt:
            rt.fill(a, inp)
            rt.drain(d, out, wait=True)

    @bigl2.reference
    def reference(inp):
        return inp.copy()
    '''


@pytest.mark.parametrize("device", ["npu1", "npu2"])
def test_the_second_buffer_goes_to_the_right_memtile(design_file, device: str) -> None:
    """The lit test's placement: in0_cons_buff_0 on (0, 1), in0_cons_buff_1 on (1, 1); the
    locks, channels (S2MM 0 and MM2S 0, taken first) and BDs stay on (0, 1)."""
    placed, _ = check_design(load_design(design_file(BIGL2), device=device).ir)
    assert placed.physical is not None
    mem = {(b.name, b.tile, b.address) for b in placed.physical.buffers if b.tile[1] == 1}
    assert ("in0_cons_buff_0", (0, 1), 0) in mem
    assert ("in0_cons_buff_1", (1, 1), 0) in mem
    assert sorted((c.fifo, c.direction, c.channel) for c in placed.physical.channels
                  if c.tile == (0, 1)) == [("in0", "S2MM", 0), ("in1", "MM2S", 0),
                                           ("out0", "MM2S", 1), ("out1", "S2MM", 1)]
    assert {lk.tile for lk in placed.physical.locks if lk.fifo == "in0"} == {(0, 0), (0, 1)}


def test_a_one_column_device_has_no_neighbour(design_file) -> None:
    with pytest.raises(DesignError) as e:
        check_design(load_design(design_file(BIGL2), device="npu1_1col").ir)
    assert str(e.value).splitlines()[1:3] == ["  limit: 524,288 bytes", "  found: 775,680 bytes"]


def test_no_neighbour_with_room(design_file) -> None:
    """Depth 4 of 375 KB: one buffer home, one left (none), right (1, 1), then neither has
    room: refused, saying so; depth 2 (the lit test's) checks."""
    src = BIGL2.replace('name="in0", depth=2', 'name="in0", depth=4')
    with pytest.raises(DesignError) as e:
        check_design(load_design(design_file(src)).ir)
    assert str(e.value).splitlines()[1] == (
        "  limit: 524,288 bytes, and no neighbouring memtile has room for what does not fit "
        "(mlir-aie moves such a buffer to the left or right memtile where it fits)")


def test_the_run_is_unchanged(design_file) -> None:
    result = simulate(load_design(design_file(BIGL2)))
    assert result.passed, [c.line() for c in result.checks]
    assert np.array_equal(result.outputs["out"], result.inputs["inp"])


# -- the fix for a memtile full even after spilling -----------------------------------------------

CORPUS = Path(__file__).resolve().parent / "bad_inputs"
PINNED = "res_memtile_memory_pinned.py"


def pinned_error(path: Path, defines: dict[str, str], device: str | None = None) -> str:
    with pytest.raises(DesignError) as e:
        check_design(load_design(path, defines, device).ir)
    return str(e.value)


def test_a_full_memtile_with_neighbours_is_told_depths_that_fit(monkeypatch,
                                                                tmp_path: Path) -> None:
    """Three forwards of two 192 KB buffers on npu1_2col, two pinned to memtile 0: each memtile
    holds two, six are asked. Lowering 'c' alone (the old fix) leaves five, and its buffer
    finds no room (b's spilled ones fill memtile 1): the fix is now what the spill model
    accepts, one buffer fewer for 'b' and for 'c'."""
    monkeypatch.chdir(CORPUS)
    assert pinned_error(Path(PINNED), {"TILE": "49152"}) == (
        f"{PINNED}:20: error [memtile data memory]: memtile (1, 1) needs more data memory than it "
        "has\n"
        "  limit: 524,288 bytes, and no neighbouring memtile has room for what does not fit "
        "(mlir-aie moves such a buffer to the left or right memtile where it fits)\n"
        "  found: 786,432 bytes\n"
        f"  {PINNED}:18: b 2 x 196608 B spilled from memtile (0, 1): 393216\n"
        f"  {PINNED}:20: c 2 x 196608 B: 393216\n"
        "  fix: free 393,216 bytes, so that every buffer finds room on its own memtile or a "
        "neighbour's as mlir-aie places them: lower the depth of 'b' (depth=1) or give its memtile "
        "end consumer_depth={\"memtile\": 1}; and lower the depth of 'c' (depth=1) or give its "
        "memtile end consumer_depth={\"memtile\": 1}; else use smaller tiles, or use npu1_3col, "
        "a device with more columns")
    check_design(load_design(Path(PINNED), {"TILE": "49152"}, "npu1_3col").ir)
    # the old fix, 'c' alone, does not fit: the search's first step is not enough
    alone = (CORPUS / PINNED).read_text().replace('name="c")', 'name="c", depth=1)')
    with pytest.raises(DesignError, match="memtile data memory"):
        check_design(load_design(_write(monkeypatch, tmp_path, alone), {"TILE": "49152"}).ir)


@pytest.mark.parametrize("depth", ["depth=1", 'consumer_depth={"memtile": 1}'])
def test_the_spill_fix_passes(monkeypatch, tmp_path: Path, depth: str) -> None:
    """Either way the fix offers, the design checks, and the run copies as numpy does."""
    fixed = (CORPUS / PINNED).read_text()
    for name in "bc":
        fixed = fixed.replace(f'name="{name}")', f'name="{name}", {depth})')
    path = _write(monkeypatch, tmp_path, fixed)
    check_design(load_design(path, {"TILE": "49152"}).ir)
    result = simulate(load_design(path, {"TILE": "49152"}))
    assert result.passed, [c.line() for c in result.checks]
    for out, inp in (("ox", "x"), ("oy", "y"), ("oz", "x")):
        assert np.array_equal(result.outputs[out], result.inputs[inp])


def test_no_depth_fits_says_so(monkeypatch, tmp_path: Path) -> None:
    """300 KB elements: one buffer per memtile, three links on two memtiles: no depth fits.
    The wider device offered fits with the depths it names (the pins kept), and checks."""
    monkeypatch.chdir(CORPUS)
    defines = {"TILE": "76800", "N": "153600"}
    one = 'or give its memtile end consumer_depth={"memtile": 1}'
    assert pinned_error(Path(PINNED), defines).splitlines()[-1] == (
        "  fix: no depth fits: even one buffer for each fifo with buffers on memtiles (0, 1) and "
        "(1, 1) leaves a buffer no memtile has room for, as mlir-aie places them; use smaller "
        "tiles, or use npu1_3col, a device with more columns, together with: lower the depth "
        f"of 'a' (depth=1) {one}; lower the depth of 'b' (depth=1) {one}; and lower the depth of "
        f"'c' (depth=1) {one}")
    with pytest.raises(DesignError, match="memtile data memory"):
        check_design(load_design(Path(PINNED), defines, "npu1_3col").ir)
    fixed = (CORPUS / PINNED).read_text()
    for name in "abc":
        fixed = fixed.replace(f'name="{name}")', f'name="{name}", depth=1)')
    check_design(load_design(_write(monkeypatch, tmp_path, fixed), defines, "npu1_3col").ir)


def test_a_wider_device_asking_as_much_is_not_offered(monkeypatch) -> None:
    """On npu1_3col the same design needs the same three depths on npu1: only the depths are
    offered, and with them it checks."""
    monkeypatch.chdir(CORPUS)
    defines = {"TILE": "76800", "N": "153600"}
    one = 'or give its memtile end consumer_depth={"memtile": 1}'
    assert pinned_error(Path(PINNED), defines, "npu1_3col").splitlines()[-1] == (
        "  fix: free 921,600 bytes, so that every buffer finds room on its own memtile or a "
        "neighbour's as mlir-aie places them: lower the depth of 'a' (depth=1) "
        f"{one}; lower the depth of 'b' (depth=1) {one}; and lower the depth of 'c' (depth=1) "
        f"{one}; else use smaller tiles, or pin some of memtiles (0, 1) and (1, 1)' links to "
        "another memtile with via=memtile(col)")


def _write(monkeypatch, folder: Path, source: str) -> Path:
    """``source`` as ``folder/d.py``, the folder made the working directory (pytest's
    ``tmp_path``, so that nothing is left in the shared temp folder)."""
    monkeypatch.chdir(folder)
    path = folder / "d.py"
    path.write_text(source)
    return path
