"""What ``aiedsl kernel test`` gives a kernel: inputs over the whole range of their types (a
u8 kernel wrong above 100 used to pass), and the profiling of a kernel declared without
``cycles=`` run in a child process, as the test's runs are."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Callable

import numpy as np
import pytest

from aiedsl.errors import DesignError
from aiedsl.kernels.cases import _random, design_cases, input_range
from aiedsl.kernels.host_check import check_kernel
from aiedsl.loader import load_design
from tests.command_line import run_command

DesignFile = Callable[..., Path]

BRIGHT = '''
    import numpy as np
    from aiedsl import Tensor, design, fifo, herd, runtime, u8
    from aiedsl.kernels import buffer, declare

    def bright_ref(src, dst):
        dst[...] = np.minimum(src.astype(np.int32) * 2, 255).astype(np.uint8)

    @design(device="npu1_1col")
    def d(X: Tensor[64, u8], Y: Tensor[64, u8]):
        k = declare("brighten_64", source="bright.cc", entry="brighten",
                    args=[buffer("src", Tensor[64, u8]), buffer("dst", Tensor[64, u8], "out")],
                    reference=bright_ref, cycles=40, cost="-")
        a = fifo(Tensor[64, u8], name="a")
        b = fifo(Tensor[64, u8], name="b")

        @herd()
        def core():
            with a.consume() as s, b.produce() as t:
                k(s, t)

        with runtime() as rt:
            rt.fill(a, X)
            rt.drain(b, Y)

    @d.reference
    def reference(X):
        return np.minimum(X.astype(np.int32) * 2, 255).astype(np.uint8)
    '''

BRIGHT_CC = '''
#include <aie_api/aie.hpp>
#include <stdint.h>
// x2 without aie::set_saturation(saturate): wraps above 127
void brighten(const uint8_t *__restrict in, uint8_t *__restrict out) {
  aie::vector<int16_t, 16> wt = aie::zeros<int16_t, 16>(); wt[0] = 2;
  for (unsigned i = 0; i < 64; i += 32)
    aie::store_v(out + i, aie::accumulate<32>(wt, 0, aie::load_v<32>(in + i))
                              .template to_vector<uint8_t>(0));
}
'''


def test_a_u8_kernel_wrong_above_100_fails_its_test(design_file: DesignFile) -> None:
    """Inputs were drawn from 0..100: x2 without saturation never wrapped, and the test
    passed while `sim --kernels native` failed (Riallto tester)."""
    path = design_file(BRIGHT)
    (path.parent / "bright.cc").write_text(BRIGHT_CC)
    (case,) = design_cases(load_design(path))
    result = check_kernel(case)
    assert not result.passed
    assert result.lines[0].startswith("FAIL brighten_64.dst: worst element [")
    assert " want 255 (|error| " in result.lines[0]


@pytest.mark.parametrize("dt, lo, hi", [("i8", -128, 127), ("u8", 0, 255),
                                         ("i16", -128, 127), ("i32", -32768, 32767)])
def test_integer_inputs_span_their_range_with_its_ends(dt: str, lo: int, hi: int) -> None:
    """8-bit types over their whole range (they were drawn from -100..100); wider ones as the
    simulator draws them, so that sums stay inside the type."""
    assert input_range(dt) == (lo, hi)
    for shape in ((2,), (64,), (8, 32)):
        arr = _random(shape, dt, np.random.default_rng(0))
        assert arr.shape == shape
        assert (arr.min(), arr.max()) == (lo, hi)
    arr = _random((4096,), dt, np.random.default_rng(1))
    assert len(np.unique(arr)) > min(hi - lo, 4096) * 0.6


PROFILED = '''
    import numpy as np
    from aiedsl import Tensor, design, fifo, herd, runtime, u8
    from aiedsl.kernels import buffer, declare

    def copy_ref(src, dst):
        dst[...] = src

    @design(device="npu1_1col")
    def d(X: Tensor[48, u8], Y: Tensor[48, u8]):
        k = declare("copy_u8_48", source="copy.cc", entry="copy48",
                    args=[buffer("src", Tensor[48, u8]), buffer("dst", Tensor[48, u8], "out")],
                    reference=copy_ref, cycles=None, cost="profiled")
        a = fifo(Tensor[48, u8], name="a")
        b = fifo(Tensor[48, u8], name="b")

        @herd()
        def core():
            with a.consume() as s, b.produce() as t:
                k(s, t)

        with runtime() as rt:
            rt.fill(a, X)
            rt.drain(b, Y)

    @d.reference
    def reference(X):
        return X
    '''

COPY_CC = '''
#include <aie_api/aie.hpp>
#include <stdint.h>
void copy48(const uint8_t *__restrict src, uint8_t *__restrict dst) {
  aie::store_v(dst, aie::load_v<32>(src));
  aie::store_v(dst + 32, aie::load_v<16>(src + 32));
  // BUG
}
'''


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """``aiedsl ARGS`` in this process, with a wide terminal and the system's PATH alone."""
    return run_command(*args, cwd=cwd, env={"COLUMNS": "300", "PATH": "/usr/bin:/bin",
                                            "HOME": str(Path.home())})


