"""The devices aiedsl targets, built from two family models (npu1 = XDNA, npu2 = XDNA2).

Sources (see ``aie2-facts.md``): mlir-aie ``AIETargetModel.{h,cpp}`` and ``docs/Devices.md`` for
the array and per-tile resources; Linux ``amdxdna`` and Taka et al. (arXiv 2512.13282) for clocks
and measured DRAM bandwidth; AM020 and the Vitis MAC tables for MACs per cycle;
``python bench/calibrate.py --fit`` for the three timing constants fitted to the npu1
measurements (``../shared/reference/npu1-measured.md``, re-expressed in ``bench/calibration/``).
"""

from __future__ import annotations

import re
from typing import Callable

from aiedsl.targets.limits import ShimMux, TileLimits
from aiedsl.targets.model import TargetModel
from aiedsl.targets.timing import TimingModel

# Stream switch ports per bundle, mlir-aie's AIE2TargetModel (aie2-facts.md s2), which npu1 and
# npu2 share: memtiles have no east/west wires, so data crosses columns only in the shim row or
# a core row. The shim's are those of a shim NOC tile, the kind every NPU shim is.
_SHIM = TileLimits(memory=0, banks=0, dma_in=2, dma_out=2, bds=16, locks=16, lock_values=0x14000,
                   dma_dims=3,
                   bd_wrap=1023, bd_step_words=1 << 20, bd_len_words=(1 << 32) - 1,
                   switch_out={"FIFO": 1, "South": 6, "West": 4, "North": 6, "East": 4,
                               "TileControl": 1},
                   switch_in={"FIFO": 1, "South": 8, "West": 4, "North": 4, "East": 4,
                              "Trace": 1, "TileControl": 1})
_MEMTILE = TileLimits(memory=512 * 1024, banks=8, dma_in=6, dma_out=6, bds=48,
                      bd_wrap=1023, bd_max_elements=512,
                      bd_step_words=1 << 17, bd_len_words=(1 << 17) - 1,
                      bds_per_channel_parity=24, neighbour_channels=4, locks=64,
                      lock_values=0xC0000, dma_dims=4,
                      switch_out={"DMA": 6, "South": 4, "North": 6, "TileControl": 1},
                      switch_in={"DMA": 6, "South": 6, "North": 4, "Trace": 1,
                                 "TileControl": 1})
_CORE = TileLimits(memory=64 * 1024, banks=4, dma_in=2, dma_out=2, bds=16, locks=16,
                   lock_values=0x1F000, dma_dims=3,
                   bd_wrap=255, bd_max_elements=512,
                   bd_step_words=1 << 13, bd_len_words=(1 << 14) - 1,
                   switch_out={"Core": 1, "DMA": 2, "FIFO": 1, "South": 4, "West": 4,
                               "North": 6, "East": 4, "TileControl": 1},
                   switch_in={"Core": 1, "DMA": 2, "FIFO": 1, "South": 6, "West": 4,
                              "North": 4, "East": 4, "Trace": 2, "TileControl": 1})
_SHIM_MUX = ShimMux(masters={"DMA": 2, "NOC": 4, "PLIO": 6, "South": 8},
                    slaves={"DMA": 2, "NOC": 4, "PLIO": 8, "South": 6},
                    to_switch={"DMA": (3, 7), "NOC": (2, 3, 6, 7)},
                    from_switch={"DMA": (2, 3), "NOC": (2, 3, 4, 5)})


