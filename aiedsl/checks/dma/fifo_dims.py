"""Fifo end layout rules: a fifo end's ``dims_to_stream``/``dims_from_stream`` against the BDs
of its tile's DMA (mlir-aie's ``DMABDOp::verify``), a join's or split's parts walked one by one."""

from __future__ import annotations

from aiedsl.checks.dma.bds import _inner, _link_of, _max_index, _walk_max
from aiedsl.checks.dma.dims import _check_dims, _fail
from aiedsl.distinct import has_repeats
from aiedsl.ir.design import Design
from aiedsl.ir.fifos import Endpoint, Fifo
from aiedsl.ir.loc import Loc
from aiedsl.ir.types import Dim, dims_index
from aiedsl.targets import TargetModel


def _check_fifo_dims(f: Fifo, e: Endpoint, what: str, target: TargetModel, buffer: int,
                     bds: list[tuple[int, int]], memtile_receives: bool = False,
                     repeat_how: str | None = None, moved_fix: str = "") -> None:
    """The rules of one end's layout: ``buffer`` is the element count of the buffer its BDs
    move data in, ``bds`` the (offset, length) of each BD that applies it (see :func:`_bds`);
    ``memtile_receives``: ``e`` is a split's or forward's memtile input, whose S2MM BDs write
    with its dims_from_stream (any other link end's is refused);
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
        _fail(loc, where, "no layout transform on a shim endpoint (mlir-aie refuses "
              "dimensionsToStream on a shim producer, and ignores a shim consumer's layout)", shown,
              "apply the layout in the runtime pattern instead, or on the memtile", related)
    if e.is_link_end and what == "dims_from_stream" and not memtile_receives:
        limit = ("no dims_from_stream on a join's part at the memtile (aiedsl models a "
                 "memtile's receiving layout on a split's or a forward's input only; a join "
                 "applies its layout as it sends)" if e.kind == "memtile" else
                 "no dims_from_stream on a core tile endpoint (aiedsl applies a core tile's "
                 "layout as it sends)")
        _fail(loc, where, limit, shown, moved_fix, related)
    max_dims = target.limits(e.tile_kind).dma_dims
    if len(dims) > max_dims:
        _fail(loc, where, f"at most {max_dims} dimensions on a {e.tile_kind} DMA",
              f"{len(dims)} ({shown})", "merge contiguous dimensions" + (
                  ", or let the runtime's fill bring the element in this order: its n-d "
                  "pattern reads the host tensor in the inverse order (rt.fill(fifo, tensor, "
                  "(offset, sizes, strides)))" if memtile_receives else
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
    if len(dims) < max_dims:
        # a join's output (a split's input) applies the layout to each part, and
        # ObjectFifoLinkOp::verify holds it, every size as written, to the shortest part
        bound = min(n for _, n in bds) if bds != [(0, numel)] else numel
        _check_wrapped_outer(where, dims, bds, max_dims, e.tile_kind, loc, shown, related,
                             bound)
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
        outer = min(n for _, n in bds) // inner
        fix = f"make the outermost size {outer} ({steps})"
        grown = (Dim(size=outer, stride=dims[0].stride), *dims[1:])
        order = dims_index(grown, numel) if _max_index(grown) < numel else None
        if bds == [(0, numel)] and order is not None and has_repeats(order):
            # in bounds, but reading elements twice: right for a sliding window, which reads
            # them so (a reviewer), wrong for a layout, whose kernel check then refuses it (an
            # IRON user's tester followed the size there)
            fix += (f"; that walk reads some elements twice ({_shown(grown)}), as a sliding "
                    "window means to: for a layout of each element once, fix the strides")
        _fail(loc, where, f"every address inside the {numel}-element buffer, with every size as "
              "written (mlir-aie's DMABDOp::verify)", f"address {written} ({shown})", fix,
              related)


def _check_wrapped_outer(where: str, dims: tuple[Dim, ...], bds: list[tuple[int, int]],
                         max_dims: int, kind: str, loc: Loc, shown: str,
                         related: list[tuple[str, Loc]], bound: int) -> None:
    """A layout of fewer dimensions than the tile's BD has moves at most its sizes' product.

    Only a BD's last dimension has no wrap field (D2 on a core tile, D3 on a memtile:
    aie-rt's ``_XAieMl_TileDmaWriteBd``/``_XAieMl_MemTileDmaWriteBd``). mlir-aie writes the dims
    given into the first ones, sizes as wraps (AIERT.cpp ``configureBdInBlock``), and leaves
    the rest at aie-rt's defaults, so a shorter layout's outermost size is a wrap the hardware
    keeps: past it the next dimension steps one word on, where aiedsl would step the outermost
    dimension on. ``bound``: the elements every address, each size as written, must stay
    below (the shortest part of a join or split, else the buffer); a fix is offered only when
    it stays there."""
    total = _inner(dims) * dims[0].size
    for _, n in bds:
        if total >= n or n % _inner(dims):  # inner sizes that do not tile it: said after
            continue
        grown = (Dim(size=n // _inner(dims), stride=dims[0].stride), *dims[1:])
        fixes = []
        if _max_index(grown) < bound:
            fixes.append(f"make the outermost size {n // _inner(dims)}")
        # the layout kept whole, repeated block after block by an outermost dimension that
        # steps over it (written with size 1, so every size as written stays in the block)
        padded = (Dim(size=1, stride=total),
                  *[Dim(size=1, stride=1)] * (max_dims - 1 - len(dims)), *dims)
        if all(m % total == 0 for _, m in bds) and _max_index(dims) < total <= bound:
            fixes.append(f"write all {max_dims} dimensions, the outermost stepping over whole "
                         f"{total}-element blocks of this layout: {_shown(padded)} (the last "
                         "dimension's size is not encoded: it steps until the BD is done)")
        else:
            inside = "" if bound == max(m for _, m in bds) else \
                f", every address, each size as written, below {bound}"
            fixes.append(f"write all {max_dims} dimensions (the last one's size is not "
                         f"encoded: it steps until the BD is done){inside}")
        _fail(loc, where, f"a BD walks at most the product of a layout's sizes when the "
              f"layout has fewer than {max_dims} dimensions on a {kind} (this BD moves {n} "
              "elements): its outermost size is then a wrap the hardware keeps, and past it "
              "the BD's next dimension steps one word on (only the last of a BD's dimensions "
              "has no wrap: mlir-aie's configureBdInBlock, aie-rt's DMA BD fields)",
              f"sizes multiplying to {total} ({shown})", ", or ".join(fixes), related)


def _shown(dims: tuple[Dim, ...]) -> str:
    """``dims`` as the design writes them: ``[(size, stride), ...]``."""
    return "[" + ", ".join(f"({x.size}, {x.stride})" for x in dims) + "]"


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


def _repeat_how(d: Design, f: Fifo, e: Endpoint, what: str) -> str | None:
    """How the design would give ``f`` a repeat (``{n}`` for the count), when ``e`` is the link
    end that sends it: the way to send an element several times that a stride of 0 is not."""
    link = _link_of(d, f, e) if what == "dims_to_stream" else None
    if link is None or link.kind == "join":
        return None
    if f.channel:
        return f"give channel '{f.channel}' repeat={{n}}"
    return (f"{link.kind} with repeat={{n}}: {link.srcs[0]}.{link.kind}(..., repeat={{n}})")