HOST_RUN = pytest.mark.skipif(
    not hasattr(os, "fork") or shutil.which(os.environ.get("CXX", "g++")) is None,
    reason="needs the host's C++ compiler (g++, or $CXX) and os.fork, where the profile runs "
    "in a child")

PAST_END = (
    "d.py:10: error [kernel bounds]: kernel 'copy_u8_48' wrote 16 byte(s) past the end of "
    "buffer 'dst' in the run of its C++ that profiles it (cycles=None): on the core it would "
    "overwrite whatever is placed after 'dst'\n"
    "  limit: a kernel writes only inside its buffers (the bytes around each are checked after "
    "the profiled call)\n"
    "  found: 'dst' holds 48 bytes; bytes 48 to 63 from its start changed\n"
    "  fix: size 'dst' for what the C++ writes: 64 bytes, to the last one it wrote (a "
    "vectorised loop writes whole vectors), or make the C++ stop at its end; to see more, "
    "declare cycles= for now and run `aiedsl kernel test` on the design: it runs the kernel "
    "alone with the design's scalars and says what it writes outside its buffers (a read "
    "outside them, when it changes the result)")


@HOST_RUN
def test_a_profiled_kernel_writing_past_its_buffer_is_a_design_error(
        design_file: DesignFile) -> None:
    """A kernel with cycles=None is profiled as the design loads, its C++ run between guard
    bytes; a write past a buffer was left to `kernel test`, so `check`, `sim` and `run` passed a
    kernel that overwrites its neighbours on the NPU (a tester's thresholdLine at -D WIDTH=1000
    wrote 24 bytes past 'out', over the rtps placed after it). It is the declaration's error
    now, in every command that loads the design."""
    path = design_file(PROFILED)
    (path.parent / "copy.cc").write_text(COPY_CC.replace(
        "// BUG", "for (unsigned i = 48; i < 64; ++i) dst[i] = 0;  // as a 64-lane store would"))
    for command in (("check",), ("kernel", "test"), ("kernel", "profile"), ("sim",)):
        r = _cli(*command, str(path), cwd=path.parent)
        assert (r.returncode, r.stdout, r.stderr) == (2, "", PAST_END + "\n"), command
    with pytest.raises(DesignError) as excinfo:
        load_design(path)
    assert str(excinfo.value) == PAST_END
    # declared cycles, the kernel loads, and what runs its C++ says it as before
    path.write_text(path.read_text().replace("cycles=None", "cycles=40"))
    r = _cli("kernel", "profile", str(path), cwd=path.parent)
    assert (r.returncode, r.stderr) == (1, "")
    assert r.stdout.splitlines()[0].startswith("copy_u8_48 on npu1_1col: ")
    assert "FAIL copy_u8_48: wrote 16 byte(s) past the end of buffer 'dst'" in (
        r.stdout.splitlines())
    r = _cli("kernel", "test", str(path), cwd=path.parent)
    assert r.returncode == 1
    assert r.stdout.splitlines()[0] == (
        "FAIL copy_u8_48: wrote 16 byte(s) past the end of buffer 'dst'")
    r = _cli("sim", str(path), "--kernels", "native", cwd=path.parent)
    assert r.returncode == 2
    assert r.stderr.startswith(
        "d.py:10: error [native kernel]: kernel 'copy_u8_48' wrote 16 byte(s) past the end of "
        "buffer 'dst' in call 1 of it by core[0,0]; the simulation stopped there\n")


