"""README's "Writing and testing a kernel" example, as written there: its C++ builds on the
host and matches its reference, and its declared cycles are what ``aiedsl kernel profile``
says of it plus the library's call overhead (it said 64 + 14, half the store-bound 128)."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Callable

from aiedsl.ir.types import TensorType
from aiedsl.kernels.cases import design_cases
from aiedsl.kernels.host_check import check_kernel
from aiedsl.kernels.library import zero
from aiedsl.kernels.profile import profile_cases
from aiedsl.loader import load_design

DesignFile = Callable[..., Path]
README = Path(__file__).resolve().parents[1] / "README.md"
SECTION = "## Writing and testing a kernel"


def _block(text: str, first: str, last: str) -> str:
    """The indented code block of ``text`` from the line starting ``first`` to the one ending
    ``last``, dedented."""
    start = text.index(first)
    end = text.index(last, start) + len(last)
    line_start = text.rindex("\n", 0, start) + 1
    return textwrap.dedent(text[line_start:end]) + "\n"


def test_the_readme_kernel_costs_what_its_profile_says(design_file: DesignFile) -> None:
    section = README.read_text().split(SECTION, 1)[1].split("\n## ", 1)[0]
    cpp = _block(section, "#include <aie_api/aie.hpp>", "\n       }")
    declaration = _block(section, "def double_ref", "ops=1024)")
    body = textwrap.indent(declaration.split("\n", 1)[1], "    ")  # the declare(...) call
    path = design_file(
        "import numpy as np\n"
        "from aiedsl import Tensor, design, fifo, herd, i32, runtime\n"
        "from aiedsl.kernels import buffer, declare\n\n"
        + declaration.split("\n", 1)[0] + "\n\n"
        "@design(device=\"npu1_1col\")\n"
        "def d(inp: Tensor[1024, i32], out: Tensor[1024, i32]):\n"
        + body +
        "    a = fifo(Tensor[1024, i32], name=\"a\")\n"
        "    b = fifo(Tensor[1024, i32], name=\"b\")\n\n"
        "    @herd()\n"
        "    def core():\n"
        "        with a.consume() as x, b.produce() as y:\n"
        "            k(x, y)\n\n"
        "    with runtime() as rt:\n"
        "        rt.fill(a, inp)\n"
        "        rt.drain(b, out)\n\n\n"
        "@d.reference\n"
        "def reference(inp):\n"
        "    return inp * 2\n")
    (path.parent / "double.cc").write_text(cpp)
    cases = design_cases(load_design(path))
    assert [c.kernel.symbol for c in cases] == ["double_i32_1024"]
    assert check_kernel(cases[0]).passed
    [prof] = profile_cases(cases, "npu1")
    assert prof.binding == "store" and prof.cycles == 128
    # the library's call overhead, as its own store-bound kernels count it (zero: bytes/32 + 14)
    overhead = zero(TensorType(shape=(1024,), dtype="i32")).ir.cycles - 4096 // 32
    assert cases[0].kernel.cycles == prof.cycles + overhead == 142
