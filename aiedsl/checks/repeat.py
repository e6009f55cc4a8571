"""Repeated fifos (``repeat=``, mlir-aie's objectfifo ``repeat_count``): which producers may
send an element several times, and what the lowering's locks can count.

mlir-aie's facts, read at upstream 1e400306 (2026-03-14) and since:

* ``AIEOps.td``: ``repeat_count`` is an optional i32 attribute of ``aie.objectfifo``, at least 1
  (1: sent once). ``ObjectFifoCreateOp::verify`` (``AIEDialect.cpp``) refuses it on a shim
  producer: "`repeat_count` unavailable for shim tiles".
* ``AIEObjectFifoStatefulTransform.cpp`` lowers it on the producer's DMA: the sending channel
  chains each BD ``repeat`` times (one BD and the channel start's ``repeat_count = n - 1`` for
  a single buffer since PR 3115), the producer locks start at buffers x repeat, and a link's
  input channel takes and gives ``repeat`` per BD (:mod:`aiedsl.place.objectfifo`). Its tests
  (``test/objectFifo-stateful-transform/repeat_count/``) repeat memtile outputs of forwards and
  distributes, and core producers.
* On a core producer the lowering multiplies the core's lock acquires and releases by the
  repeat, and its bookkeeping records ``repeat`` buffers held per element acquired while a
  release frees one: a second acquire of the fifo finds buffers still held and takes no lock, so
  only a program acquiring the fifo in one place, with no loop unrolling copying that place,
  lowers right (its tests hold one acquire in one loop). aiedsl sends repeats from a memtile, or
  a core tile's link, only.
* A join's output (of two parts or more): the lowering chains ``repeat x parts`` BDs and takes
  each one's offset from the link's list of part offsets by that index (``createMemTileDMA``),
  past the list's end.
* A forward through a core tile (``createAIETileDMA``, read at 00cfd45): the sending end chains
  each of its BDs ``repeat`` times (its own ``repeat_count``), and whichever end holds the link's
  buffers takes and gives the link's repeat per BD. Only a forward with one element size and
  one depth at both ends lowers right there (:func:`aiedsl.checks.links.check_core_tile_forward`,
  run before this), and then the receiving end holds the buffers: the locks count as on a
  memtile. (Were the output element the larger, the sending end would hold them and do both,
  and the receiving end would fill only the start of each.)
* A lock counts to 63 (``getMaxLockValue``); nothing checks the producer lock's initial value,
  buffers x repeat, which the device would cut to its low bits.
"""

from __future__ import annotations

from aiedsl.errors import DesignError
from aiedsl.ir.design import Design
from aiedsl.ir.fifos import Fifo, Link
from aiedsl.place.objectfifo import Lowering
from aiedsl.targets import TargetModel

_SENDERS = ("a memtile sends (a forward's or a split's output, a channel's with via=memtile), "
            "or a core tile's forward")


def check_repeats(d: Design) -> None:
    """Every fifo with ``repeat`` above 1 is sent by a memtile link (not a join of several
    parts) or by a forward through a core tile (whose ends :func:`~aiedsl.checks.links.
    check_core_tile_forward` has held to one element size and depth)."""
    made_by = {n: link for link in d.links for n in link.dsts}
    sent_on = {n: link for link in d.links for n in link.srcs}
    for f in d.fifos:
        if f.repeat > 1:
            _check_sender(f, made_by.get(f.name), sent_on.get(f.name))


def _check_sender(f: Fifo, link: Link | None, onward: Link | None) -> None:
    """``link`` makes ``f`` (None: its producer is the shim or a core); ``onward`` takes it on."""
    n = f.repeat
    p = f.producer
    channel = f"channel '{f.channel}'" if f.channel else None
    if p.kind == "shim":
        once = f"the memtile reads each element from DRAM once and sends it {n} times"
        if channel:
            fix = f"give {channel} via=memtile: {once}"
        elif onward is not None and len(onward.srcs) == 1:  # a forward or a split takes it on
            fix = (f"put the repeat on the {onward.kind} that sends it on from the memtile "
                   f"(line {onward.loc.line}): {f.name}.{onward.kind}(..., repeat={n}): {once}")
        else:
            fix = (f"fill another fifo and forward it through a memtile with the repeat "
                   f"({f.name} = {f.name}_l3.forward(repeat={n}), rt.fill({f.name}_l3, ...)): "
                   f"{once}")
        raise DesignError(
            "repeat", f"fifo '{f.name}' has repeat={n}, but the runtime fills it: its producer "
            "is the shim", loc=f.loc, related=[("the runtime fills it here", p.loc)],
            limit=f"repeat on a fifo {_SENDERS} (mlir-aie's ObjectFifoCreateOp::verify: "
            "\"`repeat_count` unavailable for shim tiles\")", found=f"producer: {p.label()}",
            fix=fix)
    if p.kind == "core":
        raise DesignError(
            "repeat", f"fifo '{f.name}' has repeat={n}, but {p.core} produces it", loc=f.loc,
            related=[(f"{p.core} produces it here", p.loc)],
            limit=f"repeat on a fifo {_SENDERS}: mlir-aie repeats a core's element by "
            "multiplying the core's lock acquires and releases by the repeat, and records "
            "repeat buffers held per element acquired where a release frees one, so a second "
            "acquire of the fifo (or a copy the lowering's loop unrolling makes) takes no lock",
            found=f"producer: {p.core}",
            fix=(f"give {channel} via=memtile and repeat there" if channel else
                 f"forward it through a memtile and repeat there: {f.name}_l2 = "
                 f"{f.name}.forward(repeat={n}), consumed instead of '{f.name}'"))
    if link is None:
        return
    if len(link.srcs) > 1:  # mlir-aie's isJoin (a join of one part is a 1-to-1 link)
        raise DesignError(
            "repeat", f"the join into '{f.name}' has repeat={n}", loc=f.loc,
            limit="repeat on a forward or a split: mlir-aie lowers a repeated join's output to "
            f"repeat x parts BDs and takes each one's offset from the link's {len(link.srcs)} "
            "part offsets by that count (createMemTileDMA), past their end",
            found=f"repeat={n} on a join of {len(link.srcs)} parts",
            fix="leave repeat out of the join (a joined fifo takes part in no second link): "
            "repeat where a memtile forwards or splits")


def check_repeat_locks(d: Design, low: Lowering, target: TargetModel) -> None:
    """A repeated link's producer locks start at its buffers x the repeat: at most the largest
    lock value."""
    top = target.max_lock_value
    for s in low.stores:
        if s.repeat == 1 or s.link is None:
            continue
        k = len(s.buffers)
        if k * s.repeat <= top:
            continue
        f = next(d.fifo(n) for n in s.link.dsts if d.fifo(n).repeat > 1)
        where = "the memtile" if s.kind == "memtile" else f"the core tile {s.tile}"
        raise DesignError(
            "repeat", f"'{f.name}' has repeat={s.repeat} over {k} buffer(s) of {where}: its "
            f"producer lock would start at {k} x {s.repeat} = {k * s.repeat}", loc=f.loc,
            related=[(f"the {s.link.kind}", s.link.loc)] if s.link.loc != f.loc else [],
            limit=f"{top}: a lock counts to {top} (AIE2 lock values are 6 bits: mlir-aie's "
            "getMaxLockValue; its lowering does not check the initial value, and the device "
            "would keep its low bits and hang)", found=str(k * s.repeat),
            fix=f"lower repeat to at most {top // k}, or the link's depth")
