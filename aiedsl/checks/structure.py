"""Checks of a design's structure: links, kernel calls, acquires, and per-run balance (what
the drains write is :mod:`aiedsl.checks.outputs`)."""

from __future__ import annotations

from fractions import Fraction

from aiedsl.dtypes import dtype
from aiedsl.errors import DesignError
from aiedsl.ir import (
    BufferArg, Design, Fifo, KernelArg, Loc, LocalArg, Loop, RtpArg, RtpWrite, ScalarArg,
)
from aiedsl.ir.program import acquires, calls, max_acquire, released, walk


def check_links(d: Design) -> None:
    """Element types agree across links; split and join offsets tile the parent exactly."""
    for link in d.links:
        srcs = [d.fifo(n) for n in link.srcs]
        dsts = [d.fifo(n) for n in link.dsts]
        dtypes = {f.elem.dtype for f in srcs + dsts}
        if len(dtypes) > 1:
            raise DesignError(
                "element type", f"{link.kind} {_names(srcs)} -> {_names(dsts)} mixes element "
                f"types {', '.join(sorted(dtypes))}", loc=link.loc,
                found=", ".join(f"{f.name}: {f.elem}" for f in srcs + dsts),
                fix="a memtile moves bytes unchanged: use one dtype on both sides")
        if link.kind == "forward":
            a, b = srcs[0], dsts[0]
            big, small = max(a.elem.numel, b.elem.numel), min(a.elem.numel, b.elem.numel)
            if big % small:
                raise DesignError(
                    "element type", f"forward '{a.name}' ({a.elem}) -> '{b.name}' ({b.elem}) "
                    "regroups elements by a size that does not divide", loc=link.loc,
                    found=f"{a.elem.numel} vs {b.elem.numel} elements",
                    fix="keep the element size, or make one size a multiple of the other "
                    "(the memtile resends each element in equal pieces)")
            continue
        parent, parts = (srcs[0], dsts) if link.kind == "split" else (dsts[0], srcs)
        if len(link.offsets) != len(parts):
            raise DesignError(
                f"{link.kind} offsets", f"{link.kind} of '{parent.name}' has "
                f"{_count(len(parts), 'part')} but {_count(len(link.offsets), 'offset')}",
                loc=link.loc,
                fix="give one offset per part")
        # mlir-aie's lowering moves each part from its offset up to the next listed offset (the
        # last to the parent's end: ObjectFifoLinkOp::getDistributeTransferLengths and
        # getJoinTransferLengths), so a part's element must be exactly that long, in list order.
        covered = [(off, off + p.elem.numel, p.name) for off, p in zip(link.offsets, parts)]
        pos = 0
        for start, end, name in covered:
            if start != pos:
                what = "overlaps the part before it" if start < pos else "leaves a gap before it"
                raise DesignError(
                    f"{link.kind} offsets", f"{link.kind} of '{parent.name}' ({parent.elem.numel}"
                    f" elements): part '{name}' at offset {start} {what}", loc=link.loc,
                    limit="parts back to back in the order listed, covering the parent exactly "
                    "(mlir-aie moves each part up to the next listed offset)",
                    found=_layout(covered), fix=f"put '{name}' at offset {pos}")
            pos = end
        if pos != parent.elem.numel:
            raise DesignError(
                f"{link.kind} offsets", f"{link.kind} parts of '{parent.name}' cover {pos} of its "
                f"{parent.elem.numel} elements", loc=link.loc,
                limit=f"exactly {parent.elem.numel} elements", found=_layout(covered),
                fix="make the parts add up to the parent element")


def _names(fs: list[Fifo]) -> str:
    return ", ".join(f"'{f.name}'" for f in fs)


def _layout(covered: list[tuple[int, int, str]]) -> str:
    return ", ".join(f"{n} [{s}, {e})" for s, e, n in covered)


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
                f"{_count(f.producer.depth, 'buffer')}", loc=c.loc,
                limit=f"at most the producer's depth = {f.producer.depth} (a consumer_depth "
                "counts only for a fifo crossing a DMA)", found=str(n),
                fix=f"raise the fifo's depth to {n} or acquire fewer at once")


