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
from dataclasses import dataclass, field
from typing import Union

import numpy as np


COL_SHIFT = 25
ROW_SHIFT = 20
GRANULE = 4
"""Bytes per address-generator step (``getAddressGenGranularity()`` = 32 bits)."""

SHIM_BD_BASE = 0x1D000
SHIM_BD_STRIDE = 0x20
SHIM_BDS = 16
SHIM_CTRL_BASE = 0x1D200
TILE_DATA_MEMORY = 0x10000
"""A core tile's data memory is the first 64 KB of its address space (AM020; a memtile's
512 KB start there too): a ``write32`` below it writes a buffer, not a register."""
CORE_LOCK_VALUES = 0x1F000
CORE_LOCK_VALUES_END = 0x1F100
"""A core tile's 16 lock value registers, 16 bytes apart (``AIE2TargetModel::
getLocalLockAddress``): what ``aiex.set_lock`` writes."""

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


# -- plain data --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Header:
    """The stream's 4-word header."""

    major: int
    minor: int
    generation: int
    """3: NPU1, 4: NPU2 (mlir-aie's ``devGen``)."""
    rows: int
    columns: int
    memtile_rows: int
    count: int
    """Operations that follow."""
    size: int
    """Bytes of the whole stream, header included."""

    @property
    def device(self) -> str:
        """The device generation, spelled out."""
        return DEVICE_GENERATIONS.get(self.generation, f"unknown generation {self.generation}")


@dataclass(frozen=True)
class Instruction:
    """One operation of the stream: its opcode, its named fields and its raw words."""

    index: int
    """Position in the stream (0 is the first operation after the header)."""
    offset: int
    """Byte offset of its first word in the file."""
    opcode: int
    op: str
    """``write32``, ``blockwrite``, ``maskwrite32``, ``sync``, ``address_patch``, ..."""
    fields: dict[str, int]
    """Named fields: ``address``, ``value``, ``mask``, ``arg``, ``arg_plus``, ``column``, ..."""
    data: tuple[int, ...] = ()
    """A blockwrite's data words (a custom op's payload words)."""
    words: tuple[int, ...] = ()
    """All of its words, as in the file."""

    @property
    def address(self) -> int | None:
        """The register it writes, polls or patches (absolute), if it has one."""
        return self.fields.get("address")

    def describe(self) -> str:
        """A one-line listing: the op, then its fields (a register's name after its address)."""
        f = self.fields
        if self.op in ("write32", "maskwrite32", "maskpoll32"):
            text = f"{hex_word(f['address'])} {register_name(f['address'])} = {hex_word(f['value'])}"
            if "mask" in f:
                text += f" mask {hex_word(f['mask'])}"
            return f"{self.op} {text}"
        if self.op == "blockwrite":
            words = " ".join(hex_word(w) for w in self.data)
            tile = f.get("column") or f.get("row")
            where = f" (col {f['column']} row {f['row']})" if tile else ""
            return (f"blockwrite {hex_word(f['address'])} {register_name(f['address'])}{where}: "
                    f"{len(self.data)} words [{words}]")
        if self.op == "address_patch":
            return (f"address_patch {hex_word(f['address'])} {register_name(f['address'])} = "
                    f"address of arg {f['arg']} + {f['arg_plus']} bytes")
        if self.op == "sync":
            direction = "S2MM" if f["direction"] == 0 else "MM2S"
            return (f"sync column {f['column']} row {f['row']} {direction} channel {f['channel']}"
                    f" ({f['columns']} column(s) x {f['rows']} row(s))")
        rest = " ".join(f"{k}={hex_word(v) if k == 'address' else v}" for k, v in f.items())
        if self.data:
            rest += (" " if rest else "") + "payload [" + " ".join(hex_word(w) for w in self.data) + "]"
        return f"{self.op} {rest}".rstrip()


