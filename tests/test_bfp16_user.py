"""A user's own bf16 mmul kernel on npu2: aiedsl compiles it with the AIE API macro that runs it on
the bfp16 unit, so its C++ quantizes A and B (the NPU's and the host build's alike). A reference
of exact products passes ``aiedsl sim`` (the references only) but fails ``kernel test`` and
``sim --kernels native``, whose FAIL now says why; one made with aiedsl.kernels.bfp16.to_bfp16
passes; on npu1 (no bfp16 unit) the exact one passes and nothing is said."""

from __future__ import annotations

import ctypes
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from aiedsl.kernels.host import CXX_FLAGS, HOST_INCLUDE
from aiedsl.kernels.host_notes import bfp16_note, bfp16_shapes
from aiedsl.targets.kernel_arch import AIE_ARCH, arch_define_words

MM = '''#include <aie_api/aie.hpp>
// C (4x8, f32) = A (4xK bf16, row-major) @ B (Kx8 bf16, row-major), 8 of K a step
template <unsigned K> void mm(const bfloat16 *a, const bfloat16 *b, float *c) {
  aie::mmul<4, 8, 8, bfloat16, bfloat16> m;
  for (unsigned k = 0; k < K; k += 8) {
    aie::vector<bfloat16, 32> va;
    for (unsigned i = 0; i < 4; ++i)
      for (unsigned j = 0; j < 8; ++j) va[i * 8 + j] = a[i * K + k + j];
    aie::vector<bfloat16, 64> vb = aie::load_v<64>(b + k * 8);
    if (k == 0) m.mul(va, vb); else m.mac(va, vb);
  }
  aie::store_v(c, m.to_vector<float>());
}
'''

DESIGN = '''
import numpy as np
from aiedsl import Tensor, design, fifo, herd, runtime, bf16, f32
from aiedsl.kernels import buffer, declare
from aiedsl.kernels.bfp16 import to_bfp16

def product(a, b):
    a = a.reshape(4, 64).astype(np.float32)
    b = b.reshape(64, 8).astype(np.float32)
    if {model}:  # the kernel sets no rounding mode: the reset mode, floor
        a, b = to_bfp16(a, axis=1, rounding="floor"), to_bfp16(b, axis=0, rounding="floor")
    return (a @ b).reshape(-1)

def ref(a, b, c):
    c[...] = product(a, b)

k = declare("mm_4x64x8", source="mm.cc", entry="mm<64>",
            args=[buffer("a", Tensor[256, bf16]), buffer("b", Tensor[512, bf16]),
                  buffer("c", Tensor[32, f32], "out")],
            reference=ref, cycles=100, cost="-")

@design(device="{device}")
def d(A: Tensor[256, bf16], B: Tensor[512, bf16], C: Tensor[32, f32]):
    a = fifo(Tensor[256, bf16], name="a")
    b = fifo(Tensor[512, bf16], name="b")
    c = fifo(Tensor[32, f32], name="c")

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
    return product(A, B)
'''

NOTE = ("mm_4x64x8's C++ runs its bf16 aie::mmul<4, 8, 8> on npu2's bfp16 unit, as aiedsl "
        "compiles npu2 kernels (AIE_API_EMULATE_BFLOAT16_MMUL_WITH_BFP16, as IRON's): A and B "
        "are quantized to bfp16ebs8 (blocks of 8 along K sharing the block's largest exponent, "
        "8-bit mantissas) before they are multiplied, here as on the NPU, so a reference of "
        "exact bf16 products differs from it by far more than a sum's rounding; quantize the "
        "reference's A and B with aiedsl.kernels.bfp16.to_bfp16 (A along its rows, B along "
        "its columns, in the kernel's rounding mode), as the README's \"npu2's bf16 matrix "
        "multiply\" shows")


