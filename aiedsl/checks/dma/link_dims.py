"""Link layout rules: a split's or join's memtile layout stays inside the part each BD moves."""

from __future__ import annotations

from aiedsl.checks.dma.bds import _inner, _max_index, _walk_max
from aiedsl.checks.dma.dims import _fail
from aiedsl.ir.design import Design


def _check_link_dims(d: Design) -> None:
    """A split's or join's layouts stay inside the part each BD moves.

    mlir-aie lowers a split (join) to one memtile BD per part, from the part's offset, of the
    part's length, guarded by that part's own lock pair. ``ObjectFifoLinkOp::verify`` requires a
    join's ``dims_to_stream`` (a split input's memtile ``dims_from_stream``) to stay inside the
    shortest part, every size as written; a split part's ``dims_to_stream`` may, by
    ``DMABDOp::verify``, reach anywhere before the parent's end, but what lies past its own part
    is guarded by other parts' locks: the memtile may be writing it (the next element) or not have
    written it yet while the part is sent, so the data a core gets would depend on timing. That
    rule looks at the addresses the part's BD walks (:func:`_walk_max`), which is what is read.
    The walks of a join's and a split input's parts are :func:`_check_part_walks`'s.
    """
    for link in d.links:
        if link.kind == "join":
            out = d.fifo(link.dsts[0])
            if not out.producer.dims:
                continue
            lengths = [d.fifo(n).elem.numel for n in link.srcs]
            top = _max_index(out.producer.dims)
            if top >= min(lengths):
                shown = "[" + ", ".join(f"({x.size}, {x.stride})" for x in out.producer.dims) + "]"
                _fail(out.loc, f"dims_to_stream of join output '{out.name}'",
                      f"the layout stays inside each {min(lengths)}-element part: the memtile "
                      "sends each part with it, from the part's offset (mlir-aie's "
                      "ObjectFifoLinkOp::verify: out of bounds access in join input)",
                      f"index {top} ({shown})", "write the layout of one part; it is applied to "
                      "every part in turn", [("the join", link.loc)])
        elif link.kind == "split":
            parent = d.fifo(link.srcs[0])
            into = next(c for c in parent.consumers if c.is_link_end)
            if into.dims:
                lengths = [d.fifo(n).elem.numel for n in link.dsts]
                top = _max_index(into.dims)
                if top >= min(lengths):
                    shown = "[" + ", ".join(f"({x.size}, {x.stride})" for x in into.dims) + "]"
                    _fail(parent.loc, f"dims_from_stream of split input '{parent.name}'",
                          f"the layout stays inside each {min(lengths)}-element part: the "
                          "memtile writes each part with it, from the part's offset (mlir-aie's "
                          "ObjectFifoLinkOp::verify: out of bounds access in distribute output)",
                          f"index {top} ({shown})", "write the layout of one part; it is "
                          "applied to every part in turn", [("the split", link.loc)])
            for off, name in zip(link.offsets, link.dsts):
                part = d.fifo(name)
                n = part.elem.numel
                if not part.producer.dims or n % _inner(part.producer.dims):
                    continue  # (a part the dims do not tile: _check_fifo_dims says so)
                # the addresses its BD walks (the outermost size as written is not encoded);
                # past the parent's end it is _check_fifo_dims's "inside the part"
                top = _walk_max(part.producer.dims, n)
                if n <= top and off + top < parent.elem.numel:
                    shown = "[" + ", ".join(f"({x.size}, {x.stride})"
                                            for x in part.producer.dims) + "]"
                    _fail(part.loc, f"dims_to_stream of split part '{name}'",
                          f"a part's layout reads only its own {n} elements [{off}, {off + n}) "
                          "of the parent: mlir-aie guards each part with its own lock pair, so "
                          f"elements up to {off + top} may not be written yet, or be the next "
                          "element's, while it is sent (the result would depend on timing)",
                          f"index {top} from offset {off} ({shown})",
                          "arrange the parent in the runtime pattern so each part is one "
                          "contiguous run, or give every core the whole tile (broadcast) and "
                          "let its kernel read its slice", [("the split", link.loc)])