def check_kernel_calls(d: Design) -> None:
    """Every call passes what its kernel's signature declares: buffers of its types, scalars
    its C++ can take (in their dtype's range, and the value it is compiled for or the range it
    narrows to), rtp slots whose every write the kernel can take."""
    writes: dict[tuple[str, int], list[RtpWrite]] = {}
    for op in d.runtime:
        if isinstance(op, RtpWrite):
            writes.setdefault((op.rtp, op.index), []).append(op)
    for core in d.cores:
        acq = acquires(core)
        for call in calls(core):
            k = d.kernel(call.kernel)
            if len(call.args) != len(k.args):
                raise DesignError(
                    "kernel signature", f"{core.name} calls '{k.symbol}' with "
                    f"{_count(len(call.args), 'argument')}; it takes {len(k.args)}", loc=call.loc,
                    limit=_sig(k), found=_count(len(call.args), 'argument'),
                    fix=f"call it as {k.symbol}({', '.join(a.name for a in k.args)})")
            for i, (arg, param) in enumerate(zip(call.args, k.args)):
                if param.kind == "buffer" and isinstance(arg, LocalArg):
                    _check_local_arg(d, core.name, call.loc, i, param, arg, _sig(k), k.symbol)
                elif param.kind == "buffer":
                    if not isinstance(arg, BufferArg):
                        what = (f"rtp slot '{arg.rtp}'[{arg.index}]" if isinstance(arg, RtpArg)
                                else f"the scalar {arg.value!r}" if isinstance(arg, ScalarArg)
                                else "something else")
                        raise DesignError(
                            "kernel signature", f"argument {i} ('{param.name}') of '{k.symbol}' "
                            f"is a buffer, but {core.name} passes {what}",
                            loc=call.loc, limit=_sig(k),
                            fix="pass an acquired fifo element or a local")
                    elem = d.fifo(acq[arg.value].fifo).elem
                    assert param.type is not None
                    if elem.dtype == param.type.dtype and elem.numel == param.type.numel and (
                            tuple(elem.shape) != tuple(param.type.shape)):
                        # mlir-aie's func.call verifier wants each operand's memref type to be
                        # the declared one exactly: the same elements in another shape fail
                        fifo_name = acq[arg.value].fifo
                        raise DesignError(
                            "kernel signature", f"argument {i} ('{param.name}') of '{k.symbol}' "
                            f"expects {param.type}, but {core.name} passes an element of "
                            f"'{fifo_name}' ({elem}): the same {elem.numel} elements in another "
                            f"shape, and func.call takes only the declared memref type",
                            loc=call.loc, limit=_sig(k), found=str(elem),
                            fix=f"declare '{fifo_name}' with the kernel's shape, "
                                f"Tensor[{', '.join(map(str, param.type.shape))}, "
                                f"{param.type.dtype}] (the same bytes), or declare the kernel "
                                f"for {elem}")
                    if elem.dtype != param.type.dtype or elem.numel != param.type.numel:
                        raise DesignError(
                            "kernel signature", f"argument {i} ('{param.name}') of '{k.symbol}' "
                            f"expects {param.type}, but {core.name} passes an element of "
                            f"'{acq[arg.value].fifo}' ({elem})", loc=call.loc,
                            limit=_sig(k), found=str(elem),
                            fix="pass a fifo of the kernel's element type, or declare the "
                            "kernel for this shape")
                elif isinstance(arg, RtpArg):
                    if arg.dtype != param.dtype:
                        raise DesignError(
                            "kernel signature", f"argument {i} ('{param.name}') of '{k.symbol}' "
                            f"is {param.dtype}, but {core.name} passes rtp slot "
                            f"'{arg.rtp}'[{arg.index}] ({arg.dtype})", loc=call.loc,
                            limit=_sig(k), found=arg.dtype,
                            fix=(f"declare it scalar('{param.name}', {arg.dtype}, narrows_to="
                                 f"{param.dtype}): an rtp slot is a 32-bit word, which the "
                                 "kernel narrows") if not dtype(param.dtype).is_float else (
                                f"an rtp slot holds an {arg.dtype}: declare it scalar("
                                f"'{param.name}', {arg.dtype}) and convert it in the C++, or "
                                "pass the float in the call"))
                    rule = _value_rule(param)
                    if rule is not None:  # the runtime's writes are the values the kernel reads
                        lo, hi, what, limit, want = rule
                        w = next((w for w in writes.get((arg.rtp, arg.index), [])
                                  if not lo <= w.value <= hi), None)
                        if w is not None:
                            raise DesignError(
                                "kernel signature", f"rt.rtp_write of '{w.rtp}'[{w.index}] writes "
                                f"{w.value}, but {core.name} passes that slot as argument {i} "
                                f"('{param.name}') of '{k.symbol}', which {what}", loc=w.loc,
                                limit=limit, found=str(w.value),
                                related=[(f"{core.name} passes it to '{k.symbol}'", call.loc)],
                                fix=f"write {want}")
                elif isinstance(arg, LocalArg):
                    raise DesignError(
                        "kernel signature", f"argument {i} ('{param.name}') of '{k.symbol}' is a "
                        f"scalar {param.dtype}, but {core.name} passes local '{arg.local}', a "
                        "buffer", loc=arg.loc, limit=_sig(k),
                        found=f"local '{arg.local}' ({d.local(arg.local).type})",
                        fix="pass a Python int or float (a core cannot read a local's value: "
                        "a kernel taking it as a buffer can), or an rtp slot")
                elif not isinstance(arg, ScalarArg):
                    raise DesignError(
                        "kernel signature", f"argument {i} ('{param.name}') of '{k.symbol}' is a "
                        f"scalar {param.dtype}, but {core.name} passes a buffer", loc=call.loc,
                        limit=_sig(k), fix="pass a Python int or float")
                elif param.dtype.startswith(("i", "u")) and not isinstance(arg.value, int):
                    # an integer type takes an integer literal: MLIR's parser refuses a float
                    # literal for an integer constant, and a silent int() would hide the bug
                    raise DesignError(
                        "kernel signature", f"argument {i} ('{param.name}') of '{k.symbol}' is "
                        f"{param.dtype}, but {core.name} passes {arg.value!r}", loc=call.loc,
                        limit=_sig(k), found=repr(arg.value),
                        fix="pass an int")
                else:
                    lo, hi = _scalar_range(param.dtype)
                    if not lo <= arg.value <= hi:  # False for NaN too
                        raise DesignError(
                            "kernel signature", f"argument {i} ('{param.name}') of '{k.symbol}' "
                            f"is {param.dtype}, but {core.name} passes {arg.value!r}",
                            loc=call.loc,
                            limit=f"{param.dtype} values from {_bound(lo)} to {_bound(hi)}",
                            found=repr(arg.value),
                            fix=f"pass a value {param.dtype} can hold, or declare the scalar "
                                "with a wider type")
                    rule = _value_rule(param)
                    if rule and not rule[0] <= arg.value <= rule[1]:
                        lo, hi, what, limit, want = rule
                        raise DesignError(
                            "kernel signature", f"argument {i} ('{param.name}') of '{k.symbol}' "
                            f"{what}, but {core.name} passes {arg.value!r}", loc=call.loc,
                            limit=limit, found=repr(arg.value), fix=f"pass {want}")


