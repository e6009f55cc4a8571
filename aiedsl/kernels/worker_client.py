"""The simulating process's side of the kernel workers' server
(:mod:`aiedsl.kernels.worker_server`, whose docstring says why there is one): start it, once,
and ask it for a worker per simulation, giving what the worker needs (:func:`start`); what
this process's host builds are (:func:`host_build`); the memory both map
(:func:`shared_file`); and the messages between this process and the server.
"""

from __future__ import annotations

import mmap
import os
import pickle
import signal
import socket
import struct
import sys
import tempfile
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

if TYPE_CHECKING:
    from aiedsl.ir.kernel import Kernel

START_LIMIT = 60.0
"""Seconds the server may take to answer a request: the first waits for it to start (to
import aiedsl: 0.3 to 0.5 s on a 2-CPU Linux VM; a loaded machine may take many times that)."""
_HEADER = struct.Struct("!II")
"""A message's head: the bytes that follow, and the file descriptors it carries."""
STATUS = struct.Struct("!i")
"""A worker's wait status, as the server writes it to the worker's status pipe."""


def can_spawn() -> bool:
    """This interpreter can start the server: it knows its own executable and has
    ``os.posix_spawn``, which starts it without running other libraries' pre-fork handlers
    (glibc's and macOS's do not fork: nothing of this process is copied)."""
    return bool(sys.executable) and hasattr(os, "posix_spawn")


def host_build(k: Kernel, fn: Callable[..., None]) -> tuple[str, int | None]:
    """The shared library that ``fn``, :func:`~aiedsl.kernels.host.load_native`'s callable
    for kernel ``k`` (:func:`~aiedsl.kernels.host.native`'s is one), runs, and the
    ``aie_arch`` it was built for (None: none given): its ``build``. A TypeError for another
    callable (a Python function standing for the kernel can run only in a child forked from
    here)."""
    from aiedsl.kernels.host import HostBuild

    build = getattr(fn, "build", None)
    if not isinstance(build, HostBuild):
        raise TypeError(f"kernel '{k.symbol}': {fn!r} is not its host build "
                        "(aiedsl.kernels.host.native's callable), which alone another process "
                        "can load")
    return str(build.path), build.aie_arch


def shared_file(size: int) -> tuple[mmap.mmap, int]:
    """``size`` bytes mapped shared, and an open file descriptor of the file they are in, to
    give the worker: a memory file (Linux), else a file in /dev/shm or the temporary folder,
    removed at once (the open descriptors and the mappings keep it while they last)."""
    if hasattr(os, "memfd_create"):
        fd = os.memfd_create("aiedsl-kernel-calls", os.MFD_CLOEXEC)
    else:
        folder = "/dev/shm" if os.path.isdir("/dev/shm") else None
        fd, path = tempfile.mkstemp(prefix="aiedsl-kernel-calls-", dir=folder)
        os.unlink(path)
    try:
        os.ftruncate(fd, size)
        return mmap.mmap(fd, size), fd
    except BaseException:
        os.close(fd)
        raise


def start(builds: Sequence[tuple[Kernel, str, int | None, Any]], size: int, requests: int,
          replies: int, memory: int) -> tuple[int, int]:
    """Have the server fork a worker for the kernels ``builds`` (each with its library,
    architecture and the :class:`~aiedsl.kernels.text.KernelText` it was built from, or None),
    their arrays staged in the ``size`` bytes of the shared file ``memory``,
    reading calls from the pipe end ``requests`` and answering on ``replies``: its pid and the
    read end of the pipe its wait status will come on. A RuntimeError if the server cannot
    (a new one is started once if it died)."""
    return _start(("kernels", (list(builds), size)), [requests, replies, memory])


def start_call(task: bytes, result: int) -> tuple[int, int]:
    """Have the server fork a worker that runs the pickled callable ``task`` once
    (:func:`aiedsl.kernels.guarded.serve_call`) and sends what it returned or raised on the
    pipe end ``result``: as :func:`start`, its pid and the read end of its status pipe."""
    return _start(("call", task), [result])


def _start(request: tuple[str, Any], fds: list[int]) -> tuple[int, int]:
    """Send ``request`` (its kind and what the worker needs, and this process's working
    directory, which it works in) with the worker's file descriptors ``fds`` (and this
    process's stdout and stderr, which it writes to), after the write end of a new status
    pipe: the worker's pid and that pipe's read end."""
    try:
        here: str | None = os.getcwd()
    except OSError:  # removed: the worker stays where the server is
        here = None
    message = pickle.dumps((*request, here), -1)
    status_r, status_w = os.pipe()
    try:
        with _lock:
            reply = _ask(message, [status_w, *fds, 1, 2])
    except BaseException:
        os.close(status_r)
        raise
    finally:
        os.close(status_w)
    kind, value = reply
    if kind != "pid":
        os.close(status_r)
        raise RuntimeError(f"the kernel workers' server could not start one: {value}")
    return value, status_r


