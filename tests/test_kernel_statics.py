"""A kernel's ``static`` and global variables are its core's in ``sim --kernels native``, as
each core of the NPU links its own ELF into its own data memory: every core calls its own copy
of the kernel's library (aiedsl.kernels.core_copies), whichever child runs the calls."""

from __future__ import annotations

import os
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator

import numpy as np
import pytest

from aiedsl.kernels import worker_client
from aiedsl.kernels.host import native
from aiedsl.kernels.text import kernel_text
from aiedsl.loader import load_design
from aiedsl.sim import simulate

DesignFile = Callable[..., Path]

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"),
                                reason="the children that run native calls need os.fork")

TWO_CORES = '''
    import numpy as np
    from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
    from aiedsl.kernels import buffer, declare

    def copy_ref(src, dst):
        dst[...] = src

    count = declare("count_calls", source="cnt.cc",
                    args=[buffer("in", Tensor[16, i32]), buffer("out", Tensor[16, i32], "out")],
                    reference=copy_ref, cycles=40, cost="-")

    @design(device="npu1_1col")
    def d(x: Tensor[4, 16, i32], y: Tensor[4, 16, i32], o: Tensor[4, 16, i32],
          p: Tensor[4, 16, i32]):
        fx = fifo(Tensor[16, i32], name="fx")
        fy = fifo(Tensor[16, i32], name="fy")
        fo = fifo(Tensor[16, i32], name="fo")
        fp = fifo(Tensor[16, i32], name="fp")

        @herd(name="a")
        def a():
            for _ in loop(4):
                with fx.consume() as s, fo.produce() as t:
                    count(s, t)

        @herd(name="b")
        def b():
            for _ in loop(4):
                with fy.consume() as s, fp.produce() as t:
                    count(s, t)

        with runtime() as rt:
            rt.fill(fx, x)
            rt.fill(fy, y)
            rt.drain(fo, o)
            rt.drain(fp, p)

    @d.reference
    def reference(x, y):
        n = np.arange(4, dtype=np.int32)[:, None]  # each core's calls count 0, 1, 2, 3
        return x + n, y + n
    '''

COUNTERS = {  # the C++ that keeps the count, and what it reads and bumps
    # the tester's reproducer: a static in the kernel's function
    "function static": ("", "static int32_t n = 0;", "n++"),
    # a global of the source
    "global": ("int32_t calls = 0;", "", "calls++"),
    # g++ makes these STB_GNU_UNIQUE, which the loader binds once for the whole process
    "template static": ("template <int N> int32_t next_call() { static int32_t n = 0; "
                        "return n++; }", "", "next_call<3>()"),
    "inline variable": ("inline int32_t calls = 0;", "", "calls++"),
}

CNT_CC = '''
#include <aie_api/aie.hpp>
#include <stdint.h>
%s
extern "C" {
void count_calls(const int32_t *in, int32_t *out) {
  %s
  const int32_t n_now = %s;
  aie::vector<int32_t, 16> v = aie::load_v<16>(in);
  aie::store_v(out, aie::add(v, aie::broadcast<int32_t, 16>(n_now)));
}
}
'''

PASSED = ["PASS o: exact (integers must match exactly)",
          "PASS p: exact (integers must match exactly)"]


def _two_cores(design_file: DesignFile, counter: str = "function static") -> Path:
    path = design_file(TWO_CORES)
    (path.parent / "cnt.cc").write_text(CNT_CC % COUNTERS[counter])
    return path


def _lines(path: Path) -> list[str]:
    return [c.line() for c in simulate(load_design(path), kernels="native").checks]


@pytest.mark.parametrize("counter", sorted(COUNTERS))
def test_each_core_counts_its_own_calls(design_file: DesignFile, counter: str) -> None:
    """Tester: two cores calling a kernel with ``static int32_t n`` interleaved one counter
    (core a saw 0 1 4 5, core b 2 3 6 7: 50% and 100% of their outputs wrong)."""
    assert _lines(_two_cores(design_file, counter)) == PASSED


def test_each_simulation_starts_the_statics_at_their_initial_values(
        design_file: DesignFile) -> None:
    """The simulating process loaded the library, and called it (which a forked child
    inherited as it was left): the cores' copies start from the C++'s initial values, run
    after run."""
    path = _two_cores(design_file)
    handle = load_design(path)
    k = handle.ir.kernels[0]
    fn = native(k, kernel_text(handle.ir, k))
    out = np.zeros(16, np.int32)
    for _ in range(3):
        fn(np.zeros(16, np.int32), out)
    assert out.tolist() == [2] * 16  # the library this process loaded counts on
    assert _lines(path) == PASSED
    assert _lines(path) == PASSED


@contextmanager
def _another_thread() -> Iterator[None]:
    """A second thread alive: the simulation's child is then forked by the workers' server."""
    stop = threading.Event()
    t = threading.Thread(target=stop.wait)
    t.start()
    try:
        yield
    finally:
        stop.set()
        t.join()


