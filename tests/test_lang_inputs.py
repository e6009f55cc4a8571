"""What a design hands the front end as it is commonly written: numpy's integers where sizes and
counts go, a dtype name or a K run given with ``-D``, ``@design`` or ``@herd`` without its
parentheses, a lambda, an ``async def`` or a generator as a herd's or a design's function,
keyword arguments to a kernel call, a helper defined below the design, an error deep in a helper.
Each is taken, or refused word for word."""

from __future__ import annotations

import re
import sys
import warnings
from pathlib import Path
from typing import Callable

import numpy as np
import pytest

from aiedsl.checks import check_design
from aiedsl.codegen.mlir import render_mlir
from aiedsl.errors import DesignError
from aiedsl.loader import load_design
from aiedsl.sim import simulate
from aiedsl.targets import get_target
from aiedsl.values import as_int, shown

DEF = 0 if sys.version_info >= (3, 11) else 1
"""Lines past a decorator Python reports for the frame applying it: 3.10 gives the def's."""

DesignFile = Callable[..., Path]
ROOT = Path(__file__).resolve().parent.parent


# -- numpy's integers ------------------------------------------------------------------------------

def test_as_int_takes_what_python_takes_as_an_index() -> None:
    assert [as_int(v) for v in (7, np.int64(1024), np.prod((32, 32)), np.uint8(3),
                                np.array(5))] == [7, 1024, 1024, 3, 5]
    assert all(type(as_int(v)) is int for v in (np.int64(1), np.int8(2)))
    # never a bool, a float (a whole one neither: / where // was meant), a str or an array
    assert [as_int(v) for v in (True, np.True_, 4.0, np.float64(4.0), "4", np.array([4]),
                                None)] == [None] * 7
    assert shown(np.int64(0)) == "0" and shown(np.float64(2.5)) == "2.5"
    assert shown((np.int64(0), [np.int64(4096)], [np.int64(1)])) == "(0, [4096], [1])"


def _numpy_defines(text: str) -> str:
    """A design whose integer defines are numpy's: ``N = np.int64(define("N", 4096, ...))``,
    on the same lines (the IR's locations stay)."""
    out = []
    for line in text.splitlines():
        m = re.fullmatch(r'(\w+) = (define\("\w+", \d+.*\))', line)
        out.append(f"{m[1]} = __import__('numpy').int64({m[2]})" if m else line)
    return "\n".join(out) + "\n"


@pytest.mark.parametrize("name", sorted(p.name for p in (ROOT / "designs").glob("*.py")))
def test_a_design_computing_its_sizes_in_numpy_makes_the_same_ir_and_mlir(
        design_file: DesignFile, name: str) -> None:
    """Every size, count, depth, index and pattern a shipped design computes from its defines
    comes as a numpy integer when the defines are numpy's (Tensor sizes, herd cols and rows,
    loop counts, channel shapes, matmul tiles, tiles(), gemm_runtime, staged_inputs): the design
    is taken, and the IR and the MLIR are the plain ints' (1024, never np.int64(1024))."""
    original = (ROOT / "designs" / name).read_text()
    changed = _numpy_defines(original)
    assert changed.count("int64(define(") >= 2, "the transform found the defines"
    kernels = ROOT / "kernels_cpp"
    path = design_file(changed, name)
    for cc in kernels.glob("*.cc"):  # a design's own C++ sits beside it
        (path.parent / cc.name).write_text(cc.read_text())
    numpy_ir = load_design(path).ir
    design_file(original, name)
    plain_ir = load_design(path).ir
    assert numpy_ir.model_dump_json() == plain_ir.model_dump_json()
    assert "np.int" not in numpy_ir.model_dump_json()
    placed, _ = check_design(numpy_ir)
    plain_placed, _ = check_design(plain_ir)
    target = get_target(placed.device)
    assert render_mlir(placed, target) == render_mlir(plain_placed, target)


EVERY_KIND = '''
    import numpy as np

    from aiedsl import (Tensor, barrier, channel, design, fifo, herd, i32, join, loop, memtile,
                        rtp, runtime, shim, tiles, u8)
    from aiedsl.kernels import add, passthrough, threshold

    I = {kind}  # every integer below goes through it

    @design(device="npu1_2col")
    def d(a: Tensor[I(64), I(64), i32], b: Tensor[I(4096), i32], c: Tensor[I(4096), i32],
          p: Tensor[I(1024), u8], q: Tensor[I(1024), u8]):
        ins = fifo(Tensor[I(1024), i32], depth=I(2), consumer_depth=I(2), shim=shim(I(0)))
        halves = ins.split(I(2), offsets=[I(0), I(512)], via=memtile(I(0)), repeat=I(1))
        other = channel(Tensor[I(512), i32], shape=[I(2)], via=memtile, split=I(0),
                        broadcast=I(1), depth=I(2), host_depth=I(2))
        outs = [fifo(Tensor[I(512), i32], name=f"o{{i}}") for i in range(2)]
        joined = join(outs, offsets=[I(0), I(512)], depth=I(2))
        k = add(Tensor[I(512), i32])
        px, qx = fifo(Tensor[I(512), u8], name="px"), fifo(Tensor[I(512), u8], name="qx")
        thr = rtp(Tensor[I(16), i32], name="thr")
        go = barrier(name="go", initial=I(0))
        trunc = threshold(I(512))

        @herd(cols=I(2), rows=I(1), anchor=(I(0), I(2)), stack=I(1024))
        def core(x, y):
            for _ in loop(I(4)):
                with halves[x].consume(I(1)) as h, other[x].consume() as o, \\
                        outs[x].produce() as r:
                    k(h[I(0)], o, r)

        @herd(anchor=(I(1), I(3)))
        def gate():
            for _ in loop(I(2)):
                go.wait_for_value(I(1))
                with px.consume() as s, qx.produce() as t:
                    trunc(s, t, thr[I(0)], I(512))

        with runtime() as rt:
            rt.rtp_write(thr, I(0), I(7))
            rt.set_barrier(go, I(1))
            rt.fill(ins, b)
            rt.fill(other[:], c, (I(0), [I(4096)], [I(1)]))
            rt.fill(px, p, (I(0), [I(512)], [I(1)]))
            rt.drain(qx, q, (I(0), [I(512)], [I(1)]))
            rt.drain(joined, b)
            rt.sync()
            rt.set_barrier(go, I(1))
            rt.fill(px, p, (I(512), [I(512)], [I(1)]))
            rt.drain(qx, q, (I(512), [I(512)], [I(1)]))
    '''


