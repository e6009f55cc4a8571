"""How the checks that follow the runtime sequence wait by wait (runtime order, core cycles,
barrier order) grow with the sequence's length: each design below checked at B and 4B batches of
fill, drain and rt.sync().

    python bench/sequence_checks.py [B]

Each check asks at every wait how far the cores can have run and must have run; when each such
answer rescanned the sequence up to its wait, the time grew with the square of the length (the
ratio column near 16). It should stay near 4: a wait costs what the design's programs cost to
walk, not what the sequence before it holds. Times are of those three checks alone, the best of
three runs.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from aiedsl.checks.barriers import check_barrier_order
from aiedsl.checks.cycles import check_core_cycles
from aiedsl.checks.runtime_order import check_runtime_order
from aiedsl.loader import load_design

GATED = '''
from aiedsl import Tensor, barrier, design, fifo, herd, i32, loop, rtp, runtime, u8
from aiedsl.kernels import threshold


@design(device="npu1_1col")
def d(inp: Tensor[{B} * 1024, u8], out: Tensor[{B} * 1024, u8]):
    a = fifo(Tensor[512, u8], name="a")
    b = fifo(Tensor[512, u8], name="b")
    thr = rtp(Tensor[16, i32], name="thr")
    go = barrier(name="go")
    k = threshold(512)

    @herd()
    def core():
        for _ in loop({B}):
            for v in (1, {second}):
                go.wait_for_value(v)
                with a.consume() as s, b.produce() as t:
                    k(s, t, thr[0], 512)

    with runtime() as rt:
        rt.rtp_write(thr, 0, 7)
        for i in range({B}):
            for h, v in enumerate((1, {second})):
                rt.set_barrier(go, v)
                rt.fill(a, inp, ((2 * i + h) * 512, [512], [1]))
                rt.drain(b, out, ((2 * i + h) * 512, [512], [1]))
                rt.sync()
'''
"""A core that waits on a barrier before each of its two calls a batch, for 1 both times
(the reviewer's design: one value set once stays) or for 1 then 2 (the runtime sets each in
turn, so the walks match a pass of the loop per two sets)."""

RING = '''
from aiedsl import Tensor, design, fifo, herd, i32, local, loop, runtime
from aiedsl.kernels import passthrough

C = 16


@design(device="npu1")
def ring(inp: Tensor[{B} * 64, i32], out: Tensor[{B} * 64, i32]):
    a = fifo(Tensor[64, i32], name="a")
    r = fifo(Tensor[64, i32], name="r")
    e = [fifo(Tensor[64, i32], depth=2, name=f"e{{i}}") for i in range(C)]
    copy = passthrough(Tensor[64, i32])
    t = local(Tensor[64, i32], initial=0)

    @herd(cols=4, rows=4)
    def core(x, y):
        i = x * 4 + y
        send, recv = e[i], e[(i - 1) % C]
        if i == 0:
            with a.consume() as m, send.produce() as s:
                copy(m, s)
            for _ in loop({B} - 1):
                with recv.consume() as n, r.produce() as o:
                    copy(n, o)
                with a.consume() as m, send.produce() as s:
                    copy(m, s)
            with recv.consume() as n, r.produce() as o:
                copy(n, o)
        else:
            for _ in loop({B}):
                with recv.consume() as n, send.produce() as s:
                    copy(n, t)
                    copy(t, s)

    with runtime() as rt:
        for b in range({B}):
            rt.fill(a, inp, (b * 64, [64], [1]))
            rt.drain(r, out, (b * 64, [64], [1]))
            rt.sync()
'''
"""tests/test_cycles.py's ring of 16 cores, a sync after each exchange."""


def seconds(path: Path) -> float:
    """The best of three runs of the sequence checks on the design at ``path``."""
    d = load_design(path).ir
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        check_runtime_order(d)
        check_core_cycles(d)
        check_barrier_order(d)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    batches = int(sys.argv[1]) if len(sys.argv) > 1 else 256
    designs = {"one value": GATED.replace("{second}", "1"),
               "1 then 2": GATED.replace("{second}", "2"), "ring of 16": RING}
    print(f"{'design':<12} {'B=' + str(batches):>10} {'B=' + str(4 * batches):>10}  ratio")
    with tempfile.TemporaryDirectory() as tmp:
        for name, source in designs.items():
            times = []
            for b in (batches, 4 * batches):
                path = Path(tmp) / "d.py"
                path.write_text(source.replace("{B}", str(b)).replace("{{", "{")
                                .replace("}}", "}"))
                times.append(seconds(path))
            print(f"{name:<12} {times[0]:>9.2f}s {times[1]:>9.2f}s  {times[1] / times[0]:5.1f}")


if __name__ == "__main__":
    main()
