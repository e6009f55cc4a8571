"""The NPU instruction stream's format (``insts.bin``) as plain data: the words' layout, the
shim DMA register map, and the records a decoded stream is made of.

Little-endian 32-bit words. Sources: mlir-aie's ``lib/Targets/AIETargetNPU.cpp``
(``AIETranslateNpuToBinary`` and its ``append*`` helpers, which write every word below), aie-rt's
``XAie_TxnHeader`` / ``XAie_*Hdr`` structs (``driver/src/global/xaiegbl.h``) and its opcode enum
``XAie_TxnOpcode`` (copied into ``AIETargetNPU.cpp``, "see aie-rt commit a6196eb,
xaiengine/xaie_txn.h").

Header, 4 words: word 0 = ``major | minor << 8 | device_generation << 16 | rows << 24`` (mlir-aie
writes version 0.1; generation 3 for NPU1 Phoenix/Hawk Point, 4 for NPU2 Strix/Krackan: ``devGen =
4`` when the target model is a ``BaseNPU2TargetModel``); word 1 = ``columns | memtile_rows << 8``;
word 2 = number of operations; word 3 = size of the whole stream in bytes, header included.

Then the operations, each starting with its opcode in the low byte of its first word:

=================  ======  ========================================================================
operation          opcode  words
=================  ======  ========================================================================
write32            0x00    6: op, 0, address (low), address (high, 0), value, size = 24
blockwrite         0x01    4 + n: op, ``col | row << 8`` (0: the address is absolute), address,
                           size = 16 + 4n, then n data words written to address, address + 4, ...
maskwrite32        0x03    7: op, 0, address (low), address (high), value, mask, size = 28;
                           the register becomes ``(old & ~mask) | (value & mask)``
maskpoll32         0x04    7: as maskwrite32 (aie-rt ``XAie_MaskPoll32Hdr``): wait until
                           ``register & mask == value``
preempt            0x06    1: ``op | level << 8``
load_pdi           0x08    4: ``op | id << 16``, size, address (low), address (high)
create_scratchpad  0x0A    4: ``op | usage << 8``, size, DDR address (low, high; patched by XRT)
update_reg         0x0C    3: ``op | table index << 8 | function << 16``, function argument, address
sync (TCT)         0x80    4: op, size = 16, ``direction | row << 8 | column << 16``,
                           ``row_count << 8 | column_count << 16 | channel << 24``
address_patch      0x81    12: op, size = 48, 0, 0, 0, action (0), register address (64 bit),
                           runtime argument index (64 bit), byte offset added (64 bit)
other custom       0x82..  op, size in bytes, payload (aie-rt ``XAie_CustomOpHdr``); named from
                           ``XAie_TxnOpcode`` (read_regs, record_timer, merge_sync) and skipped
=================  ======  ========================================================================

An address is ``column << 25 | row << 20 | offset`` (AIE2's ``getColumnShift() == 25``,
``getRowShift() == 20``). A sync's direction is mlir-aie's ``DMAChannelDir``: 0 = S2MM (into host
memory), 1 = MM2S (from host memory); it waits for a task-completion token (TCT) from that channel.
An address patch makes XRT write the host address of runtime argument ``arg`` plus ``arg_plus``
bytes into the register at ``address``: mlir-aie points it at word 1 of the BD it just wrote
(``getDmaBdAddress + getDmaBdAddressOffset``, offset 4 on a shim), and leaves the BD's own buffer
offset 0 ("the complete address is set by the patch op", ``AIEDmaToNpu.cpp``).

The shim tile's DMA registers
-----------------------------
Offsets in a shim NOC tile (row 0), from ``AIE2TargetModel::getDmaBdAddress`` /
``getDmaControlAddress`` (``lib/Dialect/AIE/IR/AIETargetModel.cpp``) and aie-rt's register
database (``driver/src/global/xaiemlgbl_params.h``, ``XAIEMLGBL_NOC_MODULE_DMA_*``):

* BD ``n`` (16 of them): 8 words at ``0x1D000 + 0x20 * n``;
* ``DMA_S2MM_<ch>_Ctrl`` at ``0x1D200 + 8 * ch``, its ``Task_Queue`` 4 bytes after;
  ``DMA_MM2S_<ch>_Ctrl`` at ``0x1D210 + 8 * ch``, its ``Task_Queue`` after (2 channels each).
  Ctrl bits 15:8 are the ``Controller_ID`` the completion token is sent to (mlir-aie sets bits
  12:8 to the shim tile's ``controller_id`` packet id before a task that issues a token). A write to
  ``Task_Queue`` starts a task: bits 3:0 the start BD, 23:16 the repeat count (extra runs of the
  BD), bit 31 ``Enable_Token_Issue`` (``PushQueuetoWrite32Pattern``; mlir-aie issues a token for
  every S2MM task and for an MM2S task with ``issue_token``).

A shim BD's 8 words (aie-rt ``XAIEMLGBL_NOC_MODULE_DMA_BD0_*``; mlir-aie's
``WriteBdToBlockWritePattern`` writes the same fields):

======  ===========================================================================================
word 0  ``Buffer_Length`` [31:0]: 32-bit words the BD moves (in a run)
word 1  ``Base_Address_Low`` [31:2] (the address patch overwrites it)
word 2  ``Enable_Packet`` [30], ``Out_Of_Order_BD_ID`` [29:24], ``Packet_ID`` [23:19],
        ``Packet_Type`` [18:16], ``Base_Address_High`` [15:0]
word 3  ``Secure_Access`` [30], ``D0_Wrap`` [29:20], ``D0_Stepsize`` [19:0]
word 4  ``Burst_Length`` [31:30], ``D1_Wrap`` [29:20], ``D1_Stepsize`` [19:0]
word 5  ``SMID`` [31:28], ``AxCache`` [27:24], ``AxQoS`` [23:20], ``D2_Stepsize`` [19:0]
word 6  ``Iteration_Current`` [31:26], ``Iteration_Wrap`` [25:20], ``Iteration_Stepsize`` [19:0]
word 7  ``TLAST_Suppress`` [31], ``Next_BD`` [30:27], ``Use_Next_BD`` [26], ``Valid_BD`` [25],
        ``Lock_Rel_Value`` [24:18] (signed), ``Lock_Rel_ID`` [16:13], ``Lock_Acq_Enable`` [12],
        ``Lock_Acq_Value`` [11:5] (signed), ``Lock_Acq_ID`` [3:0]
======  ===========================================================================================

The address generator counts 32-bit words ("address granularity", 32 bits on every AIE2 target):
a wrap is a count and a stepsize is stored minus one (0 = the next word). The innermost dimension
moves ``D0_Wrap`` words ``D0_Stepsize + 1`` apart, the next ``D1_Wrap`` of those
``D1_Stepsize + 1`` apart, and D2 repeats them ``D2_Stepsize + 1`` apart until ``Buffer_Length``
words have moved (a shim BD has no D2 wrap). With ``D0_Wrap == 0`` (what mlir-aie writes for a
linear transfer) the BD moves ``Buffer_Length`` consecutive words. Each further run of the BD
(the task queue's repeat count) starts ``Iteration_Stepsize + 1`` words after the previous one,
the iteration counter wrapping after ``Iteration_Wrap + 1`` runs; with ``Iteration_Wrap == 0``
every run starts at the same address (mlir-aie's repeat, from an outermost stride of 0). How
mlir-aie derives these from ``dma_memcpy_nd``'s sizes and strides (in elements):
``encodeHardwareStridesWraps`` (``include/aie/Dialect/AIEX/Utils/BdLowering.h``): ``D0_Wrap =
size0 * bits / 32``; ``D0_Stepsize = 0`` when the stride is below one word, else ``stride0 *
bits / 32 - 1``; ``Dn_Wrap = size_n``, ``Dn_Stepsize = stride_n * bits / 32 - 1`` (0 when size_n
is 1); ``Buffer_Length = D0_Wrap * size1 * size2``; the outermost size becomes the repeat count
(size - 1) and, when its stride is not 0, ``Iteration_Wrap = size - 1`` and ``Iteration_Stepsize =
stride * bits / 32 - 1``. ``Burst_Length`` is 2 (256 bytes) on NPU1 and 3 (512 bytes) on NPU2
unless asked otherwise (``getShimBurstEncodingsAndLengths``), ``AxCache`` 2 ("to enable upsizing
in NoC").
"""

