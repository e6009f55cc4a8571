"""DMA layout rules: the n-d patterns of runtime transfers and of fifo ``dims`` on each tile.

AIE2 DMAs count sizes and strides in 4-byte words (``aie2-facts.md`` s2): a transfer's innermost
run must be whole words, each wrap is at most ``max_dma_size``, a shim pattern has 3 dimensions
plus an iteration (repeat) dimension of at most ``max_shim_iterations``, and memtile and
compute-tile DMAs have 4 and 3 dimensions. A plain contiguous run is a linear transfer and is
exempt from the wrap limits.

The limits below are mlir-aie's, each cited where it is checked (sources read at upstream
commit 1e400306, 2026-03-14, the mlir-aie of ``shared/reference/mlir-aie-lowered``, and at the
PRs that changed them since; aiedsl takes the stricter where two versions differ, so a design it
accepts lowers on both):

* shim (runtime ``rt.fill``/``rt.drain``, lowered to ``aiex.npu.dma_memcpy_nd``): mlir-aie's
  ``AIEX::verifyStridesWraps`` and ``getHardwareStridesWraps`` (lib/Dialect/AIEX/IR/
  AIEXDialect.cpp);
* memtile and compute-tile BDs (a fifo's ``dims_to_stream``/``dims_from_stream``, copied into
  ``aie.dma_bd`` by the objectfifo lowering): ``DMABDOp::verify`` (lib/Dialect/AIE/IR/
  AIEDialect.cpp) and the BD field widths of the target model.
"""

from __future__ import annotations

import numpy as np

from aiedsl.errors import DesignError
from aiedsl.ir import Design, Dim, Endpoint, Fifo, Link, Loc, Transfer
from aiedsl.targets import TargetModel

# The limits are the target model's (TileLimits.bd_max_size, bd_step_words,
# TargetModel.max_bd_stride, dma_granularity), each with its mlir-aie source there.


def check_dma(d: Design, target: TargetModel) -> None:
    """Check every runtime pattern and every fifo's ``dims_to_stream``/``dims_from_stream``
    against ``target``'s DMAs."""
    for f in d.fifos:
        if f.elem.nbytes % target.dma_granularity:
            raise DesignError(
                "dma pattern", f"fifo '{f.name}' has {f.elem.nbytes}-byte elements ({f.elem})",
                loc=f.loc, limit=f"whole {target.dma_granularity}-byte words (a DMA buffer "
                "descriptor counts its length in words)", found=f"{f.elem.nbytes} bytes",
                fix=f"make each element a multiple of {target.dma_granularity} bytes")
    for t in d.runtime:
        if isinstance(t, Transfer):
            _check_transfer(d, t, target)
    _check_link_dims(d)
    split_inputs = {link.srcs[0]: link for link in d.links if link.kind == "split"}
    for f in d.fifos:
        ends = [(f.producer, "dims_to_stream")] + [(c, "dims_from_stream") for c in f.consumers]
        for e, what in ends:
            if e.dims:
                split = split_inputs.get(f.name) if e.is_link_end else None
                buffer, bds = _bds(d, f, e)
                moved = (_moved_layout_fix(d, f, e, target)
                         if e.is_link_end and what == "dims_from_stream" and split is None
                         else "")
                _check_fifo_dims(f, e, what, target, buffer, bds, split_input=split is not None,
                                 repeat_how=_repeat_how(d, f, e, what), moved_fix=moved)


def _repeat_how(d: Design, f: Fifo, e: Endpoint, what: str) -> str | None:
    """How the design would give ``f`` a repeat (``{n}`` for the count), when ``e`` is the link
    end that sends it: the way to send an element several times that a stride of 0 is not."""
    link = _link_of(d, f, e) if what == "dims_to_stream" else None
    if link is None or link.kind == "join":
        return None
    if f.channel:
        return f"give channel '{f.channel}' repeat={{n}}"
    return (f"{link.kind} with repeat={{n}}: {link.srcs[0]}.{link.kind}(..., repeat={{n}})")


