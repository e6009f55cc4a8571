"""Blocked layouts: how the DMA packs a matrix into the mmul blocks a kernel reads.

A ``rows x cols`` matrix in ``(br, bc)`` blocks is stored block after block (blocks in row-major
order), each block row-major. :func:`block_dims` gives the memtile ``dims_to_stream`` that packs a
row-major tile; :func:`unblock_dims` the one that unpacks.
"""

from __future__ import annotations

import numpy as np

from aiedsl.errors import DesignError
from aiedsl.source_loc import caller_loc
from aiedsl.values import as_int, shown


MOVE_UNITS: dict[int, np.dtype] = {
    1: np.dtype(np.uint8), 2: np.dtype(np.uint16), 4: np.dtype(np.uint32),
    8: np.dtype(np.uint64), 16: np.dtype(np.complex128)}
"""A numpy type of each size that moves a contiguous run of elements as one element (only
copied, never computed on): numpy's strided copies cost per inner run, so moving a block's
8-byte row of four bf16 as one element is several times faster than moving the four."""


def block(m: np.ndarray, br: int, bc: int) -> np.ndarray:
    """Row-major ``(R, C)`` -> flat blocked storage of ``(br, bc)`` blocks: a new array, never
    a view of ``m`` (one written into would change ``m``, and in a reference, whose inputs are
    read-only, fail as a write into a read-only array)."""
    m = np.asarray(m)
    if m.ndim != 2:
        raise DesignError(
            "block layout", f"block(m, {shown(br)}, {shown(bc)}) with m of shape "
            f"{list(m.shape)}", loc=caller_loc(), limit="a 2-D matrix (rows, cols)",
            found=f"shape {list(m.shape)}", fix="pass the matrix as rows x cols, e.g. "
            "m.reshape(rows, cols)")
    r, c, br, bc = _sizes("block", m.shape[0], m.shape[1], br, bc,
                          written=f"block(m, {shown(br)}, {shown(bc)}) with m of shape "
                          f"{list(m.shape)}")
    unit = MOVE_UNITS.get(bc * m.itemsize)
    if unit is None or not m.flags.c_contiguous:
        return _new(m.reshape(r // br, br, c // bc, bc).transpose(0, 2, 1, 3).reshape(-1), m)
    moved = m.view(unit).reshape(r // br, br, c // bc).transpose(0, 2, 1)
    return moved.copy().view(m.dtype).reshape(-1)  # a copy even when already in order


def unblock(flat: np.ndarray, rows: int, cols: int, br: int, bc: int) -> np.ndarray:
    """Flat blocked storage -> row-major ``(rows, cols)`` matrix: a new array, never a view of
    ``flat`` (see :func:`block`)."""
    flat = np.asarray(flat)
    written = (f"unblock(flat, {', '.join(shown(v) for v in (rows, cols, br, bc))}) with flat "
               f"of {flat.size} elements")
    rows, cols, br, bc = _sizes("unblock", rows, cols, br, bc, written=written)
    if flat.size != rows * cols:
        raise DesignError(
            "block layout", f"{written}: {rows} x {cols} is {rows * cols}",
            loc=caller_loc(), limit="rows x cols elements", found=f"{flat.size} elements",
            fix="give the matrix's rows and cols, and its blocks br, bc")
    unit = MOVE_UNITS.get(bc * flat.itemsize)
    if unit is None or not flat.flags.c_contiguous:
        return _new(flat.reshape(rows // br, cols // bc, br, bc).transpose(0, 2, 1, 3)
                    .reshape(rows, cols), flat)
    moved = flat.reshape(-1).view(unit).reshape(rows // br, cols // bc, br).transpose(0, 2, 1)
    return moved.copy().view(flat.dtype).reshape(rows, cols)


def _new(out: np.ndarray, source: np.ndarray) -> np.ndarray:
    """``out`` (a reshape of ``source``'s, which numpy makes a view when it can: blocks that
    span whole rows are already in order) as an array of its own."""
    return out.copy() if np.may_share_memory(out, source) else out


def block_dims(rows: int, cols: int, br: int, bc: int) -> list[tuple[int, int]]:
    """``dims_to_stream`` that reads a row-major ``rows x cols`` tile as ``(br, bc)`` blocks.

    >>> block_dims(64, 64, 4, 8)
    [(16, 256), (8, 8), (4, 64), (8, 1)]
    """
    rows, cols, br, bc = _sizes("block_dims", rows, cols, br, bc)
    return [(rows // br, br * cols), (cols // bc, bc), (br, cols), (bc, 1)]


def unblock_dims(rows: int, cols: int, br: int, bc: int) -> list[tuple[int, int]]:
    """``dims_to_stream`` that reads a blocked ``rows x cols`` tile out in row-major order.

    >>> unblock_dims(64, 64, 4, 4)
    [(16, 256), (4, 4), (16, 16), (4, 1)]
    """
    rows, cols, br, bc = _sizes("unblock_dims", rows, cols, br, bc)
    return [(rows // br, br * cols), (br, bc), (cols // bc, br * bc), (bc, 1)]


def _sizes(call: str, rows: object, cols: object, br: object, bc: object,
           written: str | None = None) -> tuple[int, int, int, int]:
    """The arguments of ``call`` (block_dims, unblock_dims, block or unblock) as plain ints
    (numpy's too); a DesignError at the design's line, naming the call as ``written`` (by
    default as its arguments read), unless they are positive and the blocks divide the tile
    (a 0 block divided by zero; a negative or too large one gave dims refused later as a
    pattern the design never wrote, and block() a bare numpy error)."""
    given = {"rows": rows, "cols": cols, "br": br, "bc": bc}
    if all(type(v) is int and v > 0 for v in given.values()) and \
            not rows % br and not cols % bc:  # type: ignore[operator]  # ints, just seen
        return rows, cols, br, bc  # type: ignore[return-value]  # the references' every call
    written = written or f"{call}({', '.join(shown(v) for v in given.values())})"
    fix = "give the tile's size and the kernel's blocks: the mmul's r, s, t (mm.ir.params)"
    ints = {}
    for name, value in given.items():
        n = as_int(value)
        if n is None or n < 1:
            raise DesignError("block layout", f"{written} has {name}={shown(value)}",
                              loc=caller_loc(), limit="positive ints: a rows x cols tile in "
                              "br x bc blocks", found=f"{name}={shown(value)}", fix=fix)
        ints[name] = n
    for size, block in (("rows", "br"), ("cols", "bc")):
        if ints[size] % ints[block]:
            raise DesignError(
                "block layout", f"{written}: blocks of {ints[block]} {size} do not tile "
                f"{ints[size]} {size}", loc=caller_loc(),
                limit=f"{block} dividing {size}: the tile is whole blocks",
                found=f"{size} % {block} = {ints[size]} % {ints[block]} = "
                f"{ints[size] % ints[block]}", fix=fix)
    return ints["rows"], ints["cols"], ints["br"], ints["bc"]