def _check_local_arg(d: Design, core: str, loc: Loc, i: int, param: KernelArg, arg: LocalArg,
                     sig: str, symbol: str) -> None:
    """A local passed to buffer parameter ``param``: its type must be the parameter's, shape
    and all (mlir-aie's func.call takes only the declared memref type)."""
    t = d.local(arg.local).type
    want = param.type
    assert want is not None
    if (t.dtype, tuple(t.shape)) == (want.dtype, tuple(want.shape)):
        return
    same = t.dtype == want.dtype and t.numel == want.numel
    raise DesignError(
        "kernel signature", f"argument {i} ('{param.name}') of '{symbol}' expects {want}, but "
        f"{core} passes local '{arg.local}' ({t})" + (
            f": the same {t.numel} elements in another shape, and func.call takes only the "
            "declared memref type" if same else ""), loc=loc, limit=sig, found=str(t),
        related=[(f"local '{arg.local}' is declared", d.local(arg.local).loc)],
        fix=f"declare the local as Tensor[{', '.join(map(str, want.shape))}, {want.dtype}]"
            + (" (the same bytes)" if same else "") + ", or pass it to a kernel of its type")


def _value_rule(param: KernelArg) -> tuple[float, float, str, str, str] | None:
    """What a scalar's C++ makes of its value beyond its dtype's range, when it does: (lowest,
    highest, what the argument is, the limit, the values to pass). None: any value of the
    dtype is taken as it is."""
    if param.equals is not None:
        n = param.equals
        return (n, n, f"must be {n}", f"exactly {n}: the one value the kernel is declared "
                f"right for (equals={n}: its C++ is compiled for it, or its buffers are sized "
                "for it)", f"{n}; for another size, declare the kernel (and its buffers) for "
                "that size")
    if param.narrows_to is not None:
        narrow = param.narrows_to
        lo, hi = _scalar_range(narrow)
        lost = ("would become infinity" if dtype(narrow).is_float else
                "would keep only its low bits")
        return (lo, hi, f"is {param.dtype} narrowed to {narrow} by the kernel's C++",
                f"{narrow} values from {_bound(lo)} to {_bound(hi)}: the C++ converts the "
                f"{param.dtype} to {narrow}, and a value outside {lost}",
                f"a value {narrow} can hold")
    return None


