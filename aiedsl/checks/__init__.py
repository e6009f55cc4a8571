"""Checks over the design IR. Each raises a :class:`~aiedsl.errors.DesignError` with the line.

:func:`check_design` runs them in the order ``_check`` calls them (its comments say why one goes
before another: the more specific error first), from the IR's structure through the kernels,
the DMA layouts and the runtime's order, placement and the objectfifo lowering's plan, to the
resources, allocation and routing. It returns the placed design, now carrying its
:class:`~aiedsl.ir.Physical` part, and its per-tile usage. :func:`draft` does the placement,
allocation and routing without judging them, so a map can show what is over its limits.
"""

from __future__ import annotations

from functools import cache, partial

from aiedsl.frozen_gc import older_objects_frozen
from aiedsl.checks.acquires import check_acquires, check_placed_acquires
from aiedsl.checks.alignment import check_alignment
from aiedsl.checks.balance import check_balance
from aiedsl.checks.barriers import check_barrier_order
from aiedsl.checks.bd_length import check_bd_lengths
from aiedsl.checks.calls import check_kernel_calls
from aiedsl.checks.cycles import check_core_cycles
from aiedsl.checks.device_offer import weigh_device_offer
from aiedsl.checks.cascade import check_cascades
from aiedsl.checks.dma import check_dma
from aiedsl.checks.hangs import check_hangs
from aiedsl.checks.held import check_held_buffers
from aiedsl.checks.kernels import check_kernel_costs, check_kernel_objects, check_kernel_sources
from aiedsl.checks.kernel_handoffs import check_kernel_handoffs
from aiedsl.checks.layout import check_kernel_layouts
from aiedsl.checks.links import check_link_tile_cores, check_links
from aiedsl.checks.locals import check_locals
from aiedsl.checks.memtiles import check_memtile_channels, check_memtile_room
from aiedsl.checks.outputs import check_outputs_written
from aiedsl.checks.repeat import check_repeat_locks, check_repeats
from aiedsl.checks.resources import TileUsage, check_resources, usage
from aiedsl.checks.routing import check_packet_links, check_routing
from aiedsl.checks.reruns import check_barrier_reruns, check_late_reads, check_rtp_reruns
from aiedsl.checks.rtp import check_rtps
from aiedsl.checks.runtime_order import check_runtime_order
from aiedsl.checks.stale import check_stale_reads, check_unwritten_releases
from aiedsl.checks.symbols import check_symbols
from aiedsl.checks.unrolled import check_unrolled_loops
from aiedsl.errors import DesignError
from aiedsl.ir.design import Design
from aiedsl.ir.program import stopping_core
from aiedsl.ir.sequence import retirements
from aiedsl.kernels.arch import check_kernel_arch
from aiedsl.validate import validate
from aiedsl.place import allocate, place, route
from aiedsl.place.objectfifo import Lowering, lower
from aiedsl.place.cuts import worst
from aiedsl.place.placer import link_name, place_lowered, streams
from aiedsl.place.route import Congestion, Routing
from aiedsl.targets import TargetModel, get_target

__all__ = ["Congestion", "TileUsage", "check_design", "draft", "usage"]

Table = dict[tuple[int, int], TileUsage]


def check_design(d: Design) -> tuple[Design, Table]:
    """Run every check; return the placed, allocated and routed design and its resource table.

    The IR is validated first (:func:`~aiedsl.validate.validate`): one made other than by
    tracing (read from JSON, edited) may name what it does not declare, which the checks
    would look up and fail on with a KeyError."""
    with older_objects_frozen():
        try:
            return _check(d, suggest=True)
        except DesignError as e:
            weigh_device_offer(d, e, partial(_check, suggest=False))
            raise


