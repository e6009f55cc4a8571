"""The per-tile resource check: one tile's :class:`~aiedsl.checks.tile_usage.TileUsage` against
its kind's :class:`~aiedsl.targets.limits.TileLimits` (data memory, DMA channels each way, locks,
buffer descriptors), and the fix each refusal gives.

Memory is reported at its largest user, which the fix shrinks. A memtile full even after
spilling to its neighbours (rule 3 of :mod:`aiedsl.place.objectfifo`: mlir-aie's
``createObjectFifoElements`` moves a buffer to the left or right memtile where it fits) takes its
fix from :mod:`aiedsl.checks.spill_fix`, else one said the way the design sets the buffers
(:mod:`aiedsl.checks.buffer_setters`). A repeated fifo's sender chains each BD ``repeat`` times
(mlir-aie 1e400306, whose lowering aiedsl plans by; since PR 3115 one BD for a single buffer,
repeated by its channel), which the BD fixes say, with the knob that gives the memtile end one
buffer.
"""

from __future__ import annotations

from collections.abc import Callable
from math import ceil

from aiedsl.checks.tile_usage import Coord, TileUsage, Use
from aiedsl.errors import DesignError
from aiedsl.targets import DEVICES, TargetModel


def _lock_fix(uses: list[Use]) -> str:
    """The fix for a tile out of locks, naming what takes most of them: barriers (a lock each
    on every core that waits for one) or fifos (two a buffer ring)."""
    barriers = sum(x.amount for x in uses if x.label.startswith("barrier "))
    rest = TileUsage.total(uses) - barriers
    fifos = "use fewer fifos on this tile or move one elsewhere"
    if not barriers:
        return fifos
    said = (f"use fewer barriers here ({barriers} of its locks are barriers', one each: "
            "one barrier can gate several waits, set to successive values)")
    return said + (f", or {fifos}" if rest else "") if barriers >= rest else \
        f"{fifos}, or use fewer barriers ({barriers} of its locks are barriers')"


