"""The long fuzzing run: random designs, valid and broken, through aiedsl's checks and simulator.

    python bench/fuzz.py                 # 10,000 designs from seed 0
    python bench/fuzz.py -n 50000 --start 10000 --jobs 2

Each seed is one design from ``tests/fuzzing.py`` (the generator the test suite samples). A
design is ``rejected`` (a DesignError at the design's own line), ``passed`` (simulated, every
output equal to numpy's), or a failure: ``crash`` (any other exception, or bad input that reached
aiedsl's internals), ``wrong`` (accepted, simulated, wrong numbers), ``hang`` (over the time
bound) or ``deadlock`` (accepted by the checks, hung in the simulator). Target: zero failures.
Prints the designs tried, the counts, failures per 1,000, and the first failures in full; exits
1 when there is any.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from fuzzing import Outcome, make_spec, run_one  # noqa: E402

FAILURES = ("crash", "wrong", "hang", "deadlock")


def _batch(seeds: range) -> list[Outcome]:
    with tempfile.TemporaryDirectory(prefix="aiedsl-fuzz-") as folder:
        return [run_one(seed, Path(folder)) for seed in seeds]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=10_000, help="designs to try")
    parser.add_argument("--start", type=int, default=0, help="first seed")
    parser.add_argument("--jobs", type=int, default=1, help="processes")
    args = parser.parse_args()
    start = time.perf_counter()
    step = 200
    batches = [range(s, min(s + step, args.start + args.n))
               for s in range(args.start, args.start + args.n, step)]
    outcomes: list[Outcome] = []
    if args.jobs > 1:
        with ProcessPoolExecutor(args.jobs) as pool:
            for done in pool.map(_batch, batches):
                outcomes += done
    else:
        for b in batches:
            outcomes += _batch(b)
    counts = Counter(o.verdict for o in outcomes)
    failed = [o for o in outcomes if o.verdict in FAILURES]
    shapes = Counter((make_spec(o.seed).shape, o.verdict) for o in outcomes)
    print(f"designs tried: {len(outcomes)} (seeds {args.start}..{args.start + args.n - 1}) in "
          f"{time.perf_counter() - start:.0f} s")
    for verdict in ("passed", "rejected", *FAILURES):
        print(f"  {verdict:<9} {counts[verdict]:>7}")
    per = 1000 * len(failed) / max(len(outcomes), 1)
    print(f"failures per 1,000 designs: {per:.2f} (crashes {counts['crash']}, wrong results "
          f"{counts['wrong']}, hangs {counts['hang'] + counts['deadlock']}): "
          f"{'PASS' if not failed else 'MISS'} (target 0)")
    print("by dataflow shape (passed / rejected): " + ", ".join(
        f"{s} {shapes[(s, 'passed')]}/{shapes[(s, 'rejected')]}"
        for s in sorted({s for s, _ in shapes})))
    rules = Counter(o.rule for o in outcomes if o.verdict == "rejected")
    print("rejections by rule: " + ", ".join(f"{r} {n}" for r, n in rules.most_common()))
    for o in failed[:5]:
        print(f"\n--- seed {o.seed}: {o.verdict}\n{o.detail}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
