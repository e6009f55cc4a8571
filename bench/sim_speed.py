"""What the simulator costs over the arithmetic it has to do, in time and memory.

    python bench/sim_speed.py               # 1024^3, 2048^3 and 4096^3 (about five minutes)
    python bench/sim_speed.py 1024 2048     # chosen sizes
    python bench/sim_speed.py --breakdown 2048   # where aiedsl sim's time goes

For ``designs/gemm_bf16.py`` (16 cores, 64x64x64 tiles, bf16 in, f32 out) at each size:

* time: ``aiedsl sim`` as a user runs it (placement, the simulated run on seeded inputs, the
  design's numpy reference and the comparison) beside a bare numpy loop that makes the same
  64x64x64 tile products straight on row-major slices of the same inputs (each slice converted
  to f32 as the kernel's mmul reads it, accumulated in f32) and nothing else. Target: at most 3x.
* memory: the peak traced allocation (``tracemalloc``) of the simulated run, inputs included
  (but not the float64 drafts ``make_inputs`` rounds them from), beside what the run must hold
  anyway: the host tensors plus every on-chip buffer of the design (L1 and L2, from the
  resource check). The numpy reference's own allocations are left out: they are the design
  author's code, not the simulator's. Target: at most 2x.

Each row ends in PASS or MISS per target. The time ratio is of process (CPU) time, which a busy
shared machine disturbs less than wall-clock time; the wall-clock ratio is printed beside it.
Each side runs five times (three at 4096^3), each time in a fresh forked child (cold, as a
user's ``aiedsl sim`` is: nothing cached in memory by an earlier run helps it), the two sides
taking turns, and the least time of each side is compared: noise only ever adds time, a single
bare-loop run swung by 15% at 2048^3, and on this shared machine whole minutes run some 10%
slow.
BLAS runs on one thread here: a multi-threaded BLAS call (the reference's whole-matrix product)
leaves its worker threads spinning for a while, and that spin was charged to whichever side ran
next (the bare loop's CPU time doubled after a simulation), which flattered the ratio. The tile
products of both sides are too small for BLAS to thread anyway.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # before numpy loads its BLAS

import hashlib  # noqa: E402 (this and the imports below follow the BLAS setting on purpose)
import multiprocessing
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any, Callable

import numpy as np

from aiedsl.checks import check_design
from aiedsl.checks.resources import TileUsage
from aiedsl.loader import load_design
from aiedsl.sim import simulate
from aiedsl.sim.compare import compare, make_inputs
from aiedsl.targets import get_target

DESIGN = Path(__file__).resolve().parent.parent / "designs" / "gemm_bf16.py"
SIZES = (1024, 2048, 4096)
TILE = 64
REPEAT = 5
"""Cold runs per side and size (three from 4096^3 on, where each takes ten seconds and noise
matters less); the least CPU time of each side is compared."""
TIME_TARGET = 3.0
MEMORY_TARGET = 2.0


def bare_loop(a: np.ndarray, b: np.ndarray, tile: int = TILE) -> np.ndarray:
    """C = A @ B as 64x64x64 tile products on row-major slices: the arithmetic alone."""
    size_m, size_k = a.shape
    size_n = b.shape[1]
    c = np.empty((size_m, size_n), dtype=np.float32)
    for i in range(0, size_m, tile):
        for j in range(0, size_n, tile):
            acc = c[i:i + tile, j:j + tile]
            acc[...] = 0
            for k in range(0, size_k, tile):
                acc += (a[i:i + tile, k:k + tile].astype(np.float32)
                        @ b[k:k + tile, j:j + tile].astype(np.float32))
    return c


def _in_child(fn: Callable[[], Any]) -> Any:
    """``fn()`` run in a forked child, so it starts cold: nothing an earlier run cached in
    memory (the routing graph, compiled templates) carries over to it."""
    ctx = multiprocessing.get_context("fork")
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=lambda: child.send(fn()))
    proc.start()
    child.close()  # only the child writes: a child that dies sending nothing ends the recv
    try:
        result = parent.recv()
    except EOFError:
        proc.join()
        raise SystemExit(f"the measured run failed in its child process (exit {proc.exitcode})")
    proc.join()
    return result


def _timed(fn: Callable[[], np.ndarray]) -> Callable[[], tuple[float, float, str]]:
    """``fn`` made to return its wall and CPU seconds and a digest of what it returned."""
    def run() -> tuple[float, float, str]:
        start, cpu = time.perf_counter(), time.process_time()
        out = fn()
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu
        return wall, cpu, hashlib.sha256(np.ascontiguousarray(out).tobytes()).hexdigest()
    return run


def measure(size: int, repeat: int | None = None) -> dict[str, float]:
    """Times (the least of ``repeat`` cold runs each) and memory of the simulator and of the
    bare loop at ``size``^3."""
    if repeat is None:
        repeat = REPEAT if size < 4096 else 3
    handle = load_design(DESIGN, {"M": str(size), "K": str(size), "N": str(size)})
    inputs = make_inputs(handle.ir, 0)

    def sim() -> np.ndarray:
        result = simulate(handle, inputs)
        if not result.passed:
            raise SystemExit(f"{size}^3: the simulated GEMM does not match numpy")
        return result.outputs["C"]

    def checked() -> np.ndarray:
        """The part of ``sim`` no simulator that checks its results can skip: the design's
        numpy reference and the comparison with it (here of the reference with itself)."""
        want = handle.expected(inputs)["C"]
        compare("C", want.copy(), want, handle.ir.tensor("C").type.dtype)
        return want

    sims, bares, refs = [], [], []
    for _ in range(repeat):
        sims.append(_in_child(_timed(sim)))
        bares.append(_in_child(_timed(lambda: bare_loop(inputs["A"], inputs["B"]))))
        refs.append(_in_child(_timed(checked)))
    if sims[0][2] != bares[0][2]:
        # Same products, same f32 sums in the same K order: the results must be equal.
        print(f"  note: at {size}^3 the bare loop and the simulator's C differ")
    peak, own = _in_child(lambda: _memory(handle))
    return {"sim": min(r[0] for r in sims), "sim_cpu": min(r[1] for r in sims),
            "bare": min(r[0] for r in bares), "bare_cpu": min(r[1] for r in bares),
            "checked_cpu": min(r[1] for r in refs), "peak": peak, "own": own}


def _memory(handle: Any) -> tuple[int, int]:
    """Peak traced bytes of a simulated run, and what it must hold anyway (host tensors and
    on-chip buffers)."""
    placed, usage = check_design(handle.ir)
    on_chip = sum(TileUsage.total(u.memory) for u in usage.values())
    tracemalloc.start()
    run_inputs = make_inputs(handle.ir, 0)
    # The inputs stay traced; the seeded generator's float64 drafts of them do not count.
    tracemalloc.reset_peak()
    run = simulate(handle, run_inputs, check=False, placed=placed)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    host = sum(a.nbytes for a in run_inputs.values()) + sum(
        a.nbytes for a in run.outputs.values())
    return peak, host + on_chip


def breakdown(size: int) -> dict[str, float]:
    """CPU seconds of each part of ``aiedsl sim`` at ``size``^3 (a second run): placement and
    routing, the event engine alone (kernels take their time, compute nothing), the run with
    the kernels' numpy references, the design's reference, the comparison."""
    import gc

    from aiedsl.sim.compare import poisoned
    from aiedsl.sim.machine import build_machine

    handle = load_design(DESIGN, {"M": str(size), "K": str(size), "N": str(size)})
    inputs = make_inputs(handle.ir, 0)
    out: dict[str, float] = {}
    gc.freeze()  # as simulate() runs
    cpu = time.process_time()
    placed, _ = check_design(handle.ir)
    out["placement"] = time.process_time() - cpu
    for name, compute in (("engine only", False), ("run", True)):
        host = {**inputs, "C": poisoned(placed, "C")}
        m = build_machine(placed, get_target(placed.device), host, handle.kernels,
                          compute=compute)
        cpu = time.process_time()
        m.engine.run()
        out[name] = time.process_time() - cpu
    cpu = time.process_time()
    want = handle.expected(inputs)["C"]
    out["reference"] = time.process_time() - cpu
    cpu = time.process_time()
    compare("C", host["C"], want, placed.tensor("C").type.dtype)
    out["compare"] = time.process_time() - cpu
    gc.unfreeze()
    return out


def main(argv: list[str]) -> None:
    if argv[:1] == ["--breakdown"]:
        for size in tuple(int(a) for a in argv[1:]) or SIZES:
            parts = breakdown(size)
            print(f"{size:>6}: " + ", ".join(f"{k} {v:.2f} s" for k, v in parts.items()),
                  flush=True)
        return
    sizes = tuple(int(a) for a in argv) or SIZES
    print(f"{'M=K=N':>6} {'sim cpu':>8} {'bare cpu':>8} {'ratio':>6} {'<=3x':>5} {'wall':>6} "
          f"{'ref+cmp':>7}   {'peak MiB':>9} {'needed MiB':>10} {'ratio':>6} {'<=2x':>5}")
    for size in sizes:
        r = measure(size)
        t_ratio, m_ratio = r["sim_cpu"] / r["bare_cpu"], r["peak"] / r["own"]
        print(f"{size:>6} {r['sim_cpu']:>8.2f} {r['bare_cpu']:>8.2f} {t_ratio:>6.2f} "
              f"{_verdict(t_ratio, TIME_TARGET):>5} {r['sim'] / r['bare']:>6.2f} "
              f"{r['checked_cpu'] / r['bare_cpu']:>7.2f}   "
              f"{r['peak'] / 2**20:>9.1f} {r['own'] / 2**20:>10.1f} {m_ratio:>6.2f} "
              f"{_verdict(m_ratio, MEMORY_TARGET):>5}", flush=True)
    print("sim = placement + simulated run + numpy reference + comparison; bare = the same tile "
          f"products on row-major slices; cpu = process time (s, the least of {REPEAT} cold "
          "runs, 3 from 4096^3 on, in fresh child processes), the ratio judged; "
          "wall = the wall-clock ratio; ref+cmp = the design's numpy reference and the "
          "comparison alone, in bare loops (part of sim, and of any simulator that checks its "
          "results); "
          "needed = host tensors + on-chip buffers")


def _verdict(ratio: float, target: float) -> str:
    return "PASS" if ratio <= target else "MISS"


if __name__ == "__main__":
    main(sys.argv[1:])
