"""Which transfers a runtime wait retires (aiedsl.ir.sequence), read by the shim BD ids, the BD
count and the task-queue check: a wait retires its transfer and the earlier ones of its fifo; a
waited drain also the fills it is shown to have needed. The simulator checks the ids on its own
clocks."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest

from aiedsl.checks import check_design
from aiedsl.errors import DesignError
from aiedsl.ir.runtime import Transfer
from aiedsl.ir.sequence import retirements, shim_bd_ids
from aiedsl.loader import load_design
from aiedsl.sim import simulate

DesignFile = Callable[..., Path]

TWO = '''
import numpy as np
from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
from aiedsl.kernels import passthrough
@design(device="npu1_1col")
def d(x: Tensor[8192, i32], y: Tensor[8192, i32], u: Tensor[8192, i32], v: Tensor[8192, i32]):
    i0 = fifo(Tensor[1024, i32], name="i0"); o0 = fifo(Tensor[1024, i32], name="o0")
    i1 = fifo(Tensor[1024, i32], name="i1"); o1 = fifo(Tensor[1024, i32], name="o1")
    copy = passthrough(Tensor[1024, i32])
    @herd(name="h0")
    def c0():
        for _ in loop(8):
            with i0.consume() as s, o0.produce() as t:
                copy(s, t)
    @herd(name="h1")
    def c1():
        for _ in loop(8):
            with i1.consume() as s, o1.produce() as t:
                copy(s, t)
    with runtime() as rt:
{rt}
@d.reference
def reference(x, y):
    return x.copy(), y.copy()
'''
"""Two independent copies, i0 -> o0 and i1 -> o1; the runtime sequence is the test's."""


def _placed(design_file: DesignFile, rt: str):  # type: ignore[no-untyped-def]
    body = "\n".join("        " + line for line in rt.strip().splitlines())
    handle = load_design(design_file(TWO.replace("{rt}", body)))
    placed, _ = check_design(handle.ir)
    return handle, placed


def test_a_waited_fill_retires_only_its_own_fifo(design_file: DesignFile) -> None:
    """A sync that waited only for a fill of i1 took everything to be retired, and the next
    fill of i0 reused the BD of i0's first fill, still running (a reviewer's find)."""
    handle, d = _placed(design_file, """
rt.fill(i0, x, (0, [4096], [1]))
rt.fill(i1, y, (0, [2048], [1]), wait=True)
rt.sync()
rt.fill(i0, x, (4096, [4096], [1]))
rt.fill(i1, y, (2048, [6144], [1]))
rt.drain(o0, u)
rt.drain(o1, v)
""")
    assert retirements(d)[2] == [1]
    ids = shim_bd_ids(d)
    assert ids[3] != ids[0]  # i0's first fill still holds its BD
    assert simulate(handle).passed


def test_a_ping_pong_of_rt_wait_keeps_the_queues_short(design_file: DesignFile) -> None:
    """IRON's ping-pong: each step fills and drains one element and waits for the previous
    step's drain. check counted every fill as queued until the final sync and refused it; a
    waited drain retires the fills it needed."""
    steps = ["rt.fill(i1, y)", "rt.drain(o1, v)"]
    for k in range(8):
        steps += [f"rt.fill(i0, x, ({k * 1024}, [1024], [1]))",
                  f"rt.drain(o0, u, ({k * 1024}, [1024], [1]))"]
        if k:
            steps.append("rt.wait(o0)")
    handle, d = _placed(design_file, "\n".join(steps))
    assert max(shim_bd_ids(d).values()) < 8
    assert simulate(handle).passed


def test_a_drain_retires_only_the_fills_it_needed(design_file: DesignFile) -> None:
    """A tester's two pipelines on one shim: the sync waited for o0 only, and the fill of i1
    (whose core had stalled: o1 was drained after the sync) was taken to be retired; the drain
    of o1 then took its BD, which the fill's queued task would have read as its own. A waited
    drain now retires the fills it is shown to have needed: o0's needed i0's, not i1's."""
    handle, d = _placed(design_file, """
rt.fill(i1, y)
rt.fill(i0, x)
rt.drain(o0, u)
rt.sync()
rt.drain(o1, v)
""")
    assert retirements(d) == {3: [1, 2], 5: [0, 4]}  # at the end, o1's drain needed all of i1
    ids = shim_bd_ids(d)
    assert ids[4] != ids[0]
    assert simulate(handle).passed


