"""The alignment check: every buffer a core's code can read with vector loads starts where the
compiler was told it does.

mlir-aie's address pass places buffers back to back in a bank without aligning them, and its
core lowering then tells the compiler each buffer is 32-byte aligned
(:attr:`~aiedsl.targets.TargetModel.core_buffer_align`). A buffer after one whose size is not a
multiple of 32 bytes starts off that boundary, and a vector load from it, which drops the low
address bits, reads other elements: the design compiles and computes wrong. aiedsl knows every
address before anything is compiled, so it says so here.
"""

from __future__ import annotations

from aiedsl.errors import DesignError
from aiedsl.ir import BufferAlloc, Design, Loc
from aiedsl.place.alloc import local_buffer_name
from aiedsl.targets import TargetModel

SMALLEST_VECTOR = 16
"""Bytes of the narrowest vector access (128 bits): a buffer smaller than that is read by
scalar loads alone, which need only their element's alignment."""


def check_alignment(d: Design, target: TargetModel) -> None:
    """Raise a DesignError for the first buffer of a core's code (a fifo's buffer at a core's
    end, a runtime parameter, a core-local buffer) of at least 16 bytes that does not start on
    the alignment its size allows (32 bytes, 16 for one under 32 bytes)."""
    if d.physical is None:
        return
    buffers = d.physical.buffers
    for b in sorted(buffers, key=lambda b: (b.tile[1], b.tile[0], b.address)):
        if target.kind_of(b.tile) != "core" or b.nbytes < SMALLEST_VECTOR or not _core_reads(d, b):
            continue
        need = target.core_buffer_align if b.nbytes >= target.core_buffer_align \
            else SMALLEST_VECTOR
        if b.address % need == 0:
            continue
        odd = [o for o in buffers if o.tile == b.tile and o.bank == b.bank
               and o.address < b.address and o.nbytes % need]
        culprits = ", ".join(f"'{o.name}' ({o.nbytes} B)" for o in odd) or "the buffers before it"
        raise DesignError(
            "buffer alignment", f"buffer '{b.name}' ({b.nbytes} B) in the core at "
            f"{b.tile} starts at 0x{b.address:05x}, not on a {need}-byte boundary",
            loc=_loc(d, b), found=f"0x{b.address:05x} = {b.address // need} x {need} + "
            f"{b.address % need}",
            limit=f"a multiple of {need} bytes: mlir-aie's core lowering tells the compiler "
            f"every buffer is {target.core_buffer_align}-byte aligned (AIECoreToStandard's "
            "memref.assume_alignment) and its address pass aligns none (AIEAssignBuffers: "
            "\"Fixme: alignment\"), so a vector load from it reads other elements",
            fix=f"make the buffers before it in bank {b.bank}, {culprits}, a multiple of "
            f"{need} bytes (pad their element types)")


def _core_reads(d: Design, b: BufferAlloc) -> bool:
    """Whether code on a core can read ``b``: a fifo buffer at a core's end (not a link's, which
    only a DMA reads), a runtime parameter or a core-local buffer (not the stack)."""
    if b.fifo is None:
        return not b.name.endswith(" stack")
    f = d.fifo(b.fifo)
    return any(e.kind == "core" and e.tile == b.tile for e in (f.producer, *f.consumers)) or (
        d.physical is not None and d.physical.shared.get(f.name) == b.tile)


def _loc(d: Design, b: BufferAlloc) -> Loc:
    """The design line that made ``b``: its fifo's, rtp's or local's declaration."""
    if b.fifo is not None:
        return d.fifo(b.fifo).loc
    for r in d.rtps:
        if r.name == b.name:
            return r.loc
    for local in d.locals:
        for core in d.cores:
            if core.tile == b.tile and core.name in local.cores \
                    and local_buffer_name(local, b.tile) == b.name:
                return local.loc
    return d.loc
