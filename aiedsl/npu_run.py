"""Running a build on the NPU: where a run goes (:func:`choose_target`: the NPU when there is
one of the design's generation and the design compiles here, the simulator otherwise) and the
run there (:func:`run_on_npu`: warm-up and timed launches, outputs compared, latencies
measured).

:meth:`aiedsl.api.Artifacts.run` calls both; the session between them is pyxrt's
(:class:`~aiedsl.toolchain.xrt.NpuSession`, imported only once an NPU is looked for).
"""

from __future__ import annotations

from contextlib import nullcontext
from pathlib import Path
from typing import Any, Callable

import numpy as np

from aiedsl.builddir.build import held
from aiedsl.errors import ToolchainError
from aiedsl.ir.design import Design
from aiedsl.ir.loc import Loc
from aiedsl.ir.program import stopping_core
from aiedsl.lang.design import DesignHandle
from aiedsl.output_checks import compare_outputs
from aiedsl.run_result import Measured, RunResult
from aiedsl.sim.summary import ops_unit
from aiedsl.toolchain.compile import Compiled


def choose_target(target: str, loc: Loc, design: Design, path: Path | None,
                  compile_for: Callable[[bool], Compiled]) -> tuple[str, str, Any]:
    """Where a run on ``target`` runs, why, and the NPU session when there; ``loc`` is
    the Python line that asked (none for the command line's). ``design`` and ``path`` are the
    build's placed design and directory; ``compile_for(npu_run)`` compiles it (``npu_run``: for
    a run asked of the NPU, which its errors then say)."""
    from aiedsl.toolchain.generation import read_npu_name, unchecked, wrong_generation
    from aiedsl.toolchain.xrt import NpuSession, find_npu, import_pyxrt

    if target == "sim":
        return "sim", "running on the simulator (--target sim)", None
    device, why = find_npu()
    if device is None:
        if target == "npu":
            raise ToolchainError("npu", f"no NPU: {why}", exit_code=4,
                                 loc=loc if loc.line else None,
                                 fix="run on the simulator: " + (
                                     "target='sim'" if loc.line else "--target sim"))
        return "sim", f"no NPU ({why}): running on the simulator", None
    # An NPU of another generation than the design's cannot run it: told before compiling
    npu = read_npu_name(import_pyxrt(), device)
    wrong = wrong_generation(npu, design.name, design.device)
    if wrong is not None:
        if target == "npu":
            raise wrong
        return "sim", f"{wrong.message}: running on the simulator", None
    why = f"{why}, {npu.describe()}{unchecked(npu, design.name, design.device)}"
    # The lock from the compile (a cache hit too: it checks the build is still this one)
    # until the xclbin and instructions are loaded: no build swaps others in between.
    # (Without a build directory, compile() says there is nothing to compile.)
    with held(path) if path is not None else nullcontext():
        try:
            compiled = compile_for(target == "npu")
        except ToolchainError as e:
            if target == "npu" or e.exit_code != 4:
                raise
            return "sim", f"an NPU is present but the design cannot be compiled here " \
                          f"({e.message}): running on the simulator", None
        assert path is not None
        return "npu", f"running on the NPU ({why})", NpuSession(path, compiled.manifest,
                                                                 device=device, npu=npu)


def run_on_npu(session: Any, design: Design, handle: DesignHandle, ins: dict[str, np.ndarray],
               why: str, check: bool, iters: int, warmup: int) -> RunResult:
    """Run ``design`` (``handle``'s, placed) in ``session`` on inputs ``ins``: ``warmup``
    untimed runs, then ``iters`` timed ones, the outputs compared with ``handle``'s reference
    when ``check``; ``why`` is what the result says of the target."""
    session.write_inputs(ins)
    # A tensor filled from and drained into holds the last run's output, which the next
    # run would read as its input: written again before each run after the first.
    in_place = [b["name"] for b in session.manifest.get("buffers", [])
                if b["direction"] == "inout"]
    runs = 0

    def launch() -> float:
        nonlocal runs
        if runs and in_place:
            session.write_inputs(ins, only=in_place)  # before the launch: not timed
        runs += 1
        return session.launch()

    first = None
    # (a design whose core runs once is launched once: a second launch would wait for it)
    if any(b.init is not None for b in design.locals) and stopping_core(design) is None:
        # A local holds its initial value at load only: later runs start from what the run
        # before left, so the run the reference describes is the first. It counts as a
        # warm-up run (its latency includes loading).
        launch()
        first = session.read_outputs()
    untimed = max(warmup, 1) if first is not None else warmup
    for _ in range(untimed - (first is not None)):
        launch()
    latencies = [launch() for _ in range(max(iters, 1))]
    # without locals every run computes the same from the same inputs: check the last
    outputs = first if first is not None else session.read_outputs()
    checks = []
    if check:
        expected = handle.expected({n: ins[n] for n in handle.inputs})
        checks = compare_outputs(design, {n: outputs[n] for n in handle.outputs},
                                 expected, {n: ins[n] for n in handle.inputs},
                                 nonfinite=handle.nonfinite)
    measured = Measured(latencies, untimed, float(session.manifest.get("ops_per_run", 0)),
                        ops_unit(design), tuple(in_place) if runs > 1 else ())
    return RunResult("npu", why, ins, outputs, checks, measured)
