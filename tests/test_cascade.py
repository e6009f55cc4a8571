"""The accumulator cascade: the four-core cascade GEMM (MLIR, report, map, simulator with the
numpy references and with the C++ built for the host), a put and its get overlapping as a stream
between two neighbours (no lockstep of the whole chain: a middle core may get, then put, in calls
of its own; calls on the two sides may group the words differently), and what is refused, word
for word (directions AIE2 lacks, kernels that get or put where there is no link, unbalanced
words), plus the simulator's explanation of a cascade deadlock and its fix, applied."""

from __future__ import annotations

import json
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


@pytest.mark.parametrize("device", ["npu1", "npu2"])
@pytest.mark.parametrize("kernels", ["reference", "native"])
def test_cascade_gemm_passes(in_root: Path, kernels: str, device: str) -> None:
    """On npu2 too (it was refused there): a 4x8 f32 block is two 512-bit words, mm_cascade.cc
    puts its halves and concatenates the two it gets, and a middle stage streams a patch's 8
    words each way."""
    handle = load_design("designs/matmul_cascade.py", SMALL, device=device)
    stages = [k for k in handle.ir.kernels if k.symbol.startswith("matmul_cascade_put_get")]
    assert [(k.symbol, k.cascade_step) for k in stages] == [
        ("matmul_cascade_put_get_bf16_f32_64x32x64_4x8x4", (4, 4)) if device == "npu1" else
        ("matmul_cascade_put_get_bf16_f32_64x32x64_4x8x8", (8, 8))]
    result = simulate(handle, kernels=kernels)
    assert result.passed, [c.line() for c in result.checks]


def test_a_put_and_its_get_overlap_as_a_stream(in_root: Path, tmp_path: Path) -> None:
    """A put ends once all but the 4 words the link holds were taken, and a middle core passes
    the words on as they come (its puts as its gets, mm_cascade.cc's patch by patch): so
    core[0,0]'s put of 256 words ends once core[3,0], whose inputs come last, has taken all
    but the 12 words the three links hold, the words flowing through the chain at its pace.
    (The simulator once let a middle core take its whole get before it put a word, which its
    registers cannot hold: core[0,0]'s put ended some 40,000 cycles before core[3,0] began.)"""
    handle = load_design("designs/matmul_cascade.py", SMALL)
    m = simulate(handle, trace=str(tmp_path / "t.json")).machine
    spans = {n: [s for s in m.cores[n].spans if s[2].startswith("matmul_cascade")]
             for n in ("core[0,0]", "core[1,0]", "core[2,0]", "core[3,0]")}
    kernels = {k.symbol: k for k in m.design.kernels}
    (ps, pe, put), (gs, _, get) = spans["core[0,0]"][0], spans["core[3,0]"][0]
    # the put's stall on the cascade is a span of its own after the kernel's: the core waits
    stall = [s for s in m.cores["core[0,0]"].spans if s[0] == pe]
    assert pe - ps == kernels[put].cycles + m.costs.call
    assert [s[2] for s in stall] == [f"cascade stall ({put})"]
    pe = stall[0][1]
    cycles, words, call = kernels[put].cycles, 256, m.costs.call
    assert kernels[put].cascade_out.nbytes * 8 // 512 == words
    assert kernels[get].cycles == cycles and m.target.cascade_fifo_words == 4
    assert ps + cycles < gs  # core[0,0] had long done its own work
    assert pe - call == pytest.approx(gs + (words - 3 * 4) / words * cycles)


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


def test_a_chain_given_its_roles_backwards_is_told_which_way_it_runs(
        design_file: DesignFile) -> None:
    """A tester's south chain with the put at y=0 and the get at y=3 was told only "call a
    kernel without a cascade output on the chain's last core", not which core that is (which
    way a chain runs is not in the core index). Here an east chain, its roles swapped."""
    path = design_file(CHAIN.replace("            if i == 0:\n", "            if i == 1:\n"))
    assert _error(path).splitlines()[-1] == (
        "  fix: call a kernel without a cascade input on the chain's first core (the chain "
        "runs core[0,0] -> core[1,0]: give core[0,0] the put-only kernel and core[1,0] the "
        "get-only one)")


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


@pytest.mark.parametrize("calls, rule, what", [
    (3, "hang: cascade", "the cascade stream blocks, and the putter waits forever once the link "
     "holds the 4 words it can"),
    (2, "cascade", "the last 4 stay in the link unread (it holds 4): a later get would read "
     "them in place of its own"),
])
def test_unbalanced_cascade_words_are_refused(design_file: DesignFile, calls: int, rule: str,
                                              what: str) -> None:
    """More words put than got: past the 4 the link holds the putter hangs; within them the
    words stay behind for a later get."""
    path = design_file(CHAIN.replace("                put(ta, tb)",
                                     f"                for _ in loop({calls}):\n"
                                     "                    put(ta, tb)"))
    assert _error(path) == (
        f"d.py:21: error [{rule}]: core[0,0] puts {4 * calls} cascade word(s) per run and "
        f"core[1,0] gets 4: {what}\n"
        "  limit: every word one core puts, its neighbour gets, in the same run\n"
        f"  found: {4 * calls} put, 4 got\n"
        "  fix: make core[0,0]'s puts and core[1,0]'s gets move as many words per run: "
        f"core[0,0] puts {4 * calls} ('matmul_cascade_put_bf16_f32_8x8x8_4x8x4': {calls} calls "
        "of 4 words, line 18); core[1,0] gets 4 ('matmul_cascade_get_bf16_f32_8x8x8_4x8x4': 1 "
        "call of 4 words, line 21) (the calls need not pair up: the cascade is a stream of "
        "words)")


