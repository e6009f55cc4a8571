"""Check that the DMA layouts deliver each blocked kernel argument in the order it reads.

A kernel that reads its tile in ``br x bc`` blocks (``buffer(..., blocks=(br, bc))``, as the
library's matmul does for the device's mmul shape) gives wrong numbers, not an error, when the
memtile packs the tile another way: ``check`` passes and only ``sim`` fails. This check follows
the data the same way the simulator does, without running it:

* an input read from a fifo that a memtile sends: the memtile holds the tile row-major (it came
  from the host in increasing address order), its ``dims_to_stream`` orders the stream, and
  the core's ``dims_from_stream`` places it; the result must be the kernel's blocks. When the
  memtile's element is larger than the core's (a forward that regroups, e.g. a K run of A's tile
  row, or a split part read from its offset), the stream's first core element is followed back
  to host addresses: it must be the tile's rows x cols block of the host matrix, placed in the
  kernel's blocks. A 2-D host tensor's rows are its own; a 1-D one's (IRON's whole_array
  declares ``(M*K,)``) are the runs the fill reads the same distance apart, longer than a tile
  row. A tile that is one contiguous run of a 1-D host is not judged: the host program may
  have put it in any order (in the kernel's blocks already, say);
* an output written into a fifo that a memtile receives: the memtile sends each part on with
  its ``dims_to_stream``; each part must leave in row-major order (the blocks undone).

Where the order before the memtile cannot be known statically (a tile built by a core, or a
host pattern that is not in increasing address order), nothing is claimed.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from aiedsl.ir.program import acquires, calls
from aiedsl.distinct import has_repeats
from aiedsl.errors import DesignError
from aiedsl.ir.core_ops import BufferArg
from aiedsl.ir.design import Design
from aiedsl.ir.fifos import Fifo, Link
from aiedsl.ir.kernel import Kernel, KernelArg
from aiedsl.ir.loc import Loc
from aiedsl.ir.runtime import Transfer
from aiedsl.ir.types import Dim, Pattern, TensorType, dims_index, first_indices


def block_order(rows: int, cols: int, br: int, bc: int) -> np.ndarray:
    """Row-major index held at each position of a tile stored in ``br x bc`` blocks."""
    idx = np.arange(rows * cols, dtype=np.int64).reshape(rows // br, br, cols // bc, bc)
    return idx.transpose(0, 2, 1, 3).reshape(-1)


def _block_shape(rows: int, cols: int, matches: Callable[[np.ndarray], bool]
                 ) -> tuple[int, int] | None:
    """The first ``br x bc`` block layout of a ``rows x cols`` tile that ``matches``."""
    for br in range(1, rows + 1):
        for bc in range(1, cols + 1):
            if rows % br == 0 and cols % bc == 0 and matches(block_order(rows, cols, br, bc)):
                return br, bc
    return None


def describe(order: np.ndarray, rows: int, cols: int) -> str:
    """Name a layout: ``row-major``, ``8x4 blocks`` or ``another order``."""
    if np.array_equal(order, np.arange(order.size)):
        return "row-major"
    shape = _block_shape(rows, cols, lambda b: np.array_equal(order, b))
    return f"{shape[0]}x{shape[1]} blocks" if shape else "another order"


def check_kernel_layouts(d: Design) -> None:
    """Every blocked kernel argument receives (or sends on) its tile in its blocks."""
    seen: set[tuple[str, str, tuple]] = set()
    unblocked: set[tuple[str, int, int, tuple[int, int]]] = set()  # (see _check_output)
    links_to = {n: link for link in d.links for n in link.dsts}
    links_from = {n: link for link in d.links for n in link.srcs}
    for core in d.cores:
        acq = acquires(core)
        for call in calls(core):
            k = d.kernel(call.kernel)
            for arg, param in zip(call.args, k.args):
                if param.blocks is None or not isinstance(arg, BufferArg):
                    continue
                f = d.fifo(acq[arg.value].fifo)
                # consumers may each have their own layout (per-consumer dims_from_stream)
                key = (f.name, param.name, next(
                    (c.dims for c in f.consumers if c.core == core.name), ()))
                if key in seen or param.type is None or len(param.type.shape) != 2:
                    continue
                seen.add(key)
                if acq[arg.value].port == "consume":
                    others = [(q, d.fifo(acq[a.value].fifo)) for a, q in zip(call.args, k.args)
                              if q is not param and q.blocks is not None and q.type is not None
                              and isinstance(a, BufferArg) and acq[a.value].port == "consume"]
                    _check_input(d, f, k, param, links_to, call.loc, core.name, others)
                else:
                    _check_output(d, f, k, param, links_from, call.loc, unblocked)


def _check_input(d: Design, f: Fifo, k: Kernel, param: KernelArg, links_to: dict[str, Link],
                 call_loc: Loc, core: str, others: list[tuple[KernelArg, Fifo]]) -> None:
    """``param``'s tile as fifo ``f`` delivers it to ``core`` is in the kernel's blocks;
    ``others`` are the call's other blocked inputs and their fifos (a mismatch that swapping
    two arguments would cure says so)."""
    assert param.type is not None and param.blocks is not None
    rows, cols = param.type.shape
    delivered = _delivered(d, f, rows, cols, links_to, core)
    if delivered is None:
        return
    held, link, host = delivered
    want = block_order(rows, cols, *param.blocks)
    if np.array_equal(held, want):
        return
    n = rows * cols
    br, bc = param.blocks
    if link is None:  # straight from the host: the host may hold it so (notes.py says it)
        return
    swapped = next((q for q, g in others if _cures(d, f, q, g, param, links_to, core)), None)
    if swapped is not None:
        other = next(g.name for q, g in others if q is swapped)
        fix = (f"swap the call's arguments '{param.name}' and '{swapped.name}': fifo "
               f"'{f.name}' delivers the blocks '{swapped.name}' reads, and fifo '{other}' "
               f"those '{param.name}' reads")
    else:
        fix = (f"pack it with dims_to_stream=block_dims({rows}, {cols}, {br}, {bc}); take the "
               "block shape from the kernel (mm.ir.params) so it follows the device's mmul")
        written = next((c.dims for c in d.fifo(link.srcs[0]).consumers if c.is_link_end), ())
        if link.kind == "split":
            fix = (f"give the parts dims_to_stream=block_dims({rows}, {cols}, {br}, {bc}) (each "
                   "read from its offset)" + (" and let the memtile write its input in order "
                                             "(no dims_from_stream)" if written else ""))
        elif host.size != n:
            fix = (f"make the memtile's dims_to_stream over its {host.size}-element buffer and "
                   f"the core's dims_from_stream deliver each {rows}x{cols} tile in {br}x{bc} "
                   "blocks (aiedsl.lang.gemm.staged_dims_a does it for a K run of a GEMM's A)")
    written = next((c.dims for c in d.fifo(link.srcs[0]).consumers if c.is_link_end), ())
    found = _dims_text(f.producer.dims, "dims_to_stream") + " at the memtile"
    if written:
        found = f"{_dims_text(written, 'dims_from_stream')} writing its input, {found}"
    raise DesignError(
        "kernel layout", f"kernel '{k.symbol}' reads '{param.name}' ({param.type}) in {br}x{bc} "
        f"blocks, but fifo '{f.name}' delivers it as {describe(held, rows, cols)}", loc=f.loc,
        limit=f"{br}x{bc} blocks of the {rows}x{cols} tile, blocks row-major", found=found,
        related=[(f"the call of '{k.symbol}'", call_loc)], fix=fix)


def _cures(d: Design, f: Fifo, q: KernelArg, g: Fifo, param: KernelArg,
           links_to: dict[str, Link], core: str) -> bool:
    """Whether passing fifo ``f`` as ``q`` and ``g`` (now passed as ``q``) as ``param`` would
    give both parameters their blocks: the two arguments are swapped."""
    assert q.type is not None and q.blocks is not None
    assert param.type is not None and param.blocks is not None
    if tuple(q.type.shape) != tuple(param.type.shape) or q.type.dtype != param.type.dtype:
        return False
    rows, cols = param.type.shape
    mine = _delivered(d, f, rows, cols, links_to, core)
    theirs = _delivered(d, g, rows, cols, links_to, core)
    return mine is not None and theirs is not None and np.array_equal(
        mine[0], block_order(rows, cols, *q.blocks)) and np.array_equal(
        theirs[0], block_order(rows, cols, *param.blocks))


def _delivered(d: Design, f: Fifo, rows: int, cols: int, links_to: dict[str, Link], core: str
               ) -> tuple[np.ndarray, Link | None, np.ndarray] | None:
    """The row-major tile index at each position of ``core``'s buffer as fifo ``f`` fills it
    with a ``rows x cols`` tile, with the link that sends it and the host offsets of the
    memtile's first element; None where the order cannot be known statically."""
    link = links_to.get(f.name)
    if f.producer.kind == "shim" and not f.producer.dims:
        return _from_host(d, f, rows, cols, core)
    if not f.producer.is_link_end or link is None:
        return None
    host = _first_element(d, link)
    if host is None:
        return None
    n = rows * cols
    frm = _order(next(c.dims for c in f.consumers if c.core == core), n)
    to: np.ndarray | None
    if host.size == n:
        to = _order(f.producer.dims, n)  # positions of the memtile's row-major tile
    elif host.size > n and link.kind in ("forward", "split"):
        if link.kind == "forward":
            reads = _order(f.producer.dims, host.size)[:n]
        else:  # a split part: its layout read from its offset in the memtile's element
            reads = link.offsets[link.dsts.index(f.name)] + _order(f.producer.dims, n)
        to = _tile_index(d, link, host, reads, rows, cols)
        if to is None:
            return None  # the core's element is not a block of a 2-D host matrix
    else:
        return None
    held = np.empty(n, dtype=np.int64)
    held[frm] = to  # the core's buffer position frm[j] receives row-major element to[j]
    return held, link, host


