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

from aiedsl.errors import DesignError
from aiedsl.ir.core_ops import BufferArg, LocalArg
from aiedsl.ir.design import Design
from aiedsl.ir.loc import Loc
from aiedsl.ir.program import acquires, calls


@dataclass(frozen=True)
class _Writer:
    """The last call that wrote a buffer, in blocks (None: in an order it does not say)."""

    kernel: str
    param: str
    blocks: tuple[int, int] | None
    loc: Loc


def check_kernel_handoffs(d: Design) -> None:
    """Every blocked tile a kernel reads is in the blocks the kernel that wrote it used."""
    produced: dict[str, _Writer] = {}  # fifo -> the blocked writer of its elements
    reads: list[tuple[str, str, str, tuple[int, int], Loc, str]] = []  # of fifo elements
    for core in d.cores:
        acq = acquires(core)
        last: dict[tuple[str, str], _Writer | None] = {}
        for call in calls(core):
            k = d.kernel(call.kernel)
            written: list[tuple[tuple[str, str], _Writer]] = []
            for arg, param in zip(call.args, k.args):
                if isinstance(arg, LocalArg):
                    key = ("local", arg.local)
                elif isinstance(arg, BufferArg):
                    a = acq[arg.value]
                    key = ("fifo", a.fifo)
                    if a.port == "consume" and param.blocks is not None:
                        reads.append((a.fifo, k.symbol, param.name, param.blocks, call.loc,
                                      core.name))
                else:
                    continue
                if param.access != "out" and param.blocks is not None:
                    w = last.get(key)
                    if w is not None and w.blocks is not None and w.blocks != param.blocks:
                        _refuse(key, w, k.symbol, param.name, param.blocks, call.loc)
                if param.access != "in":
                    written.append((key, _Writer(k.symbol, param.name, param.blocks,
                                                 call.loc)))
            for key, w in written:  # after the call's reads: an inout reads what was there
                last[key] = w
                if key[0] == "fifo" and w.blocks is not None:
                    produced.setdefault(key[1], w)
    for fifo, kernel, name, blocks, at, reader in reads:
        w = produced.get(fifo)
        f = d.fifo(fifo)
        plain = f.producer.kind == "core" and not f.producer.dims and not any(
            c.dims for c in f.consumers if c.core == reader)
        if w is not None and plain and w.blocks != blocks:
            _refuse(("fifo", fifo), w, kernel, name, blocks, at)


def _refuse(key: tuple[str, str], w: _Writer, kernel: str, param: str,
            blocks: tuple[int, int], loc: Loc) -> None:
    what = f"core-local '{key[1]}'" if key[0] == "local" else f"an element of fifo '{key[1]}'"
    assert w.blocks is not None
    raise DesignError(
        "kernel layout", f"kernel '{kernel}' reads '{param}' ({what}) in {blocks[0]}x{blocks[1]} "
        f"blocks, but kernel '{w.kernel}' wrote it ('{w.param}') in {w.blocks[0]}x{w.blocks[1]} "
        "blocks", loc=loc, limit="a tile is read in the blocks it was written in",
        found=f"{w.blocks[0]}x{w.blocks[1]} written, {blocks[0]}x{blocks[1]} read",
        related=[(f"the call of '{w.kernel}' that wrote it", w.loc)],
        fix=f"declare '{param}' of '{kernel}' with blocks={w.blocks} (and read it so), or write "
        f"it in {blocks[0]}x{blocks[1]} blocks; a kernel written for one device's mmul shape "
        "takes the other's from the library kernel (mm.ir.params)")
