"""What the simulator's timing summary says about the limit of a run, as a performance engineer
reads it (a tester's findings): a channel's waiting for the other end is told apart from its
moving data, a single-buffered fifo end that makes transfers and kernel calls take turns is
named, each DRAM direction is shown with the pools' assumption, what the task cost rests on,
and a shim fill stalled by a full consumer reads nothing ahead."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest

from aiedsl.errors import DesignError
from aiedsl.loader import load_design
from aiedsl.sim import simulate
from aiedsl.sim.bottleneck import Bottleneck
from aiedsl.sim.summary import Timing
from aiedsl.targets import get_target

STREAM = '''
    from aiedsl import Tensor, define, design, fifo, herd, i32, loop, runtime
    from aiedsl.kernels import buffer, declare

    DEPTH = define("DEPTH", 2)
    CYC = define("CYC", 142)

    def ref(src, dst, **_):
        dst.reshape(-1)[...] = src.reshape(-1)

    @design(device="npu1_1col")
    def stream(inp: Tensor[65536, i32], out: Tensor[65536, i32]):
        T = Tensor[1024, i32]
        k = declare("cp_1024", source="passthrough.cc", entry="passthrough<int32_t, 1024>",
                    args=[buffer("src", T), buffer("dst", T, "out")], reference=ref,
                    exact=True, cycles=CYC, cost="declared", ops=1024)
        a = fifo(T, depth=DEPTH, name="in_l3")
        b = fifo(T, depth=DEPTH, name="out_l3")

        @herd()
        def core():
            for _ in loop(64):
                with a.consume() as s, b.produce() as d:
                    k(s, d)

        with runtime() as rt:
            rt.fill(a, inp)
            rt.drain(b, out, wait=True)

    @stream.reference
    def reference(inp):
        return inp.copy()
    '''
"""64 tiles of 4 KB through one core, straight from and to the shim: the tester's stream.py."""


def _stream(design_file: Callable[[str], Path], depth: int, cycles: int) -> Timing:
    path = design_file(STREAM)
    result = simulate(load_design(path, {"DEPTH": str(depth), "CYC": str(cycles)}))
    assert result.passed
    return result.timing


def test_a_full_consumer_makes_the_shim_pay_its_bursts_after_it_frees_a_buffer(
        design_file: Callable[[str], Path]) -> None:
    """The shim read a whole element ahead while its one-buffer consumer was full, then sent it
    at stream speed: depth 1 and depth 2 both took 91.42 us at 142 cycles a call. With nothing
    read ahead, a tile through one buffer costs the shim's bursts and the stream after the core
    frees the buffer, then the kernel."""
    tm, clock = get_target("npu1").timing, get_target("npu1").clock_hz
    one, two = _stream(design_file, 1, 142), _stream(design_file, 2, 142)
    bursts = 4096 / tm.shim_burst_bytes * tm.shim_burst_cycles  # 16 bursts of 256 B: 192
    stream = 4096 / tm.dma_bytes_per_cycle["shim"]  # 1,024
    tasks = 2 * tm.shim_task_s * clock  # the fill and the drain are issued before they move
    assert one.device_cycles - tasks >= 64 * (bursts + stream + 142)
    assert two.device_cycles < one.device_cycles