from __future__ import annotations

from collections.abc import Sequence

from aiedsl.targets import TargetModel

# What the decoder reads of the device besides the layout below comes from the target model
# the stream is read with (:func:`stream_target`): the address generator's step
# (dma_granularity), a shim tile's BDs, its row, a core's data memory (a write32 below its size
# writes a buffer, not a register) and its lock value registers (what aiex.set_lock writes).
COL_SHIFT = 25
ROW_SHIFT = 20
SHIM_BD_BASE = 0x1D000
SHIM_BD_STRIDE = 0x20
SHIM_CTRL_BASE = 0x1D200

OPCODES = {
    0x00: "write32", 0x01: "blockwrite", 0x02: "blockset", 0x03: "maskwrite32",
    0x04: "maskpoll32", 0x05: "noop", 0x06: "preempt", 0x07: "maskpoll_busy", 0x08: "load_pdi",
    0x09: "load_pm_start", 0x0A: "create_scratchpad", 0x0B: "update_state_table",
    0x0C: "update_reg", 0x0D: "update_scratch", 0x0E: "config_shimdma_bd",
    0x0F: "config_shimdma_dmabuf_bd",
    0x80: "sync", 0x81: "address_patch", 0x82: "read_regs", 0x83: "record_timer",
    0x84: "merge_sync",
}
"""aie-rt's ``XAie_TxnOpcode``; aiedsl's names for the ones ``npu.mlir`` prints as ops."""

