"""How close the simulator's timing model is to published NPU measurements.

    python bench/calibrate.py

Cases (aie2-facts.md s4):
* IRON's whole-array GEMM, 512x512x512 i16 on npu1, 64x64x64 tiles on 16 cores: measured 413-423 us
  average host wall clock including about 100 us of dispatch (iron-generated-2025__GEMM.measured-npu1.txt).
  The model has no host dispatch, so it is compared as modelled + 100 us.
* Taka et al. (arXiv 2512.13282), npu1 bf16 GEMM at 4224x4032x4224 with 96x56x96 tiles: 3.12 TFLOPS.
  Their kernel reaches 88% of peak in a single core; bf16 output keeps C within 64 KB.

Kernel cost: m*k*n / (peak * EFF) + OVERHEAD cycles (bench/designs/gemm_model.py): EFF 0.75 for
IRON's i16 kernel (mlir-aie #2735 reports about 75% of peak), 0.88 for Taka's bf16 kernel.
"""

from __future__ import annotations

import time
from pathlib import Path

from aiedsl.loader import load_design
from aiedsl.sim import simulate

DESIGN = Path(__file__).resolve().parent / "designs" / "gemm_model.py"
DISPATCH_US = 100.0

CASES = [
    ("IRON GEMM 512^3 i16, 64x64x64, 16 cores (npu1)",
     dict(M="512", K="512", N="512", IN="i16", OUT="i16", EFF="0.75", C_DEPTH="2"),
     "time_us", 418.0, "us (413-423, incl. ~100 us dispatch)"),
    ("Taka et al. bf16 4224x4032x4224, 96x56x96 (npu1)",
     dict(M="4224", K="4032", N="4224", m="96", k="56", n="96", IN="bf16", OUT="bf16",
          EFF="0.88"),
     "tflops", 3.12, "TFLOPS"),
]


def main() -> None:
    print(f"{'case':<52} {'modelled':>10} {'published':>10}  ratio  unit")
    for label, defines, metric, published, unit in CASES:
        start = time.perf_counter()
        result = simulate(load_design(DESIGN, defines), compute=False)
        t = result.timing
        modelled = t.seconds * 1e6 + DISPATCH_US if metric == "time_us" else t.gops / 1e3
        print(f"{label:<52} {modelled:>10.2f} {published:>10.2f}  {modelled / published:5.2f}  "
              f"{unit}   [{time.perf_counter() - start:.1f} s; {t.bottleneck.kind}-bound]")
    print("ratio = modelled / published; the model leaves out host dispatch jitter, shim BD "
          "reconfiguration and stream-switch arbitration.")


if __name__ == "__main__":
    main()