class _Server:
    """The running server: its pid and this process's end of its socket (a process forked
    from this one inherits neither: see :func:`_forget`)."""

    def __init__(self) -> None:
        ours, theirs = socket.socketpair()
        try:
            self.pid = _spawn(theirs.fileno())
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        self.sock = ours
        self.sock.settimeout(START_LIMIT)

    def stop(self) -> None:
        """End it (it may be hanging, or dead already) and reap it."""
        self.sock.close()
        try:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        except (ProcessLookupError, ChildProcessError):  # reaped by someone else's waitpid
            pass


_server: _Server | None = None
_lock = threading.Lock()
"""Held while a request is asked and answered (threads share the one server)."""


def _forget() -> None:
    """In a process just forked from this one: the parent's server and lock are not its own
    (the lock may have been held by a thread the fork did not copy)."""
    global _server, _lock
    if _server is not None:
        _server.sock.close()  # this copy only; the parent's is open
    _server = None
    _lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget)


def _ask(message: bytes, fds: list[int]) -> tuple[str, Any]:
    """The server's answer to ``message`` sent with ``fds``, starting it if there is none;
    a server that cannot be reached is stopped and another asked, once."""
    global _server
    for attempt in (1, 2):
        if _server is None:
            _server = _Server()
        try:
            send(_server.sock, message, fds)
            reply: tuple[str, Any] = pickle.loads(recv(_server.sock)[0])
            return reply
        except (OSError, EOFError) as err:  # dead (killed?), or no answer in START_LIMIT
            _server.stop()
            _server = None
            if attempt == 2:
                raise RuntimeError(f"the kernel workers' server did not answer: "
                                   f"{type(err).__name__}: {err or 'its socket closed'}"
                                   ) from None
        except BaseException:  # interrupted (Ctrl-C): the answer, when it comes, would be
            _server.stop()     # taken for the next request's
            _server = None
            raise
    raise AssertionError("unreachable")


def _spawn(fd: int) -> int:
    """Start the server on the socket end ``fd``; its pid. The server gets it as the file
    descriptor after ``fd`` (copied there in the server only), /dev/null for stdin and stdout
    (a reader of this process's output is not kept waiting by the server: each worker gets
    the stdout of its request), and this aiedsl's folder first on its ``sys.path``, so it
    imports the aiedsl this process runs, not one in the current directory."""
    target = max(fd + 1, 3)
    root = str(Path(__file__).resolve().parents[2])
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([root, *filter(None, [env.get("PYTHONPATH")])])
    safe = ["-P"] if sys.version_info >= (3, 11) else []  # the current directory not first
    actions = [(os.POSIX_SPAWN_DUP2, fd, target),
               *[(os.POSIX_SPAWN_OPEN, i, os.devnull, os.O_RDWR, 0) for i in (0, 1)]]
    return os.posix_spawn(sys.executable, [sys.executable, *safe, "-c", _SERVER, str(target)],
                          env, file_actions=actions)


_SERVER = ("import sys; sys.path[:] = [p for p in sys.path if p not in ('', '.')]; "
           "import signal; signal.signal(signal.SIGINT, signal.SIG_IGN); "
           "from aiedsl.kernels.worker_server import main; main(sys.argv[1:])")
"""The server's program: Ctrl-C reaches it too (it is in this process's group, as a forked
child is: one in another group stops if it writes to a terminal set to ``tostop``), and is
this process's to handle, so it is ignored before aiedsl is imported (``python -m`` would
import aiedsl's packages first). The current directory leaves ``sys.path`` first, before
anything else is imported (``sys`` is built in): Python 3.10 has no ``-P``, and an ``aiedsl/``
or a ``numpy.py`` there was imported in place of the installed ones (a packager's tester)."""


def read_status(fd: int) -> int:
    """The wait status the server put on the status pipe ``fd`` once the worker ended (it
    blocks until then); that of a SIGKILL if the server died first (it could not reap it)."""
    data = b""
    while len(data) < STATUS.size:
        more = os.read(fd, STATUS.size - len(data))
        if not more:
            return signal.SIGKILL  # a wait status: killed by SIGKILL
        data += more
    return int(STATUS.unpack(data)[0])


# -- messages between this process and the server ------------------------------------------

def send(sock: socket.socket, data: bytes, fds: Sequence[int] = ()) -> None:
    """``data`` and copies of the file descriptors ``fds`` to the other end of ``sock``."""
    head = _HEADER.pack(len(data), len(fds))
    if fds:
        socket.send_fds(sock, [head], list(fds))
    else:
        sock.sendall(head)
    sock.sendall(data)


def recv(sock: socket.socket) -> tuple[bytes, list[int]]:
    """What :func:`send` sent: the data and the file descriptors (open here); EOFError at
    the socket's end."""
    head, fds, _, _ = socket.recv_fds(sock, _HEADER.size, 16)
    head += _exactly(sock, _HEADER.size - len(head)) if head else b""
    if not head:
        raise EOFError
    size, _ = _HEADER.unpack(head)
    return _exactly(sock, size), list(fds)


def _exactly(sock: socket.socket, n: int) -> bytes:
    """The next ``n`` bytes of ``sock``; EOFError if it ends first."""
    chunks = []
    while n:
        chunk = sock.recv(n)
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)
