"""``--mlir-syntax 2026-11``: aie.mlir in the spelling later mlir-aie takes (an acquire that
returns memrefs, SSA rtp values and lock counts), every other line as the default writes it;
and what an aiecc's refusal of either spelling is told."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Callable

import pytest

import aiedsl
from aiedsl.checks import check_design
from aiedsl.codegen.mlir import render_mlir
from aiedsl.errors import DesignError
from aiedsl.loader import load_design
from aiedsl.targets import get_target
from aiedsl.toolchain.mlir_syntax import hint

DesignFile = Callable[..., Path]
ROOT = Path(__file__).resolve().parent.parent

WINDOW = '''
    from aiedsl import Tensor, barrier, design, fifo, herd, i16, loop, runtime
    from aiedsl.kernels import add

    @design(device="npu1_1col")
    def d(x: Tensor[2048, i16], y: Tensor[1024, i16]):
        xin = fifo(Tensor[512, i16], name="xin")
        yout = fifo(Tensor[512, i16], name="yout")
        go = barrier(name="go")
        a2 = add(Tensor[512, i16])

        @herd()
        def core():
            go.wait_for_value(1)
            for _ in loop(2):
                with xin.consume(2) as w, yout.produce() as o:
                    a2(w[0], w[1], o)

        with runtime() as rt:
            rt.set_barrier(go, 1)
            rt.fill(xin, x)
            rt.drain(yout, y)
    '''


def _mlir(path: Path, syntax: str) -> str:
    placed, _ = check_design(load_design(path).ir)
    return render_mlir(placed, get_target(placed.device), syntax)  # type: ignore[arg-type]


def test_a_two_element_acquire_and_a_barrier_wait_in_the_2026_11_spelling(
        design_file: DesignFile) -> None:
    """The acquire names its elements as results of memref type (AIEOps.td's
    ObjectFifoAcquireOp: Variadic<AnyMemRef>; no subview.access), and the lock count is an i32
    constant (UseLockOp's I32 operand); the kernel call uses the same names either way."""
    path = design_file(WINDOW)
    new = _mlir(path, "2026-11")
    lines = [t.strip() for t in new.splitlines()]
    assert lines[2] == ("// spelled for mlir-aie 2026-11: upstream cdc27acc (late 2026), read "
                        "from its op definitions, not run here")
    assert "subview" not in new
    acquires = [t for t in lines if "aie.objectfifo.acquire" in t]
    assert [re.sub(r" loc\(.*\)$", "", t) for t in acquires] == [
        "%view3_0, %view3_1 = aie.objectfifo.acquire @xin(Consume, 2) : memref<512xi16>, "
        "memref<512xi16>",
        "%view4_0 = aie.objectfifo.acquire @yout(Produce, 1) : memref<512xi16>"]
    wait = lines.index(next(t for t in lines if t.startswith("aie.use_lock(")))
    assert lines[wait - 1] == "%lock_count1 = arith.constant 1 : i32"
    assert lines[wait].startswith("aie.use_lock(%lock_go_0_2, Acquire, %lock_count1) loc(")
    assert any(t.startswith("func.call @add_i16_512(%view3_0, %view3_1, %view4_0)")
               for t in lines)
    # everything else is the default's, line for line
    old = _mlir(path, "2026-03")
    changed = ("aie.objectfifo.acquire", "subview.access", "aie.use_lock", "lock_count",
               "spelled for")
    assert ([t for t in old.splitlines() if not any(c in t for c in changed)]
            == [t for t in new.splitlines() if not any(c in t for c in changed)])
    assert "aie.use_lock(%lock_go_0_2, Acquire, 1) loc(" in old


def test_an_rtp_write_in_the_2026_11_spelling() -> None:
    """The value an i32 SSA operand, its type after the op (AIEX.td's NpuWriteRTPOp)."""
    new = _mlir(ROOT / "designs" / "threshold_rtp.py", "2026-11").splitlines()
    at = [i for i, t in enumerate(new) if "aiex.npu.rtp_write(" in t]
    assert len(at) == 4
    for i in at:
        value = re.fullmatch(r" *%(rtp_value\d+) = arith.constant (\d+) : i32", new[i - 1])
        assert value is not None, new[i - 1]
        assert re.fullmatch(rf" *aiex\.npu\.rtp_write\(@thr[01], 0, %{value[1]}\) : i32 "
                            r"loc\(.*\)", new[i])
    assert [int(re.search(r"constant (\d+)", new[i - 1])[1]) for i in at] == [50, 50, 200, 200]


def test_the_default_spelling_is_the_2026_03_one(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """aiedsl.build without mlir_syntax ("auto"), with no mlir-aie to lower it, writes what
    render_mlir's default does; a name it does not write is refused before anything is
    written."""
    monkeypatch.chdir(tmp_path)
    design = ROOT / "designs" / "passthrough.py"
    assert aiedsl.build(design, output="a", lower=False).mlir_syntax == "2026-03"
    aiedsl.build(design, output="a3", lower=False, mlir_syntax="2026-03")
    aiedsl.build(design, output="b", lower=False, mlir_syntax="2026-11")
    default = (tmp_path / "a" / "aie.mlir").read_text()
    assert default == (tmp_path / "a3" / "aie.mlir").read_text()
    assert "subview" in default
    assert "subview" not in (tmp_path / "b" / "aie.mlir").read_text()
    with pytest.raises(DesignError) as excinfo:
        aiedsl.build(design, output="c", lower=False, mlir_syntax="2026-07")
    assert str(excinfo.value).splitlines()[1:] == [
        '  limit: "auto", "2026-03", "2026-11"',
        "  found: '2026-07'",
        '  fix: leave it out ("auto": "2026-03", mlir-aie upstream 1e400306, unless the mlir-aie '
        'found lowers only "2026-11"\'s), or give "2026-03" or "2026-11" (an mlir-aie whose '
        "acquire returns memrefs)"]
    assert not (tmp_path / "c").exists()
    r = subprocess.run([sys.executable, "-m", "aiedsl.cli", "build", str(design), "-o", "d",
                        "--mlir-syntax", "2026-07"], capture_output=True, text=True)
    assert r.returncode == 2 and "2026-07" in r.stderr
    assert not (tmp_path / "d").exists()


def test_a_refusal_of_the_2026_11_spelling_says_to_build_without_it(tmp_path: Path) -> None:
    """An mlir-aie older than the spelling refuses it in words not known here: any error at
    one of its lines is told so, when aie.mlir says it was written so."""
    (tmp_path / "aie.mlir").write_text(
        "// d\n// device npu1_1col\n// spelled for mlir-aie 2026-11: x\nmodule {\n"
        "      %view2_0 = aie.objectfifo.acquire @a(Consume, 1) : memref<16xi32>\n}\n")
    said = hint("aie.mlir:5:50: error: expected '!aie.objectfifosubview'", tmp_path)
    assert said == (
        "; the MLIR was written with --mlir-syntax 2026-11 (mlir-aie upstream cdc27acc's "
        "spelling, read from its op definitions, not run here), and this mlir-aie refuses its "
        "aie.objectfifo.acquire: an mlir-aie from before mid-2026 takes the default spelling: "
        "build without --mlir-syntax")
    assert hint("aie.mlir:4:1: error: anything", tmp_path) == ""