def _from_host(d: Design, f: Fifo, rows: int, cols: int, core: str
               ) -> tuple[np.ndarray, None, np.ndarray] | None:
    """:func:`_delivered` of fifo ``f`` that the runtime fills straight from the host (no
    memtile between: a newcomer's first GEMM, whose blocked matmul read a row-major tile, passed
    ``check`` and failed every element in ``sim``): its first fill's first ``rows x cols``
    elements, in increasing host address order, a block of the host matrix (a 2-D tensor's
    rows, or runs the fill reads the same distance apart), placed as the core's
    ``dims_from_stream`` places them; None where that cannot be known."""
    fills = [t for t in d.runtime if isinstance(t, Transfer) and t.fifo == f.name]
    if not fills:
        return None
    fill, n = fills[0], rows * cols
    tensor = d.tensor(fill.tensor).type
    if tensor.dtype != f.elem.dtype or f.elem.numel != n:
        return None
    first = _rising(fill.pattern, n)
    to = None if first is None else _host_block(first - first.min(), tensor, rows, cols)
    if first is None or to is None:
        return None
    held = np.empty(n, dtype=np.int64)
    held[_order(next(c.dims for c in f.consumers if c.core == core), n)] = to
    return held, None, first


def _tile_index(d: Design, link: Link, host: np.ndarray, to: np.ndarray, rows: int,
                cols: int) -> np.ndarray | None:
    """Row-major tile index of each element the memtile streams into the core's first element
    (``to``: positions in the memtile buffer, whose host offsets are ``host``), when those
    elements are a ``rows x cols`` block of the host matrix filled; else None.

    A 2-D host tensor's rows are its declared rows. Any other host tensor (IRON's whole_array
    declares ``A_ty = (M*K,)``) is a matrix only as the runtime pattern reads it: when the
    elements are ``rows`` runs of ``cols``, the same distance ``ld > cols`` apart in the host (the
    fill skips the rest of each host row), those runs are the tile's rows, as a 2-D tensor of
    row length ``ld`` would say. When they are one contiguous run of the host, nothing says how
    the host program ordered the tile inside it (row by row, or already in blocks): nothing is
    claimed."""
    src = d.fifo(link.srcs[0])
    fill = next(t for t in d.runtime if isinstance(t, Transfer) and t.fifo == src.name)
    tensor = d.tensor(fill.tensor).type
    if tensor.dtype != src.elem.dtype:
        return None
    return _host_block(host[to] - host[to].min(), tensor, rows, cols)