def test_a_put_the_link_holds_does_not_wait_for_the_get(design_file: DesignFile) -> None:
    """core[0,0] puts one 8x8 partial sum (4 words), then produces 'y'; core[1,0] waits for 'y'
    before its get. The link holds 4 words (a two-word FIFO on each side, AM020), so the put
    ends without the get and nothing hangs. (The simulator once ran every cascade call of a
    chain in lockstep and reported this as a deadlock the NPU does not have.)"""
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
    result = simulate(load_design(design_file(src)), check=False)
    # its program ran to its end (it then starts again, as on the NPU, and waits for data)
    assert result.machine.cores["core[1,0]"].info["passes"] >= 1


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
    assert str(e.value).splitlines() == [
        "d.py:6: error [kernel signature]: kernel 'k_put' has cascade_out=8xf32",
        "  limit: a Tensor whose values fill whole 512-bit cascade words, of any element type "
        "(16 f32 values a word; mlir-aie's PutCascadeOp and GetCascadeOp take any 512-bit "
        "value)",
        "  found: 8xf32: 256 bits",
        "  fix: write e.g. cascade_out=Tensor[16, f32]"]


def test_a_cascade_of_bf16_must_fill_whole_words_too(design_file: DesignFile) -> None:
    """A word holds 32 bf16 values: 48 of them are a word and a half."""
    path = design_file('''
        from aiedsl import Tensor, bf16, design
        from aiedsl.kernels import buffer, declare

        @design(device="npu2")
        def d(A: Tensor[48, bf16]):
            k = declare("k_get", source="k.cc", entry="f", args=[buffer("a", Tensor[48, bf16])],
                        reference=lambda a, cin: None, cycles=10, cost="test",
                        cascade_in=Tensor[48, bf16])
        ''')
    with pytest.raises(DesignError) as e:
        load_design(path)
    assert (e.value.limit, e.value.found, e.value.fix) == (
        "a Tensor whose values fill whole 512-bit cascade words, of any element type (32 bf16 "
        "values a word; mlir-aie's PutCascadeOp and GetCascadeOp take any 512-bit value)",
        "48xbf16: 768 bits", "write e.g. cascade_in=Tensor[64, bf16]")


TYPED_CC = """
#include <aie_api/aie.hpp>
// N values of a on the cascade, or N values from it into c, one 512-bit word at a time
template <unsigned N> void put_f32(const float *__restrict a) {
  for (unsigned i = 0; i < N; i += 16) {
    aie::accum<accfloat, 16> w;
    w.from_vector(aie::load_v<16>(a + i));
    put_mcd(w);
  }
}
template <unsigned N> void put_bf16(const bfloat16 *__restrict a) {
  for (unsigned i = 0; i < N; i += 32) put_mcd(aie::load_v<32>(a + i));
}
template <unsigned N> void get_bf16(bfloat16 *__restrict c) {
  for (unsigned i = 0; i < N; i += 32)
    aie::store_v(c + i, aie::vector<bfloat16, 32>(get_scd_v32bfloat16()));
}
template <unsigned N> void put_i32(const int32 *__restrict a) {
  for (unsigned i = 0; i < N; i += 16) {
    aie::accum<acc32, 16> w;
    w.from_vector(aie::load_v<16>(a + i));
    put_mcd(w);
  }
}
template <unsigned N> void get_i32(int32 *__restrict c) {
  for (unsigned i = 0; i < N; i += 16) {
    aie::accum<acc32, 16> w(get_scd_v16acc32());
    aie::store_v(c + i, w.template to_vector<int32>());
  }
}
"""

TYPED = '''
import numpy as np
from aiedsl import Tensor, bf16, design, f32, fifo, herd, i32, runtime
from aiedsl.kernels import buffer, declare

PUT, GET = Tensor[PUT_N, PUT_T], Tensor[GET_N, GET_T]


def k_put(a, cout):
    cout[...] = a


def k_get(c, cin):
    c[...] = cin


@design(device="npu2")
def typed(A: Tensor[PUT_N, PUT_T], C: Tensor[GET_N, GET_T]):
    put = declare("typed_put", source="typed.cc", entry="put_PUT_T<PUT_N>",
                  args=[buffer("a", PUT)],
                  reference=k_put, cycles=10, cost="10", cascade_out=PUT)
    get = declare("typed_get", source="typed.cc", entry="get_GET_T<GET_N>",
                  args=[buffer("c", GET, "out")],
                  reference=k_get, cycles=10, cost="10", cascade_in=GET)
    a = fifo(PUT, name="a")
    c = fifo(GET, name="c")

    @herd(cols=2, rows=1, cascade="east")
    def core(x, _):
        if x == 0:
            with a.consume() as ta:
                put(ta)
        else:
            with c.produce() as tc:
                get(tc)

    with runtime() as rt:
        rt.fill(a, A)
        rt.drain(c, C)


@typed.reference
def reference(A):
    return A.view(GET.dt.numpy)
'''
"""Two cores: core[0,0] puts A on the cascade as PUT_T values, core[1,0] gets the words as
GET_T values and drains them: the reference views A's bits as GET_T."""


@pytest.mark.parametrize("kernels", ["reference", "native"])
@pytest.mark.parametrize("put, get", [(("64", "bf16"), ("64", "bf16")),
                                      (("32", "f32"), ("64", "bf16")),
                                      (("32", "i32"), ("32", "i32"))],
                         ids=["bf16", "f32-read-as-bf16", "i32"])
def test_a_cascade_moves_bits_of_any_type(design_file: DesignFile, put: tuple[str, str],
                                          get: tuple[str, str], kernels: str) -> None:
    """bf16 words on the cascade (refused: only 32-bit values were taken), an f32 put read by
    a bf16 get: the getter sees the floats' bits as bf16 (their low and high halves), never a
    conversion; and i32 accumulators (get_scd_v16acc32, put_mcd(v16acc32)), with the numpy
    references and with the C++ built for the host (whose header had only the accfloat word:
    the i32 and bf16 kernels did not build)."""
    import ml_dtypes

    src = (TYPED.replace("PUT_N", put[0]).replace("PUT_T", put[1])
           .replace("GET_N", get[0]).replace("GET_T", get[1]))
    design_file(TYPED_CC, "typed.cc")
    handle = load_design(design_file(src))
    values = np.arange(1, int(put[0]) + 1) * 3 - 40
    A = {"f32": values.astype(np.float32) * np.float32(1.5),
         "bf16": (values * 1.5).astype(ml_dtypes.bfloat16),
         "i32": values.astype(np.int32) * 65537}[put[1]]
    result = simulate(handle, {"A": A}, kernels=kernels)
    assert result.passed, [c.line() for c in result.checks]
    got = result.outputs["C"]
    assert got.dtype == np.dtype(GET_NUMPY[get[1]])
    assert got.tobytes() == A.tobytes()