def test_the_simulator_finds_a_bd_handed_on_too_early(design_file: DesignFile,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The simulator checks the BD ids on its own clocks: with ids that reuse a BD still
    queued (here every transfer given BD 0), the run is an error, not a PASS."""
    import aiedsl.sim.runtime as runtime

    handle, d = _placed(design_file, """
rt.fill(i1, y)
rt.fill(i0, x)
rt.drain(o0, u)
rt.sync()
rt.drain(o1, v)
""")
    monkeypatch.setattr(runtime, "shim_bd_ids", lambda d: dict.fromkeys(
        (i for i, op in enumerate(d.runtime) if isinstance(op, Transfer)), 0))
    with pytest.raises(DesignError) as e:
        simulate(handle)
    lines = str(e.value).splitlines()
    assert lines[0].endswith(
        ".py:21: error [shim BD reuse]: rt.fill of 'i0' takes BD 0 of shim tile (0, 0) while the "
        "fill of 'i1' holding it is not done")
    assert lines[1] == ("  limit: a shim BD is handed on once the transfer holding it is done: "
                        "a queued task reads its BD only when it starts")
    assert lines[2].startswith("  found: pushed at cycle ")
    assert lines[-1] == (
        "  fix: wait for the fill of 'i1' (wait=True and rt.sync()) before this transfer. aiedsl "
        "took it to be done at a wait before this one: that is a flaw in aiedsl, please report "
        "it with this design")


SPLIT_SLOW = """
import numpy as np
from aiedsl import Tensor, define, design, fifo, herd, i32, loop, runtime
from aiedsl.kernels import buffer, declare, passthrough

N = define("N", 8)
SLOW = define("SLOW", 200000)

def cp_ref(src, dst): dst[...] = src

@design(device="npu1_1col")
def split_bd(a_in: Tensor[N, 512, i32], q_in: Tensor[256, i32], oa: Tensor[N + 1, 256, i32],
             ob: Tensor[N, 256, i32]):
    p = fifo(Tensor[512, i32], name="p")
    p0, p1 = p.split(2, names=["p0", "p1"])
    q = fifo(Tensor[256, i32], name="q")
    outa = fifo(Tensor[256, i32], name="outa")
    outb = fifo(Tensor[256, i32], name="outb")
    cp = passthrough(Tensor[256, i32])
    slow = declare("slow_copy_256", source="slow.cc", entry="slow_copy<256>",
                   args=[buffer("src", Tensor[256, i32]), buffer("dst", Tensor[256, i32], "out")],
                   reference=cp_ref, cycles=SLOW, cost="deliberately slow", exact=True)

    @herd(rows=2)
    def core(x, y):
        if y == 0:
            for _ in loop(N):
                with p0.consume() as s, outa.produce() as d:
                    cp(s, d)
            with q.consume() as s, outa.produce() as d:
                cp(s, d)
        else:
            for _ in loop(N):
                with p1.consume() as s, outb.produce() as d:
                    slow(s, d)

    with runtime() as rt:
        rt.fill(p, a_in)                                  # BD 0
        rt.drain(outa, oa, (0, [N * 256], [1]))           # BD 1
        rt.drain(outb, ob)                                # BD 2
        rt.wait(outa)                                     # retires the drain of outa ... and p?
        rt.fill(q, q_in)                                  # takes BD 0 again if p was retired
        rt.drain(outa, oa, (N * 256, [256], [1]))

@split_bd.reference
def reference(a_in, q_in):
    return np.concatenate([a_in[:, :256], q_in[None]]), a_in[:, 256:].copy()
"""
"""A fill of 'p' split at the memtile: part 0 to a fast core, part 1 to a slow one; the runtime
waits for the fast core's output only, then fills 'q'."""

SLOW_CC = """#include <stdint.h>
#include <aie_api/aie.hpp>
template <unsigned N> void slow_copy(const int32_t *__restrict src, int32_t *__restrict dst) {
  for (unsigned i = 0; i < N; i += 16) aie::store_v(dst + i, aie::load_v<16>(src + i));
}
"""


def test_one_part_of_a_split_taken_does_not_retire_the_fill(design_file: DesignFile) -> None:
    """The fast core having taken part 0 of every element proves nothing of part 1, which the
    memtile receives with a BD and locks of its own: the fill of 'p' may still be running, so
    the fill of 'q' after the wait must not take its BD (it took BD 0 again, and the simulator
    stopped on the reuse once the slow core was slow enough; a hang hunter's find)."""
    path = design_file(SPLIT_SLOW)
    (path.parent / "slow.cc").write_text(SLOW_CC)
    handle = load_design(path)
    placed, _ = check_design(handle.ir)
    fills = [i for i, op in enumerate(placed.runtime)
             if isinstance(op, Transfer) and op.op == "fill"]
    ids = shim_bd_ids(placed)
    assert [placed.runtime[i].fifo for i in fills] == ["p", "q"]  # type: ignore[union-attr]
    assert ids[fills[0]] == 0 and ids[fills[1]] != 0
    assert simulate(handle).passed