# The timing constants (see TimingModel for what each is and which rows determine it). npu1's
# three fitted ones (invocation_s, shim_task_s, shim_burst_cycles) are what
# `python bench/calibrate.py --fit` prints (104.35 us, 6.42 us, 10.84 cycles), rounded: a weighted
# least-squares fit to the ten npu1 measurements re-expressed in bench/calibration/. With these
# rounded values `python bench/calibrate.py` prints residuals of rms 7.2%, worst 11.2%, every
# row within 15% (the unrounded fit's worst is 11.0%). The others are
# physical figures from their sources (TimingModel's docstrings); the clock stays Taka et al.'s
# 1.0 GHz (ColorThreshold bounds it from below: 2 MB through one 4 B/cycle shim channel in
# about 560 us needs at least 0.93 GHz).
NPU1_TIMING = TimingModel(
    invocation_s=104.4e-6, invocation_spread_s=10.3e-6, shim_task_s=6.4e-6,
    shim_burst_bytes=256, shim_burst_cycles=11.0,
    dram_read_bytes_per_s=15e9, dram_write_bytes_per_s=15e9,
    dma_bytes_per_cycle={"shim": 4, "memtile": 4, "core": 4},
    lock_acquire_cycles=4, lock_release_cycles=2, kernel_call_cycles=10,
)
"""npu1 (Phoenix, Hawk Point): invocation, task and burst costs fitted to ten IRON measurements
(bench/calibrate.py --fit), DRAM from Taka et al., DMA rates from AM020."""

# Nobody measured npu2's invocation, task, burst, lock or call costs: npu1's are assumed (the
# seconds unchanged, the cycles counted at npu2's 1.8 GHz clock), as are the library kernels'
# cycle models, made on npu1; the simulator's note on an npu2 run says both. Its
# DRAM is Taka et al.'s npu2 figure (about 50 GB/s) and its bursts are up to 512 B (mlir-aie's
# BaseNPU2TargetModel::getShimBurstEncodingsAndLengths; the lowering picks the largest).
NPU2_TIMING = NPU1_TIMING.model_copy(update=dict(
    shim_burst_bytes=512, dram_read_bytes_per_s=50e9, dram_write_bytes_per_s=50e9))
"""npu2 (Strix, Krackan): npu1's fitted constants, assumed, with npu2's DRAM and bursts."""


# Peak MACs per cycle of one core by operand type, keyed "<operand>_<accumulator>" (what a
# multiply of that type sums into): its fastest matrix-multiply mode at one instruction a
# cycle (of those that emulate it, for a type the multipliers lack), without sparsity.
#   i8, u8: AM020 "AIE-ML Processor" (256 8b x 8b MACs). u8 is the same instruction with its
#     sign bit clear: llvm-aie's aiev2_vmult.h gives every mul/mac of 8-bit vectors sgn_x and
#     sgn_y, and the AI Engine API instantiates its int8 and uint8 mmuls on the same modes.
#     npu2 (AIE-ML v2): its 8x8x8 mmul (aie2-facts.md: mlir-aie aie_kernels/aie2p/mm.cc).
#   i16: AM020 "Summary" table, INT16 128 operations per tile; npu2 its 4x4x8 mmul
#     (aie2-facts.md).
#   i32: AM020 "Summary" table, INT32 32 operations per tile: AIE-ML has no 32-bit multiplier
#     ("AIE-ML Processor": 32 x 32 multiplication is emulated with 16-bit operands), a 32 x 32
#     product is four 16b x 16b ones. npu2: the AI Engine API's int32 mmul
#     (detail/aie2p/emulated_mmul_intrinsics.hpp, mac_4x2_2x8_32bx32b) makes a 4x2x8 block, 64
#     MACs, of two 32b x 16b 4x2x8 mmuls: 32 a cycle, a quarter of i16's as on npu1.
#   bf16: AM020 "AIE-ML Processor" (128 bfloat16 MACs with FP32 accumulation); npu2 its 4x8x8
#     mmul (aie2-facts.md), which AIE2P runs on its bfp16 unit, one mac_8x8_8x8T a mmul, under
#     the AIE API macro aiedsl's AIE2P builds define (kernel_arch.BFP16_MMUL; without it the
#     API makes it of eight element-wise multiplies of 32 MACs).
#   f32: neither has an f32 multiplier: UG1603 "Floating-Point Operations" (AIE-ML and AIE-ML
#     v2: the AI Engine API does single precision by emulation with bfloat16). Each f32
#     product is one or more bf16 ones, so bf16's peak bounds it; AM020's "Summary" counts 42
#     FP32 operations per tile in its default accuracy (16-bit mantissa), fewer at more, but a
#     lower accuracy is faster, so only bf16's is a bound of every mode.
# Operands of two types have no key of their own: the modes that mix them are no faster than
# the narrower type's (16b x 8b: a 4x4x8 mmul a cycle on npu1, 128 MACs, AI Engine API
# detail/aie2/mmul_16_8.hpp; 8x4x8, 256, on npu2, detail/aie2p/mmul_16_8.hpp), so a kernel
# reading i16 and i8 is held to i8's (checks/kernels.py).
_NPU1_MACS = {"i8_i32": 256, "u8_i32": 256, "i16_i32": 64, "i32_i64": 16, "bf16_f32": 128,
              "f32_f32": 128}
