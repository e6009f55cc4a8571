"""How a core function is traced into its program: a ``loop()`` object iterated more than
once, a buffer one core acquired and another passed to a kernel, and how a ``loop()`` body left
early is told (break or return, or an exception caught outside it). The testers' designs, their
messages word for word."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Callable

import pytest

from aiedsl.checks import check_design
from aiedsl.errors import DesignError
from aiedsl.ir.core_ops import Call, Loop
from aiedsl.loader import load_design
from aiedsl.sim import simulate

DesignFile = Callable[..., Path]

TWO_CORES = '''
import numpy as np
from aiedsl import Tensor, channel, design, herd, i32, loop, runtime
from aiedsl.kernels import vector_scalar
N = {n}
T = 1024
G = {{}}


@design(device="npu1_1col")
def two(A0: Tensor[N, i32], A1: Tensor[N, i32], C0: Tensor[N, i32], C1: Tensor[N, i32]):
    a = channel(Tensor[T, i32], shape=[2])
    c = channel(Tensor[T, i32], shape=[2])
    add = vector_scalar("add", Tensor[T, i32])

    @herd(rows=2)
    def core(y, x):
{body}

    with runtime() as rt:
        rt.fill(a[0], A0)
        rt.fill(a[1], A1)
        rt.drain(c[0], C0)
        rt.drain(c[1], C1)


@two.reference
def ref(A0, A1):
    return {ref}
'''
"""Two cores (``core[0,0]``, ``core[0,1]``), each taking ``a[x]`` and writing ``c[x]``: the
testers' template (their gen.py). The core function's body starts at line 17."""


def two_cores(design_file: DesignFile, body: str, ref: str = "A0 + 1, A1 + 1",
              n: int = 4096) -> Path:
    """``TWO_CORES`` with the core function's ``body`` (dedented), as ``d.py``."""
    return design_file(TWO_CORES.format(n=n, ref=ref, body=textwrap.indent(
        textwrap.dedent(body).strip("\n"), " " * 8)))


# -- a loop() object iterated twice ----------------------------------------------------------------

REUSED = '''
L = loop(4)
for _ in L:
    with a[x].consume() as s, c[x].produce() as o:
        add(s, o, 1)
for _ in L:
    with a[x].consume() as s, c[x].produce() as o:
        add(s, o, 100)
'''


def test_a_loop_object_iterated_twice_records_two_loops_each_with_its_body(
        design_file: DesignFile) -> None:
    """A tester's: the second ``for`` over one loop() object recorded an scf.for with an empty
    body (its ops traced once, outside any loop): the design below, which takes 8 elements per
    core, passed sim with 4, and the right one was refused by [balance]. Like range(), each
    ``for`` records a loop of its own."""
    path = two_cores(design_file, REUSED, n=8192, ref=(
        "np.concatenate([A0[:4096] + 1, A0[4096:] + 100]), "
        "np.concatenate([A1[:4096] + 1, A1[4096:] + 100])"))
    handle = load_design(path)
    for core in handle.ir.cores:
        assert [type(op) for op in core.body] == [Loop, Loop]
        for op, scalar in zip(core.body, (1, 100)):
            assert isinstance(op, Loop) and op.count == 4 and op.loc.line == 17
            call = next(o for o in op.body if isinstance(o, Call))
            assert call.args[2].value == scalar  # type: ignore[union-attr]
            assert [o.op for o in op.body] == ["acquire", "acquire", "call", "release",
                                               "release"]
    assert simulate(handle, seed=0).passed


def test_a_loop_object_iterated_twice_for_half_the_data_is_refused_by_balance(
        design_file: DesignFile) -> None:
    with pytest.raises(DesignError) as e:
        check_design(load_design(two_cores(design_file, REUSED)).ir)
    assert str(e.value).splitlines()[0] == (
        "d.py:19: error [balance]: fifo 'a_0': the runtime fills 4 element(s) per run, but "
        "core[0,0] takes 8")


def test_a_loop_object_nested_in_itself_and_one_made_by_another_core(
        design_file: DesignFile) -> None:
    """Each ``for`` is a loop of its own, nested ones too; a loop() object one core made and
    another iterates records its loop in the core iterating it (it went into the first
    core's program, and the second took nothing: 'a_1' has no consumer)."""
    body = '''
    if "L" not in G:
        G["L"] = loop(2)
    L = G["L"]
    for _ in L:
        for _ in L:
            with a[x].consume() as s, c[x].produce() as o:
                add(s, o, 1)
    '''
    handle = load_design(two_cores(design_file, body))
    for core in handle.ir.cores:
        (outer,) = core.body
        assert isinstance(outer, Loop) and outer.count == 2
        (inner,) = outer.body
        assert isinstance(inner, Loop) and inner.count == 2 and len(inner.body) == 5
    assert simulate(handle, seed=0).passed
