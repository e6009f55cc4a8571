"""The fp32 multiply AIE2 and AIE2P emulate with bf16 multiplies (llvm-aie aiev2_core.h,
aie2p_vmult.h): the host header's products against aiedsl's numpy model
(aiedsl/kernels/fp32_emulation.py) bit for bit, in two rounding modes and on both
architectures; what ``kernel profile`` counts for a float multiply (13 bf16 multiplies a vector
op, whatever the accuracy define: the AIE API's aie::mul calls the _conf intrinsics, which are
the safe ones) and for the float mmul modes (whose mul() follows the define on AIE2)."""

from __future__ import annotations

import ctypes
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from aiedsl.kernels.fp32_emulation import emulated_mul, split, to_bf16
from aiedsl.kernels.host import CXX_FLAGS, HOST_INCLUDE

F = np.float32

PROBE = r'''
#include <aie_api/aie.hpp>
// op 0 mul, 1 mac, 2 msc, 3 negmul of 32 float lanes under rounding mode `mode`
extern "C" void elem(const float *a, const float *b, float *acc, unsigned op, unsigned mode) {
  aie::set_rounding(aie::rounding_mode(mode));
  const aie::vector<float, 32> x = aie::load_v<32>(a), y = aie::load_v<32>(b);
  aie::accum<accfloat, 32> c;
  c.from_vector(aie::load_v<32>(acc));
  if (op == 0) c = aie::mul(x, y);
  else if (op == 1) c = aie::mac(c, x, y);
  else if (op == 2) c = aie::msc(c, x, y);
  else c = aie::negmul(x, y);
  aie::store_v(acc, c.to_vector<float>());
}
// c (4x8) = (mac ? c : 0) + a (4x1) b (1x8); c (4x4) the same of a (4x8) b (8x4)
extern "C" void mm418(const float *a, const float *b, float *c, unsigned mac) {
  aie::mmul<4, 1, 8, float, float> m(aie::load_v<32>(c));
  if (mac) m.mac(aie::load_v<4>(a), aie::load_v<8>(b));
  else m.mul(aie::load_v<4>(a), aie::load_v<8>(b));
  aie::store_v(c, m.to_vector<float>());
}
extern "C" void mm484(const float *a, const float *b, float *c, unsigned mac) {
  aie::mmul<4, 8, 4, float, float> m(aie::load_v<16>(c));
  if (mac) m.mac(aie::load_v<32>(a), aie::load_v<32>(b));
  else m.mul(aie::load_v<32>(a), aie::load_v<32>(b));
  aie::store_v(c, m.to_vector<float>());
}
'''

MODES = {"floor": 0, "conv_even": 8}
"""aie::rounding_mode's numbers (the host header's order) of the modes tried."""


def _probe(tmp_path: Path, arch: int, *defines: str) -> ctypes.CDLL:
    cxx = shutil.which("g++")
    if cxx is None:
        pytest.skip("no g++ on PATH")
    src = tmp_path / "probe.cc"
    src.write_text(PROBE)
    lib = tmp_path / f"probe{arch}{''.join(defines)}.so"
    subprocess.run([cxx, *CXX_FLAGS, f"-D__AIE_ARCH__={arch}", *defines, f"-I{HOST_INCLUDE}",
                    str(src), "-o", str(lib)], check=True, capture_output=True, text=True)
    return ctypes.CDLL(str(lib))


def _p(x: np.ndarray) -> ctypes.c_void_p:
    return x.ctypes.data_as(ctypes.c_void_p)


def _counts(lib: ctypes.CDLL, call) -> tuple[int, int, int]:  # type: ignore[no-untyped-def]
    """(vector MAC, vector ALU, MACs) the header counted for ``call()``."""
    from aiedsl.kernels.host_load import COUNTED

    buf = (ctypes.c_uint64 * len(COUNTED))()  # as many as the header writes
    lib.aiedsl_profile(buf, 1)
    call()
    lib.aiedsl_profile(buf, 1)
    return buf[0], buf[1], buf[5]


def _values(rng: np.random.Generator, n: int) -> np.ndarray:
    """Floats of many magnitudes and both signs, with every bit of their mantissas in use."""
    return (rng.uniform(-1, 1, n) * 2.0 ** rng.integers(-20, 20, n)).astype(F)