def test_the_servers_child_gives_each_core_its_own_statics(
        design_file: DesignFile, monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[Any] = []
    start = worker_client.start

    def counted(*args: Any) -> tuple[int, int]:
        started.append(args)
        return start(*args)

    monkeypatch.setattr(worker_client, "start", counted)
    path = _two_cores(design_file)
    with _another_thread():
        assert _lines(path) == PASSED
    assert len(started) == 1


def test_kernels_run_in_this_process_give_each_core_its_own_statics(
        design_file: DesignFile, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where no child can run them (no os.fork), the calls run here, each core's in its own
    copy all the same."""
    import aiedsl.kernels.worker as worker

    @contextmanager
    def no_worker(kernels: Any) -> Iterator[None]:
        yield None

    monkeypatch.setattr(worker, "isolated", no_worker)
    assert _lines(_two_cores(design_file)) == PASSED


ONE_CORE_TWO_SOURCES = '''
    import numpy as np
    from aiedsl import Tensor, design, fifo, herd, i16, i8, loop, runtime
    from aiedsl.kernels import buffer, declare

    def copy_ref(src, dst):
        dst[...] = src

    def narrow_ref(src, dst):
        dst[...] = src.astype(np.int8)

    setter = declare("setter", source="set.cc",
                     args=[buffer("src", Tensor[32, i16]), buffer("dst", Tensor[32, i16], "out")],
                     reference=copy_ref, cycles=40, cost="-")
    narrow = declare("narrow", source="narrow.cc",
                     args=[buffer("src", Tensor[32, i16]), buffer("dst", Tensor[32, i8], "out")],
                     reference=narrow_ref, cycles=40, cost="-")

    @design(device="npu1_1col")
    def d(x: Tensor[32, i16], y: Tensor[32, i16], o: Tensor[32, i8], p: Tensor[32, i8]):
        fx = fifo(Tensor[32, i16], name="fx")
        mid = fifo(Tensor[32, i16], name="mid")
        fy = fifo(Tensor[32, i16], name="fy")
        fo = fifo(Tensor[32, i8], name="fo")
        fp = fifo(Tensor[32, i8], name="fp")

        @herd(name="a")
        def a():  # sets saturate in set.cc's copy, then narrows in narrow.cc's
            with fx.consume() as s, mid.produce() as t:
                setter(s, t)
            with mid.consume() as s, fo.produce() as t:
                narrow(s, t)

        @herd(name="b")
        def b():  # narrows at the reset mode: wraps
            with fy.consume() as s, fp.produce() as t:
                narrow(s, t)

        with runtime() as rt:
            rt.fill(fx, x)
            rt.fill(fy, y)
            rt.drain(fo, o)
            rt.drain(fp, p)

    @d.reference
    def reference(x, y):
        return np.clip(x, -128, 127).astype(np.int8), y.astype(np.int8)
    '''

SET_CC = '''
#include <aie_api/aie.hpp>
#include <stdint.h>
extern "C" void setter(const int16_t *src, int16_t *dst) {
  aie::set_saturation(aie::saturation_mode::saturate);
  aie::store_v(dst, aie::load_v<32>(src));
}
'''

NARROW_CC = '''
#include <aie_api/aie.hpp>
#include <stdint.h>
extern "C" void narrow(const int16_t *src, int8_t *dst) {
  aie::accum<acc32, 32> acc;
  acc.from_vector(aie::load_v<32>(src));
  aie::store_v(dst, acc.template to_vector<int8_t>(0));
}
'''


def test_a_cores_modes_go_with_it_from_one_copy_to_another(design_file: DesignFile) -> None:
    """The modes are the core's registers, not a library's data: what core a's kernel from
    set.cc leaves reaches its next call, in narrow.cc's copy, and not core b's copy of it."""
    path = design_file(ONE_CORE_TWO_SOURCES)
    (path.parent / "set.cc").write_text(SET_CC)
    (path.parent / "narrow.cc").write_text(NARROW_CC)
    x = np.arange(-400, 400, 25, dtype=np.int16)
    result = simulate(load_design(path), {"x": x, "y": x}, kernels="native")
    # (o's note says its inputs saturate it: on purpose here)
    assert [c.line().splitlines()[0] for c in result.checks[:2]] == [
        "PASS o: exact (integers must match exactly)",
        "PASS p: exact (integers must match exactly)"]
    assert (result.outputs["o"][0], result.outputs["p"][0]) == (-128, 112)  # -400 + 512
    # narrow's first call on core a is not what its reference (which wraps) makes of its
    # inputs, and the run says why: the mode set.cc left (a mode leak kernel test fails)
    (call,) = result.checks[2:]
    assert call.line().splitlines()[0] == (
        "FAIL narrow.dst at a[0,0]'s call 1 (d.py:31): worst element [0] got -128 want 112 "
        "(|error| 240; integers must match exactly)")
    assert call.hints[1] == (
        "it ran under the saturation mode saturate an earlier call on its core left: its "
        "reference computes as at reset (floor, none); aiedsl kernel test names the kernel that "
        "does not restore the modes it sets")
    assert not result.passed


def test_a_compiler_without_gnu_unique_symbols_builds_without_the_flag(
        design_file: DesignFile, monkeypatch: pytest.MonkeyPatch) -> None:
    """Clang rejects -fno-gnu-unique (it makes no such symbols): the build is made again
    without it. (The stand-in here is g++, which does make them: a static of a function, an
    ordinary local symbol, is counted.)"""
    path = _two_cores(design_file)
    seen = path.parent / "flags.txt"
    clang = path.parent / "clang++"
    clang.write_text(  # g++ that refuses the flag as clang does, and says what it was given
        "#!/bin/sh\n"
        f'echo "$*" >> {seen}\n'
        'for a in "$@"; do if [ "$a" = -fno-gnu-unique ]; then\n'
        "  echo \"clang++: error: unknown argument: '-fno-gnu-unique'\" >&2; exit 1; fi; done\n"
        'exec g++ "$@"\n')
    clang.chmod(0o755)
    monkeypatch.setenv("CXX", str(clang))
    monkeypatch.setenv("XDG_CACHE_HOME", str(path.parent / "cache"))
    assert _lines(path) == PASSED
    # the builds (not aiedsl's asking it for its own include folders, -E -v)
    builds = [line for line in seen.read_text().splitlines() if " -o " in line]
    assert ["-fno-gnu-unique" in line for line in builds] == [True, False]
