"""The links of memtiles: element types agree across a link, and split or join parts tile
their parent exactly, in the order mlir-aie moves them. A forward through a core tile keeps its
element size and depth (:func:`check_core_tile_forward`), and the core on that tile leaves its
input to the link's DMA (:func:`check_link_tile_cores`, once cores are placed)."""

from __future__ import annotations

from aiedsl.errors import DesignError, counted
from aiedsl.ir.design import Design
from aiedsl.ir.fifos import Fifo, Link
from aiedsl.place.objectfifo import buffer_owner


def check_links(d: Design) -> None:
    """Element types agree across links; split and join offsets tile the parent exactly; a
    forward through a core tile keeps its element size and depth; a memtile end without
    buffers is given no depth of its own."""
    for link in d.links:
        srcs = [d.fifo(n) for n in link.srcs]
        dsts = [d.fifo(n) for n in link.dsts]
        dtypes = {f.elem.dtype for f in srcs + dsts}
        if len(dtypes) > 1:
            raise DesignError(
                "element type", f"{link.kind} {_names(srcs)} -> {_names(dsts)} mixes element "
                f"types {', '.join(sorted(dtypes))}", loc=link.loc,
                found=", ".join(f"{f.name}: {f.elem}" for f in srcs + dsts),
                fix="a memtile moves bytes unchanged: use one dtype on both sides")
        if link.kind == "forward":
            a, b = srcs[0], dsts[0]
            if link.via == "core":
                check_core_tile_forward(link, a, b)
            big, small = max(a.elem.numel, b.elem.numel), min(a.elem.numel, b.elem.numel)
            if big % small:
                raise DesignError(
                    "element type", f"forward '{a.name}' ({a.elem}) -> '{b.name}' ({b.elem}) "
                    "regroups elements by a size that does not divide", loc=link.loc,
                    found=f"{a.elem.numel} vs {b.elem.numel} elements",
                    fix="keep the element size, or make one size a multiple of the other "
                    "(the memtile resends each element in equal pieces)")
            continue
        parent, parts = (srcs[0], dsts) if link.kind == "split" else (dsts[0], srcs)
        if len(link.offsets) != len(parts):
            raise DesignError(
                f"{link.kind} offsets", f"{link.kind} of '{parent.name}' has "
                f"{counted(len(parts), 'part')} but {counted(len(link.offsets), 'offset')}",
                loc=link.loc,
                fix="give one offset per part")
        # mlir-aie's lowering moves each part from its offset up to the next listed offset (the
        # last to the parent's end: ObjectFifoLinkOp::getDistributeTransferLengths and
        # getJoinTransferLengths), so a part's element must be exactly that long, in list order.
        covered = [(off, off + p.elem.numel, p.name) for off, p in zip(link.offsets, parts)]
        pos = 0
        for start, end, name in covered:
            if start != pos:
                what = "overlaps the part before it" if start < pos else "leaves a gap before it"
                raise DesignError(
                    f"{link.kind} offsets", f"{link.kind} of '{parent.name}' ({parent.elem.numel}"
                    f" elements): part '{name}' at offset {start} {what}", loc=link.loc,
                    limit="parts back to back in the order listed, covering the parent exactly "
                    "(mlir-aie moves each part up to the next listed offset)",
                    found=_layout(covered), fix=f"put '{name}' at offset {pos}")
            pos = end
        if pos != parent.elem.numel:
            raise DesignError(
                f"{link.kind} offsets", f"{link.kind} parts of '{parent.name}' cover {pos} of its "
                f"{parent.elem.numel} elements", loc=link.loc,
                limit=f"exactly {parent.elem.numel} elements", found=_layout(covered),
                fix="make the parts add up to the parent element")
    for link in d.links:
        if link.via == "memtile":
            check_memtile_end_depths(d, link)


