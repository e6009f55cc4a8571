"""Check that a blocked tile one kernel writes is read by the next in the same blocks.

A kernel declaring ``buffer(..., blocks=(br, bc))`` writes (or reads) its tile block after
block. When one kernel writes a tile in 8x8 blocks (the library's npu2 int8 matmul) and the
next kernel to read that buffer reads it in 4x8 blocks (a requantize written for npu1's), the
numbers are wrong and ``check`` said nothing (an int8 MLP tester's port to npu2: 55% of the
outputs wrong in ``sim``, no hint). Followed here, without running anything:

* in one core's program, in program order (a loop's body once): a core-local buffer or an
  acquired fifo element written by a call whose argument declares blocks, then read by a call
  whose argument declares others, with no call writing it in between;
* across cores: a fifo from core to core with no layout on either end (the consumer's buffer
  holds what the producer's did), its element written in one core's blocks and read in
  another's.

A call whose argument declares no blocks (a zero, an element-wise kernel) leaves the order
unknown: nothing is claimed after it. The DMA layouts between a memtile and a kernel are
:mod:`aiedsl.checks.layout`'s.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from aiedsl.checks.layout import block_order
from aiedsl.errors import DesignError
from aiedsl.ir.core_ops import BufferArg, LocalArg
from aiedsl.ir.design import Design
from aiedsl.ir.loc import Loc
from aiedsl.ir.program import acquires, calls


@dataclass(frozen=True)
class _Writer:
    """The last call that wrote a buffer: its tile's shape and blocks (None: an order it does
    not say)."""

    kernel: str
    param: str
    shape: tuple[int, ...] | None
    blocks: tuple[int, int] | None
    loc: Loc


def _differ(w: _Writer, shape: tuple[int, ...] | None, blocks: tuple[int, int]) -> bool:
    """Whether a tile ``w`` wrote in its blocks is in another order than ``blocks`` of
    ``shape`` read it (4x4 and 8x4 blocks of a 32x4 tile are one order: both row-major)."""
    if w.blocks is None or shape is None or w.shape != shape or len(shape) != 2:
        return False
    rows, cols = shape
    if rows % blocks[0] or cols % blocks[1] or rows % w.blocks[0] or cols % w.blocks[1]:
        return False
    return not np.array_equal(block_order(rows, cols, *w.blocks),
                              block_order(rows, cols, *blocks))


def check_kernel_handoffs(d: Design) -> None:
    """Every blocked tile a kernel reads is in the order the kernel that wrote it used."""
    produced: dict[str, list[_Writer | None]] = {}  # fifo -> the last writer of each element
    first_reads: list[tuple[str, _Writer, str]] = []  # fifo, reader (as a _Writer), core
    for core in d.cores:
        acq = acquires(core)
        last: dict[tuple[str, ...], _Writer | None] = {}
        for call in calls(core):
            k = d.kernel(call.kernel)
            written: list[tuple[tuple[str, ...], _Writer]] = []
            for arg, param in zip(call.args, k.args):
                if isinstance(arg, LocalArg):
                    key: tuple[str, ...] = ("local", arg.local)
                elif isinstance(arg, BufferArg):  # an element: its acquire, which of them
                    key = ("fifo", acq[arg.value].fifo, arg.value, str(arg.index))
                else:
                    continue
                shape = tuple(param.type.shape) if param.type is not None else None
                me = _Writer(k.symbol, param.name, shape, param.blocks, call.loc)
                if param.access != "out" and param.blocks is not None:
                    w = last.get(key)
                    if w is not None and _differ(w, shape, param.blocks):
                        _refuse(key, w, me)
                    if key not in last and isinstance(arg, BufferArg) and \
                            acq[arg.value].port == "consume":
                        first_reads.append((key[1], me, core.name))
                if param.access != "in":
                    written.append((key, me))
            for key, w in written:  # after the call's reads: an inout reads what was there
                last[key] = w
        for key, w in last.items():  # what each element it produces holds when released
            if key[0] == "fifo" and acq[key[2]].port == "produce":
                produced.setdefault(key[1], []).append(w)
    for fifo, reader, at in first_reads:
        f = d.fifo(fifo)
        plain = f.producer.kind == "core" and not f.producer.dims and not any(
            c.dims for c in f.consumers if c.core == at)
        writers = [w for w in produced.get(fifo, []) if w is not None and w.blocks is not None]
        if not plain or not writers or len(writers) != len(produced[fifo]) or \
                len({w.blocks for w in writers}) > 1:
            continue  # an element left in an order nothing says (or in several): no claim
        if reader.blocks is not None and _differ(writers[0], reader.shape, reader.blocks):
            _refuse(("fifo", fifo), writers[0], reader)


def _refuse(key: tuple[str, ...], w: _Writer, r: _Writer) -> None:
    what = f"core-local '{key[1]}'" if key[0] == "local" else f"an element of fifo '{key[1]}'"
    assert w.blocks is not None and r.blocks is not None
    (wr, wc), (rr, rc) = w.blocks, r.blocks
    raise DesignError(
        "kernel layout", f"kernel '{r.kernel}' reads '{r.param}' ({what}) in {rr}x{rc} "
        f"blocks, but kernel '{w.kernel}' wrote it ('{w.param}') in {wr}x{wc} blocks",
        loc=r.loc, limit="a tile is read in the order it was written in",
        found=f"{wr}x{wc} written, {rr}x{rc} read",
        related=[(f"the call of '{w.kernel}' that wrote it", w.loc)],
        fix=f"declare '{r.param}' of '{r.kernel}' with blocks={w.blocks} (and read it so), or "
        f"write it in {rr}x{rc} blocks; a kernel written for one device's mmul shape takes the "
        "other's from the library kernel (mm.ir.params)")