def _check_tile(u: TileUsage, target: TargetModel, links: dict[str, int],
                repeats: dict[str, int],
                spill_fix: Callable[[Coord], str | None] = lambda tile: None,
                knobs: dict[str, str] | None = None,
                end_knobs: dict[tuple[Coord, str], str] | None = None) -> None:
    """Refuse the first limit ``u`` exceeds (``links``: each linked fifo's link; ``repeats``:
    each repeated fifo's repeat; ``spill_fix``: the fix for an overfull memtile whose buffers
    may spill to a neighbour, None where none can; ``knobs``: for a repeated fifo, how the
    design gives its memtile end one buffer, e.g. ``channel 'b' host_depth=1``; ``end_knobs``:
    by (tile, fifo), how the design sets the buffers of a fifo's end in a core)."""
    lim = target.limits(u.kind)  # type: ignore[arg-type]
    mem = TileUsage.total(u.memory)
    if u.kind != "shim" and mem > lim.memory:
        spilling = spill_fix(u.tile) if u.kind == "memtile" else None
        fix = spilling if spilling is not None else (f"free {mem - lim.memory:,} bytes: " + (
            ("lower a fifo's depth (depth=1 single-buffers it), use smaller tiles"
             + (", declare smaller locals" if any(x.label.startswith("local ")
                                                   for x in u.memory) else "")
             + (", or give the core a smaller stack" if u.runs else ""))
            if u.kind == "core" else _memtile_memory_fix(u.memory, mem - lim.memory)
            + _bd_too_long(u.memory, lim.bd_len_words, target.dma_granularity)))
        room = f"{lim.memory:,} bytes"
        if u.kind == "memtile" and target.cols > 1:  # objectfifo rule 3: none had room either
            room += (", and no neighbouring memtile has room for what does not fit (mlir-aie "
                      "moves such a buffer to the left or right memtile where it fits)")
        _over(u, "data memory", room, f"{mem:,} bytes", u.memory, fix, at_largest=True)
    move = {"core": "use fewer fifos in this core (pack two inputs or two outputs into one fifo "
            "element), or move some work to another core",
            # check_memtile_channels refuses links no placement fits, and the placer finds one
            # when it exists: reached only if its search gave up
            "memtile": "pin links to memtiles with via=memtile(col) so that no memtile's links "
            "need more channels than it has, or split/join over fewer parts",
            "shim": "pin a fifo's host end to another column with shim=shim(col) (fifo() "
            "and channel() take it)"}[u.kind]
    if target.cols == 1 and u.kind != "core":  # no other column to move to
        move = ("use fewer fifos with a host end here (a fill or a drain takes a shim channel)"
                if u.kind == "shim" else "split/join over fewer parts, or use fewer links")
        move += f", or a device with more columns than {target.name}"
    for direction, uses, limit in (("input (S2MM)", u.dma_in, lim.dma_in),
                                   ("output (MM2S)", u.dma_out, lim.dma_out)):
        if len(uses) > limit:
            _over(u, f"DMA {direction} channels", str(limit), str(len(uses)), uses, move)
    if TileUsage.total(u.locks) > lim.locks:
        _over(u, "locks", str(lim.locks), str(TileUsage.total(u.locks)), u.locks,
              _lock_fix(u.locks))
    repeated = sorted({x.fifo for x in u.bds if x.fifo in repeats})
    # each BD of a repeated fifo's sender is chained `repeat` times (mlir-aie 1e400306)

    def also(uses: list[Use], limit: int) -> str:
        """The repeat fixes of the repeated fifos among ``uses`` (BDs of one pool of
        ``limit``)."""
        total = TileUsage.total(uses)
        said = []
        for r in repeated:
            mine = sum(x.amount for x in uses if x.fifo == r)
            if mine:
                said.append(_repeat_fix(r, repeats[r], mine // repeats[r], (knobs or {}).get(r),
                                        limit - (total - mine)))
        return "".join(f"; {x}" for x in said)
    if lim.bds_per_channel_parity is not None:
        for parity, uses in enumerate(u.bds_by_parity):
            n = TileUsage.total(uses)
            if n > lim.bds_per_channel_parity:
                owner_of = [links.get(x.fifo or "", -1 - i) for i, x in enumerate(uses)]
                pool = lim.bds_per_channel_parity
                # one link over the pool by itself: no placement, and no device, gives it
                # room (a tester was told to take a larger device, at another link's line)
                groups = [[x for x, o in zip(uses, owner_of) if o == k]
                          for k in dict.fromkeys(owner_of)]
                over = next((g for g in groups if TileUsage.total(g) > pool), None)
                if len(groups) == 1:
                    names = " and ".join(f"'{x.label}'" for x in uses)
                    fix = (f"one link takes them all ({names}), so another memtile would not "
                           "help: " + _link_bd_fix(u.memory, uses, pool, repeats))
                elif over is not None:
                    names = " and ".join(f"'{x.label}'" for x in over)
                    others = [x for x in uses if x not in over]
                    fix = (f"one link needs more than the {pool} by itself ({names}), so no "
                           "other memtile or device would help: "
                           + _link_bd_fix(u.memory, over, pool, repeats, others))
                    uses = over + others
                else:
                    fix = _elsewhere(target)
                    # the largest link's depth that fits beside the others here: a concrete
                    # way out where "lower fifo depths" names none (a tester's split at depth 4)
                    big = max(groups, key=TileUsage.total)
                    rest = [x for x in uses if x not in big]
                    fits = _link_bd_fix(u.memory, big, pool, repeats, rest)
                    if fits != VAGUE:
                        fix += f"; here, for example: {fits}"
                _over(u, f"buffer descriptors of {'even' if parity == 0 else 'odd'} channels",
                      f"{pool} (BDs {parity * pool}-{parity * pool + pool - 1})",
                      str(n), uses, fix + also(uses, pool),
                      at_largest=(over is not None and len(groups) > 1)
                      or any(x.fifo in repeats for x in uses))
    elif TileUsage.total(u.bds) > lim.bds:
        _over(u, "buffer descriptors", str(lim.bds), str(TileUsage.total(u.bds)), u.bds,
              "move a tiled tensor in one transfer (rt.fill(f, t, tiles(t, (th, tw))) is one "
              "BD for all its tiles), wait (rt.sync()) between batches of runtime transfers, or "
              "spread the fifos' host ends over more columns (shim=shim(col))"
              if u.kind == "shim" else
              _core_bd_fix(u, end_knobs or {}) + also(u.bds, lim.bds))


