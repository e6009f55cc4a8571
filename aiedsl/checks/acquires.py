"""How many elements a core acquires at once, against what its end of the fifo holds.

What an end holds is mlir-aie's objectfifo lowering (AIEObjectFifoStatefulTransform.cpp, read at
00cfd45; ``ObjectFifoCreateOp::size(index)`` in AIEOps.td is a per-end list's entry ``index``,
the producer's first, or the one depth):

* a fifo crossing a DMA is split into one objectfifo per end; a consumer's gets
  ``size(consumer + 1)`` when the depths are listed per end, and the producer keeps
  ``size(0)``;
* a fifo between neighbouring cores (shared memory: ``requiresDMAs`` is false) is not split:
  ``createObjectFifoElements`` makes ``size()`` = ``size(0)`` buffers, the producer's depth, in
  one ring both ends use, and both ends' acquires step through it modulo ``size()``. A
  ``consumer_depth`` makes no buffer there (AIEOps.td: per-end sizes "take effect in the case
  of consumers placed on tiles non-adjacent to the producer. Otherwise, the producer size will
  be applied").

An acquire of more elements than its end holds waits forever (its lock never counts that
high). With one depth for every end both cases agree; with depths per end a consumer's limit
is its own depth across a DMA and the producer's in shared memory, so that check waits for
placement, which decides the sharing.
"""

from __future__ import annotations

from aiedsl.errors import DesignError, counted
from aiedsl.ir.design import Design
from aiedsl.ir.fifos import Fifo
from aiedsl.ir.loc import Loc
from aiedsl.ir.program import max_acquire


def check_acquires(d: Design) -> None:
    """No core acquires more elements at once than its endpoint holds, where that does not
    depend on placement (see :func:`check_placed_acquires` for the rest)."""
    for core in d.cores:
        for (name, port), n in max_acquire(core).items():
            f = d.fifo(name)
            if port == "consume" and _may_share(f) and f.depth_per_end:
                continue  # the producer's depth in shared memory, its own across a DMA
            ends = [f.producer] if port == "produce" else [
                c for c in f.consumers if c.core == core.name]
            depth = ends[0].depth if ends else f.producer.depth
            if n > depth:
                raise _too_many(core.name, f, port, n, depth, ends[0].loc if ends else core.loc)


def check_placed_acquires(placed: Design) -> None:
    """What :func:`check_acquires` left to placement: a consumer of a fifo with depths per end
    that may live in shared memory. In shared memory both ends use one ring of the producer's
    depth; across a DMA the consumer's end holds its own."""
    shared = placed.physical.shared if placed.physical else {}
    for core in placed.cores:
        for (name, port), n in max_acquire(core).items():
            f = placed.fifo(name)
            if port != "consume" or not (_may_share(f) and f.depth_per_end):
                continue
            c = f.consumers[0]
            if name not in shared:
                if n > c.depth:
                    raise _too_many(core.name, f, port, n, c.depth, c.loc)
                continue
            if n <= f.producer.depth:
                continue
            raise DesignError(
                "acquire", f"{core.name} acquires {n} elements of '{name}' at once, but '{name}' "
                f"lives in the memory its neighbouring cores share ({f.producer.core} "
                f"{f.producer.tile} -> {c.core} {c.tile}), where both ends use the producer's "
                f"{counted(f.producer.depth, 'buffer')}", loc=c.loc,
                limit=f"at most the producer's depth = {f.producer.depth} (a consumer_depth "
                "counts only for a fifo crossing a DMA)", found=str(n),
                related=[(f"'{name}' is declared here, with its depth", f.loc)],
                fix=f"raise the fifo's depth to {n} (line {f.loc.line}) or acquire fewer at "
                "once")


def _may_share(f: Fifo) -> bool:
    """Whether placement may put ``f`` in shared memory (:func:`aiedsl.place.placer.place`'s
    rule but for the cores' adjacency): one consumer, a core at each end, no layout change."""
    p = f.producer
    return (len(f.consumers) == 1 and p.kind == "core" and f.consumers[0].kind == "core"
            and not p.dims and not f.consumers[0].dims)


def _too_many(core: str, f: Fifo, port: str, n: int, depth: int, loc: Loc) -> DesignError:
    # a consumer's own depth, when the ends' differ, is its consumer_depth (depth= is the
    # producer's)
    what = (f"{core}'s consumer_depth" if port == "consume" and f.depth_per_end
            else "the fifo's depth")
    return DesignError(
        "acquire", f"{core} acquires {n} elements of '{f.name}' at once, but its {port} end "
        f"holds {depth}", loc=loc, limit=f"at most depth = {depth}", found=str(n),
        related=[(f"'{f.name}' is declared here, with its depth", f.loc)],
        fix=f"raise {what} to {n} (line {f.loc.line}) or acquire fewer at once")