def _rising(p: Pattern, n: int) -> np.ndarray | None:
    """The host elements of the first ``n`` that pattern ``p`` moves, when they are ``n`` and in
    increasing host address order; else None."""
    first = first_indices(p, n)
    return first if first.size == n and bool(np.all(np.diff(first) > 0)) else None


def _host_block(rel: np.ndarray, tensor: TensorType, rows: int, cols: int
                ) -> np.ndarray | None:
    """The row-major tile index of each host offset in ``rel`` (from the block's first), when
    they are a ``rows x cols`` block of the host matrix; else None (see :func:`_tile_index`
    for what the host's rows are)."""
    if has_repeats(rel):
        return None
    if len(tensor.shape) == 2:
        ld = tensor.shape[1]
    elif rows > 1:
        ld = int(np.sort(rel)[cols])  # where the second row would start
        if ld == cols:
            return None  # one contiguous run of the host: its order is the host program's
    else:
        return None
    i, j = rel // ld, rel % ld
    if i.max() >= rows or j.max() >= cols:
        return None
    return i * cols + j


def _check_output(d: Design, f: Fifo, k: Kernel, param: KernelArg,
                  links_from: dict[str, Link], call_loc: Loc,
                  unblocked: set[tuple[str, int, int, tuple[int, int]]]) -> None:
    """``param``, written in its blocks into fifo ``f``, leaves the memtile row-major.
    ``unblocked``: the (memtile output, rows, cols, blocks) found to leave so already (each
    output is the join of several cores' fifos)."""
    link = links_from.get(f.name)
    if link is None or link.kind == "split" or f.producer.dims or any(
            c.dims for c in f.consumers):
        return  # the memtile's part holds exactly what the core wrote only in this case
    out = d.fifo(link.dsts[0])
    assert param.type is not None and param.blocks is not None
    rows, cols = param.type.shape
    n = rows * cols
    key = (out.name, rows, cols, param.blocks)
    if key in unblocked:
        return
    reads = _order(out.producer.dims, n)
    if np.array_equal(block_order(rows, cols, *param.blocks)[reads], np.arange(n)):
        unblocked.add(key)
        return
    br, bc = param.blocks
    raise DesignError(
        "kernel layout", f"kernel '{k.symbol}' writes '{param.name}' ({param.type}) in {br}x{bc} "
        f"blocks, but the memtile sends fifo '{out.name}' on {_undoes(reads, rows, cols)}",
        loc=out.loc, limit=f"each {rows}x{cols} part leaves row-major (its {br}x{bc} blocks "
        "undone)", found=_dims_text(out.producer.dims, "dims_to_stream") + " at the memtile",
        related=[(f"the call of '{k.symbol}'", call_loc)],
        fix=f"unpack it with dims_to_stream=unblock_dims({rows}, {cols}, {br}, {bc}) on "
        + (f"channel '{out.channel or f.channel}'" if out.channel or f.channel
           else f"'{out.name}'")
        + f" (line {out.loc.line}), what the memtile sends on")