def test_a_shim_stalled_behind_a_single_buffered_core_is_not_named_over_it(
        design_file: Callable[[str], Path]) -> None:
    """The shim channel was named the bottleneck at 96% busy, with advice that would not help,
    though it moved data a quarter of the time and waited for the core's one buffer the rest;
    a second buffer made the run 20% shorter."""
    t = _stream(design_file, 1, 4000)
    lines = t.lines()
    assert lines[3] == ("kernel time: cp_1024 64 calls, 256,640 cycles (100%) (one run's calls "
                        "on every core, each call's cycles and its fixed cost)")
    assert lines[4:7] == [
        "busiest DMA channels, moving data (waiting for the other end): shim (0, 0) -> in_l3 "
        "22% (+74% waiting), shim (0, 0) <- out_l3 22%, dma core[0,0] -> out_l3 19%",
        "DRAM: reads use 5% of their 15 GB/s, writes 5% of theirs",
        "bottleneck: compute: the busiest core computes 75% of the time; faster kernels or more "
        "cores would help; core[0,0] and its transfers take turns at 'in_l3' (consume) and "
        "'out_l3' (produce), ends with one buffer each: a second buffer (depth=2) at each could "
        "overlap up to 24% of the run"]
    (end,) = t.bottleneck.single_buffered
    assert (end.core, end.fifo, end.port, end.memtile, end.free) == (
        "core[0,0]", "in_l3", "consume", "", None)
    # with two buffers the turns go, and so does the clause
    two = _stream(design_file, 2, 4000)
    assert two.device_cycles < 0.8 * t.device_cycles
    assert two.bottleneck.sentence() == ("compute: the busiest core computes 96% of the time; "
                                         "faster kernels or more cores would help")


def test_a_one_buffer_end_is_named_whatever_limits_the_run(
        design_file: Callable[[str], Path]) -> None:
    """On npu2 the runtime's issuing is the bottleneck, and the one-buffer ends went unsaid
    (only compute and DMA bottlenecks looked), though a second buffer made the run 26% shorter
    (a tester)."""
    path = design_file(STREAM.replace('device="npu1_1col"', 'device="npu2_1col"')
                       .replace("65536", "16384").replace("loop(64)", "loop(16)"))
    one = simulate(load_design(path, {"DEPTH": "1", "CYC": "1000"})).timing
    two = simulate(load_design(path, {"DEPTH": "2", "CYC": "1000"})).timing
    assert one.bottleneck.kind == "runtime" and two.device_cycles < 0.9 * one.device_cycles
    # one clause for the core, naming both ends: the overlap takes a second buffer at each (a
    # tester deepened the one end named and saved 7% where 42% was said; both saved 42%)
    e, = one.bottleneck.single_buffered
    assert ((e.fifo, e.port), e.also) == (("in_l3", "consume"), (("out_l3", "produce"),))
    assert "core[0,0] and its transfers take turns at 'in_l3' (consume) and 'out_l3' (produce), "\
        "ends with one buffer each: a second buffer (depth=2) at each could overlap up to" in \
        one.bottleneck.sentence()


def test_a_gemm_waiting_on_task_issue_names_the_runtime_not_a_stalled_memtile_channel(
        in_root: Path) -> None:
    """designs/gemm_i8.py named memtile a_0 at 86% busy, though it moved data 16% of the time:
    the runtime issuing its tasks (68%) is the limit."""
    t = simulate(load_design("designs/gemm_i8.py"), compute=False).timing
    a0 = "memtile (0, 1) forward -> a_0"
    assert t.channel_busy[a0] > 0.8 and t.channel_moving[a0] < 0.3
    assert t.bottleneck.kind == "runtime"
    assert t.bottleneck.sentence() == (
        f"runtime: issuing the shim DMA tasks one by one takes {t.bottleneck.utilisation:.0%} of "
        "the time; fewer, longer transfers (each task covering more of a tensor) would help")


def _timing(read: float, write: float, read_bytes: int, write_bytes: int) -> Timing:
    why = Bottleneck("dram", "DRAM read", max(read, write), read_bytes + write_bytes, 15e9)
    return Timing(1000.0, 1e9, 0.0, {}, {}, read_bytes + write_bytes, max(read, write), why,
                  dram_read_bytes=read_bytes, dram_write_bytes=write_bytes,
                  dram_read_utilisation=read, dram_write_utilisation=write,
                  dram_read_bytes_per_s=15e9, dram_write_bytes_per_s=15e9)


