"""Where a native kernel call's arrays are staged in memory shared with the child process that
runs it, and the child's side of the calls (:mod:`aiedsl.kernels.worker` is the simulator's):
each array between guard bytes of a known filling, the call run on the staged copies, and what
it wrote outside them or into an "in" buffer found by comparing.

A forked child (:class:`aiedsl.kernels.worker.KernelWorker`) and one the kernel workers' server
forks (:mod:`aiedsl.kernels.worker_server`) run the same :func:`serve`.
"""

from __future__ import annotations

import mmap
import os
import pickle
import signal
import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from aiedsl.dtypes import dtype as lookup_dtype
from aiedsl.ir.kernel import Kernel
from aiedsl.kernels.faults import FILLS, GUARD, guard_faults, guard_fill

FILL = FILLS[0]
"""The guard bytes' value around a kernel's first array (:func:`~aiedsl.kernels.faults.guard_fill`
gives the others), as ``aiedsl kernel test``'s first filling."""
ALIGN = 64
"""Each staged array starts on a 64-byte boundary of the shared memory (the guard after the one
before it padded to one). A host-side choice, not the core's alignment
(:attr:`~aiedsl.targets.TargetModel.core_buffer_align`, 32 bytes): the host header measures a
vector access's alignment from the start of the buffer it is in, whatever the buffer's host
address (``check_align`` and ``floor_to`` in ``host_core.hpp``), so ``kernel test``'s numpy
arrays, at any address, are judged alike. The host needs only its own types' alignment, an
element's (8 bytes at most: the header's vectors are arrays of elements); 64, a cache line and
a 512-bit vector, is more than that and keeps every array's staging the same."""
CHILD_SPIN = 0.002
"""Seconds the child polls for the next call after answering one (see
:data:`aiedsl.kernels.worker.PARENT_SPIN`)."""
STOP = b""
"""The message that stops the child (no call pickles to nothing)."""


@dataclass(frozen=True)
class Slot:
    """Where one array argument of a kernel is staged in the shared memory."""

    position: int
    """Its index in the call's arguments."""
    name: str
    offset: int
    """Of its first byte; :data:`GUARD` guard bytes come before it."""
    nbytes: int
    end: int
    """Of the guard bytes after it (padding to the next 64-byte boundary, then :data:`GUARD`)."""
    dtype: np.dtype
    shape: tuple[int, ...]
    contiguous: bool
    """The C++ reads it through a pointer: a non-contiguous array is refused (as in-process)."""
    fill: int = FILL
    """Its guard bytes' value: each array of a kernel has its own, so a byte copied from one
    array's guard into another's shows."""
    input: bool = False
    """A buffer declared "in": compared after the call instead of copied back."""


