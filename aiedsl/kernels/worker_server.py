"""The kernel workers' fork server: the child of a native simulation, or of a kernel's guarded
run (``aiedsl kernel test``, ``kernel profile``), started while the process that asks runs
several threads, where forking that process is not safe (see
:func:`aiedsl.kernels.worker.alone`).

Forking a process copies one thread; a library's pre-fork handler may wait for another
(OpenBLAS's joins its threads, which another thread's matrix product keeps busy: the fork,
holding the GIL, never returned). So such a process forks nothing: once, it starts this server
as a new Python process (by ``os.posix_spawn``, which copies nothing and runs no pre-fork
handler: :mod:`aiedsl.kernels.worker_client`), which imports aiedsl and waits in :func:`main`.
The server runs one thread, so it forks safely, as the command line does: for each simulation
it forks a worker, which loads the kernels' host builds and serves the calls as a forked child
does (:func:`aiedsl.kernels.staging.serve`, the same pipes). A fork per simulation keeps the cost
of one (a new Python process per simulation took 0.4 s, against 14 ms for a small design's
whole simulation), and each worker runs each core's calls in a copy of the library loaded
afresh for that core, as a forked child does (:mod:`aiedsl.kernels.core_copies`): a kernel's
``static`` variables start at their initial values, not as the last simulation left them.

A request gives the kernels' IR, the shared library each one's callable runs
(:func:`~aiedsl.kernels.worker_client.host_build`: the very file the simulating process
loaded, which :func:`~aiedsl.kernels.host.build_native` made; the worker loads it with
:func:`~aiedsl.kernels.host.load_native`, builds nothing and runs no user Python, and the C++
may have changed on disk since) and the architecture it was built for; and, over the Unix
socket to the server, the worker's ends of its two pipes, a file holding the call arrays that
both map (:func:`~aiedsl.kernels.worker_client.shared_file`: removed from the file system at
once, so nothing is left behind), the simulating process's stdout and stderr as they are now (a
kernel's ``printf`` shows there), and the write end of a pipe on which the server puts the
worker's wait status when it ends (the worker is the server's child: only the server can reap
it); the request names the simulating process's working directory, where the worker works (a
fault names the kernel's file relative to it). The server answers with the worker's pid.

The other request runs one call, :func:`aiedsl.kernels.guarded.in_child`'s: a pickled callable
(a :class:`~aiedsl.kernels.guarded.GuardedCall`: the kernel's IR, its host build, the
arguments and the guard bytes' filling), with the write end of the pipe the worker answers on,
stdout, stderr and the status pipe. The worker loads the build, runs the call once between
guard bytes, sends what it returned or raised, and ends
(:func:`~aiedsl.kernels.guarded.serve_call`); a crash or a hang is told from its wait status,
as from a forked child's.

The server ends when the simulating process does (its socket's end); one that died is started
again.
"""

from __future__ import annotations

import mmap
import os
import pickle
import signal
import socket
from typing import TYPE_CHECKING, Any

from aiedsl.kernels.worker_client import STATUS, recv, send

if TYPE_CHECKING:
    from aiedsl.ir.kernel import Kernel


def main(argv: list[str]) -> None:
    """The server, on the socket file descriptor ``argv`` names: fork a worker for each
    request until the socket ends, then end."""
    # Ctrl-C is the simulating process's to handle (it then stops its workers): the server
    # and its workers ignore it (as the program that calls this did from its first line)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    status = 0
    try:
        _serve_requests(socket.socket(fileno=int(argv[0])))
    except BaseException:  # noqa: BLE001 - as a worker: a status, no traceback
        status = 70
    finally:
        os._exit(status)