def test_the_dram_line_says_which_direction_and_what_one_shared_pool_would_make_of_both() -> None:
    """'DRAM: 63% of its bandwidth' was the writes', unsaid; and the two 15 GB/s pools are an
    assumption no measurement decides, which matters when both are heavy at once."""
    assert _timing(0.16, 0.63, 1, 1).dram_line() == (
        "DRAM: reads use 16% of their 15 GB/s, writes 63% of theirs; the two are separate pools "
        "by assumption (no measurement tells): if they share one 15 GB/s, together 79%")
    assert _timing(0.05, 0.05, 1, 1).dram_line() == (
        "DRAM: reads use 5% of their 15 GB/s, writes 5% of theirs")
    assert _timing(0.40, 0.0, 1, 0).dram_line() == (
        "DRAM: reads use 40% of their 15 GB/s (nothing written)")


def test_a_run_issuing_tasks_much_of_the_time_says_what_the_task_cost_rests_on(
        in_root: Path) -> None:
    """gemm_bf16 at 512^3 on four columns spends 45% of the time issuing tasks, one row on four
    15%: the comparison rests on the 6.4 us per task fitted to one measured row, unsaid."""
    wide = simulate(load_design("designs/gemm_bf16.py", {"COLS": "4", "ROWS": "1"}),
                    compute=False).timing
    tall = simulate(load_design("designs/gemm_bf16.py", {"COLS": "1", "ROWS": "4"}),
                    compute=False).timing
    assert wide.bottleneck.issuing > 0.4 > 0.2 > tall.bottleneck.issuing
    assert wide.lines()[-1] == (
        f"note: issuing shim DMA tasks takes {wide.bottleneck.issuing:.0%} of the device time "
        "at 6.4 us per task, a cost fitted to one measured row (GEMM i16 512^3 on npu1) and the "
        "model's least certain figure: this time, and any comparison with a design that issues "
        "a different number of tasks (another topology, other tile sizes), rests on it")
    assert not tall.task_basis and not any(ln.startswith("note:") for ln in tall.lines())


def test_a_gemm_size_that_does_not_divide_says_each_unit_once(in_root: Path) -> None:
    """'K=768 is not a multiple of k = 56 = 56' (a tester)."""
    with pytest.raises(DesignError) as e:
        load_design("designs/gemm_bf16.py", {"M": "768", "K": "768", "N": "768", "m": "96",
                                             "k": "56", "n": "96"})
    assert e.value.message == ("K=768 is not a multiple of k = 56: the herd would leave part of "
                               "each element's sum over K undone")
    with pytest.raises(DesignError) as e:
        load_design("designs/gemm_bf16.py", {"K_MT": "192"})
    assert e.value.message == ("K=512 is not a multiple of the staged K run = 192: the herd "
                               "would leave part of each element's sum over K undone")


PASS_MD = '''
    from aiedsl import Tensor, define, design, fifo, herd, i32, loop, runtime
    from aiedsl.kernels import passthrough

    MD = define("MD", 1)
    E = define("E", 1024)
    N = 262144

    @design(device="npu1_1col")
    def pt(inp: Tensor[N, i32], out: Tensor[N, i32]):
        T = Tensor[E, i32]
        k = passthrough(T)
        a = fifo(T, depth=MD, name="in_l3")
        a1 = a.forward(name="in_l1")
        b = fifo(T, depth=MD, name="out_l3")

        @herd()
        def core():
            for _ in loop(N // E):
                with a1.consume() as s, b.produce() as d:
                    k(s, d)

        with runtime() as rt:
            rt.fill(a, inp)
            rt.drain(b, out, wait=True)

    @pt.reference
    def reference(inp):
        return inp.copy()
    '''


def test_a_channel_waiting_on_a_one_buffer_memtile_is_told_to_give_it_a_second(
        design_file: Callable[[str], Path]) -> None:
    """A reviewer's case: the core-side hint looked only at cores, and a shim waiting on a
    single-buffered memtile was told to spread its traffic; a second memtile buffer (MD=2) made
    the run 44% shorter."""
    path = design_file(PASS_MD)
    one = simulate(load_design(path, {"MD": "1"})).timing
    assert one.bottleneck.sentence().startswith(
        "data movement: DMA 'shim (0, 0) -> in_l3' moves data 53% of the time, and waits 45% for "
        "its receivers to take data; its receiver ('in_l3' on memtile (0, 1)) has one buffer, so "
        "each element waits for the one before to be taken away: a second buffer there "
        "(depth=2) would let the two overlap; ")
    two = simulate(load_design(path, {"MD": "2"})).timing
    assert two.device_cycles < 0.6 * one.device_cycles