GET_NUMPY = {"bf16": "bfloat16", "i32": "int32"}


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
    a = np.zeros((8, 8), np.uint16)
    with pytest.raises(DesignError) as e:
        fn(a, a, np.zeros((16, 8), np.float32))
    assert str(e.value).split(": ", 1)[1] == (
        "error [kernel cascade]: kernel 'matmul_cascade_put_bf16_f32_8x8x8_4x8x4' moves other "
        "cascade words than it declares: its C++ put 4 words in a call, where "
        "cascade_out=16x8xf32 is 8\n"
        "  limit: cascade_out=16x8xf32: 8 words of 512 bits (16 values each) put per call\n"
        "  found: 4 words put (put_mcd) per call\n"
        "  fix: make the C++ call put_mcd 8 times per call, or declare "
        "cascade_out=Tensor[64, f32] (the 4 words it puts)")
    assert e.value.loc == k.loc  # the declaration's line


def test_a_cascade_kernel_that_moves_more_words_than_declared_fails_on_the_host() -> None:
    """Words put past the declared room were counted as errors and their negative remainder
    added to them in unsigned arithmetic: the two cancelled, and such a kernel passed."""
    from aiedsl.kernels.host import native
    from aiedsl.kernels.text import kernel_text
    from aiedsl.kernels import matmul_cascade

    k = matmul_cascade(8, 8, 8, "put").ir
    wrong = k.model_copy(update={"cascade_out": k.cascade_out.model_copy(
        update={"shape": (4, 8)})})
    fn = native(wrong, kernel_text(None, k))
    a = np.zeros((8, 8), np.uint16)
    with pytest.raises(DesignError) as e:
        fn(a, a, np.zeros((4, 8), np.float32))
    assert (e.value.limit, e.value.found, e.value.fix) == (
        "cascade_out=4x8xf32: 2 words of 512 bits (16 values each) put per call",
        "4 words put (put_mcd) per call",
        "make the C++ call put_mcd 2 times per call, or declare cascade_out=Tensor[64, f32] "
        "(the 4 words it puts)")


# -- the cascade as a stream of words between two neighbours -------------------------------------

CASC_CC = """
#include <aie_api/aie.hpp>

// N floats over the cascade, one 512-bit word (16 floats) at a time
template <unsigned N> void casc_put(const float *__restrict in) {
  for (unsigned i = 0; i < N; i += 16) {
    aie::accum<accfloat, 16> w;
    w.from_vector(aie::load_v<16>(in + i));
    put_mcd(w);
  }
}

template <unsigned N> void casc_get(float *__restrict out) {
  for (unsigned i = 0; i < N; i += 16) {
    aie::accum<accfloat, 16> w(get_scd_v16accfloat());
    aie::store_v(out + i, w.template to_vector<float>());
  }
}
"""

STREAM = '''
import numpy as np
from aiedsl import Tensor, design, f32, fifo, herd, local, loop, runtime
from aiedsl.kernels import buffer, declare, zero

T = Tensor[256, f32]
H = Tensor[128, f32]


def put_ref(src, cout):
    cout[...] = src


def get_ref(dst, cin):
    dst[...] = cin


def put_k(t, n):
    return declare(f"casc_put_{n}", source="casc.cc", entry=f"casc_put<{n}>",
                   args=[buffer("src", t)], reference=put_ref, cycles=40,
                   cost=f"{n // 16} words", cascade_out=t, exact=True)


def get_k(t, n):
    return declare(f"casc_get_{n}", source="casc.cc", entry=f"casc_get<{n}>",
                   args=[buffer("dst", t, "out")], reference=get_ref, cycles=40,
                   cost=f"{n // 16} words", cascade_in=t, exact=True)
'''
"""Put and get kernels of 128 or 256 floats (8 or 16 cascade words) with numpy references."""

CHAIN3 = STREAM + '''

@design(device="npu1")
def chain3(inp: Tensor[4, 256, f32], out: Tensor[4, 256, f32]):
    put, get = put_k(T, 256), get_k(T, 256)
    a = fifo(T, name="a")
    o = fifo(T, name="o")
    tmp = local(T, name="tmp")

    @herd(cols=3, rows=1, cascade="east")
    def core(x, _):
        for _ in loop(4):
            if x == 0:
                with a.consume() as t:
                    put(t)
            elif x == 1:
                get(tmp)
                put(tmp)
            else:
                with o.produce() as t:
                    get(t)

    with runtime() as rt:
        rt.fill(a, inp)
        rt.drain(o, out)


@chain3.reference
def reference(inp):
    return inp.copy()
'''
"""A tester's design: three cores, the middle one gets with one call and puts with another."""

REGROUP = STREAM + '''

@design(device="npu1")
def regroup(inp: Tensor[8, 128, f32], out: Tensor[4, 256, f32]):
    put, get = put_k(H, 128), get_k(T, 256)
    a = fifo(H, name="a")
    o = fifo(T, name="o")

    @herd(cols=2, rows=1, cascade="east")
    def core(x, _):
        for _ in loop(4):
            if x == 0:
                for _ in loop(2):
                    with a.consume() as t:
                        put(t)
            else:
                with o.produce() as t:
                    get(t)

    with runtime() as rt:
        rt.fill(a, inp)
        rt.drain(o, out)


@regroup.reference
def reference(inp):
    return inp.reshape(4, 256).copy()
'''
"""A tester's design: two puts of 128 floats feed one get of 256 (8 + 8 words, 16 words)."""


def _stream_design(design_file: DesignFile, source: str) -> Path:
    design_file(CASC_CC, "casc.cc")
    return design_file(source)


