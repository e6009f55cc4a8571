"""What a failed host build of an object of several kernels blames, and a design reference
whose values its output's type does not hold."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest

from aiedsl.errors import DesignError
from aiedsl.kernels.host import native
from aiedsl.kernels.text import kernel_text
from aiedsl.loader import load_design

DesignFile = Callable[..., Path]

TWO_KERNELS = '''
    import numpy as np
    from aiedsl import Tensor, design, fifo, herd, runtime, u8
    from aiedsl.kernels import buffer, declare

    def copy_ref(src, dst):
        dst[...] = src

    W = {w}
    first = declare(f"copy_{{W}}", source="two.cc", entry=f"copy<{{W}}>",
                    args=[buffer("src", Tensor[W, u8]), buffer("dst", Tensor[W, u8], "out")],
                    reference=copy_ref, cycles=40, cost="-")
    second = declare(f"lines_{{W}}", source="two.cc", entry=f"lines<{{W}}>",
                     args=[buffer("src", Tensor[W, u8]), buffer("dst", Tensor[W, u8], "out")],
                     reference=copy_ref, cycles=40, cost="-")

    @design(device="npu1_1col")
    def d(X: Tensor[W, u8], Y: Tensor[W, u8]):
        a = fifo(Tensor[W, u8], name="a")
        b = fifo(Tensor[W, u8], name="b")
        c = fifo(Tensor[W, u8], name="c")

        @herd(name="p")
        def p():
            with a.consume() as s, b.produce() as t:
                first(s, t)

        @herd(name="q")
        def q():
            with b.consume() as s, c.produce() as t:
                second(s, t)

        with runtime() as rt:
            rt.fill(a, X)
            rt.drain(c, Y)

    @d.reference
    def reference(X):
        return {result}
    '''

TWO_CC = '''
#include <aie_api/aie.hpp>
#include <stdint.h>
template <unsigned W> void copy(const uint8_t *src, uint8_t *dst) {
  for (unsigned i = 0; i < W; i += 16) aie::store_v(dst + i, aie::load_v<16>(src + i));
}
template <unsigned W> void lines(const uint8_t *src, uint8_t *dst) {
  static_assert(W % 32 == 0, "W % 32");
  for (unsigned i = 0; i < W; i += 32) aie::store_v(dst + i, aie::load_v<32>(src + i));
}
'''


def _design(design_file: DesignFile, w: int = 64, result: str = "X") -> Path:
    path = design_file(TWO_KERNELS.format(w=w, result=result))
    (path.parent / "two.cc").write_text(TWO_CC)
    return path


def test_a_failed_build_blames_the_object_and_names_the_first_errors_kernel(
        design_file: DesignFile) -> None:
    """Riallto tester: "rgba2gray_100, thresh_bin_100 and gray2rgba_100 does not compile"
    blamed every kernel of the object, where one static_assert failed."""
    handle = load_design(_design(design_file, w=48))
    k = handle.ir.kernels[0]
    assert k.symbol == "copy_48"  # copy<48> compiles; lines<48> does not
    with pytest.raises(DesignError) as excinfo:
        native(k, kernel_text(handle.ir, k))
    lines = str(excinfo.value).splitlines()
    assert lines[0] == (
        "d.py:12: error [host kernel build]: the object of kernels copy_48 and lines_48 "
        "(two.cc) does not compile on the host: the first error is in lines_48's code")
    assert lines[1] == ("  found: kernels/copy_48.cc: In instantiation of 'void lines(const "
                        "uint8_t*, uint8_t*) [with unsigned int W = 48; uint8_t = unsigned "
                        "char]':")


def _reference_error(design_file: DesignFile, result: str) -> str:
    from aiedsl.sim import simulate

    with pytest.raises(DesignError) as excinfo:
        simulate(load_design(_design(design_file, result=result)))
    return str(excinfo.value)


def test_a_bool_reference_for_an_integer_output_is_refused(design_file: DesignFile) -> None:
    """Compared as 1 and 0: a kernel writing 255 for true failed, one writing 1 passed."""
    assert _reference_error(design_file, "X > 100") == (
        "d.py:36: error [reference]: the reference of 'd' returned bool values for output 'Y' "
        "(64xu8)\n"
        "  limit: u8 values: True and False would be compared as 1 and 0\n"
        "  found: bool, shape [64]\n"
        "  fix: return the values the kernel writes: np.where(mask, 255, 0).astype(np.uint8), "
        "or mask.astype(np.uint8) for 1 and 0")


def test_a_reference_value_the_output_does_not_hold_is_refused(
        design_file: DesignFile) -> None:
    """Cast for the comparison, 398 became 142 without a word (Riallto tester)."""
    message = _reference_error(design_file, "X.astype(np.int64) * 2")
    assert message.startswith("d.py:36: error [reference]: the reference of 'd' returned 434 "
                              "at [0] of output 'Y'")
    assert " of output 'Y' (64xu8), which u8 does not hold\n" in message
    assert "  limit: u8 values: 0 to 255\n" in message
    assert ("  fix: narrow as the kernel does: saturate (np.clip(x, 0, 255)) or wrap "
            "(x % 256), then .astype(np.uint8)") in message
    assert _reference_error(design_file, "X.astype(np.int64) - 300").splitlines()[2].startswith(
        "  found: 64 value(s) outside it, from -300 to ")


def test_the_values_an_output_does_not_hold_are_shown_by_their_own_range() -> None:
    """A uint32 result for an i32 output said "found: 2024 value(s) outside it, from 1 to
    4294967294": the whole array's range, its smallest inside the limit (a tester)."""
    import numpy as np

    from aiedsl.ir.loc import Loc
    from aiedsl.ir.types import TensorType
    from aiedsl.lang.design import _check_holds

    arr = np.array([1, 4294967294, 7, 2147483648], dtype=np.uint32)
    with pytest.raises(DesignError) as excinfo:
        _check_holds(arr, "out", TensorType(shape=(4,), dtype="i32"), "the reference of 'd' "
                     "returned", Loc(file="d.py", line=3))
    assert str(excinfo.value) == (
        "d.py:3: error [reference]: the reference of 'd' returned 4294967294 at [1] of output "
        "'out' (4xi32), which i32 does not hold\n"
        "  limit: i32 values: -2147483648 to 2147483647\n"
        "  found: 2 value(s) outside it, from 2147483648 to 4294967294 (uint32)\n"
        "  fix: narrow as the kernel does: saturate (np.clip(x, -2147483648, 2147483647)) or "
        "wrap ((x + 2147483648) % 4294967296 - 2147483648), then .astype(np.int32)")


def test_a_failed_build_names_the_function_the_first_error_is_in(
        design_file: DesignFile) -> None:
    """No template: the error is in the source's lines, under g++'s `In function` head."""
    path = _design(design_file)
    (path.parent / "two.cc").write_text(
        TWO_CC.replace("template <unsigned W> void lines(", "template <unsigned W> void "
                       "lines_t(").replace("static_assert(W % 32 == 0, \"W % 32\");", "")
        + "template <unsigned W> void lines(const uint8_t *src, uint8_t *dst) {\n"
          "  int x = undeclared;\n}\n")
    handle = load_design(path)
    k = handle.ir.kernels[0]
    with pytest.raises(DesignError) as excinfo:
        native(k, kernel_text(handle.ir, k))
    assert str(excinfo.value).splitlines()[0] == (
        "d.py:12: error [host kernel build]: the object of kernels copy_64 and lines_64 "
        "(two.cc) does not compile on the host: the first error is in lines_64's code")
