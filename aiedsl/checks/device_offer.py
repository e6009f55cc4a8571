"""A larger device offered in a fix, checked before it is offered.

Several limits offer a device with more columns or memtiles (``--device npu1_2col``). Moving
there lifts that limit and may meet another: more memtile channels, and then too few shim
channels. The user learnt that only by trying. The design is checked on the offered device
here, once its first check has failed, and the fix says what it would meet there and which
larger device, if any, passes every check.
"""

from __future__ import annotations

import re
from typing import Callable

from aiedsl.errors import DesignError
from aiedsl.ir.design import Design
from aiedsl.targets import DEVICES, TargetModel

OFFER = re.compile(r"--device (\w+)")
"""How a fix offers a device (``--device npu1_2col``)."""

TRIES = 4
"""Larger devices checked after an offered one that fails, narrowest first: each try is a whole
check (placement and routing), paid only on a design that has already failed."""


def weigh_device_offer(d: Design, e: DesignError, check: Callable[[Design], object]) -> None:
    """Add to ``e``'s fix the limit the design meets on the device it offers, when that is
    another limit of the device's size (its own fix offers a device too), and which larger
    device has room for both: ``check`` (every check, without further offers) is run on ``d``
    moved to the offered device and, if it meets such a limit there, on up to :data:`TRIES`
    larger ones. A mistake no device's size lifts (a core's own channels, an unwritten
    element) is not said here: it is the design's next error on any device."""
    offered = OFFER.findall(e.fix or "")
    if len(offered) != 1 or offered[0] not in DEVICES or offered[0] == d.device:
        return
    target, here = DEVICES[offered[0]], DEVICES[d.device]
    failure = _size_limit(d, target, check)
    if failure is None:
        return
    larger = sorted((t for t in DEVICES.values() if t.cols > target.cols),
                    key=lambda t: (t.family != here.family, t.cols))[:TRIES]
    room = next((t for t in larger if _size_limit(d, t, check) is None), None)
    then = (f"--device {room.name} has room for both" if room else
            f"none of {', '.join(t.name for t in larger)} has room for both either" if larger
            else "no larger device is known")
    e.fix = (f"{e.fix}; on {target.name} the design would then meet [{failure.rule}]: "
             f"{failure.message}, while {then}")
    e.args = (e.render(),)


def _size_limit(d: Design, target: TargetModel, check: Callable[[Design], object]
                ) -> DesignError | None:
    """The first check ``d`` fails on ``target`` when a larger device would lift it (its fix
    offers one), None when it passes or fails another check first."""
    try:
        check(d.model_copy(update={"device": target.name}))
    except DesignError as failed:
        return failed if OFFER.search(failed.fix or "") else None
    return None
