"""The runtime sequence: what the host moves in and out, and when it waits.

Example
-------
::

    with runtime() as rt:
        rt.fill(of_in, A)                       # whole tensor, in order
        rt.fill(a[0], A, tiles(A, (64, 64), rows=0))
        rt.drain(of_out, C)                     # waited for at the end of the sequence
"""

from __future__ import annotations

import difflib

import sys
from typing import TYPE_CHECKING, Any, Literal, NoReturn, Sequence

from aiedsl.errors import DesignError
from aiedsl.ir.loc import Loc
from aiedsl.ir.types import Pattern
from aiedsl.library_code import is_users
from aiedsl.lang.channel import Channel
from aiedsl.lang.context import current_design
from aiedsl.lang.described import described
from aiedsl.lang.fifo import ObjectFifo
from aiedsl.lang.local import LocalRef
from aiedsl.lang.rtp import BarrierRef, RtpRef
from aiedsl.lang.tensor import HostTensorRef
from aiedsl.lang.records import (
    RtpWriteRecord, RuntimeRecord, SetBarrierRecord, TransferRecord,
)
from aiedsl.lang.trace import DesignTrace
from aiedsl.source_loc import assigned_name, caller_loc
from aiedsl.values import as_int, plain, shown

PatternSpec = Pattern | tuple[int, Sequence[int], Sequence[int]] | None


class NoSuchName(DesignError, AttributeError):
    """A name rt (or a runtime() not entered) lacks, asked by the design: a DesignError the
    command line prints, and an AttributeError, so that ``hasattr(rt, "x")`` and
    ``getattr(rt, "x", None)`` answer as Python's would."""


_IRON_RUNTIME = {
    "sequence": ("IRON's rt.sequence(...) opens the sequence and names its host tensors",
                 "leave it out: the host tensors are the @design function's parameters "
                 "(def d(a: Tensor[4096, i32], ...)), and `with runtime() as rt:` opens the "
                 "sequence; use them in rt.fill and rt.drain"),
    "start": ("IRON's rt.start(worker) starts a worker",
              "leave it out: a herd's cores start by themselves when the design is loaded"),
    "task_group": ("IRON's task groups free their transfers' BDs together when finished",
                   "leave the group out and write rt.sync() where IRON finishes it: it waits for "
                   "every transfer issued before it, whose BDs are free again after it "
                   "(rt.wait(fifo) waits for one fifo's oldest)"),
    "finish_task_group": ("IRON's finish_task_group(tg) waits for a task group's transfers",
                          "write rt.sync() there: it waits for every transfer issued before it, "
                          "whose BDs are free again after it (rt.wait(fifo) waits for one "
                          "fifo's oldest)"),
    "enable_trace": ("IRON's enable_trace sets up the NPU's hardware trace",
                     "leave it out: `aiedsl sim --trace FILE` writes the simulated run's trace "
                     "(a Chrome/Perfetto JSON); aiedsl does not set up the NPU's own"),
    "inline_ops": ("IRON's inline_ops puts MLIR of your own into the sequence",
                   "leave it out: the sequence is what rt's calls make (fills, drains, waits, "
                   "rtp writes), each checked; an op aiedsl has not is not for a design to add"),
}
"""What IRON's runtime calls that aiedsl has not are, and what to write instead."""