def _serve_requests(sock: socket.socket) -> None:
    """Answer each request on ``sock`` with a forked worker's pid (see the module's
    docstring), and put each worker's wait status on its status pipe when it ends."""
    import select

    import aiedsl.kernels.guarded  # noqa: F401 - imported once here, not by each worker
    import aiedsl.kernels.host  # noqa: F401
    import aiedsl.kernels.worker  # noqa: F401

    sock.settimeout(None)
    # a worker's end wakes the loop: SIGCHLD writes to this pipe (set_wakeup_fd)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    statuses: dict[int, int] = {}  # a live worker's pid: its status pipe's write end
    poller = select.poll()
    poller.register(sock.fileno(), select.POLLIN)
    poller.register(wake_r, select.POLLIN)
    while True:
        ready = {fd for fd, _ in poller.poll()}
        if wake_r in ready:
            os.read(wake_r, 512)
        _reap(statuses)
        if sock.fileno() not in ready:
            continue
        try:
            message, fds = recv(sock)
        except EOFError:  # the simulating process ended: its workers see their pipes end
            return
        server = os.getpid()
        try:
            pid = os.fork()
        except OSError as err:
            for fd in fds:
                os.close(fd)
            send(sock, pickle.dumps(("failed", str(err)), -1))
            continue
        if pid == 0:
            _work(message, fds, [sock.fileno(), wake_r, wake_w, *statuses.values()], server)
        for fd in fds[1:]:  # the worker's; the status pipe is the server's to write
            os.close(fd)
        statuses[pid] = fds[0]
        send(sock, pickle.dumps(("pid", pid), -1))


def _reap(statuses: dict[int, int]) -> None:
    """Each worker that has ended: its wait status put on its status pipe, then closed."""
    for pid in list(statuses):
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            fd = statuses.pop(pid)
            try:
                os.write(fd, STATUS.pack(status))
            except OSError:  # its simulation is gone: no one reads it
                pass
            os.close(fd)


def _work(message: bytes, fds: list[int], others: list[int], server: int) -> None:
    """A worker, just forked: do what the request ``message`` asks (serve a simulation's
    kernel calls, or run one callable), then end (never return). ``fds`` are its status pipe,
    its own descriptors, and the stdout and stderr to use; ``others`` the server's
    descriptors, closed here; ``server`` the server's pid, with which it dies (the server
    ends with the simulating process: a worker in a kernel's endless loop would outlive both)."""
    status = 0
    try:
        from aiedsl.kernels.lifeline import die_with_parent, quiet_faults

        die_with_parent(server)
        quiet_faults()
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        status_w, *own, out, err = fds
        for fd in (*others, status_w):
            os.close(fd)
        os.dup2(out, 1)  # where the simulating process's stdout and stderr are now
        os.dup2(err, 2)
        os.close(out)
        os.close(err)
        kind, body, here = pickle.loads(message)
        if here is not None:
            # and its working directory now (not the server's, the asker's when it started):
            # a kernel's file is named relative to it, as a child forked from the asker names it
            try:
                os.chdir(here)
            except OSError:  # removed since: where the server is
                pass
        if kind == "kernels":
            _serve_kernels(body, own)
        else:
            from aiedsl.kernels.guarded import serve_call
            status = serve_call(body, own[0])
    except BaseException:  # noqa: BLE001 - nothing may return into the server's loop
        status = 70
    finally:
        os._exit(status)


def _serve_kernels(body: tuple[list[tuple[Kernel, str, int | None, Any]], int],
                   fds: list[int]) -> None:
    """Load the kernels' host builds ``body`` gives (with the size of the shared file), say
    so, and serve their calls until the simulating process says stop; ``fds`` are the pipes'
    ends and the shared file."""
    import traceback
    from multiprocessing.connection import Connection

    from aiedsl.kernels.host import load_native
    from aiedsl.kernels.staging import layout, serve, views
    from aiedsl.kernels.worker import READY

    requests_fd, replies_fd, memory_fd = fds
    builds, size = body
    memory = mmap.mmap(memory_fd, size)
    os.close(memory_fd)
    replies = Connection(replies_fd, readable=False)
    slots, _ = layout([k for k, *_ in builds])
    try:
        fns = [load_native(k, library, arch, kt=kt) for k, library, arch, kt in builds]
    except Exception:
        replies.send_bytes(pickle.dumps(("failed", traceback.format_exc()), -1))
        raise
    replies.send_bytes(pickle.dumps(READY, -1))
    serve(memory, slots, views(memory, slots), [(k, fn) for (k, *_), fn in zip(builds, fns)],
          Connection(requests_fd, writable=False), replies)
