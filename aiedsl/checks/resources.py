"""Per-tile resource use of a placed design, and the checks against the target's limits.

:func:`check_resources` runs the checks over the :class:`TileUsage` table of
:mod:`aiedsl.checks.tile_usage` (which says what counts, as mlir-aie's objectfifo lowering
creates it): the shim channels the host ends need on the whole device
(:mod:`aiedsl.checks.shim_totals`), each tile against its kind's limits
(:mod:`aiedsl.checks.tile_limits`), the channels of buffers spilled to a neighbouring memtile
(:mod:`aiedsl.checks.neighbour_channels`), the shim task queues
(:mod:`aiedsl.checks.task_queues`), then the number of host tensors (here: XRT's host buffers,
mlir-aie PR 3252). The names importers take from this module are still found here.
"""

from __future__ import annotations

from collections.abc import Callable

from aiedsl.checks.neighbour_channels import _check_neighbour_channels
from aiedsl.checks.shim_totals import SHOWN_USES as SHOWN_USES  # public here before the split
from aiedsl.checks.shim_totals import _check_shim_totals
from aiedsl.checks.spill_fix import spill_fix
from aiedsl.checks.task_queues import check_task_queues
from aiedsl.checks.task_queues import queue_fix as queue_fix  # the simulator imports it from here
from aiedsl.checks.tile_limits import _check_tile as _check_tile  # tests call it from here
from aiedsl.checks.tile_usage import Coord, TileUsage, usage
from aiedsl.checks.tile_usage import Use as Use  # tests build tables from here
from aiedsl.errors import DesignError
from aiedsl.ir.design import Design
from aiedsl.ir.sequence import Retired
from aiedsl.place.objectfifo import Lowering, lower
from aiedsl.targets import TargetModel


def _core_end_knobs(d: Design) -> dict[tuple[Coord, str], str]:
    """How the design sets the buffers of each fifo end in a core, by (tile, fifo), as words
    with the fifo's line (``consumer_depth=8, line 8``): each buffer takes one of the core's
    BDs, which a BD refusal's fix names."""
    out: dict[tuple[Coord, str], str] = {}
    for f in d.fifos:
        for i, e in enumerate((f.producer, *f.consumers)):
            if e.kind != "core" or e.tile is None:
                continue
            how = (f"consumer_depth={e.depth}" if i and f.depth_per_end else
                   f"depth={f.producer.depth}")
            out[(e.tile, f.name)] = f"{how}, line {f.loc.line}"
    return out


def check_resources(d: Design, target: TargetModel, low: Lowering | None = None,
                    retired: Callable[[], Retired] | None = None) -> dict[Coord, TileUsage]:
    """Check every tile's use against ``target``; return the usage table (``low`` and
    ``retired`` as for :func:`usage`)."""
    table = usage(d, target, low, retired)
    links = {f: k for k, link in enumerate(d.links) for f in (*link.srcs, *link.dsts)}
    repeats = {f.name: f.repeat for f in d.fifos if f.repeat > 1}
    # a channel's memtile buffers are its host_depth= (the link's input end)
    knobs = {f.name: f"channel '{f.channel}' host_depth=1" for f in d.fifos
             if f.repeat > 1 and f.channel is not None}
    _check_shim_totals(table, target)
    plan = low if low is not None else lower(d, target)
    for u in table.values():
        _check_tile(u, target, links, repeats,
                    lambda tile: spill_fix(d, plan, target, tile) if target.cols > 1 else None,
                    knobs, _core_end_knobs(d))
    _check_neighbour_channels(plan, target)
    check_task_queues(d, target, retired)
    if len(d.tensors) > target.runtime_buffers:
        raise DesignError(
            "runtime buffers", f"design '{d.name}' takes {len(d.tensors)} host tensors",
            loc=d.loc, limit=f"{target.runtime_buffers}, the host buffers every aiecc builds a "
            "kernel for (XRT groups 3..7: aiecc's kernels.json declared bo0..bo4 until mlir-aie "
            "PR 3252, and XRT crashes on a sixth there; the firmware translates only those five "
            "addresses)", found=str(len(d.tensors)),
            fix="pack tensors together into fewer host buffers (one tensor holding several, "
            "each fill or drain at its own offset)")
    return table
