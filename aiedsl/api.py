"""The Python API, mirroring the command line: build a design, then run what was built.

Example
-------
>>> import aiedsl, numpy as np                                    # doctest: +SKIP
>>> art = aiedsl.build("designs/gemm_bf16.py", defines={"M": 256})  # doctest: +SKIP
>>> result = art.run(A, B)          # the NPU when there is one, else the simulator
>>> result.outputs["C"], result.passed, result.target
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

from aiedsl.checks.resources import TileUsage
from aiedsl.errors import ToolchainError
from aiedsl.ir import Design
from aiedsl.lang.design import DesignHandle
from aiedsl.sim.compare import OutputCheck, compare, make_inputs
from aiedsl.toolchain.compile import Compiled, Progress, compile_build
from aiedsl.toolchain.discover import Tools, find_tools


@dataclass
class RunResult:
    """One run's outputs, their comparison with the reference, and how long it took."""

    target: str
    """``"npu"`` or ``"sim"``."""
    why: str
    """Why this target (``"NPU device 0"``, ``"no NPU: pyxrt is not importable ..."``)."""
    inputs: dict[str, np.ndarray]
    outputs: dict[str, np.ndarray]
    checks: list[OutputCheck]
    lines: list[str] = field(default_factory=list)
    """Timing lines to print (simulated time, or measured latency on the NPU)."""
    latencies: list[float] = field(default_factory=list)
    """NPU only: seconds per measured iteration."""

    @property
    def passed(self) -> bool:
        """Every output matches the reference."""
        return all(c.passed for c in self.checks)


@dataclass
class Artifacts:
    """A built design: its directory, its placed IR and, when compiled, what the tools made."""

    path: Path
    handle: DesignHandle
    design: Design
    files: dict[str, str]
    """Relative path -> text of every generated file."""
    usage: dict[tuple[int, int], TileUsage] = field(default_factory=dict)
    """Resource use per tile (what report.txt tabulates)."""
    compiled: Compiled | None = None
    tools: Tools | None = None

    def compile(self, tools: Tools | None = None, progress: Progress | None = None) -> Compiled:
        """Run Peano and aiecc (or find their outputs cached); raises when they are missing."""
        self.tools = tools or self.tools or find_tools()
        self.compiled = compile_build(self.design, self.files, self.path, self.tools, progress)
        return self.compiled

    def run(self, *inputs: np.ndarray, target: str = "auto", iters: int = 1, warmup: int = 0,
            seed: int = 0, check: bool = True, trace: str | None = None,
            clock_hz: float | None = None, say: Callable[[str], None] | None = None
            ) -> RunResult:
        """Run on ``target`` (``auto``, ``npu`` or ``sim``) with ``inputs`` in argument order.

        With no inputs, seeded random ones are made. ``auto`` uses the NPU when pyxrt finds one
        and the design can be compiled, the simulator otherwise; ``say`` hears which and why.
        """
        ins = self._inputs(inputs, seed)
        where, why, session = self._choose(target, say)
        if say:
            say(why)
        if where == "sim":
            return self._simulate(ins, why, check, trace, clock_hz)
        return self._on_npu(session, ins, why, check, iters, warmup)

    # -- helpers ------------------------------------------------------------------------------

    def _inputs(self, inputs: tuple[np.ndarray, ...], seed: int) -> dict[str, np.ndarray]:
        if not inputs:
            return make_inputs(self.design, seed)
        names = self.handle.inputs
        if len(inputs) != len(names):
            raise TypeError(f"{self.design.name} takes {len(names)} inputs ({', '.join(names)}), "
                            f"got {len(inputs)}")
        return dict(zip(names, inputs))

    def _choose(self, target: str, say: Callable[[str], None] | None
                ) -> tuple[str, str, Any]:
        from aiedsl.toolchain.xrt import NpuSession, find_npu

        if target not in ("auto", "npu", "sim"):
            raise ValueError("target is auto, npu or sim")
        if target == "sim":
            return "sim", "running on the simulator (--target sim)", None
        device, why = find_npu()
        if device is None:
            if target == "npu":
                raise ToolchainError("npu", f"no NPU: {why}", exit_code=4,
                                     fix="run on the simulator with --target sim")
            return "sim", f"no NPU ({why}): running on the simulator", None
        try:
            compiled = self.compiled or self.compile()
        except ToolchainError as e:
            if target == "npu" or e.exit_code != 4:
                raise
            return "sim", f"an NPU is present but the design cannot be compiled here " \
                          f"({e.message}): running on the simulator", None
        return "npu", f"running on the NPU ({why})", NpuSession(self.path, compiled.manifest,
                                                                 device=device)

    def _simulate(self, ins: dict[str, np.ndarray], why: str, check: bool,
                  trace: str | None, clock_hz: float | None) -> RunResult:
        from aiedsl.sim import simulate

        r = simulate(self.handle, ins, check=check, trace=trace, clock_hz=clock_hz,
                     placed=self.design)
        return RunResult("sim", why, ins, r.outputs, r.checks, r.timing.lines())

    def _on_npu(self, session: Any, ins: dict[str, np.ndarray], why: str, check: bool,
                iters: int, warmup: int) -> RunResult:
        session.write_inputs(ins)
        for _ in range(warmup):
            session.launch()
        latencies = [session.launch() for _ in range(max(iters, 1))]
        outputs = session.read_outputs()  # every run computes the same: check the last
        checks = []
        if check:
            expected = self.handle.expected({n: ins[n] for n in self.handle.inputs})
            checks = [compare(n, outputs[n], expected[n], self.design.tensor(n).type.dtype)
                      for n in self.handle.outputs]
        ops = session.manifest.get("ops_per_run", 0)
        med = statistics.median(latencies)
        lines = [f"measured on the NPU: {len(latencies)} run(s) after {warmup} warm-up: latency "
                 f"min {min(latencies) * 1e6:.1f} us, median {med * 1e6:.1f} us, max "
                 f"{max(latencies) * 1e6:.1f} us (host wall clock, launch to completion)"]
        if ops:
            lines.append(f"throughput at the median: {ops / med / 1e9:,.1f} GOPS "
                         "(GFLOPS for float kernels)")
        return RunResult("npu", why, ins, outputs, checks, lines, latencies)


def build(design: str | Path | DesignHandle, *, defines: dict[str, Any] | None = None,
          device: str | None = None, name: str | None = None, output: str | Path | None = None,
          compile: bool = False, peano: str | Path | None = None,
          progress: Progress | None = None) -> Artifacts:
    """Check, place and write ``design`` (a design file or a loaded design); optionally compile.

    ``compile=True`` runs Peano and aiecc (cached) and raises
    :class:`~aiedsl.errors.ToolchainError` (``exit_code`` 4) naming what is missing, after the
    MLIR and C++ are written.
    """
    from aiedsl.emit import generate, write
    from aiedsl.loader import load_design

    handle = design if isinstance(design, DesignHandle) else load_design(
        Path(design), {k: str(v) for k, v in (defines or {}).items()}, device, name)
    gen = generate(handle)
    path = write(gen, Path(output) if output else Path("build") / handle.name)
    art = Artifacts(path, handle, gen.design, gen.files, gen.usage)
    if compile:
        art.tools = find_tools(peano=peano)
        art.compiled = compile_build(gen.design, gen.files, path, art.tools, progress)
    return art
