"""Loops stay loops (aiedsl/checks/unrolled.py, ``error [unrolled loop]``): a core program
with a long run of identical copies of one block, a Python ``for _ in range(n)`` where
``loop(n)`` was meant (a Riallto user's 720 rows), is refused at the copies' first line; short
or index-dependent unrolls pass. The messages word for word, and the search itself."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Callable

import pytest

from aiedsl.checks import check_design
from aiedsl.checks.unrolled import MIN_COPIES, _first_run, _id
from aiedsl.errors import DesignError
from aiedsl.loader import load_design

DesignFile = Callable[..., Path]
ROOT = Path(__file__).resolve().parent.parent
SHIPPED = sorted(str(p.relative_to(ROOT)) for folder in ("designs", "bench/calibration")
                 for p in (ROOT / folder).glob("*.py"))

ROWS = '''
from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
from aiedsl.kernels import passthrough, vector_scalar

@design(device="npu1_1col")
def rows(x: Tensor[{n}, 16, i32], y: Tensor[{n}, 16, i32]):
    a = fifo(Tensor[16, i32], name="a", depth={depth})
    b = fifo(Tensor[16, i32], name="b", depth={depth})
    k = passthrough(Tensor[16, i32])
    vs = vector_scalar("mul", Tensor[16, i32])

    @herd()
    def core():
{core}
    with runtime() as rt:
        rt.fill(a, x)
        rt.drain(b, y)

@rows.reference
def reference(x):
    return x.copy()
'''
"""``n`` rows of 16 copied through one core; its core function's body from line 13 on."""


def rows_design(design_file: DesignFile, core: str, n: int, depth: int = 2) -> Path:
    body = "\n".join("        " + line if line else "" for line in core.strip("\n").split("\n"))
    return design_file(ROWS.format(core=body + "\n", n=n, depth=depth))


def check_error(path: Path) -> str:
    with pytest.raises(DesignError) as e:
        check_design(load_design(path).ir)
    return str(e.value)


def test_a_range_loop_of_720_identical_bodies_is_refused(design_file: DesignFile) -> None:
    """The Riallto threshold with ``range(H)`` for ``loop(H)``: 720 copies of acquire, acquire,
    call, release, release, at the ``with`` line and the call's."""
    path = rows_design(design_file, '''
for _ in range(720):
    with a.consume() as s, b.produce() as d:
        k(s, d)
''', 720)
    assert check_error(path) == (
        "d.py:14: error [unrolled loop]: core[0,0]'s program holds 720 identical copies in a "
        "row of the ops traced at lines 14 and 15 (5 ops each): a Python loop (for ... in "
        "range(...)) ran its body once per iteration while the core function was traced\n"
        "  limit: fewer than 16 identical copies in a row: loops stay loops (scf.for), and "
        "each copy takes room in the core's 16 KB of program memory\n"
        "  found: 720 copies, 3600 ops\n"
        "  fix: write `for _ in loop(720):` instead of the Python loop: it keeps one copy, as a "
        "scf.for loop (range() is for unrolling what differs from one iteration to the next, "
        "such as w[i])")


def test_a_python_loop_that_never_ends_is_stopped_while_tracing(design_file: DesignFile
                                                                 ) -> None:
    """A tester's `while True:` (IRON's Worker body repeats for ever) made check run for ever,
    its memory growing; range(100000) took 22 s and 900 MB to be refused."""
    path = rows_design(design_file, '''
while True:
    with a.consume() as s, b.produce() as d:
        k(s, d)
''', 720)
    with pytest.raises(DesignError) as e:
        load_design(path)
    assert str(e.value) == (
        "d.py:14: error [unrolled loop]: core[0,0]'s program passed 4,096 ops while its core "
        "function was traced: a Python loop (while True:, for ... in range(n)) runs its body "
        "once per iteration while tracing, and this one has not ended\n"
        "  limit: 4,096 ops, more than the core's program memory holds at one 4-byte "
        "instruction each\n"
        "  found: 4,097 ops and counting\n"
        "  fix: write `for _ in loop(n):` for n elements (traced once, a scf.for); a core that "
        "repeats for ever (IRON's Worker) is here a loop() over what the runtime sequence "
        "sends it")


def test_the_same_loop_written_with_loop_passes(design_file: DesignFile) -> None:
    path = rows_design(design_file, '''
for _ in loop(720):
    with a.consume() as s, b.produce() as d:
        k(s, d)
''', 720)
    check_design(load_design(path).ir)