def test_numpy_integers_everywhere_a_design_gives_one_make_the_same_ir(
        design_file: DesignFile) -> None:
    """Splits, offsets, channels, rtps, barriers, pins, anchors, stacks, acquires, buffer
    indices, kernel scalars and runtime patterns, each given as np.int64: the design is the
    one written with Python's ints."""
    path = design_file(EVERY_KIND.format(kind="np.int64"))
    numpy_ir = load_design(path).ir.model_dump_json()
    design_file(EVERY_KIND.format(kind="int"))
    assert numpy_ir == load_design(path).ir.model_dump_json()


def test_numpy_integers_are_plain_ints_in_the_trace(design_file: DesignFile) -> None:
    """The values the front end keeps (a fifo's depth, a repeat, a pattern) are plain ints."""
    path = design_file('''
        import numpy as np

        from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
        from aiedsl.kernels import passthrough

        @design(device="npu1_1col")
        def pt(inp: Tensor[np.int64(4096), i32], out: Tensor[4096, i32]):
            a = fifo(Tensor[np.prod((32, 32)), i32], depth=np.int8(2))
            b = a.forward(depth=np.int64(3), repeat=np.int32(1))
            c = fifo(Tensor[1024, i32], depth=np.uint8(2))
            d = c.forward()
            copy = passthrough(Tensor[1024, i32])

            @herd(cols=np.int32(1), rows=np.int64(1), stack=np.int64(2048))
            def core():
                for _ in loop(np.int64(4096) // 1024):
                    with b.consume(np.int64(1)) as src, c.produce() as dst:
                        copy(src[np.int64(0)], dst)

            with runtime() as rt:
                rt.fill(a, inp, (np.int64(0), [np.int64(4096)], [np.int64(1)]))
                rt.drain(d, out, wait=True)
        ''')
    d = load_design(path).ir
    dumped = d.model_dump_json()
    assert "np." not in dumped and "int64" not in dumped
    assert [(f.name, f.producer.depth, f.elem.shape) for f in d.fifos][:2] == [
        ("a", 2, (1024,)), ("a_fwd", 3, (1024,))]
    check_design(d)


@pytest.mark.parametrize("line, message", [
    ("    a = fifo(Tensor[np.int64(0), i32])",
     "d.py:7: error [tensor type]: Tensor size 0 is not a positive integer\n"
     "  found: 0\n"
     "  fix: sizes are positive ints, e.g. Tensor[1024, i32]"),
    ("    a = fifo(Tensor[np.float64(1024.0), i32])",
     "d.py:7: error [tensor type]: Tensor size 1024.0 is not a positive integer\n"
     "  found: 1024.0\n"
     "  fix: sizes are positive ints; use // for integer division"),
    ("    a = fifo(Tensor[np.prod((32, 32)), i32], depth=np.int64(64))",
     "d.py:7: error [fifo depth]: fifo 'a' has depth=64\n"
     "  limit: an integer from 1 to 63 (a lock starts at the depth and counts to 63)\n"
     "  found: 64\n"
     "  fix: use 1 (single), 2 (double buffering) or a few more"),
    ("    a = fifo(Tensor[1024, i32], depth=np.True_)",
     "d.py:7: error [fifo depth]: fifo 'a' has depth=True\n"
     "  limit: an integer from 1 to 63 (a lock starts at the depth and counts to 63)\n"
     "  found: True\n"
     "  fix: use 1 (single), 2 (double buffering) or a few more"),
])
def test_a_refused_numpy_value_is_shown_plainly(design_file: DesignFile, line: str,
                                                 message: str) -> None:
    """Refused, a numpy value reads as the number it is ('0', not 'np.int64(0)'), and the fix
    fits what was found: a 0 gets no advice about //."""
    path = design_file(f'''
        import numpy as np

        from aiedsl import Tensor, design, fifo, i32

        @design(device="npu1_1col")
        def pt(inp: Tensor[1024, i32]):
        {line}
        ''')
    with pytest.raises(DesignError) as e:
        load_design(path)
    assert str(e.value) == message