@HOST_RUN
def test_a_profiled_kernel_of_a_helper_module_names_the_designs_call(
        design_file: DesignFile) -> None:
    """Declared in a helper module shared by designs, the kernel's [kernel bounds] error named
    only the helper's declare() line: the design whose call's run wrote past the buffer is
    named too."""
    design_file('''
        from aiedsl import Tensor, u8
        from aiedsl.kernels import buffer, declare

        def copy_ref(src, dst):
            dst[...] = src

        def copier():
            return declare("copy_u8_48", source="copy.cc", entry="copy48",
                           args=[buffer("src", Tensor[48, u8]),
                                 buffer("dst", Tensor[48, u8], "out")],
                           reference=copy_ref, cycles=None, cost="profiled")
        ''', "kern.py")
    path = design_file(PROFILED.replace("from aiedsl.kernels import buffer, declare",
                                        "from kern import copier").replace(
        '''k = declare("copy_u8_48", source="copy.cc", entry="copy48",
                    args=[buffer("src", Tensor[48, u8]), buffer("dst", Tensor[48, u8], "out")],
                    reference=copy_ref, cycles=None, cost="profiled")''', "k = copier()"))
    (path.parent / "copy.cc").write_text(COPY_CC.replace(
        "// BUG", "for (unsigned i = 48; i < 64; ++i) dst[i] = 0;"))
    with pytest.raises(DesignError) as excinfo:
        load_design(path)
    assert str(excinfo.value).splitlines()[0] == (
        "kern.py:8: error [kernel bounds]: kernel 'copy_u8_48' wrote 16 byte(s) past the end "
        "of buffer 'dst' in the run of its C++ that profiles it (cycles=None): on the core it "
        "would overwrite whatever is placed after 'dst'")
    assert str(excinfo.value).splitlines()[3] == (
        "  d.py:17: the call of 'copy_u8_48' in design 'd'")


@HOST_RUN
def test_a_profiled_kernel_writing_before_its_buffers_names_each_write(
        design_file: DesignFile) -> None:
    path = design_file(PROFILED.replace("k(s, t)", "k(s, t, 48)").replace(
        'buffer("dst", Tensor[48, u8], "out")]',
        'buffer("dst", Tensor[48, u8], "out"), scalar("n", i32)]').replace(
        "reference=copy_ref,", "reference=copy_ref, params={'n': 48},").replace(
        "def copy_ref(src, dst):", "def copy_ref(src, dst, n):").replace(
        "from aiedsl import Tensor, design, fifo, herd, runtime, u8",
        "from aiedsl import Tensor, design, fifo, herd, i32, runtime, u8").replace(
        "from aiedsl.kernels import buffer, declare",
        "from aiedsl.kernels import buffer, declare, scalar"))
    (path.parent / "copy.cc").write_text(COPY_CC.replace(
        "uint8_t *__restrict dst)", "uint8_t *__restrict dst, int32_t n)").replace(
        "// BUG", "dst[-2] = 1; dst[-1] = 1; dst[n] = 1;"))
    with pytest.raises(DesignError) as excinfo:
        load_design(path)
    assert str(excinfo.value).splitlines()[0] == (
        "d.py:10: error [kernel bounds]: kernel 'copy_u8_48' wrote 2 byte(s) before buffer "
        "'dst' (and 1 more such write) in the run of its C++ that profiles it (cycles=None): "
        "on the core it would overwrite whatever is placed before 'dst'")
    assert str(excinfo.value).splitlines()[2:] == [
        "  found: 'dst' holds 48 bytes; bytes -2 to -1 and byte 48 from its start changed; the "
        "scalars it ran with: n=48",
        "  fix: make the C++ start writing at the first byte of 'dst'; to see more, declare "
        "cycles= for now and run `aiedsl kernel test` on the design: it runs the kernel alone "
        "with the design's scalars and says what it writes outside its buffers (a read outside "
        "them, when it changes the result)"]


@HOST_RUN
def test_a_profiled_kernel_writing_its_input_still_loads(design_file: DesignFile) -> None:
    """A write into an "in" buffer is inside the kernel's buffers: not this rule. It stays what
    `kernel test`, `kernel profile` and `sim --kernels native` report."""
    path = design_file(PROFILED)
    (path.parent / "copy.cc").write_text(COPY_CC.replace(
        "const uint8_t *__restrict src", "uint8_t *__restrict src").replace(
        "// BUG", "src[0] = src[0] + 1;"))
    assert load_design(path).ir.kernels[0].cycles_source == "profile"
    r = _cli("kernel", "profile", str(path), cwd=path.parent)
    assert (r.returncode, r.stderr) == (1, "")
    assert r.stdout.splitlines()[-1] == (
        "FAIL copy_u8_48: wrote input buffer 'src' (declared \"in\": the DMA may be refilling or "
        "another core reading it; a kernel that updates it in place declares it \"inout\")")


