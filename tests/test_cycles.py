"""A cycle of cores that each take before they put (:mod:`aiedsl.checks.cycles`): refused by
the checks, naming the wait, the chain of cores behind the drained data, the acquire each is
stuck at and a core that can send first; the look-alikes that run are passed.

The hang hunter's and the MLIR-AIR porter's case: a worker-to-worker exchange or a ring whose
every core acquires its neighbour's element before it hands its own on. ``aiedsl check`` passed
it (a cycle was taken to supply without limit) and only ``aiedsl sim`` found the deadlock.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest

from aiedsl.checks import check_design
from aiedsl.errors import DesignError
from aiedsl.ir.reach import Reach
from aiedsl.loader import load_design
from aiedsl.sim import Deadlock, simulate

DesignFile = Callable[..., Path]

RING = """from aiedsl import Tensor, define, design, fifo, herd, i32, loop, runtime
from aiedsl.kernels import add, passthrough

ORDER = define("ORDER", "get_first")
N = define("N", 4)


@design(device="npu1_1col")
def ring(inp: Tensor[N * 1024, i32], out: Tensor[N * 1024, i32]):
    a = fifo(Tensor[1024, i32], name="a")
    e = [fifo(Tensor[1024, i32], depth=1, name=f"e{i}") for i in range(3)]
    r = fifo(Tensor[1024, i32], name="r")
    copy = passthrough(Tensor[1024, i32])
    add_k = add(Tensor[1024, i32])

    @herd(rows=3)
    def core(x, y):
        send, recv = e[y], e[(y + 2) % 3]
        for _ in loop(N):
            if y == 0:
                with a.consume() as m:
                    if ORDER == "put_first":
                        with send.produce() as s:
                            copy(m, s)
                        with recv.consume() as n, r.produce() as o:
                            add_k(m, n, o)
                    else:
                        with recv.consume() as n, send.produce() as s, r.produce() as o:
                            copy(m, s)
                            add_k(m, n, o)
            else:
                with recv.consume() as n, send.produce() as s:
                    copy(n, s)

    with runtime() as rt:
        rt.fill(a, inp)
        rt.drain(r, out)


@ring.reference
def reference(inp):
    return inp + inp
"""

TAIL = """from aiedsl import Tensor, design, fifo, herd, i32, loop, memtile, runtime
from aiedsl.kernels import add, passthrough


@design(device="npu1_1col")
def tail(inp: Tensor[4096, i32], out: Tensor[4096, i32]):
    a = fifo(Tensor[1024, i32], name="a")
    e01 = fifo(Tensor[1024, i32], name="e01")
    e01m = e01.forward(name="e01m")
    e10 = fifo(Tensor[1024, i32], name="e10")
    x = fifo(Tensor[1024, i32], name="x")
    r = fifo(Tensor[1024, i32], name="r")
    copy = passthrough(Tensor[1024, i32])
    add_k = add(Tensor[1024, i32])

    @herd(rows=3)
    def core(_, y):
        for _ in loop(4):
            if y == 0:
                with e10.consume() as n, a.consume() as m, e01.produce() as s:
                    add_k(m, n, s)
            elif y == 1:
                with e01m.consume() as n, e10.produce() as s, x.produce() as t:
                    copy(n, s)
                    copy(n, t)
            else:
                with x.consume() as n, r.produce() as o:
                    copy(n, o)

    with runtime() as rt:
        rt.fill(a, inp)
        rt.drain(r, out)


@tail.reference
def reference(inp):
    return inp
