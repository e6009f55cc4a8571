"""``aiedsl kernel profile``: a kernel's C++ run on the host with the AIE API operations it
performs counted by unit, and the cycles those take if the core issued them at its best.

The host header counts vector multiply-type ops (one vector MAC slot), other vector ALU ops,
lane movement (shuffles, filters, interleaves), the bytes vector loads and stores move and the
multiply-accumulates performed. Each unit bounds the cycles: one op per cycle per vector slot,
the MACs at the core's peak for the kernel's operand types
(:meth:`~aiedsl.targets.TargetModel.operand_peak`) whatever the slots counted,
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
from aiedsl.kernels.host import COUNTED, WORK, native
from aiedsl.kernels.host_notes import conversions_left_out, mmul_words
from aiedsl.targets import TargetModel, get_target


SCALAR_BYTES = 64
"""Bytes of its inputs a kernel may read, or of its outputs write, with scalar code before its
profile says the counts miss work: a scale factor read (``factor[0]``), a reduction's few sums
written (``out[0] = s``) cost a few cycles, not the kernel's loop. A threshold of aiedsl's,
not the core's: a vector register's 64 bytes."""


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
    """The core's peak MACs per cycle for the kernel's operand types
    (:meth:`~aiedsl.targets.TargetModel.operand_peak`): the most its vector MAC cycles let it
    do. None for a profile made without a target's peak."""
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
    input_bytes: int = 0
    """The bytes of the buffers it reads ("in" and "inout"): what a call that reads each once
    loads."""
    written: int = 0
    """The bytes of the elements of its output buffers ("out" and "inout") the call changed,
    whether its counted stores or scalar code wrote them (an element written with the random
    value it held is not seen)."""
    bfp16: tuple[tuple[int, int, int], ...] = ()
    """The bf16 ``aie::mmul`` shapes its C++ runs on npu2's bfp16 unit
    (:mod:`aiedsl.kernels.host_notes`), whose conversions the counts leave out."""
    buffer_bytes: tuple[int, int] | None = None
    """Of the counted load and store bytes, those inside the call's buffers (a vector moved to
    or from a local array covers none of its inputs or outputs); None: all of them (a profile
    made by hand)."""

    @property
    def buffer_loads(self) -> int:
        """Bytes its counted vector loads read from its buffers."""
        return self.counts["load bytes"] if self.buffer_bytes is None else self.buffer_bytes[0]

    @property
    def buffer_stores(self) -> int:
        """Bytes its counted vector stores wrote into its buffers."""
        return self.counts["store bytes"] if self.buffer_bytes is None else self.buffer_bytes[1]

    @property
    def unseen_writes(self) -> int:
        """Bytes the call changed in its output buffers beyond what its counted vector stores
        wrote: bytes scalar code wrote (``out[i] = ...``)."""
        return max(0, self.written - self.buffer_stores)

    def uncounted(self) -> list[str]:
        """What the counts show the call did besides what they count, a sentence each: it
        loaded fewer bytes through the AIE API than its input buffers hold, or changed more
        output bytes than its vector stores wrote (either by more than :data:`SCALAR_BYTES`).
        Scalar code
        is not counted: the bound may then be far below the kernel's cost."""
        out: list[str] = []
        if self.input_bytes - self.buffer_loads > SCALAR_BYTES:
            out.append(f"it loaded {self.buffer_loads:,} bytes of its buffers through "
                       "aie::load_v and vector pointers (a local array's are not theirs), and "
                       f"its input buffers hold {self.input_bytes:,}: reads by "
                       "scalar code, and the work on what they read, are not counted (if it "
                       "reads all its inputs, the bound may be far below its cost)")
        if self.unseen_writes > SCALAR_BYTES:
            out.append(f"it changed {self.written:,} bytes of its output buffers, and its "
                       f"vector stores wrote {self.buffer_stores:,} of them: writes by "
                       "scalar code, and "
                       "the work that made them, are not counted (the bound may be far below "
                       "its cost)")
        return out

    def misses_work(self) -> list[str]:
        """Of :meth:`uncounted`, what shows that most of the call's work went uncounted: no
        byte of its inputs loaded through the AIE API, or most of the output bytes it changed
        written by scalar code. A cost from such a profile (``cycles=None``) would miss it."""
        out = []
        if self.input_bytes and not self.buffer_loads:
            out.append(f"it loaded none of the {self.input_bytes:,} bytes its input buffers "
                       "hold through aie::load_v or vector pointers")
        if self.unseen_writes > max(SCALAR_BYTES, self.buffer_stores):
            out.append(f"its vector stores wrote {self.buffer_stores:,} of the "
                       f"{self.written:,} bytes it changed in its output buffers")
        return out

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
               "  per call: " + ", ".join(f"{c[u]:,} {u}" for u in WORK),
               "  cycles each unit needs: " + ", ".join(f"{u} {b[u]:,}" for u in b)]
        if c["MACs"]:
            peak = (f" of the core's peak {self.peak_macs}: "
                    f"{self.macs_per_cycle / self.peak_macs:.0%}" if self.peak_macs else "")
            out.append(f"  {self.macs_per_cycle:.1f} MACs per cycle{peak}")
            if b["vector MAC"] > c["vector MAC"]:
                out.append(
                    f"  vector MAC cycles are its {c['MACs']:,} MACs at the core's peak of "
                    f"{self.peak_macs} a cycle, more than the {c['vector MAC']:,} multiply "
                    "instructions counted: those modes take several cycles each (emulated "
                    "types, or modes the host AIE API does not know the instructions of)")
        out += [f"  not counted: {x}" for x in self.uncounted()]
        if self.bfp16:
            runs = "runs" if len(self.bfp16) == 1 else "run"
            out.append(f"  not counted: its bf16 {mmul_words(self.bfp16)} {runs} on npu2's "
                       f"bfp16 unit, and {conversions_left_out('this estimate')}")
        return out + list(notes) + failed


