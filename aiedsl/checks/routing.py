"""The routing check: every stream found wires, or the design says which switch ports ran out."""

from __future__ import annotations

from aiedsl.errors import DesignError
from aiedsl.ir.design import Design
from aiedsl.place.route import Congestion, route
from aiedsl.targets import TargetModel
from aiedsl.targets.model import OPPOSITE, STEP


def check_routing(d: Design, target: TargetModel, congested: list[Congestion]) -> None:
    """Raise a DesignError naming the most congested wires and the flows competing for them,
    or the packet flows past the packet ids there are (:attr:`TargetModel.packet_ids`)."""
    routes = d.physical.routes if d.physical else ()
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
        related=[(f.label, f.loc) for f in worst.flows],
        fix="spread the streams over more columns: anchor herds apart, pin links to other "
            "memtiles (via=memtile(col)) or host ends to other shims (shim=shim(col)), or "
            "merge fifos that travel together"
            + ("; or let streams share wires by packet id: @design(..., flows=\"packet\") "
               "routes" if _packet_routes(d, target) else ""))


def _packet_routes(d: Design, target: TargetModel) -> bool:
    """Would the same streams route as packet flows (mlir-aie's router lets packet flows that
    share a port share wires)? Only then is ``flows="packet"`` worth suggesting."""
    if d.flows != "circuit" or d.physical is None:
        return False
    return not route(d.model_copy(update={"flows": "packet"}), d.physical, target).congested
