"""The lower bound on every core's progress: what the drains known to be done prove.

From the drains waited for before a point, the elements consumed downstream were produced, so
the core that made them has passed the release that handed on the last of them; walking until
those releases gives a lower bound on the calls that have *finished*
(:meth:`aiedsl.ir.reach.Reach.must_have_run`, :func:`aiedsl.ir.sequence.retirements`).
"""

from __future__ import annotations

from collections import Counter
from fractions import Fraction

from aiedsl.ir.dataflow import Dataflow
from aiedsl.ir.fifos import Endpoint
from aiedsl.ir.program import calls
from aiedsl.ir.progress import Key, Progress, call_key, until_released


class Proven:
    """What the drains known to be done prove: ``drained`` counts, per fifo, the elements its
    waited drains received. Each answer is kept (one instance per set of waits).

    A core that acquired an element had it whole in its memory, so its producer had sent every
    byte up to it; a drain that received an element had it released by the core producing it,
    which had by then passed every acquire before that release.
    """

    def __init__(self, flow: Dataflow, drained: Counter[str]) -> None:
        self.flow = flow
        self.drained = drained
        self._taken: dict[str, int] = {}
        self._done: dict[str, Progress] = {}

    def took(self, name: str) -> int:
        """Elements of fifo ``name`` its consumers have certainly taken (for a fifo the runtime
        fills: the elements the shim has certainly sent)."""
        if name not in self._taken:
            self._taken[name] = 0  # a cycle proves nothing more
            self._taken[name] = max(
                [0, *(self._consumed(name, c) for c in self.flow.fifos[name].consumers)])
        return self._taken[name]

    def put(self, name: str) -> int:
        """Elements of fifo ``name`` certainly put in (by its producer or its link): at least
        what its consumers took over its ``repeat``, every element being sent that many times."""
        return self.took(name) // self.flow.fifos[name].repeat

    def _consumed(self, name: str, end: Endpoint) -> int:
        r = self.flow
        if end.kind == "shim":
            return self.drained[name]
        if end.kind == "core" and end.core:
            # what the core acquired was made, whether or not it has released it yet
            return self.progress(end.core).acquired[(name, "consume")]
        link = r.link_of_src.get(name)
        if link is None:
            return 0
        if link.kind == "join":  # each joined element took one element of this part
            return self.put(link.dsts[0])
        if link.kind == "split":
            # the memtile receives each part of a parent element with a BD and locks of its
            # own (mlir-aie's createMemTileDMA), so one part taken proves only that part sent:
            # a parent element is whole only once every part of it was taken
            return min(self.put(n) for n in link.dsts)
        dst = link.dsts[0]  # (a forward repeats its larger element: whole ones are a bound)
        return int(Fraction(self.took(dst) * r.fifos[dst].elem.numel,
                            r.fifos[name].elem.numel * r.fifos[dst].repeat))

    def _cascaded(self, core: str) -> dict[Key, int]:
        """The calls ``core`` has certainly made that put partial sums on its cascade: those
        whose every word its downstream neighbour's finished calls took (the cascade is a
        blocking stream of 512-bit words between the two, however either side groups them
        into calls or types their bits, so counted in bytes: a call whose last word was taken
        was made). Only for a core whose puts are all calls of one kernel (the walk counts
        calls by kernel)."""
        r = self.flow
        down = r.cascade_to.get(core)
        if down is None:
            return {}
        put = {op.kernel for op in calls(r.cores[core]) if r.kernels[op.kernel].cascade_out}
        got = {op.kernel for op in calls(r.cores[down]) if r.kernels[op.kernel].cascade_in}
        if len(put) != 1:
            return {}
        done = self.progress(down)
        kernel = put.pop()
        out = r.kernels[kernel].cascade_out
        assert out is not None, "a put kernel has a cascade output"
        taken = 0
        for k in got:
            cin = r.kernels[k].cascade_in
            assert cin is not None, "a get kernel has a cascade input"
            taken += done.released[call_key(k)] * cin.nbytes
        return {call_key(kernel): taken // out.nbytes}

    def progress(self, core: str) -> Progress:
        """How far ``core``'s program has certainly got: past the release that handed on the
        last element of each fifo it produces that its consumers certainly took."""
        if core not in self._done:
            self._done[core] = Progress()  # while a cycle is walked: nothing proven
            c = self.flow.cores[core]
            targets = {(f, port): self.put(f) for f, port in self.flow.keys[core]
                       if port == "produce"}
            targets.update(self._cascaded(core))
            p = Progress()
            until_released(c.body, {k: t for k, t in targets.items() if t}, p,
                            self.flow.memo)
            self._done[core] = p
        return self._done[core]
