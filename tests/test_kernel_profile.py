"""``aiedsl kernel profile``: operations counted by unit as the kernel's C++ runs on the host, the
issue-slot bound they give, and its agreement with the published single-core matmul figures."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from aiedsl.ir.types import TensorType
from aiedsl.kernels.text import kernel_text
from aiedsl.kernels import (add, conv2d_1x1, conv2d_3x3, matmul, mul, relu,
                            vector_scalar, zero)
from aiedsl.kernels.cases import KernelCase
from aiedsl.kernels.matmul import MATMUL_PATCH, PUBLISHED
from aiedsl.kernels.profile import profile_cases
from tests.command_line import run_command

ROOT = Path(__file__).resolve().parents[1]


def _case(k):  # type: ignore[no-untyped-def]
    return KernelCase(k.ir, kernel_text(None, k.ir), k.run_reference, {})


def test_the_bf16_matmul_is_counted_exactly() -> None:
    # 64x104x64 on 4x8x4: 16 x 16 patches' worth of 13 K steps, 4 mmuls each; 4 A/B block
    # loads (64 B) per step and the 4 C blocks loaded and stored per 2x2 patch
    p = profile_cases([_case(matmul(64, 104, 64, "bf16", device="npu1"))], "npu1")[0]
    assert p.counts == {"vector MAC": 3328, "vector ALU": 0, "shuffle": 0,
                        "load bytes": 229376, "store bytes": 16384, "MACs": 425984}
    assert p.bounds == {"vector MAC": 3328, "vector ALU": 0, "shuffle": 0, "load": 3584,
                        "store": 512}
    assert (p.cycles, p.binding, p.peak_macs) == (3584, "load", 128)
    assert p.lines()[0] == ("matmul_bf16_f32_64x104x64_4x8x4 on npu1: 3,584 cycles per call at "
                            "best (bound by load)")
    assert p.lines()[-1] == "  118.9 MACs per cycle of the core's peak 128: 93%"


def test_a_store_only_kernel_is_store_bound() -> None:
    p = profile_cases([_case(zero(TensorType(shape=(4096,), dtype="f32")))], "npu1")[0]
    assert (p.cycles, p.binding, p.counts["store bytes"]) == (512, "store", 16384)
    assert len(p.lines()) == 3  # no MACs line


@pytest.mark.parametrize("point", sorted(PUBLISHED))
def test_the_profile_is_within_15_percent_of_the_published_points(point) -> None:  # type: ignore[no-untyped-def]
    device, dt, dims = point
    p = profile_cases([_case(matmul(*dims, dt, device=device))], device)[0]
    assert abs(p.macs_per_cycle / PUBLISHED[point][0] - 1) <= 0.15


def test_the_command_profiles_a_designs_kernels(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "AIEDSL_TRACEBACK"}
    r = run_command("kernel", "profile", "designs/matmul_cascade.py", "-D", "M=64", "-D", "N=64",
                    cwd=ROOT, env=env)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == ("matmul_cascade_put_bf16_f32_64x64x64_4x8x4 on npu1: 2,048 cycles per "
                        "call at best (bound by vector MAC)")
    assert len([x for x in lines if " on npu1: " in x]) == 3
    # beside each estimate, what the kernel declares (and the simulator charges)
    assert lines[4] == ("  declared: cycles=2,516, 1.2x this estimate (the simulator charges "
                        "what is declared; the estimate is a lower bound)")
    assert len([x for x in lines if x.startswith("  declared: cycles=")]) == 3


DOUBLE_CC = """#include <aie_api/aie.hpp>
template <unsigned N> void double_i32(const int32_t *in, int32_t *out, int32_t n) {
  for (unsigned i = 0; i < N; i += 16)
    aie::store_v(out + i, aie::add(aie::load_v<16>(in + i), aie::load_v<16>(in + i)));
}
"""
DOUBLE = '''
from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
from aiedsl.kernels import buffer, declare, scalar

def double_ref(src, dst, count, **_):
    dst[...] = src * 2

@design(device="npu1_1col")
def d(inp: Tensor[4096, i32], out: Tensor[4096, i32]):
    k = declare("double_i32_1024", source="dbl.cc", entry="double_i32<1024>",
                args=[buffer("src", Tensor[1024, i32]), buffer("dst", Tensor[1024, i32], "out"),
                      scalar("n", i32)],
                reference=double_ref, cycles=None, cost="one add per 16 lanes"PARAMS)
    a, b = fifo(Tensor[1024, i32], name="a"), fifo(Tensor[1024, i32], name="b")

    @herd()
    def core():
        for _ in loop(4):
            with a.consume() as s, b.produce() as t:
                k(s, t, 1024)

    with runtime() as rt:
        rt.fill(a, inp)
        rt.drain(b, out)

@d.reference
def reference(inp):
    return inp * 2
'''


def test_a_kernel_without_cycles_takes_them_from_its_profile(design_file) -> None:  # type: ignore[no-untyped-def]
    from aiedsl.loader import load_design
    from aiedsl.sim import simulate

    path = design_file(DOUBLE.replace("PARAMS", ', params={"n": 1024}'))
    (path.parent / "dbl.cc").write_text(DOUBLE_CC)
    handle = load_design(path)
    k = handle.ir.kernels[0]
    # 8 KB loaded at 64 B per cycle, 4 KB stored at 32 B per cycle, 64 vector adds
    assert (k.cycles, k.cycles_source) == (128, "profile")
    assert k.cost == ("one add per 16 lanes [cycles from its profile on npu1_1col: bound by "
                      "store; no cycles= declared]")
    result = simulate(handle)
    assert result.passed
    lines = result.timing.lines()  # after the bottleneck, before the notes
    assert lines[lines.index("bottleneck: " + result.timing.bottleneck.sentence()) + 1] == (
        "cycles per call from `aiedsl kernel profile` (no cycles= declared, a bound at best): "
        "double_i32_1024: 128 cycles per call with n=1024")


def test_a_kernel_declared_outside_the_design_is_profiled_on_the_designs_device(
        design_file) -> None:  # type: ignore[no-untyped-def]
    """Declared at module level, the kernel was profiled there, on npu1 (AIE2), and an npu2
    design refused it ("declare it inside the design function"). It is now profiled when the
    design that calls it is traced, on that design's device, wherever it is declared."""
    from aiedsl.checks import check_design
    from aiedsl.loader import load_design
    from aiedsl.targets import get_target

    src = DOUBLE.replace("PARAMS", ', params={"n": 1024}').replace("npu1_1col", "npu2_1col")
    start = src.index("    k = declare(")
    end = src.index("\n", src.index("cost=", start)) + 1
    block = src[start:end]
    src = src[:start] + src[end:]
    src = src.replace("@design(", "\n".join(ln[4:] for ln in block.splitlines()) + "\n\n@design(")
    path = design_file(src)
    (path.parent / "dbl.cc").write_text(DOUBLE_CC)
    handle = load_design(path)
    check_design(handle.ir)
    k = handle.ir.kernels[0]
    npu2 = get_target("npu2_1col")
    # AIE2P stores twice what AIE2 does a cycle: the bound is its own
    assert (k.arch, k.cycles) == ("aie2p", max(8192 // npu2.core_load_bytes_per_cycle,
                                               4096 // npu2.core_store_bytes_per_cycle))
    assert "[cycles from its profile on npu2_1col: " in k.cost


def test_a_kernel_declared_for_another_architecture_is_refused_with_arch_in_the_fix(
        design_file) -> None:  # type: ignore[no-untyped-def]
    """The user's own arch= (a kernel ported from an aie2-only IRON example to npu2): the fix
    names arch=, which declare() takes, not device=."""
    from aiedsl.checks import check_design
    from aiedsl.errors import DesignError
    from aiedsl.loader import load_design

    src = DOUBLE.replace("PARAMS", ', arch="aie2"').replace("cycles=None", "cycles=100")
    path = design_file(src.replace("npu1_1col", "npu2_1col"))
    (path.parent / "dbl.cc").write_text(DOUBLE_CC)
    with pytest.raises(DesignError) as e:
        check_design(load_design(path).ir)
    assert str(e.value) == (
        "d.py:9: error [kernel device]: kernel 'double_i32_1024' was made for aie2, but design "
        "'d' runs on npu2_1col (aie2p)\n"
        "  limit: a kernel runs only on the architecture it was made for (its declaration says "
        "its C++ and cycles are that architecture's)\n"
        "  found: aie2\n"
        "  fix: declare it with arch='aie2p' once its C++ and cycles are aie2p's, or leave arch "
        "out for C++ that builds for both")

@pytest.mark.parametrize("command", ["test", "profile"])
def test_kernel_test_and_profile_refuse_a_kernel_for_another_architecture(
        design_file, command: str) -> None:  # type: ignore[no-untyped-def]
    """A tester's arch="aie2" kernel under --device npu2: `check` refused it, and `kernel
    test` passed it (its host run knows no architecture). Both commands now refuse it as check
    does, with check's words."""
    src = DOUBLE.replace("PARAMS", ', arch="aie2"').replace("cycles=None", "cycles=200")
    path = design_file(src)
    (path.parent / "dbl.cc").write_text(DOUBLE_CC)
    env = {k: v for k, v in os.environ.items() if k != "AIEDSL_TRACEBACK"}
    r = run_command("kernel", command, str(path), "--device", "npu2_1col", env=env)
    assert (r.returncode, r.stdout) == (2, "")
    assert r.stderr.splitlines() == [
        "d.py:9: error [kernel device]: kernel 'double_i32_1024' was made for aie2, but design "
        "'d' runs on npu2_1col (aie2p)",
        "  limit: a kernel runs only on the architecture it was made for (its declaration says "
        "its C++ and cycles are that architecture's)",
        "  found: aie2",
        "  with --device npu2_1col, given on the command line",
        "  fix: declare it with arch='aie2p' once its C++ and cycles are aie2p's, or leave arch "
        "out for C++ that builds for both"]
    ok = run_command("kernel", command, str(path), env=env)
    assert ok.returncode == 0, ok.stdout + ok.stderr


POINTER_CC = """#include <aie_api/aie.hpp>
template <unsigned N> void double_i32(const int32_t *in, int32_t *out, int32_t n) {
  for (unsigned i = 0; i < N; i += 16) {
    v16int32 x = *(const v16int32 *)(in + i);  // mlir-aie's relu.cc style
    v16int32 y = x;                            // a register: neither loaded nor stored
    *(v16int32 *)(out + i) = aie::add(x, y);
  }
}
"""


def test_loads_and_stores_through_vector_pointers_are_counted(design_file) -> None:  # type: ignore[no-untyped-def]
    """A tester's relu.cc (mlir-aie's, v32bfloat16 pointers) moving 2 KB per call profiled at
    "0 load bytes, 0 store bytes": its cycles=None under-charged the store-bound kernel. The
    pointer form of the load_v kernel above now counts as it does."""
    from aiedsl.kernels.cases import design_cases
    from aiedsl.loader import load_design

    path = design_file(DOUBLE.replace("PARAMS", ', params={"n": 1024}'))
    (path.parent / "dbl.cc").write_text(POINTER_CC)
    handle = load_design(path)
    k = handle.ir.kernels[0]
    assert (k.cycles, k.cycles_source) == (128, "profile")  # 4 KB stored at 32 B per cycle
    (prof,) = profile_cases(design_cases(handle), "npu1_1col")
    assert prof.counts == {"vector MAC": 0, "vector ALU": 64, "shuffle": 0,
                           "load bytes": 4096, "store bytes": 4096, "MACs": 0}
    assert prof.binding == "store"


def test_a_kernel_without_cycles_needs_no_params_for_the_constants_its_calls_pass(
        design_file) -> None:  # type: ignore[no-untyped-def]
    """Without params=, cycles=None was refused ("no value for its scalar 'n' to profile it
    with"), though the call passes n=1024: it is profiled with that."""
    from aiedsl.loader import load_design

    path = design_file(DOUBLE.replace("PARAMS", ""))
    (path.parent / "dbl.cc").write_text(DOUBLE_CC)
    k = load_design(path).ir.kernels[0]
    assert [(p.scalars, p.cycles) for p in k.profiles] == [({"n": 1024}, 128)]


def test_a_kernel_file_is_profiled_with_the_devices_own_mmul_shapes() -> None:
    env = {k: v for k, v in os.environ.items() if k != "AIEDSL_TRACEBACK"}
    r = run_command("kernel", "profile", "kernels_cpp/mm.cc", "--device", "npu2", cwd=ROOT,
                    env=env)
    assert r.returncode == 0, r.stderr
    heads = [x.split(" on ")[0] for x in r.stdout.splitlines() if " on npu2: " in x]
    bf16 = [h for h in heads if h.startswith("matmul_bf16_")]
    assert bf16 and all(h.endswith("_4x8x8") for h in bf16)  # npu2's bf16 mmul
    assert not any(h.endswith("_4x8x4") for h in heads)  # npu1's
    # its mmuls run on the bfp16 unit, whose conversions no count holds: said under each
    # bf16 matmul, as the simulator's notes say it (a reviewer: profile said 100% of peak alone)
    blocks = ("\n" + r.stdout).split("\nmatmul_")[1:]
    said = [b for b in blocks if "not counted: its bf16 aie::mmul<4, 8, 8> runs on npu2's "
            "bfp16 unit, and the two conversions to bfp16 each mmul needs run in the core's one "
            "store slot and are not in this estimate, which they could make up to twice as "
            "many (README: npu2's bf16 matrix multiply)" in b]
    assert len(said) == len(bf16) and all(b.startswith("bf16") for b in said)


SCALAR_CC = """#include <aie_api/aie.hpp>
template <unsigned N> void double_i32(const int32_t *in, int32_t *out, int32_t n) {
  for (unsigned i = 0; i < N; ++i) out[i] = in[i] * 2;  // plain C++: nothing the profile counts
}
"""


def test_a_scalar_kernel_has_no_profile_and_must_declare_its_cycles(design_file) -> None:  # type: ignore[no-untyped-def]
    from aiedsl.errors import DesignError
    from aiedsl.kernels.cases import design_cases
    from aiedsl.kernels.profile import profile_cases
    from aiedsl.loader import load_design

    path = design_file(DOUBLE.replace("PARAMS", ', params={"n": 1024}'))
    (path.parent / "dbl.cc").write_text(SCALAR_CC)
    with pytest.raises(DesignError) as e:
        load_design(path)
    assert str(e.value).splitlines()[:3] == [
        "d.py:9: error [kernel cost]: kernel 'double_i32_1024' has no cycles= and its profile "
        "counts no AIE API vector operation, load or store (scalar C++ is not modelled)",
        "  limit: cycles= for a kernel the profile cannot estimate",
        "  found: cycles=None"]
    path.write_text(path.read_text().replace("cycles=None", "cycles=2100"))
    (prof,) = profile_cases(design_cases(load_design(path)), "npu1_1col")
    assert not prof.counted
    assert prof.lines() == [
        "double_i32_1024 with n=1024 on npu1_1col: no AIE API vector operation, load or store "
        "counted: "
        "scalar C++ is not modelled, so the profile gives no estimate (declare cycles= from the "
        "kernel's loop)"]


@pytest.mark.parametrize("make", [
    lambda t: add(t), lambda t: mul(t), lambda t: relu(t),
    lambda t: vector_scalar("add", t)])
@pytest.mark.parametrize("dtype", ["i32", "bf16"])
def test_element_wise_kernels_declare_at_least_what_their_profile_bounds(make, dtype: str
                                                                         ) -> None:
    """A tester's profile of add_i32_1024 said 128 cycles at best (bound by the store: AIE2
    stores 256 bits a cycle), against the 78 the library declared and the simulator charged."""
    k = make(TensorType(shape=(1024,), dtype=dtype))
    scalars = {a.name: 3 for a in k.ir.args if a.kind == "scalar"}
    p = profile_cases([KernelCase(k.ir, kernel_text(None, k.ir), k.run_reference, scalars)],
                      "npu1")[0]
    assert k.ir.cycles >= p.cycles, (k.ir.symbol, p.lines())


def _conv_kernels() -> list:  # type: ignore[type-arg]
    """Every convolution the library makes: its samples (``kernel test --all``, ``kernel
    profile conv3x3.cc``) on both devices, the ``kernel cost`` example (32x64x64) and the
    module's own example row (56x64x64, npu1: npu2's 8-pixel blocks need a multiple of 16)."""
    from aiedsl.kernels.samples import samples

    made = [k for k in samples() if k.ir.source == "conv3x3.cc"
            or k.ir.symbol.startswith("conv2d1x1_")]
    made += [f(32, 64, 64, device=d) for f in (conv2d_1x1, conv2d_3x3)
             for d in ("npu1", "npu2")]
    return made + [conv2d_3x3(56, 64, 64, shift=8, device="npu1")]


def test_every_convolution_declares_its_profile_and_only_what_the_profile_leaves_out() -> None:
    """The declared cycles of each convolution against its profile on its own device: never
    below it (the profile is a lower bound), and above it by no more than what the profile
    does not count, matmul's per-patch constant for each 2x2 output patch (its C stores and
    pipeline fill) and the call's 20. The units that bind these kernels, the vector MACs and
    the shuffles, are exact counts, so no rounding slack is allowed: a load or store bound
    would round up by under one cycle, and none binds. conv3x3 on npu2 declared 175 and 7,064
    cycles where its profile said 182 and 8,664: the profile counted the 8x8x8 A block's concat
    of two 256-bit halves (a register pair) as a shuffle, and a 512-bit output zip as one
    shuffle where it takes two."""
    kernels = _conv_kernels()
    assert len(kernels) == 15  # 3 pointwise and 2 3x3 samples a device, and 5 examples
    seen = {}
    for k in kernels:
        device = "npu2" if k.ir.arch == "aie2p" else "npu1"
        prof = profile_cases([_case(k)], device)[0]
        p = k.ir.params
        patches = (p["width"] if "width" in p else p["m"]) // (2 * p["r"]) * (
            (p["cout"] if "cout" in p else p["n"]) // (2 * p["t"]))
        slack = patches * MATMUL_PATCH["i8"] + 20
        assert prof.cycles <= k.ir.cycles <= prof.cycles + slack, (k.ir.symbol, device,
                                                                    prof.lines())
        seen[(k.ir.symbol, device)] = (k.ir.cycles, prof.cycles, prof.binding)
    # the library's 3x3 samples, declared and profiled
    assert {key: v for key, v in seen.items() if key[0].startswith("conv3x3_")
            and "_shift0_" not in key[0] and "56x" not in key[0]} == {
        ("conv3x3_i8_16x16x16_4x8x8_shift10", "npu1"): (186, 148, "shuffle"),
        ("conv3x3_i8_48x64x64_4x8x8_shift13_relu", "npu1"): (7196, 6960, "shuffle"),
        ("conv3x3_i8_16x16x16_8x8x8_shift10", "npu2"): (175, 148, "shuffle"),
        ("conv3x3_i8_48x64x64_8x8x8_shift13_relu", "npu2"): (7064, 6960, "shuffle")}


SCALE_N_CC = """#include <aie_api/aie.hpp>
extern "C" void scale_n(const int32_t *a, int32_t *c, int32_t n) {
  for (int i = 0; i < n; i += 16)
    aie::store_v(c + i, aie::add(aie::load_v<16>(a + i), aie::load_v<16>(a + i)));
}
"""
SCALE_N = '''
from aiedsl import Tensor, design, fifo, herd, i32, loop, rtp, runtime
from aiedsl.kernels import buffer, declare, scalar

def ref(a, c, n):
    c[:n] = a[:n] * 2

@design(device="npu1_1col")
def d(inp: Tensor[4096, i32], out: Tensor[4096, i32]):
    k = declare("scale_n", source="sn.cc",
                args=[buffer("a", Tensor[1024, i32]), buffer("c", Tensor[1024, i32], "out"),
                      scalar("n", i32)],
                reference=ref, cycles=None, params={"n": 16}, cost="n/16 adds")
    a, b = fifo(Tensor[1024, i32], name="a"), fifo(Tensor[1024, i32], name="b")
    nrtp = rtp(Tensor[1, i32], name="nrtp")

    @herd()
    def core():
        for _ in loop(4):
            with a.consume() as s, b.produce() as t:
                CALLS

    with runtime() as rt:
        WRITE
        rt.fill(a, inp)
        rt.drain(b, out)

@d.reference
def reference(inp):
    return inp * 2
'''


def _scale_n(design_file, calls: str, write: str = "pass"):  # type: ignore[no-untyped-def]
    src = SCALE_N.replace("CALLS", calls).replace("WRITE", write)
    if "nrtp" not in calls:  # an rtp no core reads is refused
        src = src.replace('    nrtp = rtp(Tensor[1, i32], name="nrtp")\n', "")
    path = design_file(src)
    (path.parent / "sn.cc").write_text(SCALE_N_CC)
    return path


def test_each_call_is_charged_the_profile_of_its_own_scalars(design_file) -> None:  # type: ignore[no-untyped-def]
    """A tester's scale_n, declared with cycles=None and params={"n": 16} and called with
    n=1024: `kernel profile` said 128 cycles, the report 2 and the simulator charged 2 (the
    params= value's profile). Each call is now charged the profile of the constants it passes,
    one profile per distinct value, and the report, the simulator and the profile say which."""
    import aiedsl
    from aiedsl.loader import load_design
    from aiedsl.sim import simulate
    from aiedsl.targets import get_target

    path = _scale_n(design_file, "k(s, t, 512)\n                k(s, t, 1024)")
    handle = load_design(path)
    k = handle.ir.kernels[0]
    # n/16 adds; 8 n bytes loaded at 64 a cycle, 4 n stored at 32 a cycle: n/8 cycles
    assert [(p.constants, p.scalars, p.given, p.cycles) for p in k.profiles] == [
        ((512,), {"n": 512}, {}, 64), ((1024,), {"n": 1024}, {}, 128)]
    assert k.cost == ("n/16 adds [cycles from its 2 profiles, one per call's scalars, on "
                      "npu1_1col: bound by store; no cycles= declared]")
    report = aiedsl.build(path, output="out").files["report.txt"]
    assert ("  scale_n: 64 cycles per call with n=512, 128 with n=1024 (n/16 adds [cycles from "
            "its 2 profiles") in report
    result = simulate(handle)
    assert result.passed
    assert ("cycles per call from `aiedsl kernel profile` (no cycles= declared, a bound at "
            "best): scale_n: 64 cycles per call with n=512, 128 with n=1024"
            ) in result.timing.lines()
    # the core computes 4 x (64 + 128) cycles, and the call site's cycles of 8 calls
    call = get_target("npu1_1col").timing.kernel_call_cycles
    busy = result.timing.core_busy["core[0,0]"] * result.timing.device_cycles
    assert round(busy) == 4 * (64 + 128) + 8 * call
    env = {k: v for k, v in os.environ.items() if k != "AIEDSL_TRACEBACK"}
    r = run_command("kernel", "profile", str(path), env=env)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert [x for x in lines if " on npu1_1col: " in x or "charged" in x] == [
        "scale_n with n=512 on npu1_1col: 64 cycles per call at best (bound by store)",
        "  charged: 64 cycles per call by the simulator (no cycles= declared: this profile, "
        "made as the design loaded)",
        "scale_n with n=1024 on npu1_1col: 128 cycles per call at best (bound by store)",
        "  charged: 128 cycles per call by the simulator (no cycles= declared: this profile, "
        "made as the design loaded)"]


@pytest.mark.parametrize("params, write, shown, cycles, key", [
    # params= stands in for a value read at run time (the runtime's, when it differs, said
    # beside it: a library kernel's params= is unseen in the design)
    ('{"n": 16}', "rt.rtp_write(nrtp, 0, 1024)",
     "n=16 (params=, not the 1024 the runtime first writes into nrtp[0])", 2, None),
    # without it, the value the runtime sequence first writes into the slot
    ("{}", "rt.rtp_write(nrtp, 0, 1024)", "n=1024 (nrtp[0]'s first rtp_write)", 128,
     ("nrtp", 0))])
def test_a_scalar_read_from_an_rtp_is_profiled_with_params_else_the_runtimes_write(
        design_file, params: str, write: str, shown: str, cycles: int, key) -> None:  # type: ignore[no-untyped-def]
    from aiedsl.loader import load_design

    path = _scale_n(design_file, "k(s, t, nrtp[0])", write)
    path.write_text(path.read_text().replace('params={"n": 16}', f"params={params}"))
    k = load_design(path).ir.kernels[0]
    assert [(p.constants, p.shown(), p.cycles) for p in k.profiles] == [((key,), shown, cycles)]
    assert k.charged() == f"{cycles} cycles per call with {shown}"


def test_calls_reading_different_rtp_slots_are_each_profiled_with_their_slots_value(
        design_file) -> None:  # type: ignore[no-untyped-def]
    """Two calls reading n from two rtp slots, written 1024 and 16: both were charged the
    first slot's profile (128 cycles). Each slot's calls are charged their own."""
    from aiedsl.loader import load_design

    path = _scale_n(design_file, "k(s, t, nrtp[0])\n                k(s, t, mrtp[0])",
                    "rt.rtp_write(nrtp, 0, 1024)\n        rt.rtp_write(mrtp, 0, 16)")
    path.write_text(path.read_text().replace(', params={"n": 16}', "").replace(
        '    nrtp = rtp(Tensor[1, i32], name="nrtp")\n',
        '    nrtp = rtp(Tensor[1, i32], name="nrtp")\n'
        '    mrtp = rtp(Tensor[1, i32], name="mrtp")\n'))
    k = load_design(path).ir.kernels[0]
    assert [(p.constants, p.shown(), p.cycles) for p in k.profiles] == [
        ((("nrtp", 0),), "n=1024 (nrtp[0]'s first rtp_write)", 128),
        ((("mrtp", 0),), "n=16 (mrtp[0]'s first rtp_write)", 2)]
    assert k.charged() == ("128 cycles per call with n=1024 (nrtp[0]'s first rtp_write), 2 "
                           "with n=16 (mrtp[0]'s first rtp_write)")


def test_a_scalar_with_no_value_to_profile_with_names_the_call(design_file) -> None:  # type: ignore[no-untyped-def]
    from aiedsl.errors import DesignError
    from aiedsl.loader import load_design

    path = _scale_n(design_file, "k(s, t, nrtp[0])")
    path.write_text(path.read_text().replace(', params={"n": 16}', ""))
    with pytest.raises(DesignError) as e:
        load_design(path)
    assert str(e.value) == (
        "d.py:9: error [kernel cost]: kernel 'scale_n' has no cycles= and no value for its "
        "scalar 'n' to profile it with\n"
        "  limit: a scalar a call passes as a constant is profiled with that value; one read "
        "from an rtp slot with its params= value, else the value the runtime sequence first "
        "writes into the slot\n"
        "  found: cycles=None\n"
        "  d.py:20: the call\n"
        "  fix: give cycles=, or params={'n': ...} to profile it with")


def test_a_kernel_passed_too_many_values_to_profile_each_needs_cycles(design_file) -> None:  # type: ignore[no-untyped-def]
    """Each set of constants is a run of the C++ as the design loads: past 32, a declared
    cost."""
    from aiedsl.errors import DesignError
    from aiedsl.kernels.profiled_cycles import MOST_PROFILES
    from aiedsl.loader import load_design

    path = _scale_n(design_file, f"for n in range(16, {16 * (MOST_PROFILES + 2)}, 16): "
                                 "k(s, t, n)")
    with pytest.raises(DesignError) as e:
        load_design(path)
    assert str(e.value) == (
        "d.py:9: error [kernel cost]: kernel 'scale_n' has no cycles=, and its calls pass 33 "
        "different sets of scalar values to profile it with\n"
        "  limit: at most 32 profiles of one kernel (one run of its C++ each, as the design "
        "loads)\n"
        "  found: 33: n=16; n=32; ...\n"
        "  fix: give cycles= (the cost per call, from the kernel's loop), or pass the value that "
        "varies from an rtp slot with params= giving the value to profile")


EXP_MAX_CC = """#include <aie_api/aie.hpp>
#include <cmath>
extern "C" void exp_max(const bfloat16 *in, float *out) {
  float m = -INFINITY;
  for (int i = 0; i < 1024; ++i) m = std::max(m, (float)in[i]);
  for (int i = 0; i < 1024; ++i) out[i] = expf((float)in[i] - m);
  aie::store_v(out, aie::broadcast<float, 16>(1.0f));
}
"""
EXP_MAX = '''
import numpy as np
from aiedsl import Tensor, bf16, design, f32, fifo, herd, runtime
from aiedsl.kernels import buffer, declare

def ref(a, o):
    x = a.astype(np.float32)
    o[...] = np.exp(x - x.max())
    o[:16] = 1.0

@design(device="npu1_1col")
def d(inp: Tensor[1024, bf16], out: Tensor[1024, f32]):
    k = declare("exp_max", source="ex.cc",
                args=[buffer("a", Tensor[1024, bf16]), buffer("o", Tensor[1024, f32], "out")],
                reference=ref, cycles=CYCLES, cost="scalar max and exp")
    a, b = fifo(Tensor[1024, bf16], name="a"), fifo(Tensor[1024, f32], name="b")

    @herd()
    def core():
        with a.consume() as s, b.produce() as t:
            k(s, t)

    with runtime() as rt:
        rt.fill(a, inp)
        rt.drain(b, out)
'''


def test_a_mostly_scalar_kernel_says_what_its_profile_misses(design_file) -> None:  # type: ignore[no-untyped-def]
    """A tester's kernel of a scalar max over 1024 bf16 values and 1024 expf calls, with one
    aie::store_v, profiled as "2 cycles per call at best (bound by store)", and with
    cycles=None the simulator charged 2. Its profile now says what it did that the counts
    miss, and cycles=None is refused for it."""
    from aiedsl.errors import DesignError
    from aiedsl.kernels.cases import design_cases
    from aiedsl.loader import load_design

    path = design_file(EXP_MAX.replace("CYCLES", "None"))
    (path.parent / "ex.cc").write_text(EXP_MAX_CC)
    with pytest.raises(DesignError) as e:
        load_design(path)
    assert str(e.value) == (
        "d.py:12: error [kernel cost]: kernel 'exp_max' has no cycles=, and its profile misses "
        "most of its work: it loaded none of the 2,048 bytes its input buffers hold through "
        "aie::load_v or vector pointers; its vector stores wrote 64 of the 4,096 bytes it "
        "changed in its output buffers\n"
        "  limit: cycles= for a kernel whose reads or writes are scalar C++: the profile counts "
        "only AIE API vector operations, loads and stores\n"
        "  found: cycles=None; the profile's bound: 2 cycles per call\n"
        "  fix: give cycles= per call, estimated from the kernel's loop (`aiedsl kernel profile` "
        "shows what it counts), or read and write its buffers with aie::load_v and "
        "aie::store_v")
    path.write_text(path.read_text().replace("cycles=None", "cycles=20000"))
    (prof,) = profile_cases(design_cases(load_design(path)), "npu1_1col")
    assert prof.lines()[3:] == [
        "  not counted: it loaded 0 bytes of its buffers through aie::load_v and vector pointers "
        "(a local array's are not theirs), and its input buffers hold 2,048: reads by scalar "
        "code, and the work on what they read, are not counted (if it reads all its inputs, the "
        "bound may be far below its cost)",
        "  not counted: it changed 4,096 bytes of its output buffers, and its vector stores "
        "wrote 64 of them: writes by scalar code, and the work that made them, are not counted "
        "(the bound may be far below its cost)"]


def test_a_declared_cost_below_the_profiles_bound_is_flagged(design_file) -> None:  # type: ignore[no-untyped-def]
    """A tester's vadd with cycles=1, bound at 128 by its profile: check, sim and profile all
    exited 0, the profile saying only "0.0x this estimate". The bound is a lower one: the
    profile now warns, with the factor the simulator's times are off by, and exits 1."""
    path = design_file(DOUBLE.replace("PARAMS", "").replace("cycles=None", "cycles=1"))
    (path.parent / "dbl.cc").write_text(DOUBLE_CC)
    env = {k: v for k, v in os.environ.items() if k != "AIEDSL_TRACEBACK"}
    r = run_command("kernel", "profile", str(path), env=env)
    assert (r.returncode, r.stderr) == (1, "")
    assert r.stdout.splitlines()[3:] == [
        "  WARNING: declared cycles=1 is below this lower bound of 128 cycles per call: the "
        "simulator charges the declared 1, so its times for these calls are optimistic by 128x "
        "or more; fix: declare cycles= of at least 128 (the bound counts the AIE API calls as "
        "the C++ makes them: if a trace on the NPU measured fewer cycles, the compiler may have "
        "merged some of them)"]
    path.write_text(path.read_text().replace("cycles=1,", "cycles=128,"))
    r = run_command("kernel", "profile", str(path), env=env)
    assert r.returncode == 0 and "WARNING" not in r.stdout, r.stdout


MACREP_CC = """#include <aie_api/aie.hpp>
template <int R, int S, int T, int REP, typename TI>
void macrep(const TI *a, const TI *b, int32_t *c) {
  using MM = aie::mmul<R, S, T, TI, TI>;
  auto va = aie::load_v<MM::size_A>(a);
  auto vb = aie::load_v<MM::size_B>(b);
  MM acc;
  acc.mul(va, vb);
  for (int r = 1; r < REP; r++) acc.mac(va, vb);
  aie::store_v(c, acc.template to_vector<int32_t>());
}
"""
MACREP = '''
import numpy as np
from aiedsl import Tensor, design, fifo, runtime, herd, i8, i32
from aiedsl.kernels import declare, buffer
R, S, T, REP = SHAPE, 64

def ref(a, b, c):
    A = a.reshape(R, S).astype(np.int64); B = b.reshape(S, T).astype(np.int64)
    c[...] = ((A @ B) * REP).astype(np.int32).reshape(-1)

k = declare("macrep", source="macrep.cc", entry=f"macrep<{R}, {S}, {T}, {REP}, TI_CPP>",
            args=[buffer("a", Tensor[R * S, TI]), buffer("b", Tensor[S * T, TI]),
                  buffer("c", Tensor[R * T, i32], "out")],
            reference=ref, cycles=None, cost="profiled", ops=OPS)

@design(device="DEVICE")
def rep(A: Tensor[R * S, TI], B: Tensor[S * T, TI], C: Tensor[R * T, i32]):
    fa = fifo(Tensor[R * S, TI], name="fa")
    fb = fifo(Tensor[S * T, TI], name="fb")
    fo = fifo(Tensor[R * T, i32], name="fo")
    @herd()
    def core():
        with fa.consume() as a, fb.consume() as b, fo.produce() as o:
            k(a, b, o)
    with runtime() as rt:
        rt.fill(fa, A); rt.fill(fb, B)
        rt.drain(fo, C)

@rep.reference
def reference(A, B):
    o = np.zeros(R * T, np.int32); ref(A, B, o); return o
'''


def _macrep(design_file, device: str, shape: tuple[int, int, int], ti: str = "i8",  # type: ignore[no-untyped-def]
            ops: int = 0) -> Path:
    """A kernel running one aie::mmul mode 64 times on the same blocks, cycles=None."""
    src = (MACREP.replace("SHAPE", ", ".join(map(str, shape))).replace("DEVICE", device)
           .replace("TI_CPP", {"i8": "int8_t", "i32": "int32_t"}[ti])
           .replace("TI", ti).replace("OPS", str(ops)))
    path = design_file(src)
    (path.parent / "macrep.cc").write_text(MACREP_CC)
    return path


@pytest.mark.parametrize("device,shape,ti,issued,cycles,rate", [
    # AIE2's int8 8x8x8 is two 4x8x8 multiplies (detail/aie2/mmul_8_8.hpp): 512 MACs in 2
    # cycles, the peak; counted as one mac a cycle it read 512 a cycle, 200% of it
    ("npu1_1col", (8, 8, 8), "i8", 128, 128, "  256.0 MACs per cycle of the core's peak 256: "
     "100%"),
    # two 4x8x8 again, 512 MACs: the peak (4x16x16, two sparse multiplies, read 400% when
    # taken with a dense B; now refused, below)
    ("npu1_1col", (4, 16, 8), "i8", 128, 128, "  256.0 MACs per cycle of the core's peak 256: "
     "100%"),
    # AIE2P's 8x8x8 is one 8x8x8 multiply (detail/aie2p/mmul_8_8.hpp), its 4x16x8 two
    ("npu2_1col", (8, 8, 8), "i8", 64, 64, "  512.0 MACs per cycle of the core's peak 512: "
     "100%"),
    ("npu2_1col", (4, 16, 8), "i8", 128, 128, "  256.0 MACs per cycle of the core's peak 512: "
     "50%"),
    # i32 4x4x4 is two emulated 4x2x4 multiplies on AIE2 (64 MACs at 16 a cycle: 4 cycles);
    # counted as one it read 400%
    ("npu1_1col", (4, 4, 4), "i32", 128, 256, "  16.0 MACs per cycle of the core's peak 16: "
     "100%"),
    ("npu2_1col", (4, 4, 4), "i32", 128, 128, "  32.0 MACs per cycle of the core's peak 32: "
     "100%"),
])
def test_a_profile_never_beats_the_cores_peak(design_file, device: str,  # type: ignore[no-untyped-def]
                                              shape: tuple[int, int, int], ti: str, issued: int,
                                              cycles: int, rate: str) -> None:
    from aiedsl.kernels.cases import design_cases
    from aiedsl.loader import load_design

    handle = load_design(_macrep(design_file, device, shape, ti))
    k = handle.ir.kernels[0]
    assert (k.cycles, k.cycles_source) == (cycles, "profile")  # what the simulator charges
    (p,) = profile_cases(design_cases(handle), device)
    assert (p.counts["vector MAC"], p.bounds["vector MAC"], p.cycles) == (issued, cycles, cycles)
    assert rate in p.lines()
    assert p.macs_per_cycle <= p.peak_macs  # type: ignore[operator]


def test_the_profile_says_when_the_peak_sets_the_mac_cycles(design_file) -> None:  # type: ignore[no-untyped-def]
    from aiedsl.kernels.cases import design_cases
    from aiedsl.loader import load_design

    (p,) = profile_cases(design_cases(load_design(_macrep(design_file, "npu1_1col", (4, 4, 4),
                                                          "i32"))), "npu1_1col")
    assert p.lines()[1:] == [
        "  per call: 128 vector MAC, 0 vector ALU, 0 shuffle, 128 load bytes, 64 store bytes, "
        "4,096 MACs",
        "  cycles each unit needs: vector MAC 256, vector ALU 0, shuffle 0, load 2, store 2",
        "  16.0 MACs per cycle of the core's peak 16: 100%",
        "  vector MAC cycles are its 4,096 MACs at the core's peak of 16 a cycle, more than the "
        "128 multiply instructions counted: those modes take several cycles each (emulated "
        "types, or modes the host AIE API does not know the instructions of)"]


def test_the_kernel_cost_check_takes_the_correct_ops_of_a_profiled_kernel(design_file) -> None:  # type: ignore[no-untyped-def]
    """64 int8 8x8x8 macs, 32,768 MACs, are 65,536 operations: at the peak in the profile's
    128 cycles. With 64 cycles (a mac counted as one), the check refused them and told the
    user to recount."""
    from aiedsl.checks import check_design
    from aiedsl.loader import load_design

    check_design(load_design(_macrep(design_file, "npu1_1col", (8, 8, 8), ops=65536)).ir)


@pytest.mark.parametrize("device,shape", [("npu1_1col", (4, 16, 16)), ("npu1_1col", (8, 16, 8)),
                                          ("npu2_1col", (8, 16, 8))])
def test_a_mode_the_aie_api_has_only_with_a_sparse_b_is_refused(design_file, device: str,  # type: ignore[no-untyped-def]
                                                                shape: tuple[int, int, int]
                                                                ) -> None:
    from aiedsl.errors import DesignError
    from aiedsl.loader import load_design

    with pytest.raises(DesignError) as e:
        load_design(_macrep(design_file, device, shape))
    m, k, n = shape
    assert (e.value.rule, e.value.message, e.value.fix) == (
        "host kernel build",
        f"macrep uses aie::mmul<{m}, {k}, {n}, signed char, signed char, accauto> with a dense "
        "B, which the AIE API does not have: the AIE API has this M x K x N for these input "
        "types on this architecture only with a sparse B (aie::sparse_vector), which aiedsl's "
        "host AIE API does not model",
        "use a mode with a dense B: 4x8x8 or 4x16x8 (and 8x8x8 on AIE2P) for 8-bit inputs, "
        "4x4x8 for 16-bit ones or 16 x 8 bits, 4x8x8 for bfloat16 (on AIE2P through the bfp16 "
        "unit)")
    # the fix works: the dense modes it names for 8-bit inputs load
    for dense in ([(4, 8, 8), (4, 16, 8)] if device.startswith("npu1") else [(8, 8, 8)]):
        load_design(_macrep(design_file, device, dense))


@pytest.mark.parametrize("declared", ["cycles=None", "cycles=100, ops=lambda n: n"])
@pytest.mark.parametrize("call, message, limit, found, fix", [
    ("k(s, t, 2.5)", "argument 2 ('n') of 'scale_n' is i32, but core[0,0] passes 2.5",
     "scale_n(a: 1024xi32, c: 1024xi32, n: i32)", "2.5", "pass an int"),
    ("k(s, t, 2**31)", "argument 2 ('n') of 'scale_n' is i32, but core[0,0] passes 2147483648",
     "i32 values from -2147483648 to 2147483647", "2147483648",
     "pass a value i32 can hold, or declare the scalar with a wider type"),
    ("k(s, t)", "core[0,0] calls 'scale_n' with 2 arguments; it takes 3",
     "scale_n(a: 1024xi32, c: 1024xi32, n: i32)", "2 arguments", "call it as scale_n(a, c, n)")],
    ids=["float", "range", "missing"])
def test_a_wrong_call_of_a_kernel_run_as_the_design_loads_is_said_as_check_says_it(
        design_file, declared: str, call: str, message: str, limit: str, found: str,
        fix: str) -> None:  # type: ignore[no-untyped-def]
    """(a tester) With cycles=None, or ops= a function of the scalars, the profile or the
    function ran with the call's values before the call was checked: a float for an i32 was a
    ctypes ArgumentError said as a python error at @design, 2**31 was wrapped by ctypes into a
    profile that counted nothing, and a call missing its scalar was "no value for its scalar
    'n' to profile it with". The call's own error now comes first, as with cycles= given."""
    from aiedsl.errors import DesignError
    from aiedsl.loader import load_design

    path = _scale_n(design_file, call)
    path.write_text(path.read_text().replace('cycles=None, params={"n": 16}', declared))
    with pytest.raises(DesignError) as e:
        load_design(path)
    assert str(e.value) == (
        f"d.py:19: error [kernel signature]: {message}\n  limit: {limit}\n  found: {found}\n"
        f"  fix: {fix}")


def test_a_buffer_passed_for_a_profiled_kernels_scalar_is_said_as_check_says_it(
        design_file) -> None:  # type: ignore[no-untyped-def]
    """(a tester) A buffer where the scalar goes was "no value for its scalar 'n' to profile
    it with", as if the call passed none."""
    from aiedsl.errors import DesignError
    from aiedsl.loader import load_design

    with pytest.raises(DesignError) as e:
        load_design(_scale_n(design_file, "k(s, t, s)"))
    assert str(e.value).startswith(
        "d.py:19: error [kernel signature]: argument 2 ('n') of 'scale_n' is a scalar i32, but "
        "core[0,0] passes a buffer\n")


STAGED = '''
from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
from aiedsl.kernels import buffer, declare

def inc_ref(src, dst):
    dst[...] = src + 1

@design(device="npu2_1col")
def d(x: Tensor[4096, i32], y: Tensor[4096, i32]):
    a = fifo(Tensor[1024, i32])
    b = fifo(Tensor[1024, i32])
    k = declare("inc_staged_1024", source="stage.cc", entry="inc_staged<1024>",
                args=[buffer("src", Tensor[1024, i32]), buffer("dst", Tensor[1024, i32], "out")],
                reference=inc_ref, cycles=None, cost="profiled", exact=True)

    @herd()
    def core():
        for _ in loop(4):
            with a.consume() as s, b.produce() as t:
                k(s, t)

    with runtime() as rt:
        rt.fill(a, x)
        rt.drain(b, y)
'''

STAGED_CC = """#include <aie_api/aie.hpp>
template <unsigned N> void inc_staged(const int32_t *in, int32_t *out) {
  alignas(aie::vector_decl_align) int32_t tmp[16];
  for (unsigned i = 0; i < N; i += 16) {
    for (unsigned j = 0; j < 16; ++j) tmp[j] = in[i + j];
    aie::store_v(tmp, aie::add(aie::load_v<16>(tmp), (int32_t)1));
    for (unsigned j = 0; j < 16; ++j) out[i + j] = tmp[j];
  }
}
"""


def test_vector_work_on_a_local_copy_does_not_count_as_reading_the_buffers(
        design_file) -> None:  # type: ignore[no-untyped-def]
    """A kernel copying its input by scalar code into a local array, adding there with vectors
    and copying back, was charged its 64 vector cycles with cycles=None: the loads and stores
    of the local counted as covering its buffers (a kernel author's tester). Only a vector
    access inside a buffer covers it."""
    from aiedsl.errors import DesignError
    from aiedsl.loader import load_design

    path = design_file(STAGED)
    (path.parent / "stage.cc").write_text(STAGED_CC)
    with pytest.raises(DesignError) as e:
        load_design(path)
    assert str(e.value).splitlines()[0] == (
        "d.py:11: error [kernel cost]: kernel 'inc_staged_1024' has no cycles=, and its profile "
        "misses most of its work: it loaded none of the 4,096 bytes its input buffers hold "
        "through aie::load_v or vector pointers; its vector stores wrote 0 of the 4,096 bytes "
        "it changed in its output buffers")