def test_a_refused_numpy_loop_count_is_shown_plainly(design_file: DesignFile) -> None:
    path = design_file('''
        import numpy as np

        from aiedsl import Tensor, design, herd, i32, loop

        @design(device="npu1_1col")
        def pt(inp: Tensor[1024, i32]):
            @herd()
            def core():
                for _ in loop(np.int64(0)):
                    pass
        ''')
    with pytest.raises(DesignError) as e:
        load_design(path)
    assert str(e.value) == (
        "d.py:9: error [loop]: loop(0) needs a positive integer count\n"
        "  found: 0\n"
        "  fix: leave the loop out where its count is 0: a Python `if` around it in the core "
        "function (decided while tracing, so nothing of it is emitted)")


@pytest.mark.parametrize("count, found", [
    ("tiles", "the function tiles"), ("copy", "a Kernel"),
    ("rtp", "the function rtp")])
def test_a_refused_object_is_named_not_dumped(design_file: DesignFile, count: str,
                                                found: str) -> None:
    """loop(tiles) showed <function tiles at 0x7ff9...>, an address that differs from run to
    run, and loop(copy) a kernel's 1.8 KB repr (a tester)."""
    path = design_file(f'''
        from aiedsl import Tensor, design, herd, i32, loop, rtp, tiles
        from aiedsl.kernels import passthrough

        @design(device="npu1_1col")
        def pt(inp: Tensor[1024, i32]):
            copy = passthrough(Tensor[1024, i32])

            @herd()
            def core():
                for _ in loop({count}):
                    pass
        ''')
    with pytest.raises(DesignError) as e:
        load_design(path)
    assert str(e.value) == (
        f"d.py:10: error [loop]: loop({found}) needs a positive integer count\n"
        f"  found: {found}\n"
        "  fix: use an integer >= 1 (// divides exactly)")


def test_a_refused_numpy_pattern_is_shown_plainly(design_file: DesignFile) -> None:
    path = design_file('''
        import numpy as np

        from aiedsl import Tensor, design, fifo, i32, runtime

        @design(device="npu1_1col")
        def pt(inp: Tensor[1024, i32]):
            a = fifo(Tensor[1024, i32])
            with runtime() as rt:
                rt.fill(a, inp, (np.int64(0), [np.float64(1024)], [np.int64(1)]))
        ''')
    with pytest.raises(DesignError) as e:
        load_design(path)
    assert str(e.value) == (
        "d.py:9: error [dma pattern]: pattern (0, [1024.0], [1]) is not (offset, sizes, "
        "strides) with 1-4 dims\n"
        "  limit: ints: an offset, then as many sizes as strides\n"
        "  fix: write (offset, [sizes...], [strides...]) outermost first, in elements, or use "
        "tiles(...)")


def test_a_library_kernel_size_that_is_no_int_names_the_size() -> None:
    """scale(1024.0) was refused as the kernel's own scalar equals=1024.0, a name the design
    never wrote; numpy's integers are taken (the symbol reads scale_i16_1024)."""
    from aiedsl.kernels import reduce_sum, scale

    with pytest.raises(DesignError) as e:
        scale(1024.0)
    assert (e.value.message, e.value.limit, e.value.found, e.value.fix) == (
        "scale has n=1024.0", "a positive int", "1024.0",
        "give the tile's size as an int (// divides exactly)")
    assert scale(np.int64(1024)).ir == scale(1024).ir
    assert reduce_sum(np.int64(4), np.int32(64)).ir == reduce_sum(4, 64).ir


def test_a_library_kernel_given_no_tensor_type_says_what_it_takes(
        design_file: DesignFile) -> None:
    """passthrough(1024) failed with "AttributeError: 'int' object has no attribute 'dt'" and
    relu((1024,)) with "'tuple' object has no attribute 'dtype'" (a tester): a size, a shape or
    a dtype where the buffers' type goes is refused at the design's line, saying what it takes."""
    path = design_file('''
        from aiedsl import Tensor, design, i32
        from aiedsl.kernels import passthrough as copy_kernel

        @design(device="npu1_1col")
        def d(inp: Tensor[1024, i32]):
            copy = copy_kernel(1024)
        ''')
    with pytest.raises(DesignError) as e:
        load_design(path)
    assert str(e.value) == (
        "d.py:6: error [kernel]: passthrough takes the element type, Tensor[1024, i32], not "
        "1024\n"
        "  limit: a Tensor[...] type\n"
        "  found: 1024\n"
        "  fix: give it the type of the buffers it is called with (the fifo's element type), "
        "e.g. Tensor[1024, i32]")
    from aiedsl.dtypes import bf16
    from aiedsl.kernels import add, mul, relu, sub, vector_scalar, zero

    for call, kernel, value, example in [
            (lambda: relu((1024,)), "relu", "(1024,)", "Tensor[1024, i32]"),
            (lambda: zero(np.int64(64)), "zero", "64", "Tensor[64, i32]"),
            (lambda: add([32, 32]), "add", "[32, 32]", "Tensor[32, 32, i32]"),
            (lambda: sub(bf16), "sub", "bf16", "Tensor[1024, bf16]"),
            (lambda: mul("i32"), "mul", "'i32'", "Tensor[1024, i32]"),
            (lambda: vector_scalar("mul", None), "vector_scalar", "None", "Tensor[1024, i32]")]:
        with pytest.raises(DesignError) as e:
            call()
        assert (e.value.message, e.value.found) == (
            f"{kernel} takes the element type, {example}, not {value}", value)