def test_a_second_buffer_that_does_not_fit_is_not_offered(
        design_file: Callable[[str], Path]) -> None:
    """The hint offered depth=2 where the core's memory could not hold it; and in a run bound
    by data movement a core's waiting is not what a second buffer saves (only its overlap with
    computing is)."""
    path = design_file(STREAM.replace("T = Tensor[1024, i32]", "T = Tensor[6144, i32]").replace(
        "65536", "98304").replace("loop(64)", "loop(16)").replace("cp_1024", "cp_6144").replace(
        "int32_t, 1024", "int32_t, 6144"))
    t = simulate(load_design(path, {"DEPTH": "1", "CYC": "3000"})).timing
    assert t.bottleneck.sentence().endswith(
        "its receiver ('in_l3' on core (0, 2), where a second (24,576 B) does not fit: 15,360 B "
        "free; smaller elements would make room) has one buffer, so each element waits for the "
        "one before to be taken away")
    slow = simulate(load_design(path, {"DEPTH": "1", "CYC": "8000"})).timing
    assert "core[0,0] and its transfers take turns at 'in_l3' (consume) and 'out_l3' " \
        "(produce), ends with one buffer each: a second buffer at each would overlap up to 47% " \
        "of the run, but they (49,152 B) do not fit (15,360 B free in the core); smaller " \
        "elements would make room" in slow.bottleneck.sentence()
    assert "depth=2" not in t.bottleneck.sentence() + slow.bottleneck.sentence()
    # data-movement bound, with the core computing the least it may (128 cycles: its 4 KB of stores
    # at the 32 bytes a cycle an npu1 core stores)
    fast = _stream(design_file, 1, 128)
    assert fast.bottleneck.single_buffered == ()


def test_a_busy_runtime_is_named_once() -> None:
    """A reviewer: a DMA bottleneck's sentence said the runtime spent 41% issuing tasks, then
    named it again as the next busiest resource."""
    root = Path(__file__).resolve().parent.parent
    handle = load_design(root / "bench" / "calibration" / "vrelu.py", device="npu2")
    sentence = simulate(handle).timing.bottleneck.sentence()
    assert sentence.count("issuing shim DMA tasks") == 1, sentence


BROADCAST = '''
    from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
    from aiedsl.kernels import buffer, declare

    def ref(src, dst, **_):
        dst.reshape(-1)[...] = src.reshape(-1)

    @design(device="npu1_1col")
    def bcast(inp: Tensor[16384, i32], out1: Tensor[16384, i32], out2: Tensor[16384, i32]):
        T = Tensor[1024, i32]
        sig = [buffer("src", T), buffer("dst", T, "out")]
        ka = declare("cpa", source="passthrough.cc", entry="passthrough<int32_t, 1024>",
                     args=sig, reference=ref, exact=True, cycles=4000, cost="declared")
        kb = declare("cpb", source="passthrough.cc", entry="passthrough<int32_t, 1024>",
                     args=sig, reference=ref, exact=True, cycles=128, cost="declared")
        a = fifo(T, depth=1, name="in_l3")
        b = fifo(T, name="o1")
        c = fifo(T, name="o2")

        @herd(name="slow")
        def slow():
            for _ in loop(16):
                with a.consume() as s, b.produce() as d:
                    ka(s, d)

        @herd(name="fast")
        def fast():
            for _ in loop(16):
                with a.consume() as s, c.produce() as d:
                    kb(s, d)

        with runtime() as rt:
            rt.fill(a, inp)
            rt.drain(b, out1)
            rt.drain(c, out2, wait=True)

    @bcast.reference
    def reference(inp):
        return inp.copy(), inp.copy()
    '''


