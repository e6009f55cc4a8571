"""The kernel profile (``aiedsl kernel profile``) against published single-core measurements.

    python bench/kernel_profile.py

For each published point (Taka et al., arXiv 2512.13282, npu1: bf16 64x104x64 at 112.6 MACs per
cycle, int8 64x232x64 at 233), the library matmul at that shape is run on the host with its AIE
API operations counted, and the issue-slot bound is set beside the measurement. The bound
ignores loop overhead and the per-patch accumulator loads' latency, so it sits above the
measurement; PASS when within 15%.

Then the kernels of ``../shared/reference/npu1-measured.md`` (their re-expressions in
``bench/calibration/``): each kernel's profiled cycles per call beside the cycles its design
declares (estimated from IRON's source), and the row simulated with the profiled cycles in
place of the declared ones, beside the measured time. Those figures are whole invocations
(about 110 us of fixed cost each), so this shows whether the profile's cycles keep each row
within 15%, not the kernels' cycles alone; rows whose core work is hidden behind the fixed cost
or the DMAs say so (the share of the device time the busiest core computes). Rows without a
kernel (DMA-only, or an inline core loop) are listed as such.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from aiedsl.checks import check_design  # noqa: E402
from aiedsl.kernels.text import kernel_text  # noqa: E402
from aiedsl.kernels.cases import KernelCase, design_cases  # noqa: E402
from aiedsl.kernels.matmul import PUBLISHED, matmul  # noqa: E402
from aiedsl.kernels.profile import profile_cases  # noqa: E402
from aiedsl.loader import load_design  # noqa: E402
from aiedsl.sim import simulate  # noqa: E402

TOLERANCE = 0.15


def main() -> int:
    print(f"{'kernel':<34} {'profile MAC/cyc':>15} {'published':>10} {'ratio':>6}  bound by")
    ok = True
    for (device, dt, dims), (value, source) in sorted(PUBLISHED.items()):
        k = matmul(*dims, dt, device=device)
        case = KernelCase(k.ir, kernel_text(None, k.ir), k.run_reference, {})
        prof = profile_cases([case], device)[0]
        ratio = prof.macs_per_cycle / value
        good = abs(ratio - 1) <= TOLERANCE
        ok &= good
        print(f"{k.symbol:<34} {prof.macs_per_cycle:>15.1f} {value:>10.1f} {ratio:>6.3f}  "
              f"{prof.binding}  {'PASS' if good else 'MISS'} ({source})")
    print()
    ok &= measured_rows()
    return 0 if ok else 1


def measured_rows() -> bool:
    """The npu1-measured.md rows simulated with their kernels' profiled cycles."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from calibrate import CALIB, ROWS

    print(f"{'row':<16} {'kernel':<30} {'declared':>8} {'profile':>8}  bound by   "
          f"{'measured us':>11} {'modelled':>8} {'ratio':>6}  core share")
    ok = True
    for row in ROWS:
        handle = load_design(CALIB / row.file)
        placed, _ = check_design(handle.ir)
        if not placed.kernels:
            print(f"{row.name:<16} {'(no kernel: ' + row.file + ')':<30}")
            continue
        profs = {p.symbol: p for p in profile_cases(design_cases(handle), placed.device)}
        if not all(p.counted for p in profs.values()):
            for i, k in enumerate(placed.kernels):
                print(f"{row.name if i == 0 else '':<16} {k.symbol[:30]:<30} {k.cycles:>8,} "
                      f"{'-' if not profs[k.symbol].counted else profs[k.symbol].cycles:>8}  "
                      f"{'scalar C++: no profile' if not profs[k.symbol].counted else ''}")
            continue
        kernels = tuple(k.model_copy(update={"cycles": profs[k.symbol].cycles})
                        for k in placed.kernels)
        timing = simulate(handle, placed=placed.model_copy(update={"kernels": kernels}),
                          compute=False).timing
        ratio = timing.seconds * 1e6 / row.measured_us
        good = abs(ratio - 1) <= TOLERANCE
        ok &= good
        share = max(timing.core_busy.values(), default=0.0)
        for i, k in enumerate(placed.kernels):
            p = profs[k.symbol]
            tail = (f"{row.measured_us:>11.2f} {timing.seconds * 1e6:>8.2f} {ratio:>6.3f}  "
                    f"{share:.0%} {'PASS' if good else 'MISS'}") if i == 0 else ""
            print(f"{row.name if i == 0 else '':<16} {k.symbol[:30]:<30} {k.cycles:>8,} "
                  f"{p.cycles:>8,}  {p.binding:<10} {tail}")
    return ok


if __name__ == "__main__":
    sys.exit(main())