@dataclass(frozen=True)
class ShimBd:
    """A shim tile buffer descriptor, its 8 register words decoded."""

    words: tuple[int, ...]

    def _bits(self, word: int, hi: int, lo: int) -> int:
        return (self.words[word] >> lo) & ((1 << (hi - lo + 1)) - 1)

    @property
    def buffer_length(self) -> int:
        """32-bit words one run moves."""
        return self.words[0]

    @property
    def base_address(self) -> int:
        """``Base_Address_High:Base_Address_Low`` (what the address patch replaces)."""
        return (self._bits(2, 15, 0) << 32) | (self.words[1] & 0xFFFFFFFC)

    @property
    def enable_packet(self) -> int:
        return self._bits(2, 30, 30)

    @property
    def out_of_order_id(self) -> int:
        return self._bits(2, 29, 24)

    @property
    def packet_id(self) -> int:
        return self._bits(2, 23, 19)

    @property
    def packet_type(self) -> int:
        return self._bits(2, 18, 16)

    @property
    def secure_access(self) -> int:
        return self._bits(3, 30, 30)

    @property
    def d0_wrap(self) -> int:
        return self._bits(3, 29, 20)

    @property
    def d0_step(self) -> int:
        """Stored stepsize: the step is this + 1 words."""
        return self._bits(3, 19, 0)

    @property
    def burst_length(self) -> int:
        """Encoding: 0 = 64, 1 = 128, 2 = 256, 3 = 512 bytes."""
        return self._bits(4, 31, 30)

    @property
    def d1_wrap(self) -> int:
        return self._bits(4, 29, 20)

    @property
    def d1_step(self) -> int:
        return self._bits(4, 19, 0)

    @property
    def smid(self) -> int:
        return self._bits(5, 31, 28)

    @property
    def axcache(self) -> int:
        return self._bits(5, 27, 24)

    @property
    def axqos(self) -> int:
        return self._bits(5, 23, 20)

    @property
    def d2_step(self) -> int:
        return self._bits(5, 19, 0)

    @property
    def iteration_current(self) -> int:
        return self._bits(6, 31, 26)

    @property
    def iteration_wrap(self) -> int:
        """Runs before the iteration counter wraps, minus one."""
        return self._bits(6, 25, 20)

    @property
    def iteration_step(self) -> int:
        return self._bits(6, 19, 0)

    @property
    def tlast_suppress(self) -> int:
        return self._bits(7, 31, 31)

    @property
    def next_bd(self) -> int:
        return self._bits(7, 30, 27)

    @property
    def use_next_bd(self) -> int:
        return self._bits(7, 26, 26)

    @property
    def valid(self) -> int:
        return self._bits(7, 25, 25)

    @property
    def lock_rel_value(self) -> int:
        return signed(self._bits(7, 24, 18), 7)

    @property
    def lock_rel_id(self) -> int:
        return self._bits(7, 16, 13)

    @property
    def lock_acq_enable(self) -> int:
        return self._bits(7, 12, 12)

    @property
    def lock_acq_value(self) -> int:
        return signed(self._bits(7, 11, 5), 7)

    @property
    def lock_acq_id(self) -> int:
        return self._bits(7, 3, 0)

    @property
    def linear(self) -> bool:
        """No address generation: ``Buffer_Length`` consecutive words."""
        return self.d0_wrap == 0

    def word_dims(self) -> tuple[tuple[int, int], ...]:
        """One run's address generator as (size, stride) in 32-bit words, outermost first
        (ValueError when the last D2 step is partial: then see :meth:`word_addresses`)."""
        if self.linear:
            return ((self.buffer_length, 1),)
        d1 = max(self.d1_wrap, 1)
        d2, rest = divmod(self.buffer_length, self.d0_wrap * d1)
        if rest:
            raise ValueError(f"{self.buffer_length} words are not whole D2 steps of "
                             f"{self.d0_wrap} x {d1} words")
        return ((d2, self.d2_step + 1), (d1, self.d1_step + 1), (self.d0_wrap, self.d0_step + 1))

    def word_addresses(self) -> np.ndarray:
        """Every word one run moves, in order, as offsets in words from its base address."""
        if self.linear:
            return np.arange(self.buffer_length, dtype=np.int64)
        d1 = max(self.d1_wrap, 1)
        steps = -(-self.buffer_length // (self.d0_wrap * d1))
        idx = np.array(0, dtype=np.int64)
        for size, stride in ((steps, self.d2_step + 1), (d1, self.d1_step + 1),
                             (self.d0_wrap, self.d0_step + 1)):
            idx = idx[..., None] + np.arange(size, dtype=np.int64) * stride
        return idx.ravel()[:self.buffer_length]

    def fields(self) -> dict[str, int]:
        """Every field by name (for listings)."""
        names = ("buffer_length", "base_address", "enable_packet", "out_of_order_id", "packet_id",
                 "packet_type", "secure_access", "d0_wrap", "d0_step", "burst_length", "d1_wrap",
                 "d1_step", "smid", "axcache", "axqos", "d2_step", "iteration_current",
                 "iteration_wrap", "iteration_step", "tlast_suppress", "next_bd", "use_next_bd",
                 "valid", "lock_rel_value", "lock_rel_id", "lock_acq_enable", "lock_acq_value",
                 "lock_acq_id")
        return {n: getattr(self, n) for n in names}


@dataclass(frozen=True)
class ShimTask:
    """One task a shim DMA channel runs: a push onto its task queue, with the BD it starts as
    the stream had written it by then."""

    order: int
    """Position among the stream's tasks and syncs."""
    instruction: int
    """Index of the ``Task_Queue`` write that started it."""
    column: int
    row: int
    direction: str
    """``MM2S`` (host memory to the array) or ``S2MM`` (array to host memory)."""
    channel: int
    bd_id: int
    bd: ShimBd
    arg: int | None
    """Runtime argument whose host address the BD uses (None: no address patch; the BD's own
    ``base_address`` is used)."""
    arg_plus: int
    """Bytes added to that argument's address."""
    repeat: int
    """Extra runs (the task queue's repeat count)."""
    token: bool
    """Issues a task-completion token when done (a sync waits for it)."""
    controller_id: int | None = None
    """The channel's ``Controller_ID`` when the stream set it."""
    chain: tuple[tuple[int, ShimBd, int | None, int], ...] = ()
    """Further BDs when the BD chains on (``Use_Next_BD``): (id, BD, arg, arg_plus)."""

    @property
    def runs(self) -> int:
        """How many times the BD runs."""
        return self.repeat + 1

    @property
    def offset_bytes(self) -> int:
        """Byte offset into the runtime argument (or the absolute address without a patch)."""
        return self.arg_plus if self.arg is not None else self.bd.base_address

    @property
    def length_bytes(self) -> int:
        """Bytes one run moves."""
        return self.bd.buffer_length * GRANULE

    @property
    def total_bytes(self) -> int:
        """Bytes the whole task moves (every run, every chained BD)."""
        return self.runs * (self.length_bytes +
                            sum(bd.buffer_length * GRANULE for _, bd, _, _ in self.chain))

    def run_starts(self) -> list[int]:
        """Where each run starts, in words from the BD's base: the iteration counter starts at
        ``Iteration_Current`` and wraps after ``Iteration_Wrap + 1`` runs."""
        wrap = self.bd.iteration_wrap + 1
        step = self.bd.iteration_step + 1
        return [((self.bd.iteration_current + k) % wrap) * step for k in range(self.runs)]

    def word_dims(self) -> tuple[tuple[int, int], ...]:
        """The task's whole pattern in 32-bit words, outermost first, its runs the outermost
        dimension (stride 0 when every run starts at the same address). Only the first BD of a
        chain. ValueError when the runs start at no regular stride."""
        dims = self.bd.word_dims()
        wrap = self.bd.iteration_wrap + 1
        if wrap == 1:
            return ((self.runs, 0), *dims) if self.runs > 1 else dims
        step = self.bd.iteration_step + 1
        cur = self.bd.iteration_current % wrap
        if self.runs == 1 and cur == 0:
            return dims
        if cur == 0 and self.runs <= wrap:
            return ((self.runs, step), *dims)
        if cur == 0 and self.runs % wrap == 0:
            return ((self.runs // wrap, 0), (wrap, step), *dims)
        raise ValueError(f"runs start at words {self.run_starts()}: no single stride")

    def word_addresses(self) -> np.ndarray:
        """Every word the task moves, in order, as offsets in words from the BD's base (every
        run; only the first BD of a chain)."""
        one = self.bd.word_addresses()
        return np.concatenate([one + s for s in self.run_starts()])

    def byte_dims(self) -> tuple[tuple[int, int], ...]:
        """:meth:`word_dims` in bytes, canonical (:func:`canonical_dims`)."""
        return canonical_dims(tuple((s, t * GRANULE) for s, t in self.word_dims())
                              + ((GRANULE, 1),))

    def pattern(self, itemsize: int) -> tuple[int, tuple[tuple[int, int], ...]]:
        """(offset, dims) in elements of ``itemsize`` bytes: the canonical n-d pattern over the
        runtime argument. Raises ValueError when it is not whole elements."""
        return to_elements(self.offset_bytes, self.byte_dims(), itemsize)

    def describe(self) -> str:
        """One line: where, which BD, what it moves and how."""
        buf = f"arg {self.arg} + {self.arg_plus} B" if self.arg is not None else \
            f"address {hex_word(self.bd.base_address)}"
        try:
            dims = " ".join(f"{s}x{t}" for s, t in self.word_dims())
        except ValueError as e:
            dims = f"irregular ({e})"
        return (f"{self.order:3d} column {self.column} {self.direction} channel {self.channel} "
                f"BD {self.bd_id}: {buf}, {self.length_bytes} B per run x {self.runs} run(s), "
                f"words (size x stride) {dims}" + (", token" if self.token else "")
                + (f", chains to BD {', '.join(str(b) for b, *_ in self.chain)}"
                   if self.chain else ""))


@dataclass(frozen=True)
class Sync:
    """A wait for one task-completion token from a DMA channel."""

    order: int
    instruction: int
    column: int
    row: int
    direction: str
    channel: int
    columns: int = 1
    rows: int = 1

    def describe(self) -> str:
        return (f"{self.order:3d} sync column {self.column} {self.direction} channel "
                f"{self.channel}" + (f" ({self.columns} x {self.rows} tiles)"
                                     if (self.columns, self.rows) != (1, 1) else ""))


@dataclass(frozen=True)
class TileWrite:
    """A ``write32`` into the data memory of an array tile (a core's or a memtile's): what
    ``aiex.npu.rtp_write`` lowers to (the rtp buffer's address plus 4 bytes per slot); or into
    a core's lock value register: what ``aiex.set_lock`` lowers to."""

    order: int
    instruction: int
    column: int
    row: int
    address: int
    """Byte address in the tile's memory."""
    value: int

    def describe(self) -> str:
        where = ("data memory" if self.address < TILE_DATA_MEMORY else
                 f"lock {(self.address - CORE_LOCK_VALUES) // 0x10} value")
        return (f"{self.order:3d} write column {self.column} row {self.row} {where} "
                f"{hex_word(self.address)} = {hex_word(self.value)} ({signed(self.value, 32)})")


Event = Union["ShimTask", Sync, TileWrite]
"""What a stream does that aiedsl models, in stream order."""


@dataclass(frozen=True)
class Program:
    """A decoded instruction stream."""

    header: Header
    instructions: tuple[Instruction, ...]
    events: tuple[Event, ...]
    """Shim DMA tasks, syncs and tile data-memory writes in stream order."""
    notes: tuple[str, ...] = field(default=())
    """What the decoder met but does not model (e.g. a task started on a BD never written)."""

    @property
    def tasks(self) -> tuple[ShimTask, ...]:
        return tuple(e for e in self.events if isinstance(e, ShimTask))

    @property
    def syncs(self) -> tuple[Sync, ...]:
        return tuple(e for e in self.events if isinstance(e, Sync))


# -- helpers -----------------------------------------------------------------------------------


def hex_word(v: int) -> str:
    return f"0x{v:08x}" if v < 1 << 32 else f"0x{v:x}"


def signed(v: int, bits: int) -> int:
    return v - (1 << bits) if v & (1 << (bits - 1)) else v


def split_address(address: int) -> tuple[int, int, int]:
    """(column, row, offset in the tile) of an absolute register address."""
    return ((address >> COL_SHIFT) & 0x7F, (address >> ROW_SHIFT) & 0x1F,
            address & ((1 << ROW_SHIFT) - 1))


def register_name(address: int) -> str:
    """A readable name for a register: ``shim(1,0) BD2[1]``, ``shim(0,0) DMA_S2MM_0_Task_Queue``
    (shim DMA registers; anything else as ``tile(c,r)+0xOFFSET``)."""
    col, row, off = split_address(address)
    if row == 0:
        if SHIM_BD_BASE <= off < SHIM_BD_BASE + SHIM_BDS * SHIM_BD_STRIDE:
            bd, word = divmod(off - SHIM_BD_BASE, SHIM_BD_STRIDE)
            return f"shim({col},0) BD{bd}[{word // 4}]"
        queue = queue_register(off)
        if queue is not None:
            direction, ch, reg = queue
            return f"shim({col},0) DMA_{direction}_{ch}_{reg}"
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
    return int.from_bytes(data[4 * i:4 * i + 4], "little")


# -- decoding ----------------------------------------------------------------------------------
