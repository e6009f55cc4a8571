"""The runtime sequence as the simulator performs it: shim DMA transfers and waits, as plain data.

:func:`shim_program` turns a placed design's runtime ops (:class:`~aiedsl.ir.Transfer`,
:class:`~aiedsl.ir.Wait`, :class:`~aiedsl.ir.RtpWrite`) into the list the simulator's runtime
process runs, one :class:`ShimTransfer`, :class:`ShimWait` or :class:`ShimRtpWrite` (a write32
into a core's memory) per op, in order: which runtime argument, at which
offset, how many elements in which n-d pattern, on which shim column, direction and DMA channel
(the plan's ``design.physical.channels``), and which are waited on. The simulator builds its work
from this list (:func:`aiedsl.sim.runtime.run_runtime`), so it is what the simulator really
does; the NPU's side of the same facts is :mod:`aiedsl.toolchain.insts` (the decoded
``insts.bin``), and :func:`hardware_view` puts a transfer in the terms the decoder gives a task
(byte offset and a canonical byte pattern), so the two can be compared field by field.

Example
-------
>>> [(t.direction, t.column, t.channel, t.arg, t.offset, t.length) for t in
...  shim_program(placed, target) if isinstance(t, ShimTransfer)]    # doctest: +SKIP
[('MM2S', 0, 0, 0, 0, 4096), ('S2MM', 0, 0, 1, 0, 4096)]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from aiedsl.dtypes import dtype as lookup_dtype
from aiedsl.ir.design import Design
from aiedsl.ir.loc import Loc
from aiedsl.ir.runtime import RtpWrite, SetBarrier, Transfer
from aiedsl.ir.types import Pattern
from aiedsl.place.alloc import barrier_lock_name
from aiedsl.targets import TargetModel
from aiedsl.toolchain.insts_format import canonical_dims
from aiedsl.toolchain.insts_records import Program, ShimTask, Sync, TileWrite


@dataclass(frozen=True)
class ShimTransfer:
    """One runtime transfer: a shim DMA moving a host tensor's elements in ``pattern`` order."""

    order: int
    """Position in the runtime sequence (transfers and waits)."""
    op: Literal["fill", "drain"]
    fifo: str
    tensor: str
    arg: int
    """The runtime argument it reads or writes (its position in the runtime sequence)."""
    dtype: str
    """The argument's element type (offsets, sizes and strides count its elements)."""
    pattern: Pattern
    wait: bool
    """The design waits for it (every drain; a fill given ``wait=True``)."""
    column: int
    direction: Literal["MM2S", "S2MM"]
    """MM2S: host memory to the array (a fill); S2MM: the array to host memory (a drain)."""
    channel: int | None
    """The shim DMA channel the plan gives the fifo's host end (None: not allocated)."""
    loc: Loc

    @property
    def offset(self) -> int:
        """First element (linear) in the argument."""
        return self.pattern.offset

    @property
    def sizes(self) -> tuple[int, int, int, int]:
        """Elements per dimension, outermost first (four dimensions)."""
        return self.pattern.sizes

    @property
    def strides(self) -> tuple[int, int, int, int]:
        """Elements between steps of each dimension, outermost first."""
        return self.pattern.strides

    @property
    def length(self) -> int:
        """Elements moved."""
        return self.pattern.numel

    @property
    def itemsize(self) -> int:
        """Bytes per element of the argument."""
        return lookup_dtype(self.dtype).itemsize

    @property
    def token(self) -> bool:
        """Issues a completion token: every drain does, waited or not (mlir-aie's
        ``dma_memcpy_nd`` lowering sets ``issue_token`` on every S2MM task), and a wait takes
        the oldest token on its channel, so an unwaited drain can end a later wait early."""
        return self.wait or self.direction == "S2MM"


@dataclass(frozen=True)
class ShimWait:
    """Wait for the oldest token on ``fifo``'s shim channel (see :attr:`ShimTransfer.token`)."""

    order: int
    fifo: str
    column: int
    direction: Literal["MM2S", "S2MM"]
    channel: int | None
    loc: Loc


