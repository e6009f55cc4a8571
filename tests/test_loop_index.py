"""A loop's index passed to a kernel (``for i in loop(n): kern(buf, i)``): the scf.for's
induction variable cast to the scalar's type in the MLIR, each iteration's own value in the
simulator (checked against numpy), read back from design.json, and refused word for word where
the kernel cannot take it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Callable

import numpy as np
import pytest

from aiedsl.api import build
from aiedsl.checks import check_design
from aiedsl.design_json import load_json
from aiedsl.errors import DesignError
from aiedsl.ir.core_ops import IndexArg
from aiedsl.ir.program import calls
from aiedsl.loader import load_design
from aiedsl.sim import simulate

DesignFile = Callable[..., Path]

CPP = """
#include <stdint.h>

template <unsigned N> void add_rc(const int32_t *a, int32_t *b, int32_t r, int32_t c) {
  for (unsigned i = 0; i < N; ++i)
    b[i] = a[i] + 10 * r + c;
}
"""

DESIGN = """
import numpy as np

from aiedsl import Tensor, design, f32, fifo, herd, i8, i32, loop, runtime
from aiedsl.kernels import buffer, declare, scalar


def add_rc_ref(a, b, r, c):
    b[:] = a + 10 * r + c


@design(device="npu1_1col")
def rows(inp: Tensor[1024, i32], out: Tensor[1024, i32]):
    a = fifo(Tensor[256, i32], name="a")
    b = fifo(Tensor[256, i32], name="b")
    add = declare("add_rc_i32_256", source="k.cc", entry="add_rc<256>",
                  args=[buffer("src", Tensor[256, i32]), buffer("dst", Tensor[256, i32], "out"),
                        scalar("r", R_TYPE), scalar("c", i32)],
                  reference=add_rc_ref, cycles=40, cost="one 16-lane vector add per 16 values")

    @herd()
    def core():
        for r in loop(ROWS):
            for c in loop(2):
                with a.consume() as x, b.produce() as y:
                    add(x, y, r, c)

    with runtime() as rt:
        rt.fill(a, inp)
        rt.drain(b, out)


@rows.reference
def reference(inp: np.ndarray) -> np.ndarray:
    return inp + np.repeat([0, 1, 10, 11], 256)
