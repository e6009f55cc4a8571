"""The rule that a fifo takes part in at most one memtile link, and the error that shows the
chain of links a fifo was put in, with what does the chain's job instead.

Example
-------
::

    check_links_once(trace.links, trace.runtime)   # once the design function has returned
"""

from __future__ import annotations

from aiedsl.errors import DesignError
from aiedsl.lang.records import FifoRecord, LinkRecord, RuntimeRecord, TransferRecord


def check_links_once(links: list[LinkRecord], runtime: list[RuntimeRecord] | None) -> None:
    """Every fifo takes part in at most one link.

    mlir-aie refuses a fifo in two ``objectfifo.link`` ops, a chain of links through one
    fifo included (the output of one link and the input of the next): "objectfifo cannot
    be in more than one ObjectFifoLinkOp", from ``verifyObjectFifoLinks`` in
    AIEObjectFifoStatefulTransform.cpp (00cfd45) and from ``ObjectFifoLinkOp::verify``
    since the lowering was split into passes (PR 3553, 920af38); its lowering finds a
    fifo's link with ``getOptionalLinkOp``, which returns the first link that lists it, so
    it has no notion of a fifo between two links. Its test duplicate_link_test.mlir chains
    a memtile forward into a core-tile forward. The error is at the second link that
    names a fifo, and shows the whole chain it belongs to.
    """
    seen: dict[int, LinkRecord] = {}
    for rec in links:
        for f in [*rec.srcs, *rec.dsts]:
            first = seen.get(id(f))
            if first is not None:
                raise _second_link(links, runtime, f, first, rec)
        for f in [*rec.srcs, *rec.dsts]:
            seen[id(f)] = rec


def _second_link(links: list[LinkRecord], runtime: list[RuntimeRecord] | None, f: FifoRecord,
                 first: LinkRecord, second: LinkRecord) -> DesignError:
    """The error for ``f``, in link ``first`` and again in link ``second``."""
    def made_by(g: FifoRecord) -> LinkRecord | None:
        return next((r for r in links if g in r.dsts), None)

    def taken_by(g: FifoRecord) -> list[LinkRecord]:
        return [r for r in links if g in r.srcs]

    related = [(f"the {first.kind}", first.loc)]
    if f in first.dsts:  # a chain: the output of one link is the input of the next
        chain: list[LinkRecord | FifoRecord] = [first, f, second]
        up = made_by(first.srcs[0]) if len(first.srcs) == 1 else None
        while up is not None and len(up.dsts) == 1:
            chain[:0] = [up, up.dsts[0]]
            up = made_by(up.srcs[0]) if len(up.srcs) == 1 else None
        tail = second
        while len(tail.dsts) == 1 and taken_by(tail.dsts[0]):
            nxt = taken_by(tail.dsts[0])[0]
            chain += [tail.dsts[0], nxt]
            tail = nxt
        in_chain = [x for x in chain if isinstance(x, LinkRecord)]
        related = [(f"the {x.kind}", x.loc) for x in in_chain if x is not second]
        found = " -> ".join(x.kind if isinstance(x, LinkRecord) else f"'{x.name}'"
                            for x in chain)
        message = (f"fifo '{f.name}' takes part in two links: the {first.kind} that makes it "
                   f"and the {second.kind} that takes it")
        fix = _chain_fix(chain)
    else:  # two links take the same fifo
        found = f"'{f.name}' -> {first.kind} and '{f.name}' -> {second.kind}"
        message = (f"fifo '{f.name}' takes part in two links: the {first.kind} and the "
                   f"{second.kind} both take it")
        p = f.producer
        filled = any(isinstance(r, TransferRecord) and r.op == "fill" and r.fifo is f
                     for r in runtime or [])
        if filled:
            fix = (f"give the {second.kind} a fifo of its own, filled from the same host "
                   f"tensor as '{f.name}' (a second rt.fill)")
        elif p is not None and p.kind == "core":
            fix = (f"give the {second.kind} a fifo of its own, which {p.core} produces "
                   f"as well (a core tile has 2 output channels), or let the "
                   f"{first.kind}'s output reach every core that needs it (a fifo may have "
                   "several consumers)")
        else:
            fix = (f"let the {first.kind}'s output reach every consumer that needs it (a "
                   f"fifo may have several consumers), or give the {second.kind} a fifo of "
                   "its own")
    return DesignError(
        "link", message, loc=second.loc,
        limit="each fifo in at most one link, so links do not chain through a fifo "
        "(mlir-aie: \"objectfifo cannot be in more than one ObjectFifoLinkOp\", "
        "ObjectFifoLinkOp::verify and the objectfifo lowering's verifyObjectFifoLinks)",
        found=found, related=related, fix=fix)


def _plain(rec: LinkRecord) -> bool:
    """A forward that moves elements unchanged: the same element, no layout at either end of
    its DMAs (leaving it out changes nothing but buffering)."""
    src, dst = rec.srcs[0], rec.dsts[0]
    return (rec.kind == "forward" and src.elem == dst.elem and not dst.dims_to_stream
            and not src.dims_from_stream and not src.dims_per_consumer)


def _chain_fix(chain: list[LinkRecord | FifoRecord]) -> str:
    """What does the job of a chain of links (``[link, fifo, link, ...]``): the links but the
    forwards that change nothing, when one link is left; else the data passes through the
    host between the first two links that do something."""
    links = [x for x in chain[::2] if isinstance(x, LinkRecord)]
    kept = [i for i, x in enumerate(links) if not _plain(x)]
    if len(kept) <= 1:
        dropped = [x for i, x in enumerate(links) if i not in kept][:len(links) - 1]
        names = ", ".join(f"'{x.dsts[0].name}'" for x in dropped)
        if kept:
            job = f"the {links[kept[0]].kind} alone does the job"
        else:
            job = f"one forward of '{links[0].srcs[0].name}' does the job"
        return (f"leave out the forward{'s' if len(dropped) > 1 else ''} that only move"
                f"{'s' if len(dropped) == 1 else ''} the elements on (making {names}): {job}, "
                "taking its input and feeding its consumers directly")
    a, b = kept[0], kept[1]
    out = chain[2 * a + 1]
    into = chain[2 * b - 1]
    assert isinstance(out, FifoRecord) and isinstance(into, FifoRecord)
    shape = ", ".join(map(str, into.elem.shape))
    skipped = (f" (leaving out the forward{'s' if b - a > 2 else ''} between)"
               if b - a > 1 else "")
    return (f"pass the data through the host between the {links[a].kind} and the "
            f"{links[b].kind}{skipped}: rt.drain '{out.name}' into a host tensor (an extra "
            "argument of the design, or the output before its own drain), rt.sync(), then "
            f"rt.fill a new fifo(Tensor[{shape}, {into.elem.dtype}]) from that tensor and give "
            f"it to the {links[b].kind} in place of '{into.name}'; the fill's pattern can lay "
            f"the data out as the {links[b].kind} needs")
