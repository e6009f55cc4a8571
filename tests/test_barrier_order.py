"""The barrier checks against the simulator, on random designs: a core that waits on a runtime
barrier between its copies, and a runtime sequence of fills, drains, waits and sets in random
order. What the checks accept runs to the end at a fast and a slow kernel cost; what they call a
certain hang (``hang: barrier``) deadlocks at both; what they call a race (``barrier race``) may
go either way, which is the point of refusing it. With barriers that start at 1 or 2, often
never set to that value again, the same holds of two invocations, the second starting from what
the first left (``barrier rerun``: a certain hang there deadlocks the second at both costs)."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path
from typing import Callable

import numpy as np
import pytest

from aiedsl.checks import check_design
from aiedsl.errors import DesignError
from aiedsl.loader import load_design
from aiedsl.sim import simulate
from aiedsl.sim.explain import Deadlock
from aiedsl.targets import get_target

DesignFile = Callable[..., Path]

SLOW_COPY = """
#include <stdint.h>
#include <aie_api/aie.hpp>
template <unsigned N> void slow_copy(const int32_t *__restrict src, int32_t *__restrict dst) {
  for (unsigned i = 0; i < N; i += 16) aie::store_v(dst + i, aie::load_v<16>(src + i));
}
"""
"""A copy kernel whose cost the design declares (CYC cycles a call)."""

HEAD = '''
import numpy as np
from aiedsl import Tensor, barrier, define, design, fifo, herd, i32, loop, runtime
from aiedsl.kernels import buffer, declare

CYC = define("CYC", 1000)
def cp_ref(src, dst): dst[...] = src

@design(device="npu1_1col")
def fz(inp: Tensor[1024, i32], out: Tensor[1024, i32]):
    a = fifo(Tensor[256, i32], name="a")
    b = fifo(Tensor[256, i32], name="b")
    go = barrier(name="go")
    cp = declare("slow_copy_256", source="slow.cc", entry="slow_copy<256>",
                 args=[buffer("src", Tensor[256, i32]), buffer("dst", Tensor[256, i32], "out")],
                 reference=cp_ref, cycles=CYC, cost="copy", exact=True)

    @herd()
    def core():
'''
"""The design up to the core function's body (four copies of a 256-element element)."""
TAIL = '''
@fz.reference
def reference(inp):
    return inp.copy()
'''
COPY = "with a.consume() as x, b.produce() as y:\n{pad}    cp(x, y)\n"


def _core(rng: random.Random) -> tuple[str, set[int]]:
    """Four copies, some as a loop of two, with waits for 1 or 2 between; the values waited for."""
    lines = ""
    values: set[int] = set()

    def wait(pad: str) -> str:
        v = rng.choice([1, 2])
        values.add(v)
        return f"{pad}go.wait_for_value({v})\n"

    looped = rng.random() < 0.3
    for _ in range(2 if looped else 4):
        if rng.random() < 0.5:
            lines += wait("        ")
        lines += "        " + COPY.format(pad="        ")
    if looped:
        lines += "        for _ in loop(2):\n"
        if rng.random() < 0.7:
            lines += wait("            ")
        lines += "            " + COPY.format(pad="            ")
    if not values:
        lines = wait("        ") + lines
    return lines, values


def _runtime(rng: random.Random, values: set[int]) -> str:
    """The fill and drains of the four elements in parts, sets of every value waited for (and
    of others), waits on 'b', in a random order that keeps the transfers' own."""
    fills = rng.choice([[4], [2, 2]])
    drains = rng.choice([[4], [1, 3], [2, 2], [1, 1, 2], [1, 1, 1, 1]])
    sets = sorted(values) + [rng.choice([0, 1, 2]) for _ in range(rng.randint(0, 2))]
    rng.shuffle(sets)
    order = ([("fill", i) for i in range(len(fills))] + [("drain", i) for i in range(len(drains))]
             + [("set", v) for v in sets] + [("wait", 0)] * rng.randint(0, 2))
    rng.shuffle(order)
    fill_at, drain_at, pending = iter(range(len(fills))), iter(range(len(drains))), 0
    out = []
    for kind, v in order:
        if kind == "fill":
            k = next(fill_at)
            out.append(f"rt.fill(a, inp, ({sum(fills[:k]) * 256}, [{fills[k] * 256}], [1]))")
        elif kind == "drain":
            k = next(drain_at)
            out.append(f"rt.drain(b, out, ({sum(drains[:k]) * 256}, [{drains[k] * 256}], [1]))")
            pending += 1
        elif kind == "set":
            out.append(f"rt.set_barrier(go, {v})")
        elif pending:  # a wait needs a drain in flight
            out.append("rt.wait(b)")
            pending -= 1
    return "    with runtime() as rt:\n" + "".join(f"        {o}\n" for o in out)


