"""Scalars the library kernels' C++ does not take as they are: an element count ``n`` the C++
ignores (it is compiled for N), checked to be N; the reference computing exactly what the C++
computes for any value it can be given (a literal, or an rtp slot read at run time)."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import numpy as np
import pytest

from aiedsl.checks import check_design
from aiedsl.errors import DesignError
from aiedsl.ir.types import TensorType
from aiedsl.kernels import Kernel, library
from aiedsl.kernels.cases import KernelCase
from aiedsl.kernels.host_check import check_kernel
from aiedsl.kernels.text import kernel_text
from aiedsl.loader import load_design
from aiedsl.sim import simulate

DesignFile = Callable[..., Path]
ROOT = Path(__file__).resolve().parents[1]


def check_error(path: Path) -> str:
    with pytest.raises(DesignError) as e:
        check_design(load_design(path).ir)
    return str(e.value)


def _design(design_file: DesignFile, name: str, *edits: tuple[str, str]) -> Path:
    """A shipped design with ``edits`` (old, new) made, written as ``d.py``."""
    text = (ROOT / "designs" / name).read_text()
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new)
    return design_file(text)


# -- n: the value the C++ is compiled for -------------------------------------------------------

def test_scale_refuses_an_n_that_is_not_its_size(design_file: DesignFile) -> None:
    path = _design(design_file, "vector_scalar_mul.py",
                   ("scale_k(src, dst, f, TILE)", "scale_k(src, dst, f, TILE // 2)"))
    assert check_error(path) == (
        "d.py:30: error [kernel signature]: argument 3 ('n') of 'scale_i16_1024' must be 1024, "
        "but core[0,0] passes 512\n"
        "  limit: exactly 1024: the one value the kernel is declared right for (equals=1024: its "
        "C++ is compiled for it, or its buffers are sized for it)\n"
        "  found: 512\n"
        "  fix: pass 1024; for another size, declare the kernel (and its buffers) for that size")


def test_threshold_refuses_an_n_that_is_not_its_size(design_file: DesignFile) -> None:
    path = _design(design_file, "threshold_rtp.py",
                   ("trunc(src, dst, thr[x][0], LINE)", "trunc(src, dst, thr[x][0], 2 * LINE)"))
    assert check_error(path) == (
        "d.py:39: error [kernel signature]: argument 3 ('n') of 'threshold_u8_512' must be 512, "
        "but core[0,0] passes 1024\n"
        "  limit: exactly 512: the one value the kernel is declared right for (equals=512: its "
        "C++ is compiled for it, or its buffers are sized for it)\n"
        "  found: 1024\n"
        "  fix: pass 512; for another size, declare the kernel (and its buffers) for that size")


N_FROM_RTP = (("trunc(src, dst, thr[x][0], LINE)", "trunc(src, dst, thr[x][0], thr[x][1])"),
              ("                rt.rtp_write(thr[c], 0, level)\n",
               "                rt.rtp_write(thr[c], 0, level)\n"
               "                rt.rtp_write(thr[c], 1, N_VALUE)\n"))


def test_an_n_written_into_an_rtp_slot_is_checked_at_the_write(design_file: DesignFile) -> None:
    """The runtime sequence's writes are known when the design is checked: each is held to N."""
    path = _design(design_file, "threshold_rtp.py", *N_FROM_RTP,
                   ("N_VALUE", "LINE if p == 0 else LINE - 64"))
    assert check_error(path) == (
        "d.py:45: error [kernel signature]: rt.rtp_write of 'thr0'[1] writes 448, but core[0,0] "
        "passes that slot as argument 3 ('n') of 'threshold_u8_512', which must be 512\n"
        "  limit: exactly 512: the one value the kernel is declared right for (equals=512: its "
        "C++ is compiled for it, or its buffers are sized for it)\n"
        "  found: 448\n"
        "  d.py:39: core[0,0] passes it to 'threshold_u8_512'\n"
        "  fix: write 512; for another size, declare the kernel (and its buffers) for that size")


@pytest.mark.parametrize("kernels", ["reference", "native"])
def test_an_n_from_an_rtp_slot_that_is_its_size_runs(design_file: DesignFile,
                                                     kernels: str) -> None:
    path = _design(design_file, "threshold_rtp.py", *N_FROM_RTP, ("N_VALUE", "LINE"))
    inp = np.arange(8192, dtype=np.uint8)  # every pixel value: both thresholds cut something
    result = simulate(load_design(path), {"inp": inp}, kernels=kernels)
    assert result.passed
    want = np.concatenate([np.minimum(inp, np.uint8(50)), np.minimum(inp, np.uint8(200))])
    assert np.array_equal(result.outputs["out"], want)


