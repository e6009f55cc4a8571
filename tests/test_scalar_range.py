"""Scalar kernel arguments and loop counts become typed MLIR constants (issue 14, item 7).

``add(x, y, 300)`` for an ``i8`` scalar used to be emitted as ``arith.constant 300 : i8``, which
MLIR's parser refuses ("integer constant out of range for attribute"); 200 would be taken as the
bit pattern -56. aiedsl refuses a value outside its dtype's range at the call line, a float for
an integer, and a bool; it accepts numpy scalars, and emits every constant as MLIR takes it:
integers signless (``arith.constant`` refuses ``ui8``), floats with a dot (MLIR refuses
``3 : f32`` and reads no ``1e-05``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

import aiedsl
from aiedsl.checks import check_design
from aiedsl.dtypes import dtype
from aiedsl.emit import generate
from aiedsl.errors import DesignError
from aiedsl.loader import load_design

DesignFile = Callable[..., Path]

DESIGN = '''
import ml_dtypes
import numpy as np

from aiedsl import Tensor, bf16, design, f32, fifo, herd, i8, i16, i32, loop, runtime, u8, u16, u32
from aiedsl.kernels import buffer, declare, scalar


def ref(a, b, n):
    b[...] = a + np.int32(n)


@design(device="npu1_1col")
def d(inp: Tensor[64, i32], out: Tensor[64, i32]):
    of_in = fifo(Tensor[8, i32], name="of_in")
    of_out = fifo(Tensor[8, i32], name="of_out")
    k = declare("add_n", source="add_n.cc", entry="add_n_impl",
                args=[buffer("a", Tensor[8, i32]), buffer("b", Tensor[8, i32], "out"),
                      scalar("n", DT)], reference=ref, cycles=30, cost="one vector add")

    @herd()
    def core():
        for _ in loop(COUNT):
            with of_in.consume() as a, of_out.produce() as b:
                k(a, b, VALUE)

    with runtime() as rt:
        rt.fill(of_in, inp)
        rt.drain(of_out, out, wait=True)


@d.reference
def reference(inp):
    return inp + np.int32(VALUE)
'''
"""A kernel with one scalar argument ``n`` of dtype DT, called with VALUE (line 24) inside a
loop of COUNT (line 22, default 8: the design's 64 values in 8-value elements)."""

CALL_LINE = 24
LOOP_LINE = 22


def scalar_design(design_file: DesignFile, dt: str, value: str, count: str = "8") -> Path:
    """Write the design (and its kernel's C++, taking ``n`` as ``dt``'s C++ type, as `check`
    wants of a scalar) with ``n: dt`` passed ``value``."""
    path = design_file(DESIGN.replace("DT", dt).replace("VALUE", value).replace("COUNT", count))
    (path.parent / "add_n.cc").write_text(
        "#include <aie_api/aie.hpp>\n#include <stdint.h>\n"
        f"void add_n_impl(const int32_t *a, int32_t *b, {dtype(dt).cpp} n) {{\n"
        "  for (int i = 0; i < 8; i++) b[i] = a[i] + n;\n"
        "}\n")
    return path


def error_of(path: Path) -> str:
    with pytest.raises(DesignError) as e:
        check_design(load_design(path).ir)
    return str(e.value)


def constants(path: Path) -> list[str]:
    """The non-index ``arith.constant`` lines of the design's aie.mlir, without ``loc``."""
    text = generate(load_design(path)).files["aie.mlir"]
    return [re.sub(r"^%\w+ = | loc\(.*$", "", line.strip()) for line in text.splitlines()
            if "arith.constant" in line and ": index" not in line]


# -- accepted where mlir-aie accepts ---------------------------------------------------------------

@pytest.mark.parametrize("dt, value, literal", [
    ("i8", "-128", "arith.constant -128 : i8"),
    ("i8", "127", "arith.constant 127 : i8"),
    ("u8", "0", "arith.constant 0 : i8"),
    ("u8", "255", "arith.constant 255 : i8"),       # signless: the kernel's uint8_t reads 255
    ("i16", "-32768", "arith.constant -32768 : i16"),
    ("i16", "32767", "arith.constant 32767 : i16"),
    ("u16", "65535", "arith.constant 65535 : i16"),   # signless, as u8's
    ("u32", "2**32 - 1", "arith.constant 4294967295 : i32"),
    ("i32", "-2**31", "arith.constant -2147483648 : i32"),
    ("i32", "2**31 - 1", "arith.constant 2147483647 : i32"),
    ("bf16", "-3.3895313892515355e38", "arith.constant -3.3895313892515355e+38 : bf16"),
    ("bf16", "3.3895313892515355e38", "arith.constant 3.3895313892515355e+38 : bf16"),
    ("f32", "-3.4028234663852886e38", "arith.constant -3.4028234663852886e+38 : f32"),
    ("f32", "3.4028234663852886e38", "arith.constant 3.4028234663852886e+38 : f32"),
    # (a tester) FLT_MAX as numpy prints it, a double just past it that rounds to it, was
    # refused; so is taken any value that rounds to a finite one of the type
    ("f32", "3.4028235e38", "arith.constant 3.4028235e+38 : f32"),
    ("f32", "-3.4028235677973362e38", "arith.constant -3.4028235677973362e+38 : f32"),
    ("bf16", "3.39e38", "arith.constant 3.39e+38 : bf16"),
])
def test_the_ends_of_a_dtypes_range_are_accepted(design_file: DesignFile, dt: str, value: str,
                                                 literal: str) -> None:
    path = scalar_design(design_file, dt, value)
    check_design(load_design(path).ir)
    assert constants(path) == [literal]


@pytest.mark.parametrize("dt, value, literal", [
    ("f32", "3", "arith.constant 3.0 : f32"),        # MLIR: no decimal integer for a float
    ("f32", "-2", "arith.constant -2.0 : f32"),
    ("f32", "1e-5", "arith.constant 1.0e-05 : f32"),  # MLIR's float literal needs the dot
    ("f32", "1e20", "arith.constant 1.0e+20 : f32"),
    ("f32", "0.1", "arith.constant 0.1 : f32"),
    ("bf16", "-0.0", "arith.constant -0.0 : bf16"),
    ("i8", "np.int8(-128)", "arith.constant -128 : i8"),
    ("u8", "np.uint8(200)", "arith.constant 200 : i8"),
    ("i32", "np.int64(7)", "arith.constant 7 : i32"),
    ("f32", "np.float32(0.5)", "arith.constant 0.5 : f32"),
    ("bf16", "ml_dtypes.bfloat16(1.5)", "arith.constant 1.5 : bf16"),
])
def test_constants_are_emitted_as_mlir_parses_them(design_file: DesignFile, dt: str, value: str,
                                                   literal: str) -> None:
    path = scalar_design(design_file, dt, value)
    assert constants(path) == [literal]
    # MLIR's float literal: [-+]?[0-9]+[.][0-9]*([eE][-+]?[0-9]+)?
    number = literal.split()[1]
    pattern = r"-?[0-9]+" if dt.startswith(("i", "u")) else r"-?[0-9]+\.[0-9]*([eE][-+]?[0-9]+)?"
    assert re.fullmatch(pattern, number)
    assert generate(load_design(path)).files == generate(load_design(path)).files


def test_a_u8_scalar_is_declared_signless(design_file: DesignFile) -> None:
    """arith.constant takes only signless integers; the call and the declaration agree."""
    text = generate(load_design(scalar_design(design_file, "u8", "200"))).files["aie.mlir"]
    assert "func.func private @add_n(memref<8xi32>, memref<8xi32>, i8)" in text
    assert "ui8" not in text


def test_the_simulator_gives_the_kernel_the_value_the_call_passes(
        design_file: DesignFile) -> None:
    handle = load_design(scalar_design(design_file, "u8", "np.uint8(200)"))
    x = np.arange(64, dtype=np.int32)
    result = aiedsl.build(handle, write=False).run(x, target="sim")
    assert result.passed and np.array_equal(result.outputs["out"], x + 200)


def test_the_largest_index_loop_count_is_accepted(design_file: DesignFile) -> None:
    """2^63 - 1 (sys.maxsize, IRON's "forever") is an index constant; the loop acquires its
    one element outside, so the run balances."""
    path = design_file(DESIGN.replace("DT", "i32").replace("VALUE", "1").replace("COUNT", "8")
                       .replace("        for _ in loop(8):\n"
                                "            with of_in.consume() as a, of_out.produce() as b:\n"
                                "                k(a, b, 1)\n",
                                "        with of_in.consume() as a, of_out.produce() as b:\n"
                                "            for _ in loop(2**63 - 1):\n"
                                "                k(a, b, 1)\n")
                       .replace("Tensor[64, i32]", "Tensor[8, i32]"))
    (path.parent / "add_n.cc").write_text("void add_n_impl(const int *a, int *b, int n) {}\n")
    check_design(load_design(path).ir)
    text = generate(load_design(path)).files["aie.mlir"]
    assert "arith.constant 9223372036854775807 : index" in text


# -- rejected where mlir-aie rejects (or would silently change the value) -----------------------

def _range_error(dt: str, value: str, limit: str) -> str:
    return (f"d.py:{CALL_LINE}: error [kernel signature]: argument 2 ('n') of 'add_n' is {dt}, "
            f"but core[0,0] passes {value}\n"
            f"  limit: {limit}\n"
            f"  found: {value}\n"
            f"  fix: pass a value {dt} can hold, or declare the scalar with a wider type")


@pytest.mark.parametrize("dt, value, shown, limit", [
    ("i8", "128", "128", "i8 values from -128 to 127"),
    ("i8", "-129", "-129", "i8 values from -128 to 127"),
    ("i8", "300", "300", "i8 values from -128 to 127"),
    ("u8", "256", "256", "u8 values from 0 to 255"),
    ("u8", "-1", "-1", "u8 values from 0 to 255"),
    ("i16", "32768", "32768", "i16 values from -32768 to 32767"),
    ("i16", "-32769", "-32769", "i16 values from -32768 to 32767"),
    ("u16", "65536", "65536", "u16 values from 0 to 65535"),
    ("u32", "-1", "-1", "u32 values from 0 to 4294967295"),
    ("u32", "2**32", "4294967296", "u32 values from 0 to 4294967295"),
    ("i32", "2**31", "2147483648", "i32 values from -2147483648 to 2147483647"),
    ("i32", "-2**31 - 1", "-2147483649", "i32 values from -2147483648 to 2147483647"),
    ("i8", "np.int64(300)", "300", "i8 values from -128 to 127"),
    ("bf16", "3.4e38", "3.4e+38", "bf16 values from -3.38953e+38 to 3.38953e+38"),
    ("bf16", "float('-inf')", "-inf", "bf16 values from -3.38953e+38 to 3.38953e+38"),
    ("f32", "1e39", "1e+39", "f32 values from -3.4028235e+38 to 3.4028235e+38"),
    # the first double rounding to infinity (the midpoint past FLT_MAX): shown past the limit
    ("f32", "3.4028235677973366e38", "3.4028235677973366e+38",
     "f32 values from -3.4028235e+38 to 3.4028235e+38"),
    ("f32", "float('nan')", "nan", "f32 values from -3.4028235e+38 to 3.4028235e+38"),
])
def test_one_past_a_dtypes_range_is_refused(design_file: DesignFile, dt: str, value: str,
                                            shown: str, limit: str) -> None:
    assert error_of(scalar_design(design_file, dt, value)) == _range_error(dt, shown, limit)


def test_a_float_for_an_integer_scalar_is_refused(design_file: DesignFile) -> None:
    assert error_of(scalar_design(design_file, "i8", "2.5")) == (
        f"d.py:{CALL_LINE}: error [kernel signature]: argument 2 ('n') of 'add_n' is i8, but "
        "core[0,0] passes 2.5\n"
        "  limit: add_n(a: 8xi32, b: 8xi32, n: i8)\n"
        "  found: 2.5\n"
        "  fix: pass an int")


@pytest.mark.parametrize("value, shown", [("True", "True"), ("np.False_", repr(np.False_))])
def test_a_bool_scalar_is_refused(design_file: DesignFile, value: str, shown: str) -> None:
    flag = 1 if value == "True" else 0
    with pytest.raises(DesignError) as e:
        load_design(scalar_design(design_file, "i32", value))
    assert str(e.value) == (
        f"d.py:{CALL_LINE}: error [kernel call]: argument 2 of 'add_n' is the bool {shown}\n"
        "  limit: an acquired buffer, or an int or float scalar\n"
        f"  found: {shown}\n"
        f"  fix: pass {flag} (int(flag)) for an integer scalar")


def test_a_loop_count_past_an_index_constant_is_refused(design_file: DesignFile) -> None:
    with pytest.raises(DesignError) as e:
        load_design(scalar_design(design_file, "i32", "1", count="2**63"))
    assert str(e.value) == (
        f"d.py:{LOOP_LINE}: error [loop]: loop(9223372036854775808) has more iterations than an "
        "MLIR index constant holds\n"
        "  limit: 1 to 9223372036854775807 (2^63 - 1)\n"
        "  found: 9223372036854775808\n"
        "  fix: use a count of at most sys.maxsize (2^63 - 1)")