def _link_of(d: Design, f: Fifo, e: Endpoint) -> Link | None:
    """The link whose buffers a link end ``e`` of ``f`` moves data in (None for other ends)."""
    if not e.is_link_end:
        return None
    names = "dsts" if e is f.producer else "srcs"
    return next((link for link in d.links if f.name in getattr(link, names)), None)


def _bds(d: Design, f: Fifo, e: Endpoint) -> tuple[int, list[tuple[int, int]]]:
    """The buffer end ``e`` of ``f`` moves data in, in elements, and the (offset, length) of
    each BD over it that applies ``e``'s layout.

    mlir-aie's objectfifo lowering (``createMemTileDMA`` in AIEObjectFifoStatefulTransform.cpp)
    gives a link's memtile ends the link's buffers: a 1-to-1 link's hold the larger of its two
    elements and each BD moves all of it; a join's (split's) hold the joined (parent) element,
    and each part moves with a BD of its own, from the part's offset, of the part's length
    (``getJoinTransferLengths``/``getDistributeTransferLengths``; parts lie back to back, see
    :func:`~aiedsl.checks.links.check_links`), the end's dims on every one of them. The
    joined output's (split input's) end has one BD per part, a part's own end one BD.
    """
    link = _link_of(d, f, e)
    if link is None:
        return f.elem.numel, [(0, f.elem.numel)]
    if link.kind == "forward":
        size = max(d.fifo(x).elem.numel for x in (*link.srcs, *link.dsts))
        return size, [(0, size)]
    parent, names = ((link.dsts[0], link.srcs) if link.kind == "join"
                     else (link.srcs[0], link.dsts))
    parts = [(off, d.fifo(n).elem.numel) for off, n in zip(link.offsets, names)]
    if f.name != parent:
        parts = [parts[names.index(f.name)]]
    return d.fifo(parent).elem.numel, parts


def _max_index(dims: tuple[Dim, ...]) -> int:
    """The highest element a layout reaches from its offset, every size as written (mlir-aie's
    ``getDimsMaxIdx``)."""
    return sum((x.size - 1) * x.stride for x in dims)


def _inner(dims: tuple[Dim, ...]) -> int:
    """Elements of one step of the outermost dimension."""
    return int(np.prod([x.size for x in dims[1:]]))


