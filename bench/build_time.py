"""How long `aiedsl build designs/gemm_bf16.py` takes, in-process and as a whole command.

    python bench/build_time.py

Targets (issue 2): under 1 s in-process at M=K=N=512, under 2 s at 4096 cubed. In-process
timing excludes Python start-up and imports; the whole command includes them.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SIZES = [512, 1024, 4096]
REPEAT = 5


def in_process(size: int, out: Path) -> float:
    from aiedsl.emit import generate, write
    from aiedsl.loader import load_design

    times = []
    for _ in range(REPEAT):
        start = time.perf_counter()
        d = {"M": str(size), "K": str(size), "N": str(size)}
        write(generate(load_design(ROOT / "designs" / "gemm_bf16.py", d)), out)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def whole_command(size: int, out: Path) -> float:
    times = []
    for _ in range(REPEAT):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "aiedsl", "build",
                        str(ROOT / "designs" / "gemm_bf16.py"), "-D", f"M={size}", "-D",
                        f"K={size}", "-D", f"N={size}", "-o", str(out)],
                       check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        in_process(512, Path(tmp) / "warm")  # imports and template compilation
    print(f"{'M=K=N':>6}  {'in-process (s)':>15}  {'command (s)':>12}  target in-process")
    for size in SIZES:
        with tempfile.TemporaryDirectory() as tmp:
            a = in_process(size, Path(tmp) / "a")
            b = whole_command(size, Path(tmp) / "b")
        target = {512: 1.0, 4096: 2.0}.get(size)
        verdict = f"< {target:.0f} s: {'PASS' if a < target else 'MISS'}" if target else ""
        print(f"{size:>6}  {a:>15.3f}  {b:>12.3f}  {verdict}")
    print(f"(median of {REPEAT} runs each)")


if __name__ == "__main__":
    main()