@pytest.mark.skipif(not hasattr(os, "fork"), reason="the profile runs in a forked child only "
                    "where there is os.fork")
def test_a_profiled_kernel_that_crashes_is_a_design_error(design_file: DesignFile) -> None:
    """It killed aiedsl as the design loaded: `kernel test` ended with rc 139 and no word."""
    path = design_file(PROFILED)
    (path.parent / "copy.cc").write_text(COPY_CC.replace(
        "// BUG", "\n  *(volatile uint8_t *)nullptr = 1;"))
    message = (
        "d.py:10: error [kernel cost]: kernel 'copy_u8_48' has no cycles=, and the run of its "
        "C++ that profiles it crashed (SIGSEGV): it reads or writes outside its buffers, or "
        "fails an assertion\n"
        "  limit: a kernel profiled for its cycles (cycles=None) returns from its call on the "
        "host\n"
        "  found: cycles=None; crashed (SIGSEGV): it reads or writes outside its buffers, or "
        "fails an assertion\n"
        "  fix: fix the C++; to look into it, declare cycles= for now and run `aiedsl kernel "
        "test` on the design: it says what the kernel writes outside its buffers (a read "
        "outside them, when it changes the result)")
    for command in (("kernel", "test"), ("kernel", "profile"), ("sim",)):
        r = _cli(*command, str(path), cwd=path.parent)
        assert (r.returncode, r.stdout, r.stderr) == (2, "", message + "\n"), command
    with pytest.raises(DesignError) as excinfo:  # and this process lives on
        load_design(path)
    assert str(excinfo.value) == message


@pytest.mark.parametrize("dt", ["i8", "u8", "i16", "u16", "i32", "u32"])
def test_full_range_inputs_meet_their_ends_at_the_same_places(dt: str) -> None:
    """``kernel test --full-range``: the type's whole range, its two ends at the same places
    in every buffer of one element count (where an elementwise kernel adds MIN to MIN and MAX
    to MAX), drawn anew for another count."""
    info = np.iinfo(np.dtype({"i8": "int8", "u8": "uint8", "i16": "int16", "u16": "uint16",
                              "i32": "int32", "u32": "uint32"}[dt]))
    ends: dict[int, np.ndarray] = {}
    rng = np.random.default_rng(0)
    a, b = (_random((8, 32), dt, rng, ends) for _ in range(2))
    assert list(ends) == [256]
    for arr in (a, b):
        assert arr.reshape(-1)[ends[256]].tolist() == [info.min, info.max]
    assert not np.array_equal(a, b)
    _random((64,), dt, rng, ends)
    assert list(ends) == [256, 64]
    big = _random((4096,), dt, np.random.default_rng(1), {})
    # most of the range is drawn, not only the simulator's |x| < 2^(bits/2 - 1)
    lo, hi = input_range(dt)
    if info.bits == 8:  # drawn over the whole range anyway
        assert (lo, hi) == (info.min, info.max)
    else:
        assert ((big < lo) | (big > hi)).mean() > 0.9


ADD_I16 = '''
    import numpy as np
    from aiedsl import Tensor, design, fifo, herd, i16, runtime
    from aiedsl.kernels import buffer, declare

    def add_sat_ref(a, b, c):
        c[...] = np.clip(a.astype(np.int32) + b, -32768, 32767)

    @design(device="npu1_1col")
    def d(A: Tensor[256, i16], B: Tensor[256, i16], C: Tensor[256, i16]):
        add = declare("add_sat_i16_256", source="add.cc", entry="add_sat",
                      args=[buffer("a", Tensor[256, i16]), buffer("b", Tensor[256, i16]),
                            buffer("c", Tensor[256, i16], "out")],
                      reference=add_sat_ref, cycles=40, cost="-")
        fa, fb, fc = fifo(Tensor[256, i16], name="fa"), fifo(Tensor[256, i16], name="fb"), \\
            fifo(Tensor[256, i16], name="fc")

        @herd()
        def core():
            with fa.consume() as a, fb.consume() as b, fc.produce() as c:
                add(a, b, c)

        with runtime() as rt:
            rt.fill(fa, A)
            rt.fill(fb, B)
            rt.drain(fc, C)

    @d.reference
    def reference(A, B):
        return np.clip(A.astype(np.int32) + B, -32768, 32767).astype(np.int16)
    '''

