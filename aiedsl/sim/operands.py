"""What a core's kernel calls compute on, as the simulator hands it over: its buffers (written
only when read, when a DMA left their data pending), the operands a prepared kernel shares
between the cores a broadcast feeds (made once per received element), and the outputs an
accumulating kernel keeps in its own layout from call to call (:mod:`aiedsl.sim.core` runs the
calls)."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from aiedsl.ir.core_ops import BufferArg, Call, LocalArg
from aiedsl.sim.processes import Chunk
from aiedsl.sim.state import Ring


class LazyViews:
    """A ring's buffers in a kernel parameter's shape, by slot, each written on first read
    with the data its DMA left pending (:attr:`~aiedsl.sim.state.Ring.pending`)."""

    __slots__ = ("flat", "pending", "views")

    def __init__(self, ring: Ring, views: list[np.ndarray]) -> None:
        self.views = views
        self.flat = [b.reshape(-1) for b in ring.bufs]
        self.pending: list[np.ndarray | Chunk | None] = ring.pending  # type: ignore[assignment]

    def __getitem__(self, slot: int) -> np.ndarray:
        data = self.pending[slot]
        if data is not None:
            if isinstance(data, Chunk):  # its gather deferred: done straight into the buffer
                assert data.origin is not None, "a deferred gather has its origin"
                source, order = data.origin
                np.take(source.reshape(-1), order, out=self.flat[slot])
            else:
                self.flat[slot][...] = data
            self.pending[slot] = None
        return self.views[slot]


class ReadViews(LazyViews):
    """:class:`LazyViews` for an argument that is only read (a prepared kernel's operand): a
    slot with data pending gives that data, read-only, and its buffer stays unwritten. The
    cores a broadcast feeds share what is made from it, so none of them copies it."""

    __slots__ = ()

    def __getitem__(self, slot: int) -> np.ndarray:
        data = self.pending[slot]
        if data is None:
            return self.views[slot]
        if isinstance(data, Chunk):  # its gather deferred: done now, once for every reader
            data = self.pending[slot] = data.content()
        data = data.reshape(self.views[slot].shape)
        data.setflags(write=False)  # shared by every core it went to: nobody may write it
        return data


def ring_views(ring: Ring, shape: tuple[int, ...], read: bool = False
           ) -> list[np.ndarray] | LazyViews:
    """Every buffer of ``ring`` in ``shape`` (views made once); if the ring defers its DMA's
    writes, written when read, or with ``read`` never (the argument is only read)."""
    views = [b if b.shape == shape else b.reshape(shape) for b in ring.bufs]
    if ring.pending is None:
        return views
    return ReadViews(ring, views) if read else LazyViews(ring, views)


def fill_tracking(op: Call, k: Any, obj: Any, acquired: dict[str, list[Any]],
                   cells: dict[str, list[Any]],
                   local_cells: dict[str, list[Any]] | None = None) -> tuple[Any, Any]:
    """For a call: the operands it may share with other cores (``(finish, [(position,
    operand function, cell, index, fills by end, its Reorder or None, a cache of orders composed
    with it)])``, when the kernel is :class:`Prepared` and
    an argument comes from a ring that records its fills), and the arguments whose buffers it
    may write (every buffer of a kernel without ``prepared``: its reference's writes are not
    declared; the ``out``/``inout`` ones of a prepared kernel). None for none. A core-local
    buffer (its cell in ``local_cells``) is an operand made from its buffer at each call: no DMA
    fills it."""
    prepared = getattr(obj, "prepared", None)
    shared: list[tuple[Any, ...]] = []
    dirty: list[tuple[Any, ...]] = []
    tracked = False
    for pos, (a, param) in enumerate(zip(op.args, k.args)):
        if isinstance(a, LocalArg):
            if prepared is not None and pos in prepared.operands and local_cells is not None:
                shared.append((pos, prepared.operands[pos], local_cells[a.local], 0, {},
                               prepared.reorders.get(pos), {}))
            continue
        if not isinstance(a, BufferArg):
            continue
        fills = {id(e): e.ring.fills for e in acquired.get(a.value, [])
                 if e.ring.fills is not None}
        cell = cells[a.value]
        if prepared is not None and pos in prepared.operands:
            # every operand goes in: one whose ring records no fills (a shared-memory fifo's)
            # is made from its buffer at each call
            shared.append((pos, prepared.operands[pos], cell, a.index, fills,
                           prepared.reorders.get(pos), {}))
            tracked = tracked or bool(fills)
        if fills and (prepared is None or param.access != "in"):
            dirty.append((cell, a.index, fills))
    return ((prepared.finish, shared) if tracked and prepared is not None else None), (
        dirty or None)


def accumulating(op: Call, obj: Any) -> tuple[Any, ...] | None:
    """For a call of a kernel with an :class:`~aiedsl.kernels.prepared.Accumulator` whose output
    is a fifo buffer: (position, load, store, finish, operand functions); else None."""
    prepared = getattr(obj, "prepared", None)
    acc = getattr(prepared, "accumulator", None)
    if prepared is None or acc is None or not isinstance(op.args[acc.position], BufferArg):
        return None
    return (acc.position, acc.load, acc.store, acc.finish, prepared.operands)


def accumulate(acc: tuple[Any, ...], accs: dict[tuple[int, int], Any], spec: list[Any],
                shared: tuple[Any, list[Any]] | None, args: list[Any]) -> None:
    """Run an accumulating call: its output's kept copy (made from the buffer on first use)
    in place of the buffer, the operands as :func:`finish_shared` makes them (shared or
    not), then the accumulator's finish."""
    pos, load, store, finish, operands = acc
    cell, i, _ = spec[pos]
    args[pos] = kept_copy(accs, (cell[0], cell[1][i]), args[pos], load, store)
    if shared is not None:
        finish_shared((finish, shared[1]), args)
        return
    for at, fn in operands.items():
        args[at] = fn(args[at])
    finish(*args)


def accumulating_call(acc: tuple[Any, ...] | None, spec: list[Any],
                       shared: tuple[Any, list[Any]] | None) -> Callable[[Any], None] | None:
    """For an accumulating call whose every other argument is a shared operand (a matmul fed
    by DMA): the call as one function of the core's kept outputs, doing what
    :func:`accumulate` does with no argument list made ahead (the kernel's most frequent
    call, so every lookup it can skip is skipped); else None."""
    if acc is None or shared is None:
        return None
    pos, load, store, finish, _ = acc
    operands = [(at, fn, cell, i, fills, spec[at][2], reorder, cache)
                for at, fn, cell, i, fills, reorder, cache in shared[1]]
    if len(operands) + 1 != len(spec) or any(at == pos for at, *_ in operands):
        return None
    c_cell, c_index, c_views = spec[pos]
    n = len(spec)

    def call(accs: dict[tuple[int, int], Any]) -> None:
        e, slot = c_cell[0], c_cell[1][c_index]
        args: list[Any] = [None] * n
        args[pos] = kept_copy(accs, (e, slot), c_views[e][slot], load, store)
        for at, fn, cell, i, fills, views, reorder, cache in operands:  # as finish_shared
            e = cell[0]
            slot = cell[1][i]
            fl = fills.get(e)
            chunk = fl[slot] if fl is not None else None
            if chunk is None:
                args[at] = fn(views[e][slot])
                continue
            made = chunk.prepared
            value = None if made is None else made.get(fn)
            if value is None:
                value = make_shared(fn, reorder, cache, chunk, views[e], slot)
            args[at] = value
        finish(*args)
    return call


def kept_copy(accs: dict[tuple[int, int], Any], key: tuple[int, int], buffer: np.ndarray,
              load: Callable[[Any], Any], store: Callable[[Any, Any], None]) -> Any:
    """The copy of ``buffer`` (end and slot ``key``) an accumulator adds into: the one kept,
    or one ``load`` makes now (after writing back another kernel's copy of it)."""
    kept = accs.get(key)
    if kept is None or kept[2] is not store:
        if kept is not None:  # another kernel's copy: back to the buffer first
            kept[2](kept[1], kept[0])
        kept = accs[key] = (buffer, load(buffer), store)
    return kept[1]


def write_back_taken(accs: dict[tuple[int, int], Any], spec: list[Any], keep: int) -> None:
    """Write back every kept output a call takes as a buffer (but the one at ``keep``, which
    it accumulates into), so it reads what the buffer holds."""
    for pos, (cell, i, _) in enumerate(spec):
        if pos != keep and cell.__class__ is list:
            kept = accs.pop((cell[0], cell[1][i]), None)
            if kept is not None:
                kept[2](kept[1], kept[0])


def finish_shared(spec: tuple[Callable[..., None], list[Any]], args: list[Any]) -> None:
    """Run a prepared kernel: each shared operand made once per chunk (kept on the chunk,
    read-only), the others from the buffer, then ``finish``."""
    finish, shared = spec
    for pos, fn, cell, i, fills, reorder, cache in shared:
        fl = fills.get(cell[0])
        chunk = fl[cell[1][i]] if fl is not None else None
        if chunk is None:
            args[pos] = fn(args[pos])
            continue
        made = chunk.prepared
        value = None if made is None else made.get(fn)
        if value is None:
            value = make_shared(fn, reorder, cache, chunk, [args[pos]], 0)
        args[pos] = value
    finish(*args)


_UNORDERED = object()


def make_shared(fn: Callable[[Any], Any], reorder: Any, cache: dict[int, Any], chunk: Any,
                 views: Any, slot: int) -> Any:
    """Make the operand ``fn`` of ``chunk``'s data (held in ``views[slot]``) once, kept on the
    chunk, read-only. A :class:`~aiedsl.kernels.prepared.Reorder` operand of a chunk gathered
    from data nobody changes is made from that data in one step, the gather's order and the
    operand's composed (and cached by gather): the same elements, moved once."""
    origin = chunk.origin
    if reorder is not None and origin is not None:
        source, order = origin
        combined = cache.get(id(order), _UNORDERED)
        if combined is _UNORDERED:
            both = order[reorder.order]
            combined = cache[id(order)] = (
                None if np.array_equal(both, np.arange(both.size)) else both)
        flat = source.reshape(-1)
        value = (flat if combined is None else flat[combined]).astype(reorder.dtype).reshape(
            reorder.shape)
    else:
        value = fn(views[slot])
    if isinstance(value, np.ndarray):
        value.setflags(write=False)  # shared: no core may change another's operand
    made = chunk.prepared
    if made is None:
        chunk.prepared = {fn: value}
    else:
        made[fn] = value
    return value
