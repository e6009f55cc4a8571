"""A broadcast whose receivers include the host: a fifo consumed by a core and drained by the
runtime.

mlir-aie takes a shim tile as one consumer among others (``aie.objectfifo @m(%tile_0_2,
{%tile_0_3, %tile_0_0}, 2)``): AIEObjectFifoStatefulTransform's ``runOnOperation`` splits the
fifo per consumer tile, gives the shim consumer its external buffers and a
``shim_dma_allocation`` (S2MM) and routes a flow to it as to the core; and
``ObjectFifoCreateOp::verify`` has no rule against it (it refuses a layout on a shim consumer,
whatever the other consumers). `aiedsl check` passed
such a design and `aiedsl sim` crashed (a tester): the shim drain, the one receiver that takes a
whole element through ``Engine.get``, asked when the other receivers were ready after taking
the element off its queue, and read the emptied queue.

On the NPU the stream is circuit-switched: an element moves to every receiver at once, so it
waits for a drain the runtime has not issued yet (a shim channel with no task takes nothing).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

import numpy as np
import pytest

from aiedsl.loader import load_design
from aiedsl.sim import Deadlock, SimResult, simulate

CORE_AND_HOST = '''
from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
from aiedsl.kernels import passthrough

T = Tensor[16, i32]


@design(device="npu1_1col")
def mix(A: Tensor[NUMEL, i32], B: Tensor[NUMEL, i32], C: Tensor[NUMEL, i32]):
    a = fifo(T, name="a")
    m = fifo(T, name="m")
    c = fifo(T, name="c")
    cp = passthrough(T)

    @herd(name="p", anchor=(0, 2))
    def p():
        for _ in loop(NUMEL // 16):
            with a.consume() as t, m.produce() as o:
                cp(t, o)

    @herd(name="q", anchor=(0, 3))
    def q():
        for _ in loop(NUMEL // 16):
            with m.consume() as t, c.produce() as o:
                cp(t, o)

    with runtime() as rt:
        rt.fill(a, A)
        DRAINS


@mix.reference
def ref(A):
    return A.copy(), A.copy()
'''

MEMTILE_FORWARD = '''
from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
from aiedsl.kernels import passthrough

T = Tensor[16, i32]


@design(device="npu1_1col")
def fwd(A: Tensor[64, i32], B: Tensor[64, i32], C: Tensor[64, i32]):
    a = fifo(T, name="a")
    c = fifo(T, name="c")
    a2 = a.forward()
    cp = passthrough(T)

    @herd(name="q", anchor=(0, 2))
    def q():
        for _ in loop(4):
            with a2.consume() as t, c.produce() as o:
                cp(t, o)

    with runtime() as rt:
        rt.fill(a, A)
        rt.drain(a2, B)
        rt.drain(c, C)


@fwd.reference
def ref(A):
    return A.copy(), A.copy()
'''


def core_and_host(n: int, drains: str) -> str:
    """The tester's design moving ``n`` int32s, its runtime ending in ``drains``."""
    return CORE_AND_HOST.replace("NUMEL", str(n)).replace("DRAINS", drains)


def assert_copies(result: SimResult) -> None:
    """Both drains hold what was filled, as numpy's copy does, and the checks say so."""
    assert result.passed, [c.line() for c in result.checks]
    a = result.inputs["A"]
    assert np.array_equal(result.outputs["B"], a)
    assert np.array_equal(result.outputs["C"], a)


@pytest.mark.parametrize("n", [16, 64])
@pytest.mark.parametrize("drains", ["rt.drain(m, B); rt.drain(c, C)",
                                    "rt.drain(c, C); rt.drain(m, B)"])
def test_a_core_and_a_host_drain_both_get_every_element(
        n: int, drains: str, design_file: Callable[..., Path]) -> None:
    """The tester's reproducer (one element) and four elements in a loop, the drains either
    way round: each receiver gets every element."""
    assert_copies(simulate(load_design(design_file(core_and_host(n, drains)))))