_NPU2_MACS = {"i8_i32": 512, "u8_i32": 512, "i16_i32": 128, "i32_i64": 32, "bf16_f32": 256,
              "f32_f32": 256}
# npu2's bf16 above is the 4x8x8 mmul the library's kernels run: one mac_8x8_8x8T a cycle,
# half of whose 512 products are of the zero rows A is grown by (a bf16 8x8x8 fills it but
# takes a second multiplier instruction, a mul_elem_64 by ones, to widen B); an 8x8x8 mmul of
# operands already in bfp16 (AI Engine API mmul_bfp16_bfp16<8, 8, 8>, mlir-aie's
# aie_kernels/aie2p/mm_bfp.cc) does 512: a kernel's declared rate is held to that
# (checks/kernels.py), the library's costs keep 256.
_NPU2_BFP16_MACS = 512


def _npu1(name: str, cols: int) -> TargetModel:
    return TargetModel(
        name=name, family="npu1", arch="aie2", peano_target="aie2-none-unknown-elf", cols=cols,
        stream_generation=3,
        shim=_SHIM, memtile=_MEMTILE, core=_CORE, shim_mux=_SHIM_MUX,
        clock_hz=1.0e9, timing=NPU1_TIMING, core_load_bytes_per_cycle=64,
        core_store_bytes_per_cycle=32,
        macs_per_cycle=_NPU1_MACS,
        mmul_shapes={"i8": (4, 8, 8), "i16": (4, 4, 4), "bf16": (4, 8, 4)},
    )


def _npu2(name: str, cols: int) -> TargetModel:
    return TargetModel(
        name=name, family="npu2", arch="aie2p", peano_target="aie2p-none-unknown-elf", cols=cols,
        stream_generation=4,
        shim=_SHIM, memtile=_MEMTILE, core=_CORE, shim_mux=_SHIM_MUX,
        clock_hz=1.8e9, timing=NPU2_TIMING, core_load_bytes_per_cycle=128,
        core_store_bytes_per_cycle=64, core_vector_align=64, exp2_unit=True,
        macs_per_cycle=_NPU2_MACS, bfp16_macs=_NPU2_BFP16_MACS,
        mmul_shapes={"i8": (8, 8, 8), "i16": (4, 4, 8), "bf16": (4, 8, 8)},
    )


DEVICES: dict[str, TargetModel] = {
    "npu1": _npu1("npu1", 4),
    **{f"npu1_{n}col": _npu1(f"npu1_{n}col", n) for n in (1, 2, 3)},
    "npu2": _npu2("npu2", 8),
    **{f"npu2_{n}col": _npu2(f"npu2_{n}col", n) for n in range(1, 8)},
}


_FULL_COLS = {"npu1": 4, "npu2": 8}
_VERSAL = ("xcvc1902", "xcve2302", "xcve2802")

_DRIVER_XDNA2 = {"npu4": "Strix", "npu5": "Strix Halo", "npu6": "Krackan"}
"""The Linux amdxdna driver's names of XDNA2 NPUs (``npu4_regs.c`` .. ``npu6_regs.c``), which
mlir-aie calls npu2 (:data:`aiedsl.toolchain.generation.NPU_MODELS` reads them off a device)."""