FIXED_WORDS = {0x00: 6, 0x03: 7, 0x04: 7, 0x06: 1, 0x08: 4, 0x0A: 4, 0x0C: 3, 0x80: 4, 0x81: 12}
"""Words of each fixed-size operation this decoder reads."""

DEVICE_GENERATIONS = {3: "NPU1 (Phoenix, Hawk Point)", 4: "NPU2 (Strix, Krackan)"}


def hex_word(v: int) -> str:
    """``v`` in hex, at least eight digits (``0x0001d000``)."""
    return f"0x{v:08x}" if v < 1 << 32 else f"0x{v:x}"


def signed(v: int, bits: int) -> int:
    """The two's-complement value of the ``bits``-bit field ``v``."""
    return v - (1 << bits) if v & (1 << (bits - 1)) else v


def split_address(address: int) -> tuple[int, int, int]:
    """(column, row, offset in the tile) of an absolute register address."""
    return ((address >> COL_SHIFT) & 0x7F, (address >> ROW_SHIFT) & 0x1F,
            address & ((1 << ROW_SHIFT) - 1))


def stream_target(generation: int) -> TargetModel | None:
    """The target model whose registers a stream of device ``generation`` (its header's) is
    read with: the whole array of that generation's family (every device of a family has the
    same registers); None for a generation no device aiedsl knows has."""
    from aiedsl.targets import DEVICES

    return next((t for t in DEVICES.values() if t.stream_generation == generation
                 and t.name == t.family), None)


def shim_bd(off: int, row: int, target: TargetModel) -> tuple[int, int] | None:
    """(BD, byte in it) of the shim BD register at offset ``off`` of a tile in ``row``; None
    when it is not one."""
    if row != target.shim_row or not SHIM_BD_BASE <= off < (SHIM_BD_BASE + target.shim.bds
                                                              * SHIM_BD_STRIDE):
        return None
    bd, byte = divmod(off - SHIM_BD_BASE, SHIM_BD_STRIDE)
    return bd, byte


def register_name(address: int, target: TargetModel) -> str:
    """A readable name for a register of ``target``: ``shim(1,0) BD2[1]``,
    ``shim(0,0) DMA_S2MM_0_Task_Queue`` (shim DMA registers; anything else as
    ``tile(c,r)+0xOFFSET``)."""
    col, row, off = split_address(address)
    bd = shim_bd(off, row, target)
    if bd is not None:
        return f"shim({col},{row}) BD{bd[0]}[{bd[1] // 4}]"
    queue = queue_register(off) if row == target.shim_row else None
    if queue is not None:
        direction, ch, reg = queue
        return f"shim({col},{row}) DMA_{direction}_{ch}_{reg}"
    return f"tile({col},{row})+0x{off:05x}"


def queue_register(off: int) -> tuple[str, int, str] | None:
    """(direction, channel, "Ctrl" | "Task_Queue") of a shim DMA channel register offset."""
    if not SHIM_CTRL_BASE <= off < SHIM_CTRL_BASE + 0x20 or off % 4:
        return None
    rel = off - SHIM_CTRL_BASE
    direction = "MM2S" if rel >= 0x10 else "S2MM"
    ch, reg = divmod(rel % 0x10, 8)
    return direction, ch, "Task_Queue" if reg else "Ctrl"


def canonical_dims(dims: Sequence[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    """An n-d pattern (size, stride) outermost first, in one spelling: dimensions of size 1
    dropped, a dimension merged into the one inside it when it continues it (its stride is the
    inner one's size times stride). Two patterns that visit the same addresses in the same order
    the same way compare equal."""
    out: list[tuple[int, int]] = []
    for size, stride in dims:
        if size == 1:
            continue
        out.append((size, stride))
    changed = True
    while changed:
        changed = False
        for i in range(len(out) - 1):
            (so, to), (si, ti) = out[i], out[i + 1]
            if to == si * ti:
                out[i:i + 2] = [(so * si, ti)]
                changed = True
                break
    return tuple(out)


def to_elements(offset_bytes: int, byte_dims: Sequence[tuple[int, int]], itemsize: int
                ) -> tuple[int, tuple[tuple[int, int], ...]]:
    """A canonical byte pattern (innermost dimension contiguous bytes) as whole elements."""
    if offset_bytes % itemsize:
        raise ValueError(f"offset {offset_bytes} B is not a whole number of {itemsize}-byte "
                         "elements")
    dims = list(byte_dims) or [(1, 1)]
    size, stride = dims[-1]
    if stride != 1 or size % itemsize:
        raise ValueError(f"innermost run {size}x{stride} B is not whole {itemsize}-byte elements")
    out = []
    for s, t in dims[:-1]:
        if t % itemsize:
            raise ValueError(f"stride {t} B is not a whole number of {itemsize}-byte elements")
        out.append((s, t // itemsize))
    out.append((size // itemsize, 1))
    return offset_bytes // itemsize, canonical_dims(out)


def word_at(data: bytes, i: int) -> int:
    """The ``i``-th little-endian 32-bit word of ``data``."""
    return int.from_bytes(data[4 * i:4 * i + 4], "little")