def _drained_in_blocks(d: Design, f: Fifo, param: KernelArg) -> bool:
    """Whether ``param``, written in its blocks into fifo ``f`` that the runtime drains straight
    to the host, lands there in those blocks, not row-major: its first drain's first element, a
    block of a 2-D host tensor (or runs the drain writes the same distance apart), in increasing
    host address order. False where that cannot be known."""
    assert param.type is not None and param.blocks is not None
    rows, cols = param.type.shape
    n = rows * cols
    drains = [t for t in d.runtime if isinstance(t, Transfer) and t.fifo == f.name]
    if not drains or f.elem.numel != n or d.tensor(drains[0].tensor).type.dtype != f.elem.dtype:
        return False
    first = _rising(drains[0].pattern, n)
    to = None if first is None else _host_block(first - first.min(),
                                                d.tensor(drains[0].tensor).type, rows, cols)
    return to is not None and not np.array_equal(block_order(rows, cols, *param.blocks), to)


def host_blocks(d: Design) -> list[tuple[str, Loc, str, str]]:
    """Blocked kernel arguments whose fifo the runtime fills or drains straight from or to a
    host matrix (no memtile between): the host must hold (or gets) each tile in the kernel's
    blocks. Legal (a host may pre-block its weights, as the library's conv2d tests do), but a
    host holding it row-major gets wrong numbers (a newcomer's first GEMM passed ``check`` and
    failed every element): per argument, (core, call line, text, "fill" or "drain") for
    :mod:`aiedsl.notes`."""
    out: list[tuple[str, Loc, str, str]] = []
    seen: set[tuple[str, str]] = set()
    for core in d.cores:
        acq = acquires(core)
        for call in calls(core):
            k = d.kernel(call.kernel)
            for arg, param in zip(call.args, k.args):
                if param.blocks is None or not isinstance(arg, BufferArg) or \
                        param.type is None or len(param.type.shape) != 2:
                    continue
                a = acq[arg.value]
                f = d.fifo(a.fifo)
                if (f.name, param.name) in seen:
                    continue
                seen.add((f.name, param.name))
                rows, cols = param.type.shape
                br, bc = param.blocks
                tile = f"each {rows}x{cols} tile"
                if a.port == "consume" and f.producer.kind == "shim" and not f.producer.dims:
                    got = _from_host(d, f, rows, cols, core.name)
                    if got is None or np.array_equal(got[0], block_order(rows, cols, br, bc)):
                        continue
                    out.append((core.name, call.loc, f"kernel '{k.symbol}' reads '{param.name}' "
                                f"in {br}x{bc} blocks, and the runtime fills fifo '{f.name}' "
                                "straight from the host (no memtile between): the host must hold "
                                f"{tile} in those blocks already; one held row-major gives wrong "
                                "numbers: send it through a memtile that packs it, channel(..., "
                                f"via=memtile, dims_to_stream=block_dims({rows}, {cols}, {br}, "
                                f"{bc}))", "fill"))
                elif a.port == "produce" and not f.producer.dims and \
                        [c.kind for c in f.consumers] == ["shim"] and not f.consumers[0].dims \
                        and _drained_in_blocks(d, f, param):
                    out.append((core.name, call.loc, f"kernel '{k.symbol}' writes "
                                f"'{param.name}' in {br}x{bc} blocks, and the runtime drains "
                                f"fifo '{f.name}' straight to the host (no memtile between): "
                                f"the host gets {tile} in those blocks; to get it row-major, "
                                "send it through a memtile that unpacks it, channel(..., "
                                f"via=memtile, dims_to_stream=unblock_dims({rows}, {cols}, {br}, "
                                f"{bc}))", "drain"))
    return out


