"""The target model: every fact about a device that aiedsl's checks, placer and simulator use.

Figures come from ``aie2-facts.md`` (mlir-aie's ``AIETargetModel``, AM020, Taka et al. 2025); each
field says where. No other module holds a device number as a literal, but for the port
numbers inside mlir-aie's ``isLegalTileConnection`` that :mod:`aiedsl.place.switchbox`'s
``_rule`` mirrors line by line, and the router's own packet-stream capacity (a constant of
mlir-aie's router, ``AIEPathFinder.h``, not of a device). The timing constants are in
:mod:`aiedsl.targets.timing`, the array's directions and tile kinds in
:mod:`aiedsl.targets.geometry`, each kind of tile's limits in :mod:`aiedsl.targets.limits`.
"""

from __future__ import annotations

from typing import Literal, Sequence

from pydantic import BaseModel, ConfigDict

from aiedsl.targets.geometry import (  # noqa: F401 (the model's vocabulary, re-exported)
    BUNDLE, OPPOSITE, STEP, Direction, TileKind, direction_of,
)
from aiedsl.targets.kernel_arch import (AIE_ARCH, RUNTIME_LIB_DIRS, arch_define_words,
                                        runs_bfp16)
from aiedsl.targets.limits import ShimMux, TileLimits
from aiedsl.targets.timing import TimingModel

CASCADE_BITS = 512
"""Bits in one word of the accumulator cascade, on every device aiedsl targets: mlir-aie's
``AIE2TargetModel::getAccumulatorCascadeSize`` (512), which its NPU1 and NPU2 models inherit
unchanged (BaseNPU2TargetModel derives from AIE2TargetModel); a cascade kernel's C++ moves it
as one 512-bit vector of any type (``v16accfloat``, ``v16acc32``, ``v32bfloat16``, ``v64int8``:
llvm-aie's ``put_mcd`` / ``get_scd_*``), and the declared element type only says how the bits
are read. Named
here, not only per device (:attr:`TargetModel.cascade_bits`), for what knows no device: a
kernel declared outside any design, and the host build of its C++."""


