"""The cycles one kernel call takes on the core, as the simulator charges them: one place,
read by the run (:mod:`aiedsl.sim.core_program`) and by what the run reports of each kernel
(:func:`aiedsl.sim.stats.kernel_time`)."""

from __future__ import annotations

from collections.abc import Sequence

from aiedsl.ir.core_ops import Arg
from aiedsl.ir.kernel import Kernel
from aiedsl.targets import TargetModel


def call_body_cycles(k: Kernel, args: Sequence[Arg], target: TargetModel) -> int:
    """The cycles of kernel ``k``'s body for a call with ``args``: its own (declared, or its
    profile's for the call's scalars), and no fewer than its cascade words take at the
    target's cascade rate (a call moves its words no faster than the core can). Without the
    fixed cost of a call (:attr:`~aiedsl.targets.timing.TimingModel.kernel_call_cycles`)."""
    body = k.call_cycles(args)
    words = max((t.nbytes * 8 // target.cascade_bits for t in (k.cascade_in, k.cascade_out)
                 if t is not None), default=0)
    if words:
        body = max(body, -(-words // target.cascade_words_per_cycle))
    return body