"""


def _design(design_file: DesignFile, rows: int = 2, r_type: str = "i32") -> Path:
    # (the C++ takes r as the declaration does: the source check would refuse another type)
    design_file(CPP.replace("int32_t r", "float r") if r_type == "f32" else
                CPP.replace("int32_t r", "int8_t r") if r_type == "i8" else CPP, "k.cc")
    text = DESIGN.replace("R_TYPE", r_type)
    if rows != 2:  # more rows than the data: the fill and drain move ROWS * 512 values
        text = text.replace("Tensor[1024, i32]", f"Tensor[{rows * 512}, i32]")
    return design_file(text.replace("ROWS", str(rows)))


def _kernel_test(path: Path) -> subprocess.CompletedProcess[str]:
    """``aiedsl kernel test path``, as a user runs it."""
    return subprocess.run([sys.executable, "-m", "aiedsl.cli", "kernel", "test", str(path)],
                          capture_output=True, text=True)


@pytest.mark.parametrize("kernels", ["reference", "native"])
def test_each_iteration_passes_its_own_index(design_file: DesignFile, kernels: str) -> None:
    handle = load_design(_design(design_file))
    (call,) = calls(handle.ir.cores[0])
    assert call.args[2:] == (IndexArg(loop=0, loc=call.loc), IndexArg(loop=1, loc=call.loc))
    inp = np.arange(1024, dtype=np.int32)
    trace = Path(f"t_{kernels}.json")
    result = simulate(handle, {"inp": inp}, kernels=kernels, trace=str(trace))
    assert result.passed
    assert np.array_equal(result.outputs["out"], inp + np.repeat([0, 1, 10, 11], 256))
    # each call's span says which iteration it is
    spans = [e["name"] for e in json.loads(trace.read_text())["traceEvents"]
             if e["ph"] == "X" and e["cat"] == "core"]
    assert spans == [f"add_rc_i32_256 (r={r}, c={c})" for r in range(2) for c in range(2)]


def test_the_mlir_casts_each_loops_induction_variable(design_file: DesignFile,
                                                      tmp_path: Path) -> None:
    build(_design(design_file), output=tmp_path / "out", lower=False)
    mlir = [line.strip() for line in (tmp_path / "out" / "aie.mlir").read_text().splitlines()]
    at = mlir.index("scf.for %i2 = %c0 to %n1 step %c1 {")
    assert mlir[at + 2] == "scf.for %i4 = %c0 to %n3 step %c1 {"
    assert mlir[at + 7:at + 10] == [
        "%arg7 = arith.index_cast %i2 : index to i32",
        "%arg8 = arith.index_cast %i4 : index to i32",
        "func.call @add_rc_i32_256(%view5_0, %view6_0, %arg7, %arg8) : (memref<256xi32>, "
        'memref<256xi32>, i32, i32) -> () loc("d.py":25:0)']


def test_design_json_reads_the_index_back(design_file: DesignFile) -> None:
    handle = load_design(_design(design_file))
    again = load_json(handle.ir.model_dump_json(), home=".")
    assert again == handle.ir
    text = handle.ir.model_dump_json()
    assert '{"kind":"index","loop":0,' in text and '{"kind":"index","loop":1,' in text


def test_an_index_for_a_loop_the_call_is_not_in_is_refused(design_file: DesignFile) -> None:
    handle = load_design(_design(design_file))
    text = handle.ir.model_dump_json().replace('"kind":"index","loop":1,',
                                               '"kind":"index","loop":2,')
    with pytest.raises(DesignError) as e:
        load_json(text, home=".")
    assert str(e.value) == (
        "d.py:25: error [design IR]: the design IR text: "
        "cores[0].body[0].body[0].body[2].args[3].loop is 2, outside the 2 loop(s) around the "
        "call\n"
        "  limit: 0 to 1\n"
        "  found: 2\n"
        "  fix: give 0 to 1; a design.json aiedsl wrote holds none: rebuild the design "
        "(aiedsl build) rather than edit its design.json")


def test_an_index_a_narrow_scalar_cannot_hold_is_refused(design_file: DesignFile) -> None:
    with pytest.raises(DesignError) as e:
        check_design(load_design(_design(design_file, rows=200, r_type="i8")).ir)
    assert str(e.value).split(": ", 1)[1] == (
        "error [kernel signature]: argument 2 ('r') of 'add_rc_i32_256' is i8, but "
        "core[0,0] passes the index of a loop(200), 0 to 199\n"
        "  limit: i8 values from -128 to 127\n"
        "  found: 199\n"
        "  fix: declare the scalar with a wider type (scalar('r', i32)) and take it as that "
        "type in the C++ (int32_t), or make the loop at most loop(128)")


def test_an_index_for_a_float_scalar_is_refused(design_file: DesignFile) -> None:
    with pytest.raises(DesignError) as e:
        check_design(load_design(_design(design_file, r_type="f32")).ir)
    message = str(e.value).split(": ", 1)[1]
    assert message.splitlines()[0] == (
        "error [kernel signature]: argument 2 ('r') of 'add_rc_i32_256' is f32, but core[0,0] "
        "passes the index of a loop(2), 0 to 1")
    assert message.splitlines()[-1] == (
        "  fix: declare it scalar('r', i32) and convert it in the C++")


def test_an_index_outside_its_loop_is_refused(design_file: DesignFile) -> None:
    design_file(CPP, "k.cc")
    path = design_file(DESIGN.replace("ROWS", "2").replace(
        """                with a.consume() as x, b.produce() as y:
                    add(x, y, r, c)""",
        """                with a.consume() as x, b.produce() as y:
                    add(x, y, r, c)
            with a.consume() as x, b.produce() as y:
                add(x, y, r, c)""").replace("R_TYPE", "i32"))
    with pytest.raises(DesignError) as e:
        load_design(path)
    assert str(e.value) == (
        "d.py:27: error [loop]: the index of the loop(2) at line 23 is passed to kernel "
        "'add_rc_i32_256' (argument 3) outside that loop\n"
        "  limit: a loop's index is each iteration's own: only a call inside the loop's body, "
        "in the core that runs it, has one to pass\n"
        "  found: the index of loop(2), line 23\n"
        "  fix: make the call inside the for's body, in the core function itself (each core "
        "traces its own loops), or pass a constant")


def test_an_index_for_a_kernel_counting_ops_per_call_is_refused(design_file: DesignFile
                                                                ) -> None:
    design_file(CPP, "k.cc")
    path = design_file(DESIGN.replace("ROWS", "2").replace("R_TYPE", "i32").replace(
        "cycles=40,", "cycles=40, ops=lambda r, c: 256,"))
    with pytest.raises(DesignError) as e:
        check_design(load_design(path).ir)
    assert str(e.value).split(": ", 1)[1] == (
        "error [kernel signature]: argument 2 ('r') of 'add_rc_i32_256' is the index of a "
        "loop(2) (0 to 1) that core[0,0] passes, but its ops= is a function of its scalars, and "
        "the index is another value in every iteration\n"
        "  limit: a kernel whose calls cost what their scalars say takes constant scalars (and "
        "rtp slots, charged as their first write)\n"
        "  found: a loop's index\n"
        "  fix: declare ops= as a number, or pass a constant")


def test_an_index_kept_from_another_cores_trace_says_whose_it_is(design_file: DesignFile
                                                                 ) -> None:
    """A reviewer kept the index in a global and passed it from the next core's trace: "outside
    that loop" was untrue there, the call being inside a loop of that line (its own)."""
    design_file(CPP, "k.cc")
    path = design_file("""
        from aiedsl import Tensor, design, herd, i32, local, loop
        from aiedsl.kernels import buffer, declare, scalar

        KEPT = []

        def add_rc_ref(a, b, r, c):
            b[:] = a + 10 * r + c

        @design(device="npu1_1col")
        def rows():
            add = declare("add_rc_i32_256", source="k.cc", entry="add_rc<256>",
                          args=[buffer("src", Tensor[256, i32]),
                                buffer("dst", Tensor[256, i32], "out"),
                                scalar("r", i32), scalar("c", i32)],
                          reference=add_rc_ref, cycles=40, cost="one vector add per 16 values")
            src = local(Tensor[256, i32], name="src", initial=0)
            dst = local(Tensor[256, i32], name="dst")
            KEPT.clear()

            @herd(rows=2)
            def core(x, y):
                for r in loop(2):
                    KEPT.append(r)
                    add(src, dst, KEPT[0], 0)
        """)
    with pytest.raises(DesignError) as e:
        load_design(path)
    assert str(e.value).splitlines()[0] == (
        "d.py:24: error [loop]: the index of the loop(2) at line 22 is passed to kernel "
        "'add_rc_i32_256' (argument 2) by core[0,1], but it is core[0,0]'s (kept from that "
        "core's trace)")


