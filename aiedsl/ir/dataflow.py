"""A design's dataflow as the lookups its bounds share: the cores, the fifos, the link that
feeds or reads each fifo, kernels and cascades; which cores feed which; and what a link makes
of what it receives.

>>> from aiedsl.loader import load_design                                  # doctest: +SKIP
>>> flow = Dataflow(load_design("designs/gemm_bf16.py").ir)               # doctest: +SKIP
>>> sorted(flow.upstream("core[0,0]"))                                     # doctest: +SKIP
['a_0', 'b_0']
"""

from __future__ import annotations

from fractions import Fraction

from aiedsl.ir.design import Design
from aiedsl.ir.progress import Summary, core_keys
from aiedsl.ir.runtime import Transfer


class Dataflow:
    """Lookups over ``d``'s cores, fifos, links, kernels and cascades, made once."""

    def __init__(self, d: Design) -> None:
        self.d = d
        self.memo: dict[int, Summary] = {}
        """Loop bodies' summaries, by the body's id: the walks over ``d``'s programs share them."""
        self.cores = {c.name: c for c in d.cores}
        self.fifos = {f.name: f for f in d.fifos}
        self.link_of_dst = {n: link for link in d.links for n in link.dsts}
        self.link_of_src = {n: link for link in d.links for n in link.srcs}
        self.kernels = {k.symbol: k for k in d.kernels}
        self.cascade_to = {c.src: c.dst for c in d.cascades}
        # each core's (fifo, port) pairs, kept: the lower bound asks for them at every point
        self.keys = {c.name: core_keys(c) for c in d.cores}
        self.consumed = {c.name: sorted(f for f, port in self.keys[c.name] if port == "consume")
                         for c in d.cores}
        """Per core: the fifos it consumes, sorted."""
        # (tensor, fifo) -> (the tensor's bytes per value, the fifo's per element): a dtype's
        # lookup costs more than the rest of elements(), which the checks call per transfer
        self._sizes: dict[tuple[str, str], tuple[int, int]] = {}

    def elements(self, t: Transfer) -> int:
        """Whole fifo elements a fill or drain moves (the DMA moves bytes)."""
        sizes = self._sizes.get((t.tensor, t.fifo))
        if sizes is None:
            sizes = (self.d.tensor(t.tensor).type.dt.itemsize, self.fifos[t.fifo].elem.nbytes)
            self._sizes[(t.tensor, t.fifo)] = sizes
        return t.pattern.numel * sizes[0] // sizes[1]

    def link_makes(self, name: str, received: list[int]) -> int:
        """Elements of fifo ``name``, the output of a link, its consumers can have received
        when the link received ``received`` elements of each of its sources (in order), before
        ``name``'s own ``repeat``: a joined element takes one element of every part, each part
        of a split is cut from one parent element, and a forward may regroup into elements of
        another size (whole ones only)."""
        link = self.link_of_dst[name]
        if link.kind == "join":
            return min(received)
        if link.kind == "split":
            return received[0]
        src = link.srcs[0]
        return int(Fraction(received[0] * self.fifos[src].elem.numel,
                            self.fifos[name].elem.numel))

    def upstream(self, core: str) -> set[str]:
        """The fifos the runtime fills whose data reaches ``core`` (through links and other
        cores)."""
        out: set[str] = set()
        seen: set[str] = set()
        todo = [f for f, port in self.keys[core] if port == "consume"]
        while todo:
            name = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            f = self.fifos[name]
            if f.producer.kind == "shim":
                out.add(name)
            elif f.producer.kind == "core" and f.producer.core:
                todo += [g for g, port in self.keys[f.producer.core] if port == "consume"]
            elif name in self.link_of_dst:
                todo += self.link_of_dst[name].srcs
        return out

    def downstream(self, core: str) -> set[str]:
        """The host tensors the runtime drains with data ``core`` produces (through links and
        other cores): :meth:`upstream`'s mirror."""
        out: set[str] = set()
        seen: set[str] = set()
        todo = [f for f, port in self.keys[core] if port == "produce"]
        while todo:
            name = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            for end in self.fifos[name].consumers:
                if end.kind == "shim":
                    out |= {t.tensor for t in self.d.runtime if isinstance(t, Transfer)
                            and t.op == "drain" and t.fifo == name}
                elif end.kind == "core" and end.core:
                    todo += [g for g, port in self.keys[end.core] if port == "produce"]
            if name in self.link_of_src:
                todo += self.link_of_src[name].dsts
        return out

    def cyclic(self) -> bool:
        """Whether some core consumes, through other cores and links, what it produces."""
        feeders = {name: self.feeders(name) for name in self.cores}
        for name in self.cores:
            todo, seen = list(feeders[name]), set()
            while todo:
                up = todo.pop()
                if up == name:
                    return True
                if up not in seen:
                    seen.add(up)
                    todo += feeders[up]
        return False

    def feeders(self, core: str) -> set[str]:
        """The cores that produce what ``core`` consumes (through links)."""
        out: set[str] = set()
        todo = [f for f, port in self.keys[core] if port == "consume"]
        seen: set[str] = set()
        while todo:
            name = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            f = self.fifos[name]
            if f.producer.kind == "core" and f.producer.core:
                out.add(f.producer.core)
            elif name in self.link_of_dst:
                todo += self.link_of_dst[name].srcs
        return out

