"""What one invocation of a loaded design leaves the next: the barriers' locks at the value the
runtime sequence set last (a lock's initial value is written only at load). The barrier and rtp
checks of every invocation after the first (:mod:`aiedsl.checks.reruns`) start from here."""

from __future__ import annotations

from typing import NamedTuple

from aiedsl.ir.design import Design
from aiedsl.ir.runtime import SetBarrier


CARRIED = ("a lock takes its initial value only when the design is loaded (mlir-aie's "
            "AIERTControl::addInitConfig writes aie.lock's init into the array's configuration), "
            "while each invocation runs the runtime sequence, whose aiex.set_lock replaces the "
            "value: every invocation after the first starts with the value the sequence set last")
"""Why a barrier starts the second invocation elsewhere than the first."""


class Left(NamedTuple):
    """What an invocation leaves in a barrier's locks for the next one."""

    value: int
    """The value the sequence's last set gives the locks."""
    set: SetBarrier
    """That set."""
    initial: int
    """The barrier's initial value, which only the load gives."""


def left_over(d: Design) -> dict[str, Left]:
    """Per barrier whose locks the runtime sequence leaves at another value than its initial
    one: that value, and the last set, which leaves it for the next invocation."""
    out: dict[str, Left] = {}
    for b in d.barriers:
        last = next((op for op in reversed(d.runtime)
                     if isinstance(op, SetBarrier) and op.barrier == b.name), None)
        if last is not None and last.value != b.init and b.name not in out:
            out[b.name] = Left(last.value, last, b.init)
    return out


def next_invocation(d: Design, left: dict[str, Left]) -> Design:
    """``d`` as every invocation after the first finds it: each barrier of ``left`` starting at
    what the sequence leaves (the cores at the start of their programs and the fifos' locks
    where the load put them, as in the first)."""
    return d.model_copy(update={"barriers": tuple(
        b.model_copy(update={"init": left[b.name].value}) if b.name in left else b
        for b in d.barriers)})


def where_it_starts(name: str, end: Left) -> str:
    """Where barrier ``name`` starts every invocation after the first, said for a refusal."""
    return (f"barrier '{name}' starts each invocation after the first at {end.value}, where "
            f"the sequence's last set (line {end.set.loc.line}) leaves it, not at its initial "
            f"{end.initial}")
