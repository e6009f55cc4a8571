"""How many times a kernel that sums rounds an element of an output: what the tolerance of a
bf16 sum allows for (:func:`aiedsl.tolerances.bf16_sum_bound`). Apart from :mod:`aiedsl.ir.program`
because it follows the cores' results downstream (:class:`~aiedsl.ir.dataflow.Dataflow`, which
reads :mod:`aiedsl.ir.program` itself)."""

from __future__ import annotations

from collections import Counter

from aiedsl.ir.core_ops import Acquire, BufferArg, Call, LocalArg
from aiedsl.ir.dataflow import Dataflow
from aiedsl.ir.design import Design
from aiedsl.ir.program import walk, writing_kernels

_LOCAL = "local:"
"""How a core-local buffer is named among acquire results here (no result has a colon)."""


def sum_roundings(d: Design, tensor: str) -> int:
    """How many times a kernel that sums rounds an element of output ``tensor``: the most calls
    of such a kernel on one buffer of the output's element type (a GEMM's K/k matmul calls into
    a bf16 C) between that buffer's acquire and its release, over the cores whose results reach
    ``tensor``; for a core-local buffer, its summing calls per write that starts it over (a zero
    kernel's). 1 when no kernel sums into a buffer of that type (an f32 accumulator narrowed once
    at the end). :func:`aiedsl.tolerances.bf16_sum_bound` allows each rounding a share.

    >>> from aiedsl.loader import load_design
    >>> sum_roundings(load_design("designs/gemm_bf16.py", {"OUT": "bf16"}).ir, "C")  # 512 / 64
    8
    """
    dt = d.tensor(tensor).type.dtype
    kernels = {k.symbol: k for k in d.kernels}
    flow = Dataflow(d)
    most = 1
    for core in d.cores:
        if tensor not in flow.downstream(core.name):
            continue
        starts: Counter[str] = Counter()  # acquires of a buffer; other writes of a local
        sums: Counter[str] = Counter()
        for op, mult in walk(core.body):
            if isinstance(op, Acquire):
                starts[op.result] += mult * op.count
            elif isinstance(op, Call):
                k = kernels[op.kernel]
                for a, arg in zip(k.args, op.args):
                    if a.access == "in" or a.dtype != dt:
                        continue
                    if isinstance(arg, BufferArg):
                        key = arg.value
                    elif isinstance(arg, LocalArg):
                        key = _LOCAL + arg.local
                    else:
                        continue
                    if k.sums and a.access == "inout":
                        sums[key] += mult
                    elif key.startswith(_LOCAL):
                        starts[key] += mult
        for key, count in sums.items():
            most = max(most, count // max(starts[key], 1))
    return most


def declared_roundings(d: Design, tensor: str) -> int:
    """The most roundings a kernel declares each of its results goes through in one call
    (``declare(..., roundings=2)``: a scale rounded to bf16, then the product), over the
    kernels whose results reach output ``tensor`` (:func:`~aiedsl.ir.program.writing_kernels`:
    not a sibling call of the same core that writes something else); 1 when none declares
    more. The comparison of an output no kernel sums into allows each element that many ulps."""
    kernels = {k.symbol: k for k in d.kernels}
    return max((kernels[s].roundings for s in writing_kernels(d, tensor)), default=1)
