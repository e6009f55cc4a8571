"""``manifest.json``: what a compiled build is and how to call it.

It records the design, device, tool versions and cache key, and the XRT kernel ABI that aiecc
packages (``aiecc-output__kernels.json``): kernel ``MLIR_AIE`` called with opcode 3, the
instruction buffer on group 1 with its length in 32-bit words, then one host buffer per runtime
tensor, in the design's argument order, on groups 3, 4, ... (at most 5).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from aiedsl.version import __version__
from aiedsl.ir.program import ops_per_run
from aiedsl.dtypes import dtype as lookup_dtype
from aiedsl.ir.design import Design
from aiedsl.ir.runtime import Transfer
from aiedsl.targets import TargetModel
from aiedsl.toolchain.discover import Tools
from aiedsl.kernels.units import kernel_units

KERNEL_NAME = "MLIR_AIE"
OPCODE = 3
INSTR_GROUP = 1
FIRST_BUFFER_GROUP = 3


def buffer_abi(d: Design) -> list[dict[str, Any]]:
    """One entry per runtime tensor: group id, name, shape, numpy dtype, bytes, direction."""
    fills = {op.tensor for op in d.runtime if isinstance(op, Transfer) and op.op == "fill"}
    drains = {op.tensor for op in d.runtime if isinstance(op, Transfer) and op.op == "drain"}
    out = []
    for t in sorted(d.tensors, key=lambda t: t.index):
        direction = ("inout" if t.name in fills and t.name in drains else
                     "out" if t.name in drains else "in")
        out.append({"group_id": FIRST_BUFFER_GROUP + t.index, "name": t.name,
                    "shape": list(t.type.shape),
                    "dtype": np.dtype(lookup_dtype(t.type.dtype).numpy).name,
                    "bytes": t.type.nbytes, "direction": direction})
    return out


def build_manifest(d: Design, target: TargetModel, tools: Tools, key: str, insts_bytes: int,
                   programs: dict[str, int] | None = None,
                   frames: dict[str, int] | None = None) -> dict[str, Any]:
    """The manifest of design ``d`` compiled with ``tools`` (``insts.bin`` is ``insts_bytes``;
    ``programs``: where each core's program ends in its program memory, for the cores whose
    ELF was found (the others listed as ``unread``); ``frames``: the least stack each kernel
    needs, for the kernels Peano reported, :mod:`aiedsl.toolchain.stack`)."""
    return {
        "design": d.name,
        "device": d.device,
        "aiedsl": __version__,
        "tools": tools.versions(),
        "cache_key": key,
        "xclbin": "aie.xclbin",
        "kernel": KERNEL_NAME,
        "opcode": OPCODE,
        "instructions": {"file": "insts.bin", "group_id": INSTR_GROUP,
                         "words": insts_bytes // 4},
        "buffers": buffer_abi(d),
        "ops_per_run": ops_per_run(d),
        "kernel_objects": [u.object for u in kernel_units(d.kernels)],
        "program_memory": {"bytes_per_core": target.program_memory,
                           "used": dict(programs or {}),
                           # said, not left out: an empty "used" read as nothing to worry about
                           "unread": [c.name for c in d.cores if c.name not in (programs or {})]},
        "stack": {"bytes_per_core": {c.name: c.stack for c in d.cores},
                  "kernel_frames": dict(frames or {})},
    }
