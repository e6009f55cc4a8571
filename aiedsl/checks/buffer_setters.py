"""How a design sets the number of a memtile link's buffers, for a fix to say it the way the
design does (a fifo's depth=, a memtile end's consumer_depth=, a link's depth=, a channel's
host_depth=)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from aiedsl.ir.design import Design
from aiedsl.ir.fifos import Link
from aiedsl.ir.loc import Loc
from aiedsl.place.objectfifo import buffer_owner


@dataclass(frozen=True)
class Setter:
    """How a design sets the number of a memtile link's buffers, for a fix to name: they are
    the buffers of the end that owns them (:func:`aiedsl.place.objectfifo.buffer_owner`)."""

    how: Literal["fifo", "memtile end", "link", "host_depth"]
    """``fifo``: the owning fifo's depth, or its memtile end's consumer_depth; ``memtile end``:
    that consumer_depth alone (given, it overrides depth=); ``link``: the depth= of the link
    call that makes the fifo; ``host_depth``: the channel's host_depth=."""
    fifo: str
    """The fifo whose end owns them."""
    name: str = ""
    """The making link's kind (``link``), or the channel's name."""
    loc: Loc | None = None
    """The line that sets them: the fifo's, the making link's, or the channel's."""

    def to(self, n: int) -> str:
        """The fix that leaves ``n`` buffers."""
        memtile = '{"memtile": %d}' % n
        return {
            "fifo": f"lower the depth of '{self.fifo}' (depth={n}) or give its memtile end "
                    f"consumer_depth={memtile}",
            "memtile end": f"give the memtile end of '{self.fifo}' consumer_depth={memtile}",
            "link": f"give the {self.name} that makes '{self.fifo}' depth={n}",
            "host_depth": f"give channel '{self.name}' host_depth={n}",
        }[self.how]


def setter(d: Design, link: Link) -> Setter:
    """How ``d`` sets the number of memtile link ``link``'s buffers."""
    name, port = buffer_owner(d, link)
    f = d.fifo(name)
    if f.channel is not None:  # a channel's core-side fifo owns them (a drain's forward),
        return Setter("host_depth", name, f.channel, f.loc)  # its memtile end's host_depth
    partner = next((d.fifo(n) for n in (*link.srcs, *link.dsts)
                    if d.fifo(n).channel is not None), None)
    if partner is not None:  # the channel's host fifo, of host_depth buffers
        return Setter("host_depth", name, partner.channel or "", partner.loc)
    if port == "produce":
        return Setter("link", name, link.kind, link.loc)
    maker = next((k for k in d.links if name in k.dsts), None)
    if maker is not None:
        return Setter("link", name, maker.kind, maker.loc)
    end = next(c for c in f.consumers if c.is_link_end)
    return Setter("fifo" if end.depth == f.producer.depth else "memtile end", name, loc=f.loc)
