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
    another limit of the device's size (its own fix offers a device too), and the larger
    device on which it passes every check: ``check`` (every check, without further offers) is
    run on ``d`` moved to the offered device and, if it meets such a limit there, on up to
    :data:`TRIES` larger ones. A mistake no device's size lifts (a core's own channels, an
    unwritten element) is not said here: it is the design's next error on any device."""
    offered = OFFER.findall(e.fix or "")
    if len(offered) != 1 or offered[0] not in DEVICES or offered[0] == d.device:
        return
    target, here = DEVICES[offered[0]], DEVICES[d.device]
    kind, failure = _outcome(d, target, check)
    if kind != "size" or failure is None:
        return
    larger = sorted((t for t in DEVICES.values() if t.cols > target.cols),
                    key=lambda t: (t.family != here.family, t.cols))[:TRIES]
    kinds: list[str] = []
    room = None
    for t in larger:
        kinds.append(_outcome(d, t, check)[0])
        if kinds[-1] == "pass":
            room = t
            break
    if room is not None:
        other = f" (an {room.family}: another NPU generation)" if room.family != here.family \
            else ""
        then = f", while --device {room.name}{other} passes every check"
    elif kinds and all(k == "size" for k in kinds):
        then = (f", and none of {', '.join(t.name for t in larger)} has room for both "
                "either")
    else:  # a larger device fails another check: what it lacks is not only room
        then = ""
    e.fix = (f"{e.fix}; on {target.name} the design would then meet [{failure.rule}]: "
             f"{failure.message}{then}")
    e.args = (e.render(),)


def _outcome(d: Design, target: TargetModel, check: Callable[[Design], object]
             ) -> tuple[str, DesignError | None]:
    """How ``d`` fares on ``target``: ``"pass"``, ``"size"`` (it fails a check whose fix offers
    a larger device, with that error), ``"other"`` (it fails another check) or ``"unknown"``
    (the check itself failed: the user's error stands as it is)."""
    try:
        check(d.model_copy(update={"device": target.name}))
    except DesignError as failed:
        return ("size", failed) if OFFER.search(failed.fix or "") else ("other", failed)
    except Exception:  # noqa: BLE001 (a check on a device the user did not ask for: its own
        return "unknown", None  # failure must not replace the error the user is shown)
    return "pass", None
