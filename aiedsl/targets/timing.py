"""The simulator's timing constants of one device family (:class:`TimingModel`), each a
physical quantity fitted to real npu1 measurements or taken from its source."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from aiedsl.targets.geometry import TileKind


class TimingModel(BaseModel):
    """The simulator's timing constants for one device family: what an invocation costs beyond
    the array's own cycles, and what each kind of transfer and core operation costs.

    Every constant is a physical quantity with a unit in its name. Those in seconds belong to
    the host, the driver and the NPU's firmware, whose clocks are not the array's; those in
    cycles count the AIE array clock (:attr:`TargetModel.clock_hz`). Three npu1 values
    (:attr:`invocation_s`, :attr:`shim_task_s`, :attr:`shim_burst_cycles`) are fitted to ten
    real npu1 measurements (``../shared/reference/npu1-measured.md``, re-expressed in
    ``bench/calibration/``) by ``python bench/calibrate.py --fit``; the others are physical
    figures from their sources. Each docstring names the rows that determine the constant, or
    says that none does and where the value comes from instead.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    invocation_s: float
    """Fixed cost of one kernel invocation as the host times it (``run.start(); run.wait()``):
    command submission, the firmware's start of the instruction stream and its completion
    notice, with no data moved. Added once per run. Determined by the five small rows (Copy(DMA),
    Copy(Kern), VSOp(Mul), VVOp(Mul), VReduce(Max)), whose device-side work is their two or
    three shim tasks and a few microseconds of data; every other row contains it too. npu1:
    104.4 us fitted (the small rows' figures scatter from 112.8 to 134.0 us). mlir-aie #2381 and
    #3793 report 45-64 us per empty call with other hosts and drivers."""
    invocation_spread_s: float
    """How far the five small rows that determine :attr:`invocation_s` lie from the model at
    most (``bench/calibrate.py``: 10.3 us, VSOp(Mul) modelled 126.00 against 115.66 measured;
    Copy(DMA) 122.00 against 131.40): the model's time of a design that is mostly the fixed
    cost is no closer than this to what the host will time, which the summary says of such a
    design. Not a constant of the model: a figure of its fit."""
    shim_task_s: float
    """Firmware time to issue one shim DMA task from the instruction stream (write its buffer
    descriptor, patch in the host address, push it on the channel's task queue); the runtime
    issues its tasks one after another, so a transfer starts no earlier than its issue.
    Determined by GEMM, the only row with more than three tasks (20, four columns issued in
    turn, so the last column starts 16 tasks after the first); the small rows' two or three tasks
    are hard to tell from :attr:`invocation_s` (the fit separates them only through GEMM). One
    task is one buffer descriptor in every row, so this is also the per-BD set-up. npu1: 6.4 us
    fitted; plausible for the firmware's three steps per task (an 8-word BD block write, the
    host-address patch, the queue push), but it is one row's figure and also absorbs any error
    of that row's kernel estimate (80% of peak): at 2 us per task GEMM models 0.78 of its
    measurement."""
    shim_burst_bytes: int
    """Largest AXI burst a shim DMA channel issues to host memory: the BD's burst-length field,
    which mlir-aie's lowering sets to the largest the target allows (``AIE2TargetModel::
    getShimBurstEncodingsAndLengths``: 64/128/256 B on npu1, up to 512 B on npu2; the January
    2025 lowering the measurements ran wrote 256 B). A contiguous run of the host pattern is
    ``ceil(run / shim_burst_bytes)`` bursts."""
    shim_burst_cycles: float
    """Cycles a shim DMA channel spends per burst beyond its data beats (address phase and the
    response latency one channel cannot hide): a 256 B burst takes 64 + this cycles, a 128 B
    one 32 + this. Determined by ColorThreshold (2 MB each way in 256 B bursts, one channel each
    way: alone, with its 12 rtp writes, it asks about 2 cycles) and MVAdd (7 MB each way in
    128 B runs: 9 to 20 cycles from its two figures); VReLU and VVOp(AddKern) check it. npu1:
    11 cycles fitted."""
    dram_read_bytes_per_s: float
    """Host-memory read bandwidth shared by every shim MM2S channel of the device: a pool of its
    own, separate from :attr:`dram_write_bytes_per_s` by assumption (no row of the calibration
    set tells whether reads and writes share one; the simulator's summary says so where a design
    reads and writes heavily at once). Source: Taka
    et al. (arXiv 2512.13282) s5.2.1, about 15 GB/s on npu1 and 50 GB/s on npu2. No row of the
    npu1 calibration set is limited by it: GEMM, which reads 2 MB over eight channels in the
    0.31 ms its row spends on the device (418 us less the fixed invocation cost), only bounds
    it from below (> 6.6 GB/s). Not fitted to Taka et al.'s GEMM figures,
    though it limits them: with the shipped designs their published npu1 bf16 and int8 and npu2
    bf16 and int8 figures need 16.4, 15.2, 52.5 and 50.9 GB/s of reads (``bench/calibrate.py``),
    a few percent above these rounded figures."""
    dram_write_bytes_per_s: float
    """Host-memory write bandwidth shared by every shim S2MM channel. Assumed equal to the read
    figure (Taka et al. measured one figure), and assumed a separate pool from the reads': no
    row tells whether the two directions share one (over their measured times less the fixed
    invocation cost, MVAdd moves about 5.5 GB/s in both directions together and ColorThreshold
    about 7.3 GB/s, neither near 15). ColorThreshold, the fastest writer (2 MB in about 0.55
    ms), bounds it from below (> 3.7 GB/s)."""
    dma_bytes_per_cycle: dict[TileKind, int]
    """Bytes one DMA channel moves per cycle, by tile kind: 32 bits on every kind (AM020, the
    DMA and stream switch chapters; aie2-facts s2). A stream between two channels runs at the
    slower end's rate. ColorThreshold checks the shim's (with :attr:`shim_burst_cycles`); no row
    is limited by a memtile or core channel."""
    lock_acquire_cycles: int
    """Cycles a core spends on an object-fifo acquire whose lock is already free: one lock
    request to the tile's lock unit and its grant. Estimated from the instruction sequence
    mlir-aie lowers an acquire to (``aie.use_lock`` AcquireGreaterEqual: one request, the core
    stalling for the reply); no row resolves it: VVOp(Mul), with the most lock operations per
    byte (48 acquires per run), moves by 0.05 us per cycle of it, below its noise."""
    lock_release_cycles: int
    """Cycles a core spends on an object-fifo release (one non-blocking lock request). Same
    estimate and same bound as :attr:`lock_acquire_cycles`."""
    measured_on: str = "npu1"
    """The device family whose measurements the fitted constants come from: a run on another
    family says its times rest on assumed constants."""
    kernel_call_cycles: int
    """Cycles the core spends around each kernel call at the call site (argument set-up, the
    branch and return with their delay slots) beyond the kernel's own declared ``cycles``,
    which cover its body, prologue and epilogue. Estimated from AIE2's branch delay slots; no
    row resolves it: GEMM's 36 calls per core move it by 0.04 us per cycle."""

    driver_timeout_s: float = 10.0
    """Shortest time a run has been allowed before the NPU driver stops it, among the Linux
    drivers' job timeouts found (the DRM scheduler's, ``HWCTX_MAX_TIMEOUT``): 10000 ms and
    later 16000 ms in AMD's out-of-tree xdna-driver (``amdxdna_ctx.h``, ``aie2_ctx.c``), 60000
    ms in the upstream kernel's amdxdna; the newest xdna-driver's ``aie2_ctx.c`` defines none
    (where it keeps its timeout now was not found), and a Windows driver's is not known here.
    A stopped run ends timed out or aborted (mlir-aie #2501) and its outputs are not written.
    The same for every device family (a driver fact)."""

    @property
    def register_write_s(self) -> float:
        """Firmware time for one register write of the instruction stream (``write32``: what
        ``aiex.npu.rtp_write`` lowers to). No row measures it; it is taken as one of the three
        steps :attr:`shim_task_s` covers (a block write, an address patch, a queue push), i.e. a
        third of it: 2.1 us on npu1."""
        return self.shim_task_s / 3
