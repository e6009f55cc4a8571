"""What a run gives back: :class:`RunResult` (outputs, their checks, the timing) and, for a run
on the NPU, its :class:`Measured` latencies.

:meth:`aiedsl.api.Artifacts.run` and ``aiedsl run`` make them; every field is data, and what the
command line prints is rendered from the fields (``lines()``). ``aiedsl.RunResult`` and
``aiedsl.api.RunResult`` name the same class.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

import numpy as np

from aiedsl.compare import OutputCheck, outputs_summary, run_lines
from aiedsl.sim.summary import Timing, significant


@dataclass(frozen=True)
class Measured:
    """Latencies measured on the NPU (host wall clock, launch to completion)."""

    latencies: list[float]
    """Seconds per timed run."""
    warmup: int
    """Untimed runs made first."""
    ops: float
    """Operations per run the kernels declare (0 when none declare any)."""
    ops_unit: str = "GOPS (GFLOPS for float kernels)"
    """What :attr:`gops` counts (:func:`aiedsl.sim.summary.ops_unit`)."""
    rewritten: tuple[str, ...] = ()
    """The tensors updated in place (filled from and drained into), written to the device again
    before every run after the first, outside the timed span: a run reads what the one before
    it left there otherwise."""

    @property
    def seconds(self) -> float:
        """Median latency."""
        return statistics.median(self.latencies)

    @property
    def gops(self) -> float:
        """Throughput at the median latency, in :attr:`ops_unit`."""
        return self.ops / self.seconds / 1e9 if self.ops else 0.0

    def lines(self) -> list[str]:
        """Human-readable summary, rendered from the fields."""
        lat = self.latencies
        out = [f"measured on the NPU: {len(lat)} run(s) after {self.warmup} warm-up: latency "
               f"min {min(lat) * 1e6:.1f} us, median {self.seconds * 1e6:.1f} us, max "
               f"{max(lat) * 1e6:.1f} us (host wall clock, launch to completion)"]
        if self.rewritten:
            names = " and ".join(f"'{n}'" for n in self.rewritten)
            out.append(f"{names} {'is' if len(self.rewritten) == 1 else 'are'} updated in place: "
                       "written and synced to the device again before each run, outside the "
                       "timed span, so that every run starts from the inputs")
        if self.ops:
            out.append(f"throughput at the median: {significant(self.gops)} {self.ops_unit}")
        return out


@dataclass
class RunResult:
    """One run: outputs, their comparison with the reference, and its timing, as fields."""

    target: str
    """``"npu"`` or ``"sim"``."""
    why: str
    """Why this target (``"NPU device 0"``, ``"no NPU: pyxrt is not importable ..."``)."""
    inputs: dict[str, np.ndarray]
    outputs: dict[str, np.ndarray]
    checks: list[OutputCheck]
    """Per output: passed, worst element, got, want, error and tolerance."""
    timing: Timing | Measured
    """Simulated :class:`~aiedsl.sim.summary.Timing` (cycles, utilisation, bottleneck ...) or,
    on the NPU, :class:`Measured` latencies."""

    @property
    def passed(self) -> bool:
        """Outputs were compared with the reference and every one matches. False when nothing
        was compared (``check=False``, or ``compute=False``, whose outputs mean nothing, leave
        :attr:`checks` empty): a sweep keeping the runs that passed must not keep those."""
        return bool(self.checks) and all(c.passed for c in self.checks)

    @property
    def seconds(self) -> float:
        """Simulated time of one run, or the median measured latency."""
        return self.timing.seconds

    @property
    def gops(self) -> float:
        """Throughput in giga-operations per second (GFLOPS for float kernels: the timing's
        ``ops_unit`` says which)."""
        return self.timing.gops

    @property
    def latencies(self) -> list[float]:
        """NPU only: seconds per measured run (empty on the simulator)."""
        return self.timing.latencies if isinstance(self.timing, Measured) else []

    def lines(self) -> list[str]:
        """What the command line prints: one line per output, then the timing, indented."""
        return run_lines(self.checks, self.timing)

    def __repr__(self) -> str:
        # short: the fields' reprs (inputs, outputs, every channel's busy time) flood a notebook
        return (f"RunResult({self.target}: {outputs_summary(self.outputs, self.checks)}; "
                f"{significant(self.seconds * 1e6)} us)")

    def __str__(self) -> str:
        """What ``print(result)`` shows: :meth:`lines`, as the command line prints them (the
        one-line repr said FAIL and not why: a transformer engineer)."""
        return "\n".join(self.lines())