def test_a_numpy_array_in_a_message_is_shown_by_its_shape_and_type(
        design_file: DesignFile) -> None:
    """buffer("src", np.zeros(256, np.int32)) printed all 256 zeros, twice (a tester): an
    array, alone or in a list, is named by its shape and type."""
    assert shown(np.zeros(256, np.int32)) == "an ndarray of shape (256,) int32"
    assert shown([np.zeros((2, 3)), np.int64(1)]) == "[an ndarray of shape (2, 3) float64, 1]"
    assert shown(np.array(5)) == "5"
    path = design_file('''
        import numpy as np
        from aiedsl import Tensor, design, i32
        from aiedsl.kernels import buffer, declare

        @design(device="npu1_1col")
        def d(inp: Tensor[256, i32]):
            k = declare("k", source="k.cc", args=[buffer("src", np.zeros(256, np.int32))])
        ''')
    with pytest.raises(DesignError) as e:
        load_design(path)
    assert str(e.value) == (
        "d.py:7: error [kernel signature]: buffer 'src' has the type an ndarray of shape (256,) "
        "int32\n"
        "  limit: a Tensor[...] type\n"
        "  found: an ndarray of shape (256,) int32\n"
        '  fix: write e.g. buffer("src", Tensor[1024, i32])')


# -- a dtype name given with -D --------------------------------------------------------------------

def test_a_dtype_name_from_the_command_line_names_its_define(in_root: Path) -> None:
    with pytest.raises(DesignError) as e:
        load_design("designs/gemm_bf16.py", {"OUT": "f16"})
    assert str(e.value) == (
        "designs/gemm_bf16.py:34: error [tensor type]: unknown element type 'f16' (the value "
        "of -D OUT)\n"
        "  limit: one of i8, u8, i16, u16, i32, u32, bf16, f32 (numpy's too: int16, np.int16)\n"
        "  found: 'f16'\n"
        "  fix: give -D OUT one of the dtype names i8, u8, i16, u16, i32, u32, bf16, f32")
    assert load_design("designs/gemm_bf16.py", {"OUT": "bf16"}).ir.tensor("C").type.dtype == \
        "bf16"


def test_a_dtype_name_a_define_defaults_to_names_the_define(design_file: DesignFile) -> None:
    path = design_file('''
        from aiedsl import Tensor, define, design

        T = define("T", "int64")

        @design(device="npu1_1col")
        def pt(inp: Tensor[1024, T]):
            pass
        ''')
    with pytest.raises(DesignError) as e:
        load_design(path)
    assert str(e.value).splitlines()[0] == (
        "d.py:6: error [tensor type]: unknown element type 'int64' (the value of define 'T')")
    assert e.value.fix == ("give define 'T' one of the dtype names i8, u8, i16, u16, i32, u32, bf16, f32, "
                           "in its default or with -D T=...")


def test_a_dtype_name_written_in_the_file_gets_both_ways(design_file: DesignFile) -> None:
    path = design_file('''
        from aiedsl import Tensor, design

        @design(device="npu1_1col")
        def pt(inp: Tensor[1024, "f16"]):
            pass
        ''')
    with pytest.raises(DesignError) as e:
        load_design(path)
    assert e.value.fix == ("use a dtype name, one of i8, u8, i16, u16, i32, u32, bf16, f32, or an aiedsl "
                           "dtype (from aiedsl import i32, bf16, ...); from the command line, "
                           "-D NAME= takes a dtype name")


# -- a K run given with -D -------------------------------------------------------------------------

def test_a_k_run_from_the_command_line_names_its_define_and_the_nearest_that_work(
        in_root: Path) -> None:
    """'k_run=96 is not a multiple of the core's k=64 ... e.g. k_run=256': the library's
    parameter and a value far from the one given (a tester)."""
    with pytest.raises(DesignError) as e:
        load_design("designs/gemm_bf16.py", {"K_MT": "96"})
    assert str(e.value) == (
        "designs/gemm_bf16.py:38: error [gemm inputs]: K_MT=96, the K run each memtile element "
        "stages, is not a multiple of the core's k=64\n"
        "  limit: a multiple of 64: the memtile hands the cores whole tiles, 64x64 of A and 64x64 "
        "of B\n"
        "  found: K_MT=96\n"
        "  fix: give -D K_MT=64 or -D K_MT=128 (the multiples of 64 nearest 96)")
    for value in ("64", "128"):  # the fix works
        check_design(load_design("designs/gemm_bf16.py", {"K_MT": value}).ir)
    with pytest.raises(DesignError) as e:
        load_design("designs/gemm_bf16.py", {"K_MT": "32"})
    assert e.value.fix == "give -D K_MT=64 (the multiple of 64 nearest 32)"


def test_a_k_run_that_does_not_divide_k_names_the_runs_that_do(in_root: Path) -> None:
    with pytest.raises(DesignError) as e:
        load_design("designs/gemm_bf16.py", {"K_MT": "192"})
    assert e.value.fix == ("make K a multiple of 192, or stage a K run that divides K=512: "
                           "-D K_MT=128 or -D K_MT=256 (the multiples of k=64 nearest 192 that "
                           "do)")
    for value in ("128", "256"):
        check_design(load_design("designs/gemm_bf16.py", {"K_MT": value}).ir)


