"""The runtime sequence as the simulator performs it: shim DMA transfers and waits, as plain data.

:func:`shim_program` turns a placed design's runtime ops (:class:`~aiedsl.ir.Transfer`,
:class:`~aiedsl.ir.Wait`) into the list the simulator's runtime process runs, one
:class:`ShimTransfer` or :class:`ShimWait` per op, in order: which runtime argument, at which
offset, how many elements in which n-d pattern, on which shim column, direction and DMA channel
(the plan's ``design.physical.channels``), and which are waited on. The simulator builds its work
from this list (``aiedsl.sim.machine._runtime``), so it is what the simulator really does; the
NPU's side of the same facts is :mod:`aiedsl.toolchain.insts` (the decoded ``insts.bin``), and
:func:`hardware_view` puts a transfer in the terms the decoder gives a task (byte offset and a
canonical byte pattern), so the two can be compared field by field.

Example
-------
>>> [(t.direction, t.column, t.channel, t.arg, t.offset, t.length) for t in
...  shim_program(placed) if isinstance(t, ShimTransfer)]            # doctest: +SKIP
[('MM2S', 0, 0, 0, 0, 4096), ('S2MM', 0, 0, 1, 0, 4096)]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from aiedsl.dtypes import dtype as lookup_dtype
from aiedsl.ir import Design, Transfer
from aiedsl.ir.loc import Loc
from aiedsl.ir.types import Pattern
from aiedsl.toolchain.insts import Program, ShimTask, canonical_dims


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
    """The design waits for it (``rt.drain(..., wait=True)``)."""
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
        return self.pattern.sizes

    @property
    def strides(self) -> tuple[int, int, int, int]:
        return self.pattern.strides

    @property
    def length(self) -> int:
        """Elements moved."""
        return self.pattern.numel

    @property
    def itemsize(self) -> int:
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


def shim_program(d: Design) -> tuple[ShimTransfer | ShimWait, ...]:
    """The runtime sequence of placed design ``d`` as the simulator runs it."""
    args = {t.name: (i, t.type.dtype) for i, t in enumerate(d.tensors)}
    channels = {}
    if d.physical is not None:
        for c in d.physical.channels:
            if c.tile[1] == 0:  # a shim tile: the fifo's host end
                channels[(c.fifo, c.direction)] = c.channel
    out: list[ShimTransfer | ShimWait] = []
    waited: dict[str, list[ShimTransfer]] = {}
    for i, op in enumerate(d.runtime):
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


def diff_program(sim: tuple[ShimTransfer | ShimWait, ...], program: Program) -> list[str]:
    """Every way the simulator's runtime sequence (:func:`shim_program`) differs from the shim
    DMA tasks and syncs a decoded instruction stream programs
    (:class:`aiedsl.toolchain.insts.Program`), one line each; empty when they agree. Compared
    in order: a transfer with a task by column, direction, channel, runtime argument, byte
    offset, bytes moved, canonical byte pattern and token; a wait with a sync by column,
    direction and channel."""
    events = list(program.events)
    out: list[str] = []
    kinds = ["task" if isinstance(e, ShimTask) else "sync" for e in events]
    ours = ["task" if isinstance(e, ShimTransfer) else "sync" for e in sim]
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
        elif isinstance(s, ShimWait) and not isinstance(e, ShimTask):
            mine_w = (s.column, s.direction, s.channel)
            theirs_w = (e.column, e.direction, e.channel)
            if mine_w != theirs_w:
                out.append(f"{i}: wait on '{s.fifo}' ({s.loc.file}:{s.loc.line}) waits on column "
                           f"{mine_w[0]} {mine_w[1]} channel {mine_w[2]} in the simulator, "
                           f"column {theirs_w[0]} {theirs_w[1]} channel {theirs_w[2]} in the "
                           "instructions")
    if len(sim) != len(events):
        out.append(f"the simulator runs {len(sim)} transfers and waits, the instructions "
                   f"program {len(events)} tasks and syncs")
    return out