@dataclass(frozen=True)
class ShimRtpWrite:
    """A runtime-parameter write: one 32-bit register write into a core's data memory, at the
    rtp buffer's address plus 4 bytes per slot (mlir-aie's ``RtpToWrite32Pattern``)."""

    order: int
    rtp: str
    index: int
    value: int
    column: int
    row: int
    address: int | None
    """Byte address in the tile's memory (None before allocation)."""
    loc: Loc


@dataclass(frozen=True)
class ShimSetLock:
    """A runtime-barrier set on one core's lock: one 32-bit write of the lock's value register
    in a core tile (mlir-aie's ``SetLockToWrite32Pattern``;
    :meth:`~aiedsl.targets.TargetModel.lock_value_address`)."""

    order: int
    barrier: str
    core: str
    value: int
    column: int
    row: int
    address: int | None
    """The lock's value register in the tile (None before allocation)."""
    loc: Loc


Step = ShimTransfer | ShimWait | ShimRtpWrite | ShimSetLock
"""One step of the runtime sequence as the simulator runs it."""


def shim_program(d: Design, target: TargetModel) -> tuple[Step, ...]:
    """The runtime sequence of placed design ``d`` as the simulator runs it on ``target``."""
    args = {t.name: (i, t.type.dtype) for i, t in enumerate(d.tensors)}
    channels = {}
    if d.physical is not None:
        for c in d.physical.channels:
            if c.tile[1] == target.shim_row:  # a shim tile: the fifo's host end
                channels[(c.fifo, c.direction)] = c.channel
    out: list[Step] = []
    waited: dict[str, list[ShimTransfer]] = {}
    tile_of = {c.name: c.tile for c in d.cores}
    rtp_base = {(b.tile, b.name): b.address for b in d.physical.buffers} if d.physical else {}
    lock_id = {(lk.tile, lk.name): lk.id for lk in d.physical.locks} if d.physical else {}
    for i, op in enumerate(d.runtime):
        if isinstance(op, SetBarrier):
            for core in d.barrier(op.barrier).cores:
                tile = tile_of[core] or (-1, -1)
                lid = lock_id.get((tile, barrier_lock_name(op.barrier, tile)))
                out.append(ShimSetLock(
                    order=i, barrier=op.barrier, core=core, value=op.value, column=tile[0],
                    row=tile[1], loc=op.loc, address=None if lid is None else
                    target.lock_value_address("core", lid)))
            continue
        if isinstance(op, RtpWrite):
            tile = tile_of[d.rtp(op.rtp).core] or (-1, -1)
            base = rtp_base.get((tile, op.rtp))
            out.append(ShimRtpWrite(order=i, rtp=op.rtp, index=op.index, value=op.value,
                                    column=tile[0], row=tile[1],
                                    address=None if base is None else base + 4 * op.index,
                                    loc=op.loc))
            continue
        if isinstance(op, Transfer):
            f = d.fifo(op.fifo)
            fill = op.op == "fill"
            end = f.producer if fill else next(c for c in f.consumers if c.kind == "shim")
            direction: Literal["MM2S", "S2MM"] = "MM2S" if fill else "S2MM"
            arg, dt = args[op.tensor]
            t = ShimTransfer(order=i, op=op.op, fifo=op.fifo, tensor=op.tensor, arg=arg,
                             dtype=dt, pattern=op.pattern, wait=op.wait,
                             column=end.tile[0] if end.tile is not None else -1,
                             direction=direction, channel=channels.get((op.fifo, direction)),
                             loc=op.loc)
            out.append(t)
            if t.token:
                waited.setdefault(op.fifo, []).append(t)
        else:  # the channel of the transfer it waits for (the oldest token on the fifo)
            pending = waited.get(op.fifo)
            if pending:
                t = pending.pop(0)
                out.append(ShimWait(order=i, fifo=op.fifo, column=t.column,
                                    direction=t.direction, channel=t.channel, loc=op.loc))
            else:  # nothing to wait for: the simulator reports it when it gets there
                out.append(ShimWait(order=i, fifo=op.fifo, column=-1, direction="S2MM",
                                    channel=None, loc=op.loc))
    return tuple(out)


