"""The simulator: runs a design's IR with no hardware, checks it against numpy, times it.

Example
-------
>>> from aiedsl.loader import load_design                         # doctest: +SKIP
>>> from aiedsl.sim import simulate
>>> result = simulate(load_design("designs/gemm_bf16.py"), seed=0)
>>> result.passed, result.timing.seconds
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from aiedsl.checks import check_design
from aiedsl.lang.design import DesignHandle
from aiedsl.sim.compare import OutputCheck, compare, make_inputs, poisoned
from aiedsl.sim.explain import Deadlock, explain
from aiedsl.sim.machine import Machine, SimFault, build_machine
from aiedsl.sim.stats import Timing, timing, write_trace

__all__ = ["Deadlock", "SimFault", "SimResult", "simulate"]


@dataclass
class SimResult:
    """A simulated run: outputs, their comparison with the reference, and its timing."""

    inputs: dict[str, np.ndarray]
    outputs: dict[str, np.ndarray]
    checks: list[OutputCheck]
    timing: Timing
    machine: Machine

    @property
    def passed(self) -> bool:
        """Every output matches the reference."""
        return all(c.passed for c in self.checks)


def simulate(handle: DesignHandle, inputs: dict[str, np.ndarray] | None = None, *,
             seed: int = 0, clock_hz: float | None = None, trace: str | None = None,
             check: bool = True) -> SimResult:
    """Run ``handle``'s design on the simulator; raises :class:`Deadlock` when it hangs.

    ``inputs`` default to seeded random tensors; with ``check`` the outputs are compared with the
    design's numpy reference. ``trace`` writes a Chrome trace-event JSON file.
    """
    placed, _ = check_design(handle.ir)
    ins = inputs if inputs is not None else make_inputs(placed, seed)
    host: dict[str, np.ndarray] = {}
    for t in placed.tensors:
        host[t.name] = (np.array(ins[t.name], copy=True).reshape(t.type.shape)
                        if t.name in ins else poisoned(placed, t.name))
    m = build_machine(placed, host, handle.kernels, trace=trace is not None)
    m.engine.run()
    if m.runtime is None or not m.runtime.finished:
        raise explain(m)
    tm = timing(m, clock_hz)
    if trace is not None:
        write_trace(m, tm.clock_hz, trace)
    outputs = {n: host[n] for n in handle.outputs}
    checks = []
    if check:
        expected = handle.expected({n: ins[n] for n in handle.inputs})
        checks = [compare(n, outputs[n], expected[n], placed.tensor(n).type.dtype)
                  for n in handle.outputs]
    return SimResult(ins, outputs, checks, tm, m)
