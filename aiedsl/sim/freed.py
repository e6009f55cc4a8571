"""What a resource costs a run, measured: the run simulated again (kernels timed only) with that
resource made free, and the share of the device time it saves.

A resource's busy share says how much of the time it works, not how much of the time the run
waits for it: a run where nothing is busy most of the time goes to waits between resources, and
the busiest one may lie off the path the time takes (a tester: gemm_bf16's DRAM reads, busy
51%, freed save 13%; the runtime's issuing, busy 47%, freed saves 38%). The summary names
what limits such a run by these savings (:mod:`aiedsl.sim.stats`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from aiedsl.ir.design import Design
from aiedsl.targets.model import TargetModel

if TYPE_CHECKING:
    from aiedsl.sim.machine import Machine
    from aiedsl.sim.state import Watch

Kind = Literal["compute", "dram", "dma", "runtime"]

UNLIMITED = 1 << 60
"""Bytes per second, or per cycle, that no transfer of a run comes near: a rate made free (2^40
bytes a second still cost an 8-column npu2 GEMM 0.1% of its run, a reviewer measured)."""


def freed(d: Design, target: TargetModel, kind: Kind) -> tuple[Design, TargetModel]:
    """Placed design ``d`` and ``target`` with resource ``kind`` made free: kernels that take
    no cycles (``compute``), host memory of unlimited bandwidth (``dram``), DMA channels and
    streams of unlimited rate with no burst overhead (``dma``), shim DMA tasks and register
    writes issued at no cost (``runtime``)."""
    tm = target.timing
    if kind == "compute":
        kernels = tuple(k.model_copy(update={"cycles": 0, "profiles": ()}) for k in d.kernels)
        d = d.model_copy(update={"kernels": kernels})
        tm = tm.model_copy(update={"kernel_call_cycles": 0})
    elif kind == "dram":
        tm = tm.model_copy(update={"dram_read_bytes_per_s": float(UNLIMITED),
                                   "dram_write_bytes_per_s": float(UNLIMITED)})
    elif kind == "dma":
        tm = tm.model_copy(update={"dma_bytes_per_cycle": dict.fromkeys(
            tm.dma_bytes_per_cycle, UNLIMITED), "shim_burst_cycles": 0.0})
        target = target.model_copy(update={"stream_bytes_per_cycle": UNLIMITED})
    else:
        tm = tm.model_copy(update={"shim_task_s": 0.0})  # register writes are a third of it
    return d, target.model_copy(update={"timing": tm})


def saving(m: Machine, kind: Kind, total: float, watch: Watch | None = None) -> float | None:
    """The share of ``m``'s device time (``total`` cycles) that its run, simulated again with
    ``kind`` made free (:func:`freed`), saves; None when that run does not end. ``watch`` hears
    that run start, as stage ``"free <kind>"``."""
    from aiedsl.sim.hang_run import timed_cycles

    cycles = timed_cycles(*freed(m.design, m.target, kind), m.clock_hz,
                          None if watch is None else (f"free {kind}", watch))
    return None if cycles is None else max(0.0, (total - cycles) / total)