@pytest.mark.parametrize("source", [CHAIN3, REGROUP], ids=["get-then-put", "regrouped"])
def test_a_cascade_stream_runs_between_neighbours(design_file: DesignFile, source: str) -> None:
    """On the NPU a put meets only its neighbour's gets, and the words are a stream: a middle
    core's separate get and put calls do not deadlock (the simulator once locked every core's
    i-th cascade call of the chain together), and calls of 8 words feed a call of 16 (it once
    crashed with a numpy broadcast error)."""
    handle = load_design(_stream_design(design_file, source))
    check_design(handle.ir)
    result = simulate(handle)
    assert result.passed, [c.line() for c in result.checks]


def test_a_kernel_whose_cpp_puts_fewer_words_than_declared_is_a_design_error(
        design_file: DesignFile) -> None:
    """The C++ puts 8 words where the declaration says 16: `kernel test` and the native
    simulation both say so at the declaration, without a traceback, and exit 2 (kernel test
    printed a ValueError's traceback and exited 1; the simulation blamed a Python line)."""
    import subprocess
    import sys

    path = _stream_design(design_file, CHAIN3.replace('entry=f"casc_put<{n}>"',
                                                      'entry=f"casc_put<{n // 2}>"'))
    for command in (["kernel", "test", str(path)], ["sim", str(path), "--kernels", "native"]):
        r = subprocess.run([sys.executable, "-m", "aiedsl.cli", *command], capture_output=True,
                           text=True, cwd=path.parent)
        assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
        assert r.stderr.splitlines() == [
            "d.py:18: error [kernel cascade]: kernel 'casc_put_256' moves other cascade words "
            "than it declares: its C++ put 8 words in a call, where cascade_out=256xf32 is 16",
            "  limit: cascade_out=256xf32: 16 words of 512 bits (16 values each) put per call",
            "  found: 8 words put (put_mcd) per call",
            "  fix: make the C++ call put_mcd 16 times per call, or declare "
            "cascade_out=Tensor[128, f32] (the 8 words it puts)"], command
        if command[0] == "kernel":  # the other kernels are still tested (a cascade tester)
            assert r.stdout.splitlines()[-1].startswith(
                "1 of 2 kernels match their references; 1 moved cascade words otherwise than it "
                "declares (casc_put_256: said above)"), r.stdout


def test_a_stream_whose_totals_differ_is_refused_and_the_fix_runs(
        design_file: DesignFile) -> None:
    """One put of 8 words a round against a get of 16: refused naming both kernels, their
    sizes and lines. Putting twice a round (the fix: as many words each side) runs."""
    bad = REGROUP.replace("                for _ in loop(2):\n"
                          "                    with a.consume() as t:\n"
                          "                        put(t)",
                          "                with a.consume() as t:\n"
                          "                    put(t)")
    assert _error(_stream_design(design_file, bad)) == (
        "d.py:43: error [hang: cascade]: core[0,0] puts 32 cascade word(s) per run and "
        "core[1,0] gets 64: the cascade stream blocks, and the getter waits forever for words "
        "never put\n"
        "  limit: every word one core puts, its neighbour gets, in the same run\n"
        "  found: 32 put, 64 got\n"
        "  fix: make core[0,0]'s puts and core[1,0]'s gets move as many words per run: "
        "core[0,0] puts 32 ('casc_put_128': 4 calls of 8 words, line 40); core[1,0] gets 64 "
        "('casc_get_256': 4 calls of 16 words, line 43) (the calls need not pair up: the "
        "cascade is a stream of words)")
    fixed = load_design(_stream_design(design_file, REGROUP))
    assert simulate(fixed).passed


def test_the_gets_prove_the_puts_by_their_words(design_file: DesignFile) -> None:
    """A batch's drain of one 16-word get proves two 8-word puts upstream, so the sync of each
    batch retires both of its fills (counted by calls, it proved one put, and the fills were
    held a batch longer)."""
    from aiedsl.ir.sequence import retirements

    src = REGROUP.replace('''        rt.fill(a, inp)
        rt.drain(o, out)''', '''        for i in range(4):
            rt.fill(a, inp, (i * 256, [256], [1]))
            rt.drain(o, out, (i * 256, [256], [1]))
            rt.sync()''')
    handle = load_design(_stream_design(design_file, src))
    placed, _ = check_design(handle.ir)
    assert retirements(placed) == {2: [0, 1], 5: [3, 4], 8: [6, 7], 11: [9, 10]}
    assert simulate(handle, placed=placed).passed



def test_gets_prove_puts_by_their_bytes_whatever_the_types(design_file: DesignFile) -> None:
    """core[0,0] puts 32 f32 a call, core[1,0] gets 64 bf16 a call: both are two words. The
    first drain waited for proves one put, so the first sync retires the first fill only
    (counted in values, 64 got against 32 put proved two puts and retired the second fill, still
    in flight, too)."""
    from aiedsl.ir.sequence import retirements

    src = (TYPED.replace("PUT_N", "32").replace("PUT_T", "f32")
           .replace("GET_N", "64").replace("GET_T", "bf16")
           .replace("A: Tensor[32, f32], C: Tensor[64, bf16]",
                    "A: Tensor[64, f32], C: Tensor[128, bf16]")
           .replace("        if x == 0:\n            with a.consume() as ta:\n",
                    "        if x == 0:\n          for _ in loop(2):\n"
                    "            with a.consume() as ta:\n")
           .replace("        else:\n            with c.produce() as tc:\n",
                    "        else:\n          for _ in loop(2):\n"
                    "            with c.produce() as tc:\n")
           .replace("i32, runtime", "i32, loop, runtime")
           .replace("""        rt.fill(a, A)
        rt.drain(c, C)""", """        rt.fill(a, A, (0, [32], [1]))
        rt.fill(a, A, (32, [32], [1]))
        rt.drain(c, C, (0, [64], [1]))
        rt.sync()
        rt.drain(c, C, (64, [64], [1]))
        rt.sync()"""))
    assert src.count("loop(2)") == 2 and src.count("rt.sync()") == 2
    design_file(TYPED_CC, "typed.cc")
    handle = load_design(design_file(src))
    placed, _ = check_design(handle.ir)
    assert retirements(placed) == {3: [0, 2], 5: [1, 4]}
    assert simulate(handle, placed=placed).passed

