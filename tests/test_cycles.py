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
    "  limit: a cycle of cores joined by fifos moves only if one of its cores releases, before "
    "it acquires what comes back round the cycle, what the next core needs to go on\n"
    "  found: at most 0 of the {n} elements of 'r' the drain needs can arrive; core[0,0] can "
    "get 0 elements of 'e2' and waits for element 1; core[0,2] can get 0 elements of 'e1' and "
    "waits for element 1; core[0,1] can get 0 elements of 'e0' and waits for element 1\n"
    "  d.py:37: the drain of 'r' waited for\n"
    "  d.py:28: core[0,0] waits here to acquire 'e2' (consume)\n"
    "  d.py:32: core[0,2] waits here to acquire 'e1' (consume)\n"
    "  d.py:32: core[0,1] waits here to acquire 'e0' (consume)\n"
    "  fix: break the cycle: one core of it must send what the next needs before it waits for "
    "what comes back round; in core[0,0], for instance, release an element of 'e0' before "
    "acquiring 'e2' (line 28): core[0,1] waits for element 1 of 'e0' at line 32; what it sends "
    "first must not depend on what comes back. More depth does not help: no core of the cycle "
    "waits for a free buffer")


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
        "  fix: break the cycle: one core of it must send what the next needs before it waits "
        "for what comes back round; in core[0,0], for instance, release an element of 'e01' "
        "before acquiring 'e10' (line 20): core[0,1] waits for element 1 of 'e01m' at line 23")


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


# -- what a soundness tester found in the messages, and the bound's speed ------------------------

REGROUP = """from aiedsl import Tensor, define, design, fifo, herd, i32, local, loop, runtime
from aiedsl.kernels import passthrough

N = define("N", 4)
FIX = define("FIX", 0)


@design(device="npu1_1col")
def regroup(inp: Tensor[N * 256, i32], out: Tensor[N * 256, i32]):
    a = fifo(Tensor[256, i32], name="a")
    r = fifo(Tensor[256, i32], name="r")
    e0 = fifo(Tensor[256, i32], name="e0")
    e0m = e0.forward(Tensor[512, i32], name="e0m")
    e1 = fifo(Tensor[512, i32], name="e1")
    c256 = passthrough(Tensor[256, i32])
    c512 = passthrough(Tensor[512, i32])
    t0 = local(Tensor[256, i32], initial=0)
    t1 = local(Tensor[512, i32], initial=0)

    @herd(rows=2)
    def core(x, y):
        if y == 0:
            for _ in loop(N // 2):
                for _ in range(FIX):       # the fix: release 'e0' before acquiring 'e1'
                    with e0.produce() as s:
                        c256(t0, s)
                with e1.consume() as n:
                    c512(n, t1)
                for _ in range(2):
                    with a.consume() as m, r.produce() as o:
                        c256(m, o)
                for _ in range(2 - FIX):
                    with e0.produce() as s:
                        c256(t0, s)
        else:
            for _ in loop(N // 2):
                with e0m.consume() as n, e1.produce() as s:
                    c512(n, s)

    with runtime() as rt:
        rt.fill(a, inp)
        rt.drain(r, out)


@regroup.reference
def reference(inp):
    return inp.copy()
"""
"""core[0,0] sends 256-element 'e0', which a forward regroups into 512-element 'e0m' for
core[0,1]: one element sent first is not enough; FIX=2 sends two."""

PHASES = """from aiedsl import Tensor, define, design, fifo, herd, i32, local, loop, runtime
from aiedsl.kernels import passthrough

N1 = define("N1", 4)
N2 = define("N2", 4)
B = define("B", 2)


@design(device="npu1_1col")
def phases(inp: Tensor[(N1 + N2) * 256, i32], out: Tensor[(N1 + N2) * 256, i32]):
    a = fifo(Tensor[256, i32], name="a")
    r = fifo(Tensor[256, i32], name="r")
    e01 = fifo(Tensor[256, i32], name="e01")
    e10 = fifo(Tensor[256, i32], name="e10")
    copy = passthrough(Tensor[256, i32])
    t = local(Tensor[256, i32], initial=0)

    @herd(rows=2)
    def core(x, y):
        if y == 0:
            for _ in loop(N1):           # phase 1: put, then take
                with a.consume() as m, e01.produce() as s:
                    copy(m, s)
                with e10.consume() as n, r.produce() as o:
                    copy(n, o)
            for _ in loop(N2):           # phase 2: take, then put
                with e10.consume() as n, r.produce() as o:
                    copy(n, o)
                with a.consume() as m, e01.produce() as s:
                    copy(m, s)
        else:
            for _ in loop(N1 + N2):
                with e01.consume() as n, e10.produce() as s:
                    copy(n, t)
                    copy(t, s)

    with runtime() as rt:
        per = (N1 + N2) // B
        for b in range(B):
            rt.fill(a, inp, (b * per * 256, [per * 256], [1]))
            rt.drain(r, out, (b * per * 256, [per * 256], [1]))
            rt.sync()


@phases.reference
def reference(inp):
    return inp.copy()
"""
"""A ring that puts first for N1 iterations, then takes first: it hangs in the second batch."""