@pytest.mark.parametrize("make, scalars", [
    (lambda: library.scale(1024), {"n": 7}),
    (lambda: library.scale(64), {"n": 0}),
    (lambda: library.threshold(512), {"n": 5, "thr": 60}),
    (lambda: library.threshold(128), {"n": -1, "thr": 60}),
])
def test_the_reference_does_what_the_cpp_does_whatever_n_says(make: Callable[[], Kernel],
                                                              scalars: dict[str, int]) -> None:
    """The C++ runs to its compile-time N whatever n is; so does the reference (it used to
    stop at n, leaving the rest of the output unwritten where the NPU writes it)."""
    k = make()
    case = KernelCase(k.ir, kernel_text(None, k.ir), k.bound_reference(), scalars)
    result = check_kernel(case, seed=1)
    assert result.passed, result.lines


def test_the_scale_reference_writes_every_element() -> None:
    src = np.arange(-32, 32, dtype=np.int16)
    dst = np.zeros(64, dtype=np.int16)
    library.scale_ref(src, dst, np.array([3], dtype=np.int32), 8)
    assert np.array_equal(dst, src * 3)


def test_n_in_a_kernel_declaration_is_an_int() -> None:
    from aiedsl.kernels import scalar

    with pytest.raises(DesignError) as e:
        scalar("n", "f32", equals=3)
    assert str(e.value).split(": ", 1)[1] == (
        "error [kernel signature]: scalar 'n' (f32) has equals=3, which is for integer "
        "scalars\n"
        "  limit: equals= on an integer scalar (an element count)\n"
        "  found: f32\n"
        "  fix: declare the scalar with an integer type, or leave equals= out")
    with pytest.raises(DesignError) as e:
        scalar("n", "i32", equals=3.0)
    assert str(e.value).split(": ", 1)[1] == (
        "error [kernel signature]: scalar 'n' has equals=3.0\n"
        "  limit: an int\n"
        "  found: 3.0\n"
        "  fix: give the one value the C++ is compiled for")


# -- a scalar the C++ narrows to the element type -------------------------------------------------

VS = '''
import numpy as np

from aiedsl import Tensor, design, fifo, herd, loop, runtime, DT
from aiedsl.kernels import vector_scalar


@design(device="npu1_1col")
def vs(inp: Tensor[2048, DT], out: Tensor[2048, DT]):
    a = fifo(Tensor[1024, DT], name="a")
    c = fifo(Tensor[1024, DT], name="c")
    k = vector_scalar("OP", Tensor[1024, DT])

    @herd()
    def core():
        for _ in loop(2):
            with a.consume() as x, c.produce() as y:
                k(x, y, VALUE)

    with runtime() as rt:
        rt.fill(a, inp)
        rt.drain(c, out)


@vs.reference
def reference(inp):
    return (inp.astype(np.int64) OPSYM int(VALUE)).astype(inp.dtype)
'''
"""A vector-scalar kernel on DT elements called with VALUE (line 17)."""


def vs_design(design_file: DesignFile, dt: str, op: str, value: str) -> Path:
    sym = {"add": "+", "sub": "-", "mul": "*"}[op]
    return design_file(VS.replace("OPSYM", sym).replace("OP", op).replace("DT", dt)
                       .replace("VALUE", value))


@pytest.mark.parametrize("dt, op, value, limit", [
    ("i16", "add", "70000",
     "i16 values from -32768 to 32767: the C++ converts the i32 to i16, and a value outside "
     "would keep only its low bits"),
    ("i16", "mul", "-32769",
     "i16 values from -32768 to 32767: the C++ converts the i32 to i16, and a value outside "
     "would keep only its low bits"),
    ("bf16", "mul", "3.4e+38",
     "bf16 values from -3.38953e+38 to 3.38953e+38: the C++ converts the f32 to bf16, and a "
     "value outside would become infinity"),
])
def test_a_vector_scalar_value_outside_the_element_type_is_refused(
        design_file: DesignFile, dt: str, op: str, value: str, limit: str) -> None:
    scalar_dt = "f32" if dt == "bf16" else "i32"
    assert check_error(vs_design(design_file, dt, op, value)) == (
        f"d.py:17: error [kernel signature]: argument 2 ('s') of 'vs_{op}_{dt}_1024' is "
        f"{scalar_dt} narrowed to {dt} by the kernel's C++, but core[0,0] passes {value}\n"
        f"  limit: {limit}\n"
        f"  found: {value}\n"
        f"  fix: pass a value {dt} can hold")