# -- the model -----------------------------------------------------------------------------------

def test_the_split_is_exact_and_its_pieces_are_bf16_by_the_mode() -> None:
    rng = np.random.default_rng(1)
    x = _values(rng, 4096)
    for mode in MODES:
        pieces = split(x, 3, mode)
        assert np.array_equal(pieces[0].astype(np.float64) + pieces[1] + pieces[2], x)
        for p in pieces:  # 8 significant bits: the low 16 bits of the float are zero
            assert not (p.view(np.uint32) & 0xFFFF).any()
    # floor: every remainder non-negative; conv_even: signed
    assert (split(x, 3, "floor")[1] >= 0).all() and (split(x, 3, "conv_even")[1] < 0).any()
    assert to_bf16(F(3e38), "floor") == F(2.9907630e38)
    assert to_bf16(F(3e38), "conv_even") == F(3.0040553e38)
    assert np.isinf(to_bf16(F(3.4e38), "ceil"))  # past bf16's largest


def test_the_default_is_within_an_ulp_of_one_rounding_and_low_keeps_16_bits() -> None:
    rng = np.random.default_rng(2)
    x, y = rng.uniform(-1, 1, 100_000).astype(F), rng.uniform(-1, 1, 100_000).astype(F)
    exact = x.astype(np.float64) * y
    rel = {a: np.abs(emulated_mul(x, y, a, "floor") - exact) / np.abs(exact)
           for a in ("safe", "fast", "low")}
    # the default's sum of nine roundings: just past half an ulp at worst, not one rounding
    assert 2.0 ** -24 < rel["safe"].max() < 2.0 ** -23 and rel["fast"].max() < 2.0 ** -21
    assert 2.0 ** -15 < rel["low"].max() < 2.0 ** -13
    assert 0 < np.count_nonzero(emulated_mul(x, y) != x * y) < 400  # one rounding: most agree
    with np.errstate(invalid="ignore"):  # an infinity splits into inf - inf
        assert np.isnan(emulated_mul(F(np.inf), F(2)))


# -- the host header against it ------------------------------------------------------------------

@pytest.mark.parametrize("arch", [20, 21])
def test_float_mul_mac_msc_negmul_are_the_models_products(tmp_path: Path, arch: int) -> None:
    """They were one rounded product; now the emulation, bit for bit, on both architectures
    (AIE2P's mul_elem_32_accuracy_safe sums the same nine products in the same order)."""
    lib = _probe(tmp_path, arch)
    rng = np.random.default_rng(3)
    for mode, number in MODES.items():
        a, b, c0 = _values(rng, 32), _values(rng, 32), _values(rng, 32)
        p = emulated_mul(a, b, "safe", mode)
        for op, want in enumerate([p, (c0 + p).astype(F), (c0 - p).astype(F), -p]):
            c = c0.copy()
            lib.elem(_p(a), _p(b), _p(c), ctypes.c_uint(op), ctypes.c_uint(number))
            assert c.view(np.uint32).tolist() == want.view(np.uint32).tolist(), (mode, op)
    # what a profile counts a call: 16 lanes an op on AIE2 (two here), 32 on AIE2P, 13 bf16
    # multiplies each; AIE2P's eight accumulator adds, and the mac's add (AIE2: negmul's neg)
    a, b, c = _values(rng, 32), _values(rng, 32), np.zeros(32, F)
    got = [_counts(lib, lambda: lib.elem(_p(a), _p(b), _p(c), ctypes.c_uint(op),
                                         ctypes.c_uint(0))) for op in range(4)]
    assert got == ([(26, 0, 32), (26, 2, 32), (26, 2, 32), (26, 2, 32)] if arch == 20 else
                   [(13, 8, 32), (13, 9, 32), (13, 9, 32), (13, 8, 32)])


