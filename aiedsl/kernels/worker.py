"""Host-built kernels run in a child process, so that a kernel's C++ that crashes or writes
past its buffers stops the simulation with an error naming it, instead of killing the
simulator (exit 139, no word) or silently corrupting its memory.

A :class:`KernelWorker` forks once, when a native simulation starts (the libraries are loaded
by then, so the child has them), and serves every kernel call of the run: the parent copies
the call's arrays into memory shared with the child, each buffer between :data:`GUARD` bytes
of a known filling, sends the call's scalars down a pipe, and waits for the answer; the child
runs the C++ on the shared copies, checks the guard bytes, and answers; the parent copies the
arrays back. A child that dies answers nothing: the parent learns by the closed pipe which
call killed it and how (its signal). One fork per run and a pipe round trip and a few small
copies per call keep the cost small (see the README on ``--kernels native``). Where the
arrays are staged, and the child's loop, are :mod:`aiedsl.kernels.staging`'s.

Forking is safe only while the process runs one thread (:func:`alone`: the command line's
case). Else the child is forked by a server process started once for that
(:mod:`aiedsl.kernels.worker_server`), which loads the same host builds and serves the calls
alike, on memory both map: the parent sees the same answers, faults and messages.

What it does not see: a read past a buffer (``aiedsl kernel test`` finds those, by running the
kernel twice with other guard bytes), a store of the guard's own value, or one that lands
beyond the guard bytes without crashing.

Forking needs ``os.fork`` (Linux, macOS): elsewhere :func:`isolated` gives no worker and the
caller runs the kernels in its own process, as before.

Example
-------
>>> with isolated([(kernel_ir, native(kernel_ir, text))]) as worker:     # doctest: +SKIP
...     worker.call(0, [a, b, c])          # kernel 0 on the arrays; raises NativeFault
"""

from __future__ import annotations

import mmap
import os
import pickle
import signal
import sys
import threading
import time
from contextlib import contextmanager
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from aiedsl.errors import DesignError
from aiedsl.files import command
from aiedsl.ir.core_ops import Call
from aiedsl.ir.kernel import Kernel
from aiedsl.ir.loc import Loc
from aiedsl.kernels.faults import (
    GUARD, HANG_FIX, KernelFault, call_limit, hang_text, input_write_text, signal_name,
)
from aiedsl.kernels.staging import STOP, changed, layout, serve, views, waiter

PARENT_SPIN = 0.005
"""Seconds the simulator polls for a call's answer before it sleeps, and
(:data:`~aiedsl.kernels.staging.CHILD_SPIN`) the child for the next call after answering one.
Waking a sleeping process costs 50 to 150 us (measured on a 2-CPU Linux VM), as much as a
64x64x64 matmul's C++; a process that is still polling sees the message at once. Both yield the
CPU while they poll, and neither polls on a single CPU."""
READY = ("ready", None)
"""A served child's first answer: it loaded the kernels (else ``("failed", traceback)``)."""
START_LIMIT = 60.0
"""Seconds a served child may take to load the kernels and say so (milliseconds, but a
loaded machine may take many times that)."""


class NativeFault(Exception):
    """A native call the child could not finish cleanly: it died (``signal`` set, or an exit
    ``status``), did not return within ``timeout`` seconds (and was killed), or it wrote
    outside one of its buffers or into an "in" one (``wrote``: what, per buffer; ``where``:
    which bytes, counted from the buffer's start; ``inputs``: the "in" buffers among them,
    if those are what it wrote)."""

    def __init__(self, *, signal: int | None = None, status: int | None = None,
                 timeout: float | None = None, wrote: Sequence[str] = (),
                 where: Sequence[str] = (), inputs: Sequence[str] = ()) -> None:
        self.signal = signal
        self.status = status
        self.timeout = timeout
        self.inputs = list(inputs)
        self.wrote = list(wrote)
        self.where = list(where)
        super().__init__(self.describe())

    def describe(self) -> str:
        """What happened, as the middle of a sentence about the kernel."""
        if self.signal is not None:
            return f"crashed with {signal_name(self.signal)}"
        if self.status is not None:
            return f"ended its process with exit status {self.status}"
        if self.timeout is not None:
            return hang_text(self.timeout)
        return " and ".join(self.wrote)


