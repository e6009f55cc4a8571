"""The cascade stream between neighbouring cores, word by word in time: a put call offers its
words as its kernel makes them, a get call takes them as its own pace and the putter's allow,
and the FIFOs between them hold ``link.room`` words (what a call waits on is kept in
``p.info`` for the hang report). A call that gets and puts passes the stream through: its puts
go out as its gets come in (:func:`cascade_through`), as mm_cascade.cc's middle stage gets a
patch's words, adds its product and puts them before it gets the next patch's."""

from __future__ import annotations

from typing import Any, Callable, Generator

import numpy as np

from aiedsl.errors import DesignError
from aiedsl.ir.core_ops import Call
from aiedsl.ir.kernel import Kernel
from aiedsl.sim.processes import Proc, Request
from aiedsl.sim.state import CascadeLink, Machine
from aiedsl.targets.model import CASCADE_BITS

WORD_BYTES = CASCADE_BITS // 8
"""Bytes in a cascade word (the values kept on a link are counted in bytes): the target
model's width, the same on every device aiedsl targets."""


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


def cascade_payloads(k: Any, casc: tuple[Any, ...] | None) -> list[np.ndarray]:
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



def shares(gets: int, puts: int, step: tuple[int, int] | None
           ) -> tuple[Callable[[int], int], Callable[[int], int]]:
    """For a call that gets ``gets`` words and puts ``puts``: the words of its get its put's
    word j waits for, and the words of its put the first i words of its get let go. With a
    ``step`` (g, p), the C++ gets g words, then puts p, over and over (mm_cascade.cc: a 2x2
    patch's words each way); without, word j goes once its share of the get came in,
    ceil((j + 1) * gets / puts) words (a kernel that gets a word and puts a word)."""
    if step is None:
        return (lambda j: -(-(j + 1) * gets // puts),
                lambda i: puts if i >= gets else i * puts // gets)
    g, q = step
    return (lambda j: (j // q + 1) * g,
            lambda i: puts if i >= gets else (i // g) * q)


def cascade_through(m: Machine, p: Proc, call: Call, get: CascadeLink, put: CascadeLink,
                    words_in: int, words_out: int, step: tuple[int, int] | None,
                    cycles: int, made: Callable[[], None] | None
                    ) -> Generator[Request, Any, float]:
    """Run ``call`` (of ``cycles`` cycles, started at ``p.time``), which gets ``words_in``
    words of ``get`` and puts ``words_out`` on ``put``, as the stream it is; returns when its
    last word fit.

    Its puts go out as its gets come in (:func:`shares`): once the words of its get that the
    next words of its put wait for have come, those go, evenly over the time since the last
    went, at the call's own pace or as the gets let them. Before it takes a word of its get,
    the puts the words before it let go must fit: its downstream neighbour must have taken all
    but the ``link.room`` words the link holds, as a core stalls in ``put_mcd`` while the
    FIFOs are full and gets nothing meanwhile. So a put upstream waits for the words to flow
    through it, and nothing waits for the call's whole get before its first put. ``made``
    (when kernels compute) runs the kernel once the last word of its get is in, before its
    last puts go out. A call that only gets or only puts is :func:`cascade_get` or
    :func:`cascade_put`.
    """
    need_of, let_go = shares(words_in, words_out, step)
    per = cycles / words_in  # a get word's share of the call
    start = t = p.time
    first_in = get.got
    goal = first_in + words_in
    first_out = put.put
    room = put.room
    offered = 0  # words of the put gone out
    since = start  # when the last of them was made
    info = p.info
    while get.got < goal:
        got = get.got - first_in
        # before word `got` is taken, the puts the words before it let go must fit
        need = first_out + let_go(got) - room
        if put.got < need:
            while put.got < need:
                info["waiting"] = call
                info["cascade"] = (put, "put", first_out, first_out + words_out)
                put.taken.units.clear()
                yield ("acq", put.taken, 1)
            info.pop("waiting", None)
            info.pop("cascade", None)
        if need > 0 and let_go(got):
            fits = put.took(need - 1)
            if fits > t:
                t = fits
        while get.put <= get.got:  # its putter has not reached the call that puts the next
            info["waiting"] = call
            info["cascade"] = (get, "get", first_in, goal)
            get.data.units.clear()
            yield ("acq", get.data, 1)
        info.pop("waiting", None)
        info.pop("cascade", None)
        first = get.got
        puts = get.puts
        while puts[0][1] <= first:  # calls all of whose words were taken
            puts.popleft()
        end = puts[0][1] if puts[0][1] < goal else goal
        fit = put.got - first_out + room  # words of the put that fit now
        if fit < words_out and first_in + need_of(fit) < end:
            end = first_in + need_of(fit)  # the word that would let go one that does not fit
        came = get.emitted(end - 1) + per
        before = t
        t = t + per * (end - first)
        if came > t:
            t = came
        get.gets.append((first, end, before, t))
        get.got = end
        get.taken.units.append(0.0)  # a unit of no time: the putter's clock is its own
        if get.taken.waiters:
            m.engine.wake(get.taken.waiters)
        if end == goal and made is not None:
            made()  # every word of the get is in: the kernel's values for the rest of the put
        gone = let_go(end - first_in)
        if gone > offered:
            stop = start + gone * cycles / words_out
            if t > stop:
                stop = t
            put.puts.append((first_out + offered, first_out + gone, since, stop))
            put.put = first_out + gone
            offered, since = gone, stop
            put.data.units.append(0.0)
            if put.data.waiters:
                m.engine.wake(put.data.waiters)
    end_t = start + cycles if start + cycles > t else t
    need = first_out + words_out - room  # words the getter must have taken for the last to fit
    if need <= 0:
        return end_t
    while put.got < need:
        info["waiting"] = call
        info["cascade"] = (put, "put", first_out, first_out + words_out)
        put.taken.units.clear()
        yield ("acq", put.taken, 1)
    info.pop("waiting", None)
    info.pop("cascade", None)
    fits = put.took(need - 1)
    return fits if fits > end_t else end_t


class Early:
    """A call that gets and puts, while its get is not all in: its put's first words went out
    as its gets came (:func:`cascade_through`), before its kernel could run on the whole get.
    When the getter downstream needs their values first, they are made by running the kernel
    (``trial``: on copies of everything it reads and writes) on the words got so far, the rest
    of the get undefined (poison); a word of the put made from the words before it, the share
    the stream let it wait for, comes out as the C++ puts it. The kernel's real run, on the
    whole get, checks that the words handed out early were those (:meth:`check`)."""

    __slots__ = ("trial", "kernel", "core", "call", "words", "step", "handed", "given")

    def __init__(self, trial: Callable[[], tuple[np.ndarray, int]], kernel: Kernel, core: str,
                 call: Call, words: tuple[int, int], step: tuple[int, int] | None) -> None:
        self.trial = trial
        """The call's put (flat bytes) as its kernel makes it from what it got so far, and
        how many words of its get that was."""
        self.kernel = kernel
        self.core = core
        self.call = call
        self.words = words
        """The words the call gets and puts."""
        self.step = step
        self.handed = 0
        """Bytes of the put handed to the getter before the kernel ran."""
        self.given: list[tuple[np.ndarray, int]] = []
        """Those bytes, in pieces, each with the words got when it was made."""

    def hand(self, link: CascadeLink, n: int) -> None:
        """Put the next ``n`` bytes of the call's put on ``link``'s values, made now."""
        out, got = self.trial()
        part = out[self.handed:self.handed + n].copy()
        link.values.append(part)
        self.given.append((part, got))
        self.handed += n

    def check(self, put: np.ndarray) -> None:
        """``put`` (flat bytes) is what the kernel's real run put: the words handed out early
        must be its first ones, else the kernel made a word from words of its get that the
        stream did not let it wait for."""
        at = 0
        for part, got in self.given:
            real = put[at:at + part.size]
            if not np.array_equal(real, part):
                word = (at + int(np.argmax(real != part))) // WORD_BYTES
                raise self._error(word, got)
            at += part.size

    def _error(self, word: int, got: int) -> DesignError:
        k, (words_in, words_out) = self.kernel, self.words
        need, _ = shares(words_in, words_out, self.step)
        rule = (f"its put goes {self.step[1]} word(s) at a time, each group once the next "
                f"{self.step[0]} word(s) of its get came in (cascade_step={self.step})"
                if self.step is not None else
                f"word j of its put goes once ceil((j + 1) x {words_in} / {words_out}) of its "
                f"{words_in} get words came in, as a kernel that gets a word and puts a word "
                "does (no cascade_step=)")
        return DesignError(
            "kernel cascade", f"kernel '{k.symbol}' put cascade word {word} of its call on "
            f"{self.core} (line {self.call.loc.line}) before it had got the words it makes it "
            f"from: the simulator passed the word on once {got} of the call's {words_in} get "
            f"words were in (word {word} waits for {need(word)}), and it changed when the "
            "rest came", loc=k.loc,
            limit=f"a call that gets and puts streams: {rule}",
            found=f"word {word} made from the first {got} words got differs from the word the "
            "whole get makes",
            fix=f"declare cascade_step=(g, p): the words its C++ gets before each p words it "
            f"puts (cascade_step=({words_in}, {words_out}) if it gets every word before it "
            "puts one)")
