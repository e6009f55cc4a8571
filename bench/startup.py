"""How long the ``aiedsl`` command takes to start: ``--help`` and a whole ``build`` of the
512^3 GEMM, each as a whole process beside ``python -c pass`` (the interpreter alone).

    python bench/startup.py

Targets (issue 10): ``aiedsl --help`` under 0.3 s, ``aiedsl build designs/gemm_bf16.py`` under
0.5 s. The command is the installed ``aiedsl`` program when it is on PATH, else
``python -m aiedsl``. Each figure is the median of several runs after one warm-up (the first
run fills aiedsl's template cache).
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REPEAT = 9


def wall(argv: list[str]) -> float:
    """Median wall time of ``argv`` as a whole process (output thrown away)."""
    subprocess.run(argv, capture_output=True, check=True)  # warm-up
    times = []
    for _ in range(REPEAT):
        start = time.perf_counter()
        subprocess.run(argv, capture_output=True, check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        _table(Path(tmp) / "gemm")


def _table(out: Path) -> None:
    """The table, with ``aiedsl build`` writing into ``out``."""
    program = [shutil.which("aiedsl") or ""] if shutil.which("aiedsl") else [
        sys.executable, "-m", "aiedsl"]
    base = wall([sys.executable, "-c", "pass"])
    cases = [("aiedsl --help", [*program, "--help"], 0.3),
             ("aiedsl build designs/gemm_bf16.py", [*program, "build",
              str(ROOT / "designs" / "gemm_bf16.py"), "-o", str(out)], 0.5)]
    print(f"{'command':<36} {'wall (s)':>9} {'x python':>9} {'target':>8}  verdict")
    print(f"{'python -c pass':<36} {base:>9.3f} {1:>9.1f}")
    for label, argv, target in cases:
        t = wall(argv)
        print(f"{label:<36} {t:>9.3f} {t / base:>9.1f} {f'< {target} s':>8}  "
              f"{'PASS' if t < target else 'MISS'}")
    print(f"(median of {REPEAT} runs after a warm-up; {' '.join(program)})")


if __name__ == "__main__":
    main()
