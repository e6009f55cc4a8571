"""The alignment check: a buffer a core's code reads starts where the compiler was told it does
(mlir-aie assumes 32 bytes and aligns nothing)."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest

from aiedsl.checks import check_design
from aiedsl.errors import DesignError
from aiedsl.loader import load_design

DESIGN = '''
from aiedsl import Tensor, design, fifo, herd, i32, local, loop, runtime
from aiedsl.kernels import add, buffer, declare, passthrough


def zero_ref(c):
    c[...] = 0


@design(device="npu1_1col")
def d(inp: Tensor[128, i32], out: Tensor[16, i32]):
    a = fifo(Tensor[16, i32], name="a")
    b = fifo(Tensor[16, i32], name="b")
    s = local(Tensor[N, i32], initial=0, name="s")
    acc = local(Tensor[16, i32], initial=100, name="acc")
    zero = declare(f"zero_i32_{N}", source="z.cc", entry="zero",
                   args=[buffer("c", Tensor[N, i32], "out")], reference=zero_ref, cycles=N,
                   cost="a store per element", exact=True)
    addk = add(Tensor[16, i32])
    copy = passthrough(Tensor[16, i32])

    @herd()
    def core():
        zero(s)
        for _ in loop(8):
            with a.consume() as t:
                addk(acc, t, acc)
        with b.produce() as o:
            copy(acc, o)

    with runtime() as rt:
        rt.fill(a, inp)
        rt.drain(b, out)
'''

ZERO = "template <int N> void zero(int32_t *c) { for (int i = 0; i < N; i++) c[i] = 0; }\n"


def test_a_buffer_after_one_of_an_odd_size_is_refused(
        design_file: Callable[..., Path]) -> None:
    """An 80-byte local puts the 64-byte buffers after it in its bank at 16 mod 32: the report's
    addresses are mlir-aie's, and its vector loads from them would read other elements."""
    (design_file(DESIGN.replace("N", "20")).parent / "z.cc").write_text(
        ZERO.replace("template <int N> ", "").replace("N;", "20;"))
    with pytest.raises(DesignError) as e:
        check_design(load_design("d.py").ir)
    assert str(e.value) == (
        "d.py:11: error [buffer alignment]: buffer 'a_cons_buff_1' (64 B) in the core at (0, 2) "
        "starts at 0x00450, not on a 32-byte boundary\n"
        "  limit: a multiple of 32 bytes: mlir-aie's address pass aligns no buffer "
        "(AIEAssignBuffers: \"Fixme: alignment\"), while the kernels' vector loads and stores "
        "take a 32-byte boundary (the core drops the low address bits; mlir-aie's core code "
        "assumes it too: memref.assume_alignment), and a scalar load its element's, so the "
        "kernel reads other elements\n"
        "  found: 0x00450 = 34 x 32 + 16\n"
        "  fix: make the buffers before it in bank 0, 's' (80 B), a multiple of 32 bytes (pad "
        "their element types)")


def test_the_same_design_padded_to_32_bytes_passes(design_file: Callable[..., Path]) -> None:
    (design_file(DESIGN.replace("N", "24")).parent / "z.cc").write_text(
        ZERO.replace("template <int N> ", "").replace("N;", "24;"))
    routed, _ = check_design(load_design("d.py").ir)
    assert routed.physical is not None
    assert all(b.address % 32 == 0 for b in routed.physical.buffers if b.tile == (0, 2))


SCALARS = '''
from aiedsl import Tensor, bf16, design, fifo, herd, i32, local, loop, rtp, runtime
from aiedsl.kernels import buffer, declare, passthrough, scalar


def fill_ref(c, v):
    c[...] = v


@design(device="npu1_1col")
def d(inp: Tensor[1024, i32], out: Tensor[1024, i32]):
    a = fifo(Tensor[512, i32], name="a")
    b = fifo(Tensor[512, i32], name="b")
    ls = [local(Tensor[N, T], initial=0, name=f"s{i}") for i in range(4)]
    thr = rtp(Tensor[4, i32], name="thr")
    cnt = local(Tensor[1, i32], initial=0, name="cnt")
    fill = declare("fill_k", source="f.cc", entry="fill<T_CPP, N>",
                   args=[buffer("c", Tensor[N, T], "out"), scalar("v", i32)],
                   reference=fill_ref, cycles=10, cost="x", exact=True)
    one = declare("one_k", source="f.cc", entry="fill<int32_t, 1>",
                  args=[buffer("c", Tensor[1, i32], "out"), scalar("v", i32)],
                  reference=fill_ref, cycles=10, cost="x", exact=True)
    copy = passthrough(Tensor[512, i32])

    @herd()
    def core():
        for _ in loop(2):
            with a.consume() as t, b.produce() as o:
                # inside the acquire: the fill it waits for comes after the rtp_write (before
                # any data the core would run from the load and read thr[0] unwritten)
                for s in ls:
                    fill(s, thr[0])
                one(cnt, thr[0])
                copy(t, o)

    with runtime() as rt:
        rt.rtp_write(thr, 0, 3)
        rt.fill(a, inp)
        rt.drain(b, out)
'''