PUT_THEN_Y = STREAM + '''

@design(device="npu1")
def d(inp: Tensor[256, f32], out: Tensor[256, f32]):
    put, get = put_k(T, 256), get_k(T, 256)
    z = zero(Tensor[16, f32])
    a = fifo(T, name="a")
    y = fifo(Tensor[16, f32], name="y")
    o = fifo(T, name="o")

    @herd(cols=2, rows=1, cascade="east")
    def core(x, _):
        if x == 0:
            with a.consume() as t:
                put(t)
            with y.produce() as ty:
                z(ty)
        else:
            with y.consume() as ty, o.produce() as t:
                get(t)

    with runtime() as rt:
        rt.fill(a, inp)
        rt.drain(o, out)


@d.reference
def reference(inp):
    return inp.copy()
'''
"""core[0,0] puts 16 words, then sends 'y'; core[1,0] waits for 'y' before its get."""

Y_THEN_PUT = PUT_THEN_Y.replace('''            with a.consume() as t:
                put(t)
            with y.produce() as ty:
                z(ty)
        else:
            with y.consume() as ty, o.produce() as t:
                get(t)''', '''            with y.consume() as ty, a.consume() as t:
                put(t)
        else:
            with o.produce() as t:
                get(t)
            with y.produce() as ty:
                z(ty)''')
"""core[0,0] waits for 'y' before it puts; core[1,0] sends 'y' only after its get."""


@pytest.mark.parametrize("source, waits, fixed", [
    (PUT_THEN_Y,
     "  <- core[0,0] (0,2) waits at the cascade for core[1,0] to take words: its call of "
     "'casc_put_256' puts words 0-15 of the stream, the link holds 4 not taken, and core[1,0] "
     "has taken 0 so far (it has not reached the call that gets the next) (d.py:41)",
     ("            with y.consume() as ty, o.produce() as t:\n"
      "                get(t)",
      "            with o.produce() as t:\n"
      "                get(t)\n"
      "            with y.consume() as ty:\n"
      "                pass")),
    (Y_THEN_PUT,
     "  <- core[1,0] (1,2) waits at the cascade for core[0,0] to put words: its call of "
     "'casc_get_256' gets words 0-15 of the stream, and core[0,0] has put 0 so far (it has "
     "not reached the call that puts the next) (d.py:44)",
     ("            with y.consume() as ty, a.consume() as t:\n"
      "                put(t)",
      "            with a.consume() as t:\n"
      "                put(t)\n"
      "            with y.consume() as ty:\n"
      "                pass")),
], ids=["put-waits-for-room", "get-waits-for-words"])
def test_a_cascade_deadlock_is_explained_and_its_fix_runs(
        design_file: DesignFile, source: str, waits: str, fixed: tuple[str, str]) -> None:
    """A put of more words than the link holds waits for the get; a get for the put. Each
    waits for a core that waits, before its own cascade call, for 'y', which comes only after
    the first core's call: the fix moves that acquire after the call, and the design runs."""
    handle = load_design(_stream_design(design_file, source))
    check_design(handle.ir)
    with pytest.raises(Deadlock) as e:
        simulate(handle)
    lines = str(e.value).splitlines()
    assert waits in lines
    stuck, other, line = (("core[1,0]", "core[0,0]", 45) if source is PUT_THEN_Y else
                          ("core[0,0]", "core[1,0]", 40))
    assert lines[-1] == (
        f"  fix: break the cycle: {stuck} waits to acquire 'y' (consume, line {line}) before the "
        f"cascade call {other} waits for, and 'y' can only come once {other}'s cascade call is "
        f"done; acquire 'y' after {stuck}'s cascade call (on the cascade a put waits only for "
        "its neighbour to take words, the link holding 4, and a get only for its words to be "
        "put)")
    before, after = fixed
    assert source.count(before) == 1
    result = simulate(load_design(_stream_design(design_file, source.replace(before, after))))
    assert result.passed, [c.line() for c in result.checks]


def test_a_call_moves_no_more_than_one_cascade_word_a_cycle(design_file: DesignFile,
                                                            tmp_path: Path) -> None:
    """A kernel declared at 4 cycles for 16 words a call is timed at 16, and the run says so
    (a tester's chain once moved 12.8 words a cycle, unremarked). (The get kernel, which stores
    1 KB, may not declare fewer than 32 cycles: check refuses that.)"""
    handle = load_design(_stream_design(design_file, STREAM.replace(
        'reference=put_ref, cycles=40', 'reference=put_ref, cycles=4') + CHAIN3[len(STREAM):]))
    trace = tmp_path / "t.json"
    result = simulate(handle, trace=str(trace))
    assert result.passed
    calls = [e for e in json.loads(trace.read_text())["traceEvents"]
             if e["ph"] == "X" and e["name"].startswith("casc_")]
    clock = result.timing.clock_hz
    assert calls and min(e["dur"] * clock / 1e6 for e in calls) >= 16 + 10 - 1e-6
    notes = [line for line in result.timing.lines() if line.startswith("note: ")]
    assert ("note: casc_put_256 declares 4 cycles but moves 16 cascade words a call: it is "
            "timed at 1 word a cycle, the most a core moves by assumption") in notes
    put = next(k for k in result.timing.kernel_time if k.symbol == "casc_put_256")
    assert put.cycles == put.calls * (16 + 10)  # the kernel time line charges it as the run


# -- a call that gets and puts passes the stream through ------------------------------------------