def _scalar_range(dt: str) -> tuple[float, float]:
    """Smallest and largest value of a scalar kernel argument of dtype ``dt`` (finite).

    Integers: the dtype's own range (MLIR's parser would also take a signless bit pattern such
    as ``200 : i8``, but the kernel would then read -56). Floats: the largest finite value;
    beyond it the constant becomes infinity.
    """
    import numpy as np

    info = dtype(dt)
    if info.is_float:
        import ml_dtypes  # numpy's finfo does not know bfloat16

        top = float(ml_dtypes.finfo(info.numpy).max)
        return -top, top
    ii = np.iinfo(info.numpy)
    return int(ii.min), int(ii.max)


def _bound(x: float) -> str:
    """An end of a scalar range: integers exactly (2147483647, not 2.14748e+09), floats short."""
    return str(x) if isinstance(x, int) else f"{x:g}"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _sig(k: object) -> str:
    args = ", ".join(f"{a.name}: {a.type if a.type else a.dtype}" for a in k.args)  # type: ignore[attr-defined]
    return f"{k.symbol}({args})"  # type: ignore[attr-defined]


def check_balance(d: Design) -> None:
    """Per run, every consumer of a fifo takes exactly what its producer puts in.

    Counts are in elements of each fifo; a runtime fill or drain counts the bytes its pattern
    moves (the DMA moves bytes: a host tensor may be typed differently from the fifo), in whole
    fifo elements. A mismatch hangs on the NPU (a consumer waits for data that never comes, or a
    producer for space that never frees).
    """
    produced: dict[str, Fraction] = {}
    taken: dict[str, dict[str, Fraction]] = {f.name: {} for f in d.fifos}
    retyped: dict[str, str] = {}  # fifo -> its first transfer from or to another element type
    for core in d.cores:
        for (name, port), n in released(core).items():
            if port == "produce":
                produced[name] = Fraction(n)
            else:
                taken[name][core.name] = Fraction(n)
    for t in d.runtime:
        if t.op in ("fill", "drain"):
            f = d.fifo(t.fifo)
            host = d.tensor(t.tensor).type
            moved = t.pattern.numel * host.dt.itemsize
            runs = Fraction(moved, f.elem.nbytes)
            if runs.denominator != 1:
                fix = "move whole fifo elements per transfer"
                if host.dtype == f.elem.dtype:
                    found = f"{t.pattern.numel} / {f.elem.numel} = {float(runs):g}"
                    what = (f"{t.pattern.numel} elements, not a whole number of its "
                            f"{f.elem.numel}-element buffers")
                else:
                    found = f"{moved} B / {f.elem.nbytes} B = {float(runs):g}"
                    what = (f"{moved} bytes ({t.pattern.numel} x {host.dtype}), not a whole "
                            f"number of its {f.elem.nbytes}-byte buffers ({f.elem})")
                    fix += " (the DMA moves bytes: count them in the fifo's element type)"
                raise DesignError("fill/drain size", f"rt.{t.op} of '{f.name}' moves {what}",
                                  loc=t.loc, found=found, fix=fix)
            # a tensor typed other than its fifo changes the count only if the sizes differ
            if host.dt.itemsize != f.elem.dt.itemsize and f.name not in retyped:
                retyped[f.name] = (f"rt.{t.op} of '{t.tensor}' ({host}) moves {moved} bytes, "
                                   f"{_n(runs)} element(s) of {f.elem}: is {host.dtype} the "
                                   "tensor's type you meant?")
            book = produced if t.op == "fill" else taken[f.name]
            key = f.name if t.op == "fill" else "the runtime (rt.drain)"
            if t.op == "fill":
                produced[key] = produced.get(key, Fraction(0)) + runs
            else:
                book[key] = book.get(key, Fraction(0)) + runs
    by_name = {f.name: f for f in d.fifos}
    links = {n: link for link in d.links for n in link.dsts}

    def count(name: str) -> Fraction:
        if name in produced:
            return produced[name]
        link = links.get(name)
        if link is None:
            return Fraction(0)
        if link.kind == "join":  # one joined element takes one element of every part
            return min((count(s) for s in link.srcs), default=Fraction(0))
        if link.kind == "split":  # every part gets one element per parent element
            return count(link.srcs[0])
        src = link.srcs[0]  # a forward may regroup: count in elements of the new size
        return count(src) * by_name[src].elem.numel / by_name[name].elem.numel

    for link in d.links:
        if link.kind == "join":
            counts = {s: count(s) for s in link.srcs}
            if len(set(counts.values())) > 1:
                raise DesignError(
                    "balance", f"join into '{link.dsts[0]}' gets different counts from its "
                    "parts per run", loc=link.loc,
                    found=", ".join(f"{s}: {_n(c)}" for s, c in counts.items()),
                    fix="make every core of a join produce the same number of elements")
    for f in d.fifos:
        made = count(f.name)
        for c in f.consumers:
            if c.is_link_end:
                continue
            who = c.core if c.kind == "core" and c.core else "the runtime (rt.drain)"
            got = taken[f.name].get(who, Fraction(0))
            cores = [e for e in f.consumers if e.kind == "core"]
            if got != made:
                shared_out = len(cores) > 1 and got * len(cores) == made
                src = f.producer
                maker = (f"{src.core} makes" if src.kind == "core" else
                         "the runtime fills" if src.kind == "shim" else "the memtile forwards"
                         if src.kind == "memtile" else f"the core tile {src.tile} forwards")
                raise DesignError(
                    "balance", f"fifo '{f.name}': {maker} {_n(made)} element(s) per run, but "
                    f"{who} takes {_n(got)}", loc=c.loc,
                    limit=f"every consumer takes exactly {_n(made)}", found=_n(got),
                    related=[("produced here", src.loc)],
                    fix="make loop counts and fill/drain sizes agree (each element "
                    f"{f.elem}); a mismatch hangs on the NPU" + (
                        f". '{f.name}' has {len(cores)} consuming cores, and a fifo broadcasts: "
                        "each receives every element; to give each core its own, use a fifo "
                        "per core (channel(..., shape=[n]) indexed by the core) or split one at "
                        "a memtile" if shared_out else "")
                    + (f". {retyped[f.name]}" if f.name in retyped else "")
                    + ("" if shared_out else _runs_once(d, who, made, got)))


def _runs_once(d: Design, who: str, made: Fraction, got: Fraction) -> str:
    """A hint for a core taking a whole fraction of what it is sent with no loop at all: the
    body of an IRON Worker, ported as it is, which IRON repeats forever and aiedsl runs once."""
    core = next((c for c in d.cores if c.name == who), None)
    if core is None or not got or made <= got or (made / got).denominator != 1 or \
            any(isinstance(op, Loop) for op, _ in walk(core.body)):
        return ""
    return (f". {who}'s function has no loop: it is the work of one run (an IRON Worker's body "
            f"repeats forever; aiedsl's runs once per run): wrap it in "
            f"`for _ in loop({_n(made / got)}):`")


def _n(x: Fraction) -> str:
    return str(x.numerator) if x.denominator == 1 else f"{float(x):.4g}"