class RuntimeBuilder:
    """The ``rt`` of ``with runtime() as rt``: fill, drain, wait, runtime-parameter writes and
    barrier sets."""

    def __init__(self, trace: DesignTrace) -> None:
        self.trace = trace
        self.records: list[RuntimeRecord] = []
        self.pending: list[TransferRecord] = []

    if not TYPE_CHECKING:  # mypy still flags a misspelt rt method in aiedsl's own code
        def __getattr__(self, attr: str) -> NoReturn:
            # only for what rt lacks, asked by the design (IRON's rt.sequence, rt.start, a typo);
            # private names, and what aiedsl's or a library's code probes, as Python has it
            if attr.startswith("_") or not is_users(sys._getframe(1).f_code.co_filename):
                raise AttributeError(f"'RuntimeBuilder' object has no attribute {attr!r}")
            has = [n for n in dir(RuntimeBuilder) if not n.startswith("_")]
            iron = _IRON_RUNTIME.get(attr)
            near = difflib.get_close_matches(attr, has, n=1)
            raise NoSuchName(
                "runtime", f"rt.{attr}: the runtime sequence has no {attr}" + (
                    f" ({iron[0]})" if iron else ""), loc=caller_loc(),
                limit="rt has " + ", ".join(f"{n}()" for n in has), found=f"rt.{attr}",
                fix=iron[1] if iron else f"did you mean rt.{near[0]}()?" if near else
                "use one of those")

    def rtp_write(self, buf: object, index: int, value: int) -> None:
        """Write ``value`` into slot ``index`` of runtime parameter ``buf`` (an :func:`rtp`, or
        its name) at this point of the sequence (``aiex.npu.rtp_write``: one 32-bit register
        write into the core's memory; it does not wait for the core).

        Write a slot before the fills whose calls should see it; to change it, first
        ``rt.sync()`` so that every call that used the old value is done.
        """
        loc = caller_loc()
        if isinstance(buf, LocalRef):
            _not_local(buf, "rt.rtp_write", loc)
        rtps = self.trace.rtps
        ref = rtps.get(buf) if isinstance(buf, str) else buf
        if not isinstance(ref, RtpRef) or not _declared(rtps, ref):
            given = repr(buf) if isinstance(buf, str) else type(buf).__name__
            known = ", ".join(f"'{n}'" for n in rtps) or "none"
            raise DesignError(
                "runtime", f"rt.rtp_write of {given}, which is not an rtp of this design",
                loc=loc, limit=f"the design's rtps: {known}", found=given,
                fix="declare it with rtp(Tensor[16, i32], name=...) in the design function and "
                "pass what rtp() returned (or its name)")
        n = ref.type.numel
        slot, number = as_int(index), as_int(value)  # numpy's integers too, as plain ints
        if slot is None or not 0 <= slot < n:
            raise DesignError(
                "runtime", f"rt.rtp_write of '{ref.name}' at index {shown(index)}", loc=loc,
                limit=f"an int from 0 to {n - 1} (it holds {n} {ref.type.dtype})",
                found=shown(index), fix=f"write a slot from 0 to {n - 1}, or declare it larger")
        lo, hi = -2 ** 31, 2 ** 31 - 1  # RTP_DTYPES: i32 only
        if number is None or not lo <= number <= hi:
            fraction = isinstance(plain(value), float)
            raise DesignError(
                "runtime", f"rt.rtp_write of '{ref.name}'[{slot}] with value {shown(value)}",
                loc=loc, limit=f"{ref.type.dtype} values from {lo} to {hi}: an int (numpy "
                "integers too)", found=shown(value), fix="write an int the slot's type can hold"
                + (f" (int({shown(value)}) drops the fraction)" if fraction else ""))
        self.records.append(RtpWriteRecord(ref.name, slot, number, loc))

    def set_barrier(self, barrier: object, value: int) -> None:
        """Set runtime barrier ``barrier`` (a :func:`barrier`, or its name) to ``value`` in every
        core that waits on it (``aiex.set_lock``: the lock takes this value, whatever it
        held)."""
        loc = caller_loc()
        known = self.trace.barriers
        ref = known.get(barrier) if isinstance(barrier, str) else barrier
        if not isinstance(ref, BarrierRef) or not _declared(known, ref):
            given = repr(barrier) if isinstance(barrier, str) else type(barrier).__name__
            raise DesignError(
                "runtime", f"rt.set_barrier of {given}, which is not a barrier of this design",
                loc=loc, limit="the design's barriers: " + (", ".join(
                    f"'{n}'" for n in known) or "none"), found=given,
                fix="declare it with barrier(name=...) in the design function and pass what "
                "barrier() returned")
        top = self.trace.target.max_lock_value
        number = as_int(value)  # numpy's integers too, as a plain int
        if number is None or not 0 <= number <= top:
            raise DesignError(
                "runtime", f"rt.set_barrier of '{ref.name}' to {shown(value)}", loc=loc,
                limit=f"an int from 0 to {top} (a lock's value)", found=shown(value),
                fix="set it to the value its cores wait for, e.g. 1")
        self.records.append(SetBarrierRecord(ref.name, number, loc))

    def fill(self, fifo: ObjectFifo, tensor: HostTensorRef, pattern: PatternSpec = None, *,
             wait: bool = False) -> None:
        """Send ``tensor``'s elements, in ``pattern`` order, into ``fifo`` (its host end).

        ``pattern`` is a :class:`Pattern` (see :func:`tiles`), ``(offset, sizes, strides)``, or
        None for the whole tensor in order. ``wait=True`` (IRON's ``fill(..., wait=True)``)
        gives the transfer a completion token that the next :meth:`sync` waits for: the fill
        is done once its channel has sent the last byte, which retires it from the channel's
        task queue (a queue holds four).
        """
        loc = caller_loc()
        if not isinstance(wait, bool):
            raise DesignError(
                "runtime", f"rt.fill of '{getattr(fifo, 'name', fifo)}' with wait={wait!r}",
                loc=loc, limit="True or False", found=repr(wait),
                fix="wait=True to wait for it at the next rt.sync(), or leave it out")
        self._record("fill", fifo, tensor, pattern, wait, loc)

    def drain(self, fifo: ObjectFifo, tensor: HostTensorRef, pattern: PatternSpec = None, *,
              wait: bool = True) -> None:
        """Receive ``fifo``'s elements into ``tensor`` in ``pattern`` order.

        The sequence waits for this transfer before it ends (or at the next :meth:`sync`), as
        IRON's ``drain(..., wait=True)`` does. ``wait=False`` is refused: mlir-aie issues a
        completion token for every drain whether or not the sequence waits for it, and each wait
        takes the oldest token of its channel, so an unwaited drain would end a later wait
        early, or the run before the data arrives.
        """
        loc = caller_loc()
        if wait is not True:
            raise DesignError(
                "runtime", f"rt.drain of '{getattr(fifo, 'name', fifo)}' with wait={wait!r}",
                loc=loc, limit="every drain is waited for (mlir-aie's lowering gives every drain "
                "a completion token, and a wait takes the oldest one on its channel)",
                found=f"wait={wait!r}", fix="leave wait out; to overlap drains, issue several "
                "and rt.sync() once after them")
        self._record("drain", fifo, tensor, pattern, wait, loc)

    def wait(self, fifo: ObjectFifo) -> None:
        """Wait here for the oldest waited transfer on ``fifo`` not yet waited for (IRON's
        ``dma_wait(of)``), leaving the others in flight: with two batches of drains issued,
        wait for the first while the second keeps moving. A channel finishes its transfers in
        order, so this also retires what it did before.

        >>> rt.drain(c, C, rows_0_1); rt.drain(c, C, rows_2_3)    # doctest: +SKIP
        >>> rt.wait(c)      # rows 0-1 are in; rows 2-3 may still be moving  # doctest: +SKIP
        """
        loc = caller_loc()
        if isinstance(fifo, Channel):
            _whole_channel(fifo, "wait", "", loc)
        if not isinstance(fifo, ObjectFifo):
            raise DesignError("runtime", f"rt.wait needs a fifo, got {described(fifo)}",
                              loc=loc, fix="pass the fifo whose transfer to wait for, as given "
                              "to rt.drain or rt.fill (e.g. rt.wait(of_out))")
        rec = next((r for r in self.pending if r.fifo is fifo), None)
        if rec is None:
            name = getattr(fifo, "name", type(fifo).__name__)
            raise DesignError(
                "runtime", f"rt.wait of '{name}' with nothing to wait for", loc=loc,
                limit="a waited transfer on the fifo, issued and not yet waited for (every "
                "drain, a fill given wait=True)", found="none",
                fix=f"issue the rt.drain (or rt.fill(..., wait=True)) of '{name}' before waiting "
                "for it")
        self.pending.remove(rec)
        self.records.append(_wait_for(rec, loc, "wait"))

    def sync(self) -> None:
        """Wait here for every waited transfer issued so far: every drain, and the fills given
        ``wait=True``."""
        loc = caller_loc()
        self.records += [_wait_for(rec, loc, "sync") for rec in self.pending]
        self.pending.clear()

    def _record(self, op: Literal["fill", "drain"], fifo: ObjectFifo, tensor: HostTensorRef,
                pattern: PatternSpec, wait: bool, loc: Loc) -> None:
        if isinstance(fifo, LocalRef):
            _not_local(fifo, f"rt.{op}", loc)
        if isinstance(fifo, Channel):
            _whole_channel(fifo, op, getattr(tensor, "name", "..."), loc)
        if isinstance(fifo, HostTensorRef) and isinstance(tensor, (ObjectFifo, Channel)):
            raise DesignError(
                "runtime", f"rt.{op} is given the host tensor '{fifo.name}' first and "
                f"{described(tensor)} second: the other way round", loc=loc,
                limit=f"rt.{op}(fifo, host tensor)",
                found=f"rt.{op}({fifo.name}, {getattr(tensor, 'name', '...')})",
                fix=f"write rt.{op}({getattr(tensor, 'name', '...')}, {fifo.name})")
        if not isinstance(fifo, ObjectFifo):
            raise DesignError("runtime", f"rt.{op} needs a fifo, got {described(fifo)}",
                              loc=loc, limit=f"rt.{op}(fifo, host tensor): a fifo, or a "
                              "channel's fifo such as a[0]", found=described(fifo),
                              fix=f"pass the fifo the host {op}s first")
        if not isinstance(tensor, HostTensorRef):
            names = [t.name for t in self.trace.tensors]
            raise DesignError(
                "runtime", f"rt.{op} needs one of the design's tensor arguments, got "
                f"{described(tensor)}", loc=loc,
                limit="a host tensor: a parameter of the @design function"
                + (f" ({', '.join(names)})" if names else ""), found=described(tensor),
                fix=f"pass the parameter it moves, e.g. rt.{op}({fifo.name}, "
                f"{names[0] if names else 'a'})")
        made = self.trace.tiled.get(id(pattern))
        if made is not None and made[0] is pattern and made[2] != tuple(tensor.shape):
            raise DesignError(
                "tiles", f"rt.{op} moves '{tensor.name}' ({list(tensor.shape)}) by a pattern "
                f"tiles() made for '{made[1]}' ({list(made[2])})", loc=loc,
                limit="a tiles() pattern walks the matrix it was made for (its offsets and "
                "strides are that shape's)", found=f"tiles({made[1]}, ...)",
                fix=f"make it with tiles({tensor.name}, ...)")
        pat = to_pattern(pattern, tensor, loc)
        rec = TransferRecord(op, fifo, tensor, pat, wait, loc)
        self.records.append(rec)
        if wait:
            self.pending.append(rec)


