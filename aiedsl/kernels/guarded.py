"""A kernel's C++ run where what it does wrong shows: each buffer between guard bytes (a write
outside it, or to an input, is found after the call) and the call in a child process (a crash
or a hang ends the child, not the command): forked from this process when it runs one thread,
else by the kernel workers' server (:mod:`aiedsl.kernels.worker_server`)."""

from __future__ import annotations

import os
import signal
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from aiedsl.ir.kernel import Kernel
from aiedsl.kernels.faults import (
    GUARD, HANG_FIX, KernelFault, Stray, guard_fill, guard_strays, hang_text, input_write_text,
    mode_leak_text, signal_name,
)
from aiedsl.kernels.host_load import RESET_MODES


def guarded_run(k: Kernel, run: Callable[..., None], args: list[Any],
                fill: int | tuple[int, ...]) -> tuple[list[Any], list[str], list[Stray]]:
    """``run`` (kernel ``k``'s C++) on copies of ``args``, each buffer between guard bytes of
    its own filling (:data:`GUARD`, or the buffer's size when larger), ``fill`` plus 0x11 per
    buffer before it (so a byte copied from one buffer's guard into another's shows), or, for
    a tuple, each buffer's own ``fill`` plus that: (the arguments after the call, what it did
    wrong in words (outside its buffers, to its inputs, against an AIE API rule), and, of that,
    its writes outside its buffers)."""
    run_args: list[Any] = []
    frames: list[tuple[np.ndarray, int, int, int] | None] = []
    for i, v in enumerate(args):
        if isinstance(v, np.ndarray) and i < len(k.args) and k.args[i].kind == "buffer":
            index = sum(f is not None for f in frames)
            own = guard_fill(fill if isinstance(fill, int) else fill[index], index)
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
    modes = list(RESET_MODES)  # the core's, as the call finds them and leaves them
    try:
        run(*run_args, modes=modes)
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
    if tuple(modes) != RESET_MODES:  # the next kernel on the core would run under them
        faults.append(mode_leak_text(RESET_MODES, (modes[0], modes[1])))
    return [np.array(v, copy=True) if isinstance(v, np.ndarray) else v
            for v in run_args], faults, strays


@dataclass
class GuardedCall:
    """:func:`guarded_run` of kernel ``kernel``'s host build ``fn`` (the callable of
    :func:`~aiedsl.kernels.host.native` or :func:`~aiedsl.kernels.host.load_native`) on
    ``args``, its guard bytes filled from ``fill``: a callable for :func:`in_child` that either
    child can run. A child forked from here calls ``fn`` itself; one forked by the kernel
    workers' server gets it pickled, ``fn`` as its host build (its ``build``), which it loads.
    With ``counted``, it returns (the operation counts of the call, what it did wrong, its
    writes outside its buffers, the bytes of its output buffers the call changed), what a
    profile takes, instead of :func:`guarded_run`'s answer."""

    kernel: Kernel
    fn: Callable[..., None]
    args: list[Any]
    fill: int | tuple[int, ...]
    """The guards' filling: of the first buffer, or of each (see :func:`guarded_run`)."""
    counted: bool = False

    def __call__(self) -> Any:
        if not self.counted:
            return guarded_run(self.kernel, self.fn, self.args, self.fill)
        counts: Callable[[bool], list[int]] = getattr(self.fn, "counts")
        counts(True)
        after, faults, strays = guarded_run(self.kernel, self.fn, self.args, self.fill)
        # what the call wrote, counted or not: beside the bytes its vector stores moved, what
        # scalar code wrote, in whole elements (one written with the value it held is not seen)
        changed = sum(_changed_bytes(a, b) for p, a, b in zip(self.kernel.args, after, self.args)
                      if p.kind == "buffer" and p.access != "in" and isinstance(a, np.ndarray))
        return counts(True), faults, strays, changed

    def __reduce__(self) -> tuple[Any, ...]:
        from aiedsl.kernels.worker_client import host_build

        library, arch = host_build(self.kernel, self.fn)
        return _loaded, (self.kernel, library, arch, self.args, self.fill, self.counted,
                         getattr(self.fn, "kt", None))


def _changed_bytes(after: np.ndarray, before: np.ndarray) -> int:
    """The bytes of the elements of ``after`` that differ, bit for bit, from ``before``'s."""
    return int(np.count_nonzero(differs(after, before))) * after.dtype.itemsize