def test_a_broadcast_reaches_every_receiver_at_once(
        design_file: Callable[[str], Path], tmp_path: Path) -> None:
    """A reviewer: the fast core of a broadcast received each element as soon as it asked,
    about 4 us before the slow core's one buffer was free (8.24 us against
    12.23), though the circuit-switched stream moves to all receivers together."""
    import json

    path = design_file(BROADCAST)
    simulate(load_design(path), trace=str(tmp_path / "t.json"))
    events = json.loads((tmp_path / "t.json").read_text())["traceEvents"]
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in events
             if e.get("ph") == "M" and e.get("name") == "thread_name"}
    starts: dict[str, list[float]] = {}
    for e in events:
        if e.get("ph") == "X":
            starts.setdefault(names[(e["pid"], e["tid"])], []).append(e["ts"])
    fast, slow = starts["dma fast[0,0] <- in_l3"], starts["dma slow[0,0] <- in_l3"]
    assert len(fast) == len(slow) == 16
    assert fast == slow


def test_the_busiest_resource_is_named_even_when_none_is_busy_most_of_the_time(
        design_file: Callable[[str], Path]) -> None:
    """A README reader: a core computing 43% of the time lost to a channel moving data 35%,
    then was named as 'next busiest'; a core had to compute more than half the time to be
    named. Like with like, the busiest is named."""
    path = design_file(STREAM.replace("65536", "16384").replace("loop(64)", "loop(16)"))
    t = simulate(load_design(path, {"DEPTH": "1", "CYC": "1500"})).timing
    busiest = max(t.core_busy.values())
    assert busiest < 0.5
    assert t.bottleneck.kind == "compute" and t.bottleneck.utilisation == busiest
    assert busiest >= max(t.channel_moving.values())


def test_a_one_buffer_receiver_on_a_forwarding_core_tile_is_named(
        design_file: Callable[[str], Path]) -> None:
    """Found rereading the change: the summary looked the receiver's memory up by its endpoint
    kind, and a forward through a core tile ('coretile') ended the run in a KeyError."""
    path = design_file('''
        from aiedsl import Tensor, coretile, design, fifo, i32, runtime

        @design(device="npu1_1col")
        def ct(a: Tensor[65536, i32], b: Tensor[65536, i32]):
            fin = fifo(Tensor[4096, i32], depth=1)
            fmid = fin.forward(via=coretile(0, 2))
            with runtime() as rt:
                rt.fill(fin, a)
                rt.drain(fmid, b)

        @ct.reference
        def reference(a):
            return a.copy()
        ''')
    sentence = simulate(load_design(path)).timing.bottleneck.sentence()
    assert "its receiver ('fin' on core (0, 2)) has one buffer" in sentence


def test_a_bottleneck_beside_a_runner_up_as_busy_bounds_what_its_change_saves() -> None:
    """A tester: 'faster kernels or more cores would help' at 95% computing beside a shim
    channel moving data 94% of the time, where halving the kernels saved 1.7%: the runner-up
    keeps its busy time, so the sentence says no change to the kernels alone saves more than
    6%."""
    why = Bottleneck("compute", "core[0,0]", 0.95, 0, 15e9,
                     runner_up=("DMA 'shim (0, 0) -> i' moving data", 0.94))
    assert why.sentence() == (
        "compute: the busiest core computes 95% of the time; faster kernels or more cores would "
        "help; but DMA 'shim (0, 0) -> i' moving data is busy 94% of the time too: no change to "
        "the kernels alone shortens the run by more than 6%")
    dram = Bottleneck("dma", "shim (0, 0) -> a0", 0.86, 0, 15e9, runner_up=("DRAM reads", 0.78))
    assert dram.sentence().endswith(
        "; but DRAM reads are busy 78% of the time too: no change to the channel alone shortens "
        "the run by more than 22%")
    # a runner-up idle most of the time bounds nothing worth saying
    assert "no change" not in Bottleneck("compute", "core[0,0]", 0.95, 0, 15e9,
                                         runner_up=("DRAM reads", 0.4)).sentence()