class TargetModel(BaseModel):
    """One NPU device as mlir-aie names it (``npu1``, ``npu1_2col``, ``npu2`` ...).

    Example
    -------
    >>> from aiedsl.targets import get_target
    >>> t = get_target("npu1")
    >>> (t.cols, t.core_rows)
    (4, (2, 3, 4, 5))
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    """mlir-aie's device name (``npu1``, ``npu2_4col``), as the emitted MLIR spells it."""
    family: Literal["npu1", "npu2"]
    arch: Literal["aie2", "aie2p"]
    """Peano's architecture for this family."""
    peano_target: str
    """clang ``--target`` triple for kernels."""
    stream_generation: int
    """The device generation an instruction stream's header names (``insts.bin`` word 0): 3 on
    NPU1, 4 on NPU2 (mlir-aie ``AIETargetNPU.cpp``: ``devGen = 4`` for a
    ``BaseNPU2TargetModel``, else 3)."""
    cols: int
    """Columns usable by designs (columns 0..cols-1)."""
    shim_row: int = 0
    memtile_rows: tuple[int, ...] = (1,)
    core_rows: tuple[int, ...] = (2, 3, 4, 5)
    shim: TileLimits
    memtile: TileLimits
    core: TileLimits
    shim_mux: ShimMux
    """The shim tiles' mux between their DMA, NOC and PLIO ports and their switch."""
    default_stack: int = 1024
    """Bytes of a core's data memory taken by its stack (mlir-aie default ``stack_size``)."""
    program_memory: int = 16384
    """Bytes of a core's program memory, on every generation (aie-rt's core module tables; its
    ELF loader refuses a core ELF past it; mlir-aie's linker script only since PR 3618).
    Checked on the core ELFs after aiecc (:mod:`aiedsl.toolchain.elf`)."""
    max_bd_stride: int = (1 << 19) - 1
    """Largest stride of a memtile or core BD dimension, in elements: 1e400306's DMABDOp::verify
    rejects ``stride >= 1 << 19`` (its message says 1048576)."""
    core_buffer_align: int = 32
    """Bytes every buffer in a core's data memory is taken to be aligned to: mlir-aie's core
    lowering tells the compiler so at each use (``AIECoreToStandard``: ``memref.assume_alignment``
    32), so the kernels' vector loads and stores may take it (256-bit accesses on AIE2), while
    its address pass aligns nothing (``AIEAssignBuffers``: "Fixme: alignment")."""
    core_vector_align: int = 32
    """Bytes a core buffer that can hold the core's widest vector must be aligned to: that
    vector's width (mlir-aie ``AIETargetModel::getComputeTileMaxVectorAlignBits`` / 8, aie_api's
    ``AIE_VECTOR_LDST_ALIGN``): 32 on AIE2; 64 on AIE2P, whose 512-bit loads and stores are
    torn at a 32-byte boundary that is not a 64-byte one (mlir-aie's
    ``vector_alignment.mlir`` test, 2026)."""
    core_narrow_vector_bytes: int = 16
    """Bytes of a core's narrowest vector access (128 bits, AIE2's ``v16int8``/``v8bfloat16``
    loads): a buffer of fewer bytes is read by scalar loads alone, which need only their
    element's alignment, and one of at least this many but fewer than
    :attr:`core_buffer_align` needs this alignment."""
    dma_granularity: int = 4
    """Bytes: the innermost run of every DMA transfer is a multiple of this, the step of the
    address generators (mlir-aie ``getAddressGenGranularity``: 32 bits on AIE2): a BD's
    lengths, wraps and steps count units of it."""
    max_shim_offset_bytes: int = 1 << 32
    """A shim transfer's start, in bytes from its host buffer, is below this: the offset becomes
    the ``aiex.npu.address_patch`` ``arg_plus``, a ``uint32_t`` by the time it is written
    (``AIETargetNPU.cpp``, ``appendAddressPatch``: ``uint32_t patchedArgPlus``), so a start at 4
    GiB or beyond wraps to the buffer's first bytes."""
    max_shim_iterations: int = 64
    """Largest outermost (iteration) size of a shim DMA pattern: the BD's 6-bit iteration wrap
    holds the count less one (1e400306: ``getHardwareStridesWraps`` writes ``size - 1``,
    ``NpuWriteBdOp::verify`` refuses an encoded ``IterationSize > 0x3F``; the register map's
    ``Iteration_Wrap`` is "actual - 1, range [1:64]"). A repeat (stride 0) lowers to the push's
    8-bit repeat count instead, where ``verifyStridesWraps`` bounds it first, as 65 (it compares
    the count less one with 64): aiedsl holds repeats to 64 too."""
    max_lock_value: int = 63
    lock_value_stride: int = 0x10
    """Bytes between two locks' value registers in a tile (``getLocalLockAddress``'s
    ``lockAddrOffset``; :attr:`TileLimits.lock_values`)."""
    packet_ids: int = 32
    """Packet ids 0-31: a packet header's 5-bit id (mlir-aie's objectFifo lowering stops at 32:
    ``packetID > 31``, "max number of packet IDs reached")."""
    shim_controller_id: int = 15
    """Packet id of a shim tile's controller (``controller_id``), which names the control packet
    flow of its column: ``AIETargetModel::getTileToControllerIdMap`` with column-wise unique ids,
    as ``aie-assign-tile-controller-ids`` runs it (15 on every shim of every fixture: on a device
    of six rows or fewer every column takes the first column's ids, whose row 0 is 15; a shim's
    id stays below 16 because a TCT token's actor id field has 4 bits)."""
    shim_task_queue: int = 4
    """Tasks one shim DMA channel's queue holds: a push onto a full queue is dropped by the
    hardware, and what waits on that transfer waits forever (mlir-aie PR 3734, which adds a
    poll for queue space; mlir-air PR 1826)."""
    runtime_buffers: int = 5
    """Host buffers a kernel invocation takes at most, as aiedsl builds it: aiecc's kernels.json
    declared bo0..bo4 only until mlir-aie PR 3252 (July 2026; XRT crashed setting a sixth,
    mlir-aie #3248). Newer aiecc declares one per runtime-sequence argument, but the firmware
    translates only the first five host addresses (XRT groups 3..7) into the array's address
    space; later ones need the offset AIETargetNPU.cpp folds into their address patches
    (mlir-aie's test npu-xrt/many_buffers), which aiedsl's instruction stream does not model:
    it keeps to five, which every aiecc builds."""
    clock_hz: float
    """The AIE array clock the simulator counts cycles at (see :class:`TimingModel` for the
    figures that are not in cycles)."""
    core_load_bytes_per_cycle: int
    """Bytes a core's vector loads bring in per cycle, one load in each of the two load slots:
    256 bits each on AIE2 (AM020, AIE-ML's "Load and Store Units"; llvm-aie's AIE2 vector loads
    fill 256-bit w registers, ``VLDA_dmw_lda_w``), 512 bits each on AIE2P (llvm-aie's AIE2P
    loads 512-bit x registers in both slots: ``VLDA_dmx_lda_x``, ``VLDB_dmx_ldb_x``)."""
    core_store_bytes_per_cycle: int
    """Bytes a core's vector stores write per cycle, one store slot: 256 bits on AIE2 (AM020),
    512 bits on AIE2P (llvm-aie's ``VST_dmx_sts_x``)."""
    exp2_unit: bool = False
    """Whether the core computes 2^x in hardware (the AIE API's ``aie::exp2``, AIE2P only):
    the library's exp, silu, gelu and softmax use it there, and a polynomial elsewhere."""
    cascade_bits: int = CASCADE_BITS
    """Width of one word of the accumulator cascade between neighbouring cores (mlir-aie
    ``PutCascadeOp::verify``/``GetCascadeOp::verify``: 512 bits on AIE2; aie2-facts s1):
    :data:`CASCADE_BITS` on every device aiedsl knows."""
    cascade_fifo_words: int = 4
    """Cascade words one link holds that its getter has not taken: a two-word FIFO on the
    putter's output and another on the getter's input (AM020 "AIE-ML Interfaces", Cascade
    Stream Interface; AM027 says the same of AIE-ML v2, npu2). A put stalls the core while
    both are full and a get while they are empty (the CASCADE_STALL of UG1315): the link is a
    blocking point-to-point stream between two neighbours (mlir-aie's ``aie.put_cascade`` /
    ``aie.get_cascade`` write and read the stream of the neighbouring core)."""
    cascade_words_per_cycle: int = 1
    """Cascade words a core puts or gets per cycle at most. An assumption (no measurement
    here): each word is one move instruction of the core's (llvm-aie's AIE2 ``VMOV_mv_scd`` /
    ``VMOV_mv_mcd``), and a kernel that declares fewer cycles than it moves words is timed
    at this rate; ``aiedsl sim`` says so when it does."""
    cascade_out: tuple[Direction, ...] = ("south", "east")
    """Where a core's cascade output may go; its input comes from the opposite sides (north or
    west). mlir-aie ``ConfigureCascadeOp::verify`` on every AIE2 target model, which
    ``aie-lower-cascade-flows`` makes of each ``aie.cascade_flow``; ``CascadeFlowOp::verify``
    adds that the two tiles are neighbours and neither is a shim or memtile."""
    stream_bytes_per_cycle: int = 4
    """One stream port moves 32 bits per cycle (AM020, "AIE-ML Tile Stream Switch"); a DMA
    channel's own rate is :attr:`TimingModel.dma_bytes_per_cycle`."""
    timing: TimingModel
    """The timing model's constants, fitted to the npu1 measurements (``bench/calibrate.py``)."""
    macs_per_cycle: dict[str, int]
    """Peak MACs per cycle per core with operands of one type, keyed ``"<in>_<out>"``
    (``"bf16_f32"``), for every element type a kernel may read (devices.py's table says where
    each comes from)."""
    bfp16_macs: int | None = None
    """Peak MACs per cycle per core of a bf16 multiply on the bfp16 unit (an 8x8x8
    ``mmul_bfp16_bfp16``), where it beats :attr:`macs_per_cycle`'s ``"bf16_f32"`` (npu2: 512,
    against the 256 of the 4x8x8 mmul library kernels run); None where cores have no such
    unit. The kernel-cost check holds a bf16 kernel's declared rate to the larger."""
    emulated_macs: dict[str, str] = {"i32": "emulated with 16-bit multiplies",
                                     "f32": "emulated with bf16 multiplies"}
    """Operand types of :attr:`macs_per_cycle` the multipliers lack on every AIE2 core, with how
    they are made (AM020 "AIE-ML Processor" for 32-bit integers; UG1603 "Floating-Point
    Operations" for f32, on AIE-ML and AIE-ML v2): what the kernel-cost check says of a peak
    lower than a user may expect."""
    mmul_shapes: dict[str, tuple[int, int, int]]
    """Native aie::mmul shape (r, s, t) per input dtype."""

    @property
    def max_dma_size(self) -> int:
        """Largest size (wrap) of a shim DMA pattern's dimension; the innermost counts 4-byte
        words: the shim's :attr:`~aiedsl.targets.limits.TileLimits.bd_wrap` (one fact, kept
        there)."""
        return self.shim.bd_wrap

    @property
    def aie_arch(self) -> int:
        """``__AIE_ARCH__`` for this architecture: 20 on AIE2, 21 on AIE2P, as Peano's
        preincluded headers define it (``aiev2_defines.h``, ``aie2p_version.h``) and the AIE
        API's ``config.hpp`` reads it. Host builds of kernels define it the same way."""
        return AIE_ARCH[self.arch]

    @property
    def kernel_defines(self) -> list[str]:
        """The ``-DNAME`` words every kernel compile for this device gets, Peano's and the
        host's (:data:`~aiedsl.targets.kernel_arch.ARCH_DEFINES`: on AIE2P, the AIE API macro
        that runs a bf16 ``aie::mmul`` on the bfp16 unit)."""
        return arch_define_words(self.arch)

    @property
    def runtime_lib_dir(self) -> str:
        """The folder of mlir-aie's runtime library for this device's cores, under an install's
        ``aie_runtime_lib/`` (:data:`~aiedsl.targets.kernel_arch.RUNTIME_LIB_DIRS`: ``AIE2`` on
        npu1, ``AIE2P`` on npu2), which every Peano compile of a kernel gets as an ``-I``, as
        IRON's do."""
        return RUNTIME_LIB_DIRS[self.arch]

    def runs_bfp16(self, dtype: str, shape: tuple[int, int, int]) -> bool:
        """Whether this device's cores run an ``aie::mmul`` of ``shape`` on ``dtype`` inputs
        on their bfp16 unit, as aiedsl compiles kernels
        (:func:`~aiedsl.targets.kernel_arch.runs_bfp16`): npu2's bf16 4x8x8 and 8x8x8."""
        return runs_bfp16(self.arch, dtype, shape)

    @property
    def dram_bytes_per_s(self) -> float:
        """Host-memory read bandwidth available to the NPU
        (:attr:`TimingModel.dram_read_bytes_per_s`)."""
        return self.timing.dram_read_bytes_per_s

    def peak_macs(self, dtype: str | None) -> int | None:
        """The core's peak MACs per cycle with operands of element type ``dtype`` (``"bf16"``:
        :attr:`macs_per_cycle`'s ``"bf16_f32"``), or None when the model lists none for it."""
        return next((v for key, v in self.macs_per_cycle.items()
                     if dtype and key.split("_")[0] == dtype), None)

    def operand_peak(self, dtypes: Sequence[str]) -> tuple[int, str | None]:
        """The MACs per cycle a kernel whose multiplies read operands of ``dtypes`` can do at
        most, and the type whose peak that is: the largest of their peaks (one reading an i16
        and an i8 buffer may multiply the i8 values by each other: the modes mixing types are
        no faster, devices.py's table); with no type, or one the model lists no peak for, the
        largest of any type's, and None for the type. The kernel-cost check and the profile's
        MAC bound both hold a kernel to it."""
        peaks = [(self.peak_macs(t), t) for t in dtypes]
        known = [(v, t) for v, t in peaks if v is not None]
        if dtypes and len(known) == len(peaks):
            best = max(known, key=lambda p: p[0])
            return best[0], best[1]
        return max(self.macs_per_cycle.values()), None

    def limits(self, kind: TileKind) -> TileLimits:
        """The per-tile limits of ``kind``."""
        return {"shim": self.shim, "memtile": self.memtile, "core": self.core}[kind]

    def lock_value_address(self, kind: TileKind, lock: int) -> int:
        """Offset of lock ``lock``'s value register in a tile of ``kind`` (mlir-aie
        ``getLocalLockAddress``)."""
        return self.limits(kind).lock_values + self.lock_value_stride * lock

    def kind_of(self, tile: tuple[int, int]) -> TileKind | None:
        """Which kind of tile sits at ``(col, row)``, or None when it is off the device."""
        col, row = tile
        if not 0 <= col < self.cols:
            return None
        if row == self.shim_row:
            return "shim"
        if row in self.memtile_rows:
            return "memtile"
        if row in self.core_rows:
            return "core"
        return None

    def link_capacity(self, tile: tuple[int, int], direction: Direction) -> int:
        """Stream wires from ``tile`` to its neighbour in ``direction`` (0 off the device).

        A wire needs a master port on this side and a slave port on the other; mlir-aie numbers
        both ends alike, so the capacity is the smaller of the two counts.
        """
        dc, dr = STEP[direction]
        other = (tile[0] + dc, tile[1] + dr)
        here, there = self.kind_of(tile), self.kind_of(other)
        if here is None or there is None:
            return 0
        return min(self.limits(here).switch_out.get(BUNDLE[direction], 0),
                   self.limits(there).switch_in.get(BUNDLE[OPPOSITE[direction]], 0))

    def memtile_neighbours(self, col: int) -> tuple[int, ...]:
        """The columns whose memtile memory the memtile of column ``col`` also reaches, in the
        order mlir-aie's objectfifo lowering tries them for a buffer that does not fit its own
        (west, then east: ``createObjectFifoElements``; ``AIETargetModel::isLegalMemAffinity``
        lets a memtile reach its left and right neighbours); none where no memtile spills
        (:attr:`TileLimits.neighbour_channels` unset).

        >>> from aiedsl.targets import get_target
        >>> get_target("npu1_2col").memtile_neighbours(0), get_target("npu1").memtile_neighbours(1)
        ((1,), (0, 2))
        """
        if self.memtile.neighbour_channels is None:
            return ()
        return tuple(c for c in (col - 1, col + 1) if 0 <= c < self.cols)

    def core_reaches(self, core: tuple[int, int], mem: tuple[int, int]) -> bool:
        """Can the core at ``core`` load and store the data memory of compute tile ``mem``?

        On AIE2 a core reaches its own memory and those of its west, north and south
        neighbours, never a memtile's (mlir-aie ``isLegalMemAffinity``).
        """
        if self.kind_of(core) != "core" or self.kind_of(mem) != "core":
            return False
        dc, dr = mem[0] - core[0], mem[1] - core[1]
        return (dc, dr) in ((0, 0), (-1, 0), (0, 1), (0, -1))

    def tiles(self) -> list[tuple[int, int]]:
        """Every tile of the device, row by row from the shim row up, columns left to right."""
        rows = sorted({self.shim_row, *self.memtile_rows, *self.core_rows})
        return [(col, row) for row in rows for col in range(self.cols)]

    @property
    def rows(self) -> int:
        """Number of core rows."""
        return len(self.core_rows)

    @property
    def max_fifos(self) -> int:
        """More fifos than this can never be placed: every fifo end needs a DMA channel (or a
        neighbour's memory), and this is twice every output channel of every tile. A bound checked
        before fifos are made, so that a design cannot make millions of them."""
        per_col = (self.shim.dma_out + self.memtile.dma_out * len(self.memtile_rows)
                   + self.core.dma_out * self.rows)
        return 2 * self.cols * per_col