def _undoes(reads: np.ndarray, rows: int, cols: int) -> str:
    """What a memtile's read order does to a part: nothing, or undo which blocks."""
    if np.array_equal(reads, np.arange(reads.size)):
        return "unchanged, blocks and all"
    shape = _block_shape(rows, cols, lambda b: np.array_equal(b[reads], np.arange(reads.size)))
    return f"undoing {shape[0]}x{shape[1]} blocks" if shape else "in another order"


def _order(dims: tuple[Dim, ...], n: int) -> np.ndarray:
    idx = dims_index(dims, n)
    return np.arange(n, dtype=np.int64) if idx is None else idx


def _first_element(d: Design, link: Link) -> np.ndarray | None:
    """The host offset held at each position of the first element the memtile receives, when
    the stream brings it in increasing host address order (row-major), placed as the memtile
    writes it (in order, or with its input's ``dims_from_stream``: a split's parts each from its
    offset, a forward's whole element when it is the link's buffer); else None."""
    src = d.fifo(link.srcs[0])
    written = next((c.dims for c in src.consumers if c.is_link_end), ())
    if src.producer.kind != "shim" or any(c.dims for c in src.consumers if not c.is_link_end) \
            or (written and link.kind not in ("split", "forward")):
        return None
    if written and link.kind == "forward" and d.fifo(link.dsts[0]).elem.numel > src.elem.numel:
        return None  # its BD writes the larger output element: several inputs, not the first
    fills = [t for t in d.runtime if isinstance(t, Transfer) and t.fifo == src.name]
    if not fills:
        return None
    p, n = fills[0].pattern, src.elem.numel
    first = _rising(p, n)
    if first is None:
        return None
    first -= p.offset
    if written and link.kind == "forward":  # one BD over the element, in that order
        held = np.full(n, -1, dtype=np.int64)
        held[_order(written, n)] = first
        return held
    if written:  # a split's input: the memtile writes each part with them, from its offset
        held = np.full(n, -1, dtype=np.int64)
        for off, name in zip(link.offsets, link.dsts):
            size = d.fifo(name).elem.numel
            held[off + _order(written, size)] = first[off:off + size]
        return held
    return first


def _dims_text(dims: tuple[Dim, ...], what: str) -> str:
    if not dims:
        return f"no {what}"
    return f"{what} [" + ", ".join(f"({x.size}, {x.stride})" for x in dims) + "]"