def _walk_max(dims: tuple[Dim, ...], length: int) -> int:
    """The highest element a BD of ``length`` elements reaches from its offset: the outermost
    size is not encoded, so that dimension steps until ``length`` have moved (as the simulator's
    :func:`~aiedsl.ir.types.dims_index`); ``length`` is a multiple of :func:`_inner`."""
    return (length // _inner(dims) - 1) * dims[0].stride + _max_index(dims[1:])


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


def _check_transfer(d: Design, t: Transfer, target: TargetModel) -> None:
    tensor = d.tensor(t.tensor)
    itemsize = tensor.type.dt.itemsize
    p = t.pattern
    where = f"rt.{t.op} of '{t.fifo}' from '{t.tensor}'" if t.op == "fill" else \
        f"rt.{t.op} of '{t.fifo}' into '{t.tensor}'"
    shown = f"offset {p.offset}, sizes {list(p.sizes)}, strides {list(p.strides)}"
    if any(s < 1 for s in p.sizes) or any(s < 0 for s in p.strides) or p.offset < 0:
        _fail(t.loc, where, "sizes >= 1, strides and offset >= 0", shown,
              "use positive sizes and non-negative strides and offset")
    if p.sizes[0] > target.max_shim_iterations:  # checked for linear transfers too
        _fail(t.loc, where, f"outermost (iteration) size <= {target.max_shim_iterations} "
              "on a shim DMA", f"{p.sizes[0]} ({shown})",
              "split the transfer into several fills or drains")
    linear = _is_linear(p.sizes, p.strides)
    if not linear:
        for i in (1, 2, 3):
            if p.sizes[i] > 1 and p.strides[i] < 1:
                # verifyStridesWraps: only the outermost (iteration) dimension repeats
                _fail(t.loc, where, "a stride >= 1 on every dimension but the outermost "
                      "(mlir-aie's verifyStridesWraps: 'Stride must be a positive integer'; "
                      "only the iteration dimension may repeat with stride 0)",
                      f"size {p.sizes[i]} with stride {p.strides[i]} ({shown})",
                      "put the repeat in the outermost dimension, e.g. sizes "
                      f"[{p.sizes[i]}, 1, ...] strides [0, 0, ...] (tiles(..., repeat=n) does)")
        # verifyStridesWraps: for 4-byte elements the innermost stride is any whole number of
        # words (getHardwareStridesWraps encodes it as stride - 1, e.g. the DMA-only transpose
        # sizes [32, 64] strides [1, 32] of i32); for smaller elements it moves whole words, so
        # only stride 1 means what the pattern says.
        try:
            _check_dims(where, p.sizes[1:], p.strides[1:], itemsize, target, t.loc, shown,
                        strided_inner=itemsize == target.dma_granularity)
        except DesignError as e:
            if not _contiguous(p.sizes, p.strides):
                raise
            # one run spelt over several dimensions: mlir-aie moves [*, 1, 1, n][*, 0, 0, 1]
            # as a plain linear transfer, exempt from the wrap limits (isLinearTransfer)
            n = p.numel // p.sizes[0]
            one = (f"({p.offset}, [{n}], [1])" if p.sizes[0] == 1 else
                   f"({p.offset}, [{p.sizes[0]}, 1, 1, {n}], [{p.strides[0]}, 0, 0, 1])")
            raise DesignError(e.rule, e.message, loc=e.loc, limit=e.limit, found=e.found,
                              related=e.related, fix=f"this is one contiguous run: write it as "
                              f"{one}, which mlir-aie moves as a plain linear transfer, free of "
                              "these limits") from None
    elif (p.sizes[3] * itemsize) % target.dma_granularity:
        # a linear transfer skips only the wrap limit: it still moves whole words
        _fail(t.loc, where, f"the innermost run is a multiple of {target.dma_granularity} "
              "bytes (mlir-aie's verifyStridesWraps: 'Transfer sizes must be multiples of 4 "
              "bytes', linear transfers too)",
              f"{p.sizes[3]} x {itemsize} B = {p.sizes[3] * itemsize} B ({shown})",
              f"move a multiple of {target.dma_granularity // itemsize or 1} elements")
    if p.sizes[0] > 1 and (p.strides[0] * itemsize) % target.dma_granularity:
        _fail(t.loc, where, f"strides are multiples of {target.dma_granularity} bytes (the "
              "iteration stride too: mlir-aie's verifyStridesWraps)",
              f"stride {p.strides[0]} x {itemsize} B = {p.strides[0] * itemsize} B ({shown})",
              "use word-aligned strides")
    for size, stride in zip(p.sizes, p.strides):  # linear or not
        words = stride * itemsize // target.dma_granularity
        step = target.shim.bd_step_words
        if size > 1 and words > step:
            _fail(t.loc, where, f"each stride <= {step} words of "
                  f"{target.dma_granularity} bytes (mlir-aie's verifyStridesWraps: the "
                  "shim's 20-bit step fields)",
                  f"stride {stride} = {words} words ({shown})",
                  "split the transfer into several fills or drains nearer each other")
    if (p.offset * itemsize) % target.dma_granularity:
        _fail(t.loc, where, f"offset a multiple of {target.dma_granularity} bytes",
              f"{p.offset * itemsize} bytes ({shown})", "align the offset to 4 bytes")
    hi = p.offset + sum((size - 1) * stride for size, stride in zip(p.sizes, p.strides))
    if hi >= tensor.type.numel:
        _fail(t.loc, where, f"every index inside '{t.tensor}' ({tensor.type.numel} elements)",
              f"index {hi} ({shown})", "shrink the sizes or the offset")


def _is_linear(sizes: tuple[int, ...], strides: tuple[int, ...]) -> bool:
    """mlir-aie's linear transfer, exempt from the wrap limits: ``[*, 1, 1, n][*, 0, 0, 1]``
    (AIEX ``isLinearTransfer``: the outermost dimension may repeat it)."""
    return (sizes[1] == 1 and sizes[2] == 1 and strides[3] == 1 and strides[1] == 0
            and strides[2] == 0)


def _contiguous(sizes: tuple[int, ...], strides: tuple[int, ...]) -> bool:
    """Do the three inner dimensions walk one contiguous run (spelt over several dimensions)?"""
    expect = 1
    for size, stride in zip(reversed(sizes[1:]), reversed(strides[1:])):
        if size > 1 and stride != expect:
            return False
        expect *= size
    return True


def _check_dims(where: str, sizes: tuple[int, ...], strides: tuple[int, ...], itemsize: int,
                target: TargetModel, loc: Loc, shown: str,
                related: list[tuple[str, Loc]] | None = None, *, strided_inner: bool = False,
                tile: str | None = None) -> None:
    """Wrap, granularity and contiguity rules of the non-iteration dimensions, innermost last.

    ``strided_inner`` lets the innermost dimension step by whole words (4-byte elements).
    ``tile`` (``memtile``/``core``) applies that BD's size limit to every dimension in
    elements, as DMABDOp::verify does; without it (a shim) the innermost counts words.
    """
    gran = target.dma_granularity
    inner_size, inner_stride = sizes[-1], strides[-1]
    if inner_size > 1 and inner_stride != 1 and not strided_inner:
        limit = (f"the innermost dimension is contiguous (stride 1) for {itemsize}-byte "
                 f"elements (the DMA moves whole {gran}-byte words: mlir-aie's "
                 "DMABDOp::verify and verifyStridesWraps)")
        _fail(loc, where, limit, shown,
              "make the innermost dimension a contiguous run; move the stride outward (no DMA "
              f"steps {itemsize}-byte elements one by one: to transpose or gather them, use "
              f"{gran}-byte elements or a kernel)", related)
    if (inner_size * itemsize) % gran:
        _fail(loc, where, f"the innermost run is a multiple of {gran} bytes",
              f"{inner_size} x {itemsize} B = {inner_size * itemsize} B ({shown})",
              f"make the innermost size a multiple of {gran // itemsize or 1} elements", related)
    if tile is not None:
        most = target.limits(tile).bd_max_size  # type: ignore[arg-type]
        for size in sizes:
            if size > most:
                _fail(loc, where, f"each size <= {most} on a {tile} BD (mlir-aie's "
                      "DMABDOp::verify: at most 512 at 1e400306; the wrap fields, 10 bits on a "
                      "memtile and 8 on a core, since PR 3548)", f"{size} ({shown})",
                      "split that dimension in two, or move the layout to the "
                      + ("memtile" if tile == "core" else "runtime pattern"), related)
    else:
        words = inner_size * itemsize // gran
        if words > target.max_dma_size:
            _fail(loc, where, f"innermost size <= {target.max_dma_size} words of {gran} bytes",
                  f"{words} words ({shown})", "split the innermost dimension in two", related)
    for i, (size, stride) in enumerate(zip(sizes, strides)):
        if i == len(sizes) - 1:
            if strided_inner and size > 1 and stride != 1 and (stride * itemsize) % gran:
                _fail(loc, where, f"strides are multiples of {gran} bytes",
                      f"stride {stride} x {itemsize} B = {stride * itemsize} B ({shown})",
                      "use word-aligned strides", related)
            continue
        if tile is None and size > target.max_dma_size:
            _fail(loc, where, f"each size <= {target.max_dma_size}", f"{size} ({shown})",
                  "split that dimension in two", related)
        if size > 1 and (stride * itemsize) % gran:
            _fail(loc, where, f"strides are multiples of {gran} bytes",
                  f"stride {stride} x {itemsize} B = {stride * itemsize} B ({shown})",
                  "use word-aligned strides",
                  related)


def _check_fifo_dims(f: Fifo, e: Endpoint, what: str, target: TargetModel, buffer: int,
                     bds: list[tuple[int, int]], split_input: bool = False,
                     repeat_how: str | None = None, moved_fix: str = "") -> None:
    """The rules of one end's layout: ``buffer`` is the element count of the buffer its BDs
    move data in, ``bds`` the (offset, length) of each BD that applies it (see :func:`_bds`);
    ``repeat_how`` says how to repeat the fifo when ``e`` is the link end sending it;
    ``moved_fix`` says where a link end's dims_from_stream goes instead
    (:func:`_moved_layout_fix`)."""
    where = f"{what} of '{f.name}' on {e.label()}"
    dims: tuple[Dim, ...] = e.dims
    shown = "[" + ", ".join(f"({x.size}, {x.stride})" for x in dims) + "]"
    # Report the line that wrote the dims (the fifo, link or channel), and where the endpoint is.
    loc = f.loc
    who = {"shim": "the runtime", "memtile": "the memtile",
           "coretile": f"the core tile {e.tile}"}.get(e.kind, e.label())
    verb = ("fills" if e.kind == "shim" else "produces") if what == "dims_to_stream" else (
        "drains" if e.kind == "shim" else "consumes")
    related = [(f"{who} {verb} it here", e.loc)] if e.loc != f.loc else []
    if e.kind == "shim":
        _fail(loc, where, "no layout transform on a shim endpoint (mlir-aie's rule)", shown,
              "apply the layout in the runtime pattern instead, or on the memtile", related)
    if e.is_link_end and what == "dims_from_stream" and not split_input:
        noun = "memtile" if e.kind == "memtile" else "core tile"
        _fail(loc, where, f"no dims_from_stream on a {noun} endpoint (aiedsl applies a {noun}'s "
              "layout as it sends)", shown, moved_fix, related)
    max_dims = target.limits(e.tile_kind).dma_dims
    if len(dims) > max_dims:
        _fail(loc, where, f"at most {max_dims} dimensions on a {e.tile_kind} DMA",
              f"{len(dims)} ({shown})", "merge contiguous dimensions" + (
                  ", or share the transform between the memtile's dims_to_stream and the "
                  "core's dims_from_stream" if e.kind == "memtile" else
                  ", or move the transform to the memtile (4 dimensions)"), related)
    sizes = tuple(x.size for x in dims)
    strides = tuple(x.stride for x in dims)
    itemsize = f.elem.dt.itemsize
    numel = buffer
    # DMABDOp::verify: "Invalid step size; must be a positive integer." -- every dimension,
    # whatever its size. A repeat on the outside is what the fifo's repeat= (the objectfifo's
    # repeat_count) does where a link sends it.
    for x in dims:
        if x.stride < 1:
            if repeat_how is not None and x is dims[0] and x.size > 1:
                n, rest = x.size, dims[1:]
                plain = len(rest) == 1 and rest[0].stride == 1 and rest[0].size == buffer
                sender = "memtile" if e.kind == "memtile" else "core tile"
                fix = (f"to send each element {n} times, " + repeat_how.format(n=n)
                       + f" (mlir-aie's repeat_count: the {sender} sends each element {n} "
                       f"times without receiving it again), and drop ({n}, 0)" + (
                           f"; what is left, [({rest[0].size}, 1)], is a plain copy: leave "
                           "dims_to_stream out" if plain else ""))
            else:
                fix = ("give each dimension a positive stride; to send each element n times, "
                       "repeat the fifo a memtile sends (forward(..., repeat=n), split(..., "
                       "repeat=n), channel(..., via=memtile, repeat=n): mlir-aie's "
                       "repeat_count), or use a consumer with a deeper fifo or a second fill")
            _fail(loc, where, f"every stride >= 1 on a {e.tile_kind} BD (mlir-aie's "
                  "DMABDOp::verify: a step size of 0 is invalid)",
                  f"({x.size}, {x.stride}) in {shown}", fix, related)
    # The outermost dimension's size is not encoded in the hardware (it steps until the element
    # is done), but mlir-aie's verifier checks every size as written.
    # a BD steps whole words in its innermost dimension too (DMABDOp::verify and
    # verifyStridesWraps want stride 1 there only for elements narrower than a word)
    _check_dims(where, sizes, strides, itemsize, target, loc, shown, related, tile=e.tile_kind,
                strided_inner=itemsize == target.dma_granularity)
    for x in dims:
        words = x.stride * itemsize // target.dma_granularity
        step = target.limits(e.tile_kind).bd_step_words
        if x.stride > numel or x.stride > target.max_bd_stride or words > step:
            _fail(loc, where, f"each stride <= the {numel}-element buffer, < "
                  f"{target.max_bd_stride + 1} elements and <= {step} words on a {e.tile_kind} BD "
                  "(mlir-aie's "
                  "DMABDOp::verify; the step-field width since PR 3548)",
                  f"stride {x.stride} ({shown})", "use strides within the element", related)
    inner = _inner(dims)
    if bds == [(0, numel)]:  # one BD of the whole buffer
        if numel % inner:
            _fail(loc, where, f"the inner dimensions tile the {numel}-element buffer",
                  f"{inner} elements per outer step ({shown})",
                  "choose dims whose inner sizes divide the element", related)
        hi = _walk_max(dims, numel)
        if hi >= numel:
            _fail(loc, where, f"every address inside the {numel}-element buffer",
                  f"address {hi} ({shown})", "fix the strides so they stay inside the element",
                  related)
    else:
        # a join's or split's part: its BD moves the part's elements alone, from its offset,
        # so the outermost dimension steps over the part, not over the whole buffer
        _check_part_walks(where, dims, bds, loc, shown, related)
    # DMABDOp::verify: the sizes as written, outermost too, must stay inside the buffer (the
    # whole buffer: it does not look at the BD's offset or length).
    written = sum((s - 1) * st for s, st in zip(sizes, strides))
    if written >= numel:
        steps = ("the element's outer steps" if bds == [(0, numel)] else
                 "a part's outer steps")
        _fail(loc, where, f"every address inside the {numel}-element buffer, with every size as "
              "written (mlir-aie's DMABDOp::verify)", f"address {written} ({shown})",
              f"make the outermost size {min(n for _, n in bds) // inner} ({steps})", related)


def inverse_layout(dims: tuple[Dim, ...], numel: int) -> tuple[Dim, ...] | None:
    """The layout that reads, in order, what ``dims`` writes: ``dims`` writes stream element k
    at address P(k); the result reads address Q(m) as stream element m, Q = P^-1. None unless
    ``dims`` visits each of the ``numel`` addresses once (its dimensions, ordered by stride,
    are a row-major walk of the element): a transpose or block permutation.

    >>> inverse_layout((Dim(size=16, stride=1), Dim(size=32, stride=16)), 512)
    (Dim(size=32, stride=1), Dim(size=16, stride=32))
    """
    real = [i for i, x in enumerate(dims) if x.size > 1]
    if not real or int(np.prod([dims[i].size for i in real])) != numel:
        return None
    by_stride = sorted(real, key=lambda i: dims[i].stride, reverse=True)
    step = 1
    for i in reversed(by_stride):
        if dims[i].stride != step:
            return None
        step *= dims[i].size
    natural = {i: int(np.prod([dims[j].size for j in real if j > i])) for i in real}
    return tuple(Dim(size=dims[i].size, stride=natural[i]) for i in by_stride)


def _bd_ok(dims: tuple[Dim, ...], itemsize: int, kind: str, target: TargetModel) -> bool:
    """Would ``dims`` pass the BD rules of a ``kind`` (memtile or core) DMA?"""
    if len(dims) > target.limits(kind).dma_dims:  # type: ignore[arg-type]
        return False
    try:
        _check_dims("", tuple(x.size for x in dims), tuple(x.stride for x in dims), itemsize,
                    target, Loc(file="", line=0), "", tile=kind,
                    strided_inner=itemsize == target.dma_granularity)
    except DesignError:
        return False
    return True


def _shown(dims: tuple[Dim, ...]) -> str:
    return "[" + ", ".join(f"({x.size}, {x.stride})" for x in dims) + "]"


def _moved_layout_fix(d: Design, f: Fifo, e: Endpoint, target: TargetModel) -> str:
    """Where the layout a link end would write with (its dims_from_stream) goes instead.

    Two places write the same element: the tile that receives the link's output (a core's
    dims_from_stream, the same layout: it scatters what arrives as the memtile would have),
    and the link's own sending side, reading in the inverse order (dims_to_stream, when the
    layout is a permutation of the element). Each is offered when it applies unchanged: the
    same element size on both sides, cores that receive, no layout already there, and a BD
    that can walk it.
    """
    dims: tuple[Dim, ...] = e.dims
    shown = _shown(dims)
    itemsize = f.elem.dt.itemsize
    link = _link_of(d, f, e)
    options = []
    if link is not None and link.kind == "forward":
        out = d.fifo(link.dsts[0])
        same = out.elem.numel == f.elem.numel
        call = "forward(..., {})"
        if (same and out.consumers and all(c.kind == "core" and not c.dims
                                           for c in out.consumers)
                and _bd_ok(dims, itemsize, "core", target)):
            who = ("the core that consumes" if len(out.consumers) == 1 else
                   "the cores that consume")
            options.append(f"give the layout to {who} '{out.name}' instead: "
                           + call.format(f"dims_from_stream={shown}")
                           + " (a core's DMA writes what arrives in that order, as the memtile "
                           "would have)")
        inv = inverse_layout(dims, f.elem.numel)
        if (same and inv is not None and not out.producer.dims
                and _bd_ok(inv, itemsize, e.tile_kind, target)):
            options.append("send it in the inverse order: "
                           + call.format(f"dims_to_stream={_shown(inv)}"))
    elif link is not None and link.kind == "join":
        inv = inverse_layout(dims, f.elem.numel)
        p = f.producer
        if (inv is not None and p.kind == "core" and not p.dims
                and _bd_ok(inv, itemsize, "core", target)):
            options.append(f"let {p.core} send the part in the inverse order: give "
                           f"'{f.name}' dims_to_stream={_shown(inv)}")
    if options:
        return ", or ".join(options)
    return ("write the layout where a core's DMA receives the data (its dims_from_stream), or "
            "where the link sends it (its output's dims_to_stream, the inverse order: the "
            "address each stream element is read from is where this layout would write it)")


def _check_part_walks(where: str, dims: tuple[Dim, ...], bds: list[tuple[int, int]], loc: Loc,
                      shown: str, related: list[tuple[str, Loc]]) -> None:
    """Each part's BD walks whole steps of the inner dimensions and stays inside the part.

    mlir-aie's objectfifo lowering gives each part of a join or split its own memtile BD, from
    the part's offset, of the part's length, with the layout (AIEObjectFifoStatefulTransform.cpp,
    ``createMemTileDMA``); the outermost dimension steps until that length has moved. What lies
    past the part is another part's, guarded by its own lock pair (or past the buffer).
    """
    inner = _inner(dims)
    for _, n in bds:
        if n % inner:
            _fail(loc, where, f"the inner dimensions tile each part's {n} elements (the "
                  "memtile moves each part with its own BD of the part's length, the layout "
                  "applied to it: mlir-aie's createMemTileDMA)",
                  f"{inner} elements per outer step ({shown})",
                  f"choose dims whose inner sizes divide {n}", related)
    for off, n in bds:
        hi = _walk_max(dims, n)
        if hi >= n:
            _fail(loc, where, f"every address inside the {n}-element part each BD moves: the "
                  "memtile moves each part with its own BD, from the part's offset, the outermost "
                  f"dimension stepping until the part's {n} elements have moved (mlir-aie's "
                  "createMemTileDMA); past it lie other parts, under their own locks",
                  f"address {hi} from offset {off} ({shown})",
                  "write the layout of one part; it is applied to every part in turn", related)


def _fail(loc: Loc, where: str, limit: str, found: str, fix: str,
          related: list[tuple[str, Loc]] | None = None) -> None:
    raise DesignError("dma pattern", f"{where} breaks a DMA rule", loc=loc, limit=limit,
                      found=found, fix=fix, related=related)