def test_a_k_run_written_as_an_expression_is_shown_as_written(design_file: DesignFile) -> None:
    text = (ROOT / "designs" / "gemm_bf16.py").read_text()
    path = design_file(text.replace("k_run=K_MT,", "k_run=K_MT + 32,"))
    with pytest.raises(DesignError) as e:
        load_design(path, {"K_MT": "128"})
    assert e.value.message == ("k_run=K_MT + 32=160, the K run each memtile element stages, is "
                               "not a multiple of the core's k=64")
    assert e.value.fix == "give k_run=128 or k_run=192 (the multiples of 64 nearest 160)"


# -- @design written bare --------------------------------------------------------------------------

BARE = '''
    from aiedsl import Tensor, design, i32

    @design
    def pt(inp: Tensor[1024, i32]):
        pass
    '''


@pytest.mark.parametrize("after", ["", "\n@pt.reference\ndef reference(inp):\n    return inp\n"])
def test_design_without_parentheses_is_refused_at_the_decorator(design_file: DesignFile,
                                                                after: str) -> None:
    """'declares no @design' at line 1, or, with a reference below, 'AttributeError: 'function'
    object has no attribute 'reference'' at the reference's line (a tester)."""
    path = design_file(BARE + after.replace("\n", "\n    "))
    with pytest.raises(DesignError) as e:
        load_design(path)
    assert str(e.value) == (
        "d.py:3: error [design]: @design is applied to 'pt' without its parentheses\n"
        "  limit: @design(...) makes the decorator: bare, it would take the function for its "
        "device and declare no design\n"
        "  found: @design\n"
        "  fix: write @design(device=\"npu1\") (the device it runs on: npu1, npu1_1col..3col, "
        "npu2, npu2_1col..7col; --device overrides it)")


def test_following_the_fix_of_a_bare_design_loads(design_file: DesignFile) -> None:
    path = design_file(BARE.replace("@design\n", '@design(device="npu1")\n'))
    assert load_design(path).ir.device == "npu1"


def test_herd_without_parentheses_is_refused_at_the_decorator(design_file: DesignFile) -> None:
    """Bare, @herd took the function for its cols and traced no core: the design then failed
    on a fifo with no consumer, far from the mistake."""
    path = design_file('''
        from aiedsl import Tensor, design, herd, i32

        @design(device="npu1_1col")
        def pt(inp: Tensor[1024, i32]):
            @herd
            def core():
                pass
        ''')
    with pytest.raises(DesignError) as e:
        load_design(path)
    assert str(e.value) == (
        "d.py:5: error [herd]: @herd is applied to 'core' without its parentheses\n"
        "  limit: @herd(...) makes the decorator: bare, it would take the function for its cols "
        "and trace no core\n"
        "  found: @herd\n"
        "  fix: write @herd() for one core, or @herd(cols=..., rows=...)")


def test_a_herd_declared_in_a_core_function_is_refused(design_file: DesignFile) -> None:
    """A @herd inside a core function was traced as one more herd, idle, without a word (a
    tester)."""
    path = design_file('''
        from aiedsl import Tensor, design, herd, i32

        @design(device="npu1_1col")
        def pt(inp: Tensor[1024, i32]):
            @herd()
            def core():
                @herd()
                def inner():
                    pass
        ''')
    with pytest.raises(DesignError) as e:
        load_design(path)
    assert str(e.value) == (
        "d.py:7: error [herd]: herd 'inner' is declared inside the core function of herd "
        "'core'\n"
        "  limit: a herd is declared in the design function: a core function is its core's "
        "program, traced once per core, and declares no cores\n"
        "  found: @herd inside herd 'core'\n"
        "  fix: move the @herd and its function out into the @design function, beside the "
        "other herds")


# -- a lambda or an async def as a core function ---------------------------------------------------

CORE = '''
    from aiedsl import Tensor, design, herd, i32

    @design(device="npu1_1col")
    def pt(inp: Tensor[1024, i32]):
        {core}
    '''


def test_a_lambda_herd_is_asked_for_a_name(design_file: DesignFile) -> None:
    """'fix: rename it, e.g. lambda' named a keyword (a tester)."""
    path = design_file(CORE.format(core="herd()(lambda: None)"))
    with pytest.raises(DesignError) as e:
        load_design(path)
    assert str(e.value) == (
        "d.py:5: error [name]: the herd's function is a lambda, which has no name to give the "
        "herd\n"
        "  limit: a herd is named after its function, or by name=\n"
        "  found: <lambda>\n"
        "  fix: name it: herd(name=\"core\")(lambda ...), or write the function with def")
    path.write_text(path.read_text().replace("herd()(", "herd(name='core')("))
    assert [h.name for h in load_design(path).ir.herds] == ["core"]


def test_a_name_suggested_in_a_fix_is_no_keyword() -> None:
    from aiedsl.lang.names import check_name

    for bad, suggested in (("<lambda>", "lambda_1"), ("class!", "class_1"), ("x-y", "x_y")):
        with pytest.raises(DesignError) as e:
            check_name(bad, "herd name", None)
        assert e.value.fix == f"rename it, e.g. {suggested}"