def slots(k: Kernel, start: int) -> list[Slot]:
    """The staging of kernel ``k``'s arrays from byte ``start``: its buffers in argument order,
    then its cascade input and output (the arrays the simulator appends to a cascade call)."""
    arrays = [(i, a.name, a.type, True, a.access == "in") for i, a in enumerate(k.args)
              if a.kind == "buffer"]
    extra = len(k.args)
    for name, t in (("cascade_in", k.cascade_in), ("cascade_out", k.cascade_out)):
        if t is not None:
            arrays.append((extra, name, t, False, False))
            extra += 1
    out: list[Slot] = []
    at = start
    for position, name, t, contiguous, read_only in arrays:
        assert t is not None, "a buffer argument has a type"
        dt = np.dtype(lookup_dtype(t.dtype).numpy)
        nbytes = t.nbytes
        offset = at + GUARD
        end = offset + -(-nbytes // ALIGN) * ALIGN + GUARD
        out.append(Slot(position, name, offset, nbytes, end, dt, tuple(t.shape), contiguous,
                         guard_fill(FILL, len(out)), read_only))
        at = end
    return out


def layout(kernels: Sequence[Kernel]) -> tuple[list[list[Slot]], int]:
    """Where each of ``kernels``' arrays is staged (:func:`slots`, one kernel after the
    other), and the bytes the staging takes (at least 1: a mapping has a size)."""
    out: list[list[Slot]] = []
    at = 0
    for k in kernels:
        out.append(slots(k, at))
        at = out[-1][-1].end if out[-1] else at
    return out, max(at, 1)


def views(memory: mmap.mmap, slots: list[list[Slot]]) -> list[list[np.ndarray]]:
    """The staged arrays in ``memory``, per kernel, as ``slots`` place them."""
    raw = np.frombuffer(memory, np.uint8)
    return [[raw[s.offset:s.offset + s.nbytes].view(s.dtype).reshape(s.shape) for s in kernel]
            for kernel in slots]


def serve(memory: mmap.mmap, slots: list[list[Slot]], views: list[list[np.ndarray]],
          kernels: Sequence[tuple[Kernel, Callable[..., None]]], requests: Any,
          replies: Any) -> None:
    """The child (forked from here or by the server): run each requested call of
    ``kernels`` (each with its callable, their arrays staged in ``memory`` at ``slots``, seen
    as ``views``) in the calling core's own copy of its library
    (:class:`~aiedsl.kernels.core_copies.CoreCopies`), answer with what it raised or what it
    wrote outside its buffers, until the parent says :data:`STOP` or closes the pipe
    ``requests``."""
    import ctypes

    from aiedsl.kernels.core_copies import CoreCopies

    fns = CoreCopies(kernels)  # loaded here, in the child: the parent's stay as they are
    # Ctrl-C is the parent's to handle (it then stops the child); a child killed by it
    # would look like a kernel's crash
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    requested = waiter(requests.fileno(), CHILD_SPIN)
    flush = ctypes.CDLL(None).fflush  # a kernel's printf shows as in-process (os._exit
    flush.argtypes = [ctypes.c_void_p]  # skips stdio's flush at the end)
    while True:
        try:
            requested()
            message = requests.recv_bytes()
        except EOFError:
            return
        if message == STOP:
            return
        index, scalars, aliases, modes, core = pickle.loads(message)
        fn = fns(core, index)
        staged = views[index]
        args: list[Any] = [None] * (len(slots[index]) + len(scalars))
        for j, (s, v) in enumerate(zip(slots[index], staged)):
            args[s.position] = staged[aliases[j]] if j in aliases else v
        for i, value in scalars:
            args[i] = value
        try:
            if modes is None:
                fn(*args)
            else:  # the core's modes, in and out
                fn(*args, modes=modes)
            reply: tuple[str, Any, Any] = ("done", strays(memory, slots[index]), modes)
        except Exception as err:  # raised again in the parent, as if run there
            reply = ("raised", err, modes)
        flush(None)
        try:
            data = pickle.dumps(reply, -1)
        except Exception:  # an exception that does not pickle: its text
            data = pickle.dumps(("raised", RuntimeError(f"{type(reply[1]).__name__}: "
                                                        f"{reply[1]}"), modes), -1)
        replies.send_bytes(data)


def strays(mem: mmap.mmap, slots: list[Slot]) -> list[tuple[str, str]]:
    """What the call wrote in the guard bytes around its arrays (staged in ``mem`` at
    ``slots``; put back after): per side of a buffer, what it wrote and where."""
    out: list[tuple[str, str]] = []
    for s in slots:
        guard = bytes([s.fill]) * (GUARD + ALIGN)
        lo, hi = s.offset - GUARD, s.offset + s.nbytes
        if mem[lo:s.offset] == guard[:GUARD] and mem[hi:s.end] == guard[:s.end - hi]:
            continue
        raw = np.frombuffer(mem[lo:s.end], np.uint8)
        changed = np.flatnonzero(raw != s.fill) - GUARD  # from the buffer's first byte
        sides = [c for c in (changed[changed < 0], changed[changed >= s.nbytes]) if c.size]
        for fault, side in zip(guard_faults(raw, s.nbytes, s.fill, s.name), sides):
            first, last = int(side.min()), int(side.max())
            size = s.dtype.itemsize
            elements = (f"element {first // size}" if first // size == last // size else
                        f"elements {first // size} to {last // size}")
            out.append((fault, f"'{s.name}' holds {s.nbytes} bytes; bytes {first} to {last} "
                               f"from its start changed ({elements})"))
        mem[lo:s.offset] = guard[:GUARD]
        mem[hi:s.end] = guard[:s.end - hi]
    return out


def changed(s: Slot, before: np.ndarray, after: np.ndarray) -> str:
    """Which elements of buffer ``s`` differ between ``before`` and ``after`` the call, as
    :func:`strays` says it of guard bytes."""
    size = s.dtype.itemsize
    bits = np.dtype(f"u{size}")  # bit patterns: a NaN left as it was is unchanged
    changed = np.flatnonzero(np.frombuffer(before.tobytes(), bits) !=
                             np.frombuffer(after.tobytes(), bits))
    first, last = int(changed.min()), int(changed.max())
    elements = f"element {first}" if first == last else f"elements {first} to {last}"
    return (f"'{s.name}' holds {s.nbytes} bytes; bytes {first * size} to {(last + 1) * size - 1} "
            f"from its start changed ({elements})")


def waiter(fd: int, spin: float) -> Callable[..., bool]:
    """A function that returns True once ``fd`` has something to read (or its writer is
    gone), polling it for up to ``spin`` seconds before it sleeps (see
    :data:`aiedsl.kernels.worker.PARENT_SPIN`); False if nothing came within the ``timeout``
    seconds it is given, if any."""
    import select

    poller = select.poll()
    poller.register(fd, select.POLLIN)
    poll = poller.poll
    clock = time.perf_counter
    yield_cpu = getattr(os, "sched_yield", lambda: None)
    if cpus() < 2:
        spin = 0.0  # one CPU: the other process needs it to answer

    def wait(timeout: float | None = None) -> bool:
        if poll(0):
            return True
        start = clock()
        end = start + spin
        while clock() < end:
            yield_cpu()  # a process that wants this CPU gets it
            if poll(0):
                return True
        if timeout is None:
            return bool(poll())
        return bool(poll(max(0, int((timeout - (clock() - start)) * 1000))))

    return wait


def cpus() -> int:
    """How many CPUs this process may run on."""
    affinity = getattr(os, "sched_getaffinity", None)
    return len(affinity(0)) if affinity is not None else (os.cpu_count() or 1)
