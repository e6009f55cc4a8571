"""Symbol names: every symbol the device holds once mlir-aie has lowered it is unique.

A device is one MLIR symbol table (MLIR's ``SymbolTable`` verifier refuses a second definition of a
name). aiedsl's own MLIR names the fifos, the kernels' functions, the runtime-parameter buffers,
each core's copy of a core-local buffer and the runtime barriers' locks; mlir-aie's objectfifo
lowering (``aie-objectFifo-stateful-transform``) then adds, per fifo end, an objectfifo of its own
(``<fifo>_cons``, or ``<fifo>_<i>_cons`` with several consumers), its buffers (``<end>_buff_<i>``)
and locks (``<end>_prod_lock_<i>``, ``<end>_cons_lock_<i>``), and per shim end a
``<fifo>_shim_alloc``. The device also holds its runtime sequence, whose symbol is ``sequence``
when unnamed (``RuntimeSequenceOp``'s default), and the core lowering (``AIECoreToStandard``) makes
each core a function ``core_<col>_<row>`` beside every buffer's ``memref.global`` (a kernel's,
rtp's or local's name may not be one). A user name equal to one of those builds here and fails in
``aiecc`` as raw MLIR, so it is refused with the design's line: the lowering's names come from the
same plan of the lowering that allocation uses (:mod:`aiedsl.place.objectfifo`), which is tested
against the real lowering.
"""

from __future__ import annotations

from aiedsl.errors import DesignError
from aiedsl.ir.design import Design
from aiedsl.ir.loc import Loc
from aiedsl.ir.lowered_names import ENDINGS, SPELLINGS, shim_alloc_name
from aiedsl.place.alloc import barrier_lock_name, local_buffer_name
from aiedsl.place.objectfifo import Lowering

RULE = "every symbol of a device is unique, and mlir-aie's objectfifo lowering adds " + SPELLINGS


SEQUENCE = "sequence"
"""The symbol of an unnamed ``aie.runtime_sequence`` (``getDefaultRuntimeSequenceName``)."""


def check_symbols(d: Design, low: Lowering) -> None:
    """Refuse a fifo, kernel, rtp, local or barrier whose symbol is one the lowering of placed
    design ``d`` (planned in ``low``) creates, or another of them already has.

    Example: an rtp named ``in0_cons_buff_0`` beside a fifo ``in0`` that a core consumes is a
    DesignError naming buffer 0 of the fifo's end in that core.
    """
    made: dict[str, str] = {}
    for end in low.ends:
        where = end.endpoint.label()
        if end.symbol != end.fifo.name:
            made.setdefault(end.symbol, f"the end of fifo '{end.fifo.name}' in {where}")
        if end.endpoint.kind == "shim":
            made.setdefault(shim_alloc_name(end.fifo.name),
                            f"the shim DMA allocation of fifo '{end.fifo.name}'")
    for s in low.stores:
        for i, buf in enumerate(s.buffers):
            made.setdefault(buf, f"buffer {i} of fifo '{s.fifo}' on tile {s.tile}")
        for name, _ in s.locks:
            made.setdefault(name, f"a lock of fifo '{s.fifo}' on tile {s.tile}")
    given: dict[str, str] = {}
    fixed = {SEQUENCE: "the runtime sequence (aie.runtime_sequence's symbol when unnamed)"}
    for core in d.cores:
        if core.tile is not None:
            col, row = core.tile
            fixed[f"core_{col}_{row}"] = (f"the function mlir-aie's core lowering makes of "
                                          f"{core.name} at {core.tile} (AIECoreToStandard)")
    for what, name, loc in _given(d):
        kind = what.split()[0]
        # the core functions sit beside the buffers' globals and the kernels' functions in the
        # module; an objectfifo or a lock is gone by then
        if name in fixed and (name == SEQUENCE or kind in ("kernel", "rtp", "local")):
            raise DesignError(
                "name", f"{what} '{name}' has the name of {fixed[name]}", loc=loc,
                limit="every symbol of a device is unique; 'sequence' and core_<col>_<row> "
                "are mlir-aie's", found=name, fix=f"rename the {kind}")
        if name in made:
            raise DesignError(
                "name", f"{what} '{name}' has the name mlir-aie's objectfifo lowering gives to "
                f"{made[name]}", loc=loc, limit=RULE, found=name,
                fix=f"rename the {kind}: names ending in {ENDINGS} are the lowering's")
        if name in given:  # only a tile-suffixed symbol can get here: the front end refuses
            # the rest
            raise DesignError(
                "name", f"{what} '{name}' has the name of the {given[name]}", loc=loc,
                limit="every symbol of a device is unique (" + (
                    "a barrier's lock in the core of tile (c, r) is <barrier>_<c>_<r>)"
                    if kind == "barrier" else "the copy of a local in the core of tile (c, r) "
                    "is <local>_<c>_<r> when several cores use it)"), found=name,
                fix=f"rename the {kind} or the {given[name].split()[0]}")
        given[name] = f"{what} '{name}'"


def _given(d: Design) -> list[tuple[str, str, Loc]]:
    """The symbols aiedsl's MLIR itself defines: (what, name, where it was declared)."""
    tile_of = {c.name: c.tile for c in d.cores}
    out = [("fifo", f.name, f.loc) for f in d.fifos]
    out += [("kernel", k.symbol, k.loc) for k in d.kernels]
    out += [("rtp", r.name, r.loc) for r in d.rtps]
    for lb in d.locals:
        for core in lb.cores:
            tile = tile_of[core]
            assert tile is not None, "check_symbols needs a placed design"
            what = "local" if len(lb.cores) == 1 else f"local '{lb.name}''s copy in {core}"
            out.append((what, local_buffer_name(lb, tile), lb.loc))
    for b in d.barriers:
        for core in b.cores:
            tile = tile_of[core]
            assert tile is not None, "check_symbols needs a placed design"
            out.append((f"barrier '{b.name}''s lock", barrier_lock_name(b.name, tile), b.loc))
    return out
