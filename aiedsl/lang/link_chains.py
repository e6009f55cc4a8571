"""The rule that a fifo takes part in at most one memtile link, and the error that shows the
chain of links a fifo was put in, with what does the chain's job instead.

Example
-------
::

    check_links_once(trace.links, trace.runtime)   # once the design function has returned
"""

from __future__ import annotations

from aiedsl.errors import DesignError
from aiedsl.ir.types import Dim, TensorType
from aiedsl.lang.records import FifoRecord, LinkRecord, RuntimeRecord, TransferRecord
from aiedsl.source_loc import parse_python, same_scope, written_call


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
        fix = _chain_fix(chain, runtime)
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


def _chain_fix(chain: list[LinkRecord | FifoRecord], runtime: list[RuntimeRecord] | None) -> str:
    """What does the job of a chain of links (``[link, fifo, link, ...]``): the links but the
    forwards that change nothing, when one link is left; one forward per part, when a split
    takes a join's parts apart again as they were (:func:`_forwards_per_part`), or one forward
    when a join puts a split's parts back together (:func:`_one_forward`); else the data
    passes through the host between the first two links that do something."""
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
    host = (f"pass the data through the host between the {links[a].kind} and the "
            f"{links[b].kind}{skipped}: rt.drain '{out.name}' into a host tensor (an extra "
            "argument of the design, or the output before its own drain), rt.sync(), then "
            f"rt.fill a new fifo(Tensor[{shape}, {into.elem.dtype}]) from that tensor and give "
            f"it to the {links[b].kind} in place of '{into.name}'; the fill's pattern can lay "
            f"the data out as the {links[b].kind} needs")
    middle = [x for x in chain[2 * a + 1:2 * b] if isinstance(x, FifoRecord)]
    if any(_used(f, runtime) for f in middle):  # doing away with them would lose that use
        return host
    pair = (links[a].kind, links[b].kind)
    if pair == ("join", "split"):
        direct = _forwards_per_part(links[a], links[b], b - a - 1)
        # a split of contiguous parts cannot tile the joined data otherwise (MLIR-AIR's L2
        # buffer that a second herd reads in other tiles): that still takes the host
        return host if direct is None else (
            f"{direct}; only for another tiling of the data than the join's parts, {host}")
    if pair == ("split", "join") and b == a + 1:
        return _one_forward(links[a], links[b], runtime) or host
    return host


def _used(f: FifoRecord, runtime: list[RuntimeRecord] | None) -> bool:
    """Does anything but memtile links use ``f`` (a core, or a transfer of the runtime)? A fix
    that does away with ``f`` would take that use away."""
    return any(c.kind == "core" for c in f.consumers) or any(
        isinstance(r, TransferRecord) and r.fifo is f for r in runtime or [])


def _laid_out(f: FifoRecord) -> bool:
    """Does a layout reorder ``f``'s elements at either end of its DMAs?"""
    return bool(f.dims_to_stream or f.dims_from_stream or f.dims_per_consumer)


def _dims(dims: tuple[Dim, ...]) -> str:
    return "[" + ", ".join(f"({d.size}, {d.stride})" for d in dims) + "]"


def _elem(t: TensorType) -> str:
    return f"Tensor[{', '.join(map(str, t.shape))}, {t.dtype}]"


