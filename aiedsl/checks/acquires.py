"""How many elements a core acquires at once, against what its end of the fifo holds."""

from __future__ import annotations

from aiedsl.errors import DesignError, counted
from aiedsl.ir import Design
from aiedsl.ir.program import max_acquire


def check_acquires(d: Design) -> None:
    """No core acquires more elements at once than its endpoint holds."""
    for core in d.cores:
        for (name, port), n in max_acquire(core).items():
            f = d.fifo(name)
            ends = [f.producer] if port == "produce" else [
                c for c in f.consumers if c.core == core.name]
            depth = ends[0].depth if ends else f.producer.depth
            if n > depth:
                raise DesignError(
                    "acquire", f"{core.name} acquires {n} elements of '{name}' at once, but its "
                    f"{port} end holds {depth}", loc=ends[0].loc if ends else core.loc,
                    limit=f"at most depth = {depth}", found=str(n),
                    fix=f"raise the fifo's depth to {n} or acquire fewer at once")


def check_shared_acquires(placed: Design) -> None:
    """No core acquires more elements of a shared-memory fifo at once than its one ring holds.

    Between neighbouring cores mlir-aie makes one set of buffers for both ends, as many as
    ``ObjectFifoCreateOp::size()`` gives: the first entry of a per-end depth list, the
    producer's (``createObjectFifoElements``); a larger ``consumer_depth`` makes none. A
    consumer acquiring more than that waits forever (:func:`check_acquires` checked it against
    its own end's depth, which only a fifo crossing a DMA has)."""
    shared = placed.physical.shared if placed.physical else {}
    for core in placed.cores:
        for (name, port), n in max_acquire(core).items():
            f = placed.fifo(name)
            if name not in shared or port != "consume" or n <= f.producer.depth:
                continue
            c = f.consumers[0]
            raise DesignError(
                "acquire", f"{core.name} acquires {n} elements of '{name}' at once, but '{name}' "
                f"lives in the memory its neighbouring cores share ({f.producer.core} "
                f"{f.producer.tile} -> {c.core} {c.tile}), where both ends use the producer's "
                f"{counted(f.producer.depth, 'buffer')}", loc=c.loc,
                limit=f"at most the producer's depth = {f.producer.depth} (a consumer_depth "
                "counts only for a fifo crossing a DMA)", found=str(n),
                fix=f"raise the fifo's depth to {n} or acquire fewer at once")
