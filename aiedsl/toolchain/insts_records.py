"""The records a decoded instruction stream is made of: the header, one :class:`Instruction`
per operation, the shim buffer descriptors and DMA tasks they program, syncs and tile writes.
The words' layout is in :mod:`aiedsl.toolchain.insts_format`. A record that reads a device's
facts (the address generator's step, register names, a core's memory and locks) keeps the
target model the stream was read with (``target``: not compared, not shown)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union

import numpy as np

from aiedsl.targets import TargetModel
from aiedsl.toolchain.insts_format import (
    DEVICE_GENERATIONS, canonical_dims, hex_word, register_name, signed, to_elements,
)

# A record's ``target`` field is the target model it was decoded against: a context, not data
# (not compared, not shown: two records of the same words are equal whichever model read them).


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
    target: TargetModel = field(compare=False, repr=False, kw_only=True)
    """The device whose registers :meth:`describe` names."""

    @property
    def address(self) -> int | None:
        """The register it writes, polls or patches (absolute), if it has one."""
        return self.fields.get("address")

    def describe(self) -> str:
        """A one-line listing: the op, then its fields (a register's name after its address)."""
        f = self.fields
        if self.op in ("write32", "maskwrite32", "maskpoll32"):
            address = f["address"]
            name = register_name(address, self.target)
            text = f"{hex_word(address)} {name} = {hex_word(f['value'])}"
            if "mask" in f:
                text += f" mask {hex_word(f['mask'])}"
            return f"{self.op} {text}"
        if self.op == "blockwrite":
            words = " ".join(hex_word(w) for w in self.data)
            tile = f.get("column") or f.get("row")
            where = f" (col {f['column']} row {f['row']})" if tile else ""
            name = register_name(f["address"], self.target)
            return (f"blockwrite {hex_word(f['address'])} {name}{where}: "
                    f"{len(self.data)} words [{words}]")
        if self.op == "address_patch":
            name = register_name(f["address"], self.target)
            return (f"address_patch {hex_word(f['address'])} {name} = "
                    f"address of arg {f['arg']} + {f['arg_plus']} bytes")
        if self.op == "sync":
            direction = "S2MM" if f["direction"] == 0 else "MM2S"
            return (f"sync column {f['column']} row {f['row']} {direction} channel {f['channel']}"
                    f" ({f['columns']} column(s) x {f['rows']} row(s))")
        rest = " ".join(f"{k}={hex_word(v) if k == 'address' else v}" for k, v in f.items())
        if self.data:
            words = " ".join(hex_word(w) for w in self.data)
            rest += (" " if rest else "") + f"payload [{words}]"
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
        """Word 2 bit 30, ``Enable_Packet``: the data goes out behind a packet header."""
        return self._bits(2, 30, 30)

    @property
    def out_of_order_id(self) -> int:
        """Word 2 bits 29-24, ``Out_Of_Order_BD_ID``."""
        return self._bits(2, 29, 24)

    @property
    def packet_id(self) -> int:
        """Word 2 bits 23-19, ``Packet_ID`` of that header."""
        return self._bits(2, 23, 19)

    @property
    def packet_type(self) -> int:
        """Word 2 bits 18-16, ``Packet_Type`` of that header."""
        return self._bits(2, 18, 16)

    @property
    def secure_access(self) -> int:
        """Word 3 bit 30, ``Secure_Access``."""
        return self._bits(3, 30, 30)

    @property
    def d0_wrap(self) -> int:
        """Word 3 bits 29-20, ``D0_Wrap``: dimension 0's size (0: one dimension)."""
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
        """Word 4 bits 29-20, ``D1_Wrap``: dimension 1's size (0 counts as 1)."""
        return self._bits(4, 29, 20)

    @property
    def d1_step(self) -> int:
        """Word 4 bits 19-0, ``D1_Stepsize``: stored as the step - 1 words."""
        return self._bits(4, 19, 0)

    @property
    def smid(self) -> int:
        """Word 5 bits 31-28, ``SMID``: the AXI master id."""
        return self._bits(5, 31, 28)

    @property
    def axcache(self) -> int:
        """Word 5 bits 27-24, ``AxCACHE`` of the AXI bursts."""
        return self._bits(5, 27, 24)

    @property
    def axqos(self) -> int:
        """Word 5 bits 23-20, ``AxQoS`` of the AXI bursts."""
        return self._bits(5, 23, 20)

    @property
    def d2_step(self) -> int:
        """Word 5 bits 19-0, ``D2_Stepsize``: stored as the step - 1 words."""
        return self._bits(5, 19, 0)

    @property
    def iteration_current(self) -> int:
        """Word 6 bits 31-26, ``Iteration_Current``: the counter's start."""
        return self._bits(6, 31, 26)

    @property
    def iteration_wrap(self) -> int:
        """Runs before the iteration counter wraps, minus one."""
        return self._bits(6, 25, 20)

    @property
    def iteration_step(self) -> int:
        """Word 6 bits 19-0, ``Iteration_Stepsize``: stored as the step - 1 words."""
        return self._bits(6, 19, 0)

    @property
    def tlast_suppress(self) -> int:
        """Word 7 bit 31, ``TLAST_Suppress``."""
        return self._bits(7, 31, 31)

    @property
    def next_bd(self) -> int:
        """Word 7 bits 30-27, ``Next_BD``: the BD that follows when :attr:`use_next_bd`."""
        return self._bits(7, 30, 27)

    @property
    def use_next_bd(self) -> int:
        """Word 7 bit 26, ``Use_Next_BD``."""
        return self._bits(7, 26, 26)

    @property
    def valid(self) -> int:
        """Word 7 bit 25, ``Valid_BD``."""
        return self._bits(7, 25, 25)

    @property
    def lock_rel_value(self) -> int:
        """Word 7 bits 24-18, ``Lock_Rel_Value`` (signed)."""
        return signed(self._bits(7, 24, 18), 7)

    @property
    def lock_rel_id(self) -> int:
        """Word 7 bits 16-13, ``Lock_Rel_ID``."""
        return self._bits(7, 16, 13)

    @property
    def lock_acq_enable(self) -> int:
        """Word 7 bit 12, ``Lock_Acq_Enable``."""
        return self._bits(7, 12, 12)

    @property
    def lock_acq_value(self) -> int:
        """Word 7 bits 11-5, ``Lock_Acq_Value`` (signed)."""
        return signed(self._bits(7, 11, 5), 7)

    @property
    def lock_acq_id(self) -> int:
        """Word 7 bits 3-0, ``Lock_Acq_ID``."""
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
    target: TargetModel = field(compare=False, repr=False, kw_only=True)
    """The device whose address generators the BDs program (their step in bytes)."""

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
        return self.bd.buffer_length * self.target.dma_granularity

    @property
    def total_bytes(self) -> int:
        """Bytes the whole task moves (every run, every chained BD)."""
        return self.runs * (self.length_bytes +
                            sum(bd.buffer_length * self.target.dma_granularity
                                for _, bd, _, _ in self.chain))

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
        step = self.target.dma_granularity
        return canonical_dims(tuple((s, t * step) for s, t in self.word_dims()) + ((step, 1),))

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
        """A one-line listing, after its place in the stream."""
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
    target: TargetModel = field(compare=False, repr=False, kw_only=True)
    """The device whose tile memory and lock registers it writes."""

    def describe(self) -> str:
        """A one-line listing, after its place in the stream."""
        t = self.target
        where = ("data memory" if self.address < t.core.memory else
                 f"lock {(self.address - t.core.lock_values) // t.lock_value_stride} value")
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
    target: TargetModel = field(compare=False, repr=False, kw_only=True)
    """The device whose registers the stream was read with."""

    @property
    def tasks(self) -> tuple[ShimTask, ...]:
        """The shim DMA tasks, in stream order."""
        return tuple(e for e in self.events if isinstance(e, ShimTask))

    @property
    def syncs(self) -> tuple[Sync, ...]:
        """The syncs (waits for a channel's task to finish), in stream order."""
        return tuple(e for e in self.events if isinstance(e, Sync))
