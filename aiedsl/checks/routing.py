"""The routing check: every stream found wires, or the design says which switch ports ran out."""

from __future__ import annotations

from aiedsl.errors import DesignError
from aiedsl.ir.design import Design
from aiedsl.ir.physical import Connect, Route
from aiedsl.place.cuts import Cut, wires_by_side
from aiedsl.place.route import Congestion, Flow, route
from aiedsl.targets import DEVICES, TargetModel
from aiedsl.targets.model import OPPOSITE, STEP


PACKET_FIFOS = ("packet-switched fifos between cores, and between cores and the host, only: "
                "mlir-aie's packet-sw-objFifos \"currently only supports Object FIFOs between "
                "Workers, and between Workers and external memory\" (programming guide, section "
                "2a, Object FIFO Compiler Flags; mem tiles are mlir-aie issue 2591, open)")
"""What mlir-aie's packet-switched objectfifo lowering supports, as its programming guide says."""


def check_packet_links(d: Design) -> None:
    """``flows="packet"`` is refused for a design with a link through a memtile: mlir-aie's
    packet-switched objectfifo lowering (``--packet-sw-objFifos``) supports object fifos between
    cores, and between cores and the host, only (:data:`PACKET_FIFOS`)."""
    if d.flows != "packet":
        return
    links = [link for link in d.links if link.via == "memtile"]
    if not links:
        return
    link = links[0]
    where = f"memtile {link.tile}" if link.tile is not None else "a memtile"
    more = len(links) - 1
    raise DesignError(
        "packet flows", f'flows="packet" with a link through a memtile: the {link.kind} of '
        f"{_quoted(link.srcs)} to {_quoted(link.dsts)} through {where}", loc=link.loc,
        limit=PACKET_FIFOS,
        found=f"{link.kind} {_quoted(link.srcs)} -> {_quoted(link.dsts)} via {where}"
              + ("" if not more else f" (and {more} more link{'s' if more > 1 else ''} "
                 "through memtiles)"),
        fix="use circuit-switched flows for this design (leave flows= out), or route without "
            "the memtile: fifos between the shim and the cores, or between cores, directly")


def _quoted(names: tuple[str, ...]) -> str:
    return ", ".join(f"'{n}'" for n in names)


def check_routing(d: Design, target: TargetModel, congested: list[Congestion],
                  cut: Cut | None = None, flows: tuple[Flow, ...] = (), repin: str = "") -> None:
    """Raise a DesignError naming the packet flows past the packet ids there are
    (:attr:`TargetModel.packet_ids`), or, when no routing is legal, the proof: the rectangle of
    tiles ``cut`` that more of ``flows`` must cross than wires do, or else the most congested
    wires after the router's last iteration and the flows competing for them. ``repin`` is a
    fix aiedsl checked: other memtiles for the pinned links."""
    routes = d.physical.routes if d.physical else ()
    for r in routes:
        _check_turnaround(d, r)
    ids = [r for r in routes if r.packet_id is not None]
    most = target.packet_ids
    if len(ids) > most:
        extra = ids[most]
        raise DesignError(
            "packet ids", f"{len(ids)} fifo streams need a packet id each, and there are "
            f"{most}", loc=d.fifo(extra.fifo).loc,
            limit=f"packet ids 0-{most - 1} (mlir-aie's objectFifo lowering with "
            "packet-sw-objFifos: \"max number of packet IDs reached\")",
            found=f"{len(ids)} streams; '{extra.fifo}' would take id {most}",
            fix="merge fifos that travel together, or use circuit-switched flows (leave "
            "flows= out) where the wires suffice")
    if not congested:
        return
    if cut is not None:
        _no_wires(d, target, cut, flows, repin)
    worst = max(congested, key=lambda c: (len(c.flows) - c.capacity, -congested.index(c)))
    (col, row), direction = worst.wire
    dc, dr = STEP[direction]
    there = (col + dc, row + dr)
    noun = {"core": "core tile", "memtile": "memtile", "shim": "shim tile"}
    here, far = target.kind_of((col, row)), target.kind_of(there)
    assert here is not None and far is not None, "a wire joins two tiles of the device"
    here_kind, there_kind = noun[here], noun[far]
    others = len(congested) - 1
    last = worst.capacity - 1
    raise DesignError(
        "stream routing",
        f"no legal routing on {d.device}: {len(worst.flows)} streams need the wires from "
        f"{here_kind} {(col, row)} {direction} to {there_kind} {there}"
        + ("" if not others else " (1 more bundle of wires is over too)" if others == 1
           else f" ({others} more bundles of wires are over too)"),
        loc=worst.flows[0].loc,
        limit=f"{worst.capacity} wires (master ports {direction.capitalize()} 0-{last} of "
              f"{(col, row)}, slave ports {OPPOSITE[direction].capitalize()} 0-{last} of "
              f"{there})",
        found=f"{len(worst.flows)} streams",
        related=[(f.label, f.loc) for f in worst.flows], fix=repin or _spread(d, target))


def _spread(d: Design, target: TargetModel) -> str:
    """The fix for streams that need more wires than a part of the array has."""
    return (("spread the streams over more columns: anchor herds apart, pin links to other "
             "memtiles (via=memtile(col)) or host ends to other shims (shim=shim(col)), or "
             "merge fifos that travel together" if target.cols > 1 else
             "merge fifos that travel together, or use a device with more columns to spread "
             f"the streams over{_wider(target)}")
            + ("; or let streams share wires by packet id: @design(..., flows=\"packet\") "
               "routes" if _packet_routes(d, target) else ""))