ADD_CC = '''
#include <aie_api/aie.hpp>
#include <stdint.h>
// meant to saturate: aie::add of integer vectors wraps on AIE2, whatever the saturation mode
void add_sat(const int16_t *__restrict a, const int16_t *__restrict b, int16_t *__restrict c) {
  aie::set_saturation(aie::saturation_mode::saturate);
  for (unsigned i = 0; i < 256; i += 32)
    aie::store_v(c + i, aie::add(aie::load_v<32>(a + i), aie::load_v<32>(b + i)));
  aie::set_saturation(aie::saturation_mode::none);  // the core's mode, as it found it
}
'''

ADD_SAT_CC = '''
#include <aie_api/aie.hpp>
#include <stdint.h>
void add_sat(const int16_t *__restrict a, const int16_t *__restrict b, int16_t *__restrict c) {
  aie::set_saturation(aie::saturation_mode::saturate);
  for (unsigned i = 0; i < 256; i += 32) {
    aie::accum<acc32, 32> acc;
    acc.from_vector(aie::load_v<32>(a + i));
    aie::store_v(c + i, aie::add(acc, aie::load_v<32>(b + i)).template to_vector<int16_t>(0));
  }
  aie::set_saturation(aie::saturation_mode::none);
}
'''


@HOST_RUN
def test_full_range_fails_a_wrapping_add_meant_to_saturate(design_file: DesignFile) -> None:
    """An int16 add that wraps, declared with a saturating reference, passed `kernel test`:
    i16 inputs within -128..127 never overflow (a kernel author's tester). With
    --full-range it fails, and the saturating one passes."""
    path = design_file(ADD_I16)
    (path.parent / "add.cc").write_text(ADD_CC)
    r = _cli("kernel", "test", str(path), cwd=path.parent)
    assert (r.returncode, _untimed(r.stdout)) == (0, [
        "PASS add_sat_i16_256.c: exact (integers must match exactly)",
        "1 of 1 kernels match their references"]), r.stderr
    r = _cli("kernel", "test", str(path), "--full-range", cwd=path.parent)
    lines = _untimed(r.stdout)
    assert (r.returncode, lines[-1]) == (
        1, "0 of 1 kernels match their references on integer inputs over their types' whole "
        "range")
    assert lines[0].startswith("FAIL add_sat_i16_256.c: worst element [")
    assert lines[1].startswith("  wrong: ")
    (path.parent / "add.cc").write_text(ADD_SAT_CC)
    r = _cli("kernel", "test", str(path), "--full-range", cwd=path.parent)
    assert (r.returncode, _untimed(r.stdout)) == (0, [
        "PASS add_sat_i16_256.c: exact (integers must match exactly)",
        "1 of 1 kernels match their references on integer inputs over their types' whole "
        "range"]), r.stderr


def _untimed(out: str) -> list[str]:
    """``kernel test``'s lines, the last without its time (`` (0.6 s)``)."""
    lines = out.splitlines()
    return lines[:-1] + [re.sub(r" \(\d+\.\d s\)$", "", lines[-1])]


NEG = '''
    import numpy as np
    from aiedsl import Tensor, design, fifo, herd, i32, runtime
    from aiedsl.kernels import buffer, declare

    def neg_ref(src, dst):
        dst[...] = -src

    @design(device="npu1_1col")
    def d(X: Tensor[256, i32], Y: Tensor[256, i32]):
        k = declare("neg_i32_256", source="neg.cc", entry="neg",
                    args=[buffer("src", Tensor[256, i32]), buffer("dst", Tensor[256, i32], "out")],
                    reference=neg_ref, cycles=40, cost="-")
        a = fifo(Tensor[256, i32], name="a")
        b = fifo(Tensor[256, i32], name="b")

        @herd()
        def core():
            with a.consume() as s, b.produce() as t:
                k(s, t)

        with runtime() as rt:
            rt.fill(a, X)
            rt.drain(b, Y)

    @d.reference
    def reference(X):
        return -X
    '''