def test_the_accuracy_define_leaves_aie_mul_safe(tmp_path: Path) -> None:
    """aiev2_core.h's mul_elem_16_conf, which aie::mul calls, is the safe steps under any
    define: FAST changes neither the product nor the count."""
    safe, fast = _probe(tmp_path, 20), _probe(tmp_path, 20, "-DAIE2_FP32_EMULATION_ACCURACY_FAST")
    rng = np.random.default_rng(4)
    a, b = _values(rng, 32), _values(rng, 32)
    out = []
    for lib in (safe, fast):
        c = np.zeros(32, F)
        n = _counts(lib, lambda: lib.elem(_p(a), _p(b), _p(c), ctypes.c_uint(0),
                                          ctypes.c_uint(0)))
        out.append((c.view(np.uint32).tolist(), n))
    assert out[0] == out[1]


def _mm484_aie2(a: np.ndarray, b: np.ndarray, accuracy: str, mode: str) -> np.ndarray:
    """AIE2's float 4x8x4 mul: a bf16 4x8x4 multiply per pair of pieces, in the elementwise
    order, each summing its 8 products into the accumulator in k order."""
    order = {"safe": [(2, 2), (2, 1), (1, 2), (0, 2), (1, 1), (2, 0), (1, 0), (0, 1), (0, 0)],
             "fast": [(0, 2), (1, 1), (2, 0), (1, 0), (0, 1), (0, 0)]}[accuracy]
    pa, pb = split(a.reshape(4, 8), 3, mode), split(b.reshape(8, 4), 3, mode)
    c = np.zeros((4, 4), F)
    for i, j in order:
        for k in range(8):
            c = (c + pa[i][:, k, None] * pb[j][None, k, :]).astype(F)
    return c.reshape(-1)


@pytest.mark.parametrize("arch, defines, accuracy, counts", [
    # 4x1x8: two 16-lane ops; mul by the define (13 / 10 each), mac safe and an add
    # 4x8x4: 8 msc to split the two 16-lane halves of A and B, and a multiply a pair (9 / 6)
    (20, (), "safe", {"418 mul": (26, 0, 32), "418 mac": (26, 2, 32), "484 mul": (17, 0, 128)}),
    (20, ("-DAIE2_FP32_EMULATION_ACCURACY_FAST",), "fast",
     {"418 mul": (20, 0, 32), "418 mac": (26, 2, 32), "484 mul": (14, 0, 128)}),
    # AIE2P: 4x1x8 one 32-lane op; 4x8x4 eight element-wise ops along K, summed
    (21, (), "safe", {"418 mul": (13, 8, 32), "418 mac": (13, 9, 32), "484 mul": (104, 71, 128),
                      "484 mac": (104, 72, 128)}),
])
def test_the_float_mmul_modes_are_emulated_and_counted(tmp_path: Path, arch: int,
                                                       defines: tuple[str, ...], accuracy: str,
                                                       counts: dict[str, tuple[int, int, int]]
                                                       ) -> None:
    """They counted one multiply a mmul (4x1x8 two on AIE2) and multiplied exactly."""
    lib = _probe(tmp_path, arch, *defines)
    rng = np.random.default_rng(5)
    a4, b8, c32 = _values(rng, 4), _values(rng, 8), _values(rng, 32)
    a32, b32, c16 = _values(rng, 32), _values(rng, 32), _values(rng, 16)
    got = {}
    for name, fn, a, b, c0 in (("418", lib.mm418, a4, b8, c32), ("484", lib.mm484, a32, b32, c16)):
        for mac in (0, 1):
            c = c0.copy()
            got[f"{name} {'mac' if mac else 'mul'}"] = _counts(
                lib, lambda: fn(_p(a), _p(b), _p(c), ctypes.c_uint(mac)))
            if name == "418":
                p = emulated_mul(np.repeat(a, 8), np.tile(b, 4), "safe" if mac else accuracy)
                want = (c0 + p).astype(F) if mac else p
            elif arch == 20:
                want = _mm484_aie2(a, b, accuracy, "floor")
                want = (c0 + want).astype(F) if mac else want
            else:
                t = c0.copy() if mac else None
                for k in range(8):
                    p = emulated_mul(np.repeat(a.reshape(4, 8)[:, k], 4),
                                     np.tile(b.reshape(8, 4)[k], 4))
                    t = p if t is None else (t + p).astype(F)
                want = t
            assert c.view(np.uint32).tolist() == want.view(np.uint32).tolist(), (name, mac)
    assert {k: got[k] for k in counts} == counts


