"""What the simulator costs over the kernel work itself, in time and memory.

    python bench/sim_speed.py

For gemm_bf16 at 512^3 and 1024^3: the simulator's wall time beside a plain Python loop that
makes the same kernel calls (the same numpy references on the same blocked buffer shapes) with no
simulation, as a ratio (target: at most 3x); and the simulator's peak traced memory beside the
design's own buffers (L1 and L2 use from the resource table) plus the host tensors (target: at
most 2x).
"""

from __future__ import annotations

import statistics
import time
import tracemalloc
from pathlib import Path

import ml_dtypes
import numpy as np

from aiedsl.checks import check_design
from aiedsl.checks.resources import TileUsage
from aiedsl.kernels.library import matmul_ref, zero_ref
from aiedsl.loader import load_design
from aiedsl.sim import simulate
from aiedsl.sim.compare import make_inputs

DESIGN = Path(__file__).resolve().parent.parent / "designs" / "gemm_bf16.py"
REPEAT = 3


def plain_loop(size: int, cores: int = 16, m: int = 64, k: int = 64, n: int = 64) -> float:
    """The same kernel calls as the design, straight on numpy arrays."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal(m * k).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal(k * n).astype(ml_dtypes.bfloat16)
    c = np.zeros(m * n, dtype=np.float32)
    tiles = (size // m) * (size // n) // cores
    start = time.perf_counter()
    for _ in range(cores):
        for _ in range(tiles):
            zero_ref(c)
            for _ in range(size // k):
                matmul_ref(a, b, c, m=m, k=k, n=n, r=4, s=8, t=4)
    return time.perf_counter() - start


def main() -> None:
    print(f"{'M=K=N':>6} {'sim (s)':>9} {'plain (s)':>10} {'ratio':>6} {'<= 3x':>5}   "
          f"{'peak MB':>8} {'buffers MB':>10} {'ratio':>6} {'<= 2x':>5}   {'+check (s)':>10}")
    for size in (512, 1024):
        handle = load_design(DESIGN, {"M": str(size), "K": str(size), "N": str(size)})
        inputs = make_inputs(handle.ir, 0)
        simulate(handle, inputs, check=False)  # warm caches and imports
        sim_t = statistics.median(
            _timed(lambda: simulate(handle, inputs, check=False)) for _ in range(REPEAT))
        plain_t = statistics.median(plain_loop(size) for _ in range(REPEAT))
        checked_t = _timed(lambda: simulate(handle, inputs))
        tracemalloc.start()
        result = simulate(handle, inputs, check=False)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        _, usage = check_design(handle.ir)
        on_chip = sum(TileUsage.total(u.memory) for u in usage.values())
        host = sum(a.nbytes for a in inputs.values()) + sum(
            a.nbytes for a in result.outputs.values())
        own = on_chip + host
        print(f"{size:>6} {sim_t:>9.3f} {plain_t:>10.3f} {sim_t / plain_t:>6.2f} "
              f"{_verdict(sim_t / plain_t, 3):>5}   {peak / 1e6:>8.1f} {own / 1e6:>10.1f} "
              f"{peak / own:>6.2f} {_verdict(peak / own, 2):>5}   {checked_t:>10.3f}")
    print(f"(median of {REPEAT} runs; targets: time ratio <= 3, memory ratio <= 2, each PASS or "
          "MISS. 'sim' runs the design on given inputs; '+check' adds the design's numpy "
          "reference and the comparison, which the plain loop does not do)")


def _verdict(ratio: float, target: float) -> str:
    return "PASS" if ratio <= target else "MISS"


def _timed(fn) -> float:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


if __name__ == "__main__":
    main()