NEG_CC = '''
#include <aie_api/aie.hpp>
#include <stdint.h>
void neg(const int32_t *__restrict in, int32_t *__restrict out) {
  for (unsigned i = 0; i < 240; i += 16)  // one vector short
    aie::store_v(out + i, aie::neg(aie::load_v<16>(in + i)));
}
'''


@HOST_RUN
def test_elements_the_cpp_leaves_unwritten_are_said_to_be(design_file: DesignFile) -> None:
    """A loop one vector short left the last 16 elements as the buffer held them: the FAIL
    gave only the worst element, whose "got" was the test's own filling, and nothing said the
    C++ never wrote them (a kernel-author tester). A third run with other contents in the
    "out" buffer finds them; on the core they hold the ring's previous element."""
    path = design_file(NEG)
    (path.parent / "neg.cc").write_text(NEG_CC)
    (case,) = design_cases(load_design(path))
    result = check_kernel(case)
    assert not result.passed
    assert result.lines[0] == (
        "FAIL neg_i32_256: 'dst' is not all written: 16 of 256 elements keep what the buffer "
        "held before the call, all within [240:256] (a run with other contents there gives "
        "other values); on the core they would hold what the buffer's previous element left: "
        "write every element, or declare the buffer \"inout\" if the kernel adds to what it "
        "holds")
    worst, where, inputs = result.lines[1].splitlines()
    assert inputs.startswith("  inputs at [")
    assert worst.startswith("FAIL neg_i32_256.dst: worst element [")
    assert where == "  wrong: 16 of 256 elements (6.2%), all within [240:256]"
    (path.parent / "neg.cc").write_text(NEG_CC.replace("i < 240", "i < 256"))
    (case,) = design_cases(load_design(path))
    assert check_kernel(case).lines == [
        "PASS neg_i32_256.dst: exact (integers must match exactly)"]


CLIP_I16 = '''
    import numpy as np
    from aiedsl import Tensor, design, fifo, herd, i16, runtime
    from aiedsl.kernels import buffer, declare, scalar

    def clip_ref(src, dst, lo, hi):
        dst[...] = np.clip(src, lo, hi + 1)  # wrong at hi, which the inputs drawn never reach

    @design(device="npu1_1col")
    def d(A: Tensor[256, i16], C: Tensor[256, i16]):
        k = declare("clip_i16_256", source="clip.cc", entry="clip",
                    args=[buffer("src", Tensor[256, i16]), buffer("dst", Tensor[256, i16], "out"),
                          scalar("lo", i16), scalar("hi", i16)],
                    reference=clip_ref, cycles=300, cost="-")
        fa, fc = fifo(Tensor[256, i16], name="fa"), fifo(Tensor[256, i16], name="fc")

        @herd()
        def core():
            with fa.consume() as a, fc.produce() as c:
                k(a, c, -100, 300)

        with runtime() as rt:
            rt.fill(fa, A)
            rt.drain(fc, C)

    @d.reference
    def reference(A):
        return np.clip(A, -100, 300)
    '''

CLIP_CC = '''
#include <stdint.h>
void clip(const int16_t *s, int16_t *d, int16_t lo, int16_t hi) {
  for (int i = 0; i < 256; i++) d[i] = s[i] < lo ? lo : s[i] > hi ? hi : s[i];
}
'''


@HOST_RUN
def test_a_scalar_beyond_the_inputs_drawn_is_noted(design_file: DesignFile) -> None:
    """A clip to [-100, 300] on i16 inputs drawn over -128..127 never meets its upper bound: a
    reference wrong there passed with nothing said (a newcomer's tester). The PASS says which
    scalar went untested and that --full-range reaches it, where the test fails."""
    path = design_file(CLIP_I16)
    (path.parent / "clip.cc").write_text(CLIP_CC)
    r = _cli("kernel", "test", str(path), cwd=path.parent)
    assert (r.returncode, _untimed(r.stdout)) == (0, [
        "PASS clip_i16_256.dst: exact (integers must match exactly)",
        "  note: scalar 'hi' = 300 lies outside the values drawn for 'src' (-128..127): what the "
        "kernel does there went untested; --full-range draws i16 inputs over -32768..32767",
        "1 of 1 kernels match their references"]), r.stderr
    r = _cli("kernel", "test", str(path), "--full-range", cwd=path.parent)
    assert r.returncode == 1 and _untimed(r.stdout)[0].startswith("FAIL clip_i16_256.dst")