def test_a_memtile_forward_to_a_core_and_the_host(design_file: Callable[..., Path]) -> None:
    """The memtile's send of a forward, to a core and a host drain: the same crash before."""
    assert_copies(simulate(load_design(design_file(MEMTILE_FORWARD))))


def test_the_broadcast_waits_for_the_drain_then_streams_to_both_at_once(
        design_file: Callable[..., Path], tmp_path: Path) -> None:
    """No receiver takes an element before every one is ready: q's DMA gets nothing of 'm'
    until the runtime has issued the drain of 'm', then each element moves to q's DMA and the
    shim DMA in the same cycles (the shim's write bursts follow in spans of their own)."""
    path = design_file(core_and_host(64, "rt.drain(m, B); rt.drain(c, C)"))
    trace = tmp_path / "t.json"
    simulate(load_design(path), trace=str(trace))
    events = json.loads(trace.read_text())["traceEvents"]
    track = {e["tid"]: e["args"]["name"] for e in events
             if e["ph"] == "M" and e["name"] == "thread_name"}
    spans: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for e in events:
        if e["ph"] == "X":
            spans.setdefault((track[e["tid"]], e["name"]), []).append((e["ts"], e["ts"] + e["dur"]))
    core, host = spans[("dma q[0,0] <- m", "m")], spans[("shim (0, 0) <- m", "m")]
    assert len(core) == 4 and set(core) <= set(host)
    [(_, issued)] = spans[("runtime", "issue drain m")]
    assert core[0][0] == issued


@pytest.mark.parametrize("n, first", [
    (16, ""),  # the broadcast stalls on its first element
    (32, "rt.drain(m, B, (0, [16], [1]))\n        "),  # on its second: the first drained whole
])
def test_a_drain_issued_after_a_wait_that_needs_it_is_a_deadlock(
        n: int, first: str, design_file: Callable[..., Path]) -> None:
    """The runtime waits for 'c' before it issues the drain of 'm' (of the rest of 'm'); 'c'
    needs q to get 'm', which the broadcast holds until the drain of 'm' takes it too: the NPU
    hangs, and the simulator says why. With the first element drained before the wait, the
    simulator crashed instead (that drain took a whole element)."""
    rest = "(16, [16], [1])" if first else "B"
    path = design_file(core_and_host(n, f"""{first}rt.drain(c, C)
        rt.wait(c)
        rt.drain(m, {'B, ' + rest if first else rest})"""))
    wait = 29 + bool(first)  # the line of rt.wait(c)
    with pytest.raises(Deadlock) as e:
        simulate(load_design(path))
    # p, its program done, has started it again and waits for its next input (as on the NPU)
    assert str(e.value) == (
        f"d.py:{wait}: error [deadlock]: nothing can move and the runtime sequence is not done "
        "(2 core(s) blocked)\n"
        f"  the runtime waits at rt.wait() for its drain of 'c' (line {wait - 1}) to complete "
        f"(d.py:{wait})\n"
        "  <- the shim DMA (0,0) draining 'c' waits for data (d.py:11)\n"
        "  <- the DMA of q[0,0] (0,3) sending 'c' waits for q[0,0] to release an element to "
        "send (d.py:11)\n"
        "  <- q[0,0] (0,3) waits to acquire 'm' (consume) for data to arrive (d.py:23)\n"
        "  <- the DMA of q[0,0] (0,3) receiving 'm' waits for every receiver of the broadcast "
        "to take the element with it (d.py:10)\n"
        "  <- the DMA of p[0,0] (0,2) sending 'm' waits for every receiver of the broadcast to "
        "take its element; the shim DMA (0,0) draining 'm' has not (d.py:10)\n"
        "  <- the shim DMA (0,0) draining 'm' has no transfer queued: the runtime issues its "
        f"drain of 'm' only after the wait it is blocked in (d.py:{wait + 1})\n"
        "  <- back to the runtime: a wait-for cycle\n"
        "  fix: issue every fill and drain that the waited drain depends on before the rt.wait() "
        "that waits for it")