"""


def check_error(path: Path, defines: dict[str, str] | None = None) -> str:
    with pytest.raises(DesignError) as excinfo:
        check_design(load_design(path, defines).ir)
    return str(excinfo.value)


def runs(path: Path, defines: dict[str, str] | None = None) -> bool:
    """The checks pass ``path`` and the simulator runs it to the right result."""
    handle = load_design(path, defines)
    check_design(handle.ir)
    return simulate(handle).passed


RING_ERROR = (
    "d.py:35: error [hang: core cycle]: the runtime waits at the end of its sequence for its "
    "drain of 'r' (line 37) to complete, but core[0,0] waits to acquire 'e2' (line 28), which "
    "core[0,2] makes; core[0,2] waits to acquire 'e1' (line 32), which core[0,1] makes; "
    "core[0,1] waits to acquire 'e0' (line 32), which core[0,0] makes: core[0,0], core[0,2] "
    "and core[0,1] wait for one another (a wait-for cycle): none can move first, and the "
    "runtime blocks in the wait forever (a silent hang on the NPU)\n"
    "  limit: a cycle of cores joined by fifos moves only if one of its cores releases an "
    "element before it acquires one that comes back round the cycle\n"
    "  found: at most 0 of the {n} elements of 'r' the drain needs can arrive; core[0,0] can "
    "get 0 elements of 'e2' and waits for element 1; core[0,2] can get 0 elements of 'e1' and "
    "waits for element 1; core[0,1] can get 0 elements of 'e0' and waits for element 1\n"
    "  d.py:37: the drain of 'r' waited for\n"
    "  d.py:28: core[0,0] waits here to acquire 'e2' (consume)\n"
    "  d.py:32: core[0,2] waits here to acquire 'e1' (consume)\n"
    "  d.py:32: core[0,1] waits here to acquire 'e0' (consume)\n"
    "  fix: break the cycle: one core of it must send an element before it waits for one that "
    "comes back round; in core[0,0], for instance, release 'e0' before acquiring 'e2' (line "
    "28), so what it sends first does not depend on what comes back. More depth does not "
    "help: no core of the cycle waits for a free buffer")


@pytest.mark.parametrize("n", ["4", "200"])
def test_a_ring_whose_cores_all_take_first_is_refused_whole(n: str,
                                                            design_file: DesignFile) -> None:
    """Three cores in a ring, each acquiring what comes round before it sends: nothing moves,
    however many elements the ring would pass."""
    path = design_file(RING)
    assert check_error(path, {"N": n}) == RING_ERROR.replace("{n}", n)


def test_the_fix_runs(design_file: DesignFile) -> None:
    """core[0,0] sends its element first (release 'e0' before acquiring 'e2'): the ring runs."""
    assert runs(design_file(RING), {"ORDER": "put_first"})


def test_a_long_exchange_is_left_to_the_simulator(design_file: DesignFile) -> None:
    """A ring that keeps exchanging moves one exchange per round of the bound, which stops
    after ROUNDS past the cores and says nothing (it takes the cycle as unbounded), and the
    design is passed: a bound that is never settled is never used to refuse."""
    path = design_file(RING)
    defines = {"N": "200", "ORDER": "put_first"}
    handle = load_design(path, defines)
    reach = Reach(handle.ir)
    assert reach.cyclic()
    assert reach.settled(len(handle.ir.runtime)) is None
    check_design(handle.ir)


def test_a_short_exchange_settles_where_every_core_ends(design_file: DesignFile) -> None:
    handle = load_design(design_file(RING), {"ORDER": "put_first"})
    settled = Reach(handle.ir).settled(len(handle.ir.runtime))
    assert settled is not None
    assert [settled[c].blocked for c in ("core[0,0]", "core[0,1]", "core[0,2]")] == [None] * 3
    assert settled["core[0,0]"].released[("r", "produce")] == 4


def test_the_chain_follows_a_memtile_link_and_names_the_core_outside_the_cycle(
        design_file: DesignFile) -> None:
    """core[0,2] drains what core[0,1] makes; core[0,1] waits for core[0,0]'s element through a
    memtile forward, core[0,0] for core[0,1]'s: the cycle is the two, core[0,2] waits on it."""
    msg = check_error(design_file(TAIL))
    assert msg.splitlines()[0] == (
        "d.py:30: error [hang: core cycle]: the runtime waits at the end of its sequence for its "
        "drain of 'r' (line 32) to complete, but core[0,2] waits to acquire 'x' (line 27), which "
        "core[0,1] makes; core[0,1] waits to acquire 'e01m' (line 23), which core[0,0] makes; "
        "core[0,0] waits to acquire 'e10' (line 20), which core[0,1] makes: core[0,1] and "
        "core[0,0] wait for each other (a wait-for cycle): neither can move first, and the "
        "runtime blocks in the wait forever (a silent hang on the NPU)")
    # the fix is told to the core that has data of its own ('a'), which the forward passes on
    assert msg.splitlines()[-1].startswith(
        "  fix: break the cycle: one core of it must send an element before it waits for one "
        "that comes back round; in core[0,0], for instance, release 'e01' before acquiring "
        "'e10' (line 20)")


def test_the_simulator_finds_the_same_cycle(design_file: DesignFile) -> None:
    """What the check refuses, the simulator (given the placement, so no check runs) deadlocks
    on, in the same cycle."""
    from aiedsl.place.placer import place
    from aiedsl.targets import get_target

    handle = load_design(design_file(RING))
    with pytest.raises(Deadlock) as excinfo:
        simulate(handle, placed=place(handle.ir, get_target(handle.ir.device)))
    assert str(excinfo.value).splitlines()[-2] == "  <- back to core[0,0] (0,2): a wait-for cycle"


@pytest.mark.parametrize("path", sorted(p.name for p in
                                        (Path(__file__).parent.parent / "designs").glob("*.py")))
def test_no_shipped_design_has_a_cycle_of_cores(path: str, in_root: Path) -> None:
    assert not Reach(load_design(f"designs/{path}").ir).cyclic()