# -- what kernel profile says --------------------------------------------------------------------

FMUL_CC = '''#include <aie_api/aie.hpp>
// c = a * b, element by element, 32 floats a step
template <unsigned N> void fmul(const float *a, const float *b, float *c) {
  for (unsigned i = 0; i < N; i += 32)
    aie::store_v(c + i, aie::mul(aie::load_v<32>(a + i), aie::load_v<32>(b + i))
                            .template to_vector<float>());
}
'''

FMUL = '''
from aiedsl import Tensor, design, fifo, herd, runtime, f32
from aiedsl.kernels import buffer, declare
from aiedsl.kernels.fp32_emulation import emulated_mul

def ref(a, b, c):
    c[...] = emulated_mul(a, b)

k = declare("fmul_f32_1024", source="fm.cc", entry="fmul<1024>", defines={defines},
            args=[buffer("a", Tensor[1024, f32]), buffer("b", Tensor[1024, f32]),
                  buffer("c", Tensor[1024, f32], "out")],
            reference=ref, cycles=None, cost="emulated fp32 multiplies")

@design(device="{device}")
def d(A: Tensor[1024, f32], B: Tensor[1024, f32], C: Tensor[1024, f32]):
    a, b = fifo(Tensor[1024, f32], name="a"), fifo(Tensor[1024, f32], name="b")
    c = fifo(Tensor[1024, f32], name="c")

    @herd()
    def core():
        with a.consume() as s, b.consume() as t, c.produce() as u:
            k(s, t, u)

    with runtime() as rt:
        rt.fill(a, A)
        rt.fill(b, B)
        rt.drain(c, C)

@d.reference
def whole(A, B):
    return emulated_mul(A, B)
'''

NPU1 = [
    "fmul_f32_1024 on npu1_1col: 832 cycles per call at best (bound by vector MAC)",
    "  per call: 832 vector MAC, 0 vector ALU, 0 shuffle, 8,192 load bytes, 4,096 store bytes, "
    "1,024 MACs",
    "  cycles each unit needs: vector MAC 832, vector ALU 0, shuffle 0, load 128, store 128",
    "  1.2 MACs per cycle of the core's peak 128: 1%"]
NPU2 = [
    "fmul_f32_1024 on npu2: 416 cycles per call at best (bound by vector MAC)",
    "  per call: 416 vector MAC, 256 vector ALU, 0 shuffle, 8,192 load bytes, 4,096 store bytes, "
    "1,024 MACs",
    "  cycles each unit needs: vector MAC 416, vector ALU 256, shuffle 0, load 64, store 64",
    "  2.5 MACs per cycle of the core's peak 256: 1%"]


@pytest.mark.parametrize("device, defines, want", [
    ("npu1_1col", {}, NPU1),
    ("npu1_1col", {"AIE2_FP32_EMULATION_ACCURACY_FAST": 1}, NPU1),
    ("npu2", {}, NPU2)])
def test_kernel_profile_counts_a_float_multiply_as_its_bf16_multiplies(
        tmp_path: Path, device: str, defines: dict[str, int], want: list[str]) -> None:
    """It said 32 vector MACs (one a call of aie::mul), 32 cycles, where npu1 issues 13 bf16
    multiplies per 16 lanes (832) and npu2 13 per 32 lanes and 8 accumulator adds (416); the
    FAST define does not reach aie::mul. The reference, the numpy model, passes exactly."""
    (tmp_path / "d.py").write_text(FMUL.format(defines=defines, device=device).lstrip())
    (tmp_path / "fm.cc").write_text(FMUL_CC)
    env = {"COLUMNS": "300", "PATH": "/usr/bin:/bin", "HOME": str(Path.home())}
    r = subprocess.run([sys.executable, "-m", "aiedsl.cli", "kernel", "profile", "d.py"],
                       capture_output=True, text=True, cwd=tmp_path, timeout=300, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines()[:4] == want
    r = subprocess.run([sys.executable, "-m", "aiedsl.cli", "kernel", "test", "d.py"],
                       capture_output=True, text=True, cwd=tmp_path, timeout=300, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines()[0].startswith("PASS fmul_f32_1024.c: exact")
