"""The library's bf16 element-wise, vector-scalar and normalisation kernels in a design each:
simulated with their numpy references and with their C++ built for the host."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest

from aiedsl.checks import check_design
from aiedsl.errors import DesignError
from aiedsl.loader import load_design
from aiedsl.sim import simulate

DesignFile = Callable[..., Path]

DESIGN = '''
import numpy as np
from aiedsl import Tensor, bf16, design, fifo, herd, loop, runtime
from aiedsl.kernels import exp_bf16, gelu, layer_norm, rms_norm, silu, softmax, sub, vector_scalar

K = {factory}

@design(device="{device}")
def d(x: Tensor[4096, bf16], y: Tensor[4096, bf16], out: Tensor[4096, bf16]):
    a, b, c = (fifo(Tensor[{shape}, bf16], name=n) for n in "abc")

    @herd()
    def core():
        for _ in loop(4):
            with a.consume() as ta, b.consume() as tb, c.produce() as tc:
                {call}

    with runtime() as rt:
        rt.fill(a, x)
        rt.fill(b, y)
        rt.drain(c, out)

@d.reference
def reference(x, y):
    out = np.zeros_like(x)
    for i in range(4):
        s = slice(i * 1024, (i + 1) * 1024)
        {ref}
    return out
'''

CASES = {
    "sub": ("sub(Tensor[1024, bf16])", "K(ta, tb, tc)", "K.run_reference(x[s], y[s], out[s])"),
    "vs_mul": ('vector_scalar("mul", Tensor[1024, bf16])', "K(ta, tc, 0.5)",
               "K.run_reference(x[s], out[s], 0.5)"),
    "rms_norm": ("rms_norm(4, 256)", "K(ta, tc)", "K.run_reference(x[s], out[s])"),
    "layer_norm": ("layer_norm(4, 256)", "K(ta, tc)", "K.run_reference(x[s], out[s])"),
    "exp": ("exp_bf16(1024)", "K(ta, tc)", "K.run_reference(x[s], out[s])"),
    "silu": ("silu(1024)", "K(ta, tc)", "K.run_reference(x[s], out[s])"),
    "gelu": ("gelu(1024)", "K(ta, tc)", "K.run_reference(x[s], out[s])"),
    "softmax": ("softmax(4, 256)", "K(ta, tc)", "K.run_reference(x[s], out[s])"),
    # on npu2 the activations take 2^x from AIE2P's exp2
    "exp@npu2": ('exp_bf16(1024, device="npu2")', "K(ta, tc)", "K.run_reference(x[s], out[s])"),
    "softmax@npu2": ('softmax(4, 256, device="npu2")', "K(ta, tc)",
                     "K.run_reference(x[s], out[s])"),
}


@pytest.mark.parametrize("kernels", ["reference", "native"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_library_kernel_in_a_design(design_file: DesignFile, name: str, kernels: str) -> None:
    factory, call, ref = CASES[name]
    device = "npu2_1col" if name.endswith("@npu2") else "npu1_1col"
    # a row kernel's fifos hold its rows x columns: func.call takes only the declared type
    shape = "4, 256" if "(4, 256" in factory else "1024"
    path = design_file(DESIGN.format(factory=factory, call=call, ref=ref, device=device,
                                     shape=shape))
    handle = load_design(path)
    assert handle.ir.kernels[0].symbol.endswith("_exp2") == name.endswith("@npu2")
    result = simulate(handle, kernels=kernels)
    assert result.passed, [c.line() for c in result.checks]


@pytest.mark.parametrize("kind", ["layer", "rms"])
def test_a_norm_passes_against_the_formula_its_docstring_gives(
        design_file: DesignFile, kind: str) -> None:
    """A port's reference is the formula, rounded to bf16 once: the kernel rounds the centred
    value and the scale to bf16 first, up to 2 ulps off it, and the comparison allowed one
    rounding (an IRON porter's false FAIL, 147 of 65,536 elements)."""
    centre = "- r.mean(axis=1, keepdims=True)" if kind == "layer" else ""
    var = "r.var(axis=1, keepdims=True)" if kind == "layer" else "(r * r).mean(axis=1, keepdims=True)"
    src = DESIGN.format(factory=f"{kind}_norm(4, 256)", call="K(ta, tc)", ref="pass",
                        device="npu1_1col", shape="4, 256")
    src = src[:src.index("@d.reference")] + f'''@d.reference
def reference(x, y):
    r = x.astype(np.float32).reshape(-1, 256)
    return ((r {centre}) / np.sqrt({var} + 1e-5)).astype(x.dtype).reshape(-1)
'''
    result = simulate(load_design(design_file(src)), seed=0)
    assert result.passed, [c.line() for c in result.checks]
    assert "relative +" in result.checks[0].line()  # a chain's tolerance, not one rounding's


@pytest.mark.parametrize(("factory", "device", "made"), [
    ("exp_bf16(1024)", "npu2_1col", "aie2"),
    ('exp_bf16(1024, device="npu2")', "npu1_1col", "aie2p")])
def test_a_kernel_made_for_another_architecture_is_refused(
        design_file: DesignFile, factory: str, device: str, made: str) -> None:
    """Made outside the design, an activation takes npu1's polynomial exp (or the device it is
    given): on the other architecture its C++ variant and cycles would be wrong, and AIE2 has no
    exp2 to build the AIE2P variant with."""
    src = DESIGN.format(factory=factory, call="K(ta, tc)", ref="", device=device, shape="1024")
    symbol = "exp_bf16_1024" + ("_exp2" if made == "aie2p" else "")
    arch = {"aie2": "aie2p", "aie2p": "aie2"}[made]
    with pytest.raises(DesignError) as e:
        check_design(load_design(design_file(src)).ir)
    assert str(e.value) == (
        f"d.py:5: error [kernel device]: kernel '{symbol}' was made for {made}, but design 'd' "
        f"runs on {device} ({arch})\n"
        "  limit: a kernel runs only on the architecture it was made for (its C++ variant and "
        "cycles are that architecture's)\n"
        f"  found: {made}\n"
        "  fix: make it inside the design function, where it takes the design's device, or "
        f"pass device='{device}' where it is made")


def test_a_library_kernel_made_inside_the_design_takes_its_device(
        design_file: DesignFile) -> None:
    src = DESIGN.replace("K = {factory}\n", "").replace(
        "    a, b, c = (fifo", "    K = {factory}\n    a, b, c = (fifo")
    path = design_file(src.format(factory="exp_bf16(1024)", call="K(ta, tc)", ref="",
                                  device="npu2_1col", shape="1024"))
    handle = load_design(path)
    assert [(k.symbol, k.arch) for k in handle.ir.kernels] == [("exp_bf16_1024_exp2", "aie2p")]
    check_design(handle.ir)


def test_norm_rows_must_be_whole_vectors() -> None:
    from aiedsl.kernels import rms_norm

    with pytest.raises(DesignError) as e:
        rms_norm(4, 20)
    assert str(e.value).splitlines()[1:3] == ["  limit: a multiple of 16", "  found: 20"]


@pytest.mark.parametrize("exp2", [0, 1])
@pytest.mark.parametrize("kind", ["exp", "silu", "gelu", "softmax"])
def test_activations_follow_the_functions_they_approximate(kind: str, exp2: int) -> None:
    """The polynomial exp (AIE2) or the hardware's bf16 exp2 (AIE2P) and what is built on them
    stay within 2^-7 of the exact functions (bf16 keeps 8 bits)."""
    import ml_dtypes
    import numpy as np

    from aiedsl.kernels.library import activation_ref

    bf = np.dtype(ml_dtypes.bfloat16)
    if kind == "softmax":
        x = np.random.default_rng(0).uniform(-4, 4, (4, 256)).astype(np.float32).astype(bf)
        xf = x.astype(np.float64)
        true = np.exp(xf - xf.max(1, keepdims=True))
        true /= true.sum(1, keepdims=True)
        params = {"rows": 4, "cols": 256, "width": 16}
    else:
        x = np.linspace(-8, 8, 4096).astype(np.float32).astype(bf)
        xf = x.astype(np.float64)
        true = {"exp": np.exp(xf), "silu": xf / (1 + np.exp(-xf)),
                "gelu": 0.5 * xf * (1 + np.tanh(0.7978845608 * (xf + 0.044715 * xf ** 3)))}[kind]
        params = {}
    out = np.zeros_like(x)
    activation_ref(x, out, kind=kind, exp2=exp2, **params)
    rel = np.abs(out.astype(np.float64) - true) / (np.abs(true) + 1e-3)
    assert rel.max() < 2 ** -7


CONV = """
import numpy as np
from aiedsl import Tensor, design, fifo, herd, i8, loop, runtime
from aiedsl.kernels import conv2d_1x1

K = conv2d_1x1(32, 64, 64, shift=6)

@design(device="npu1_1col")
def d(x: Tensor[4, 32, 64, i8], w: Tensor[64, 64, i8], out: Tensor[4, 32, 64, i8]):
    a = fifo(Tensor[32, 64, i8], name="a")
    b = fifo(Tensor[64, 64, i8], name="b", depth=1)
    c = fifo(Tensor[32, 64, i8], name="c")

    @herd()
    def core():
        with b.consume() as tw:
            for _ in loop(4):
                with a.consume() as ta, c.produce() as tc:
                    K(ta, tw, tc)

    with runtime() as rt:
        rt.fill(b, w)
        rt.fill(a, x)
        rt.drain(c, out)

@d.reference
def reference(x, w):
    # the host hands the row and the weights already in the mmul's blocks
    out = np.zeros_like(x)
    for i in range(4):
        K.run_reference(x[i], w, out[i])
    return out
"""


@pytest.mark.parametrize("kernels", ["reference", "native"])
def test_conv2d_1x1_in_a_design(design_file: DesignFile, kernels: str) -> None:
    result = simulate(load_design(design_file(CONV)), kernels=kernels)
    assert result.passed, [c.line() for c in result.checks]


def test_conv2d_1x1_needs_whole_mmul_blocks() -> None:
    from aiedsl.kernels import conv2d_1x1

    with pytest.raises(DesignError) as e:
        conv2d_1x1(12, 64, 64, device="npu1")
    assert str(e.value).splitlines()[1:3] == [
        "  limit: width % 8 == 0, cin % 8 == 0, cout % 16 == 0", "  found: 12x64x64"]


CONV3 = """
import numpy as np
from aiedsl import Tensor, design, fifo, herd, i8, loop, runtime
from aiedsl.kernels import conv2d_3x3

K = conv2d_3x3(16, 16, 16, shift=10, relu=False)

@design(device="npu1_1col")
def d(x: Tensor[6, 16, 16, i8], w: Tensor[144, 16, i8], out: Tensor[4, 16, 16, i8]):
    rows = fifo(Tensor[16, 16, i8], name="rows", depth=3)
    wts = fifo(Tensor[144, 16, i8], name="wts", depth=1)
    o = fifo(Tensor[16, 16, i8], name="o")

    @herd()
    def core():
        with wts.consume() as tw:
            rows.acquire("consume", 2)
            for _ in loop(4):  # a window of three rows slides down the image
                r = rows.acquire("consume", 3)
                with o.produce() as to:
                    K(r[0], r[1], r[2], tw, to)
                rows.release("consume", 1)
            rows.release("consume", 2)

    with runtime() as rt:
        rt.fill(wts, w)
        rt.fill(rows, x)
        rt.drain(o, out)

@d.reference
def reference(x, w):
    out = np.zeros((4, 16, 16), np.int8)
    for y in range(4):
        K.run_reference(x[y], x[y + 1], x[y + 2], w, out[y])
    return out
"""


@pytest.mark.parametrize("kernels", ["reference", "native"])
def test_conv2d_3x3_slides_down_an_image_in_a_design(design_file: DesignFile,
                                                     kernels: str) -> None:
    result = simulate(load_design(design_file(CONV3)), kernels=kernels)
    assert result.passed, [c.line() for c in result.checks]


def test_the_polynomial_exp_is_its_reference_to_the_bit(tmp_path: Path) -> None:
    """activation.cc.j2's e^x in f32 (before any rounding to bf16) equals the reference's
    _exp_f32 bit for bit, where y = x log2(e) is near a half integer too: both take n = y
    rounded to nearest even, as aie::to_fixed does (the reference took floor(y) while the
    header's to_fixed floored)."""
    import ctypes
    import shutil
    import subprocess

    import numpy as np

    from aiedsl.kernels import exp_bf16
    from aiedsl.kernels.activations import _exp_f32
    from aiedsl.kernels.host import HOST_INCLUDE
    from aiedsl.kernels.text import kernel_text

    cxx = shutil.which("g++")
    if cxx is None:
        pytest.skip("no g++ on PATH")
    k = exp_bf16(16).ir
    src = tmp_path / "exp.cc"
    src.write_text(kernel_text(None, k).text + '''
extern "C" void probe(const float *x, float *y, unsigned n) {
  aie::set_rounding(aie::rounding_mode::conv_even);  // as every call of the kernel sets
  for (unsigned i = 0; i < n; i += 16)
    aie::store_v(y + i, aiedsl_exp<16>(aie::load_v<16>(x + i)));
}
''')
    lib = tmp_path / "exp.so"
    subprocess.run([cxx, "-std=c++20", "-O2", "-shared", "-fPIC", f"-I{HOST_INCLUDE}", str(src),
                    "-o", str(lib)], check=True, capture_output=True, text=True)
    halves = np.array([j + 0.5 for j in range(-8, 8)], np.float64) / np.log2(np.e)
    x = np.concatenate([np.linspace(-10, 10, 1024), halves, -halves, [-90, 90, 0.0, -0.0]])
    x = np.resize(x.astype(np.float32), (len(x) + 15) // 16 * 16)
    got = np.zeros_like(x)
    fn = ctypes.CDLL(str(lib)).probe
    fn(x.ctypes.data_as(ctypes.c_void_p), got.ctypes.data_as(ctypes.c_void_p),
       ctypes.c_uint(len(x)))
    want = _exp_f32(x)
    assert got.view(np.uint32).tolist() == want.view(np.uint32).tolist()


@pytest.mark.parametrize("name", ["exp_bf16", "silu", "gelu"])
def test_an_activation_counts_the_same_work_on_every_device(name: str) -> None:
    """AIE2P's exp2 takes fewer steps, not less work: its variant declared fewer ops, so a
    faster npu2 run printed a lower GOPS than npu1's (softmax: 1.03 against 1.33)."""
    import aiedsl.kernels as lib

    npu1, npu2 = (getattr(lib, name)(1024, device=d) for d in ("npu1", "npu2"))
    assert npu2.ir.cycles < npu1.ir.cycles
    assert npu1.ir.ops == npu2.ir.ops == 1024 * {"exp_bf16": 1, "silu": 4, "gelu": 8}[name]


@pytest.mark.parametrize("exp2", [0, 1])
@pytest.mark.parametrize("kind", ["silu", "gelu"])
def test_silu_and_gelu_stay_finite_over_every_bf16(kind: str, exp2: int) -> None:
    """A numerics tester's: silu of x <= -88 and gelu of x >= 10.06 took aie::inv of 1 + e^|x|
    past 1.2e38, whose AIE2 seed (0x7eb53567 - bits) is NaN there; the reference and the host
    build computed 1/x and the simulator passed. The kernels now invert only 1 + e^-|a|."""
    import ml_dtypes
    import numpy as np

    from aiedsl.kernels.library import activation_ref

    x = np.arange(65536, dtype=np.uint16).view(ml_dtypes.bfloat16)
    x = x[np.isfinite(x.astype(np.float32))]
    out = np.zeros_like(x)
    activation_ref(x, out, kind=kind, exp2=exp2)
    assert not np.isnan(out.astype(np.float32)).any()
    big = np.array([-88.0, 12.0, 100.0, 3e38], dtype=np.float32).astype(ml_dtypes.bfloat16)
    got = np.zeros_like(big)
    activation_ref(big, got, kind=kind, exp2=exp2)
    # e^-88 is subnormal, which the core flushes: silu(-88) is -0; large x pass through
    assert list(got.astype(np.float32)) == [-0.0] + list(big[1:].astype(np.float32))
