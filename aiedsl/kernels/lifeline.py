"""A child process that ends with its parent: the second line behind the parent's own kill
of a child running a kernel's C++ (:func:`aiedsl.kernels.guarded.in_child`, the native
simulation's worker, the workers' server's children), for a parent that could not run it (it
was SIGKILLed, or crashed). A child in a kernel's endless loop runs no Python, so nothing in it
would notice its parent gone: it would spin at full CPU under init, forever.
"""

from __future__ import annotations

import os
import sys

PR_SET_PDEATHSIG = 1
"""Linux's ``prctl`` option: the signal the calling process gets when its parent ends
(``<linux/prctl.h>``)."""


def die_with_parent(parent: int) -> None:
    """In a child just forked from process ``parent``: have Linux SIGKILL this process when the
    thread that forked it ends (``prctl(PR_SET_PDEATHSIG, SIGKILL)``), and end at once if the
    parent has ended already (between the fork and the call, when the signal is not sent).
    Nothing on other systems (macOS has no such call) or where the call fails: the parent's
    own kill is the first line, this only a second."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes
    import signal

    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):  # no C library to ask (a static interpreter)
        return
    prctl.restype = ctypes.c_int
    prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong,
                      ctypes.c_ulong]
    if prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) != 0:
        return
    if os.getppid() != parent:  # the parent ended before the prctl: no signal will come
        os.kill(os.getpid(), signal.SIGKILL)


def quiet_faults() -> None:
    """In a child that runs a kernel's C++: no Python fault handler (pytest installs one, as
    ``python -X faulthandler`` does, and a fork inherits it). A kernel that crashes its child is
    the parent's to report, as a ``[native kernel]`` error naming the signal and the call; the
    handler's dump of aiedsl's own frames on top of it read as if aiedsl had crashed."""
    import faulthandler

    faulthandler.disable()