def _runs(path: Path, cycles: str, invocations: int = 1) -> bool:
    """Whether the design runs to the end with correct output at kernel cost ``cycles`` (False
    on a deadlock), ``invocations`` times."""
    try:
        result = simulate(load_design(path, {"CYC": cycles}),
                          {"inp": np.arange(1024, dtype=np.int32)}, invocations=invocations)
    except Deadlock:
        return False
    assert result.passed
    return True


def test_the_barrier_checks_agree_with_the_simulator(design_file: DesignFile,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    import aiedsl.sim
    from aiedsl.place import place

    # the simulator runs what the checks refused too (it still places the design)
    monkeypatch.setattr(aiedsl.sim, "check_design",
                        lambda ir: (place(ir, get_target(ir.device)), {}))
    design_file(SLOW_COPY, "slow.cc")
    rng = random.Random(2026)
    seen: Counter[str] = Counter()
    for _ in range(120):
        core, values = _core(rng)
        source = HEAD + core + "\n" + _runtime(rng, values) + TAIL
        path = design_file(source)
        try:
            check_design(load_design(path).ir)
            verdict = "accepted"
        except DesignError as e:
            verdict = e.rule
        seen[verdict] += 1
        if verdict == "accepted":
            assert _runs(path, "100") and _runs(path, "20000"), source
        elif verdict == "hang: barrier":
            assert not _runs(path, "100") and not _runs(path, "20000"), source
    # every verdict was met (the sample is not all of one kind)
    assert seen["accepted"] >= 10 and seen["hang: barrier"] >= 10 and \
        seen["barrier race"] >= 5, seen


def test_the_rerun_checks_agree_with_a_second_simulated_invocation(
        design_file: DesignFile, monkeypatch: pytest.MonkeyPatch) -> None:
    import aiedsl.sim
    from aiedsl.place import place

    monkeypatch.setattr(aiedsl.sim, "check_design",
                        lambda ir: (place(ir, get_target(ir.device)), {}))
    design_file(SLOW_COPY, "slow.cc")
    rng = random.Random(11)
    seen: Counter[str] = Counter()
    for _ in range(120):
        core, values = _core(rng)
        init = rng.choice([1, 2])
        # the initial value often set by the runtime too, often not: then only the load gives it
        given = values - {init} if rng.random() < 0.6 else values
        head = HEAD.replace('barrier(name="go")', f'barrier(name="go", initial={init})')
        source = head + core + "\n" + _runtime(rng, given or values) + TAIL
        path = design_file(source)
        try:
            check_design(load_design(path).ir)
            verdict = "accepted"
        except DesignError as e:
            verdict = e.rule
            if e.rule == "barrier rerun" and "depends on timing" not in e.message:
                verdict = "barrier rerun: certain"
        seen[verdict] += 1
        if verdict == "accepted":
            assert _runs(path, "100", 2) and _runs(path, "20000", 2), source
        elif verdict == "barrier rerun: certain":
            # the first invocation runs; the second deadlocks, whatever the kernels' time
            assert _runs(path, "100") and _runs(path, "20000"), source
            assert not _runs(path, "100", 2) and not _runs(path, "20000", 2), source
    assert seen["accepted"] >= 10 and seen["barrier rerun: certain"] >= 2, seen