@pytest.mark.parametrize("kernels", ["reference", "native"])
@pytest.mark.parametrize("dt, op, value", [
    ("i16", "add", "32767"), ("i16", "sub", "-32768"), ("i16", "mul", "-32768"),
    ("i32", "add", "2**31 - 1"), ("i32", "mul", "-2**31"),
])
def test_the_ends_of_the_element_types_range_simulate_right(
        design_file: DesignFile, dt: str, op: str, value: str, kernels: str) -> None:
    handle = load_design(vs_design(design_file, dt, op, value))
    check_design(handle.ir)
    dtype = np.dtype({"i16": np.int16, "i32": np.int32}[dt])
    inp = np.arange(-1024, 1024).astype(dtype)
    result = simulate(handle, {"inp": inp}, kernels=kernels)
    wide = {"add": np.add, "sub": np.subtract, "mul": np.multiply}[op](
        inp.astype(np.int64), int(eval(value)))
    assert result.passed and np.array_equal(result.outputs["out"], wide.astype(dtype))


@pytest.mark.parametrize("make, scalars", [
    (lambda: library.vector_scalar("add", TensorType(shape=(64,), dtype="i16")), {"s": 70000}),
    (lambda: library.vector_scalar("mul", TensorType(shape=(64,), dtype="i16")), {"s": -70001}),
    (lambda: library.vector_scalar("sub", TensorType(shape=(64,), dtype="i16")), {"s": 2**31 - 1}),
    (lambda: library.vector_scalar("add", TensorType(shape=(32,), dtype="i32")), {"s": -2**31}),
    (lambda: library.vector_scalar("mul", TensorType(shape=(64,), dtype="bf16")), {"s": 0.1}),
    (lambda: library.vector_scalar("add", TensorType(shape=(64,), dtype="bf16")),
     {"s": 1.0 + 2 ** -8 + 2 ** -30}),  # f32 drops 2^-30: the bf16 tie goes to even, 1.0
    (lambda: library.threshold(128), {"n": 128, "thr": 300}),
    (lambda: library.threshold(128), {"n": 128, "thr": -1}),
    (lambda: library.scale(64), {"n": 64}),
])
def test_the_reference_narrows_a_scalar_as_the_cpp_does(make: Callable[[], Kernel],
                                                        scalars: dict[str, float]) -> None:
    """Whatever value reaches the kernel (check refuses these in a design, but the reference
    must not crash or differ on them: it used to raise OverflowError for 70000 on i16)."""
    k = make()
    case = KernelCase(k.ir, kernel_text(None, k.ir), k.bound_reference(), scalars)
    result = check_kernel(case, seed=2)
    assert result.passed, result.lines


def test_the_scale_factor_is_taken_as_int16() -> None:
    """The factor is host data (not known at check time): only its low 16 bits count."""
    src = np.arange(-32, 32, dtype=np.int16)
    dst = np.zeros(64, dtype=np.int16)
    library.scale_ref(src, dst, np.array([65536 + 3], dtype=np.int32), 64)
    assert np.array_equal(dst, src * 3)


THRESHOLD = '''
import numpy as np

from aiedsl import Tensor, design, fifo, herd, loop, runtime, u8
from aiedsl.kernels import threshold


@design(device="npu1_1col")
def d(inp: Tensor[1024, u8], out: Tensor[1024, u8]):
    a = fifo(Tensor[512, u8], name="a")
    b = fifo(Tensor[512, u8], name="b")
    k = threshold(512)

    @herd()
    def core():
        for _ in loop(2):
            with a.consume() as s, b.produce() as t:
                k(s, t, 256, 512)

    with runtime() as rt:
        rt.fill(a, inp)
        rt.drain(b, out)


@d.reference
def reference(inp):
    return inp
'''
"""A threshold called with the level 256 (line 17)."""


def test_a_threshold_level_outside_u8_is_refused(design_file: DesignFile) -> None:
    assert check_error(design_file(THRESHOLD)) == (
        "d.py:17: error [kernel signature]: argument 2 ('thr') of 'threshold_u8_512' is i32 "
        "narrowed to u8 by the kernel's C++, but core[0,0] passes 256\n"
        "  limit: u8 values from 0 to 255: the C++ converts the i32 to u8, and a value outside "
        "would keep only its low bits\n"
        "  found: 256\n"
        "  fix: pass a value u8 can hold")