@pytest.mark.parametrize("core, found, kind, how, fix", [
    ("async def core():", "async def core(...)", "an async def",
     "an async def only makes a coroutine, which nothing awaits",
     "write a plain def core(...) without async: aiedsl calls it and nothing awaits it"),
    ("def core():\n            yield", "yield in core()", "a generator (a yield in its body)",
     "a function with yield only makes a generator, which nothing iterates",
     "write a plain def core(...) without yield: its body records the program as it runs, and "
     "returns nothing"),
])
def test_a_core_function_that_would_not_run_is_refused_at_its_def(
        design_file: DesignFile, core: str, found: str, kind: str, how: str, fix: str) -> None:
    """An async core leaked 'aiedsl/lang/core.py:-1: RuntimeWarning: coroutine ... was never
    awaited' and then a fifo error; its body never ran."""
    path = design_file(CORE.format(core=f"@herd()\n        {core}\n            pass"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no RuntimeWarning from inside aiedsl either
        with pytest.raises(DesignError) as e:
            load_design(path)
    assert str(e.value) == (
        f"d.py:6: error [herd]: core function 'core' is {kind}\n"
        f"  limit: @herd traces the function by calling it: called, {how}, and none of its body "
        "would run\n"
        f"  found: {found}\n"
        f"  fix: {fix}")


def test_a_design_function_with_yield_is_refused_at_its_def(design_file: DesignFile) -> None:
    """A yield in the design function made it a generator: nothing was traced, and the error
    was the reference's 'cannot be called with 0 argument(s)'."""
    path = design_file(CORE.format(core="yield 5"))
    with pytest.raises(DesignError) as e:
        load_design(path)
    assert str(e.value).splitlines()[0] == (
        "d.py:4: error [design]: design function 'pt' is a generator (a yield in its body)")


PASSTHROUGH_DEF = "def passthrough(inp: Tensor[N, i32], out: Tensor[N, i32]):"
LIMIT_POSITIONAL = ("one plain parameter per host tensor, annotated with its Tensor type: "
                    "@design passes the tensors by position, in order")


@pytest.mark.parametrize("params, message, found, fix", [
    ("inp: Tensor[N, i32], *, out: Tensor[N, i32]", "'out' as a keyword-only parameter",
     "*, out", "remove the `*` before it: def passthrough(inp: Tensor[4096, i32], out: "
     "Tensor[4096, i32])"),
    ("*tensors: Tensor[N, i32]", "'tensors' as a *args parameter", "*tensors",
     "name each host tensor as a parameter of its own in place of *tensors, e.g. def "
     "passthrough(inp: Tensor[1024, i32], out: Tensor[1024, i32])"),
    ("inp: Tensor[N, i32], out: Tensor[N, i32], **more", "'more' as a **kwargs parameter",
     "**more", "name each host tensor as a parameter of its own in place of **more, e.g. def "
     "passthrough(inp: Tensor[1024, i32], out: Tensor[1024, i32])")])
def test_a_design_parameter_not_taken_by_position_is_refused_at_its_def(
        design_file: DesignFile, params: str, message: str, found: str, fix: str) -> None:
    """def passthrough(inp, *, out) said "TypeError: passthrough() takes 1 positional argument
    but 2 were given" (a tester): @design passes the host tensors by position."""
    text = (ROOT / "designs" / "passthrough.py").read_text()
    assert text.count(PASSTHROUGH_DEF) == 1
    path = design_file(text.replace(PASSTHROUGH_DEF, f"def passthrough({params}):"))
    with pytest.raises(DesignError) as e:
        load_design(path)
    assert str(e.value) == (
        f"d.py:17: error [design]: design 'passthrough' takes {message}\n"
        f"  limit: {LIMIT_POSITIONAL}\n  found: {found}\n  fix: {fix}")
    positional_only = text.replace(PASSTHROUGH_DEF, "def passthrough(inp: Tensor[N, i32], /, "
                                   "out: Tensor[N, i32]):")
    assert load_design(design_file(positional_only)).inputs == ["inp"]


# -- keyword arguments to a kernel call ------------------------------------------------------------

def _scale_call(call: str) -> str:
    text = (ROOT / "designs" / "vector_scalar_mul.py").read_text()
    return text.replace("scale_k(src, dst, f, TILE)", call)


def test_a_kernel_call_takes_its_parameters_by_name(design_file: DesignFile) -> None:
    """scale_k(src, dst, f, n=TILE) was a TypeError from Kernel.__call__: the parameters'
    names are the ones declare() gave them, each once, so a call binds them as Python does."""
    irs = []
    for call in ("scale_k(src, dst, f, TILE)", "scale_k(src, dst, f, n=TILE)",
                 "scale_k(src, n=TILE, factor=f, dst=dst)"):
        irs.append(load_design(design_file(_scale_call(call))).ir.model_dump_json())
    assert irs[0] == irs[1] == irs[2]


@pytest.mark.parametrize("call, message", [
    ("scale_k(src, dst, f, m=TILE)",
     "d.py:30: error [kernel call]: kernel 'scale_i16_1024' has no parameter 'm'\n"
     "  limit: its parameters, in order: src, dst, factor, n\n"
     "  found: m=\n"
     "  fix: name one of its parameters (src, dst, factor, n), or pass the arguments by "
     "position in that order"),
    ("scale_k(src, dst, f, dst=TILE)",
     "d.py:30: error [kernel call]: parameter 'dst' of kernel 'scale_i16_1024' is given twice: "
     "as argument 1 and as dst=\n"
     "  limit: its parameters, in order: src, dst, factor, n\n"
     "  found: dst=\n"
     "  fix: give 'dst' once: by position or as dst=, not both"),
    ("scale_k(src, dst, n=TILE)",
     "d.py:30: error [kernel call]: the call of kernel 'scale_i16_1024' names n= but gives no "
     "factor\n"
     "  limit: every parameter up to the last one given (the C function takes them in order: "
     "src, dst, factor, n)\n"
     "  found: n=\n"
     "  fix: pass factor too: by position, or as factor=..."),
])
def test_a_kernel_call_by_a_wrong_name_names_the_parameters(design_file: DesignFile, call: str,
                                                            message: str) -> None:
    with pytest.raises(DesignError) as e:
        load_design(design_file(_scale_call(call)))
    assert str(e.value) == message


# -- helpers: defined below, and errors deep inside them -------------------------------------------

HELPER_BELOW = '''
    from aiedsl import Tensor, design, i32

    @design(device="npu1_1col")
    def pt(inp: Tensor[1024, i32]):
        helper(3)


    def helper(v):
        return v
    '''


def test_a_helper_defined_below_the_design_is_told_to_move_up(design_file: DesignFile) -> None:
    path = design_file(HELPER_BELOW)
    with pytest.raises(DesignError) as e:
        load_design(path)
    assert str(e.value) == (
        "d.py:5: error [python error]: NameError: name 'helper' is not defined (while loading "
        "d.py)\n"
        f"  fix: move 'helper' above line {3 + DEF} (it is defined at line 8): @design runs the "
        "function "
        "where it is decorated, so the names it uses must be defined above it")


def test_a_name_defined_nowhere_keeps_the_plain_fix(design_file: DesignFile) -> None:
    path = design_file(HELPER_BELOW.replace("def helper(v)", "def other(v)"))
    with pytest.raises(DesignError) as e:
        load_design(path)
    assert e.value.fix == "fix the code at this line"


def test_an_error_deep_in_a_helper_shows_the_call_chain(design_file: DesignFile) -> None:
    """Only the innermost helper's line was named; which core called it was not."""
    path = design_file('''
        from aiedsl import Tensor, design, herd, i32


        def inner(v):
            return {}[v]


        def outer(v):
            return inner(v) + 1


        @design(device="npu1_1col")
        def pt(inp: Tensor[1024, i32]):
            @herd()
            def core():
                outer("k")
        ''')
    with pytest.raises(DesignError) as e:
        load_design(path)
    assert str(e.value) == (
        "d.py:5: error [python error]: KeyError: 'k' (while loading d.py: tracing core[0,0])\n"
        f"  d.py:{12 + DEF}: the module: @design runs pt()\n"
        f"  d.py:{14 + DEF}: pt(): aiedsl runs core()\n"
        "  d.py:16: core() calls outer()\n"
        "  d.py:9: outer() calls inner()\n"
        "  fix: fix the code at this line")


def test_a_design_error_in_a_helper_shows_the_call_chain(design_file: DesignFile) -> None:
    """A tester's: fifo(..., depth=0) inside a helper named the helper's line alone, where a
    Python error there shows who called it (the mistake may be the call's)."""
    path = design_file('''
        from aiedsl import Tensor, design, fifo, i32


        def make_fifo(n):
            return fifo(Tensor[n, i32], name="a", depth=0)


        @design(device="npu1_1col")
        def pt(inp: Tensor[1024, i32]):
            a = make_fifo(1024)
        ''')
    with pytest.raises(DesignError) as e:
        load_design(path)
    assert str(e.value) == (
        "d.py:5: error [fifo depth]: fifo 'a' has depth=0\n"
        "  limit: an integer from 1 to 63 (a lock starts at the depth and counts to 63)\n"
        "  found: 0\n"
        f"  d.py:{8 + DEF}: the module: @design runs pt()\n"
        "  d.py:10: pt() calls make_fifo()\n"
        "  fix: use 1 (single), 2 (double buffering) or a few more")


def test_a_recursion_shows_its_repeated_call_once(design_file: DesignFile) -> None:
    path = design_file('''
        from aiedsl import Tensor, design, i32


        def down(n):
            return down(n + 1)


        @design(device="npu1_1col")
        def pt(inp: Tensor[1024, i32]):
            down(0)
        ''')
    with pytest.raises(DesignError) as e:
        load_design(path)
    related = [(label, loc.line) for label, loc in e.value.related]
    assert related[:2] == [("the module: @design runs pt()", 8 + DEF), ("pt() calls down()", 10)]
    assert re.fullmatch(r"down\(\) calls down\(\) \(\d+ times\)", related[2][0])
    assert len(related) == 3


def test_an_error_in_the_core_function_itself_adds_no_lines(design_file: DesignFile) -> None:
    path = design_file(CORE.format(core="@herd()\n        def core():\n            1 // 0"))
    with pytest.raises(DesignError) as e:
        load_design(path)
    assert e.value.related == [] and e.value.loc is not None and e.value.loc.line == 7


def test_a_module_in_a_call_chain_is_imported_not_called() -> None:
    """A docs tester's: define() in a module the design imports said "d.py:4: the module calls
    the module" (Python drops importlib's frames, so the import line calls the module)."""
    from aiedsl.ir.loc import Loc
    from aiedsl.user_errors import _call_chain, _Frame

    frames = [_Frame(Loc(file="d.py", line=4), "<module>", "/w/d.py", False, False),
              _Frame(Loc(file="params.py", line=2), "<module>", "/w/params.py", True, False)]
    assert _call_chain(frames) == [("the module imports params", Loc(file="d.py", line=4))]


HERDS_BOUND_BY_DEFAULTS = '''
import numpy as np
from aiedsl import Tensor, design, fifo, herd, i32, runtime
from aiedsl.kernels import passthrough

@design(device="npu1_1col")
def d(A: Tensor[64, i32], B: Tensor[64, i32], C: Tensor[64, i32], D: Tensor[64, i32]):
    ins = [fifo(Tensor[64, i32], name=f"i{n}") for n in range(2)]
    outs = [fifo(Tensor[64, i32], name=f"o{n}") for n in range(2)]
    k = passthrough(Tensor[64, i32])
    for n in range(2):
        @herd(name=f"h{n}")
        def core(ARGS):
            with src.consume() as s, dst.produce() as t:
                k(s, t)

    with runtime() as rt:
        rt.fill(ins[0], A)
        rt.fill(ins[1], B)
        rt.drain(outs[0], C)
        rt.drain(outs[1], D)

@d.reference
def reference(A, B):
    return A, B
'''


def test_a_core_function_may_bind_values_by_defaults(design_file: Callable[..., Path]) -> None:
    """def core(x, y, src=ins[n], dst=outs[n]), Python's way of binding a loop's values, was
    refused as taking 4 arguments (a tester): a core function is called with the core index
    (x, y) when it takes two positional arguments and needs no more, and a 1x1 herd's with
    nothing when it needs nothing (its defaults are not overwritten with the index)."""
    for args in ("x, y, src=ins[n], dst=outs[n]", "src=ins[n], dst=outs[n]",
                 "x, y=0, src=ins[n], dst=outs[n]", "*xy, src=ins[n], dst=outs[n]",
                 "x=0, y=0, *, src=ins[n], dst=outs[n]"):
        r = simulate(load_design(design_file(HERDS_BOUND_BY_DEFAULTS.replace("ARGS", args))))
        assert r.passed, args
    for args, found in (("x, src=ins[n], dst=outs[n]", "core(x, src=<fifo i0: 64xi32>"),
                        ("x, y, z", "core(x, y, z)"),
                        ("x, y, *, src, dst=outs[n]", "core(x, y, *, src, dst=")):
        with pytest.raises(DesignError) as e:
            load_design(design_file(HERDS_BOUND_BY_DEFAULTS.replace("ARGS", args)))
        lines = str(e.value).splitlines()
        assert lines[:2] == [
            "d.py:11: error [herd]: core function 'core' cannot be called with the core "
            "index (x, y) or with nothing",
            "  limit: the core index (x, y) as its first two arguments, any others with defaults "
            "(def core(x, y, src=a[0]), as a loop binds them); a 1x1 herd's may take none"], args
        assert lines[2].startswith(f"  found: {found}"), lines[2]
        assert lines[3] == ("  fix: take the core index as (x, y), and give every other "
                            "argument a default")


def test_a_herd_core_function_with_index_defaults_or_a_partial(
        design_file: Callable[..., Path]) -> None:
    """def core(x=0, y=0) and def core(x, y=0) on a multi-core herd were refused for a while
    (a reviewer: accepted before), and a functools.partial of the wrong count was an
    AttributeError for its __name__."""
    gemm = (ROOT / "designs" / "gemm_bf16.py").read_text()
    for args in ("x=0, y=0", "x, y=0", "*xy"):
        text = gemm.replace("def core(x, y):", f"def core({args}):")
        if args == "*xy":
            text = text.replace("    def core(*xy):\n", "    def core(*xy):\n        x, y = xy\n")
        handle = load_design(design_file(text, f"g{len(args)}.py"), {"M": "256", "N": "256"})
        assert [c.name for c in handle.ir.cores][-1] == "core[3,3]"
    partial = gemm.replace("    @herd(cols=COLS, rows=ROWS)  # noqa: E306 (the lowering fixtures "
                           "pin these lines)\n    def core(x, y):",
                           "    import functools\n\n    def body(a, x, y):").replace(
        "    with runtime() as rt:",
        "    herd(cols=COLS, rows=ROWS)(functools.partial(body, 1, 2))\n\n    with runtime() as rt:")
    with pytest.raises(DesignError) as e:
        load_design(design_file(partial, "p.py"))
    assert str(e.value).splitlines()[0].endswith(
        "error [name]: the herd's function is a partial, which has no name to give the herd")
    with pytest.raises(DesignError) as e:
        load_design(design_file(partial.replace("herd(cols=COLS, rows=ROWS)(",
                                                'herd(cols=COLS, rows=ROWS, name="h")('), "q.py"))
    assert "core function 'partial' cannot be called with the core index (x, y)" in str(e.value)
    assert "  found: partial(y)" in str(e.value)


def test_an_error_in_one_core_of_a_herd_names_the_core(design_file: DesignFile) -> None:
    """An index past a list for the last column only (ins[x + 1]): the error names the core
    being traced and its index (a newcomer's tester: only "while loading d.py")."""
    path = design_file('''
        from aiedsl import Tensor, design, fifo, herd, i32, runtime

        @design(device="npu1_2col")
        def d(A: Tensor[512, i32]):
            ins = [fifo(Tensor[256, i32]) for _ in range(2)]

            @herd(cols=2)
            def core(x, y):
                with ins[x + 1].consume():
                    pass
        ''')
    with pytest.raises(DesignError) as e:
        load_design(path)
    assert str(e.value).splitlines()[0] == (
        "d.py:9: error [python error]: IndexError: list index out of range (while loading "
        "d.py: tracing core[1,0] at x=1, y=0)")
