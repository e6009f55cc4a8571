"""A kernel's C++ run where what it does wrong shows: each buffer between guard bytes (a write
outside it, or to an input, is found after the call) and the call in a forked child (a crash or
a hang ends the child, not the command)."""

from __future__ import annotations

import os
from typing import Any, Callable

import numpy as np

from aiedsl.ir.kernel import Kernel
from aiedsl.kernels.faults import (
    GUARD, HANG_FIX, KernelFault, Stray, guard_fill, guard_strays, hang_text, input_write_text,
    signal_name,
)


def guarded_run(k: Kernel, run: Callable[..., None], args: list[Any],
                fill: int) -> tuple[list[Any], list[str], list[Stray]]:
    """``run`` (kernel ``k``'s C++) on copies of ``args``, each buffer between guard bytes of
    its own filling (:data:`GUARD`, or the buffer's size when larger), ``fill`` plus 0x11 per
    buffer before it (so a byte copied from one buffer's guard into another's shows): (the
    arguments after the call, what it did wrong in words (outside its buffers, to its inputs,
    against an AIE API rule), and, of that, its writes outside its buffers)."""
    run_args: list[Any] = []
    frames: list[tuple[np.ndarray, int, int, int] | None] = []
    for i, v in enumerate(args):
        if isinstance(v, np.ndarray) and i < len(k.args) and k.args[i].kind == "buffer":
            own = guard_fill(fill, sum(f is not None for f in frames))
            # A kernel compiled for twice its buffer (f<2048> on 1024 elements) writes a whole
            # buffer past its end: a guard that size takes it and says so, where a smaller one
            # let it corrupt the heap, and the child died of glibc's abort, saying nothing
            guard = max(GUARD, v.nbytes)
            raw = np.full(guard + v.nbytes + guard, own, np.uint8)
            view = raw[guard:guard + v.nbytes].view(v.dtype).reshape(v.shape)
            view[...] = v
            run_args.append(view)
            frames.append((raw, v.nbytes, own, guard))
        else:
            run_args.append(v.copy() if isinstance(v, np.ndarray) else v)
            frames.append(None)
    faults = []
    strays: list[Stray] = []
    try:
        run(*run_args)
    except KernelFault as fault:  # the C++ ran to its end: its writes are checked too
        faults.append(str(fault))
    for i, frame in enumerate(frames):
        if frame is None:
            continue
        raw, n, own, guard = frame
        a = k.args[i]
        around = guard_strays(raw, n, own, a.name, guard)
        strays += around
        faults += [s.text() for s in around]
        if a.access == "in" and not np.array_equal(run_args[i], args[i], equal_nan=True):
            faults.append(input_write_text(a.name))
    return [np.array(v, copy=True) if isinstance(v, np.ndarray) else v
            for v in run_args], faults, strays


def in_child(fn: Callable[[], Any], limit: float) -> Any:
    """``fn()`` in a forked child; a description of the crash (a string) if it dies, or of
    the hang if it does not answer within ``limit`` seconds (it is then killed and reaped)."""
    import multiprocessing
    import pickle

    if not hasattr(os, "fork"):  # no fork (Windows): run it here
        return fn()
    ctx = multiprocessing.get_context("fork")
    parent, child = ctx.Pipe(duplex=False)

    def work() -> None:
        try:
            out: tuple[str, Any] = ("value", fn())
        except Exception as err:  # raised again in the parent, as if run there
            out = ("raised", err)
        child.send_bytes(pickle.dumps(out))

    proc = ctx.Process(target=work)
    proc.start()
    child.close()
    try:
        if not parent.poll(limit):
            proc.kill()
            proc.join()
            parent.close()
            return f"{hang_text(limit)} (its process was killed): {HANG_FIX}"
        data = parent.recv_bytes()
    except EOFError:
        proc.join()
        code = proc.exitcode or 0
        if code < 0:
            return (f"crashed ({signal_name(-code)}): it reads or writes outside its buffers, "
                    "or fails an assertion")
        return f"stopped with exit status {code}"
    proc.join()
    kind, value = pickle.loads(data)
    if kind == "raised":
        raise value
    return value