def bounds(counts: dict[str, int], target: TargetModel, peak: int | None) -> dict[str, int]:
    """Cycles each unit needs for ``counts``, on ``target``'s core, whose peak for the
    kernel's operands is ``peak`` MACs per cycle (None: no peak bound).

    The vector MAC unit needs at least one cycle per multiply instruction counted (the host
    AIE API counts the AIE API's hardware intrinsics per ``aie::mmul`` mode,
    kernels_cpp/host/aie_api/host_core.hpp; a float product the bf16 multiplies that emulate
    it, host_core.hpp's detail::fp32_product) and at least the MACs over the peak: an emulated
    32-bit multiply counts as one instruction yet takes several cycles, and no count may give
    the core more than its peak (a profile of AIE2's int8 8x8x8 counted one cycle per
    mmul, 512 MACs a cycle, twice the peak)."""
    at_peak = -(-counts["MACs"] // peak) if peak else 0
    return {"vector MAC": max(counts["vector MAC"], at_peak), "vector ALU": counts["vector ALU"],
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
    numbers, faults, strays, written = outcome if ran else ([0] * len(COUNTED), [outcome], [],
                                                            0)
    everything = dict(zip(COUNTED, numbers))
    counts = {u: everything[u] for u in WORK}
    buffer_bytes = (everything["buffer load bytes"], everything["buffer store bytes"])
    # its operands' types: a matmul's A and B, not C; the peak the kernel-cost check holds it to
    peak, _ = target.operand_peak(k.operand_dtypes)
    inputs = sum(a.type.nbytes for a in k.args
                 if a.kind == "buffer" and a.access != "out" and a.type is not None)
    return Profile(k.symbol, target.name, counts, bounds(counts, target, peak), peak, tuple(faults),
                   ran, tuple(strays), case.shown, inputs, written,
                   tuple(getattr(fn, "bfp16", ())), buffer_bytes)


def profile_cases(cases: list[KernelCase], device: str, seed: int = 0) -> list[Profile]:
    """:func:`profile_case` of each case on ``device`` (their host builds made several at a
    time first: :func:`~aiedsl.kernels.host_build.prebuild`)."""
    from aiedsl.kernels.host_build import prebuild

    target = get_target(device)
    prebuild([(c.kernel, c.cpp, target.aie_arch) for c in cases])
    return [profile_case(c, target, seed) for c in cases]