def _core_bd_fix(u: TileUsage, end_knobs: dict[tuple[Coord, str], str]) -> str:
    """The fix for a core tile over its BDs: each buffer of a fifo's end there takes one, so
    the ends are named with the buffers each has and what sets them (a tester: the lines
    pointed at the acquire, and nothing named the consumer_depth= that set 8 buffers)."""
    ends = [f"'{x.fifo}' {x.amount} ({end_knobs[(u.tile, x.fifo)]})" for x in u.bds
            if x.fifo is not None and (u.tile, x.fifo) in end_knobs]
    named = f" ({', '.join(ends)})" if ends else ""
    return ("lower the buffers of this core's fifo ends, one BD each" + named + ", acquire "
            "fewer elements at once (given one depth, a core's end of a fifo it consumes takes "
            "one buffer, and BD, more than its largest acquire), or move a fifo to another core")


VAGUE = "lower the depth the link has here"
"""What :func:`_link_bd_fix` says when it cannot count the depth that fits."""


def _link_bd_fix(memory: list[Use], uses: list[Use], limit: int,
                 repeats: dict[str, int], others: list[Use] | None = None) -> str:
    """How one memtile link whose buffers' BDs (``uses``, of a pool of ``limit``) overflow its
    channels' pool fits: each buffer takes one BD on each channel that moves it, so the buffers
    that fit are what the pool leaves beside the ``others`` on these channels (another link's
    BDs: a tester's split got a depth that fitted the pool alone, and failed again) over the
    BDs each takes, said the way the design sets their number (found among the tile's
    ``memory`` uses)."""
    found = _link_owner(memory, uses)
    if found is None or {x.fifo for x in uses} & set(repeats):
        return VAGUE
    owner, buffers, per = found
    assert owner.setter is not None, "an owner has a setter"
    taken = TileUsage.total(others or [])
    keep, alone = (limit - taken) // per, limit // per
    if alone < 1:
        return VAGUE
    at = f"{owner.setter.loc.file}:{owner.setter.loc.line}; " if owner.setter.loc else ""
    names = " and ".join(f"{x.label!r}" for x in others or [])
    if keep < 1:  # the others fill the pool by themselves: both must give some back
        both = _both_fit(memory, found, others or [], limit)
        if both is not None:
            return both
        return (f"lower both the buffers of '{owner.fifo}' ({at}{buffers} now, each taking "
                f"{per} of the {limit} BDs: {alone} at most) and those of {names}, which take "
                f"{taken} of the {limit} by themselves, until together they take {limit} or "
                "fewer")
    beside = f", beside the {taken} of {names}" if taken else ""
    return (f"{owner.setter.to(keep)} ({at}{buffers} buffers now, each taking {per} "
            f"of the {limit} BDs{beside})")


def _link_owner(memory: list[Use], uses: list[Use]) -> tuple[Use, int, int] | None:
    """The memory use that sets the buffers of the memtile link whose BDs are ``uses`` (found
    among the tile's ``memory`` uses), its buffer count and the BDs each buffer takes (one per
    channel that moves it: those spilled to a neighbour take theirs here too); None when no
    use with a setter holds them, or a buffer takes none."""
    fifos = {x.fifo for x in uses}
    owner = next((x for x in memory if x.fifo in fifos and x.setter is not None and x.buffers),
                 None)
    if owner is None:
        return None
    buffers = owner.in_all or len(owner.buffers)
    per = TileUsage.total(uses) // buffers
    return (owner, buffers, per) if per else None


