"""``--stats FILE``: a run's results as JSON, for dashboards and regression gates.

Everything ``aiedsl sim`` and ``aiedsl run`` print, as numbers: the comparison of each output
and the timing (simulated :class:`~aiedsl.sim.summary.Timing`, or the latencies measured on the
NPU). Strict JSON: a NaN or an infinity (a worst element may be one) is written as the string
``"nan"``, ``"inf"`` or ``"-inf"``. Times are in seconds, sizes in bytes, utilisations are
fractions (0..1). The file begins with its ``"generator": "aiedsl ..."``, which is how aiedsl
knows a file it may replace.

>>> stats = run_stats(result, "passthrough", "npu1_1col", seed=0)   # doctest: +SKIP
>>> stats["passed"], stats["timing"]["bottleneck"]["kind"]          # doctest: +SKIP
(True, 'runtime')
"""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aiedsl.cli.stopped_stats import is_aiedsl_stats
from aiedsl.compare import OutputCheck
from aiedsl.errors import DesignError, exit_code_of
from aiedsl.sim import SimResult
from aiedsl.sim.summary import Timing
from aiedsl.version import __version__

if TYPE_CHECKING:
    from aiedsl.run_result import Measured, RunResult



def _number(x: float) -> float | str:
    """``x`` as strict JSON takes it: non-finite values as strings."""
    if math.isfinite(x):
        return x
    return "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")


def _output(c: OutputCheck) -> dict[str, Any]:
    # an exact match has no worst element: got, want and error are then null
    worst = c.worst_index is not None
    return {"name": c.name, "passed": c.passed,
            "worst_index": list(c.worst_index) if c.worst_index is not None else None,
            "got": _number(c.got) if worst else None, "want": _number(c.want) if worst else None,
            "error": _number(c.error) if worst else None, "tolerance": c.tolerance,
            "wrong": c.wrong,
            "wrong_region": None if c.region is None else [list(r) for r in c.region],
            "note": c.note, "hints": list(c.hints)}


def _simulated(t: Timing) -> dict[str, Any]:
    b = t.bottleneck
    return {
        "kind": "simulated", "seconds": t.seconds, "device_seconds": t.device_seconds,
        "invocation_seconds": t.invocation_s, "cycles": t.cycles,
        "device_cycles": t.device_cycles, "clock_hz": t.clock_hz, "ops": t.ops,
        "gops": t.gops, "dram_bytes": t.dram_bytes, "dram_read_bytes": t.dram_read_bytes,
        "dram_write_bytes": t.dram_write_bytes, "dram_utilisation": t.dram_utilisation,
        "dram_read_utilisation": t.dram_read_utilisation,
        "dram_write_utilisation": t.dram_write_utilisation,
        "core_busy": dict(sorted(t.core_busy.items())),
        "channel_busy": dict(sorted(t.channel_busy.items())),
        "channel_moving": dict(sorted(t.channel_moving.items())),
        "bottleneck": {**dataclasses.asdict(b), "sentence": b.sentence()},
        "after_wait": _after_wait(t),
        "profiled_kernels": list(t.profiled), "assumed": t.assumed, "task_basis": t.task_basis,
        "kernel_time": [dataclasses.asdict(k) for k in t.kernel_time]}


def _after_wait(t: Timing) -> dict[str, Any] | None:
    """A core's work past the host's wait and what it does to back-to-back invocations; None
    when every core is done by the wait (back to back, invocations are then ``seconds``
    apart)."""
    if not t.after_cycles:
        return None
    b = t.back_to_back_cycles
    return {"core": t.after_core, "seconds": t.after_cycles / t.clock_hz,
            # all of it the next invocation's first calls (the core's program loops)
            "next_invocation": t.after_next_pass,
            "until_seconds": {n: c / t.clock_hz for n, c in sorted(t.core_until.items())},
            "back_to_back_seconds": None if b is None else b / t.clock_hz,
            "back_to_back_gops": None if b is None else t.back_to_back_gops,
            "back_to_back_busy": t.back_to_back_busy,
            # (no back-to-back runs at all: a core of forever=False stops after one)
            "runs_once": t.runs_once}


def _measured(t: Measured) -> dict[str, Any]:
    return {"kind": "measured", "seconds": t.seconds, "latencies_seconds": list(t.latencies),
            "warmup": t.warmup, "ops": t.ops, "gops": t.gops}


def run_stats(result: RunResult | SimResult, design: str, device: str, *, seed: int | None,
              kernels: str | None = None, inputs: str | None = None) -> dict[str, Any]:
    """The stats document of ``result``, a run of ``design`` on ``device`` with inputs of
    ``seed``, or of the file ``inputs`` (``--inputs``; ``seed`` is then null): what ran it
    (``target``, ``why``; for a simulation ``kernels``, ``"reference"`` or ``"native"``: what
    computed the kernel calls), whether it passed, each output's comparison, each kernel call
    that differs from its kernel's reference (``calls``, when there are any) and the timing
    (``timing.kind``: ``"simulated"`` or ``"measured"``). ``result`` may be what
    :func:`aiedsl.simulate` returns, too (a CI integrator's tester: it had no target)."""
    timing = result.timing
    target, why = (result.target, result.why) if not isinstance(result, SimResult) else (
        "sim", "aiedsl.simulate() runs the simulator")
    drawn: dict[str, Any] = {"seed": seed} if inputs is None else {"seed": None,
                                                                    "inputs": inputs}
    return {"generator": f"aiedsl {__version__}", "design": design, "device": device,
            "target": target, "why": why,
            **({"kernels": kernels} if kernels is not None else {}), **drawn,
            "passed": result.passed,
            "outputs": [_output(c) for c in result.checks if not c.call],
            # kernel calls that differ from their references (sim --kernels native), apart:
            # a dashboard keyed by output name must not count them as outputs (a reviewer)
            **({"calls": calls} if (calls := [_output(c) for c in result.checks if c.call])
               else {}),
            "timing": _simulated(timing) if isinstance(timing, Timing) else _measured(timing)}


def failure_stats(e: DesignError, design: str, device: str | None) -> dict[str, Any]:
    """The stats document of a run that ended in ``e`` (exit 2 to 5: a design error, a hang, a
    missing or failing tool) before it had results: ``passed`` false and the ``error``, so that
    a dashboard reads this run's end, not an earlier run's file. Its line is the error's, or
    a deadlock's first step's."""
    loc = e.loc if e.loc is not None else getattr(e, "first_loc", None)
    return {"generator": f"aiedsl {__version__}", "design": design, "device": device,
            "passed": False,
            "error": {"exit_code": exit_code_of(e), "rule": e.rule, "message": e.message,
                      "file": loc.file if loc is not None else None,
                      "line": loc.line if loc is not None else None}}


def check_stats(path: str | Path, design: str) -> None:
    """Refuse (DesignError "output file") a path :func:`write_stats` would refuse: called
    before the run, so a refusal costs nothing."""
    from aiedsl.builddir.outfile import check_file

    check_file(path, ours=is_aiedsl_stats, option="--stats", example=f"{design}.stats.json")


def write_stats(stats: dict[str, Any], path: str | Path) -> None:
    """Write ``stats`` (:func:`run_stats`) to ``path``, whole or not at all."""
    from aiedsl.builddir.outfile import write_file

    design = stats["design"]
    write_file(path, json.dumps(stats, indent=1, allow_nan=False) + "\n", design=design,
               ours=is_aiedsl_stats, option="--stats", example=f"{design}.stats.json")
