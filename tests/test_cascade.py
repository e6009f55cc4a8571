"""The accumulator cascade: the four-core cascade GEMM (MLIR, report, map, simulator with the
numpy references and with the C++ built for the host), the lockstep timing of a put and its get,
and what is refused, word for word (directions AIE2 lacks, kernels that get or put where there is
no link, unbalanced words), plus the simulator's explanation of a cascade deadlock."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import numpy as np
import pytest

from aiedsl.checks import check_design
from aiedsl.codegen.mlir import render_mlir
from aiedsl.emit import generate
from aiedsl.errors import DesignError
from aiedsl.loader import load_design
from aiedsl.sim import simulate
from aiedsl.sim.explain import Deadlock
from aiedsl.targets import get_target

DesignFile = Callable[..., Path]
SMALL = {"M": "64", "N": "128", "K": "128"}


def test_cascade_gemm_emits_cascade_flows(in_root: Path) -> None:
    placed, _ = check_design(load_design("designs/matmul_cascade.py", SMALL).ir)
    mlir = render_mlir(placed, get_target(placed.device))
    flows = [line.strip().split(" loc(")[0] for line in mlir.splitlines()
             if "aie.cascade_flow" in line]
    assert flows == ["aie.cascade_flow(%tile_0_2, %tile_1_2)",
                     "aie.cascade_flow(%tile_1_2, %tile_2_2)",
                     "aie.cascade_flow(%tile_2_2, %tile_3_2)"]
    assert "func.call @matmul_cascade_put_get_bf16_f32_64x32x64_4x8x4(" in mlir


def test_cascade_gemm_report_and_map(in_root: Path) -> None:
    files = generate(load_design("designs/matmul_cascade.py", SMALL)).files
    assert ("accumulator cascades (aie.cascade_flow: 512-bit words, core to neighbouring core)\n"
            "  core[0,0] (0, 2) -> core[1,0] (1, 2)\n"
            "  core[1,0] (1, 2) -> core[2,0] (2, 2)\n"
            "  core[2,0] (2, 2) -> core[3,0] (3, 2)\n") in files["report.txt"]
    svg = files["map.svg"]
    assert svg.count('<line class="cascade"') == 3
    assert "<title>cascade core[2,0] -&gt; core[3,0]</title>" in svg


@pytest.mark.parametrize("kernels", ["reference", "native"])
def test_cascade_gemm_passes(in_root: Path, kernels: str) -> None:
    result = simulate(load_design("designs/matmul_cascade.py", SMALL), kernels=kernels)
    assert result.passed, [c.line() for c in result.checks]


def test_a_put_and_its_get_run_in_lockstep(in_root: Path, tmp_path: Path) -> None:
    """Every core's i-th cascade call starts when its neighbours reach theirs; each ends a
    word's share of the call after the core before it."""
    handle = load_design("designs/matmul_cascade.py", SMALL)
    m = simulate(handle, trace=str(tmp_path / "t.json")).machine
    spans = {n: [s for s in m.cores[n].spans if s[2].startswith("matmul_cascade")]
             for n in ("core[0,0]", "core[1,0]", "core[2,0]", "core[3,0]")}
    link = m.chains["core[0,0]"]
    firsts = [v[0][0] for v in spans.values()]
    assert max(firsts) - min(firsts) < link.pace / 2  # they start together
    ends = [s[1] for s in (v[0] for v in spans.values())]
    assert [round(b - a) for a, b in zip(ends, ends[1:])] == [link.hop] * 3


CHAIN = '''
import numpy as np
from aiedsl import Tensor, bf16, design, f32, fifo, herd, loop, runtime
from aiedsl.kernels import matmul_cascade

@design(device="npu1")
def d(A: Tensor[128, bf16], B: Tensor[128, bf16], C: Tensor[64, f32]):
    put = matmul_cascade(8, 8, 8, "put")
    get = matmul_cascade(8, 8, 8, "get")
    a = [fifo(Tensor[8, 8, bf16], name=f"a{j}") for j in range(2)]
    b = [fifo(Tensor[8, 8, bf16], name=f"b{j}") for j in range(2)]
    c = fifo(Tensor[8, 8, f32], name="c")

    @herd(cols=2, rows=1, cascade="east")
    def core(i, _):
        with a[i].consume() as ta, b[i].consume() as tb:
            if i == 0:
                put(ta, tb)
            else:
                with c.produce() as tc:
                    get(ta, tb, tc)

    with runtime() as rt:
        rt.fill(a[0], A, (0, [64], [1]))
        rt.fill(a[1], A, (64, [64], [1]))
        rt.fill(b[0], B, (0, [64], [1]))
        rt.fill(b[1], B, (64, [64], [1]))
        rt.drain(c, C)
'''
"""Two cores: core[0,0] puts one 8x8 partial sum, core[1,0] gets it (herd at line 13)."""