def check_memtile_end_depths(d: Design, link: Link) -> None:
    """A depth given to the memtile end of a link input that owns no buffers is refused.

    Of a memtile link's ends only one creates the memtile's buffers
    (:func:`aiedsl.place.objectfifo.buffer_owner`: a join's output, a split's input, a
    forward's larger side); ``createMemTileDMA`` moves the other ends through them, so a
    ``consumer_depth`` for the memtile end of a join's part, or of a forward's smaller input,
    would count nowhere. A depth equal to the fifo's own is the fifo's (its producer takes it
    too) and passes.
    """
    owner, port = buffer_owner(d, link)
    for name in link.srcs:
        if (name, port) == (owner, "consume"):
            continue
        f = d.fifo(name)
        end = next(c for c in f.consumers if c.is_link_end)
        if end.depth == f.producer.depth:
            continue
        has = d.fifo(owner).producer.depth
        if link.kind == "join":
            why = (f"a join's part has none there: the memtile moves '{name}' through the "
                   f"buffers of the join into '{owner}'")
        else:
            why = (f"the input of a forward to larger elements has none there: the memtile "
                   f"moves '{name}' ({f.elem.numel} elements) through the buffers of '{owner}' "
                   f"({d.fifo(owner).elem.numel} elements)")
        raise DesignError(
            "fifo depth", f"fifo '{name}' gives its memtile end {counted(end.depth, 'buffer')}, "
            f"but {why}", loc=f.loc, related=[(f"the {link.kind}", link.loc)],
            limit="a memtile link's buffers are one end's: a join's output, a split's input, a "
            "forward's larger side (its input on a tie) (mlir-aie's createObjectFifoElements; "
            "createMemTileDMA moves the other ends through them)",
            found=f"consumer depth {end.depth} at the memtile; '{owner}' has {has} there",
            fix=f"give the {link.kind} into '{owner}' depth={end.depth} and drop the "
            f"consumer_depth of the memtile end of '{name}'")


def check_core_tile_forward(link: Link, a: Fifo, b: Fifo) -> None:
    """Forward ``a`` -> ``b`` through a core tile moves one element size with one depth at both
    ends: the only forwards mlir-aie lowers there as aiedsl simulates them.

    mlir-aie's facts (``AIEObjectFifoStatefulTransform.cpp``, read at upstream 00cfd45):

    * ``createObjectFifoElements`` makes a 1-to-1 link's buffers once, for the end with the
      larger element (the receiving end on a tie), with that end's own depth.
    * ``findObjectFifoSize`` gives an end on a tile whose core acquires nothing of that
      objectfifo the depth emitted for it (a core on the link's tile that consumes ``b``
      acquires ``b``'s consumer end, which the split renamed), so each end of the link has the
      depth aiedsl gives it: the receiving end the depth of ``a`` at the core tile, the sending
      end the depth of ``b``.
    * ``createAIETileDMA`` (a core tile's DMA) chains one BD per buffer of the end's own depth
      (``op.size()``), each moving the end's own element length, over the link's buffers, and
      stops where those buffers run out. ``createMemTileDMA`` corrects the other end of a
      memtile link to the buffer count and element length of the end that has the buffers; the
      core tile's does not.

    So an end with fewer BDs than buffers reads only some of them (a depth-1 sender over 2
    buffers sends buffer 0 each time and never buffer 1); one with more points its last BD at
    an empty block, which MLIR's verifier rejects; an end with the smaller element moves only
    the start of each buffer (a sender: the consumers never get the rest and hang; a receiver:
    the rest of each buffer goes out stale). Equal sizes and depths make both chains the one
    aiedsl plans (:mod:`aiedsl.place.objectfifo`); element shapes may differ.
    """
    where = f"core tile {link.tile}" if link.tile else "a core tile"
    if a.elem.numel != b.elem.numel:
        big, small = (a, b) if a.elem.numel > b.elem.numel else (b, a)
        n, k = big.elem.numel, small.elem.numel
        what = (f"each {k}-element BD sending '{b.name}' would read the first {k} elements of "
                f"a {n}-element buffer and the rest would never be sent (its consumers would wait "
                "for it: a hang)" if small is b else
                f"each {k}-element BD receiving '{a.name}' would fill the first {k} elements of a "
                f"{n}-element buffer that the core tile then sends whole (the rest of it stale)")
        raise DesignError(
            "core tile forward", f"forward '{a.name}' -> '{b.name}' through {where} changes the "
            f"element size: {a.elem} in, {b.elem} out", loc=link.loc,
            limit="one element size in and out of a core tile: mlir-aie's createAIETileDMA "
            "gives each end's BDs the length of that end's own element, over the buffers of the "
            f"larger, so {what}", found=f"{a.elem} in, {b.elem} out",
            fix=f"forward through a memtile (via=memtile), whose lowering (createMemTileDMA) "
            f"moves the whole {big.elem} element at both ends, or forward {a.elem} unchanged "
            f"through the core tile ({a.name}.forward(via=...) without a new element type)")
    into = next(c.depth for c in a.consumers if c.kind == "coretile")
    out = b.producer.depth
    if into != out:
        what = (f"the sending end's {counted(out, 'BD')} would read only {_first(out)} of the "
                f"{into} buffers the receiving end fills in turn (elements sent twice or "
                "half-written, others never)" if out < into else
                f"the sending end's {out} BDs would run past the {counted(into, 'buffer')}: the "
                "lowering points the chain's last BD at an empty block, which MLIR's verifier "
                "rejects")
        raise DesignError(
            "core tile forward", f"forward '{a.name}' -> '{b.name}' through {where} receives "
            f"into {counted(into, 'buffer')} and sends from {out}", loc=link.loc,
            limit="one depth in and out of a core tile: mlir-aie's createAIETileDMA chains one "
            "BD per buffer of each end's own depth over the receiving end's buffers "
            f"(createMemTileDMA, on a memtile, counts both ends' BDs by those buffers), so {what}",
            found=f"depth {into} of '{a.name}' at the core tile, depth {out} of '{b.name}'",
            fix=f"give the forward the depth '{a.name}' has at the core tile "
            f"({a.name}.forward(..., depth={into})), or '{a.name}' depth {out} at the core "
            "tile, or forward through a memtile (via=memtile), whose lowering sends from every "
            "buffer")