def differs(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Where ``a``'s elements differ from ``b``'s (of its dtype and size), bit for bit: a NaN
    equal to itself, -0.0 not to 0.0."""
    size = a.dtype.itemsize
    x = np.frombuffer(np.ascontiguousarray(a).tobytes(), np.uint8).reshape(-1, size)
    y = np.frombuffer(np.ascontiguousarray(b).tobytes(), np.uint8).reshape(-1, size)
    return np.asarray((x != y).any(axis=1)).reshape(a.shape)


def _loaded(kernel: Kernel, library: str, arch: int | None, args: list[Any],
            fill: int | tuple[int, ...], counted: bool, kt: Any = None) -> GuardedCall:
    """A :class:`GuardedCall` unpickled: its host build loaded (``kt`` the C++ it was built
    from, which names the lines of its faults)."""
    from aiedsl.kernels.host import load_native

    return GuardedCall(kernel, load_native(kernel, library, arch, kt=kt), args, fill, counted)


def in_child(fn: Callable[[], Any], limit: float) -> Any:
    """``fn()`` in a child process; a description of the crash (a string) if it dies, or of
    the hang if it does not answer within ``limit`` seconds. The child is killed and reaped on
    every way out that did not see it end (a hang, Ctrl-C, SIGTERM), and dies with this
    process where Linux can arrange it (:func:`~aiedsl.kernels.lifeline.die_with_parent`).

    The child is a fork of this process when it runs one thread (the command line's case:
    :func:`~aiedsl.kernels.worker.alone`). A fork of a process running several threads may
    wait forever (OpenBLAS's pre-fork handler, while another thread multiplies matrices), so
    the child is then forked by the kernel workers' server
    (:mod:`~aiedsl.kernels.worker_server`), and ``fn`` must pickle (a :class:`GuardedCall`
    does; anything else is a TypeError): the answers and the messages are the same. Where
    the server cannot be started (no ``os.posix_spawn``), this process is forked, as before;
    where there is no ``os.fork`` (Windows), ``fn`` runs here."""
    import multiprocessing
    import pickle

    if not hasattr(os, "fork"):  # no fork (Windows): run it here
        return fn()
    from aiedsl.kernels.worker import alone

    if not alone():
        from aiedsl.kernels.worker_client import can_spawn

        if can_spawn():
            return _served(fn, limit)
    import signal

    ctx = multiprocessing.get_context("fork")
    parent, child = ctx.Pipe(duplex=False)
    me = os.getpid()
    stops = {signal.SIGINT, signal.SIGTERM}

    def work() -> None:
        from aiedsl.kernels.lifeline import die_with_parent, quiet_faults

        # Ctrl-C is the parent's to handle (it then kills this child), as in the native
        # simulation's child; and a parent killed outright takes this child with it
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, stops)  # held while the parent forked it
        die_with_parent(me)
        quiet_faults()
        try:
            out: tuple[str, Any] = ("value", fn())
        except Exception as err:  # raised again in the parent, as if run there
            out = ("raised", err)
        child.send_bytes(pickle.dumps(out))

    proc = ctx.Process(target=work)
    # Ctrl-C or SIGTERM while start() forks would raise before this process knew the child's
    # pid: nothing then killed it, and multiprocessing's exit joined it forever (a stopped
    # `kernel test` hung under load). Held until start() returns, then raised below, where
    # the child is known and killed.
    held = signal.pthread_sigmask(signal.SIG_BLOCK, stops)
    try:
        try:
            proc.start()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)
        child.close()
        if not parent.poll(limit):
            return _hung(limit)
        try:
            data = parent.recv_bytes()
        except EOFError:
            proc.join()
            return _died(proc.exitcode or 0)
        proc.join()  # it answered: it ends by itself (flushing what it printed)
    finally:
        # every way out but an answer (a hang, Ctrl-C, SIGTERM raised as Ctrl-C by the command
        # line): a child in a kernel's endless loop runs no Python and would spin forever,
        # orphaned, so it is killed and reaped here
        if proc.pid is not None and proc.exitcode is None:
            proc.kill()
            proc.join()
        child.close()
        parent.close()
    kind, value = pickle.loads(data)
    if kind == "raised":
        raise value
    return value


def _hung(limit: float) -> str:
    """What :func:`in_child` says of a child that did not answer within ``limit`` seconds."""
    return f"{hang_text(limit)} (its process was killed): {HANG_FIX}"


def _died(code: int) -> str:
    """What :func:`in_child` says of a child that ended without answering, with exit code
    ``code`` (minus the signal that killed it, as multiprocessing gives it)."""
    if code == -signal.SIGABRT:  # assert() and abort(): glibc printed which assertion, above
        return (f"crashed ({signal_name(-code)}): it fails an assertion or calls abort(), or "
                "the C library stopped it for a heap or stack it overwrote (writing outside its "
                "buffers); what it printed on standard error says which (an assertion's line "
                "is of the generated file, kernels/<name>.cc of `aiedsl build`; the host build "
                "keeps assert(), the NPU build drops it: -DNDEBUG)")
    if code < 0:
        return (f"crashed ({signal_name(-code)}): it reads or writes outside its buffers, "
                "or fails an assertion")
    return f"stopped with exit status {code}"


def _served(fn: Callable[[], Any], limit: float) -> Any:
    """:func:`in_child`, its child forked by the kernel workers' server, which runs ``fn``
    pickled (:func:`serve_call`) and reaps the child: its wait status comes on a pipe."""
    import pickle
    import select
    from multiprocessing.connection import Connection

    from aiedsl.kernels.worker_client import read_status, start_call

    try:
        task = pickle.dumps(fn, -1)
    except Exception as err:  # a lambda, a callable holding no host build
        raise TypeError("the call cannot run in a child of the kernel workers' server (which "
                        "runs it while this process runs several threads): it does not "
                        f"pickle ({type(err).__name__}: {err})") from None
    result_r, result_w = os.pipe()
    answers = Connection(result_r, writable=False)
    try:
        pid, status_fd = start_call(task, result_w)
    except BaseException:
        answers.close()
        raise
    finally:
        os.close(result_w)
    status: int | None = None
    try:
        poller = select.poll()
        poller.register(result_r, select.POLLIN)
        poller.register(status_fd, select.POLLIN)  # it ended (a copy of the answer pipe's
        ready = {fd for fd, _ in poller.poll(int(limit * 1000))}  # end elsewhere: no EOF)
        if not ready:
            _kill(pid, status_fd)
            status = read_status(status_fd)
            return _hung(limit)
        data = None
        if result_r in ready:
            try:
                data = answers.recv_bytes()
            except EOFError:
                pass
        status = read_status(status_fd)
        if data is None:
            return _died(os.waitstatus_to_exitcode(status))
    finally:
        if status is None:  # interrupted (Ctrl-C): the worker is stopped and reaped
            _kill(pid, status_fd)
            read_status(status_fd)
        answers.close()
        os.close(status_fd)
    kind, value = pickle.loads(data)
    if kind == "raised":
        raise value
    return value


def _kill(pid: int, status_fd: int) -> None:
    """SIGKILL the server's child ``pid`` unless its wait status has come on ``status_fd``
    (it is then reaped, and ``pid`` may be another process's)."""
    import select
    import signal

    if not select.select([status_fd], [], [], 0)[0]:
        os.kill(pid, signal.SIGKILL)


def serve_call(task: bytes, result: int) -> int:
    """In a child the kernel workers' server forked for :func:`in_child`: run the pickled
    callable ``task`` and send what it returned or raised on the pipe end ``result``, as a
    forked child does; the exit status to end with (as multiprocessing's: 0, or a
    ``SystemExit``'s code, or 1 with the traceback on stderr)."""
    import ctypes
    import pickle
    import sys
    import traceback
    from multiprocessing.connection import Connection

    answers = Connection(result, readable=False)
    code = 0
    try:
        try:
            out: tuple[str, Any] = ("value", pickle.loads(task)())
        except Exception as err:  # raised again in the parent, as if run there
            out = ("raised", err)
        answers.send_bytes(pickle.dumps(out))
    except SystemExit as e:
        if e.code is None or isinstance(e.code, int):
            code = e.code or 0
        else:
            sys.stderr.write(f"{e.code}\n")
            code = 1
    except BaseException:  # noqa: BLE001 - the worker ends with a status, as a fork's child
        traceback.print_exc()
        code = 1
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:  # noqa: BLE001 - a closed stream: nothing to flush
                pass
        ctypes.CDLL(None).fflush(None)  # a kernel's printf (os._exit skips stdio's flush)
    return code
