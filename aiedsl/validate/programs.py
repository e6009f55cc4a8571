"""The checks of :func:`~aiedsl.validate.validate` on a design IR's programs: each core's
(its acquires' result names, its ops, its kernel calls' arguments) and the runtime sequence's.

An op names a fifo, a kernel, a barrier, an rtp or an acquire's result and gives counts and
indices; the simulator trusts them, so each is held here to what the design declares and to
the ranges the front end keeps (a loop runs its body once or more, a lock counts to its
largest value).
"""
from __future__ import annotations

from typing import Any

from aiedsl.ir.core_ops import (
    MAX_LOOP_COUNT, Acquire, BarrierWait, BufferArg, Call, IndexArg, LocalArg, Loop, Op, Release,
    RtpArg,
)
from aiedsl.ir.runtime import RtpWrite, SetBarrier, Transfer, Wait
from aiedsl.validate.fields import _REBUILD, Validator


def check_results(v: Validator, path: str, ops: tuple[Op, ...], seen: dict[str, Acquire]
                  ) -> dict[str, Acquire]:
    """The acquires of a core's program (``path``: its ops) by result name, each name
    once: a kernel call's buffer names its acquire by it."""
    for i, op in enumerate(ops):
        if isinstance(op, Loop):
            check_results(v, f"{path}[{i}].body", op.body, seen)
        elif isinstance(op, Acquire):
            from aiedsl.lang.names import check_name

            v.front(f"{path}[{i}].result", op.loc, check_name, op.result, "acquire result",
                    None)
            if op.result in seen:
                v.fail(f"{path}[{i}].result", f"'{op.result}' names another acquire's "
                       "result in the core's program too", op.result,
                       f"one acquire per result name in a core's program; {_REBUILD}", op.loc)
            seen[op.result] = op
    return seen


def check_ops(v: Validator, path: str, ops: tuple[Op, ...], results: dict[str, Acquire],
              loops: int = 0) -> None:
    """The ops of a core's program (``path``: its ops), loops' bodies too: their counts,
    and the fifos, kernels and barriers they name; ``results``: its acquires by result name
    (:func:`check_results`); ``loops``: how many loops are around ``ops``."""
    d = v.d
    fifos = [f.name for f in d.fifos]
    for i, op in enumerate(ops):
        at = f"{path}[{i}]"
        if isinstance(op, Loop):
            if not 1 <= op.count <= MAX_LOOP_COUNT:
                v.fail(f"{at}.count", f"is {op.count}", op.count,
                       "give a loop 1 iteration or more (loop() refuses fewer: the "
                       "simulator would run its body once, the scf.for no times)",
                       op.loc, limit=f"1 to {MAX_LOOP_COUNT}")
            check_ops(v, f"{at}.body", op.body, results, loops + 1)
        elif isinstance(op, (Acquire, Release)):
            v.refers(f"{at}.fifo", op.fifo, "fifo", fifos, op.loc)
            # a lock counts to its largest value: no end holds more elements
            v.within(f"{at}.count", op.count, 1, v.target.max_lock_value, op.loc,
                     "a lock's value")
        elif isinstance(op, Call):
            v.refers(f"{at}.kernel", op.kernel, "kernel", [k.symbol for k in d.kernels], op.loc)
            for j, a in enumerate(op.args):
                _check_argument(v, f"{at}.args[{j}]", a, results, op, loops)
        elif isinstance(op, BarrierWait):
            v.refers(f"{at}.barrier", op.barrier, "barrier", [b.name for b in d.barriers],
                     op.loc)
            # as wait_for_value (lang/rtp.py): 1 to the largest lock value
            v.within(f"{at}.value", op.value, 1, v.target.max_lock_value, op.loc,
                     "a lock's value")


def _check_argument(v: Validator, at: str, a: Any, results: dict[str, Acquire], call: Call,
                    loops: int) -> None:
    """Argument ``a`` (field ``at``) of kernel call ``call``, inside ``loops`` loops: the
    acquire, rtp, local or loop it names, and its index into what it names."""
    d = v.d
    if isinstance(a, BufferArg):
        v.refers(f"{at}.value", a.value, "acquire result", list(results), call.loc)
        n = results[a.value].count
        v.index(f"{at}.index", a.index, n, f"the {n} element(s) acquired", call.loc)
    elif isinstance(a, RtpArg):
        v.refers(f"{at}.rtp", a.rtp, "rtp", [r.name for r in d.rtps], call.loc)
        n = d.rtp(a.rtp).type.numel
        v.index(f"{at}.index", a.index, n, f"the rtp's {n} slot(s)", call.loc)
    elif isinstance(a, LocalArg):
        v.refers(f"{at}.local", a.local, "local", [b.name for b in d.locals], call.loc)
    elif isinstance(a, IndexArg):
        if loops == 0:
            v.fail(f"{at}.loop", f"is {a.loop}, but the call is in no loop", a.loop,
                   f"pass a loop's index only inside that loop; {_REBUILD}", call.loc,
                   limit="a loop around the call")
        else:
            v.index(f"{at}.loop", a.loop, loops, f"the {loops} loop(s) around the call",
                    call.loc)


def check_runtime(v: Validator) -> None:
    """The runtime sequence's ops: the tensors, fifos, rtps and barriers they name, an rtp
    write's slot and a barrier's value."""
    d = v.d
    fifos = [f.name for f in d.fifos]
    for i, op in enumerate(d.runtime):
        at = f"runtime[{i}]"
        if isinstance(op, Transfer):
            v.refers(f"{at}.tensor", op.tensor, "tensor", [t.name for t in d.tensors], op.loc)
            # its pattern is the DMA check's: the front end makes any (a negative offset,
            # a size 0), which [dma pattern] refuses in the design's terms
            v.refers(f"{at}.fifo", op.fifo, "fifo", fifos, op.loc)
        elif isinstance(op, Wait):
            v.refers(f"{at}.fifo", op.fifo, "fifo", fifos, op.loc)
        elif isinstance(op, RtpWrite):
            v.refers(f"{at}.rtp", op.rtp, "rtp", [r.name for r in d.rtps], op.loc)
            n = d.rtp(op.rtp).type.numel
            v.index(f"{at}.index", op.index, n, f"the rtp's {n} slot(s)", op.loc)
        elif isinstance(op, SetBarrier):
            v.refers(f"{at}.barrier", op.barrier, "barrier", [b.name for b in d.barriers],
                     op.loc)
            # as rt.set_barrier (lang/runtime.py): 0 to the largest lock value
            v.within(f"{at}.value", op.value, 0, v.target.max_lock_value, op.loc,
                     "a lock's value")
