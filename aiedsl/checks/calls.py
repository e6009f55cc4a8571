"""Kernel calls against their kernels' signatures: arguments of the declared kinds and types,
scalars their C++ can take, rtp slots whose every write the kernel can take (each call judged
by :func:`~aiedsl.kernels.call_checks.check_call`)."""

from __future__ import annotations

from aiedsl.ir.design import Design
from aiedsl.ir.program import acquires, calls_in_loops
from aiedsl.kernels.call_checks import check_call, rtp_writes


def check_kernel_calls(d: Design) -> None:
    """Every call passes what its kernel's signature declares: buffers of its types, scalars
    its C++ can take (in their dtype's range, and the value it is compiled for or the range it
    narrows to), rtp slots whose every write the kernel can take, loop indices it can hold."""
    writes = rtp_writes(d)
    for core in d.cores:
        acq = acquires(core)
        for call, loops in calls_in_loops(core):
            check_call(d, core.name, call, acq, writes, loops)