def _error(path: Path) -> str:
    with pytest.raises(DesignError) as e:
        check_design(load_design(path).ir)
    return str(e.value)


BATCHED = """    with runtime() as rt:
        for ti in range(M // m):
            for tj in range(N // n):
                for j in range(CORES):
                    rt.fill(a[j], A, tiles(A, (m, KC), rows=ti, cols=j))
                    rt.fill(b[j], B, tiles(B, (KC, n), rows=j, cols=tj))
                rt.drain(c[0], C, tiles(C, (m, n), rows=ti, cols=tj))
                rt.sync()
"""


def test_a_sync_retires_the_fills_of_cores_upstream_on_the_cascade(
        design_file: DesignFile) -> None:
    """A reviewer's batched cascade GEMM (a tile's fills, its drain, a sync, per C tile) was
    refused [shim task queue]: core 0 produces no fifo, only partial sums on the cascade, so no
    drain proved it had taken its fills, and they were held through every sync. Its downstream
    neighbour's calls that took the sums prove its calls that put them."""
    from aiedsl.ir.sequence import retirements

    src = (Path(__file__).resolve().parents[1] / "designs" / "matmul_cascade.py").read_text()
    head, tail = src.split("    with runtime() as rt:\n")
    path = design_file(head + BATCHED + "\n\n@gemm_cascade.reference" +
                       tail.split("@gemm_cascade.reference")[1])
    handle = load_design(path, {"M": "192", "N": "128"})
    placed, _ = check_design(handle.ir)
    d = placed
    first_sync = next(i for i, op in enumerate(d.runtime) if type(op).__name__ == "Wait")
    assert retirements(d)[first_sync] == list(range(first_sync))  # 8 fills and the drain
    assert simulate(handle, placed=placed).passed


def test_a_two_core_chain_builds(design_file: DesignFile) -> None:
    placed, _ = check_design(load_design(design_file(CHAIN)).ir)
    assert [(c.src, c.dst) for c in placed.cascades] == [("core[0,0]", "core[1,0]")]


def test_a_cascade_west_is_refused(design_file: DesignFile) -> None:
    path = design_file(CHAIN.replace('cascade="east"', 'cascade="west"'))
    assert _error(path) == (
        "d.py:13: error [cascade]: herd 'core' passes its cascade west\n"
        "  limit: on npu1 a core's cascade output goes east or south and its input comes from "
        "north or west (mlir-aie's ConfigureCascadeOp::verify)\n"
        "  found: cascade='west'\n"
        "  fix: use cascade='east' or 'south', and give the chain's first core the put-only "
        "kernel and its last the get-only one")


def test_an_unknown_cascade_direction_is_refused(design_file: DesignFile) -> None:
    path = design_file(CHAIN.replace('cascade="east"', 'cascade="up"'))
    with pytest.raises(DesignError) as e:
        load_design(path)
    assert str(e.value) == (
        "d.py:13: error [cascade]: herd 'core' has cascade='up'\n"
        "  limit: 'east' or 'south' (the directions an AIE2 cascade runs)\n"
        "  found: 'up'\n"
        "  fix: write cascade='east' to chain each row west to east")


def test_a_put_on_the_last_core_is_refused(design_file: DesignFile) -> None:
    path = design_file(CHAIN.replace("            if i == 0:\n                put(ta, tb)",
                                     "            if i == 0:\n                put(ta, tb)\n"
                                     "                continue_ = 0")
                       .replace("                    get(ta, tb, tc)",
                                "                    get(ta, tb, tc)\n                    "
                                "put(ta, tb)"))
    assert _error(path).splitlines()[0] == (
        "d.py:22: error [cascade]: core[1,0] calls 'matmul_cascade_put_bf16_f32_8x8x8_4x8x4', "
        "which writes the cascade, but core[1,0] has no cascade output: the herd's "
        "cascade='east' ends at core[1,0]")


def test_a_cascade_kernel_without_a_cascade_is_refused(design_file: DesignFile) -> None:
    path = design_file(CHAIN.replace(', cascade="east"', ""))
    assert _error(path) == (
        "d.py:17: error [cascade]: core[0,0] calls 'matmul_cascade_put_bf16_f32_8x8x8_4x8x4', "
        "which writes the cascade, but core[0,0] has no cascade output: herd 'core' has no "
        "cascade\n"
        "  fix: give the herd cascade='east' (or 'south')")