def _wait_for(rec: TransferRecord, loc: Loc,
              by: Literal["sync", "wait", "end"]) -> TransferRecord:
    """The wait record for waited transfer ``rec``, made by ``rt.sync()``, ``rt.wait()`` or the
    sequence's end."""
    return TransferRecord("wait", rec.fifo, None, None, False, loc,
                          waits_for="fill" if rec.op == "fill" else "drain", by=by)


def _declared(table: dict[str, Any], ref: RtpRef | BarrierRef) -> bool:
    """Whether ``ref`` is the one this design declared under its name."""
    return table.get(ref.name) is ref


def to_pattern(spec: PatternSpec, tensor: HostTensorRef, loc: Loc) -> Pattern:
    """Normalize a pattern spec to a 4-d :class:`Pattern`."""
    if spec is None:
        return Pattern(offset=0, sizes=(1, 1, 1, tensor.type.numel), strides=(0, 0, 0, 1))
    if isinstance(spec, Pattern):
        return spec
    try:
        given_offset, given_sizes, given_strides = spec
        # numpy's integers too (np.int64(0)), as plain ints: the pattern is written as given
        offset, sizes, strides = as_int(given_offset), _ints(given_sizes), _ints(given_strides)
        if offset is not None and sizes is not None and strides is not None and \
                len(sizes) == len(strides) > 4:  # well formed, but more than a shim BD walks
            raise DesignError(
                "dma pattern", f"pattern {shown(spec)} has {len(sizes)} dimensions",
                loc=loc, limit="1 to 4 dimensions (a shim BD's: npu_dma_memcpy_nd takes four "
                "sizes and four strides)", found=f"{len(sizes)} dimensions",
                fix="leave out a dimension of size 1, merge a dimension into the next inner "
                "one where its stride is that one's size times stride (sizes [b, a], strides "
                "[a * s, s] are sizes [a * b], strides [s]), or split the transfer in several")
        if offset is None or sizes is None or strides is None or len(sizes) != len(strides) \
                or not 1 <= len(sizes) <= 4:
            raise ValueError
        pad = 4 - len(sizes)
        n, t = [1] * pad + sizes, [0] * pad + strides
        return Pattern(offset=offset, sizes=(n[0], n[1], n[2], n[3]),
                       strides=(t[0], t[1], t[2], t[3]))
    except (TypeError, ValueError):
        fix = ("write (offset, [sizes...], [strides...]) outermost first, in elements, or use "
               "tiles(...)")
        first = spec[0] if isinstance(spec, (list, tuple)) and spec else None
        if isinstance(first, (list, tuple)):  # MLIR-AIR's and IRON's per-dimension offsets
            fix += ("; the offset is one linear element offset: the sum of each dimension's "
                    "offset times its stride")
            try:
                steps, offs = _ints(spec[2]), _ints(first)
                if steps is not None and offs is not None and len(steps) == len(offs):
                    total = sum(o * t for o, t in zip(offs, steps))
                    fix += f" (here {total})"
            except (TypeError, IndexError):
                pass
        raise DesignError(
            "dma pattern", f"pattern {shown(spec)} is not (offset, sizes, strides) with 1-4 dims",
            loc=loc, limit="ints: an offset, then as many sizes as strides", fix=fix) from None