def alone() -> bool:
    """This process runs one thread of Python, the one asking: forking it is then safe, as
    the command line does. Another thread may be inside a library that a fork must wait for
    (OpenBLAS's pre-fork handler joins its threads, which another thread's matrix product
    keeps busy: the fork, holding the GIL, then never returned and every thread stopped)."""
    # threading counts the threads it started; the interpreter also knows those
    # _thread.start_new_thread started
    return threading.active_count() == 1 and len(sys._current_frames()) == 1


class KernelWorker:
    """Kernels' host builds, called in a child process (see the module's docstring). Make it
    with :func:`isolated`; :meth:`call` runs one call.

    ``fork``: fork this process for the child (by default when it runs one thread,
    :func:`alone`), or have the server fork it (:mod:`aiedsl.kernels.worker_server`), which
    loads the same host builds: ``kernels`` must then be
    :func:`~aiedsl.kernels.host.native`'s (or :func:`~aiedsl.kernels.host.load_native`'s)
    callables, whose ``build`` says which library the server's child loads."""

    def __init__(self, kernels: Sequence[tuple[Kernel, Callable[..., None]]],
                 fork: bool | None = None) -> None:
        from multiprocessing.connection import Connection

        self.kernels = [k for k, _ in kernels]
        self._fns = [fn for _, fn in kernels]
        self.forked = alone() if fork is None else fork
        """Whether the child is a fork of this process (else of the server)."""
        if not self.forked:  # before anything is made: a callable it cannot load is refused
            import aiedsl.kernels.worker_client as worker_client  # (3 ms: not for a fork)
            builds = [(k, *worker_client.host_build(k, fn), getattr(fn, "kt", None))
                      for k, fn in kernels]
        self._slots, size = layout(self.kernels)
        self._positions = [{s.position for s in slots} for slots in self._slots]
        self._limits = [call_limit(k) for k in self.kernels]
        memory_fd = -1
        if self.forked:  # anonymous and shared: made before the fork, the same pages in both
            self._memory = mmap.mmap(-1, size)
        else:  # a file both map: the server's child is given it open
            self._memory, memory_fd = worker_client.shared_file(size)
        for slots in self._slots:
            for s in slots:
                self._memory[s.offset - GUARD:s.end] = bytes([s.fill]) * (s.end - s.offset + GUARD)
        self._views = views(self._memory, self._slots)
        request_r, request_w = os.pipe()
        reply_r, reply_w = os.pipe()
        self._busy = False
        self.dead = False
        self._started = self.forked
        """The child has said it is ready (a forked one is at once; the server's, once it
        has loaded the libraries: awaited by the first call, not before)."""
        self.status: int | None = None
        """The child's wait status once :meth:`close` reaped it between calls (0: it stopped
        when told)."""
        self._status_fd = -1
        """The server's child: the pipe its wait status comes on (only the server reaps it)."""
        if self.forked:
            self._pid = self._fork(request_r, request_w, reply_r, reply_w)
        else:
            try:
                self._pid, self._status_fd = worker_client.start(builds, size, request_r,
                                                                 reply_w, memory_fd)
            except BaseException:
                for fd in (request_r, request_w, reply_r, reply_w):
                    os.close(fd)
                raise
            finally:
                os.close(memory_fd)  # the child has its own; the mapping stays
        os.close(request_r)  # the child's ends: closed here, so its death ends the pipe
        os.close(reply_w)
        self._to_child = Connection(request_w, readable=False)
        self._from_child = Connection(reply_r, writable=False)
        self._replied = waiter(reply_r, PARENT_SPIN)

    def _fork(self, request_r: int, request_w: int, reply_r: int, reply_w: int) -> int:
        """Fork the child, which serves the calls on the pipes' ends given and never returns
        here; the child's pid, in the parent."""
        from multiprocessing.connection import Connection

        # os.fork, not multiprocessing: a daemonic process (a Pool's worker running a
        # simulation) may not start a multiprocessing child
        parent = os.getpid()
        pid = os.fork()
        if pid == 0:  # the child: serve until the parent closes its end, never return
            status = 0
            try:
                from aiedsl.kernels.lifeline import die_with_parent, quiet_faults

                # a parent killed outright (SIGKILL) closes the pipe, but a child in a
                # kernel's endless loop would not read it: it dies with the parent instead
                die_with_parent(parent)
                quiet_faults()
                os.close(request_w)
                os.close(reply_r)
                serve(self._memory, self._slots, self._views,
                      list(zip(self.kernels, self._fns)),
                      Connection(request_r, writable=False), Connection(reply_w, readable=False))
            except BaseException:  # noqa: BLE001 - nothing may return into the parent's code
                status = 70
            finally:
                os._exit(status)
        return pid

    def _start(self) -> None:
        """Wait for the server's child's word that it loaded the kernels (within
        :data:`START_LIMIT` seconds, not counted in the first call's limit); a child that
        could not is stopped, and why raised as a RuntimeError."""
        self._started = True
        reply: Any = None
        late = False
        try:
            if self._replied(START_LIMIT):
                reply = pickle.loads(self._from_child.recv_bytes())
            else:
                late = True
        except EOFError:  # it died before it said anything
            pass
        if reply == READY:
            return
        self.dead = True
        self._kill()
        status = self._wait()
        what = "the process to run the kernels' host builds"
        if late:
            raise RuntimeError(f"{what} did not load them within {START_LIMIT:g} s (it was "
                               "killed)")
        if reply is None:
            how = (f"signal {signal_name(os.WTERMSIG(status))}" if os.WIFSIGNALED(status) else
                   f"exit status {os.waitstatus_to_exitcode(status)}")
            raise RuntimeError(f"{what} ended before it loaded them ({how})")
        raise RuntimeError(f"{what} could not load them:\n{reply[1]}")

    def _kill(self) -> None:
        """SIGKILL the child (the server's only while its status has not come: then it is
        reaped, and its pid may be another process's)."""
        if self.forked or not _readable(self._status_fd):
            os.kill(self._pid, signal.SIGKILL)

    def _wait(self) -> int:
        """The child's wait status, once it has ended (waiting as long as that takes)."""
        status = self._ended(None)
        assert status is not None, "waited as long as it takes"
        return status

    def _ended(self, timeout: float | None) -> int | None:
        """The child's wait status once it has ended, waiting up to ``timeout`` seconds (None:
        as long as it takes); None if it has not ended by then."""
        if not self.forked:  # the server reaps it and says how it ended
            if timeout is not None and not _readable(self._status_fd, timeout):
                return None
            from aiedsl.kernels.worker_client import read_status
            status = read_status(self._status_fd)
            os.close(self._status_fd)
            self._status_fd = -1
            return status
        if timeout is None:
            return os.waitpid(self._pid, 0)[1]
        delay, waited = 0.0002, 0.0  # a child told to stop ends within a millisecond
        while True:
            pid, status = os.waitpid(self._pid, os.WNOHANG)
            if pid:
                return status
            if waited > timeout:
                return None
            time.sleep(delay)
            waited += delay
            delay = min(delay * 2, 0.05)

    # -- the parent's side ------------------------------------------------------------------

    def call(self, index: int, args: Sequence[Any], modes: list[int] | None = None,
             core: str = "") -> None:
        """Run kernel ``index`` on ``args`` (its arguments, then the cascade arrays it
        declares), as :func:`aiedsl.kernels.host.native`'s callable would, in ``core``'s own
        copy of its library (:mod:`aiedsl.kernels.core_copies`: its ``static`` variables are
        the core's): the arrays hold what the C++ wrote after it, and ``modes`` (the calling
        core's rounding and saturation modes, given to the call) what it left them at. An
        exception the C++ call raised is raised again here; a crash, an exit or a write
        outside a buffer is a :class:`NativeFault`."""
        if self.dead:
            raise RuntimeError("the kernel worker has stopped")
        if not self._started:
            self._start()
        k = self.kernels[index]
        slots = self._slots[index]
        views = self._views[index]
        arrays = []
        for s, v in zip(slots, views):
            arr = np.asarray(args[s.position])
            if s.contiguous and not arr.flags.c_contiguous:
                raise ValueError(f"{k.symbol}: argument {s.name} is not contiguous")
            arrays.append(arr)
        aliases = _aliases(arrays) if len(arrays) > 1 else ()
        for j, (arr, v) in enumerate(zip(arrays, views)):
            if j not in aliases:
                _copy(v, arr)
        positions = self._positions[index]
        scalars = [(i, v) for i, v in enumerate(args) if i not in positions]
        self._busy = True
        try:
            self._to_child.send_bytes(pickle.dumps((index, scalars, aliases, modes, core),
                                                   -1))
            if not self._replied(self._limits[index]):  # a hang: killed, reaped, reported
                self._busy = False
                self.dead = True
                self._kill()
                self._wait()
                raise NativeFault(timeout=self._limits[index])
            reply = self._from_child.recv_bytes()
        except (EOFError, BrokenPipeError):  # the child died in the call (or before it)
            self._busy = False
            self.dead = True
            status = self._wait()
            if os.WIFSIGNALED(status):
                raise NativeFault(signal=os.WTERMSIG(status)) from None
            raise NativeFault(status=os.waitstatus_to_exitcode(status)) from None
        self._busy = False
        kind, value, after = pickle.loads(reply)
        if modes is not None and after is not None:
            modes[:] = after
        if kind == "raised":
            raise value
        shared = set(aliases) | set(aliases.values()) if aliases else ()
        inputs = []
        for j, (s, arr, v) in enumerate(zip(slots, arrays, views)):
            if s.input and j not in shared:  # as kernel test: an "in" buffer stays as it was
                if v.tobytes() != arr.tobytes():  # (a copy and a memcmp: below 1 us for 8 KB)
                    inputs.append(j)
            elif j not in aliases:
                _copy(arr, v)
        if value:
            raise NativeFault(wrote=[w for w, _ in value], where=[at for _, at in value])
        if inputs:
            raise NativeFault(wrote=[input_write_text(slots[j].name) for j in inputs],
                              where=[changed(slots[j], arrays[j], views[j]) for j in inputs],
                              inputs=[slots[j].name for j in inputs])

    def close(self) -> None:
        """Stop the child: at once if it is still in a call (the parent was interrupted) or
        the server's has not been waited for (it has run nothing), else when it reads the end
        of its requests."""
        if self._to_child.closed:
            return
        kill = self._busy or not self._started
        if not kill and not self.dead:
            try:  # said, not only closed: a process forked since (a native simulation in
                # another thread) holds this pipe's end too, so the child would see no end
                self._to_child.send_bytes(STOP)
            except OSError:  # it died between calls: reaped below
                pass
        self._to_child.close()
        self._from_child.close()
        if self.dead:  # reaped when it died
            return
        self.dead = True
        if kill:
            self._kill()
        # a child between calls exits as soon as it reads the stop (or the pipe's end); one
        # that does not within 5 s is killed
        self.status = self._ended(5.0)
        if self.status is None:
            self._kill()
            self.status = self._wait()