def hardware_view(t: ShimTransfer) -> dict[str, object]:
    """A transfer in the decoder's terms (:class:`aiedsl.toolchain.insts.ShimTask`): column,
    direction, channel, argument, byte offset, bytes moved, the canonical byte pattern, and
    whether it issues a token."""
    e = t.itemsize
    dims = tuple((s, st * e) for s, st in zip(t.sizes, t.strides)) + ((e, 1),)
    return {"column": t.column, "direction": t.direction, "channel": t.channel, "arg": t.arg,
            "offset_bytes": t.offset * e, "bytes": t.length * e,
            "byte_dims": canonical_dims(dims), "token": t.token}


def _kind(e: object) -> str:
    if isinstance(e, (ShimTask, ShimTransfer)):
        return "task"
    if isinstance(e, (Sync, ShimWait)):
        return "sync"
    return "write"


def diff_program(sim: tuple[Step, ...], program: Program) -> list[str]:
    """Every way the simulator's runtime sequence (:func:`shim_program`) differs from the shim
    DMA tasks, syncs and core-memory writes a decoded instruction stream programs
    (:class:`aiedsl.toolchain.insts.Program`), one line each; empty when they agree. Compared
    in order: a transfer with a task by column, direction, channel, runtime argument, byte
    offset, bytes moved, canonical byte pattern and token; a wait with a sync by column,
    direction and channel; an rtp write with a tile write by column, row, address and value."""
    events = list(program.events)
    out: list[str] = []
    kinds = [_kind(e) for e in events]
    ours = [_kind(e) for e in sim]
    if kinds != ours:
        out.append(f"the order differs: the simulator runs {' '.join(ours)}; the instructions "
                   f"program {' '.join(kinds)}")
    for i, (s, e) in enumerate(zip(sim, events)):
        if isinstance(s, ShimTransfer) and isinstance(e, ShimTask):
            mine = hardware_view(s)
            theirs = {"column": e.column, "direction": e.direction, "channel": e.channel,
                      "arg": e.arg, "offset_bytes": e.offset_bytes, "bytes": e.total_bytes,
                      "byte_dims": e.byte_dims(), "token": e.token}
            for key, value in mine.items():
                if theirs[key] != value:
                    where = "into" if s.op == "fill" else "out of"
                    out.append(f"{i}: {s.op} of '{s.tensor}' {where} '{s.fifo}' "
                               f"({s.loc.file}:{s.loc.line}): {key} {value} in the simulator, "
                               f"{theirs[key]} in the instructions (BD {e.bd_id})")
        elif isinstance(s, (ShimRtpWrite, ShimSetLock)) and isinstance(e, TileWrite):
            mine_r = (s.column, s.row, s.address, s.value & 0xFFFFFFFF)
            theirs_r = (e.column, e.row, e.address, e.value)
            if mine_r != theirs_r:
                what = (f"rtp_write of '{s.rtp}'[{s.index}]" if isinstance(s, ShimRtpWrite)
                        else f"set_barrier of '{s.barrier}' for {s.core}")
                out.append(f"{i}: {what} ({s.loc.file}:{s.loc.line}) "
                           f"writes {s.value & 0xFFFFFFFF:#x} at {s.address} of tile "
                           f"({s.column}, {s.row}) in the simulator, {e.value:#x} at "
                           f"{e.address} of tile ({e.column}, {e.row}) in the instructions")
        elif isinstance(s, ShimWait) and isinstance(e, Sync):
            mine_w = (s.column, s.direction, s.channel)
            theirs_w = (e.column, e.direction, e.channel)
            if mine_w != theirs_w:
                out.append(f"{i}: wait on '{s.fifo}' ({s.loc.file}:{s.loc.line}) waits on column "
                           f"{mine_w[0]} {mine_w[1]} channel {mine_w[2]} in the simulator, "
                           f"column {theirs_w[0]} {theirs_w[1]} channel {theirs_w[2]} in the "
                           "instructions")
    if len(sim) != len(events):
        out.append(f"the simulator runs {len(sim)} transfers, waits and writes, the "
                   f"instructions program {len(events)} tasks, syncs and writes")
    return out