def _no_wires(d: Design, target: TargetModel, cut: Cut, flows: tuple[Flow, ...],
              repin: str) -> None:
    """The cut as the proof that no routing exists."""
    (c0, c1), (r0, r1) = cut.cols, cut.rows
    kinds = [target.kind_of((c0, r)) for r in range(r0, r1 + 1)]
    noun = {"core": "core tile", "memtile": "memtile", "shim": "shim tile"}
    many = "s" if c0 != c1 or kinds.count(kinds[0]) > 1 else ""
    names = [noun[k] + many for k in dict.fromkeys(kinds) if k is not None]
    cols = f"column {c0}" if c0 == c1 else f"columns {c0}-{c1}"
    rows = f"row {r0}" if r0 == r1 else f"rows {r0}-{r1}"
    where = f"{cols}, {rows} ({' and '.join(names)})"
    verb, way = ("enter", "lead in") if cut.entering else ("leave", "lead out")
    crossing = [flows[k] for k in cut.streams]
    sides = ", ".join(f"{n} {side}" for side, n in wires_by_side(cut, target))
    raise DesignError(
        "stream routing",
        f"no legal routing on {d.device}: {len(crossing)} streams must {verb} the tiles of "
        f"{where}, and {cut.wires} wires {way}",
        loc=crossing[0].loc,
        limit=f"{cut.wires} wires {'into' if cut.entering else 'out of'} tiles {(c0, r0)} to "
              f"{(c1, r1)}: {sides} (a wire carries one stream)",
        found=f"{len(crossing)} streams",
        related=[(f.label, f.loc) for f in crossing], fix=repin or _spread(d, target))


def _check_turnaround(d: Design, r: Route) -> None:
    """A route passes each switch once: in by a slave port, out by a master.

    mlir-aie's router sees a port as one node whether a stream arrives on it or leaves by it,
    so a shortest path may chain two connections of one switch through a port, in by ``A``,
    out by ``P``, in again by ``P``, out by ``C``; the data leaving by master ``P`` (to the
    core, or to a neighbour) never comes back in by slave ``P``, and the stream is lost
    without an error (mlir-aie issue 2689; PR 3592 gives the router's ports a direction). A
    switch's FIFO ports are the exception: master FIFO n feeds slave FIFO n inside the switch.
    """
    ends = {x.direction: x for x in d.physical.channels if x.fifo == r.fifo} \
        if d.physical else {}
    send, recv = ends.get("MM2S"), ends.get("S2MM")
    # the stream enters its first switch by the sending DMA's port, also where a receiver on
    # the same channel number leaves it (connect<DMA : 1, DMA : 1>): not a turn
    source = (r.src, ("DMA", send.channel)) if send is not None else None
    at: dict[tuple[tuple[int, int], tuple[str, int]], Connect] = {}
    for c in r.connects:
        if c.switch == "switchbox" and c.dst[0] != "FIFO":
            at[(c.tile, c.dst)] = c
    for c in r.connects:
        first = at.get((c.tile, c.src)) if c.switch == "switchbox" else None
        if first is None or (c.tile, c.src) == source:
            continue
        p = f"{c.src[0]} {c.src[1]}"
        f = d.fifo(r.fifo)
        same_tile = (send is not None and recv is not None and send.tile == recv.tile
                     and send.channel != recv.channel)
        fix = (f"a core tile's switch joins a DMA output only to the DMA input of the same "
               f"number, and '{r.fifo}' leaves by MM2S {send.channel} for S2MM {recv.channel} "
               f"of {send.tile}: declare the fifos so that it takes the same channel both ways "
               "(a tile numbers its MM2S channels, and its S2MM channels, in the order its "
               "fifos are declared), " + (
                   "or make the layout change in the core's kernel so that the fifo stays in "
                   "the tile's memory" if any(e.dims for e in (f.producer, *f.consumers)) else
                   "or let the core take the forward's input itself")
               if same_tile and send is not None and recv is not None else
               "pin the fifo's ends to other tiles so that its stream takes another path")
        raise DesignError(
            "stream routing",
            f"the route of '{r.fifo}' turns round in port {p} of the switch of {c.tile}: "
            f"in by {first.src[0]} {first.src[1]}, out by {p}, in again by {p}, out by "
            f"{c.dst[0]} {c.dst[1]}; what leaves by a port never comes back in by it, so the "
            "stream is lost and the design hangs without an error",
            loc=f.loc, limit="a stream crosses each switch once, in by a slave port and out "
            "by a master (the route mlir-aie's router before PR 3592 makes here; mlir-aie "
            "issue 2689)", found=f"{_shown(first)} and {_shown(c)} in the switch of {c.tile}",
            fix=fix)


def _wider(target: TargetModel) -> str:
    """`` (--device npu1_2col)``: the narrowest device of ``target``'s family with more
    columns, or nothing."""
    wider = sorted((t for t in DEVICES.values()
                    if t.family == target.family and t.cols > target.cols), key=lambda t: t.cols)
    return f" (--device {wider[0].name})" if wider else ""


def _shown(c: Connect) -> str:
    """``connect<DMA : 0, Core : 0>``, as the MLIR writes it."""
    return f"connect<{c.src[0]} : {c.src[1]}, {c.dst[0]} : {c.dst[1]}>"


def _packet_routes(d: Design, target: TargetModel) -> bool:
    """Would the same streams route as packet flows (mlir-aie's router lets packet flows that
    share a port share wires)? Only then is ``flows="packet"`` worth suggesting."""
    if d.flows != "circuit" or d.physical is None:
        return False
    if any(link.via == "memtile" for link in d.links):  # refused as packet flows
        return False
    return not route(d.model_copy(update={"flows": "packet"}), d.physical, target).congested