def test_a_threshold_level_written_into_the_rtp_is_checked_at_the_write(
        design_file: DesignFile) -> None:
    path = _design(design_file, "threshold_rtp.py")
    handle = load_design(path, {"THR_B": "300"})
    with pytest.raises(DesignError) as e:
        check_design(handle.ir)
    assert str(e.value) == (
        "d.py:44: error [kernel signature]: rt.rtp_write of 'thr0'[0] writes 300, but core[0,0] "
        "passes that slot as argument 2 ('thr') of 'threshold_u8_512', which is i32 narrowed to "
        "u8 by the kernel's C++\n"
        "  limit: u8 values from 0 to 255: the C++ converts the i32 to u8, and a value outside "
        "would keep only its low bits\n"
        "  found: 300\n"
        "  d.py:39: core[0,0] passes it to 'threshold_u8_512'\n"
        "  fix: write a value u8 can hold")


def test_narrows_to_is_a_type_of_the_same_kind() -> None:
    from aiedsl.kernels import scalar

    with pytest.raises(DesignError) as e:
        scalar("s", "f32", narrows_to="i16")
    assert str(e.value).split(": ", 1)[1] == (
        "error [kernel signature]: scalar 's' (f32) has narrows_to=i16\n"
        "  limit: a float type, as f32 is\n"
        "  found: i16\n"
        "  fix: give the type the C++ converts the scalar to, or leave it out")


@pytest.mark.parametrize("dt, narrow, message, limit, found, fix", [
    ("i16", "i32", "i16) has narrows_to=i32, a wider type",
     "a type narrower than i16, or u16", "i32 (4 bytes; i16 has 2)",
     "declare the scalar with the type the C++ takes, scalar('n', i32), without narrows_to="),
    ("bf16", "f32", "bf16) has narrows_to=f32, a wider type", "a type narrower than bf16",
     "f32 (4 bytes; bf16 has 2)",
     "declare the scalar with the type the C++ takes, scalar('n', f32), without narrows_to="),
    ("i32", "i32", "i32) has narrows_to=i32, its own type", "a type narrower than i32, or u32",
     "i32", "leave narrows_to= out: the C++ converts nothing")])
def test_narrows_to_is_no_wider_than_the_scalar(dt: str, narrow: str, message: str, limit: str,
                                                found: str, fix: str) -> None:
    """(a tester) scalar("n", i16, narrows_to=i32) for a C++ int32_t n was taken: the scalar
    type rule then held the parameter to i32, while the core passed an i16 (the upper two
    bytes whatever the register held)."""
    from aiedsl.kernels import scalar

    with pytest.raises(DesignError) as e:
        scalar("n", dt, narrows_to=narrow)
    assert str(e.value).split(": ", 1)[1] == (
        f"error [kernel signature]: scalar 'n' ({message}\n"
        f"  limit: {limit}: the type the C++ converts the scalar to\n"
        f"  found: {found}\n"
        f"  fix: {fix}")


def test_narrows_to_may_be_the_same_width_of_the_other_signedness() -> None:
    """An rtp slot's i32 for a uint32_t parameter: the fix for an rtp slot passed to a u32
    scalar says narrows_to=u32, which stays taken."""
    from aiedsl.kernels import scalar

    assert scalar("n", "i32", narrows_to="u32").narrows_to == "u32"
    assert scalar("n", "u16", narrows_to="i16").narrows_to == "i16"


