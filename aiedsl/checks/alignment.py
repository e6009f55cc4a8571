"""The alignment check: every buffer a kernel is given starts where its code expects it to.

mlir-aie's address pass places buffers back to back in a bank without aligning them
(``AIEAssignBuffers``: "Fixme: alignment"), while the kernels' vector loads and stores
(``aie::load_v``, ``aie::store_v``: 256-bit accesses on a 32-byte boundary, the core dropping the
low address bits; on AIE2P also 512-bit ones, on a 64-byte boundary) and mlir-aie's own core code
(``AIECoreToStandard``'s ``memref.assume_alignment`` 32 on every buffer) take each buffer to be
aligned so (:attr:`~aiedsl.targets.TargetModel.core_buffer_align`,
:attr:`~aiedsl.targets.TargetModel.core_vector_align`). A buffer after one whose size is not a
multiple of 32 bytes starts off that boundary, and the kernel reads other elements: the design
compiles and computes wrong. aiedsl knows every address before anything is compiled, so it says
so here. A runtime parameter is read by scalar loads alone (``memref.load`` of one slot), so it
needs only its element's alignment.
"""

from __future__ import annotations

from aiedsl.errors import DesignError
from aiedsl.ir.design import Design
from aiedsl.ir.loc import Loc
from aiedsl.ir.physical import BufferAlloc
from aiedsl.place.alloc import local_buffer_name
from aiedsl.targets import TargetModel

def check_alignment(d: Design, target: TargetModel) -> None:
    """Raise a DesignError for the first buffer a kernel is given (a fifo's buffer at a core's
    end, a core-local buffer) that does not start on the alignment its size allows
    (:func:`needed_alignment`); for a runtime parameter, its element's size."""
    if d.physical is None:
        return
    buffers = d.physical.buffers
    for b in sorted(buffers, key=lambda b: (b.tile[1], b.tile[0], b.address)):
        element = _element_bytes(d, b) if target.kind_of(b.tile) == "core" else None
        if element is None:
            continue
        need = element if _is_rtp(d, b) else needed_alignment(target, b.nbytes, element)
        if b.address % need == 0:
            continue
        odd = [o for o in buffers if o.tile == b.tile and o.bank == b.bank
               and o.address < b.address and o.nbytes % need]
        stacks = [o for o in odd if o.name.endswith(" stack")]
        culprits = ", ".join(f"'{o.name}' ({o.nbytes} B)" for o in odd) or "the buffers before it"
        fix = (f"give the herd a stack= that is a multiple of {need} bytes"
               if stacks else f"make the buffers before it in bank {b.bank}, {culprits}, a "
               f"multiple of {need} bytes (pad their element types)")
        raise DesignError(
            "buffer alignment", f"buffer '{b.name}' ({b.nbytes} B) in the core at "
            f"{b.tile} starts at 0x{b.address:05x}, not on a {need}-byte boundary",
            loc=_loc(d, b), found=f"0x{b.address:05x} = {b.address // need} x {need} + "
            f"{b.address % need}",
            limit=f"a multiple of {need} bytes: mlir-aie's address pass aligns no buffer "
            "(AIEAssignBuffers: \"Fixme: alignment\"), while the kernels' vector loads and "
            f"stores take {_vector_words(target, need)}, and a scalar load its element's, so "
            "the kernel reads other elements", fix=fix)


def needed_alignment(target: TargetModel, nbytes: int, element: int) -> int:
    """The alignment in bytes of a core buffer of ``nbytes`` that kernels read: the widest
    vector it can hold (a kernel may load or store one anywhere in it), else its element's.

    >>> from aiedsl.targets import get_target
    >>> [needed_alignment(get_target("npu1"), n, 4) for n in (8, 16, 32, 4096)]
    [4, 16, 32, 32]
    >>> [needed_alignment(get_target("npu2"), n, 4) for n in (32, 64, 4096)]
    [32, 64, 64]
    """
    for width in (target.core_vector_align, target.core_buffer_align,
                  target.core_narrow_vector_bytes):
        if nbytes >= width:
            return width
    return element


def _vector_words(target: TargetModel, need: int) -> str:
    """How the limit names the vector access that takes ``need`` bytes' alignment."""
    if need > target.core_buffer_align:
        return (f"a {need}-byte boundary for a {need * 8}-bit vector on {target.arch} (a "
                f"{target.core_buffer_align}-byte one tears them; mlir-aie aligns such buffers "
                "so there since 2026)")
    return (f"a {target.core_buffer_align}-byte boundary (the core drops the low address bits; "
            "mlir-aie's core code assumes it too: memref.assume_alignment)")


def _element_bytes(d: Design, b: BufferAlloc) -> int | None:
    """The element size of ``b`` when code on a core reads it (a fifo buffer at a core's end,
    not a link's, which only a DMA reads; a runtime parameter; a core-local buffer), else None
    (the stack, a link's buffers)."""
    if b.fifo is not None:
        f = d.fifo(b.fifo)
        read = any(e.kind == "core" and e.tile == b.tile for e in (f.producer, *f.consumers)) \
            or (d.physical is not None and d.physical.shared.get(f.name) == b.tile)
        return f.elem.dt.itemsize if read else None
    for r in d.rtps:
        if r.name == b.name:
            return r.type.dt.itemsize
    for local in d.locals:
        if any(local_buffer_name(local, c.tile) == b.name for c in d.cores
               if c.tile == b.tile and c.name in local.cores):
            return local.type.dt.itemsize
    return None


def _is_rtp(d: Design, b: BufferAlloc) -> bool:
    return b.fifo is None and any(r.name == b.name for r in d.rtps)


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
