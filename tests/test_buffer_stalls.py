"""Cores that wait on each other for too few buffers (a tester's pipe.py and skip.py): a 3-row
window acquiring every buffer of its fifo, so the stage before it cannot produce, and a
one-buffer fifo that stalls the pipeline only with the window's fifo deeper, were never named;
the bottleneck said "compute" and "faster kernels or more cores would help". The summary now
names them with the depth to give and what it saves, simulated; and it names the busiest
core."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Callable

import pytest

from aiedsl.loader import load_design
from aiedsl.sim import simulate
from aiedsl.sim import stalls
from aiedsl.sim.bottleneck import Bottleneck
from aiedsl.sim.summary import Timing

VISION_CC = '''
    #include <stdint.h>
    #include <aie_api/aie.hpp>

    template <unsigned W>
    void rgba2gray(const uint8_t *__restrict in, uint8_t *__restrict out) {
      for (unsigned i = 0; i < W; ++i) {
        unsigned r = in[4 * i], g = in[4 * i + 1], b = in[4 * i + 2];
        out[i] = (uint8_t)((r * 77 + g * 150 + b * 29 + 128) >> 8);
      }
    }

    template <unsigned W>
    void filter3x3(const uint8_t *__restrict top, const uint8_t *__restrict mid,
                   const uint8_t *__restrict bot, uint8_t *__restrict out) {
      for (unsigned x = 0; x < W; ++x)
        out[x] = (uint8_t)((top[x] + 2 * mid[x] + bot[x]) >> 2);
    }

    template <unsigned W>
    void add2(const uint8_t *__restrict a, const uint8_t *__restrict b, uint8_t *__restrict out) {
      for (unsigned x = 0; x < W; ++x)
        out[x] = (uint8_t)((a[x] + b[x]) >> 1);
    }
    '''
"""The kernels' C++ (the tester's vision.cc, cut down)."""

PIPE = '''
    import numpy as np
    from aiedsl import Tensor, define, design, fifo, herd, loop, runtime, u8
    from aiedsl.kernels import buffer, declare

    W = 256
    H = 32
    GD = define("GD", 3)
    SKIPD = define("SKIPD", 1)
    SKIP = define("SKIP", 0)

    def gray_ref(src, dst):
        p = src.reshape(-1, 4).astype(np.uint32)
        dst[...] = ((p[:, 0] * 77 + p[:, 1] * 150 + p[:, 2] * 29 + 128) >> 8).astype(np.uint8)

    def filt_ref(top, mid, bot, out):
        s = top.astype(np.uint32) + 2 * mid.astype(np.uint32) + bot.astype(np.uint32)
        out[...] = (s >> 2).astype(np.uint8)

    def add_ref(a, b, out):
        out[...] = ((a.astype(np.uint32) + b.astype(np.uint32)) >> 1).astype(np.uint8)

    T = Tensor[W, u8]
    to_gray = declare("rgba2gray_256", source="vision.cc", entry="rgba2gray<256>",
                      args=[buffer("in", Tensor[W * 4, u8]), buffer("out", T, "out")],
                      reference=gray_ref, cycles=4 * W + 20, cost="scalar", ops=5 * W)
    filt = declare("filter3x3_256", source="vision.cc", entry="filter3x3<256>",
                   args=[buffer("top", T), buffer("mid", T), buffer("bot", T),
                         buffer("out", T, "out")],
                   reference=filt_ref, cycles=12 * W + 30, cost="scalar", ops=4 * W)
    add2 = declare("add2_256", source="vision.cc", entry="add2<256>",
                   args=[buffer("a", T), buffer("b", T), buffer("out", T, "out")],
                   reference=add_ref, cycles=W // 8, cost="vector", ops=2 * W)

    @design(device="npu1")
    def pipe(img: Tensor[H, W * 4, u8], out: Tensor[H, W, u8]):
        rgba = fifo(Tensor[W * 4, u8], name="rgba")
        gray = fifo(T, name="gray", depth=GD)
        filt_o = fifo(T, name="filt_o")
        res = fifo(T, name="res")
        skip = fifo(T, name="skip", depth=SKIPD) if SKIP else None

        @herd(anchor=(0, 2))
        def stage1():
            for _ in loop(H):
                with rgba.consume() as a, gray.produce() as g:
                    to_gray(a, g)
                    if skip is not None:
                        with skip.produce() as k:
                            to_gray(a, k)

        @herd(anchor=(0, 3))
        def stage2():
            w = gray.acquire("consume", 2)
            with filt_o.produce() as o:
                filt(w[0], w[0], w[1], o)
            for _ in loop(H - 2):
                w = gray.acquire("consume", 3)
                with filt_o.produce() as o:
                    filt(w[0], w[1], w[2], o)
                gray.release("consume", 1)
            w = gray.acquire("consume", 2)
            with filt_o.produce() as o:
                filt(w[0], w[1], w[1], o)
            gray.release("consume", 2)

        @herd(anchor=(0, 4))
        def stage3():
            for _ in loop(H):
                with filt_o.consume() as f, res.produce() as r:
                    if skip is not None:
                        with skip.consume() as k:
                            add2(f, k, r)
                    else:
                        add2(f, f, r)

        with runtime() as rt:
            rt.fill(rgba, img)
            rt.drain(res, out)

    @pipe.reference
    def reference(img):
        g = np.zeros((H, W), np.uint8)
        for y in range(H):
            gray_ref(img[y], g[y])
        f = np.zeros((H, W), np.uint8)
        for y in range(H):
            filt_ref(g[max(y - 1, 0)], g[y], g[min(y + 1, H - 1)], f[y])
        o = np.zeros_like(f)
        for y in range(H):
            add_ref(f[y], g[y] if SKIP else f[y], o[y])
        return o
    '''
"""rgba -> gray -> a 3-row window filter -> add: one core a stage (the tester's pipe.py, and
with SKIP=1 its skip.py: stage 1's gray also goes straight to stage 3 through 'skip')."""


@pytest.fixture
def pipe(design_file: Callable[[str, str], Path]) -> Callable[..., Timing]:
    design_file(VISION_CC, "vision.cc")
    path = design_file(PIPE, "d.py")

    def run(**defines: int) -> Timing:
        result = simulate(load_design(path, {k: str(v) for k, v in defines.items()}))
        assert result.passed
        return result.timing
    return run


def _us(t: Timing) -> str:
    # as the sentence computes it: cycles times us per cycle (device_seconds * 1e6 rounds the
    # other way at a half, 173.705)
    return f"{t.device_cycles * (1e6 / t.clock_hz):.2f}"


def test_a_window_holding_every_buffer_of_its_fifo_is_named_with_the_depth_it_needs(
        pipe: Callable[..., Timing]) -> None:
    """Stage 2 acquires all 3 of 'gray''s buffers for its window, so stage 1 cannot produce the
    next row: the cores take turns. A fourth buffer made the run 20% shorter, unsaid."""
    three, four = pipe(GD=3), pipe(GD=4)
    assert four.device_cycles < 0.9 * three.device_cycles
    stall = three.bottleneck.stall
    assert stall is not None and stall.cycles == four.device_cycles  # simulated, not guessed
    assert three.bottleneck.sentence() == (
        "compute: the busiest core, stage2[0,0] (0,3), computes 71% of the time; faster kernels "
        "or more cores would help; too few buffers make the cores wait on each other: "
        "stage1[0,0] (0,2) waits 66% of the time for a free buffer of 'gray', all 3 of which "
        "stage2[0,0] (0,3) holds at once; with depth=4 for 'gray' (line 37; now 3) the run "
        "takes 108.92 us on the device, not 139.66 (22% less, simulated)")
    assert (_us(four), _us(three)) == ("108.92", "139.66")
    # with the fourth buffer nothing waits for one: nothing more is said
    assert four.bottleneck.stall is None
    assert "too few buffers" not in four.bottleneck.sentence()


def test_fifos_that_hold_the_pipeline_back_only_together_are_named_together(
        pipe: Callable[..., Timing]) -> None:
    """skip.py: with 'skip' at one buffer, a deeper 'gray' saved nothing, and a deeper 'skip'
    3%; both together a third of the run. Neither was named. (Here 'gray' alone saves 16%,
    'skip' alone 1%, both 36%.)"""
    base = pipe(SKIP=1, GD=3, SKIPD=1)
    both = pipe(SKIP=1, GD=4, SKIPD=2)
    gray, skip = pipe(SKIP=1, GD=4, SKIPD=1), pipe(SKIP=1, GD=3, SKIPD=2)
    stall = base.bottleneck.stall
    assert stall is not None
    assert [(x.fifo, x.depth, x.trial_depth) for x in stall.fifos] == [
        ("gray", 3, 4), ("skip", 1, 2)]
    assert stall.cycles == both.device_cycles
    assert stall.saved >= 0.1
    assert stall.alone == tuple((base.device_cycles - t.device_cycles) / base.device_cycles
                                for t in (gray, skip))
    assert max(stall.alone) < stall.saved - 0.1
    sentence = base.bottleneck.sentence()
    assert ("all 3 of which stage2[0,0] (0,3) holds at once, and 'skip' has one buffer at each "
            "end; with depth=4 for 'gray' (line 37; now 3) and depth=2 for 'skip' (line 40; now "
            f"1) together the run takes {_us(both)} us on the device, not {_us(base)} "
            f"({stall.saved:.0%} less, simulated; alone, 'gray' saves {stall.alone[0]:.0%}, "
            f"'skip' saves {stall.alone[1]:.0%})") in sentence
    # and the summary still goes to JSON (--stats)
    json.dumps(dataclasses.asdict(base.bottleneck), allow_nan=False)


def test_no_run_is_made_again_when_no_core_waits_on_a_full_set_of_buffers(
        pipe: Callable[..., Timing], monkeypatch: pytest.MonkeyPatch) -> None:
    """The runs with more buffers cost a run each: none where no stall is plausible, and a few
    at most where one is."""
    made: list[tuple[str, ...]] = []
    real = stalls._cycles

    def counted(m, few):  # type: ignore[no-untyped-def]
        made.append(tuple(x.fifo for x in few))
        return real(m, few)
    monkeypatch.setattr(stalls, "_cycles", counted)
    pipe(GD=4)
    assert made == []
    pipe(GD=3)
    assert made == [("gray",)]
    made.clear()
    pipe(SKIP=1, GD=3, SKIPD=1)
    assert made == [("gray", "skip"), ("skip",), ("gray",)]


def test_the_busiest_core_is_named(pipe: Callable[..., Timing]) -> None:
    """'cores busy: ... max 66%' and 'the busiest core computes 66%' said which core nowhere."""
    t = pipe(GD=4)
    (line,) = [ln for ln in t.lines() if ln.startswith("cores busy")]
    assert line.endswith(" of the device time (the busiest: stage2[0,0] (0,3))")
    assert t.bottleneck.sentence().startswith(
        "compute: the busiest core, stage2[0,0] (0,3), computes ")
    # cores as busy to the percent are counted, not one of them picked as the busiest
    tied = Bottleneck("compute", "core[0,0]", 0.29, 0, 15e9,
                      busiest="core[0,0] (0,2) and 3 more", tied=3)
    assert tied.sentence() == ("compute: the busiest cores, core[0,0] (0,2) and 3 more, compute "
                               "29% of the time each; faster kernels or more cores would help")


def test_every_core_as_busy_is_said_so(in_root: Path) -> None:
    """A GEMM's 16 cores compute alike: none of them is 'the busiest'."""
    t = simulate(load_design("designs/gemm_bf16.py"), compute=False).timing
    (line,) = [ln for ln in t.lines() if ln.startswith("cores busy")]
    assert line == ("cores busy: min 30%, median 30%, max 30% of the device time (the busiest: "
                    "all 16 alike)")