def _ints(values: Any) -> list[int] | None:
    """``values`` (an iterable) as plain ints (numpy's integers too), or None when one is not
    an integer."""
    out = [as_int(v) for v in values]
    return None if None in out else [v for v in out if v is not None]


def runtime() -> RuntimeSequence:
    """Open the design's runtime sequence (once per design): what the host does, in order, for
    each invocation. Its ``rt`` has:

    * ``rt.fill(f, T, pattern=None, wait=False)``: send host tensor ``T`` (an argument of the
      ``@design`` function) into fifo ``f``, whole or in ``pattern`` order (``tiles(T, (64,
      64))``, or ``(offset, sizes, strides)``). A channel's host end is ``a[:]`` for one with
      ``split=`` or ``join=``, ``a[i]`` otherwise.
    * ``rt.drain(f, T, pattern=None)``: receive fifo ``f``'s elements into ``T``; the sequence
      waits for every drain before it ends (a join's output: ``rt.drain(c[:], C)``).
    * ``rt.sync()``: wait here for every drain, and every fill given ``wait=True``, issued so
      far; ``rt.wait(f)``: for the oldest one on ``f`` only.
    * ``rt.rtp_write(p, index, value)``: write slot ``index`` of runtime parameter ``p``
      (:func:`rtp`); ``rt.set_barrier(b, value)``: let cores waiting on barrier ``b``
      (:func:`barrier`, ``b.wait_for_value(value)``) go on.

    Example::

        with runtime() as rt:
            rt.rtp_write(thr, 0, 50)        # before the fills whose calls read it
            rt.fill(a, A)                   # fifo a <- A, whole, in order
            rt.fill(b[:], B, tiles(B, (64, 64)))  # a split channel's host end
            rt.drain(c, C)                  # C <- fifo c; waited for at the end
    """
    return RuntimeSequence(caller_loc(), assigned_name("runtime"))