def check_link_tile_cores(placed: Design) -> None:
    """A core on the tile of a forward through a core tile does not consume the forward's input.

    mlir-aie's AIEObjectFifoSplit pass (``verifyLinkAccesses``) refuses a core on a link's
    shared tile that consumes one of the link's inputs or produces one of its outputs: "core on
    the shared tile cannot access '<fifo>': a link moves objects by DMA"; the older stateful
    transform failed the same acquire with "currently cannot access objectFifo used in
    ObjectFifoLinkOp" (its test link_error.mlir). A second producer of the output is refused
    already (``fifo producer``); consuming the output there is allowed: the consumer's end is
    a fifo of its own, fed from the link's buffers by DMA.
    """
    for link in placed.links:
        if link.via != "core" or link.tile is None:
            continue
        for name in link.srcs:
            f = placed.fifo(name)
            user = next((c for c in f.consumers if c.kind == "core" and c.tile == link.tile),
                        None)
            if user is None:
                continue
            out = link.dsts[0]
            raise DesignError(
                "core tile forward", f"{user.core} on core tile {link.tile} consumes '{name}', "
                f"which the forward through that tile takes", loc=user.loc,
                limit="a core on a link's tile leaves the link's input to the link's DMA "
                "(mlir-aie's objectfifo split pass, verifyLinkAccesses: \"core on the shared "
                "tile cannot access '" + name + "': a link moves objects by DMA\")",
                found=f"{user.core} consumes '{name}' on {link.tile}",
                related=[("the forward", link.loc)],
                fix=f"consume the forward's output '{out}' in {user.core} (a core on the link's "
                f"tile may), or forward through another tile (via=coretile(col, row) where no "
                "core consumes it, or via=memtile)")


def _first(n: int) -> str:
    """The first ``n`` buffers, said: 'buffer 0', 'buffers 0 and 1', 'buffers 0 to 2'."""
    if n == 1:
        return "buffer 0"
    return "buffers 0 and 1" if n == 2 else f"buffers 0 to {n - 1}"


def _names(fs: list[Fifo]) -> str:
    return ", ".join(f"'{f.name}'" for f in fs)


def _layout(covered: list[tuple[int, int, str]]) -> str:
    """The parts of a link as ``name [start, end)``, in list order; ``no parts`` for none."""
    return ", ".join(f"{n} [{s}, {e})" for s, e, n in covered) or "no parts"