def _both_fit(memory: list[Use], found: tuple[Use, int, int], others: list[Use],
              limit: int) -> str | None:
    """Buffer counts for a link (``found``: :func:`_link_owner`'s) and for the one other link
    whose BDs (``others``) fill the pool beside it by themselves, that together fit ``limit``,
    the fewest taken from each alike, said the way the design sets them (a reviewer: the fix
    named the join's parts, which have no setting, not the join's depth); None when the others
    are not one link with a setter."""
    owner, buffers, per = found
    theirs = _link_owner(memory, others)
    if theirs is None or owner.setter is None:
        return None
    other, count, each = theirs
    assert other.setter is not None, "an owner has a setter"
    # the others fill the pool: every count that fits lowers theirs too
    fits = [(a, (limit - a * per) // each) for a in range(1, buffers)
            if (limit - a * per) // each >= 1]
    if not fits:
        return None
    a, b = max(fits, key=lambda ab: (min(ab), ab[0]))
    return (f"{owner.setter.to(a)}, and {other.setter.to(b)}: {a * per + b * each} of the "
            f"{limit} BDs together ({buffers} and {count} buffers now, taking {per} and {each} "
            "BDs each)")


def _repeat_fix(fifo: str, repeat: int, buffers: int, knob: str | None, room: int) -> str:
    """The BD fix's words for repeated fifo ``fifo`` (``buffers`` at its sending end here;
    ``room``: the BDs left for it beside the others'): upstream 1e400306, which aiedsl lowers
    as, chains each buffer's BD ``repeat`` times, so the repeat that fits is ``room`` over the
    buffers; mlir-aie since PR 3115 sends a single buffer with one BD that the channel
    repeats."""
    fits = room // buffers if buffers else 0
    if fits >= 1:
        said = f"repeat={fits} or less fits beside the other BDs here"
    else:
        said = "no repeat of it fits beside the other BDs here"
    if buffers > 1 and room >= 1:
        fewer = f" ({knob})" if knob is not None else ""
        said += f"; with one buffer at the memtile{fewer}, repeat={room} or less"
    return (f"'{fifo}' (repeat={repeat}) takes {buffers} buffer(s) x {repeat} BDs (mlir-aie "
            "1e400306, whose lowering aiedsl plans by, chains each buffer's BD that many "
            f"times): {said} (mlir-aie since PR 3115 sends one buffer with one BD, repeated by "
            "its channel)")


def _elsewhere(target: TargetModel) -> str:
    """The fix for a memtile whose links together take more BDs than it has: the placer puts
    links where they have room (:mod:`aiedsl.place.memtiles`), and pins that stand in its way
    are refused before (:func:`aiedsl.checks.memtiles.check_memtile_room`), so moving one
    would not help."""
    if target.cols * len(target.memtile_rows) > 1:
        return ("lower fifo depths: aiedsl finds no placement of the links that gives every "
                f"memtile of {target.name} room for its links' channels, memory and BDs")
    bigger = any(t.family == target.family and t.cols > target.cols for t in DEVICES.values())
    return "lower fifo depths" + (f", or use a device with more memtiles than {target.name}"
                                  if bigger else "")


def _largest(uses: list[Use]) -> Use:
    """The largest use, the last of equals: where a memory error is reported."""
    return max(reversed(uses), key=lambda x: x.amount)


def _bd_too_long(uses: list[Use], most: int, word: int) -> str:
    """What to add to a memory fix when the largest buffer is longer than one BD moves (``most``
    words of ``word`` bytes): fewer buffers alone then meet the BD-length check next (an
    MLIR-AIR user's tester: depth=1 led straight to it)."""
    big = _largest(uses) if uses else None
    if big is None or not big.buffers:
        return ""
    size = big.buffers[0][1]
    if -(-size // word) <= most:
        return ""
    return (f"; each '{big.fifo or big.label}' buffer ({size:,} bytes) is also more than one "
            f"buffer descriptor moves ({most * word:,} bytes), so its elements must shrink too")


def _memtile_memory_fix(uses: list[Use], excess: int) -> str:
    """How to free ``excess`` bytes of a memtile: fewer buffers for its largest link, said the
    way the design sets them (a forward's depth= does nothing when its input owns the buffers),
    else smaller or fewer tiles per memtile."""
    rest = "use smaller tiles, or split the data over more memtiles"
    big = _largest(uses)
    if big.setter is None or not big.buffers:
        return ("give the memtile's largest fifos fewer buffers (a channel's host_depth=, "
                "which sets its memtile side: its depth= sets only the cores'; a linked fifo's "
                "depth=, e.g. f.forward(depth=1)), " + rest)
    n, size = len(big.buffers), big.buffers[0][1]
    keep = n - ceil(excess / size)
    if keep >= 1:
        return f"{big.setter.to(keep)}, {rest}"
    steps = [f"{big.setter.to(1)} (that frees {(n - 1) * size:,} of them)"] if n > 1 else []
    if len(uses) > 1:
        steps.append("give the memtile's other fifos fewer buffers")
    return ", ".join(steps + [rest])


def _over(u: TileUsage, what: str, limit: str, found: str, uses: list[Use], fix: str,
          at_largest: bool = False) -> None:
    # memory is reported at its largest user (what the fix shrinks), the others at the last
    where = (_largest(uses) if at_largest else uses[-1]).loc if uses else None
    raise DesignError(
        f"{u.kind} {what}", f"{'memtile' if u.kind == 'memtile' else u.kind + ' tile'} {u.tile}"
        f"{' (' + u.runs + ')' if u.runs else ''} "
        f"needs more {what} than it has", loc=where, limit=limit,
        found=found, related=[(f"{x.label}: {x.amount}", x.loc) for x in uses], fix=fix)
