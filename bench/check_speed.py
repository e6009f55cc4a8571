"""What ``check_design`` (placement, allocation, routing and every check) costs, phase by phase.

    python bench/check_speed.py            # every case below
    python bench/check_speed.py gemm       # the cases whose name holds "gemm"

It runs before each ``aiedsl sim`` and each build, so its fixed cost is part of every one.
Per design, in milliseconds of process (CPU) time:

* cold: the first ``check_design`` of a fresh process, the design already loaded (and the
  garbage of the imports collected first), as ``aiedsl sim`` and ``aiedsl build`` pay it
  (whatever a process computes once, the routing graph and the scan of a kernel's C++ among it,
  is in it); the least of :data:`REPEAT` processes, and that run's phases;
* warm: a later ``check_design`` of the same design in the same process (the least of
  :data:`WARM` runs), as the test suite and a notebook pay it.

The phases are the functions ``aiedsl.checks`` calls (the checks, ``place_lowered``, ``lower``,
``allocate``, ``route``, ``retirements``), each timed where it is called, less the phases it
calls itself; those under half a millisecond in every case are summed in "rest". Target
(issue 13): gemm_bf16 at 1024^3 under 25 ms cold. A busy machine adds to every figure: compare
two versions in turns, not against figures taken at another time.
"""

from __future__ import annotations

import gc
import json
import multiprocessing
import sys
import time
import types
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CASES: list[tuple[str, str, str | None, dict[str, str]]] = [
    ("gemm_bf16 1024^3", "gemm_bf16.py", "npu1", {"M": "1024", "K": "1024", "N": "1024"}),
    ("gemm_bf16 npu2 8x4", "gemm_bf16.py", "npu2", {"COLS": "8"}),
    ("gemm_i8", "gemm_i8.py", None, {}),
    ("matmul_cascade", "matmul_cascade.py", None, {}),
    ("matmul_cascade npu2", "matmul_cascade.py", "npu2", {}),
    ("threshold_rtp", "threshold_rtp.py", None, {}),
    ("vector_scalar_mul", "vector_scalar_mul.py", None, {}),
    ("passthrough", "passthrough.py", None, {}),
    ("transpose_dma", "transpose_dma.py", None, {}),
]
REPEAT = 5
"""Fresh processes per case: the least CPU time is kept (a busy machine only ever adds)."""
WARM = 10
"""Warm runs per case after the cold one."""
SHOWN = 0.5
"""A phase is a column when it takes at least this many milliseconds in some case."""
TARGET = 25.0


def _timed_checks(spent: dict[str, float]) -> None:
    """Have every function ``aiedsl.checks`` calls add its CPU time to ``spent``, less that of
    the others it calls (retirements is asked for inside a check: its time is its own)."""
    import aiedsl.checks as checks

    inner = [0.0]  # time of the timed calls under the one running

    def timer(name: str, fn: Any) -> Any:
        def run(*args: Any, **kwargs: Any) -> Any:
            start, outer = time.process_time(), inner[0]
            inner[0] = 0.0
            try:
                return fn(*args, **kwargs)
            finally:
                took = time.process_time() - start
                spent[name] = spent.get(name, 0.0) + took - inner[0]
                inner[0] = outer + took
        return run

    for name, value in vars(checks).copy().items():
        if isinstance(value, types.FunctionType) and value.__module__ != checks.__name__:
            setattr(checks, name, timer(name, value))


def _measure(design: str, device: str | None, defines: dict[str, str]) -> dict[str, Any]:
    """In this (fresh) process: the cold check's time and phases, then the warm time."""
    from aiedsl.checks import check_design
    from aiedsl.loader import load_design

    handle = load_design(ROOT / "designs" / design, defines, device)
    spent: dict[str, float] = {}
    _timed_checks(spent)
    # the full collection the imports and the load have made due, now: where it lands is
    # chance (one more import can move it into the check), and it costs some 20 ms there
    # (simulate() freezes what is alive before a run for the same reason)
    gc.collect()
    start = time.process_time()
    check_design(handle.ir)
    cold = time.process_time() - start
    phases = dict(spent)
    warm = []
    for _ in range(WARM):
        start = time.process_time()
        check_design(handle.ir)
        warm.append(time.process_time() - start)
    return {"cold": cold, "phases": phases, "warm": min(warm)}


def _in_child(case: tuple[str, str, str | None, dict[str, str]]) -> dict[str, Any]:
    """:func:`_measure` of ``case`` in a fresh interpreter (spawned: nothing imported or
    computed by this one carries over)."""
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(1) as pool:
        return pool.apply(_measure, case[1:])


def main(argv: list[str]) -> None:
    cases = [c for c in CASES if not argv or any(a in c[0] for a in argv)]
    rows = []
    for case in cases:
        runs = [_in_child(case) for _ in range(REPEAT)]
        best = min(runs, key=lambda r: r["cold"])
        rows.append((case[0], best["cold"], min(r["warm"] for r in runs), best["phases"]))
        print(json.dumps({"case": case[0], "cold_ms": round(best["cold"] * 1e3, 2)}),
              file=sys.stderr, flush=True)
    shown = sorted({p for *_, phases in rows for p, t in phases.items() if t * 1e3 >= SHOWN},
                   key=lambda p: -max(r[3].get(p, 0.0) for r in rows))
    width = max(len(r[0]) for r in rows)
    print(f"{'case':<{width}} {'cold':>6} {'warm':>6}  " + " ".join(
        f"{p.removeprefix('check_')[:12]:>12}" for p in shown) + f" {'rest':>6}")
    for name, cold, warm, phases in rows:
        rest = cold - sum(phases.get(p, 0.0) for p in shown)
        print(f"{name:<{width}} {cold * 1e3:6.1f} {warm * 1e3:6.1f}  " + " ".join(
            f"{phases.get(p, 0.0) * 1e3:12.1f}" for p in shown) + f" {rest * 1e3:6.1f}")
    gemm = next((r for r in rows if r[0] == CASES[0][0]), None)
    if gemm is not None:
        print(f"gemm_bf16 1024^3 cold: {gemm[1] * 1e3:.1f} ms, target under {TARGET:.0f} ms: "
              f"{'PASS' if gemm[1] * 1e3 < TARGET else 'MISS'}")
    print(f"(ms of CPU time; cold: the least of {REPEAT} fresh processes, with its phases; "
          f"warm: the least of {WARM} later runs)")


if __name__ == "__main__":
    main(sys.argv[1:])