class RuntimeSequence:
    """What :func:`runtime` returns: its ``with`` opens the design's runtime sequence, whose
    ``rt`` (the :class:`RuntimeBuilder`) its ``as`` names. Without ``with`` (``rt = runtime()``)
    nothing is opened: ``rt.fill(...)`` then says to write the ``with`` (it was Python's
    "'_GeneratorContextManager' object has no attribute 'fill'")."""

    def __init__(self, loc: Loc, name: str | None) -> None:
        self.loc = loc
        """The line of the ``runtime()`` call."""
        self.name = name
        """The variable it was assigned to, if it was (``rt = runtime()``)."""
        self._rt: RuntimeBuilder | None = None

    def __enter__(self) -> RuntimeBuilder:
        b = current_design("runtime()", self.loc)
        if b.runtime is not None:
            raise DesignError("runtime", "a design has one runtime sequence; this is a second",
                              loc=self.loc, related=[("the first", b.runtime_loc)]
                              if b.runtime_loc else None,
                              fix="put every fill and drain in one `with runtime()`")
        rt = self._rt = RuntimeBuilder(b)
        b.runtime, b.runtime_loc = rt.records, self.loc
        return rt

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> None:
        rt = self._rt
        if kind is None and rt is not None:  # an error inside the block goes up as it is
            rt.records += [_wait_for(rec, self.loc, "end") for rec in rt.pending]  # the end's
            rt.pending.clear()                                                     # sync

    def __getattr__(self, attr: str) -> NoReturn:
        # only for what the object lacks: rt.fill, rt.drain, ... of a runtime() never entered;
        # private names, and what aiedsl's or a library's code probes, as Python has it
        if attr.startswith("_") or not is_users(sys._getframe(1).f_code.co_filename):
            raise AttributeError(f"'RuntimeSequence' object has no attribute {attr!r}")
        rt = self.name or "rt"
        raise NoSuchName(
            "runtime", f"{rt}.{attr} is used on runtime() outside a `with`: no runtime "
            "sequence is open", loc=caller_loc(),
            limit="runtime() is a context manager: the sequence opens as its `with` block starts, "
            "and `as` names the rt that fills and drains", found=f"{rt} = runtime()"
            if self.name else "runtime()", related=[("runtime() is called here", self.loc)],
            fix=f"write `with runtime() as {rt}:` and put {rt}.{attr}(...) and the other "
            "transfers in its block" if hasattr(RuntimeBuilder, attr) else
            f"write `with runtime() as {rt}:` and put the fills and drains in its block "
            f"({_IRON_RUNTIME[attr][1]})" if attr in _IRON_RUNTIME else
            f"write `with runtime() as {rt}:` and put the fills and drains in its block "
            f"(rt has no {attr}: it has fill, drain, wait, sync, rtp_write and set_barrier)")