def _check(d: Design, suggest: bool) -> tuple[Design, Table]:
    """:func:`check_design`; with ``suggest``, a design whose pinned memtile links keep it from
    routing is checked again with the links where aiedsl would put them, to offer those."""
    validate(d)
    target = get_target(d.device)
    check_links(d)
    check_packet_links(d)
    check_repeats(d)
    check_acquires(d)
    check_hangs(d)
    check_unrolled_loops(d, target)
    check_held_buffers(d)
    # the C++ files there are, before the calls are judged by the declarations: one that
    # disagrees with its C++ (arguments in another order) would make a right call look wrong,
    # and its fix wrong; a missing file is said in its old place, after the calls
    check_kernel_sources(d, found_only=True)
    check_kernel_calls(d)
    check_locals(d)
    check_stale_reads(d)
    check_cascades(d, target)
    check_rtps(d, target)
    check_kernel_sources(d, missing_only=True)
    check_kernel_objects(d)
    check_kernel_arch(d, target)
    check_kernel_costs(d, target)
    check_dma(d, target)  # before balance: a malformed pattern is the more specific error
    check_balance(d)
    check_runtime_order(d)  # after balance: a wait's drains are each run's
    check_core_cycles(d)  # after runtime order: a late fill is the likelier cause
    check_barrier_order(d)  # after both: a drain that never completes is theirs first
    # every invocation after the first: what a barrier starts it with is what the first left
    # (none with a core of forever=False: the design runs once per load, as a run says)
    if stopping_core(d) is None:
        check_barrier_reruns(d)
        check_rtp_reruns(d, target)  # what a slot holds there is what the first left, too
        check_late_reads(d)  # and what the next invocation writes while a core runs on
    # which transfers each wait retires: placement changes nothing it reads, and three checks
    # ask (worked out when the first does, as each did alone)
    retired = cache(partial(retirements, d))
    check_outputs_written(d, retired)
    check_kernel_layouts(d)
    check_kernel_handoffs(d)  # and from kernel to kernel, in a core or core to core
    placed, lowered = place_lowered(d, target)  # a herd that does not fit is refused here first
    check_memtile_channels(d, target, placed)  # whether any placement gives the links theirs
    check_placed_acquires(placed)  # which fifos share memory is known once cores are placed
    check_link_tile_cores(placed)  # which core is on a forward's tile, likewise
    # the objectfifo lowering's plan: names, resources, allocation (placing made it, or not)
    low = lowered if lowered is not None else lower(placed, target)
    check_symbols(placed, low)
    check_repeat_locks(placed, low, target)
    check_memtile_room(d, placed, low, target)  # pins that leave a memtile short, before its use
    table = check_resources(placed, target, low, retired)
    check_bd_lengths(low, target)  # after the memory check: an element too big to fit says so
    routed, result = _allocate_and_route(placed, target, low)
    check_alignment(routed, target)
    repin = _repin(d, target) if result.congested and suggest else ""
    check_routing(routed, target, result.congested, result.cut, result.flows, repin)
    check_unwritten_releases(d)
    return routed, table


def draft(d: Design) -> tuple[Design, Table, list[Congestion]]:
    """Place, allocate and route ``d`` without the resource and routing checks.

    Over-full tiles and congested wires stay in the result for a map to draw; placement errors
    (a herd that does not fit) still raise.
    """
    validate(d)
    target = get_target(d.device)
    placed = place(d, target)
    low = lower(placed, target)
    table = usage(placed, target, low)
    routed, result = _allocate_and_route(placed, target, low)
    return routed, table, result.congested


def _allocate_and_route(placed: Design, target: TargetModel, low: Lowering
                        ) -> tuple[Design, Routing]:
    phys = allocate(placed, target, low)
    result = route(placed, phys, target)
    routed = placed.model_copy(update={"physical": phys.model_copy(
        update={"routes": result.routes, "packet_flows": result.packet_flows})})
    return routed, result


def _repin(d: Design, target: TargetModel) -> str:
    """The fix naming other memtiles for ``d``'s pinned memtile links (on ``target``, its
    device's) when the placer, free to choose, puts them elsewhere and the design then passes
    every check; else nothing."""
    pinned = {i for i, link in enumerate(d.links) if link.via != "core" and link.tile}
    if not pinned:
        return ""
    free = place(d.model_copy(update={"links": tuple(
        link.model_copy(update={"tile": None}) if i in pinned else link
        for i, link in enumerate(d.links))}), target)
    moves = [(link, new.tile) for i, (link, new) in enumerate(zip(d.links, free.links))
             if i in pinned and new.tile != link.tile]
    if not moves or worst(streams(free), target) is not None:
        return ""  # no move, or one that cannot route either (checking it would be slow)
    tiles = {id(link): tile for link, tile in moves}
    trial = d.model_copy(update={"links": tuple(
        link.model_copy(update={"tile": tiles.get(id(link), link.tile)}) for link in d.links)})
    try:
        _check(trial, suggest=False)
    except DesignError:
        return ""
    return ("pin the links to other memtiles, with which the design passes every check: "
            + ", ".join(f"{link_name(link)} via=memtile({tile[0]}) (line {link.loc.line})"
                        for link, tile in moves if tile is not None))