def test_a_loop_no_scalar_type_can_count_says_to_split_it(design_file: DesignFile) -> None:
    design_file(CPP, "k.cc")  # (the tensors stay as they are: the check comes first)
    path = design_file(DESIGN.replace("ROWS", str(2 ** 33)).replace("R_TYPE", "i32"))
    with pytest.raises(DesignError) as e:
        check_design(load_design(path).ir)
    assert str(e.value).split(": ", 1)[1].splitlines()[-3:] == [
        "  limit: i32 values from -2147483648 to 2147483647",
        "  found: 8589934591",
        "  fix: split the loop in two, one inside the other (loop(a) around loop(b), a x b "
        "iterations), and pass both indices"]


def test_kernel_test_runs_the_indices_at_their_first_and_last_values(
        design_file: DesignFile) -> None:
    """kernel test ran a kernel a loop index reaches at index 0 alone: a C++ wrong for later
    indices (a causal mask's other blocks, a doubled index) passed (a tester). Each
    combination of first and last values runs, headed by the values."""
    path = _design(design_file)
    # the C++ wrong where r is 1: only a run at r's last value sees it
    (path.parent / "k.cc").write_text(CPP.replace("10 * r + c", "(r == 1 ? 20 : 10 * r) + c"))
    r = _kernel_test(path)
    assert r.returncode == 1, r.stdout + r.stderr
    heads = [ln for ln in r.stdout.splitlines() if ln.startswith("add_rc_i32_256 with")]
    assert heads == [
        "add_rc_i32_256 with r=0 (its loop's first index), c=0 (its loop's first index):",
        "add_rc_i32_256 with r=0 (its loop's first index), c=1 (its loop's last index):",
        "add_rc_i32_256 with r=1 (its loop's last index), c=0 (its loop's first index):",
        "add_rc_i32_256 with r=1 (its loop's last index), c=1 (its loop's last index):"]
    assert [ln.split(":")[0] for ln in r.stdout.splitlines()
            if ln.startswith(("PASS", "FAIL"))] == ["PASS add_rc_i32_256.dst"] * 2 + [
        "FAIL add_rc_i32_256.dst"] * 2
    assert r.stdout.splitlines()[-1].startswith("0 of 1 kernels match their references")


