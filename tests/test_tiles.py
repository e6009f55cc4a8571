"""tiles(): every pattern it returns passes the shim DMA rules and walks the tiles in order.

The rules are those of ``aiedsl/checks/dma/`` (``_check_transfer``, called here on a one-transfer
design); the order is compared with a naive tile-by-tile walk written below. When ``tiles()``
raises, a brute-force search over every 4-d factorisation of the walk must find no legal pattern
either. GEMM settings of ``designs/gemm_bf16.py`` (built on ``tiles`` via ``gemm_runtime``) pass
the whole checker.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from aiedsl import Tensor, design, tiles
from aiedsl.checks import check_design
from aiedsl.checks.dma.transfers import _check_transfer
from aiedsl.dtypes import dtype
from aiedsl.errors import DesignError
from aiedsl.ir.design import Design
from aiedsl.ir.loc import Loc
from aiedsl.ir.runtime import HostTensor, Transfer
from aiedsl.ir.types import Pattern, TensorType
from aiedsl.loader import load_design
from aiedsl.targets import TargetModel, get_target

ROOT = Path(__file__).resolve().parent.parent
NPU1 = get_target("npu1")
LOC = Loc(file="t.py", line=1)
Sel = int | range | None


# -- helpers -----------------------------------------------------------------------------------

def call_tiles(shape: tuple[int, int], dt: str, **kw: object) -> Pattern:
    """``tiles(A, **kw)`` inside a traced npu1 design whose one argument is ``A: shape x dt``."""
    got: list[Pattern] = []
    T = Tensor[shape[0], shape[1], dtype(dt)]  # type: ignore[valid-type, misc]  # A's annotation

    @design(device="npu1")
    def d(A: T) -> None:  # type: ignore[valid-type]
        got.append(tiles(A, **kw))  # type: ignore[arg-type]

    return got[0]


def dma_error(p: Pattern, shape: tuple[int, int], dt: str,
              target: TargetModel = NPU1) -> DesignError | None:
    """What ``checks/dma/`` says of ``rt.fill(.., A, p)`` for ``A: shape x dt``: None if legal."""
    tensor = HostTensor(name="A", index=0, type=TensorType(shape=shape, dtype=dt), loc=LOC)
    t = Transfer(op="fill", fifo="a", tensor="A", pattern=p, loc=LOC)
    d = Design(name="t", device=target.name, loc=LOC, tensors=(tensor,), fifos=(), herds=(),
               cores=(), runtime=(t,))
    try:
        _check_transfer(d, t, target)
    except DesignError as e:
        return e
    return None


def _sel(sel: Sel, n: int) -> range:
    return range(n) if sel is None else range(sel, sel + 1) if isinstance(sel, int) else sel


def naive_walk(shape: tuple[int, int], tile: tuple[int, int], rows: Sel = None, cols: Sel = None,
               order: str = "row", group: int = 1, repeat: int = 1) -> np.ndarray:
    """The element indices tiles() promises, tile by tile, each tile row by row."""
    H, W = shape
    tr, tc = tile
    grid = np.arange(H * W).reshape(H, W)
    rr, cr = _sel(rows, H // tr), _sel(cols, W // tc)
    if order == "row":
        spans = [(r * tr, tr, c) for r in rr for c in cr]
    elif order == "col":
        spans = [(r * tr, tr, c) for c in cr for r in rr]
    else:  # grouped: `group` tile rows stacked as one tall tile
        spans = [(rr[g] * tr, group * tr, c) for g in range(0, len(rr), group) for c in cr]
    once = np.concatenate([grid[r0:r0 + h, c * tc:(c + 1) * tc].ravel() for r0, h, c in spans])
    return np.tile(once, repeat)


@cache
def _divisors(n: int) -> tuple[int, ...]:
    small = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0]
    return tuple(sorted(set(small + [n // d for d in small])))


def brute_force(walk: np.ndarray, shape: tuple[int, int], dt: str,
                target: TargetModel = NPU1) -> Pattern | None:
    """Any 4-d pattern that visits ``walk`` in order and passes the DMA checks, else None.

    For given sizes, the walk fixes each stride (the index step after the inner dims' product),
    so trying every ordered factorisation of the length into 4 sizes covers every pattern. A few
    probed positions reject most sizes before the checker and the full comparison run.
    """
    total = len(walk)
    first = [int(q) for q in sorted({total - 1, total // 2, total // 3, 1, 2, 3, 5, 7})
             if q < total]
    probe = np.unique(np.concatenate([np.arange(min(total, 64)),
                                      np.linspace(0, total - 1, 193).astype(np.int64)]))

    def at(q: int, sizes: tuple[int, ...], strides: tuple[int, ...]) -> int:
        index = int(walk[0])
        for size, stride in zip(reversed(sizes), reversed(strides)):
            q, digit = divmod(q, size)
            index += digit * stride
        return index

    for s0 in _divisors(total):
        for s1 in _divisors(total // s0):
            for s2 in _divisors(total // (s0 * s1)):
                sizes = (s0, s1, s2, total // (s0 * s1 * s2))
                inner = [math.prod(sizes[i + 1:]) for i in range(4)]
                strides = tuple(int(walk[step] - walk[0]) if size > 1 else 0
                                for size, step in zip(sizes, inner))
                if any(at(q, sizes, strides) != walk[q] for q in first):
                    continue
                digits = np.unravel_index(probe, sizes)
                if not np.array_equal(walk[0] + sum(d * st for d, st in zip(digits, strides)),
                                      walk[probe]):
                    continue
                p = Pattern(offset=int(walk[0]), sizes=sizes,
                            strides=strides)  # type: ignore[arg-type]
                if dma_error(p, shape, dt, target) is None and np.array_equal(p.indices(), walk):
                    return p
    return None


# -- the reported case and a few by hand -------------------------------------------------------

def test_a_repeated_contiguous_run_stays_linear() -> None:
    """24x64 i32, 8x64 tiles, 3 times: 1,536 contiguous words per pass, repeated in the
    iteration dimension: still a linear transfer (mlir-aie's isLinearTransfer leaves the
    iteration dimension out), free of the 1,023-word wrap. It was split as (1, 3, 3, 512) with
    strides (0, 0, 512, 1): a stride-0 wrap dimension, which mlir-aie refuses."""
    p = call_tiles((24, 64), "i32", tile=(8, 64), repeat=3)
    assert (p.offset, p.sizes, p.strides) == (0, (3, 1, 1, 1536), (0, 0, 0, 1))
    assert dma_error(p, (24, 64), "i32") is None
    assert np.array_equal(p.indices(), naive_walk((24, 64), (8, 64), repeat=3))


def test_long_run_without_a_boundary_splits_at_a_divisor() -> None:
    """Column 0's 4x1,536 i32 tile of a 4x3,072 matrix: each 1,536-word row is longer than a
    wrap (1,023 words) and has no boundary inside, so it splits at its largest divisor within
    one: 768."""
    p = call_tiles((4, 3072), "i32", tile=(4, 1536), cols=0)
    assert (p.sizes, p.strides) == ((1, 4, 2, 768), (0, 3072, 768, 1))
    assert np.array_equal(p.indices(), naive_walk((4, 3072), (4, 1536), cols=0))


def test_repeat_over_64_raises() -> None:
    """70 repeats do not fit the iteration dimension (64), and no other dimension may step by
    0 (mlir-aie's verifyStridesWraps: 'Stride must be a positive integer'); tiles() put them in
    a wrap dimension before, which mlir-aie refuses."""
    with pytest.raises(DesignError, match=r"a repeat of 70 is more than the iteration "
                       r"dimension's 64 \(only that dimension may step by 0\)"):
        call_tiles((64, 64), "i16", tile=(32, 64), rows=1, repeat=70)


def test_repeat_over_64_with_a_4_dimension_tile_walk_raises() -> None:
    """Two 32x32 tiles take 3 dimensions, so the 70 repeats need the iteration dimension."""
    with pytest.raises(DesignError, match=r"a repeat of 70 is more than"):
        call_tiles((64, 64), "i16", tile=(32, 32), rows=0, repeat=70)


def test_i32_column_walks_one_word_at_a_time() -> None:
    """A one-element-wide i32 tile: 4-byte elements may step by whole words innermost."""
    p = call_tiles((8, 8), "i32", tile=(8, 1), cols=3)
    assert (p.offset, p.sizes, p.strides) == (3, (1, 1, 1, 8), (0, 0, 0, 8))
    assert dma_error(p, (8, 8), "i32") is None


def test_linear_transfer_stays_linear() -> None:
    p = call_tiles((64, 512), "i16", tile=(64, 512))
    assert (p.offset, p.sizes, p.strides) == (0, (1, 1, 1, 32768), (0, 0, 0, 1))


def test_impossible_walk_raises_at_the_users_line(design_file: Callable[..., Path]) -> None:
    """Five dimensions that do not merge (repeat, tile columns, tile rows by 2, rows, words)."""
    path = design_file('''
        from aiedsl import Tensor, design, i32, tiles

        @design(device="npu1")
        def d(A: Tensor[64, 64, i32]):
            tiles(A, (8, 8), rows=range(0, 8, 2), order="col", repeat=3)
        ''')
    with pytest.raises(DesignError) as excinfo:
        load_design(path)
    assert str(excinfo.value) == (
        "d.py:5: error [tiles]: no legal shim DMA pattern walks these tiles in this order: the "
        "walk has 5 nested dimensions that do not merge and a shim DMA has 3 plus an iteration "
        "dimension\n"
        "  limit: 3 dimensions (the innermost a contiguous run of at most 1023 4-byte words, the "
        "next at most 1023, the third any size) plus an iteration dimension of at most 64\n"
        "  found: the walk, merged: sizes [3, 8, 4, 8, 8], strides [0, 8, 1024, 64, 1] (4-byte "
        "elements)\n"
        "  fix: send the tiles in several fills or drains (fewer tiles or a smaller repeat each)"
    )


def test_unaligned_rows_raise() -> None:
    """i16 tile rows of 3 elements (6 bytes) are not whole words: no DMA pattern moves them."""
    with pytest.raises(DesignError, match=r"contiguous runs are 3 elements = 6 B, not whole "
                                          r"4-byte words"):
        call_tiles((4, 6), "i16", tile=(2, 3), cols=0)


def test_unaligned_offset_raises() -> None:
    """The walk starts at its first element: at byte 6 no DMA can."""
    with pytest.raises(DesignError, match=r"the first element \(index 3\) is at byte 6"):
        call_tiles((4, 6), "i16", tile=(2, 3), cols=1)


# -- the property: a legal pattern in the naive order, or a reasoned error when none exists ----

DTYPES = ["i8", "i16", "i32", "bf16", "f32"]
EXTENT = st.one_of(st.sampled_from([1, 2, 4, 8, 16, 32, 64, 128, 256]), st.integers(1, 96))


@st.composite
def selections(draw: st.DrawFn, n: int, contiguous: bool = False) -> Sel:
    """Tiles by index: None, one index, or a range (with a step unless ``contiguous``)."""
    kind = draw(st.sampled_from(["all", "one", "range"]))
    if kind == "all":
        return None
    start = draw(st.integers(0, n - 1))
    if kind == "one":
        return start
    step = 1 if contiguous else draw(st.integers(1, max(1, n - start)))
    stop = draw(st.integers(start + 1, n))
    return range(start, stop, step)


@st.composite
def cases(draw: st.DrawFn) -> dict[str, Any]:
    """A tiles() call on a 2-D tensor of at most 2^17 elements."""
    dt = draw(st.sampled_from(DTYPES))
    tc = draw(st.one_of(EXTENT, st.sampled_from([512, 1024, 2048])))
    tr = draw(EXTENT.filter(lambda tr: tr * tc <= 1 << 16))
    nr = draw(st.integers(1, max(1, min(16, (1 << 17) // (tr * tc)))))
    nc = draw(st.integers(1, max(1, min(16, (1 << 17) // (tr * tc * nr)))))
    order = draw(st.sampled_from(["row", "col", "grouped"]))
    rows = draw(selections(nr, contiguous=order == "grouped"))
    cols = draw(selections(nc))
    kw: dict[str, Any] = {"tile": (tr, tc), "rows": rows, "cols": cols, "order": order,
                          "repeat": draw(st.integers(1, 70))}
    if order == "grouped":
        count = len(_sel(rows, nr))
        kw["group"] = draw(st.sampled_from([g for g in _divisors(count)]))
    return {"shape": (nr * tr, nc * tc), "dt": dt, "kw": kw}


REASONS = {"nested dimensions": "more than 4 dimensions", "not whole": "runs not whole words",
           "single": "innermost not contiguous", "first element": "unaligned offset",
           "do not factor": "sizes do not factor", "a repeat of": "repeat over 64"}


def _reason(message: str) -> str:
    return next(r for key, r in REASONS.items() if key in message)


def check_case(case: dict[str, Any]) -> str:
    """Run one tiles() call; return "pattern" or the reason it raised (asserting it is right)."""
    shape, dt, kw = case["shape"], case["dt"], case["kw"]
    walk = naive_walk(shape, **kw)
    try:
        p = call_tiles(shape, dt, **kw)
    except DesignError as e:
        assert e.rule == "tiles" and "no legal shim DMA pattern" in e.message, str(e)
        found = brute_force(walk, shape, dt)
        assert found is None, f"tiles() raised but {found} is legal:\n{e}"
        return _reason(e.message)
    err = dma_error(p, shape, dt)
    assert err is None, f"tiles() returned a pattern the checker rejects:\n{err}"
    assert np.array_equal(p.indices(), walk), f"{p} does not visit the naive order"
    whole = merged(p)
    return "pattern" if whole is None or dma_error(whole, shape, dt) is None else "split pattern"


def merged(p: Pattern) -> Pattern | None:
    """``p`` with its contiguous neighbours merged (None over 4 dims): the pattern tiles() would
    give without splitting; when the checker rejects it, the split was needed."""
    dims: list[tuple[int, int]] = []
    for size, stride in reversed([d for d in zip(p.sizes, p.strides) if d[0] > 1]):
        if dims and stride == dims[0][0] * dims[0][1]:
            dims[0] = (size * dims[0][0], dims[0][1])
        else:
            dims.insert(0, (size, stride))
    if len(dims) > 4:
        return None
    dims = [(1, 0)] * (4 - len(dims)) + dims
    return Pattern(offset=p.offset, sizes=tuple(d[0] for d in dims),  # type: ignore[arg-type]
                   strides=tuple(d[1] for d in dims))  # type: ignore[arg-type]


def test_tiles_property() -> None:
    """300 generated calls: each returns a checked pattern in order (some only after a split),
    or raises when no pattern exists (so brute force finds none)."""
    outcomes: Counter[str] = Counter()

    @settings(max_examples=300, derandomize=True, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow])
    @given(cases())
    @example({"shape": (24, 64), "dt": "i32", "kw": {"tile": (8, 64), "repeat": 3}})
    def prop(case: dict[str, Any]) -> None:
        outcomes[check_case(case)] += 1

    prop()
    print(dict(outcomes))
    made = outcomes["pattern"] + outcomes["split pattern"]
    assert made > 200 and outcomes["split pattern"] > 20 and sum(outcomes.values()) > made + 20


# -- GEMM: gemm_runtime's patterns pass the checker --------------------------------------------

GEMM = ROOT / "designs" / "gemm_bf16.py"
GEMM_SETTINGS = [
    {"M": M, "K": K, "N": N, "m": m, "k": k, "n": n, "COLS": cols, "ROWS": rows}
    for (m, k, n), (cols, rows), (M, K, N) in itertools.product(
        itertools.product([32, 64], repeat=3), itertools.product(range(1, 5), repeat=2),
        [(256, 256, 256), (512, 1024, 2048), (384, 4096, 4096), (2048, 64 * 24, 8192)])
    if M % (m * rows) == 0 and K % k == 0 and N % (n * cols) == 0
]


@pytest.mark.parametrize("defines", GEMM_SETTINGS,
                         ids=["-".join(f"{k}{v}" for k, v in d.items()) for d in GEMM_SETTINGS])
def test_gemm_settings_pass_the_checker(defines: dict[str, int]) -> None:
    col_groups = defines["N"] // (defines["n"] * defines["COLS"])
    if -(-col_groups // 64) > 4:  # more fills per row group than a shim channel queues
        with pytest.raises(DesignError) as excinfo:
            load_design(GEMM, {k: str(v) for k, v in defines.items()})
        assert excinfo.value.rule == "gemm runtime"
        return
    check_design(load_design(GEMM, {k: str(v) for k, v in defines.items()}).ir)


def test_gemm_with_too_many_column_groups_says_so() -> None:
    """512 column groups: 8 fills each of A and B per row group, over a shim channel's queue
    of 4 tasks and a shim tile's 16 BDs."""
    defines = {"M": 256, "K": 256, "N": 16384, "m": 32, "k": 32, "n": 32, "COLS": 1, "ROWS": 1}
    with pytest.raises(DesignError) as excinfo:
        load_design(GEMM, {k: str(v) for k, v in defines.items()})
    e = excinfo.value
    assert (e.rule, e.loc and e.loc.line) == ("gemm runtime", 58), str(e)
    assert "512 column groups (N=16384 over 1 x n=32) need 8 fills each" in e.message


def test_a_pattern_made_for_another_matrix_is_refused(design_file: Callable[..., Path]) -> None:
    """A newcomer drained out (32x16) by tiles(inp, ...) (16x32): accepted, then a FAIL. A
    pattern tiles() made is remembered with its matrix; another shape is refused."""
    path = design_file('''
        from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime, tiles

        @design(device="npu1_1col")
        def d(inp: Tensor[16, 32, i32], out: Tensor[32, 16, i32], same: Tensor[16, 32, i32]):
            a = fifo(Tensor[8, 16, i32], name="a")
            b = fifo(Tensor[8, 16, i32], name="b")

            @herd()
            def core():
                for _ in loop(4):
                    with a.consume(), b.produce():
                        pass

            with runtime() as rt:
                walk = tiles(inp, (8, 16))
                rt.fill(a, inp, walk)
                rt.drain(b, out, walk)
        ''')
    with pytest.raises(DesignError) as e:
        load_design(path)
    assert str(e.value) == (
        "d.py:17: error [tiles]: rt.drain moves 'out' ([32, 16]) by a pattern tiles() made for "
        "'inp' ([16, 32])\n"
        "  limit: a tiles() pattern walks the matrix it was made for (its offsets and strides "
        "are that shape's)\n"
        "  found: tiles(inp, ...)\n"
        "  fix: make it with tiles(out, ...)")


TWO_D = '''
    import numpy as np
    from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime, tiles

    @design(device="npu1_1col")
    def d(inp: Tensor[64, 64, i32]):
        a = fifo(Tensor[32, 32, i32], name="a")

        @herd()
        def core():
            for _ in loop(4):
                with a.consume():
                    pass

        with runtime() as rt:
            rt.fill(a, inp, PATTERN)
    '''


@pytest.mark.parametrize("first, found", [
    ("a", "the fifo 'a'"), ("np.zeros((64, 64))", "an ndarray of shape (64, 64) float64"),
    ("None", "None")])
def test_tiles_of_anything_but_a_tensor_or_its_shape_is_refused(
        design_file: Callable[..., Path], first: str, found: str) -> None:
    """rt.fill(a, inp, tiles(a, (32, 32))), the fifo where the tensor goes, said "TypeError:
    'ObjectFifo' object is not iterable"; an ndarray was walked as a list of its rows and
    printed whole (a tester)."""
    path = design_file(TWO_D.replace("PATTERN", f"tiles({first}, (32, 32))"))
    with pytest.raises(DesignError) as e:
        load_design(path)
    assert str(e.value) == (
        f"d.py:15: error [tiles]: tiles() walks a host tensor, not {found}\n"
        "  limit: a host tensor (a parameter of the @design function), or its (rows, cols)\n"
        f"  found: {found}\n"
        "  fix: pass the tensor the fill or drain moves, its second argument: "
        "rt.fill(a, A, tiles(A, (64, 64)))")


def test_a_group_without_grouped_order_is_refused(design_file: Callable[..., Path]) -> None:
    """tiles(inp, (32, 32), group=2) walked row by row, the group ignored without a word (a
    tester)."""
    path = design_file(TWO_D.replace("PATTERN", "tiles(inp, (32, 32), group=2)"))
    with pytest.raises(DesignError) as e:
        load_design(path)
    assert str(e.value) == (
        "d.py:15: error [tiles]: group=2 is given with order='row', which stacks no tile rows\n"
        "  limit: group= is for order='grouped' (group tile rows sent as one tall tile)\n"
        "  found: order='row', group=2\n"
        "  fix: write order='grouped' to send 2 tile rows as one tall tile, or leave group out")


def test_the_third_dimension_takes_any_size() -> None:
    """A reviewer's 2039x64 tiles of a 2039x128 i32 matrix: the rows step in the shim's third
    dimension, which has no wrap field (check accepted the pattern written out, while tiles()
    held that dimension to 1,023 and found none)."""
    p = call_tiles((2039, 128), "i32", tile=(2039, 64), cols=0)
    assert dma_error(p, (2039, 128), "i32") is None
    assert p.sizes[1] == 2039
    assert np.array_equal(p.indices(), naive_walk((2039, 128), (2039, 64), cols=0))


def test_a_backward_range_is_refused_as_backward(design_file: Callable[..., Path]) -> None:
    """rows=range(1, -1, -1) names tiles 1 and 0, both valid, yet was refused as "selects no
    valid tile" (a tester): the pattern cannot step backwards."""
    path = design_file(TWO_D.replace("PATTERN", "tiles(inp, (32, 32), rows=range(1, -1, -1))"))
    with pytest.raises(DesignError) as e:
        load_design(path)
    assert str(e.value) == (
        "d.py:15: error [tiles]: rows=range(1, -1, -1) walks the tiles backwards\n"
        "  limit: a DMA pattern steps forwards: its strides are positive (mlir-aie's "
        "verifyStridesWraps)\n"
        "  found: step -1\n"
        "  fix: walk them forwards (rows=range(0, 2)) and reorder on the core, or move each "
        "tile in a transfer of its own")


def test_a_backward_range_of_one_tile_is_that_tile() -> None:
    """range(1, 0, -1) names tile 1 alone: the step walks nothing."""
    assert np.array_equal(call_tiles((64, 64), "i32", tile=(32, 32), rows=range(1, 0, -1)).indices(),
                          call_tiles((64, 64), "i32", tile=(32, 32), rows=1).indices())
