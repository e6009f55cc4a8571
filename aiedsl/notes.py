"""Notes: what a design does that is legal, often meant, and as often a mistake that only shows
as wrong numbers. ``aiedsl check`` prints them, ``report.txt`` lists them, and a FAIL of a run
repeats them under its line (:func:`aiedsl.output_checks.compare_outputs`).

* A host tensor of one kind of number (float, signed or unsigned integer) moved into or out of
  a fifo of another kind of the same size: DMAs move bytes, so an f32 tensor's bits reach an
  i32 fifo as whatever integers they spell (the README's "Host tensors of another type";
  tensors of another size, IRON's ``two_col`` i32 tensor of u8 lines, are a byte view meant
  as such and not noted).
* A runtime transfer that moves the first element of a fifo of 2-D elements row by row from
  (or to) a block of a 2-D host matrix of another shape, or from a run of it that is no block:
  ``tiles(A, (64, 16))`` into ``Tensor[16, 64, f32]`` elements, or a fill with no pattern into
  16x16 elements from a 64-wide matrix (four whole rows each). The element's rows are then not
  the matrix's. A pattern that walks the element's own block in another order (mmul blocks, a
  DMA transpose) makes a layout on purpose and is not noted.

* A kernel that sums into a narrow integer buffer (an i8 or i16 matmul C) called more than once
  on it before its core releases it: the partial sums live in the narrow type between the calls,
  so each call rounds and saturates them again (a GEMM's K/k steps each round, and a partial sum
  clipped at the type's limit stays clipped whatever later steps add), where a quantized GEMM is
  usually meant to round once. This one is said under a PASS of the output too (a reference that
  narrows as often passes), not only under a FAIL.

* A core-local buffer with an initial value that a kernel reads before anything in its core's
  program writes it, and that some call of the program writes: the initial value is written
  when the design is loaded, not at each run, so on the NPU every run after the first starts
  from what the run before left (an accumulator copied from IRON's reduce examples without its
  reset: the second run's sum adds onto the first's). The simulator checks the first run, which
  the reference describes; the note says it under a PASS too, as nothing else would show it.

A note is one line, at the line of the transfer or the kernel call it is about (here cut in
two)::

    d.py:17: note: host tensor 'inp' is f32 and fifo 'a' carries i32: its bytes are
    reinterpreted, not converted
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Literal

import numpy as np

from aiedsl.distinct import has_repeats
from aiedsl.dtypes import DType, dtype
from aiedsl.errors import counted
from aiedsl.ir.core_ops import Acquire, BufferArg, Call, LocalArg
from aiedsl.ir.design import Design
from aiedsl.ir.loc import Loc
from aiedsl.ir.program import walk
from aiedsl.ir.runtime import Transfer
from aiedsl.ir.types import Pattern, TensorType, first_indices
from aiedsl.library_vectors import library_lanes, takes_vectors
from aiedsl.targets import TargetModel, get_target


@dataclass(frozen=True)
class Note:
    """One note about a runtime transfer, or a kernel call whose output a drain sends to the
    host: where it is, and what it says."""

    loc: Loc
    """The line of the ``rt.fill`` or ``rt.drain``, or of the kernel call."""
    text: str
    """What it says, one line, without the location."""
    op: Literal["fill", "drain"]
    """The transfer's direction (a kernel call's note is about what is drained)."""
    tensor: str
    """The host tensor it moves (a kernel call's: an output its results reach)."""
    always: bool = False
    """Said under a PASS of ``tensor`` too, not only under a FAIL: what a reference written the
    same way would not show."""

    def line(self) -> str:
        """The note as ``aiedsl check`` prints it: ``d.py:17: note: ...``."""
        return f"{self.loc}: note: {self.text}"


def design_notes(d: Design) -> list[Note]:
    """Every note about ``d``'s runtime transfers, in runtime order; a transfer that says what
    an earlier one said (each fill of a GEMM's tiles) is not noted again. Then the notes about
    kernel calls, one per output each reaches: a FAIL of any of them repeats it (kept apart by
    their tensor, two outputs' copies of one note both stay; :func:`note_lines` says each
    once)."""
    notes: list[Note] = []
    said: set[str] = set()
    for t in d.runtime:
        if not isinstance(t, Transfer):
            continue
        for text in (_type_note(d, t), _layout_note(d, t), _rewrite_note(t)):
            if text is not None and text not in said:
                said.add(text)
                notes.append(Note(t.loc, text, t.op, t.tensor))
    per_output: set[tuple[str, str]] = set()
    for note in [*narrowed_sum_notes(d), *carried_local_notes(d), *stale_inout_notes(d),
                 *host_block_notes(d)]:
        if note.text not in said and (note.text, note.tensor) not in per_output:
            per_output.add((note.text, note.tensor))
            notes.append(note)
    return notes


def note_lines(notes: list[Note]) -> list[str]:
    """``notes`` as ``aiedsl check`` and ``report.txt`` print them: each line once (a note
    about a kernel call is kept once per output it reaches)."""
    return list(dict.fromkeys(n.line() for n in notes))


def check_notes(d: Design) -> list[str]:
    """Every note ``aiedsl check`` prints for placed design ``d``, a line each: what is legal
    but often a mistake (:func:`design_notes`), a forward's depth the memtile does not use
    (:func:`forward_depth_notes`) and a core end given fewer buffers than its depth
    (:func:`buffer_count_notes`). From Python, ``aiedsl.build(...).notes``."""
    return (note_lines(design_notes(d)) + forward_depth_notes(d)
            + buffer_count_notes(d, get_target(d.device)))


def buffer_count_notes(d: Design, target: TargetModel) -> list[str]:
    """``aiedsl check``'s line for each core end of a DMA fifo (placed design ``d``) that gets
    fewer buffers than its depth asks: with one depth for the whole fifo, mlir-aie gives such
    an end one more than the most its core acquires at once (``findObjectFifoSize``;
    :mod:`aiedsl.place.objectfifo`), so depth=60 on a fifo from the shim gives its core 2
    (an IRON user's tester: only report.txt said so). An end given its own depth
    (``consumer_depth=``) gets it, and says nothing."""
    from aiedsl.place.objectfifo import lower

    out = []
    for e in lower(d, target).ends:
        p = e.endpoint
        if p.kind != "core" or e.fifo.depth_per_end or e.size >= p.depth:
            continue
        fix = (f'consumer_depth={{"{p.core}": {p.depth}}} gives it {p.depth}'
               if e.port == "consume" else
               f"depth={p.depth} with consumer_depth= (the consumers' own depths, e.g. "
               f"consumer_depth={e.size}) gives {p.core} its {p.depth}")
        out.append(f"{e.fifo.loc}: note: fifo '{e.fifo.name}' gives {p.core}'s end {e.size} "
                   f"buffer{'s' if e.size > 1 else ''}, not the {p.depth} of its depth: across "
                   "a DMA, mlir-aie sizes a core's end of a fifo of one depth at the most the "
                   f"core acquires at once plus one; {fix}")
    return out


def forward_depth_notes(d: Design) -> list[str]:
    """``aiedsl check``'s line for each memtile forward given a depth of its own (``f.forward(
    depth=7)``) whose memtile buffers are its input's: a 1-to-1 link's buffers are its larger
    side's, the input's on a tie (``createObjectFifoElements``;
    :func:`aiedsl.place.objectfifo.buffer_owner`), so the depth counts at the memtile nowhere
    (an IRON user's tester read ``forward(depth=7)`` as seven buffers there; the core ends have
    :func:`buffer_count_notes`)."""
    from aiedsl.place.objectfifo import buffer_owner

    out = []
    for link in d.links:
        if link.kind != "forward" or link.via != "memtile":
            continue
        owner, port = buffer_owner(d, link)
        src, dst = d.fifo(link.srcs[0]), d.fifo(link.dsts[0])
        if port != "consume" or owner != src.name:
            continue
        has = next(c for c in src.consumers if c.is_link_end).depth
        given = dst.producer.depth
        if given in (has, src.producer.depth):  # the same, or forward()'s default: its input's
            continue
        out.append(f"{link.loc}: note: forward '{dst.name}' depth={given} gives the memtile no "
                   f"buffers: it moves '{dst.name}' through the {counted(has, 'buffer')} of "
                   f"'{src.name}' there (a forward's buffers are its larger side's, its "
                   "input's on a tie: mlir-aie's createObjectFifoElements); "
                   f'consumer_depth={{"memtile": {given}}} on \'{src.name}\' gives the memtile '
                   f"{given}")
    return out


def narrowed_sum_notes(d: Design) -> list[Note]:
    """A note at each kernel call that sums into a narrow integer buffer (i8, i16, u8, u16: an
    ``inout`` argument of a kernel that :attr:`~aiedsl.ir.Kernel.sums`) more than once between
    the acquire and the release of that buffer, for each output the core's results reach: the
    partial sums are narrowed at every call (see the module's docstring). One note per kernel
    and core count; a herd's cores, which make the same calls, share it."""
    from aiedsl.ir.dataflow import Dataflow

    kernels = {k.symbol: k for k in d.kernels}
    flow: Dataflow | None = None
    notes: list[Note] = []
    for core in d.cores:
        acquired: Counter[str] = Counter()
        calls: Counter[tuple[str, str]] = Counter()  # (acquire result, kernel)
        where: dict[tuple[str, str], Loc] = {}
        for op, mult in walk(core.body):
            if isinstance(op, Acquire):
                acquired[op.result] += mult * op.count
            elif isinstance(op, Call):
                k = kernels[op.kernel]
                if not k.sums:
                    continue
                for a, arg in zip(k.args, op.args):
                    if (isinstance(arg, BufferArg) and a.access == "inout"
                            and not dtype(a.dtype).is_float and dtype(a.dtype).itemsize < 4):
                        calls[(arg.value, k.symbol)] += mult
                        where.setdefault((arg.value, k.symbol), op.loc)
        for (result, symbol), count in calls.items():
            per = count // max(acquired[result], 1)
            if per < 2:
                continue
            flow = flow or Dataflow(d)
            k = kernels[symbol]
            out = next(a for a in k.args if a.access == "inout" and a.kind == "buffer")
            dt = dtype(out.dtype)
            info = np.iinfo(dt.numpy)
            text = (f"kernel '{symbol}' sums into its {dt} argument '{out.name}' {per} times "
                    f"before the core releases it: the partial sums are kept in {dt} between "
                    f"the calls, so they are rounded and saturated {per} times, not once (a "
                    f"partial sum clipped at {info.max} or {info.min} stays clipped whatever "
                    "the later calls add, and the calls' rounding errors add up); for one "
                    "rounding, sum in an int32 buffer (matmul to i32 into a core-local "
                    "local(Tensor[..., i32]) when the core's memory holds it, then "
                    "matmul_narrow into the output after the last call) or drain the int32 "
                    "sums and narrow them on the host")
            for tensor in sorted(flow.downstream(core.name)):
                if all(n.text != text or n.tensor != tensor for n in notes):
                    notes.append(Note(where[(result, symbol)], text, "drain", tensor,
                                      always=True))
    return notes


def carried_local_notes(d: Design) -> list[Note]:
    """A note at the first call that reads a core-local buffer with an initial value before
    its core's program writes it, when a call of that program writes it (inout or out), for
    each output the core's results reach (see the module's docstring). A local only read (a
    table of constants) keeps its value rightly; a core run once (``forever=False``) runs once
    per load. A herd's cores, which make the same calls, share the note."""
    from aiedsl.ir.dataflow import Dataflow

    kernels = {k.symbol: k for k in d.kernels}
    initial = {b.name for b in d.locals if b.init is not None}
    flow: Dataflow | None = None
    notes: list[Note] = []
    for core in d.cores:
        if not core.forever or not initial:
            continue
        first: dict[str, tuple[Call, str]] = {}  # local -> the call that first touches it, how
        written: set[str] = set()
        for op, _ in walk(core.body):
            if not isinstance(op, Call):
                continue
            ways: dict[str, set[str]] = {}
            for a, arg in zip(kernels[op.kernel].args, op.args):
                if isinstance(arg, LocalArg) and arg.local in initial:
                    ways.setdefault(arg.local, set()).add(a.access)
            for name, how in ways.items():
                reads = "in" in how or "inout" in how
                first.setdefault(name, (op, "inout" if "inout" in how else "in" if reads
                                        else "out"))
                if how & {"out", "inout"}:
                    written.add(name)
        for name, (call, access) in first.items():
            if access == "out" or name not in written:
                continue
            local = d.local(name)
            text = (f"kernel '{call.kernel}' reads core-local '{name}' (as \"{access}\") before "
                    f"anything in {'its cores' if len(local.cores) > 1 else core.name}'s "
                    "program writes it, and the program writes it: its initial value is "
                    "written when the design is loaded, not at each run, so on the NPU every "
                    "run after the first starts from what the run before left (the simulator "
                    "compares only the first run with the reference); to start each run "
                    "afresh, write it at the start of the core's program (a call taking it "
                    f"\"out\"{zero_example(local.type)})")
            flow = flow or Dataflow(d)
            for tensor in sorted(flow.downstream(core.name)):
                if all(n.text != text or n.tensor != tensor for n in notes):
                    notes.append(Note(call.loc, text, "drain", tensor, always=True))
    return notes


def stale_inout_notes(d: Design) -> list[Note]:
    """A note at each call of a kernel of the user's that takes "inout" an element its core
    acquired by ``produce()`` before any call wrote it
    (:func:`~aiedsl.checks.stale.unwritten_inout_reads`), for each output the core's results
    reach: ``check`` refuses such a read by aiedsl's own kernels (``stale read``), whose
    "inout" is added into, but a kernel of the user's may write it before reading it. Said
    under a FAIL of such an output (a kernel reading stale data fails the comparison with no
    other hint), and by ``check``."""
    from aiedsl.checks.stale import unwritten_inout_reads

    # a herd's cores make the call at one line (each of its own fifo): said once
    return _at_outputs(d, [(core.name, call.loc, text)
                           for core, call, text in unwritten_inout_reads(d)], per_line=True)


def host_block_notes(d: Design) -> list[Note]:
    """A note at each call whose blocked argument the runtime fills or drains straight from or to
    the host (:func:`~aiedsl.checks.layout.host_blocks`), for each output it reaches: said by
    ``check`` and under a FAIL (a host holding the tile row-major fails every element, with no
    other hint)."""
    from aiedsl.checks.layout import host_blocks

    return _at_outputs(d, [(core, loc, text) for core, loc, text, _ in host_blocks(d)],
                       per_line=False)


def _at_outputs(d: Design, found: list[tuple[str, Loc, str]], per_line: bool) -> list[Note]:
    """A note of each (core, line, text) in ``found`` for each output the core's results reach
    (said under a FAIL of any of them), once per line and output (``per_line``: whatever the
    text, as a herd's cores say theirs at one line) or per text too."""
    from aiedsl.ir.dataflow import Dataflow

    flow = Dataflow(d) if found else None
    notes: list[Note] = []
    for core, loc, text in found:
        assert flow is not None
        for tensor in sorted(flow.downstream(core)):
            if all(n.loc != loc or n.tensor != tensor or (n.text != text and not per_line)
                   for n in notes):
                notes.append(Note(loc, text, "drain", tensor))
    return notes


def zero_example(t: TensorType) -> str:
    """The library kernel a note or hint names to zero a buffer of type ``t``: zero when it
    takes the size (whole vectors of the type), else none of the library's (a hint naming zero
    for one i32 would end in zero's refusal of the size).

    >>> zero_example(TensorType(shape=(1,), dtype="i32"))  # doctest: +SKIP
    ': one of your own, as library zero writes whole vectors of 16 i32 and the local holds 1'
    """
    if takes_vectors(t):
        return ", e.g. aiedsl.kernels.zero"
    return (f": one of your own, as library zero writes whole vectors of "
            f"{library_lanes(t.dtype)} {t.dtype} and the local holds {t.numel}")


def _kind(dt: DType) -> str:
    """What kind of number ``dt`` holds: ``float``, ``signed`` or ``unsigned``."""
    if dt.is_float:
        return "float"
    return "unsigned" if dt.name.startswith("u") else "signed"


def _type_note(d: Design, t: Transfer) -> str | None:
    """A host tensor and its fifo's elements of one size and different kinds of number."""
    host = dtype(d.tensor(t.tensor).type.dtype)
    elem = dtype(d.fifo(t.fifo).elem.dtype)
    if host.itemsize != elem.itemsize or _kind(host) == _kind(elem):
        return None
    if t.op == "fill":
        return (f"host tensor '{t.tensor}' is {host} and fifo '{t.fifo}' carries {elem}: its "
                "bytes are reinterpreted, not converted")
    return (f"fifo '{t.fifo}' carries {elem} and host tensor '{t.tensor}' is {host}: its bytes "
            "are reinterpreted, not converted")


def block_of(indices: np.ndarray, width: int) -> tuple[int, int] | None:
    """The (rows, cols) of the block of a row-major matrix ``width`` wide that ``indices`` read
    row by row, each row left to right; None when they read anything else."""
    if indices.size == 0:
        return None
    first = int(indices[0])
    rows = int(indices[-1]) // width - first // width + 1
    if rows < 1 or indices.size % rows:
        return None  # read backwards, or rows of unequal length
    cols = indices.size // rows
    if first % width + cols > width:
        return None  # a run that wraps onto the next row is no block
    want = first + (np.arange(rows)[:, None] * width + np.arange(cols)[None, :]).ravel()
    return (rows, cols) if np.array_equal(indices, want) else None


REWRITES_WALKED = 1 << 20
"""Elements of a drain pattern walked one by one to find one written twice, when its sizes and
strides alone do not tell (an interleaving of its dimensions); a larger one is not judged."""


def _rewrite_note(t: Transfer) -> str | None:
    """A drain whose pattern writes some host element more than once: one channel writes in
    order, so the last write stands, but a stride or a size is usually off (a layout tester's
    2 rows of 64 at a stride of 32)."""
    if t.op != "drain" or not writes_twice(t.pattern):
        return None
    p = t.pattern
    return (f"rt.drain of '{t.fifo}' writes some elements of '{t.tensor}' more than once "
            f"(offset {p.offset}, sizes {list(p.sizes)}, strides {list(p.strides)}): the last "
            "write of each stands; is a stride or a size off?")


def writes_twice(p: Pattern) -> bool:
    """Does pattern ``p`` visit some element more than once? Told by its sizes and strides when
    each stride steps past all that the dimensions inside it cover (no: each element once) or a
    dimension that moves has stride 0 (yes); else by walking it, up to
    :data:`REWRITES_WALKED` elements (False beyond: not known).

    >>> writes_twice(Pattern(offset=0, sizes=(1, 1, 2, 64), strides=(0, 0, 32, 1)))
    True
    >>> writes_twice(Pattern(offset=0, sizes=(1, 4, 16, 16), strides=(0, 16, 64, 1)))
    False
    """
    dims = sorted((stride, size) for size, stride in zip(p.sizes, p.strides) if size > 1)
    if any(stride == 0 for stride, _ in dims):
        return True
    span = 1
    for stride, size in dims:
        if stride < span:
            break
        span += stride * (size - 1)
    else:
        return False
    if p.numel > REWRITES_WALKED:
        return False
    idx = first_indices(p, p.numel)
    return has_repeats(idx)


def _reordered(d: Design, t: Transfer) -> bool:
    """Does a DMA between transfer ``t``'s host end and the cores reorder what it moves: a
    ``dims_to_stream`` or ``dims_from_stream`` at an end of its fifo or of a fifo linked to it
    (a fill's onward, a drain's backward)? Its element's rows are then the layout's, not the
    pattern's."""
    seen: set[str] = set()
    todo = [t.fifo]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        f = d.fifo(name)
        if f.producer.dims or any(c.dims for c in f.consumers):
            return True
        for link in d.links:
            ends, onward = (link.srcs, link.dsts) if t.op == "fill" else (link.dsts, link.srcs)
            if name in ends:
                todo.extend(onward)
    return False


def _layout_note(d: Design, t: Transfer) -> str | None:
    """A 2-D fifo element moved from or to a block of a 2-D host matrix of another shape, or
    from or to no block of it."""
    host = d.tensor(t.tensor).type
    elem = d.fifo(t.fifo).elem
    if len(host.shape) != 2 or len(elem.shape) != 2 or host.dt.itemsize != elem.dt.itemsize:
        return None  # no rows to compare, or a byte view (another size of number)
    (height, width), (rows, cols) = host.shape, elem.shape
    if rows == 1 or cols == 1:
        return None  # a vector written as a matrix: it has no rows to get wrong
    if _reordered(d, t):
        return None  # a DMA on the way lays it out (a transpose on purpose: a layout tester)
    idx = first_indices(t.pattern, rows * cols)
    if idx.size < rows * cols:
        return None
    block = block_of(idx, width)
    run = bool(np.array_equal(idx, idx[0] + np.arange(idx.size)))
    if block == (rows, cols) or (block is None and not run):
        # the element's own block, or a walk of another order: a layout the pattern makes on
        # purpose (mmul blocks, a DMA transpose), judged by the kernels' blocks= if anywhere
        return None
    name = t.tensor
    plain = t.pattern == Pattern(offset=0, sizes=(1, 1, 1, host.numel), strides=(0, 0, 0, 1))
    how = " with no pattern" if plain else ""
    verb, into = ("reads", "into") if t.op == "fill" else ("writes", "from")
    fix = (f"; tiles({name}, ({rows}, {cols})) {verb} {rows}x{cols} blocks"
           if height % rows == 0 and width % cols == 0 else "")
    if block is None:
        what = (f"{rows * cols} consecutive elements of '{name}' (rows of {width}), no block of "
                f"it, {into} its first {rows}x{cols} element: the element's rows are not rows "
                f"of '{name}'")
    else:
        shape = "the shape transposed" if block == (cols, rows) else "another shape"
        what = (f"a {block[0]}x{block[1]} block of '{name}' {into} its first {rows}x{cols} "
                f"element ({shape}): the element's rows are not the block's")
    return f"rt.{t.op} of '{t.fifo}'{how} {verb} {what}{fix}"
