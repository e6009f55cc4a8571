"""The options of a run (``seed``, ``clock_hz``, ``kernels``, ``target``, its flags) and the
design it is given, checked where a caller passes them: a wrong one is a DesignError at the
caller's line, not a numpy error or an AttributeError from inside the run, nor a value quietly
read as another (``kernels="ref"`` ran the C++, ``check="no"`` compared).

The command line's options are typed choices already; these guard the Python API
(:func:`aiedsl.sim.simulate`, :meth:`aiedsl.api.Artifacts.run`, :func:`aiedsl.api.build`).
"""

from __future__ import annotations

import math
import numbers
import os

from aiedsl.errors import DesignError
from aiedsl.flags import check_flag as check_flag  # run options are flags too: its home
from aiedsl.ir.design import Design
from aiedsl.ir.loc import Loc
from aiedsl.ir.program import stopping_core
from aiedsl.lang.design import DesignHandle
from aiedsl.values import by_type, shown

KERNELS = ("reference", "native")
"""What a simulated kernel call runs: its numpy reference, or its C++ built for the host."""

TARGETS = ("auto", "npu", "sim")
"""Where a run runs: the NPU when there is one (else the simulator), the NPU, the simulator."""


def check_seed(seed: object, loc: Loc) -> int:
    """``seed`` as an int, when it is a non-negative integer (numpy's seeds); else a
    DesignError at ``loc``."""
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise DesignError("seed", f"seed={seed!r} is not a non-negative int", loc=loc,
                          limit="an int >= 0 (it seeds numpy's random generator)",
                          found=f"{type(seed).__name__} {seed!r}", fix="give seed=0, 1, 2, ...")
    return int(seed)


def check_clock(clock_hz: object, loc: Loc) -> float | None:
    """``clock_hz`` as a float, when it is None (the device's) or a real number of Hz from
    1 MHz to 100 GHz (a numpy scalar too); else a DesignError at ``loc``."""
    if clock_hz is None:
        return None
    if isinstance(clock_hz, numbers.Real) and not isinstance(clock_hz, bool):
        try:
            hz = float(clock_hz)
        except OverflowError:  # an int past any float (10**400): out of range
            hz = math.inf
        if math.isfinite(hz) and 1e6 <= hz <= 1e11:
            return hz
    raise DesignError("clock", f"a clock of {clock_hz!r} Hz", loc=loc, limit="1 MHz to 100 GHz",
                      found=repr(clock_hz), fix="give the core clock in Hz, e.g. 1.0e9")


MAX_INVOCATIONS = 64
"""The most invocations one simulation runs: each is simulated in full, with host tensors of
its own (invocations=10**9 ran out of memory making them)."""


def check_invocations(invocations: object, loc: Loc) -> int:
    """``invocations`` as an int, when it is an integer from 1 to :data:`MAX_INVOCATIONS`;
    else a DesignError at ``loc``."""
    if isinstance(invocations, bool) or not isinstance(invocations, numbers.Integral) \
            or not 1 <= int(invocations) <= MAX_INVOCATIONS:
        raise DesignError("run options", f"invocations={invocations!r}", loc=loc,
                          limit=f"an int from 1 to {MAX_INVOCATIONS} (how many times the "
                          "runtime sequence runs, each simulated in full)",
                          found=f"{type(invocations).__name__} {invocations!r}",
                          fix="give invocations=1, or 2 to run a second invocation from what "
                          "the first left")
    return int(invocations)


def check_kernels(kernels: object, loc: Loc) -> str:
    """``kernels`` when it is one of :data:`KERNELS`; else a DesignError at ``loc``."""
    if isinstance(kernels, str) and kernels in KERNELS:
        return kernels
    raise DesignError("kernels", f"kernels={kernels!r} is neither 'reference' nor 'native'",
                      loc=loc,
                      limit="'reference' (each kernel's numpy reference) or 'native' (its C++, "
                      "built for the host)", found=repr(kernels),
                      fix="give kernels='reference' or kernels='native'")


def check_target(target: object, loc: Loc) -> str:
    """``target`` when it is one of :data:`TARGETS`; else a DesignError at ``loc``."""
    if isinstance(target, str) and target in TARGETS:
        return target
    raise DesignError("target", f"target={target!r} is not 'auto', 'npu' or 'sim'", loc=loc,
                      limit="'auto' (the NPU when there is one, else the simulator), 'npu' or "
                      "'sim'", found=repr(target),
                      fix="give target='auto', target='npu' or target='sim'")


CHECK_FIX = "give check=True to compare with the reference, False not to"
"""The fix for a ``check=`` that is not a bool, wherever a run takes one."""


def check_handle(handle: object, call: str, loc: Loc) -> DesignHandle:
    """``handle``, given to ``call`` (``simulate``) as the design to run, when it is a design
    (what ``@design`` returns or ``load_design`` gives); else a DesignError at ``loc``: a
    design file's path failed deep in the run (``'str' object has no attribute 'ir'``)."""
    if isinstance(handle, DesignHandle):
        return handle
    limit = "a design: what @design returns, or what load_design(\"design.py\") gives"
    if isinstance(handle, (str, os.PathLike)):
        path = os.fspath(handle)
        raise DesignError(
            "design", f"{call}() takes a design, not the path of its file", loc=loc,
            limit=limit, found=shown(path),
            fix=f"{call}(load_design(\"{path}\"), ...) (from aiedsl import load_design)")
    built = type(handle).__name__ == "Artifacts"  # aiedsl.api's, which imports this module
    from aiedsl.ir import Design

    raise DesignError(
        "design", f"{call}() takes a design, not {by_type(handle)}", loc=loc, limit=limit,
        found=by_type(handle),
        fix=f"{call}(art.handle, ...), or art.run(...) to run the build" if built else
        f"{call}(load_design(\"design.py\"), placed=ir) runs a placed design IR (load_json's) "
        "with its design's references; DesignHandle(ir) has none of the user's"
        if isinstance(handle, Design) else
        f"pass the @design function's result (or load_design(\"design.py\")) to {call}()")


def check_runs_once(d: Design, runs: int, asked: str, fix: str) -> None:
    """Refuse ``runs`` runs (more than one) of a design with a core of ``forever=False`` that
    waits on something (:func:`~aiedsl.ir.program.stopping_core`): it runs its program once
    and stops, so a second run of the loaded design would wait for it (on the NPU, a hang).
    ``asked`` says how the runs were asked for, ``fix`` how to ask for one. The error is at
    the core's herd, whose ``forever=False`` makes it so."""
    once = stopping_core(d)
    if runs <= 1 or once is None:
        return
    raise DesignError(
        "run once", f"{once.name} runs its program once (forever=False), so the design runs "
        f"once per load; {asked}", loc=once.loc,
        limit="1 run of a design with a core of forever=False (a second run would wait for "
        "that core, stopped: a hang on the NPU)", found=f"{runs} runs",
        fix=f"{fix}, or leave forever=False out of the @herd for the core to run its program "
        "again each time it ends")