def _readable(fd: int, timeout: float = 0.0) -> bool:
    """``fd`` has something to read, or its writer is gone (within ``timeout`` seconds)."""
    import select

    poller = select.poll()
    poller.register(fd, select.POLLIN)
    return bool(poller.poll(int(timeout * 1000)))


def _aliases(arrays: list[np.ndarray]) -> dict[int, int]:
    """Arrays passed twice: {later index: first index} for those with the same memory (the
    C++ then gets one pointer for both, as in-process). Arrays that overlap otherwise are
    staged apart."""
    seen: dict[tuple[int, int], int] = {}
    out: dict[int, int] = {}
    for j, arr in enumerate(arrays):
        key = (arr.__array_interface__["data"][0], arr.nbytes)
        if key in seen:
            out[j] = seen[key]
        else:
            seen[key] = j
    return out


def _copy(dst: np.ndarray, src: np.ndarray) -> None:
    """``src``'s bytes into ``dst`` (same size; the shape or the element type may differ)."""
    if dst.shape == src.shape and dst.dtype == src.dtype:
        dst[...] = src
    else:
        dst.reshape(-1).view(np.uint8)[...] = np.ascontiguousarray(src).reshape(-1).view(np.uint8)


@contextmanager
def isolated(kernels: Sequence[tuple[Kernel, Callable[..., None]]]
             ) -> Iterator[KernelWorker | None]:
    """A :class:`KernelWorker` for ``kernels`` (each with its callable from
    :func:`~aiedsl.kernels.host.native`), stopped on leaving: its child forked from this
    process when it runs one thread (:func:`alone`), else by the workers' server. None where
    there is no ``os.fork`` (Windows), or when other threads run and the server cannot be
    started (no ``os.posix_spawn``, or no ``sys.executable``, as in some embedded
    interpreters): the caller then runs the kernels in its own process, where a crash ends
    it."""
    if not hasattr(os, "fork") or not kernels:
        yield None
        return
    fork = alone()
    if not fork:
        from aiedsl.kernels.worker_client import can_spawn
        if not can_spawn():
            yield None
            return
    worker = KernelWorker(kernels, fork)
    try:
        yield worker
    finally:
        worker.close()