SYNC_AT_TOP = """from aiedsl import Tensor, define, design, fifo, herd, i32, loop, runtime
from aiedsl.kernels import passthrough

B = define("B", 2)


@design(device="npu1_1col")
def syncs(inp: Tensor[B * 1024, i32], out: Tensor[B * 1024, i32]):
    a = fifo(Tensor[256, i32], name="a")
    r = fifo(Tensor[256, i32], name="r")
    e01 = fifo(Tensor[256, i32], name="e01")
    e10 = fifo(Tensor[256, i32], name="e10")
    copy = passthrough(Tensor[256, i32])

    @herd(rows=2)
    def core(x, y):
        for _ in loop(B * 4):
            if y == 0:
                with e10.consume() as n, a.consume() as m, e01.produce() as s, r.produce() as o:
                    copy(m, s)
                    copy(n, o)
            else:
                with e01.consume() as n, e10.produce() as s:
                    copy(n, s)

    with runtime() as rt:
        for b in range(B):
            if b:
                rt.sync()          # waits for the previous batch's drain
            rt.fill(a, inp, (b * 1024, [1024], [1]))
            rt.drain(r, out, (b * 1024, [1024], [1]))


@syncs.reference
def reference(inp):
    return inp.copy()
"""
"""The sync of every batch but the first, at the top of a Python loop, before the batch's
drain: the wait that hangs is that sync's, not the sequence's end."""

FILL_WAIT = """from aiedsl import Tensor, define, design, fifo, herd, i32, local, loop, runtime
from aiedsl.kernels import passthrough

ORDER = define("ORDER", "get_first")


@design(device="npu1_1col")
def zl(inp: Tensor[1024, i32], out: Tensor[1024, i32]):
    a = fifo(Tensor[256, i32], name="a")
    r = fifo(Tensor[256, i32], name="r")
    e01 = fifo(Tensor[256, i32], name="e01")
    e10 = fifo(Tensor[256, i32], name="e10")
    copy = passthrough(Tensor[256, i32])
    t = local(Tensor[256, i32], initial=0)

    @herd(rows=2)
    def core(x, y):
        if y == 0:
            for _ in loop(4):
                if ORDER == "get_first":
                    with e10.consume() as n, a.consume() as m, e01.produce() as s, r.produce() as o:
                        copy(m, s)
                        copy(n, o)
                else:
                    with a.consume() as m, e01.produce() as s:
                        copy(m, s)
                    with e10.consume() as n, r.produce() as o:
                        copy(n, o)
        else:
            for _ in loop(4):
                with e01.consume() as n, e10.produce() as s:
                    copy(n, t)
                    copy(t, s)

    with runtime() as rt:
        rt.fill(a, inp, wait=True)
        rt.wait(a)                            # the fill's own wait: the ring must take it all
        rt.drain(r, out)


@zl.reference
def reference(inp):
    return inp.copy()
"""
"""The runtime waits for a fill first: the ring must take all of it, and it cannot."""

