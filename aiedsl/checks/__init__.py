"""Checks over the design IR. Each raises a :class:`~aiedsl.errors.DesignError` with the line.

:func:`check_design` runs them in order: structure, static hangs, DMA layouts, balance, placement,
resources, then allocation and routing. It returns the placed design, now carrying its
:class:`~aiedsl.ir.Physical` part, and its per-tile usage.
"""

from __future__ import annotations

from aiedsl.checks.dma import check_dma
from aiedsl.checks.hangs import check_hangs
from aiedsl.checks.resources import TileUsage, check_resources, usage
from aiedsl.checks.routing import check_routing
from aiedsl.checks.structure import check_acquires, check_balance, check_kernel_calls, check_links
from aiedsl.ir import Design
from aiedsl.place import allocate, place, route

__all__ = ["TileUsage", "check_design", "usage"]


def check_design(d: Design) -> tuple[Design, dict[tuple[int, int], TileUsage]]:
    """Run every check; return the placed, allocated and routed design and its resource table."""
    check_links(d)
    check_acquires(d)
    check_hangs(d)
    check_kernel_calls(d)
    check_dma(d)  # before balance: a malformed pattern is the more specific error
    check_balance(d)
    placed = place(d)
    table = check_resources(placed)
    phys = allocate(placed, table)
    routes, congested = route(placed, phys)
    check_routing(placed, congested)
    return placed.model_copy(update={"physical": phys.model_copy(update={"routes": routes})}), \
        table