def test_a_profiled_kernel_takes_its_n_from_equals(design_file: DesignFile) -> None:
    """cycles=None asked for params={'n': ...} though equals= already fixes n (and params=
    then clashed with the reference's own n)."""
    from aiedsl.loader import load_design

    path = design_file('''
        import numpy as np
        from aiedsl import Tensor, design, fifo, herd, i32, runtime
        from aiedsl.kernels import buffer, declare, scalar

        def ref(a, o, n):
            o[...] = a * 2

        @design(device="npu1_1col")
        def d(X: Tensor[256, i32], Y: Tensor[256, i32]):
            k = declare("dbl_n_256", source="dbl.cc", entry="dbl<256>",
                        args=[buffer("a", Tensor[256, i32]), buffer("o", Tensor[256, i32], "out"),
                              scalar("n", i32, equals=256)],
                        reference=ref, cycles=None, cost="-")
            a = fifo(Tensor[256, i32], name="a")
            b = fifo(Tensor[256, i32], name="b")

            @herd()
            def core():
                with a.consume() as s, b.produce() as t:
                    k(s, t, 256)

            with runtime() as rt:
                rt.fill(a, X)
                rt.drain(b, Y)

        @d.reference
        def reference(X):
            return X * 2
        ''')
    (path.parent / "dbl.cc").write_text(
        "#include <aie_api/aie.hpp>\n#include <stdint.h>\n"
        "template <unsigned N> void dbl(const int32_t *a, int32_t *o, int32_t n) {\n"
        "  for (unsigned i = 0; i < N; i += 16) {\n"
        "    aie::vector<int32_t, 16> v = aie::load_v<16>(a + i);\n"
        "    aie::store_v(o + i, aie::add(v, v));\n  }\n}\n")
    handle = load_design(path)
    k = handle.ir.kernels[0]
    assert k.cycles_source == "profile" and k.cycles > 0
    assert simulate(handle).passed


def test_params_named_after_a_scalar_profile_it_and_stay_out_of_the_reference(
        design_file: DesignFile) -> None:
    """kernel cost's fix for a profiled kernel, params={'s': ...}, clashed with a reference
    naming its parameter s (the params went to it as keywords too: 'multiple values for
    argument'); a tester followed the fix into that error. A param named after a scalar now
    only gives it a value to profile with."""
    from aiedsl.loader import load_design

    path = design_file('''
        import numpy as np
        from aiedsl import Tensor, design, fifo, herd, i32, runtime
        from aiedsl.kernels import buffer, declare, scalar

        def ref(a, o, s):
            o[...] = a + s

        @design(device="npu1_1col")
        def d(X: Tensor[256, i32], Y: Tensor[256, i32]):
            k = declare("addk_256", source="addk.cc", entry="addk<256>",
                        args=[buffer("a", Tensor[256, i32]), buffer("o", Tensor[256, i32], "out"),
                              scalar("s", i32)],
                        reference=ref, cycles=None, cost="-", params={"s": 3})
            a = fifo(Tensor[256, i32], name="a")
            b = fifo(Tensor[256, i32], name="b")

            @herd()
            def core():
                with a.consume() as x, b.produce() as y:
                    k(x, y, 5)

            with runtime() as rt:
                rt.fill(a, X)
                rt.drain(b, Y)

        @d.reference
        def reference(X):
            return X + 5
        ''')
    (path.parent / "addk.cc").write_text(
        "#include <aie_api/aie.hpp>\n#include <stdint.h>\n"
        "template <unsigned N> void addk(const int32_t *a, int32_t *o, int32_t s) {\n"
        "  for (unsigned i = 0; i < N; i += 16) {\n"
        "    aie::vector<int32_t, 16> v = aie::load_v<16>(a + i);\n"
        "    aie::store_v(o + i, aie::add(v, s));\n  }\n}\n")
    handle = load_design(path)
    assert handle.ir.kernels[0].cycles_source == "profile"
    assert handle.ir.kernels[0].reference_params == {}
    assert simulate(handle).passed  # the call's 5 reaches the reference, not the profile's 3


SCALE_F32 = '''
    import numpy as np
    from aiedsl import Tensor, design, f32, fifo, herd, i32, runtime
    from aiedsl.kernels import buffer, declare, scalar

    def ref(x, o, a):
        o[...] = x * np.float32(a)

    @design(device="npu1_1col")
    def d(X: Tensor[256, f32], Y: Tensor[256, f32]):
        k = declare("scalef_256", source="scalef.cc", entry="scalef<256>",
                    args=[buffer("x", Tensor[256, f32]), buffer("o", Tensor[256, f32], "out"),
                          scalar("a", SCALAR_TYPE)],
                    reference=ref, cycles=None, cost="-", params={"a": 2.5})
        a = fifo(Tensor[256, f32], name="a")
        b = fifo(Tensor[256, f32], name="b")

        @herd()
        def core():
            with a.consume() as x, b.produce() as y:
                k(x, y, 2.5)

        with runtime() as rt:
            rt.fill(a, X)
            rt.drain(b, Y)

    @d.reference
    def reference(X):
        return X * np.float32(2.5)
    '''