LONG_RING = """from aiedsl import Tensor, define, design, fifo, herd, i32, local, loop, runtime
from aiedsl.kernels import passthrough

N = define("N", 256)      # exchanges round the ring
B = define("B", 64)       # batches, each waited by rt.sync()
COLS = define("COLS", 4)
ROWS = 4
DEV = define("DEV", "npu1")
C = COLS * ROWS


@design(device=DEV)
def longring(inp: Tensor[N * 64, i32], out: Tensor[N * 64, i32]):
    a = fifo(Tensor[64, i32], name="a")
    r = fifo(Tensor[64, i32], name="r")
    e = [fifo(Tensor[64, i32], depth=2, name=f"e{i}") for i in range(C)]
    copy = passthrough(Tensor[64, i32])
    t = local(Tensor[64, i32], initial=0)

    @herd(cols=COLS, rows=ROWS)
    def core(x, y):
        i = x * ROWS + y
        send, recv = e[i], e[(i - 1) % C]
        if i == 0:
            with a.consume() as m, send.produce() as s:
                copy(m, s)
            for _ in loop(N - 1):
                with recv.consume() as n, r.produce() as o:
                    copy(n, o)
                with a.consume() as m, send.produce() as s:
                    copy(m, s)
            with recv.consume() as n, r.produce() as o:
                copy(n, o)
        else:
            for _ in loop(N):
                with recv.consume() as n, send.produce() as s:
                    copy(n, t)
                    copy(t, s)

    with runtime() as rt:
        per = N // B
        for b in range(B):
            rt.fill(a, inp, (b * per * 64, [per * 64], [1]))
            rt.drain(r, out, (b * per * 64, [per * 64], [1]))
            rt.sync()


@longring.reference
def reference(inp):
    return inp.copy()
"""
"""A 16-core ring that runs, filled and drained in B batches with a sync after each."""


def test_the_fix_counts_the_elements_a_regrouping_link_needs(design_file: DesignFile) -> None:
    """'release 'e0' before acquiring 'e1'' sent one element of 'e0', half of the first
    element of 'e0m': the fix now counts them, and that many run."""
    path = design_file(REGROUP)
    assert check_error(path).splitlines()[-1] == (
        "  fix: break the cycle: one core of it must send what the next needs before it waits "
        "for what comes back round; in core[0,0], for instance, release 2 elements of 'e0' "
        "before acquiring 'e1' (line 27): core[0,1] waits for element 1 of 'e0m' at line 37; "
        "what it sends first must not depend on what comes back. More depth does not help: no "
        "core of the cycle waits for a free buffer")
    assert runs(path, {"FIX": "2"})
    assert check_error(path, {"FIX": "1"}).startswith("d.py:40: error [hang: core cycle]")


def test_a_later_wait_counts_only_its_own_drains(design_file: DesignFile) -> None:
    """The second batch's sync hangs: the message spoke of both batches' drains (the first
    already waited for, its line twice) and of 8 elements where 4 are missing."""
    msg = check_error(design_file(PHASES)).splitlines()
    assert msg[0].startswith("d.py:42: error [hang: core cycle]: the runtime waits at rt.sync() "
                             "for its drain of 'r' (line 41) to complete")
    assert msg[2] == (
        "  found: the drain waited for here needs elements 5-8 of 'r' (earlier waits took the "
        "first 4); at most 4 can arrive; core[0,0] can get 4 elements of 'e10' and waits for "
        "element 5; core[0,1] can get 4 elements of 'e01' and waits for element 5")
    assert msg[3] == "  d.py:41: the drain of 'r' waited for"
    assert "(5 in all)" in msg[-1]


def test_a_sync_above_its_drain_is_not_the_end_of_the_sequence(design_file: DesignFile) -> None:
    """Which wait is the sequence's end was guessed from line numbers: a sync at the top of a
    loop, above the drain it waits for, was told as the end."""
    msg = check_error(design_file(SYNC_AT_TOP))
    assert msg.startswith("d.py:29: error [hang: core cycle]: the runtime waits at rt.sync() for "
                          "its drain of 'r' (line 31) to complete")


def test_a_wait_for_a_fill_first_leaves_the_rest_to_the_simulator(
        design_file: DesignFile) -> None:
    """The runtime blocks in its wait for the fill before it issues the drain: the check spoke
    of the drain's wait at the end, which the runtime never reaches."""
    handle = load_design(design_file(FILL_WAIT))
    check_design(handle.ir)


@pytest.mark.parametrize("defines", [{"N": "1024", "B": "256"},
                                     {"N": "1024", "B": "256", "DEV": "npu2", "COLS": "8"}])
def test_a_long_ring_in_many_batches_settles_at_every_wait(defines: dict[str, str],
                                                           design_file: DesignFile) -> None:
    """Each wait's bound starts from the last one's: a ring of 16 (32) cores exchanging 1024
    elements in 256 batches settles at every sync, where from nothing each took its full cap
    of rounds (12 s of check for 16 cores, 45 s for 32)."""
    from aiedsl.checks.runtime_order import waited_drains

    handle = load_design(design_file(LONG_RING), defines)
    reach = Reach(handle.ir)
    assert all(reach.settled(i) is not None for i, _, _ in waited_drains(handle.ir))
    check_design(handle.ir)
