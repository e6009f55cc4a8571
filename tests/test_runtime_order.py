"""A wait of the runtime sequence blocked for ever by a fill issued after it
(:mod:`aiedsl.checks.runtime_order`): refused by the checks, naming the wait, the drain, the
late fills and the counts, whole; and the look-alikes that run are passed.

The tester's case: an MLIR-AIR port whose runtime waits for the whole output before it sends
the second half of the input (a ChannelGet on L3 awaited before the ChannelPut it depends on).
``aiedsl check`` passed it and only ``aiedsl sim`` found the deadlock.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest

from aiedsl.checks import check_design
from aiedsl.errors import DesignError
from aiedsl.loader import load_design
from aiedsl.sim import Deadlock, simulate

DesignFile = Callable[..., Path]

PASSTHROUGH = '''
from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
from aiedsl.kernels import passthrough


@design(device="npu1_1col")
def d(a: Tensor[4096, i32], b: Tensor[4096, i32]):
    fin = fifo(Tensor[1024, i32], name="fin")
    fout = fifo(Tensor[1024, i32], name="fout")
    cp = passthrough(Tensor[1024, i32])

    @herd()
    def core():
        for _ in loop(4):
            with fin.consume() as s, fout.produce() as t:
                cp(s, t)

    with runtime() as rt:
{runtime}

@d.reference
def reference(a):
    return a.copy()
'''


def passthrough(runtime: str) -> str:
    """A core copying 4 elements of 'fin' to 'fout'; ``runtime`` its sequence (from line 18)."""
    return PASSTHROUGH.replace("{runtime}", runtime.strip("\n"))


def check_error(path: Path, defines: dict[str, str] | None = None) -> str:
    with pytest.raises(DesignError) as excinfo:
        check_design(load_design(path, defines).ir)
    return str(excinfo.value)


def runs(path: Path, defines: dict[str, str] | None = None) -> bool:
    """The checks pass ``path`` and the simulator runs it to the right result."""
    handle = load_design(path, defines)
    check_design(handle.ir)
    result = simulate(handle)
    return result.passed


TESTER = '''
        rt.fill(fin, a, (0, [2048], [1]))
        rt.drain(fout, b)
        rt.sync()
        rt.fill(fin, a, (2048, [2048], [1]))
'''


def test_a_sync_before_the_fill_its_drain_needs_is_refused(
        design_file: DesignFile, monkeypatch: pytest.MonkeyPatch) -> None:
    path = design_file(passthrough(TESTER))
    assert check_error(path) == (
        "d.py:20: error [hang: wait before fill]: the runtime waits at rt.sync() for its drain "
        "of 'fout' (line 19) to complete, but that data needs the fill of 'fin' (line 21), "
        "issued only after the wait: the runtime blocks in the wait forever (a silent hang on "
        "the NPU)\n"
        "  limit: the drains a wait waits for (and the earlier drains of their fifo, which "
        "complete first) get only what the fills issued before the wait can make\n"
        "  found: they need 4 elements of 'fout'; at most 2 can arrive from the fills before "
        "the wait\n"
        "  d.py:19: the drain of 'fout' waited for\n"
        "  d.py:21: the runtime issues its fill of 'fin' only after the wait it is blocked in\n"
        "  fix: issue every fill and drain that the waited drain depends on before the "
        "rt.sync() that waits for it: move the fill of 'fin' (line 21) before line 20, or wait "
        "for the drain of 'fout' after issuing it")
    # without this check, the simulator runs it and finds the same cycle
    monkeypatch.setattr("aiedsl.checks.check_runtime_order", lambda d: None)
    with pytest.raises(Deadlock) as excinfo:
        simulate(load_design(path))
    assert ("the runtime issues its fill of 'fin' only after the wait it is blocked in "
            "(d.py:21)") in str(excinfo.value)


@pytest.mark.parametrize("fixed", [
    # both fixes the message gives: the fill moved before the wait, or the wait after the fill
    TESTER.replace("        rt.sync()\n", "").replace("(0, [2048], [1]))\n",
                                                     "(0, [2048], [1]))\n        rt.sync()\n"),
    TESTER.replace("        rt.sync()\n", "") + "        rt.sync()\n",
    # and waiting in the middle for as much as the fills before the wait make
    '''
        rt.fill(fin, a, (0, [2048], [1]))
        rt.drain(fout, b, (0, [2048], [1]))
        rt.sync()
        rt.fill(fin, a, (2048, [2048], [1]))
        rt.drain(fout, b, (2048, [2048], [1]))
''',
])
def test_a_sync_after_the_fills_its_drain_needs_passes(fixed: str,
                                                      design_file: DesignFile) -> None:
    assert runs(design_file(passthrough(fixed)))


def test_only_the_late_fills_the_drain_needs_are_named(design_file: DesignFile) -> None:
    """The second of two waited drains needs all four elements; of the three quarters filled
    after the sync it needs only the next two, and the first drain is counted in."""
    path = design_file(passthrough('''
        rt.fill(fin, a, (0, [1024], [1]))
        rt.fill(fin, a, (1024, [1024], [1]))
        rt.drain(fout, b, (0, [1024], [1]))
        rt.drain(fout, b, (1024, [3072], [1]))
        rt.sync()
        rt.fill(fin, a, (2048, [1024], [1]))
        rt.fill(fin, a, (3072, [1024], [1]))
'''))
    assert check_error(path) == (
        "d.py:22: error [hang: wait before fill]: the runtime waits at rt.sync() for its "
        "drains of 'fout' (lines 20, 21) to complete, but that data needs the fills of 'fin' "
        "(lines 23, 24), issued only after the wait: the runtime blocks in the wait forever (a "
        "silent hang on the NPU)\n"
        "  limit: the drains a wait waits for (and the earlier drains of their fifo, which "
        "complete first) get only what the fills issued before the wait can make\n"
        "  found: they need 4 elements of 'fout'; at most 2 can arrive from the fills before "
        "the wait\n"
        "  d.py:20: an earlier drain of 'fout', which completes first\n"
        "  d.py:21: the drain of 'fout' waited for\n"
        "  d.py:23: the runtime issues its fill of 'fin' only after the wait it is blocked in\n"
        "  d.py:24: the runtime issues its fill of 'fin' only after the wait it is blocked in\n"
        "  fix: issue every fill and drain that the waited drain depends on before the "
        "rt.sync() that waits for it: move the fills of 'fin' (lines 23, 24) before line 22, "
        "or wait for the drain of 'fout' after issuing them")


def test_the_fewest_late_fills_are_named(design_file: DesignFile) -> None:
    path = design_file(passthrough('''
        rt.fill(fin, a, (0, [1024], [1]))
        rt.drain(fout, b, (0, [2048], [1]))
        rt.wait(fout)
        rt.fill(fin, a, (1024, [1024], [1]))
        rt.fill(fin, a, (2048, [2048], [1]))
        rt.drain(fout, b, (2048, [2048], [1]))
'''))
    lines = check_error(path).splitlines()
    assert lines[0] == (
        "d.py:20: error [hang: wait before fill]: the runtime waits at rt.wait() for its drain "
        "of 'fout' (line 19) to complete, but that data needs the fill of 'fin' (line 21), "
        "issued only after the wait: the runtime blocks in the wait forever (a silent hang on "
        "the NPU)")
    assert lines[-1] == (
        "  fix: issue every fill and drain that the waited drain depends on before the "
        "rt.wait() that waits for it: move the fill of 'fin' (line 21) before line 20, or wait "
        "for the drain of 'fout' after issuing it")


LINKED = '''
from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
from aiedsl.kernels import passthrough


@design(device="npu1_1col")
def d(a: Tensor[4096, i32], b: Tensor[4096, i32]):
    a_l3 = fifo(Tensor[2048, i32], name="a_l3")
    fin = a_l3.forward(Tensor[1024, i32], name="fin")
    fout = fifo(Tensor[1024, i32], name="fout")
    cp = passthrough(Tensor[1024, i32])

    @herd()
    def core():
        for _ in loop(4):
            with fin.consume() as s, fout.produce() as t:
                cp(s, t)

    with runtime() as rt:
        rt.fill(a_l3, a, (0, [2048], [1]))
        rt.drain(fout, b, (0, [3072], [1]))
        rt.wait(fout)
        rt.fill(a_l3, a, (2048, [2048], [1]))
        rt.drain(fout, b, (3072, [1024], [1]))


@d.reference
def reference(a):
    return a.copy()
'''


def test_a_late_fill_behind_a_memtile_forward_is_found(design_file: DesignFile) -> None:
    """fill -> memtile forward (one 2048-element buffer makes two of 1024) -> core -> drain:
    the first fill makes 2 elements of 'fout', the waited drain takes 3."""
    path = design_file(LINKED)
    assert check_error(path) == (
        "d.py:21: error [hang: wait before fill]: the runtime waits at rt.wait() for its drain "
        "of 'fout' (line 20) to complete, but that data needs the fill of 'a_l3' (line 22), "
        "issued only after the wait: the runtime blocks in the wait forever (a silent hang on "
        "the NPU)\n"
        "  limit: the drains a wait waits for (and the earlier drains of their fifo, which "
        "complete first) get only what the fills issued before the wait can make\n"
        "  found: they need 3 elements of 'fout'; at most 2 can arrive from the fills before "
        "the wait\n"
        "  d.py:20: the drain of 'fout' waited for\n"
        "  d.py:22: the runtime issues its fill of 'a_l3' only after the wait it is blocked in\n"
        "  fix: issue every fill and drain that the waited drain depends on before the "
        "rt.wait() that waits for it: move the fill of 'a_l3' (line 22) before line 21, or wait "
        "for the drain of 'fout' after issuing it")
    # the fix runs; so does waiting for only the two elements the first fill makes
    moved = "        rt.fill(a_l3, a, (2048, [2048], [1]))\n"
    assert runs(design_file(LINKED.replace(moved, "").replace(
        "        rt.wait(fout)\n", moved + "        rt.wait(fout)\n")))
    assert runs(design_file(LINKED.replace("(0, [3072], [1])", "(0, [2048], [1])").replace(
        "(3072, [1024], [1])", "(2048, [2048], [1])")))


EXCHANGE = '''
from aiedsl import Tensor, define, design, fifo, herd, i32, loop, runtime
from aiedsl.kernels import add, passthrough

ORDER = define("ORDER", "put_first")
LATE = define("LATE", 1)


@design(device="npu1_1col")
def d(in0: Tensor[4096, i32], in1: Tensor[4096, i32],
      out0: Tensor[4096, i32], out1: Tensor[4096, i32]):
    a0 = fifo(Tensor[1024, i32], name="a0")
    a1 = fifo(Tensor[1024, i32], name="a1")
    e01 = fifo(Tensor[1024, i32], depth=1, name="e01")
    e10 = fifo(Tensor[1024, i32], depth=1, name="e10")
    r0 = fifo(Tensor[1024, i32], name="r0")
    r1 = fifo(Tensor[1024, i32], name="r1")
    copy = passthrough(Tensor[1024, i32])
    add_k = add(Tensor[1024, i32])

    @herd(rows=2)
    def core(x, y):
        mine, send, recv, res = (a0, e01, e10, r0) if y == 0 else (a1, e10, e01, r1)
        for _ in loop(4):
            if ORDER == "put_first":
                with mine.consume() as m:
                    with send.produce() as s:
                        copy(m, s)
                    with recv.consume() as n, res.produce() as r:
                        add_k(m, n, r)
            else:
                with send.produce() as s, recv.consume() as n, mine.consume() as m:
                    copy(m, s)
                    with res.produce() as r:
                        add_k(m, n, r)

    with runtime() as rt:
        rt.fill(a0, in0)
        if not LATE:
            rt.fill(a1, in1)
        rt.drain(r0, out0)
        rt.drain(r1, out1)
        rt.sync()
        if LATE:
            rt.fill(a1, in1)


@d.reference
def reference(in0, in1):
    return in0 + in1, in1 + in0
'''


def test_a_cycle_of_cores_does_not_hide_a_late_fill(design_file: DesignFile) -> None:
    """Two cores exchange a tile each iteration (a cycle: core[0,0] -> e01 -> core[0,1] -> e10
    -> core[0,0]); core[0,1]'s input is filled after the sync, so it never sends its first
    tile and 'r0' never gets one. The bound of the cycle settles with core[0,1] stopped at
    its own input, which only the late fill feeds."""
    path = design_file(EXCHANGE)
    assert check_error(path) == (
        "d.py:42: error [hang: wait before fill]: the runtime waits at rt.sync() for its drain "
        "of 'r0' (line 40) to complete, but that data needs the fill of 'a1' (line 44), issued "
        "only after the wait: the runtime blocks in the wait forever (a silent hang on the "
        "NPU)\n"
        "  limit: the drains a wait waits for (and the earlier drains of their fifo, which "
        "complete first) get only what the fills issued before the wait can make\n"
        "  found: they need 4 elements of 'r0'; at most 0 can arrive from the fills before the "
        "wait\n"
        "  d.py:40: the drain of 'r0' waited for\n"
        "  d.py:44: the runtime issues its fill of 'a1' only after the wait it is blocked in\n"
        "  fix: issue every fill and drain that the waited drain depends on before the "
        "rt.sync() that waits for it: move the fill of 'a1' (line 44) before line 42, or wait "
        "for the drain of 'r0' after issuing it")
    assert runs(path, {"LATE": "0"})


def test_a_hang_within_a_cycle_of_cores_is_the_cycle_checks(design_file: DesignFile) -> None:
    """Each core acquires its neighbour's tile before sending its own: a wait-for cycle with
    every fill issued before the sync. No later fill would help, so this check says nothing;
    the least fixed point of the bound settles at nothing sent, and the cycle check
    (:mod:`aiedsl.checks.cycles`) refuses it."""
    path = design_file(EXCHANGE)
    msg = check_error(path, {"LATE": "0", "ORDER": "get_first"})
    assert msg.startswith("d.py:42: error [hang: core cycle]: the runtime waits at rt.sync() "
                          "for its drain of 'r0' (line 40) to complete, but core[0,0] waits "
                          "to acquire 'e10' (line 31)")