FILL = "template <typename T, int N> void fill(T *c, int32_t v) { for (int i = 0; i < N; i++) c[i] = T(v); }\n"


@pytest.mark.parametrize("n, t, cpp, first", [
    # four 20-byte locals put the 16-byte rtp at 0xc14: 4-byte aligned, and the core reads one
    # slot at a time (it was refused as unaligned for vector loads)
    (5, "i32", "int32_t", None),
    # four 6-byte locals put the 4-byte local cnt at 0x4806, which a scalar load cannot read (it
    # passed: buffers under 16 bytes were not looked at)
    (3, "bf16", "bfloat16",
     "d.py:15: error [buffer alignment]: buffer 'cnt' (4 B) in the core at (0, 2) starts at "
     "0x04806, not on a 4-byte boundary"),
])
def test_small_buffers_need_their_elements_alignment(n: int, t: str, cpp: str,
                                                     first: str | None,
                                                     design_file: Callable[..., Path]) -> None:
    path = design_file(SCALARS.replace("T_CPP", cpp).replace("N", str(n)).replace(
        "Tensor[" + str(n) + ", T]", f"Tensor[{n}, {t}]"))
    (path.parent / "f.cc").write_text(FILL)
    if first is None:
        check_design(load_design(path).ir)
        return
    with pytest.raises(DesignError) as e:
        check_design(load_design(path).ir)
    assert str(e.value).splitlines()[0] == first


NPU2 = '''
from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
from aiedsl.kernels import buffer, declare


def mix_ref(a, b, out):
    out[...] = a[:1024] + b


@design(device="DEVICE")
def d(x: Tensor[4 * 1032, i32], y: Tensor[4 * 1024, i32], z: Tensor[4 * 1024, i32]):
    fa = fifo(Tensor[1032, i32])
    fb = fifo(Tensor[1024, i32])
    fc = fifo(Tensor[1024, i32])
    k = declare("mix_i32_1024", source="mix.cc", entry="mix",
                args=[buffer("a", Tensor[1032, i32]), buffer("b", Tensor[1024, i32]),
                      buffer("out", Tensor[1024, i32], "out")],
                reference=mix_ref, cost="a load per element", cycles=1024)

    @herd()
    def core():
        for _ in loop(4):
            with fa.consume() as a, fb.consume() as b, fc.produce() as c:
                k(a, b, c)

    with runtime() as rt:
        rt.fill(fa, x)
        rt.fill(fb, y)
        rt.drain(fc, z)
'''

MIX = ("void mix(int32_t *a, int32_t *b, int32_t *out) "
       "{ for (int i = 0; i < 1024; i++) out[i] = a[i] + b[i]; }\n")


def test_npu2_takes_a_64_byte_boundary_for_its_512_bit_vectors(
        design_file: Callable[..., Path]) -> None:
    """A 4128-byte buffer puts the 4096-byte one after it at 32 mod 64: 32-byte aligned, as AIE2
    needs, but AIE2P's 512-bit loads and stores need 64 (mlir-aie's
    getComputeTileMaxVectorAlignBits); the same design passes on npu1 (a tester's)."""
    (design_file(NPU2.replace("DEVICE", "npu1_1col")).parent / "mix.cc").write_text(MIX)
    check_design(load_design("d.py").ir)
    design_file(NPU2.replace("DEVICE", "npu2_1col"))
    with pytest.raises(DesignError) as e:
        check_design(load_design("d.py").ir)
    assert str(e.value) == (
        "d.py:12: error [buffer alignment]: buffer 'fb_cons_buff_0' (4096 B) in the core at "
        "(0, 2) starts at 0x01420, not on a 64-byte boundary\n"
        "  limit: a multiple of 64 bytes: mlir-aie's address pass aligns no buffer "
        "(AIEAssignBuffers: \"Fixme: alignment\"), while the kernels' vector loads and stores "
        "take a 64-byte boundary for a 512-bit vector on aie2p (a 32-byte one tears them; "
        "mlir-aie aligns such buffers so there since 2026), and a scalar load its element's, so "
        "the kernel reads other elements\n"
        "  found: 0x01420 = 80 x 64 + 32\n"
        "  fix: make the buffers before it in bank 0, 'fa_cons_buff_0' (4128 B), a multiple of "
        "64 bytes (pad their element types)")
