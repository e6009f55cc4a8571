"""``aiedsl kernel profile``: a kernel's C++ run on the host with the AIE API operations it
performs counted by unit, and the cycles those take if the core issued them at its best.

The host header counts vector multiply-type ops (one vector MAC slot), other vector ALU ops,
lane movement (shuffles, filters, interleaves), the bytes vector loads and stores move and the
multiply-accumulates performed. Each unit bounds the cycles: one op per cycle per vector slot,
:attr:`~aiedsl.targets.TargetModel.core_load_bytes_per_cycle` bytes loaded and
:attr:`~aiedsl.targets.TargetModel.core_store_bytes_per_cycle` stored per cycle. The estimate is
the largest bound: what a perfectly software-pipelined loop would reach, with every slot
overlapped. Scalar code, loop overhead and the conversions of accumulators to vectors are not
counted, so the estimate is a lower bound on cycles (an upper bound on MACs per cycle).

Example
-------
>>> [p.line() for p in profile_cases(library_cases(Path("mm.cc"))[:1], "npu1")]  # doctest: +SKIP
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from aiedsl.kernels.faults import FILLS, Stray, call_limit
from aiedsl.kernels.cases import KernelCase, case_args
from aiedsl.kernels.guarded import GuardedCall, in_child
from aiedsl.kernels.host import COUNTED, native
from aiedsl.targets import TargetModel, get_target


@dataclass(frozen=True)
class Profile:
    """One kernel call's counted operations and the issue-slot bound on its cycles."""

    symbol: str
    device: str
    counts: dict[str, int]
    """By :data:`~aiedsl.kernels.host.COUNTED` name."""
    bounds: dict[str, int]
    """Cycles each unit needs: vector MAC, vector ALU, shuffle, load, store."""
    peak_macs: int | None
    """The core's peak MACs per cycle for the kernel's input type, when the target lists one."""
    faults: tuple[str, ...] = ()
    """What the profiled call did wrong, as ``aiedsl kernel test`` says it: a write outside its
    buffers or to an input (it ran to its end: the counts stand), or a crash or a hang (then
    :attr:`ran` is False and nothing was counted)."""
    ran: bool = True
    """Whether the call returned (its process did not die nor get killed)."""
    strays: tuple[Stray, ...] = ()
    """Of :attr:`faults`, the writes outside its buffers, where and how many bytes: what the
    core would write over whatever is placed next to a buffer."""
    shown: str = ""
    """The scalar values it ran with, as its first line names them (``n=1024``; a design's
    kernel with scalars only)."""

    @property
    def counted(self) -> bool:
        """Whether the call performed any counted operation: scalar C++ (plain loops, no AIE
        API) counts nothing, and then the profile has no estimate to give."""
        return any(self.bounds.values())

    @property
    def cycles(self) -> int:
        """The estimate: the busiest unit's cycles (at least 1)."""
        return max(1, *self.bounds.values())

    @property
    def binding(self) -> str:
        """The unit that sets the estimate."""
        return max(self.bounds, key=lambda u: (self.bounds[u], u))

    @property
    def macs_per_cycle(self) -> float:
        """Multiply-accumulates per estimated cycle."""
        return self.counts["MACs"] / self.cycles

    def lines(self, notes: Sequence[str] = ()) -> list[str]:
        """What ``aiedsl kernel profile`` prints for it; ``notes``, lines of the caller's about
        the estimate (what the kernel declares), go under it, before what the call did
        wrong."""
        c, b = self.counts, self.bounds
        failed = [f"FAIL {self.symbol}: {f}" for f in self.faults]
        if not self.ran:
            return failed
        head = f"{self.symbol}{f' with {self.shown}' if self.shown else ''} on {self.device}"
        if not self.counted:
            return [f"{head}: no AIE API vector operation, load or store "
                    "counted: scalar C++ is not modelled, so the profile gives no estimate "
                    "(declare cycles= from the kernel's loop)", *failed]
        out = [f"{head}: {self.cycles:,} "
               f"cycle{'s' * (self.cycles != 1)} per call at best (bound by {self.binding})",
               "  per call: " + ", ".join(f"{c[u]:,} {u}" for u in COUNTED),
               "  cycles each unit needs: " + ", ".join(f"{u} {b[u]:,}" for u in b)]
        if c["MACs"]:
            peak = (f" of the core's peak {self.peak_macs}: "
                    f"{self.macs_per_cycle / self.peak_macs:.0%}" if self.peak_macs else "")
            out.append(f"  {self.macs_per_cycle:.1f} MACs per cycle{peak}")
        return out + list(notes) + failed


def bounds(counts: dict[str, int], target: TargetModel) -> dict[str, int]:
    """Cycles each unit needs for ``counts``, on ``target``'s core."""
    return {"vector MAC": counts["vector MAC"], "vector ALU": counts["vector ALU"],
            "shuffle": counts["shuffle"],
            "load": math.ceil(counts["load bytes"] / target.core_load_bytes_per_cycle),
            "store": math.ceil(counts["store bytes"] / target.core_store_bytes_per_cycle)}


def profile_case(case: KernelCase, target: TargetModel, seed: int = 0) -> Profile:
    """Run ``case``'s C++ once on random inputs and count what it did.

    The call runs in a child process, its buffers between guard bytes, as ``aiedsl kernel
    test`` runs it: a kernel that writes past a buffer used to corrupt this process's memory
    (a design with ``cycles=None`` profiles its kernels as it loads: ``free(): invalid
    pointer``, or a silent SIGSEGV), and one that crashed killed it. What it did wrong is in
    the profile's :attr:`~Profile.faults`."""
    k = case.kernel
    fn = native(k, case.cpp, target.aie_arch)
    _, args = case_args(case, np.random.default_rng(seed))
    # in the child: its counters, its faults and its writes outside its buffers
    outcome = in_child(GuardedCall(k, fn, args, FILLS[0], counted=True), call_limit(k))
    ran = not isinstance(outcome, str)
    numbers, faults, strays = outcome if ran else ([0] * len(COUNTED), [outcome], [])
    counts = dict(zip(COUNTED, numbers))
    peak = target.peak_macs(k.operand_dtype)  # its operands' type: a matmul's A and B, not C
    return Profile(k.symbol, target.name, counts, bounds(counts, target), peak, tuple(faults),
                   ran, tuple(strays), case.shown)


def profile_cases(cases: list[KernelCase], device: str, seed: int = 0) -> list[Profile]:
    """:func:`profile_case` of each case on ``device``."""
    target = get_target(device)
    return [profile_case(c, target, seed) for c in cases]