def test_kernel_test_runs_every_calls_own_loops(design_file: DesignFile) -> None:
    """The corners came from the kernel's first call alone (a reviewer): a second core's
    longer loop, and a call after one passing constants, were never run, and an index fed to
    two scalars was run at combinations no call makes. Each call's own loops now, each loop
    once."""
    design_file("#include <stdint.h>\n"
                "template <unsigned N> void add_rc(const int *a, int *b, int r, int c) {\n"
                "  for (unsigned i = 0; i < N; ++i) b[i] = a[i] + (r == 7 ? 0 : 10 * r) + c;\n"
                "}\n", "k.cc")
    path = design_file("""
        from aiedsl import Tensor, design, herd, i32, local, loop
        from aiedsl.kernels import buffer, declare, scalar

        def add_rc_ref(a, b, r, c):
            b[:] = a + 10 * r + c

        @design(device="npu1_1col")
        def two():
            add = declare("add_rc_i32_256", source="k.cc", entry="add_rc<256>",
                          args=[buffer("src", Tensor[256, i32]),
                                buffer("dst", Tensor[256, i32], "out"),
                                scalar("r", i32), scalar("c", i32)],
                          reference=add_rc_ref, cycles=40, cost="one vector add per 16 values")
            src = [local(Tensor[256, i32], name=f"src{i}", initial=0) for i in range(2)]
            dst = [local(Tensor[256, i32], name=f"dst{i}") for i in range(2)]

            @herd(rows=2)
            def core(x, y):
                if y == 0:
                    add(src[y], dst[y], 3, 1)
                for r in loop(2 if y == 0 else 8):
                    add(src[y], dst[y], r, r)
        """)
    out = _kernel_test(path)
    assert out.returncode == 1, out.stdout + out.stderr
    heads = [ln for ln in out.stdout.splitlines() if ln.startswith("add_rc_i32_256 with")]
    first, last = "its loop's first index", "its loop's last index"
    assert heads == ["add_rc_i32_256 with r=3, c=1:",
                     f"add_rc_i32_256 with r=0 ({first}), c=0 ({first}):",
                     f"add_rc_i32_256 with r=1 ({last}), c=1 ({last}):",
                     f"add_rc_i32_256 with r=7 ({last}), c=7 ({last}):"]
    results = [ln.split(":")[0] for ln in out.stdout.splitlines()
               if ln.startswith(("PASS", "FAIL"))]
    assert results == ["PASS add_rc_i32_256.dst"] * 3 + ["FAIL add_rc_i32_256.dst"]
    assert out.stdout.splitlines()[-1].startswith("0 of 1 kernels match their references")


def test_kernel_test_runs_each_set_of_constants_the_calls_pass(design_file: DesignFile
                                                               ) -> None:
    """Each core passing its own index as a constant: kernel test ran core 0's alone, and a
    C++ wrong for the others passed (a tester)."""
    design_file("#include <stdint.h>\n"
                "template <unsigned N> void add_rc(const int *a, int *b, int r, int c) {\n"
                "  for (unsigned i = 0; i < N; ++i) b[i] = a[i] + (c == 1 ? 0 : 10 * r + c);\n"
                "}\n", "k.cc")
    path = design_file("""
        from aiedsl import Tensor, design, herd, i32, local
        from aiedsl.kernels import buffer, declare, scalar

        def add_rc_ref(a, b, r, c):
            b[:] = a + 10 * r + c

        @design(device="npu1_1col")
        def two():
            add = declare("add_rc_i32_256", source="k.cc", entry="add_rc<256>",
                          args=[buffer("src", Tensor[256, i32]),
                                buffer("dst", Tensor[256, i32], "out"),
                                scalar("r", i32), scalar("c", i32)],
                          reference=add_rc_ref, cycles=40, cost="one vector add per 16 values")
            src = [local(Tensor[256, i32], name=f"src{i}", initial=0) for i in range(2)]
            dst = [local(Tensor[256, i32], name=f"dst{i}") for i in range(2)]

            @herd(rows=2)
            def core(x, y):
                add(src[y], dst[y], 2, y)
        """)
    out = _kernel_test(path)
    assert out.returncode == 1, out.stdout + out.stderr
    assert [ln for ln in out.stdout.splitlines() if not ln.startswith("  ")][:-1] == [
        "add_rc_i32_256 with r=2, c=0:",
        "PASS add_rc_i32_256.dst: exact (integers must match exactly)",
        "add_rc_i32_256 with r=2, c=1:",
        "FAIL add_rc_i32_256.dst: worst element [0] got 22978 want 22999 (|error| 21; integers "
        "must match exactly)"]
