"""The kernel profile (``aiedsl kernel profile``) against published single-core measurements.

    python bench/kernel_profile.py

For each published point (Taka et al., arXiv 2512.13282, npu1: bf16 64x104x64 at 112.6 MACs per
cycle, int8 64x232x64 at 233), the library matmul at that shape is run on the host with its AIE
API operations counted, and the issue-slot bound is set beside the measurement. The bound
ignores loop overhead and the per-patch accumulator loads' latency, so it sits above the
measurement; PASS when within 15%.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from aiedsl.codegen.cpp import kernel_text  # noqa: E402
from aiedsl.kernels.host import KernelCase  # noqa: E402
from aiedsl.kernels.matmul import PUBLISHED, matmul  # noqa: E402
from aiedsl.kernels.profile import profile_cases  # noqa: E402

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
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
