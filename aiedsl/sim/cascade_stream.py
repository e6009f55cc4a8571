"""The cascade stream between neighbouring cores, word by word in time: a put call offers its
words as its kernel makes them, a get call takes them as its own pace and the putter's allow,
and the FIFOs between them hold ``link.room`` words (what a call waits on is kept in
``p.info`` for the hang report)."""

from __future__ import annotations

from typing import Any, Generator

import numpy as np

from aiedsl.ir.core_ops import Call
from aiedsl.sim.engine import Proc, Request
from aiedsl.sim.state import CascadeLink, Machine


def cascade_get(m: Machine, p: Proc, call: Call, link: CascadeLink, words: int,
                 cycles: int) -> Generator[Request, Any, float]:
    """Take the next ``words`` words of ``link`` for ``call`` (of ``cycles`` cycles, started at
    ``p.time``); returns when the last came in.

    The words come piece by piece, one piece per put call they came from, each as soon as the
    putter reached that call (the getter waits for nothing else: no other core of a chain). A
    piece ends when the getter's own pace gets it there or a word's time after its putter put
    its last word, whichever is later: the two overlap as a stream.
    """
    per = cycles / words  # a word's share of the call
    t = p.time
    goal = link.got + words
    while link.got < goal:
        first = link.got
        while link.put <= first:  # its putter has not reached the call that puts it
            p.info["waiting"] = call
            p.info["cascade"] = (link, "get", goal - words, goal)
            link.data.units.clear()  # stale wake-ups: the count above is what is checked
            yield ("acq", link.data, 1)
        p.info.pop("waiting", None)
        p.info.pop("cascade", None)
        puts = link.puts
        while puts[0][1] <= first:  # calls all of whose words were taken
            puts.popleft()
        end = puts[0][1] if puts[0][1] < goal else goal
        came = link.emitted(end - 1) + per
        before = t
        t = t + per * (end - first)
        if came > t:
            t = came
        link.gets.append((first, end, before, t))
        link.got = end
        link.taken.units.append(0.0)  # a unit of no time: the putter's clock is its own
        if link.taken.waiters:
            m.engine.wake(link.taken.waiters)
    return t


def cascade_put(m: Machine, p: Proc, call: Call, link: CascadeLink, words: int, start: float,
                 end: float, values: np.ndarray | None) -> Generator[Request, Any, float]:
    """Put ``words`` words on ``link`` for ``call``, which would put them evenly from ``start``
    to ``end`` had nothing held it up (``values``: what it put, when kernels compute); returns
    when its last word fit. Only the neighbour's gets make room: the call ends once the getter
    has taken all but the ``link.room`` words its FIFOs hold."""
    first = link.put
    link.puts.append((first, first + words, start, end))
    link.put = first + words
    if values is not None:  # the bits, whatever the type: the getter views them as its own
        link.values.append(values.reshape(-1).view(np.uint8))
    link.data.units.append(0.0)
    if link.data.waiters:
        m.engine.wake(link.data.waiters)
    need = first + words - link.room  # words the getter must have taken for the last to fit
    if need <= 0:
        return end
    while link.got < need:
        p.info["waiting"] = call
        p.info["cascade"] = (link, "put", first, first + words)
        link.taken.units.clear()
        yield ("acq", link.taken, 1)
    p.info.pop("waiting", None)
    p.info.pop("cascade", None)
    fits = link.took(need - 1)
    return fits if fits > end else end


def cascade_payloads(k: Any, casc: tuple[Any, Any, int, int] | None) -> list[np.ndarray]:
    """The reference's extra arrays: the words its get took (the putter's bits, however its
    calls grouped them, viewed as this kernel's type, never converted: the stream moves
    512-bit words, and a bf16 get of an f32 put reads the floats' halves), then a fresh array
    for what it puts."""
    out = []
    get = casc[0] if casc is not None else None
    if k.cascade_in is not None:
        dt = np.dtype(k.cascade_in.dt.numpy)
        if get is not None:
            out.append(get.take_values(k.cascade_in.nbytes).view(dt)
                       .reshape(k.cascade_in.shape))
        else:  # no link (check refuses it): what an unconnected input reads
            out.append(np.zeros(k.cascade_in.shape, dt))
    if k.cascade_out is not None:
        out.append(np.zeros(k.cascade_out.shape, np.dtype(k.cascade_out.dt.numpy)))
    return out