RENAMED: dict[str, tuple[str, str]] = {"npu1_4col": ("npu1", "PR 2397")}
"""Devices mlir-aie once named otherwise: the old name -> (the name now, the change that renamed
it). aiedsl emits the name now and refuses the old one, naming both. mlir-aie PR 2397 (issue
2371, June 2025) dropped the five-column Phoenix ``npu1``, whose column 0 the xdna driver no
longer runs, and gave its name to the whole four-column array, ``npu1_4col`` until then
(AIEAttrs.td: "enum value 8 used to be npu1_4col, which is now npu1"); IRON's ``NPU1Col4``
resolved to ``npu1_4col`` (its docstring: "resolves to AIEDevice.npu1_4col")."""


def device_hint(name: object) -> str | None:
    """The device aiedsl knows that ``name`` most likely means, as a clause for an unknown-device
    message: IRON's class names (``NPU1Col1``), another case (``NPU2``), mlir-aie's older
    spellings (``npu``, ``npu1_4col``: :data:`RENAMED`); None when nothing comes close.

    >>> device_hint("NPU1Col1")
    "'npu1_1col' (IRON's NPU1Col1 is mlir-aie's npu1_1col)"
    >>> device_hint("npu4")
    "'npu2' (the amdxdna driver's npu4, Strix, is an XDNA2 NPU: mlir-aie's npu2)"
    """
    if not isinstance(name, str):
        return None
    low = name.strip().lower()
    if low in DEVICES:
        return f"'{low}' (device names are lower case)"
    if low == "npu":
        return "'npu1' (mlir-aie called the Phoenix NPU 'npu' before naming it npu1)"
    if low in RENAMED:
        now, change = RENAMED[low]
        return (f"'{now}' (older mlir-aie and IRON's {_iron_name(low)} called it {low}; "
                f"mlir-aie since {change} calls it {now})")
    if low in _VERSAL:
        return None  # a Versal part, not a Ryzen AI NPU: the list of NPUs says enough
    if low in _DRIVER_XDNA2:
        return (f"'npu2' (the amdxdna driver's {low}, {_DRIVER_XDNA2[low]}, is an XDNA2 NPU: "
                "mlir-aie's npu2)")
    m = re.fullmatch(r"(npu[12])(?:col([1-8])|_([1-8])col)", low)
    if m is None:
        return None
    base, iron = m.group(1), m.group(2) is not None
    cols = int(m.group(2) or m.group(3))
    known = base if cols == _FULL_COLS[base] else f"{base}_{cols}col"
    if known not in DEVICES:
        return None
    old = f"{base}_{cols}col"  # what IRON's class resolved to
    if iron and old in RENAMED:
        now, change = RENAMED[old]
        return f"'{now}' (IRON's {name} is older mlir-aie's {old}, which mlir-aie since " \
               f"{change} calls {now})"
    if iron:
        return f"'{known}' (IRON's {name} is mlir-aie's {known})"
    return f"'{known}' (mlir-aie's {known} is the whole {cols}-column array)"


def wider_device(target: TargetModel, fits: Callable[[TargetModel], bool] = lambda t: True
                 ) -> TargetModel | None:
    """The device to offer a design ``target`` is too narrow for: the narrowest with more
    columns for which ``fits`` holds, of ``target``'s own family first (npu1's before npu2's
    for an npu1 design); None when none does.

    >>> wider_device(DEVICES["npu1"]).name
    'npu2_5col'
    """
    wider = sorted((t for t in DEVICES.values() if t.cols > target.cols and fits(t)),
                   key=lambda t: (t.family != target.family, t.cols))
    return wider[0] if wider else None


def _iron_name(device: str) -> str:
    """IRON's class for mlir-aie device ``device``: ``npu1_4col`` -> ``NPU1Col4``."""
    m = re.fullmatch(r"npu([12])_([1-8])col", device)
    return f"NPU{m.group(1)}Col{m.group(2)}" if m else device.upper()
