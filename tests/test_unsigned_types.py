"""uint16 and uint32 host tensors, fifo elements and kernel arguments (a Riallto user's image
pipelines carry them): spelled ui16/ui32 in memrefs as IRON spells np.uint16/np.uint32, signless
for scalars, and simulated with the kernel's numpy reference and with its C++."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

import aiedsl
from aiedsl.checks import check_design
from aiedsl.dtypes import dtype, drawn_range
from aiedsl.emit import generate
from aiedsl.loader import load_design
from aiedsl.sim import simulate

DesignFile = Callable[..., Path]

KERNEL = """\
#include <aie_api/aie.hpp>
#include <stdint.h>

template <int N>
void scale3(const uint16_t *__restrict src, uint16_t *__restrict dst, uint32_t offset) {
  for (int i = 0; i < N; i += 32) {
    aie::vector<uint16_t, 32> v = aie::load_v<32>(src + i);
    aie::vector<uint16_t, 32> r = aie::mul(v, uint16_t(3)).template to_vector<uint16_t>();
    aie::store_v(dst + i, aie::add(r, uint16_t(offset)));
  }
}
"""

DESIGN = '''
import numpy as np

from aiedsl import Tensor, design, fifo, herd, loop, runtime, u16, u32
from aiedsl.kernels import buffer, declare, scalar


def scale3_ref(src, dst, offset):
    dst[...] = (src.astype(np.uint32) * 3 + offset).astype(np.uint16)


@design(device="npu1_1col")
def d(inp: Tensor[4096, u16], out: Tensor[4096, u16]):
    a = fifo(Tensor[1024, u16], name="in_l3")
    a1 = a.forward(name="in_l1")
    b = fifo(Tensor[1024, u16], name="out_l1")
    b1 = b.forward(name="out_l3")
    k = declare("scale3_u16_1024", source="scale3.cc", entry="scale3<1024>",
                args=[buffer("src", Tensor[1024, u16]), buffer("dst", Tensor[1024, u16], "out"),
                      scalar("offset", u32)],
                reference=scale3_ref, cycles=100, cost="a guess")

    @herd()
    def core():
        for _ in loop(4):
            with a1.consume() as s, b.produce() as t:
                k(s, t, 40000)

    with runtime() as rt:
        rt.fill(a, inp)
        rt.drain(b1, out, wait=True)


@d.reference
def reference(inp):
    return (inp.astype(np.uint32) * 3 + 40000).astype(np.uint16)
'''


@pytest.fixture
def u16_design(design_file: DesignFile) -> Path:
    path = design_file(DESIGN)
    (path.parent / "scale3.cc").write_text(KERNEL)
    return path


def test_the_types_are_numpys() -> None:
    assert (dtype("u16"), dtype("uint16"), dtype(np.uint16), dtype(np.dtype("uint32"))) == (
        aiedsl.u16, aiedsl.u16, aiedsl.u16, aiedsl.u32)
    assert (aiedsl.u16.numpy, aiedsl.u32.numpy) == (np.uint16, np.uint32)
    assert (aiedsl.u16.cpp, aiedsl.u32.cpp) == ("uint16_t", "uint32_t")
    assert drawn_range("u16") == (0, 127) and drawn_range("u32") == (0, 32767)


def test_memrefs_are_unsigned_and_the_scalar_signless(u16_design: Path) -> None:
    handle = load_design(u16_design)
    check_design(handle.ir)
    text = generate(handle).files["aie.mlir"]
    assert "!aie.objectfifo<memref<1024xui16>>" in text
    assert ("func.func private @scale3_u16_1024(memref<1024xui16>, memref<1024xui16>, i32)"
            in text)
    assert "arith.constant 40000 : i32" in text
    assert "aie.runtime_sequence(%inp : memref<4096xui16>, %out : memref<4096xui16>)" in text


@pytest.mark.parametrize("kernels", ["reference", "native"])
def test_the_simulated_run_wraps_as_uint16_does(u16_design: Path, kernels: str) -> None:
    x = np.arange(4096, dtype=np.uint16) * np.uint16(16)  # up to 65520: 3x wraps
    result = simulate(load_design(u16_design), {"inp": x}, kernels=kernels)
    want = (x.astype(np.uint32) * 3 + 40000).astype(np.uint16)
    assert result.passed and np.array_equal(result.outputs["out"], want)
    assert result.outputs["out"].dtype == np.uint16


def test_an_entry_named_as_its_symbol_is_told_aiedsl_writes_the_extern_c(
        design_file: DesignFile) -> None:
    """A kernel author who wrote the extern "C" function too and named entry= after it was told
    to "give the symbol its shape (e.g. scale3_u16_1024_i32_1024)": a shape it already had."""
    from aiedsl.errors import DesignError

    path = design_file(DESIGN.replace('entry="scale3<1024>"', 'entry="scale3_u16_1024"'))
    (path.parent / "scale3.cc").write_text(KERNEL)
    with pytest.raises(DesignError) as e:
        load_design(path)
    assert str(e.value) == (
        "d.py:17: error [kernel entry]: kernel 'scale3_u16_1024' has entry='scale3_u16_1024': "
        "the generated extern \"C\" function 'scale3_u16_1024' would call itself\n"
        "  limit: entry= names the C++ function that aiedsl's extern \"C\" 'scale3_u16_1024' "
        "calls\n"
        "  found: scale3_u16_1024\n"
        "  fix: name a C++ function of another name, e.g. entry=\"scale3_u16_1024_impl\" or a "
        "template, entry=\"scale<int16_t, 1024>\"; aiedsl writes extern \"C\" 'scale3_u16_1024' "
        "itself, so leave that out of the C++")