def _forwards_per_part(join: LinkRecord, split: LinkRecord, between: int) -> str | None:
    """The fix for a split that takes a join's parts apart again, part for part (the same
    sizes at the same offsets: each split part gets what the join part at its place brought),
    the joined fifo reordered by no layout: one forward of each join part, which delivers the
    same data to the same consumers through the same memtile (mlir-aie links each 1 -> 1),
    carrying the split part's element, depth, layouts and repeat where they differ from what
    a forward takes by default. None when the parts do not match so."""
    ins, outs = join.srcs, split.dsts
    if len(ins) != len(outs) or join.offsets != split.offsets or _laid_out(join.dsts[0]) or \
            _laid_out(split.srcs[0]) or any(
                i.elem.numel != o.elem.numel or i.elem.dtype != o.elem.dtype
                for i, o in zip(ins, outs)):
        return None
    args = [_forward_args(i, o) for i, o in zip(ins, outs)]
    joined = written_call(join.loc, "join")
    taken = written_call(split.loc, "split")
    links = (f"the join{', the forwards' if between > 1 else ', the forward' if between else ''}"
             f"{' between' if between else ''} and the split")
    why = (f"the split takes the join's parts apart again, the same sizes in the same order, so "
           f"forward each part through the memtile on its own in place of {links}")
    written = joined.args[0] if joined is not None and joined.args and same_scope(
        join.loc, split.loc) else None
    if written is None:  # the source cannot be read, or its names are another scope's
        pairs = ", ".join(f"a forward of '{i.name}'{f' ({a})' if a else ''} in place of "
                          f"'{o.name}'" for i, o, a in zip(ins, outs, args))
        return f"{why}: {pairs}"
    listed = _elements(written)  # join([c0, c1]): forward each as written
    if listed is None and len(set(args)) == 1:
        made = f"[m.forward({args[0]}) for m in {written}]"
    else:
        parts = listed or [f"{written}[{n}]" for n in range(len(ins))]
        made = "[" + ", ".join(f"{p}.forward({a})" for p, a in zip(parts, args)) + "]"
    target = taken.target if taken is not None else None
    return f"{why}: {made if target is None else f'{target} = {made}'}"


def _forward_args(src: FifoRecord, out: FifoRecord) -> str:
    """The arguments of ``src.forward(...)`` that make a fifo like ``out`` (a split's part):
    its element when its shape differs, its depth, layouts and repeat when not a forward's
    defaults (``src``'s depth, none, 1)."""
    words = [_elem(out.elem)] if out.elem != src.elem else []
    if out.depth != src.depth:
        words.append(f"depth={out.depth}")
    if out.dims_to_stream:
        words.append(f"dims_to_stream={_dims(out.dims_to_stream)}")
    if out.dims_from_stream:
        words.append(f"dims_from_stream={_dims(out.dims_from_stream)}")
    if out.repeat != 1:
        words.append(f"repeat={out.repeat}")
    return ", ".join(words)


def _elements(text: str) -> list[str] | None:
    """The items of a list or tuple written out (``[c0, c1]``), or None for any other
    expression (a name, a comprehension)."""
    import ast

    try:
        node = parse_python(text, mode="eval").body
    except SyntaxError:
        return None
    if isinstance(node, (ast.List, ast.Tuple)) and not any(
            isinstance(e, ast.Starred) for e in node.elts):
        return [ast.unparse(e) for e in node.elts]
    return None


def _one_forward(split: LinkRecord, join: LinkRecord,
                 runtime: list[RuntimeRecord] | None) -> str | None:
    """The fix for a join that puts a split's parts back together as they were (its parts
    are the split's, in order, at the same offsets, none reordered, repeated or used by
    anything else): the joined fifo holds what the split's input did, so one forward of that
    input does both links. None otherwise."""
    src, out = split.srcs[0], join.dsts[0]
    if join.srcs != split.dsts or join.offsets != split.offsets or _laid_out(src) or \
            _laid_out(out) or any(_laid_out(p) or p.repeat != 1 or _used(p, runtime)
                                  for p in split.dsts):
        return None
    words = [_elem(out.elem)] if out.elem != src.elem else []
    if out.depth != src.depth:
        words.append(f"depth={out.depth}")
    args = ", ".join(words)
    why = ("the join puts the split's parts back together as they were, so one forward of its "
           "input does both links")
    taken = written_call(split.loc, "split")
    made = written_call(join.loc, "join")
    if taken is None or taken.receiver is None:
        return f"{why}: a forward of '{src.name}'{f' ({args})' if args else ''} in place of " \
               f"'{out.name}'"
    forward = f"{taken.receiver}.forward({args})"
    target = made.target if made is not None else None
    return f"{why}: {forward if target is None else f'{target} = {forward}'}, in place of the " \
           "split and the join"
