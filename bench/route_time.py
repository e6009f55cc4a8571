"""How long placing, allocating and routing gemm_bf16 takes: npu1 on a 4x4 herd, npu2 on 8x4.

    python bench/route_time.py

Target (issue 4): under 1 s each. aiedsl runs mlir-aie's router (one Dijkstra search per flow
per PathFinder iteration, the column-control packet flows included), so the searches column is
what aiecc's router does too. Times are medians of several runs, checks excluded.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

from aiedsl.checks.links import check_links
from aiedsl.loader import load_design
from aiedsl.place import allocate, place, route
from aiedsl.targets import get_target

ROOT = Path(__file__).resolve().parent.parent
CASES = [("npu1", {}, "4x4"), ("npu2", {"COLS": "8"}, "8x4")]
REPEAT = 7


def main() -> None:
    print(f"{'device':8} {'herd':5} {'streams':>7} {'wires':>6} {'iters':>5} {'searches':>8} "
          f"{'place':>8} {'allocate':>9} {'route':>8} {'total':>8}  target 1 s")
    for device, defines, herd in CASES:
        d = load_design(ROOT / "designs" / "gemm_bf16.py", defines, device).ir
        check_links(d)
        target = get_target(d.device)
        runs = []
        for _ in range(REPEAT):
            t0 = time.perf_counter()
            placed = place(d, target)
            t1 = time.perf_counter()
            phys = allocate(placed, target)
            t2 = time.perf_counter()
            result = route(placed, phys, target)
            t3 = time.perf_counter()
            runs.append((t1 - t0, t2 - t1, t3 - t2, t3 - t0))
        p, a, r, total = (statistics.median(x) for x in zip(*runs))
        wires = sum(len(x.wires) for x in result.routes)
        print(f"{device:8} {herd:5} {len(result.routes):7} {wires:6} {result.iterations:5} "
              f"{result.searches:8} {p * 1e3:6.1f}ms {a * 1e3:7.1f}ms {r * 1e3:6.1f}ms "
              f"{total * 1e3:6.1f}ms  ratio {total / 1.0:.3f} of target")


if __name__ == "__main__":
    main()