THROUGH_CC = """
#include <aie_api/aie.hpp>

// N floats of a put as words of 16
template <unsigned N> void vput(const float *__restrict a) {
  for (unsigned i = 0; i < N; i += 16) {
    aie::accum<accfloat, 16> acc;
    acc.from_vector(aie::load_v<16>(a + i));
    put_mcd(acc);
  }
}
// word by word: get a word, add a's 16 floats, put it
template <unsigned N> void vputget(const float *__restrict a) {
  for (unsigned i = 0; i < N; i += 16) {
    aie::accum<accfloat, 16> acc(get_scd_v16accfloat());
    acc = aie::add(acc, aie::load_v<16>(a + i));
    put_mcd(acc);
  }
}
// every word got first, then put in reverse order (word 0 is made from the last word got)
template <unsigned N> void vputget_rev(const float *__restrict a) {
  aie::accum<accfloat, 16> acc[N / 16];
  for (unsigned i = 0; i < N / 16; ++i) acc[i] = aie::accum<accfloat, 16>(get_scd_v16accfloat());
  for (unsigned i = N / 16; i-- > 0;) put_mcd(aie::add(acc[i], aie::load_v<16>(a + 16 * i)));
}
template <unsigned N> void vget(const float *__restrict a, float *__restrict c) {
  for (unsigned i = 0; i < N; i += 16) {
    aie::accum<accfloat, 16> acc(get_scd_v16accfloat());
    acc = aie::add(acc, aie::load_v<16>(a + i));
    aie::store_v(c + i, acc.to_vector<float>());
  }
}
"""

INTER = '''
import numpy as np
from aiedsl import Tensor, f32, design, fifo, herd, runtime
from aiedsl.kernels import buffer, declare, passthrough

T32, T64 = Tensor[32, f32], Tensor[64, f32]


def k_put(a, cout):
    cout.reshape(-1)[...] = a.reshape(-1)


def k_putget(a, cin, cout):
    cout.reshape(-1)[...] = cin.reshape(-1) + a.reshape(-1)


def k_putget_rev(a, cin, cout):
    cout.reshape(-1, 16)[...] = (cin.reshape(-1) + a.reshape(-1)).reshape(-1, 16)[::-1]


def k_get(a, c, cin):
    c.reshape(-1)[...] = cin.reshape(-1) + a.reshape(-1)


@design(device="npu1")
def inter(A: Tensor[192, f32], C: Tensor[96, f32]):
    put = declare("vput_32", source="cas.cc", entry="vput<32>", args=[buffer("a", T32)],
                  reference=k_put, cycles=40, cost="40", cascade_out=T32)
    pg = declare("vputget_64", source="cas.cc", entry="vputget<64>", args=[buffer("a", T64)],
                 reference=k_putget, cycles=80, cost="80", cascade_in=T64, cascade_out=T64)
    get = declare("vget_32", source="cas.cc", entry="vget<32>",
                  args=[buffer("a", T32), buffer("c", T32, "out")],
                  reference=k_get, cycles=40, cost="40", cascade_in=T32)
    copy = passthrough(T32)
    a0 = fifo(T32, name="a0"); a1 = fifo(T64, name="a1"); a2 = fifo(T32, name="a2")
    c = fifo(T32, name="c"); f = fifo(T32, name="f")   # f: core[2,0] -> core[0,0]
    sink = fifo(T32, name="sink")

    @herd(cols=3, rows=1, cascade="east")
    def core(x, _):
        if x == 0:
            with a0.consume() as t:
                put(t)
            with f.consume() as tf, sink.produce() as ts:   # waits for core[2,0]
                copy(tf, ts)
            with a0.consume() as t:
                put(t)
        elif x == 1:
            with a1.consume() as t:
                pg(t)          # gets 4 words and puts 4, word by word in the C++
        else:
            with a2.consume() as t, c.produce() as tc:
                get(t, tc)
                with f.produce() as tf:
                    copy(t, tf)
            with a2.consume() as t, c.produce() as tc:
                get(t, tc)

    with runtime() as rt:
        rt.fill(a0, A, (0, [64], [1]))
        rt.fill(a1, A, (64, [64], [1]))
        rt.fill(a2, A, (128, [64], [1]))
        rt.drain(sink, C, (64, [32], [1]))
        rt.drain(c, C, (0, [64], [1]))


@inter.reference
def reference(A):
    return np.concatenate([A[:64] + A[64:128] + A[128:], A[128:160]])
'''
"""A tester's design: core[1,0]'s one call gets 4 words and puts 4; core[2,0] gets the first 2
with one call, then sends 'f' to core[0,0], which puts the last 2 only once it has 'f'. Only a
middle core that passes words on as they come lets it run."""

MMINT = '''
import numpy as np
from aiedsl import Tensor, bf16, f32, design, fifo, herd, local, runtime
from aiedsl.kernels import matmul_cascade, passthrough
from aiedsl.kernels.cascade import matmul_cascade_ref


@design(device="npu1")
def mmint(A: Tensor[384, bf16], B: Tensor[384, bf16], C: Tensor[256, f32]):
    put = matmul_cascade(8, 8, 16, "put")        # 2 patches of C: 8 words per call
    pg = matmul_cascade(16, 8, 16, "put_get")    # 4 patches: per patch, gets 4 words, puts 4
    get = matmul_cascade(8, 8, 16, "get")        # 2 patches: 8 words per call
    copy = passthrough(Tensor[8, 16, bf16])
    lb = local(Tensor[8, 16, bf16], initial=0.0, name="lb")
    a0 = fifo(Tensor[8, 8, bf16], name="a0")
    a1 = fifo(Tensor[16, 8, bf16], name="a1"); b1 = fifo(Tensor[8, 16, bf16], name="b1")
    a2 = fifo(Tensor[8, 8, bf16], name="a2"); b2 = fifo(Tensor[8, 16, bf16], name="b2")
    c = fifo(Tensor[8, 16, f32], name="c")
    f = fifo(Tensor[8, 16, bf16], name="f")      # core[2,0] -> core[0,0], not neighbours

    @herd(cols=3, rows=1, cascade="east")
    def core(x, _):
        if x == 0:
            with a0.consume() as ta:
                put(ta, lb)
            with a0.consume() as ta, f.consume() as tf:   # needs core[2,0]'s first get done
                put(ta, tf)
        elif x == 1:
            with a1.consume() as ta, b1.consume() as tb:
                pg(ta, tb)
        else:
            with a2.consume() as ta, b2.consume() as tb, c.produce() as tc:
                get(ta, tb, tc)
                with f.produce() as tf:
                    copy(tb, tf)
            with a2.consume() as ta, b2.consume() as tb, c.produce() as tc:
                get(ta, tb, tc)

    with runtime() as rt:
        rt.fill(a0, A, (0, [128], [1]))
        rt.fill(a1, A, (128, [128], [1])); rt.fill(b1, B, (0, [128], [1]))
        rt.fill(a2, A, (256, [128], [1])); rt.fill(b2, B, (128, [256], [1]))
        rt.drain(c, C)


@mmint.reference
def reference(A, B):
    shape = dict(k=8, n=16, r=4, s=8, t=4)
    first, second, mid = (np.zeros(n, np.float32) for n in (128, 128, 256))
    matmul_cascade_ref(A[0:64], np.zeros(128, B.dtype), first, m=8, role="put", **shape)
    matmul_cascade_ref(A[64:128], B[128:256], second, m=8, role="put", **shape)
    matmul_cascade_ref(A[128:256], B[0:128], np.concatenate([first, second]), mid, m=16,
                       role="put_get", **shape)
    c = np.zeros(256, np.float32)
    matmul_cascade_ref(A[256:320], B[128:256], c[:128], mid[:128], m=8, role="get", **shape)
    matmul_cascade_ref(A[320:384], B[256:384], c[128:], mid[128:], m=8, role="get", **shape)
    return c
'''
"""A tester's design: the put_get stage's one call gets 16 words, core[2,0] gets the first 8,
then sends 'f' that core[0,0]'s second put (the last 8 words) needs."""