def _cli(tmp_path: Path, *args: str, model: bool = False, device: str = "npu2"
         ) -> subprocess.CompletedProcess[str]:
    (tmp_path / "d.py").write_text(DESIGN.format(model=model, device=device).lstrip())
    (tmp_path / "mm.cc").write_text(MM)
    return subprocess.run([sys.executable, "-m", "aiedsl.cli", *args, "d.py"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=300,
                          env={"COLUMNS": "400", "PATH": "/usr/bin:/bin",
                               "HOME": str(Path.home())})


def test_the_note_names_the_shapes_and_the_model() -> None:
    assert bfp16_shapes(0) == () and bfp16_shapes(2) == ((8, 8, 8),)
    assert bfp16_note("mm_4x64x8", ((4, 8, 8),)) == NOTE


@pytest.mark.parametrize("rows, arch, bits", [(4, "aie2p", 1), (8, "aie2p", 2), (4, "aie2", 0)])
def test_the_host_build_says_which_mmuls_run_on_the_bfp16_unit_as_it_loads(
        tmp_path: Path, rows: int, arch: str, bits: int) -> None:
    """Recorded by what the C++ instantiates, before any call: the library is only loaded."""
    cxx = shutil.which("g++")
    if cxx is None:
        pytest.skip("no g++ on PATH")
    src = tmp_path / "k.cc"
    src.write_text('#include <aie_api/aie.hpp>\nextern "C" void k(const bfloat16 *a, '
                   f'const bfloat16 *b, float *c) {{\n  aie::mmul<{rows}, 8, 8, bfloat16, '
                   f'bfloat16> m;\n  m.mul(aie::load_v<{rows * 8}>(a), aie::load_v<64>(b));\n'
                   f'  aie::store_v(c, m.to_vector<float>());\n}}\n')
    lib = tmp_path / "k.so"
    # aiedsl's flags: each library its own marker (-fno-gnu-unique), as each kernel's
    subprocess.run([cxx, *CXX_FLAGS, f"-D__AIE_ARCH__={AIE_ARCH[arch]}", *arch_define_words(arch),
                    f"-I{HOST_INCLUDE}", str(src), "-o", str(lib)], check=True,
                   capture_output=True, text=True)
    marker = ctypes.CDLL(str(lib)).aiedsl_bfp16_mmuls
    marker.restype = ctypes.c_uint
    assert marker() == bits


def test_kernel_test_of_an_exact_reference_fails_and_says_why(tmp_path: Path) -> None:
    """The comparison does not hide the quantization: uniform inputs in [-1, 1], K = 64, are
    off by 0.043 where the tolerance allows 0.00064."""
    r = _cli(tmp_path, "kernel", "test")
    assert r.returncode == 1, r.stdout + r.stderr
    assert r.stdout.splitlines() == [
        "FAIL mm_4x64x8.c: worst element [16] got -0.139221 want -0.0962408 (|error| 0.043; "
        "tolerance 0.0001 relative + 0.00064 absolute)",
        "  wrong: 31 of 32 elements (96.8%)",
        f"  note: {NOTE}",
        r.stdout.splitlines()[-1]]
    assert r.stdout.splitlines()[-1].startswith("0 of 1 kernels match their references (")


def test_kernel_test_of_a_reference_made_with_to_bfp16_passes(tmp_path: Path) -> None:
    r = _cli(tmp_path, "kernel", "test", model=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines()[0] == (
        "PASS mm_4x64x8.c: exact, every element equal "
        "(allowed: tolerance 0.0001 relative + 0.00064 absolute)")
    assert "note:" not in r.stdout


def test_on_npu1_the_exact_reference_passes_and_nothing_is_said(tmp_path: Path) -> None:
    r = _cli(tmp_path, "kernel", "test", device="npu1")
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines()[0].startswith("PASS mm_4x64x8.c: ")
    assert "note:" not in r.stdout


def test_sim_passes_on_the_references_and_the_native_run_says_why_it_fails(
        tmp_path: Path) -> None:
    """The references agree with each other: ``sim`` passes, where the NPU would not."""
    r = _cli(tmp_path, "sim")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "PASS C: exact" in r.stdout
    r = _cli(tmp_path, "sim", "--kernels", "native")
    assert r.returncode == 1, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    at = next(i for i, ln in enumerate(lines) if ln.startswith("FAIL C: "))
    assert lines[at + 1:at + 3] == ["  wrong: 31 of 32 elements (96.8%)",
                                     f"  note: d.py:16: {NOTE}"]
    r = _cli(tmp_path, "sim", "--kernels", "native", model=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert NOTE not in r.stdout