def test_a_dram_bottleneck_says_the_issuing_and_offers_no_reuse_when_nothing_moves_twice() -> None:
    """A tester: a DRAM-bound copy spent 29% of the run issuing shim DMA tasks, which freed
    saved 19%, and the line said only to reuse data on chip, though each byte moved once."""
    why = Bottleneck("dram", "DRAM read", 0.79, 8_388_608, 15e9, issuing=0.29,
                     direction_bytes=4_194_304, host_bytes=4_194_304)
    assert why.sentence() == (
        "DRAM: the shims' host-memory reads (4.19 MB read) are busy 79% of the time at 15 GB/s; "
        "each byte of the tensors the runtime fills moves once, so reuse on chip has nothing to "
        "save: fewer bytes (a narrower type) would need less (the runtime also spends 29% of the "
        "time issuing shim DMA tasks one by one, which the transfers wait for: fewer, longer "
        "transfers would shorten that)")
    twice = Bottleneck("dram", "DRAM read", 0.79, 0, 15e9, direction_bytes=8_388_608,
                       host_bytes=4_194_304)
    assert twice.sentence() == (  # how many times over, and what reads less (a tester:
        # memtile staging along K read as much)
        "DRAM: the shims' host-memory reads (8.39 MB read) are busy 79% of the time at 15 GB/s; "
        "the tensors the runtime fills (4.19 MB) move 2.0 times over: reuse on chip would need "
        "less (a memtile can send what it holds more than once, repeat=; in a product, larger "
        "tiles make fewer passes over the other operand)")
    written = Bottleneck("dram", "DRAM write", 0.79, 0, 15e9, direction_bytes=4_210_000,
                         host_bytes=4_194_304)
    assert written.sentence() == (  # (a reviewer: a read's advice was given for writes, and
        # a few bytes over once read "1.0 times")
        "DRAM: the shims' host-memory writes (4.21 MB written) are busy 79% of the time at "
        "15 GB/s; the tensors the runtime drains (4.19 MB) move 1.00 times over: writing each "
        "byte once would need less")


def test_a_channel_moving_few_large_elements_is_told_to_send_smaller_ones() -> None:
    """A tester: 4 elements of 256 KB left a shim channel 21% idle, the stages filling and
    draining the pipeline, and the line said only to spread its traffic; 64 of 16 KB ran 18%
    faster on the same channel."""
    why = Bottleneck("dma", "shim (0, 0) -> a", 0.79, 0, 15e9, few_elements=(4, 262_144))
    assert why.sentence() == (
        "data movement: DMA 'shim (0, 0) -> a' moves data 79% of the time; send smaller "
        "elements (it moves 4 of 262,144 B: the stages after it wait for each whole, and idle "
        "while the first fills the pipeline and the last drains it) or spread its traffic over "
        "more channels")
    busy = Bottleneck("dma", "shim (0, 0) -> a", 0.95, 0, 15e9, few_elements=(4, 262_144))
    assert "smaller elements" not in busy.sentence()


def test_each_kernels_time_is_said_with_its_calls(in_root: Path) -> None:
    """A kernel tuner: the run said only how busy the cores were, not which kernel took the
    time (the trace alone showed it)."""
    from aiedsl.cli.run_stats import _simulated

    result = simulate(load_design("designs/gemm_bf16.py"))
    times = result.timing.kernel_time
    by = {k.symbol: k for k in times}
    mm, zero = by["matmul_bf16_f32_64x64x64_4x8x4"], by["zero_f32_4096"]
    call = get_target("npu1").timing.kernel_call_cycles
    assert (mm.calls, zero.calls) == (512, 64)
    assert mm.cycles % mm.calls == zero.cycles % zero.calls == 0
    assert mm.cycles // mm.calls > call and times[0] is mm
    assert abs(mm.share + zero.share - 1) < 1e-9
    assert _simulated(result.timing)["kernel_time"][0] == {
        "symbol": mm.symbol, "calls": 512, "cycles": mm.cycles, "share": mm.share}