def test_unbalanced_cascade_words_are_a_hang(design_file: DesignFile) -> None:
    path = design_file(CHAIN.replace("                put(ta, tb)",
                                     "                for _ in loop(2):\n"
                                     "                    put(ta, tb)"))
    assert _error(path) == (
        "d.py:21: error [hang: cascade]: core[0,0] puts 8 cascade word(s) per run and core[1,0] "
        "gets 4: the cascade stream blocks, and the putter waits forever\n"
        "  limit: every word one core puts, its neighbour gets, in the same run\n"
        "  found: 8 put, 4 got\n"
        "  fix: make the neighbours' cascade calls match one for one (same count, same "
        "cascade_out/cascade_in size)")


def test_a_cascade_deadlock_is_explained(design_file: DesignFile) -> None:
    """core[0,0] puts, then produces 'y'; core[1,0] waits for 'y' before its get."""
    src = (CHAIN.replace("from aiedsl.kernels import matmul_cascade",
                         "from aiedsl.kernels import matmul_cascade, zero")
           .replace('    c = fifo(Tensor[8, 8, f32], name="c")',
                    '    c = fifo(Tensor[8, 8, f32], name="c")\n'
                    '    y = fifo(Tensor[16, f32], name="y")\n'
                    '    z = zero(Tensor[16, f32])')
           .replace("                put(ta, tb)",
                    "                put(ta, tb)\n"
                    "                with y.produce() as ty:\n"
                    "                    z(ty)")
           .replace("                with c.produce() as tc:",
                    "                with y.consume() as ty, c.produce() as tc:"))
    handle = load_design(design_file(src))
    with pytest.raises(Deadlock) as e:
        simulate(handle, check=False)
    lines = str(e.value).splitlines()
    assert ("  <- core[1,0] (1,2) waits to acquire 'y' (consume) for data to arrive, while it "
            "holds 1 element(s) of 'a1' (consume) and 1 element(s) of 'b1' (consume) "
            "(d.py:23)") in lines
    assert ("  <- core[0,0] (0,2) waits at the cascade for core[1,0]: its call of "
            "'matmul_cascade_put_bf16_f32_8x8x8_4x8x4' runs in lockstep with the chain "
            "core[0,0] -> core[1,0], and core[1,0] has not reached its matching cascade call "
            "(d.py:19)") in lines


def test_a_kernel_cascade_must_be_whole_words(design_file: DesignFile) -> None:
    path = design_file('''
        from aiedsl import Tensor, design, f32, fifo, runtime
        from aiedsl.kernels import buffer, declare

        @design(device="npu1")
        def d(A: Tensor[16, f32]):
            k = declare("k_put", source="mm.cc", entry="f", args=[buffer("a", Tensor[16, f32])],
                        reference=lambda a, out: None, cycles=10, cost="test",
                        cascade_out=Tensor[8, f32])
        ''')
    with pytest.raises(DesignError) as e:
        load_design(path)
    assert str(e.value).splitlines()[:2] == [
        "d.py:6: error [kernel signature]: kernel 'k_put' has cascade_out=8xf32",
        "  limit: a Tensor of 32-bit values (f32 or i32) filling whole 512-bit cascade words "
        "(16 values each)"]


def test_cascade_kernels_match_their_references_on_the_host() -> None:
    from aiedsl.kernels.host_check import check_kernel
    from aiedsl.kernels.samples import library_cases

    cases = library_cases(Path("mm_cascade.cc"))
    assert {c.kernel.params["role"] for c in cases} == {"put", "put_get", "get"}
    for case in cases:
        result = check_kernel(case)
        assert result.passed, result.lines


def test_a_cascade_kernel_that_moves_fewer_words_than_declared_fails_on_the_host() -> None:
    from aiedsl.kernels.host import native
    from aiedsl.kernels.text import kernel_text
    from aiedsl.kernels import matmul_cascade

    k = matmul_cascade(8, 8, 8, "put").ir
    wrong = k.model_copy(update={"cascade_out": k.cascade_out.model_copy(
        update={"shape": (16, 8)})})
    fn = native(wrong, kernel_text(None, k))
    a = np.zeros((8, 8), np.dtype("bfloat16") if False else np.uint16)
    with pytest.raises(ValueError) as e:
        fn(a, a, np.zeros((16, 8), np.float32))
    assert str(e.value) == ("matmul_cascade_put_bf16_f32_8x8x8_4x8x4 moved 4 cascade word(s) "
                            "more or fewer than it declares (cascade_in/cascade_out)")