SEND_F_LAST = ("""            with a2.consume() as ta, b2.consume() as tb, c.produce() as tc:
                get(ta, tb, tc)
                with f.produce() as tf:
                    copy(tb, tf)
            with a2.consume() as ta, b2.consume() as tb, c.produce() as tc:
                get(ta, tb, tc)
""", """            with a2.consume() as ta, b2.consume() as tb, c.produce() as tc:
                get(ta, tb, tc)
            with a2.consume() as ta, b2.consume() as tb, c.produce() as tc:
                get(ta, tb, tc)
                with f.produce() as tf:
                    copy(tb, tf)
""")
"""core[2,0] sends 'f' only after its second get, which needs the words core[0,0] puts only
once it has 'f': a real deadlock."""


@pytest.mark.parametrize("kernels", ["reference", "native"])
@pytest.mark.parametrize("source", ["mmint", "inter"])
def test_a_middle_call_passes_words_on_as_they_come(design_file: DesignFile, source: str,
                                                    kernels: str) -> None:
    """The chain's end feeds its start through a fifo while the middle core's one call is
    still getting: the C++ gets a patch (or a word), adds and puts it before the next, so the
    NPU streams through. The simulator ran a call's whole get before its first put and
    reported a deadlock, with a fix that did not apply. The words core[2,0] takes before the
    middle call's get is all in are made by a trial run of its kernel on the first words, and
    the results match numpy (and the C++ built for the host)."""
    design_file(THROUGH_CC, "cas.cc")
    handle = load_design(design_file(MMINT if source == "mmint" else INTER))
    check_design(handle.ir)
    result = simulate(handle, kernels=kernels)
    assert result.passed, [c.line() for c in result.checks]
    # every program ran to its end (each then starts again, as on the NPU)
    assert all(p.info.get("passes", 0) >= 1 for p in result.machine.cores.values())


def test_a_real_deadlock_through_a_middle_call_is_still_one(design_file: DesignFile) -> None:
    """core[2,0] sends 'f' only after its second get: the words it waits for are those
    core[0,0] puts once it has 'f'. The explanation says the middle call passes words on as
    its get brings them."""
    before, after = SEND_F_LAST
    assert MMINT.count(before) == 1
    handle = load_design(design_file(MMINT.replace(before, after)))
    check_design(handle.ir)
    with pytest.raises(Deadlock) as e:
        simulate(handle)
    lines = str(e.value).splitlines()
    assert ("  <- core[2,0] (2,2) waits at the cascade for core[1,0] to put words: its call of "
            "'matmul_cascade_get_bf16_f32_8x8x16_4x8x4' gets words 8-15 of the stream, and "
            "core[1,0] has put 8 so far (its call of "
            "'matmul_cascade_put_get_bf16_f32_16x8x16_4x8x4' passes the next on once its own "
            "get brings it in) (d.py:34)") in lines
    assert ("  <- core[1,0] (1,2) waits at the cascade for core[0,0] to put words: its call of "
            "'matmul_cascade_put_get_bf16_f32_16x8x16_4x8x4' gets words 0-15 of the stream, and "
            "core[0,0] has put 8 so far (it has not reached the call that puts the next) "
            "(d.py:29)") in lines
    # the fix's clause on calls that get and puts: here, where one is (not where none is)
    assert lines[-1].endswith("a get only for its words to be put, and a call that gets and "
                              "puts passes the words on as they come)"), lines[-1]


def test_a_call_declared_to_get_all_before_it_puts_deadlocks(design_file: DesignFile) -> None:
    """The same middle call declared cascade_step=(4, 4), a C++ that gets its 4 words before
    it puts one (vputget_rev): core[0,0] has put only 2 before it waits for 'f', so nothing
    moves, on the NPU too."""
    design_file(THROUGH_CC, "cas.cc")
    src = (INTER.replace('entry="vputget<64>"', 'entry="vputget_rev<64>"')
           .replace("reference=k_putget, cycles=80", "reference=k_putget_rev, cycles=80")
           .replace("cascade_out=T64)", "cascade_out=T64,\n                 cascade_step=(4, 4))"))
    assert src.count("cascade_step=(4, 4)") == 1
    with pytest.raises(Deadlock) as e:
        simulate(load_design(design_file(src)))
    assert ("  <- core[1,0] (1,2) waits at the cascade for core[0,0] to put words: its call of "
            "'vputget_64' gets words 0-3 of the stream, and core[0,0] has put 2 so far (it has "
            "not reached the call that puts the next) (d.py:50)") in str(e.value).splitlines()


