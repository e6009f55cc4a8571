"""The links of memtiles: element types agree across a link, and split or join parts tile
their parent exactly, in the order mlir-aie moves them."""

from __future__ import annotations

from aiedsl.errors import DesignError, counted
from aiedsl.ir import Design, Fifo


def check_links(d: Design) -> None:
    """Element types agree across links; split and join offsets tile the parent exactly."""
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


def _names(fs: list[Fifo]) -> str:
    return ", ".join(f"'{f.name}'" for f in fs)


def _layout(covered: list[tuple[int, int, str]]) -> str:
    return ", ".join(f"{n} [{s}, {e})" for s, e, n in covered)