@pytest.mark.parametrize("n", [2, 4, MIN_COPIES - 1])
def test_a_short_unroll_of_identical_bodies_passes(design_file: DesignFile, n: int) -> None:
    path = rows_design(design_file, f'''
for _ in range({n}):
    with a.consume() as s, b.produce() as d:
        k(s, d)
''', n)
    check_design(load_design(path).ir)


def test_sixteen_copies_are_refused(design_file: DesignFile) -> None:
    path = rows_design(design_file, f'''
for _ in range({MIN_COPIES}):
    with a.consume() as s, b.produce() as d:
        k(s, d)
''', MIN_COPIES)
    assert check_error(path).splitlines()[0] == (
        "d.py:14: error [unrolled loop]: core[0,0]'s program holds 16 identical copies in a "
        "row of the ops traced at lines 14 and 15 (5 ops each): a Python loop (for ... in "
        "range(...)) ran its body once per iteration while the core function was traced")


def test_an_index_dependent_unroll_passes(design_file: DesignFile) -> None:
    """``for i in range(20): vs(d, d, i + 1)``: each copy passes a scalar of its own, so no
    two copies are the same, however many."""
    path = rows_design(design_file, '''
for _ in loop(720):
    with a.consume() as s, b.produce() as d:
        k(s, d)
        for i in range(20):
            vs(d, d, i + 1)
''', 720)
    check_design(load_design(path).ir)


def test_copies_inside_a_loop_body_are_refused_there(design_file: DesignFile) -> None:
    path = rows_design(design_file, '''
for _ in loop(9):
    for _ in range(80):
        with a.consume() as s, b.produce() as d:
            k(s, d)
''', 720)
    assert check_error(path).splitlines()[0] == (
        "d.py:15: error [unrolled loop]: core[0,0]'s program holds 80 identical copies in a row "
        "of the ops traced at lines 15 and 16 (5 ops each): a Python loop (for ... in "
        "range(...)) ran its body once per iteration while the core function was traced")


def test_copies_of_a_loop_are_refused(design_file: DesignFile) -> None:
    """``range`` around a ``loop()``: each copy is a loop op and the five ops of its body (the
    message said "1 op each" and "20 ops", where the program holds 120)."""
    path = rows_design(design_file, '''
for _ in range(20):
    for _ in loop(36):
        with a.consume() as s, b.produce() as d:
            k(s, d)
''', 720)
    assert check_error(path) == (
        "d.py:14: error [unrolled loop]: core[0,0]'s program holds 20 identical copies in a row "
        "of the ops traced at lines 14, 15 and 16 (6 ops each): a Python loop (for ... in "
        "range(...)) ran its body once per iteration while the core function was traced\n"
        "  limit: fewer than 16 identical copies in a row: loops stay loops (scf.for), and "
        "each copy takes room in the core's 16 KB of program memory\n"
        "  found: 20 copies, 120 ops\n"
        "  fix: write `for _ in loop(20):` instead of the Python loop: it keeps one copy, as a "
        "scf.for loop (range() is for unrolling what differs from one iteration to the next, "
        "such as w[i])")


@pytest.mark.parametrize("path", SHIPPED)
def test_no_shipped_design_holds_two_identical_copies_in_a_row(in_root: Path, path: str) -> None:
    """What :data:`~aiedsl.checks.unrolled.MIN_COPIES` was chosen against: not even two."""
    d = load_design(path).ir
    ids: dict = {}
    for core in d.cores:
        made: dict = {}
        seq = [_id(core, op, ids, made, 16384) for op in core.body]
        assert _first_run(seq, 2) is None, core.name


@pytest.mark.parametrize("seq, run", [
    ([0, 1, 2, 3, 4] * 16, (0, 5, 16)),
    ([9, 8] + [0, 1, 2] * 20 + [7], (2, 3, 20)),
    ([0, 1, 2] * 15 + [5], None),
    ([5] + [1, 1, 2, 2] * 16, (1, 4, 16)),  # no op occurs once in the block
    ([3] * 40, (0, 1, 40)),
    (list(range(100)), None),
])
def test_the_search_finds_the_first_run(seq: list[int], run: tuple[int, int, int] | None
                                        ) -> None:
    assert _first_run(seq) == run


def test_the_search_is_about_linear() -> None:
    """30,000 ops of acquire, a call with its own scalar, release (an index-dependent unroll:
    every acquire recurs three ops on) and no run: each op is compared with a few others, not
    with every other (quadratic would be 10^9 comparisons)."""
    seq = [x for i in range(10_000) for x in (0, 10 + i, 1)]
    start = time.perf_counter()
    assert _first_run(seq) is None
    assert time.perf_counter() - start < 5.0