@pytest.mark.parametrize("kernels", ["reference", "native"])
def test_a_word_put_before_the_words_it_is_made_from_is_an_error(
        design_file: DesignFile, kernels: str) -> None:
    """A middle call that puts its words in reverse order, declared without cascade_step: the
    simulator lets word 0 go once a word of its get is in, core[2,0] takes it before the rest
    come, and the real run finds that word 0 was made from the last word: an error at the
    kernel naming the fix, not wrong numbers."""
    design_file(THROUGH_CC, "cas.cc")
    src = (INTER.replace('entry="vputget<64>"', 'entry="vputget_rev<64>"')
           .replace("reference=k_putget, cycles=80", "reference=k_putget_rev, cycles=80"))
    with pytest.raises(DesignError) as e:
        simulate(load_design(design_file(src)), kernels=kernels)
    if kernels == "native":  # its C++ runs: the order it gets and puts in is read (the host
        # header records the words got at each put), and is not the declared one
        assert str(e.value) == (
            "d.py:28: error [kernel cascade]: kernel 'vputget_64' gets more of its cascade "
            "input before it puts than it declares: its C++ had got 4 word(s) when it put word "
            "0, where no cascade_step (word j of its put waits for ceil((j + 1) x 4 / 4) words "
            "of its get) lets it have 1\n"
            "  limit: a call gets and puts in the order it declares: the simulator and the hang "
            "check stream its words so, and a chain whose cores also share fifos hangs on the "
            "NPU, or runs, by that order\n"
            "  found: 4 word(s) got before put word 0\n"
            "  fix: declare cascade_step=(4, 4) (its C++ gets 4 word(s), then puts 4), and check "
            "the design again")
        return
    assert str(e.value) == (
        "d.py:28: error [kernel cascade]: kernel 'vputget_64' put cascade word 0 of its call on "
        "core[1,0] (line 49) before it had got the words it makes it from: the simulator passed "
        "the word on once 2 of the call's 4 get words were in (word 0 waits for 1), and it "
        "changed when the rest came\n"
        "  limit: a call that gets and puts streams: word j of its put goes once ceil((j + 1) x "
        "4 / 4) of its 4 get words came in, as a kernel that gets a word and puts a word does "
        "(no cascade_step=)\n"
        "  found: word 0 made from the first 2 words got differs from the word the whole get "
        "makes\n"
        "  fix: declare cascade_step=(g, p): the words its C++ gets before each p words it puts "
        "(cascade_step=(4, 4) if it gets every word before it puts one)")


@pytest.mark.parametrize("step", ["(3, 4)", "(2, 1)", "(0, 0)", "4"])
def test_a_cascade_step_must_divide_the_words_alike(design_file: DesignFile, step: str) -> None:
    """(g, p) with g dividing the 4 words got and p the 4 put, as many times each."""
    design_file(THROUGH_CC, "cas.cc")
    src = INTER.replace("cascade_out=T64)", f"cascade_out=T64, cascade_step={step})")
    with pytest.raises(DesignError) as e:
        load_design(design_file(src))
    assert str(e.value).splitlines() == [
        f"d.py:28: error [kernel signature]: kernel 'vputget_64' has cascade_step={step}",
        "  limit: (g, p): the C++ gets g words, then puts p, over and over, through its 4 words "
        "got and 4 put (g divides 4, p divides 4, as many times each)",
        f"  found: cascade_step={step}",
        "  fix: write e.g. cascade_step=(4, 4) (every word got before the first put), or leave "
        "it out for a kernel that gets and puts word by word"]


def test_a_cascade_step_needs_a_get_and_a_put(design_file: DesignFile) -> None:
    design_file(THROUGH_CC, "cas.cc")
    src = INTER.replace("cycles=40, cost=\"40\", cascade_out=T32)",
                        "cycles=40, cost=\"40\", cascade_out=T32,\n"
                        "                  cascade_step=(1, 1))")
    with pytest.raises(DesignError) as e:
        load_design(design_file(src))
    assert str(e.value).splitlines() == [
        "d.py:26: error [kernel signature]: kernel 'vput_32' has cascade_step=(1, 1) but no "
        "cascade_in",
        "  limit: cascade_step= says how a kernel that gets and puts interleaves them",
        "  found: cascade_step=(1, 1)",
        "  fix: leave cascade_step out"]


def test_a_reference_that_fails_on_the_early_words_says_so(design_file: DesignFile) -> None:
    """The trial run that makes core[1,0]'s early words gives its reference the 2 words got so
    far and NaN for the rest; a reference that refuses NaN fails there, and the error says
    which run it was (not a traceback from core[2,0]'s call)."""
    design_file(THROUGH_CC, "cas.cc")
    src = INTER.replace('''def k_putget(a, cin, cout):
''', '''def k_putget(a, cin, cout):
    assert not np.isnan(cin).any(), "NaN in the cascade"
''')
    with pytest.raises(DesignError) as e:
        simulate(load_design(design_file(src)))
    assert str(e.value).splitlines()[0] == (
        "d.py:13: error [python error]: AssertionError: NaN in the cascade (while running kernel "
        "'vputget_64' for core[1,0] (called at d.py:50) on the first 2 of its 4 cascade words, "
        "the rest undefined (poison), to make the words its neighbour takes before the rest "
        "come in)")


def test_mm_cascade_cc_says_how_the_simulator_streams_it() -> None:
    """Its comment said a cascade call "runs in lockstep with its neighbour's: the simulator
    paces the pair by the slower one", which the simulator has not done since the cascade
    became a stream; it now states the stream and the put_get stage's step, which is the
    library's (4 words each way a patch on npu1, 8 on npu2)."""
    from aiedsl.kernels import matmul_cascade
    from aiedsl.kernels.paths import KERNELS_CPP

    text = (KERNELS_CPP / "mm_cascade.cc").read_text()
    assert "lockstep with its neighbour's" not in text
    assert "aiedsl/sim/cascade_stream.py" in text
    assert "cascade_step, (4, 4) or (8, 8)" in " ".join(text.replace("//", "").split())
    assert [matmul_cascade(16, 8, 32, "put_get", device=d).ir.cascade_step
            for d in ("npu1", "npu2")] == [(4, 4), (8, 8)]