def _whole_channel(ch: Channel, op: str, tensor: str, loc: Loc) -> NoReturn:
    """Refuse a whole channel given to ``rt.fill``, ``rt.drain`` or ``rt.wait``: the host
    talks to its host ends, one fifo each, as the fix writes them (``a[:]`` for a split or
    join, ``a[0]`` otherwise). A fill of a join or a drain of a split is told which way its
    host end flows."""
    end, direction = ch.host_end(), ("fill" if ch.split_axis is not None else
                                     "drain" if ch.join_axis is not None else op)
    if op == "wait":
        fix = f"wait for one of its host ends, as given to rt.fill or rt.drain: rt.wait({end})"
    else:
        fix = f"{op} its host end: rt.{op}({end}, {tensor})"
        if direction != op:
            kind = "split" if ch.split_axis is not None else "join"
            fix = f"a {kind}'s host end is {direction}ed: rt.{direction}({end}, {tensor})"
    several = ch.host_ends() != end
    raise DesignError(
        "runtime", f"rt.{op} needs a fifo, got {ch.described()}", loc=loc,
        limit="a fifo; a channel is a bundle of fifos, and the host moves its data through "
        + ("the fifo the memtile splits, written with ':' on the split axis"
           if ch.split_axis is not None else "the fifo the memtile joins into, written with ':' "
           "on the join axis" if ch.join_axis is not None else "each index's fifo"),
        found=f"channel '{ch.name}'",
        fix=fix + (f" (its host ends are {ch.host_ends()}: one rt.{direction} each)"
                   if several else ""))


def _not_local(b: LocalRef, what: str, loc: Loc) -> None:
    """Refuse a core-local buffer where the runtime would move or write it."""
    raise DesignError(
        "runtime", f"{what} of local '{b.name}': a local lives in the memory of the cores that "
        "use it, and no DMA or runtime write reaches it", loc=loc,
        related=[(f"local '{b.name}' is declared", b.loc)],
        fix="to bring its value to the host, copy it into a fifo element in the core function "
            "(a copy kernel) and drain that fifo; for a value the host sets, use an rtp "
            "(rtp(...), rt.rtp_write) or a fifo the runtime fills")