def fault_error(fault: NativeFault | KernelFault, k: Kernel, core: str, number: int,
                call: Call | None, design_file: str) -> DesignError:
    """The design error for ``fault`` in call ``number`` of kernel ``k`` by ``core`` (at
    ``call``'s line), telling to run ``aiedsl kernel test`` on ``design_file`` (or, for a rule
    of the AIE API the C++ broke, how to keep it)."""
    related: list[tuple[str, Loc]] = [] if call is None else [(f"the call ({core})", call.loc)]
    if isinstance(fault, KernelFault):
        return DesignError(
            "native kernel", f"kernel '{k.symbol}' {fault.what} in call {number} of it by "
            f"{core}; the simulation stopped there", loc=k.loc, limit=fault.limit,
            found=fault.found, related=related, fix=fault.fix)
    what = fault.describe()
    abort = fault.signal == signal.SIGABRT  # assert() or abort(): not its buffers
    if fault.signal is not None:
        found = (f"signal {signal_name(fault.signal)} ({signal.strsignal(fault.signal)}) in the "
                 "process running the kernel's C++")
        limit = ("a kernel returns to its caller, and reads and writes only its own buffers "
                 "(an abort is a failed assert(), which the NPU build drops with -DNDEBUG, or "
                 "the C library finding a heap or stack overwritten)" if abort else
                 "a kernel reads and writes only its own buffers")
    elif fault.status is not None:
        found = f"exit status {fault.status}"
        limit = "a kernel returns to its caller"
    elif fault.timeout is not None:
        found = (f"still running after {fault.timeout:g} s; the process running the kernel's "
                 "C++ was killed")
        limit = (f"a kernel call returns within {fault.timeout:g} s on the host (10 s or "
                 "$AIEDSL_KERNEL_TIMEOUT, or 1 us per declared cycle if that is more)")
    elif fault.inputs:
        found = "; ".join(fault.where)
        limit = "a kernel does not write a buffer it declares \"in\" (checked after every call)"
    else:
        found = "; ".join(fault.where)
        limit = (f"a kernel writes only inside its buffers (the {GUARD} bytes before and after "
                 "each are checked after every call)")
    test = command(["aiedsl", "kernel", "test"], design_file)  # pasted as is: quoted
    fix = (f"run `{test}`: it runs each kernel alone between guard bytes and says what it "
           "writes outside its buffers (a read outside them, when it changes the result)")
    if abort:
        fix = (f"see what it printed on standard error (an assertion's line is of the "
               f"generated file, kernels/<name>.cc of `aiedsl build`); `{test}` runs each "
               "kernel alone between guard bytes and says what it writes outside its buffers")
    elif fault.timeout is not None:
        fix = f"{HANG_FIX}; `{test}` runs each kernel alone"
    elif fault.inputs:
        names = " and ".join(f"'{n}'" for n in fault.inputs)
        fix = (f"declare {names} \"inout\" if the kernel updates it in place (\"out\" if it "
               f"only writes it), or make the C++ leave it alone; `{test}` says the same")
    return DesignError(
        "native kernel", f"kernel '{k.symbol}' {what} in call {number} of it by {core}; the "
        "simulation stopped there", loc=k.loc, limit=limit, found=found, related=related,
        fix=fix)