def test_a_float_scalar_takes_a_float_test_value_from_params(design_file: DesignFile) -> None:
    """params={'a': 2.5} for an f32 scalar was refused ("an int or a str"), though params=
    gives a scalar its value to profile and test with."""
    path = design_file(SCALE_F32.replace("SCALAR_TYPE", "f32"))
    (path.parent / "scalef.cc").write_text(
        "#include <aie_api/aie.hpp>\n"
        "template <unsigned N> void scalef(const float *x, float *o, float a) {\n"
        "  for (unsigned i = 0; i < N; i += 16)\n"
        "    aie::store_v(o + i, aie::mul(aie::load_v<16>(x + i), a).to_vector<float>());\n}\n")
    handle = load_design(path)  # profiled with a = 2.5
    k = handle.kernels["scalef_256"]
    assert k.ir.params == {"a": 2.5} and k.ir.cycles_source == "profile"
    case = KernelCase(k.ir, kernel_text(None, k.ir), k.run_reference, {"a": k.ir.params["a"]})
    assert check_kernel(case).passed


def test_a_float_test_value_for_an_integer_scalar_is_refused(design_file: DesignFile) -> None:
    path = design_file(SCALE_F32.replace("SCALAR_TYPE", "i32"))
    with pytest.raises(DesignError) as e:
        load_design(path)
    assert str(e.value) == (
        "d.py:10: error [kernel signature]: parameter 'a' of kernel 'scalef_256' is 2.5, but "
        "scalar 'a' is i32\n"
        "  limit: an int, as scalar 'a' is i32\n"
        "  found: 2.5\n"
        "  fix: give a whole number (params={'a': 2}), or declare scalar('a', f32) if the C++ "
        "takes a float")
    path = design_file(SCALE_F32.replace("SCALAR_TYPE", "f32").replace('{"a": 2.5}',
                                                                         '{"a": 1e39}'))
    with pytest.raises(DesignError) as e:
        load_design(path)
    assert str(e.value).splitlines()[1] == "  limit: a finite f32: -3.4028235e+38 to 3.4028235e+38"


SCALE_BF16 = '''
import ml_dtypes
import numpy as np
from aiedsl import Tensor, bf16, design, fifo, herd, runtime
from aiedsl.kernels import buffer, declare, scalar

def ref(x, o, a):
    o[...] = np.where(x.astype(np.float32) > np.float32(a), x, ml_dtypes.bfloat16(a))

@design(device="npu1_1col")
def d(X: Tensor[256, bf16], Y: Tensor[256, bf16]):
    k = declare("scaleb_256", source="scaleb.cc", entry="scaleb<256>",
                args=[buffer("x", Tensor[256, bf16]), buffer("o", Tensor[256, bf16], "out"),
                      scalar("a", bf16)],
                reference=ref, cycles=300, cost="-")
    a = fifo(Tensor[256, bf16], name="a")
    b = fifo(Tensor[256, bf16], name="b")

    @herd()
    def core():
        with a.consume() as x, b.produce() as y:
            k(x, y, 0.3)

    with runtime() as rt:
        rt.fill(a, X)
        rt.drain(b, Y)

@d.reference
def reference(X):
    a = ml_dtypes.bfloat16(0.3)
    return np.where(X.astype(np.float32) > np.float32(a), X, a)
'''


def test_a_bf16_scalar_runs_on_the_host_and_the_reference_gets_its_bf16_value(
        design_file: DesignFile) -> None:
    """A kernel author's: a bf16 scalar (here a floor under the tile) crashed `aiedsl kernel test` (KeyError 'bf16'), and the
    reference was handed 0.3 where the C++ receives bf16(0.3) = 0.30078125."""
    from aiedsl.kernels.cases import design_cases

    path = design_file(SCALE_BF16)
    (path.parent / "scaleb.cc").write_text(
        "#include <aie_api/aie.hpp>\n"
        "template <unsigned N> void scaleb(const bfloat16 *x, bfloat16 *o, bfloat16 a) {\n"
        "  for (unsigned i = 0; i < N; i++) o[i] = float(x[i]) > float(a) ? x[i] : a;\n}\n")
    handle = load_design(path)
    seen: list[float] = []
    k = handle.kernels["scaleb_256"]

    def spy(x: np.ndarray, o: np.ndarray, a: float) -> None:
        seen.append(a)
        k.run_reference(x, o, a)

    (case,) = design_cases(handle)
    assert case.scalars == {"a": 0.3}
    assert check_kernel(KernelCase(case.kernel, case.cpp, spy, case.scalars)).passed
    assert set(seen) == {0.30078125}  # (each of its runs)
    assert simulate(handle).passed
