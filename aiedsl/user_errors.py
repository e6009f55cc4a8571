"""A user's own Python exception, raised while aiedsl ran the user's code (a design file as it
loads, a design or core function and the helpers it calls, a reference), as a
:class:`~aiedsl.errors.DesignError`: at the user's line, with the chain of the user's calls that
led there, and a fix for the mistakes a design makes most (a name defined below ``@design``, a
keyword of MLIR-AIR or IRON that aiedsl spells otherwise).
"""

from __future__ import annotations

import linecache
import os
import re
from types import FrameType, TracebackType
from typing import Any, Callable, NamedTuple

from aiedsl.errors import DesignError
from aiedsl.ir.loc import Loc
from aiedsl.library_code import PACKAGE_DIR, is_users
from aiedsl.source_loc import defined_below, file_loc, user_line


def raised_by_user(e: BaseException) -> bool:
    """Does ``e``, raised while aiedsl ran a user's function, stand for a mistake in it? All but
    an interrupt (Ctrl-C ends aiedsl as it always does), a generator's close, and aiedsl's own
    DesignError (already in the design's terms). ``sys.exit`` counts: it would end aiedsl
    silently, with any exit code, 0 included."""
    return not isinstance(e, (KeyboardInterrupt, GeneratorExit, DesignError))


OWN_FAILURES = (AssertionError, AttributeError, KeyError, NameError)
"""The exceptions that say aiedsl's own code is wrong where its line raises them (an assert, a
name or attribute or key it has not), whatever the user passed. A ValueError, a TypeError, an
IndexError of numpy's under an aiedsl helper the user called (``srs(x, 2, np.float32)``,
``to_bfp16(x, axis=2)`` in a reference) is the user's value refused: a reviewer's find."""


def aiedsls_own(e: BaseException) -> bool:
    """Is ``e``, caught where aiedsl ran the user's code, aiedsl's own failure rather than a
    mistake of the user's? It is when it is one of :data:`OWN_FAILURES` and the innermost line
    of its traceback that is aiedsl's or the user's is aiedsl's, below the line that caught
    it, and not a ``raise``. A ``raise`` is aiedsl refusing what the user passed it in
    Python's own terms (``dtype("x")``'s KeyError), a user's line is the user's code failing,
    and the catching line itself calls the user's code (a reference that is numpy's own
    ``np.linalg.inv``)."""
    if not isinstance(e, OWN_FAILURES):
        return False
    first = last = e.__traceback__
    tb = e.__traceback__
    while tb is not None:
        name = tb.tb_frame.f_code.co_filename
        if name.startswith(PACKAGE_DIR + os.sep) or is_users(name):
            last = tb
        tb = tb.tb_next
    if last is None or last is first or \
            not last.tb_frame.f_code.co_filename.startswith(PACKAGE_DIR + os.sep):
        return False
    line = linecache.getline(last.tb_frame.f_code.co_filename, last.tb_lineno)
    return not line.lstrip().startswith("raise")


def user_exception(e: BaseException, what: str, fallback: Loc | None = None) -> "DesignError":
    """A DesignError for exception ``e`` raised by user code while aiedsl ran ``what``, at the
    user's line; raised ``from e``, so a Python caller has the whole traceback as its
    ``__cause__`` (the command line says ``AIEDSL_TRACEBACK=1`` prints it:
    :func:`command_line_text`).

    ``e`` itself is raised again when it is aiedsl's own failure (:func:`aiedsls_own`): a
    report of the user's "python error", with a fix at the user's line, sent them looking for a
    mistake in code that has none; the command line says it is aiedsl's (``error
    [internal]``, exit 70), and which line of the user's led there."""
    if aiedsls_own(e):
        raise e
    if isinstance(e, SystemExit):
        code = "" if e.code is None else repr(e.code)
        return DesignError(
            "python error", f"sys.exit({code}) called while {what}",
            loc=user_line(e.__traceback__) or fallback,
            fix="return from the function instead: sys.exit would end aiedsl itself")
    detail = str(e)
    fix = "fix the code at this line"
    keyword = re.search(r"([\w.]+)\(\) got an unexpected keyword argument '(\w+)'", detail)
    if isinstance(e, TypeError) and keyword and keyword[2] in FOREIGN_KEYWORDS:
        callees, hint = FOREIGN_KEYWORDS[keyword[2]]
        if keyword[1].rsplit(".", 1)[-1] in callees:  # aiedsl's call, not one of the user's
            fix = hint
    elif isinstance(e, TypeError) and keyword:
        fix = _keywords_fix(keyword[1], keyword[2], _last_frame(e.__traceback__)) or fix
    frames = _user_frames(e.__traceback__)
    if isinstance(e, NameError):
        fix = _defined_below_fix(e, frames) or fix
    elif isinstance(e, (ImportError, AttributeError)):
        export = _export_hint(detail)
        if export is not None:
            fix = export
        elif isinstance(e, AttributeError):
            fix = _attribute_fix(e) or fix
    core = getattr(e, _TRACING, None)
    if isinstance(core, str):
        what = f"{what}: tracing {core}"
    return DesignError(
        "python error", f"{type(e).__name__}{': ' + detail if detail else ''} (while {what})",
        loc=user_line(e.__traceback__) or fallback, fix=fix, related=_call_chain(frames))


_TRACING = "_aiedsl_tracing"
"""The attribute :func:`tracing` puts on a user's exception."""


def tracing(e: Exception, core: str) -> None:
    """Mark ``e``, raised by a core function, with the core it was traced for
    (``core[1,0] at x=1, y=0``): :func:`user_exception` says it, as an index that runs past a
    list (``ins[x + 1]``) fails for one core of the herd only. An exception that takes no
    attribute stays as it is."""
    if not hasattr(e, _TRACING):  # the innermost herd's, for a herd traced inside another
        try:
            setattr(e, _TRACING, core)
        except (AttributeError, TypeError):
            pass


TRACEBACK_HINT = "AIEDSL_TRACEBACK=1 shows the whole traceback"
"""What the command line adds to the fix of a user's own exception: the variable is the command
line's (:mod:`aiedsl.cli.process`); from Python the traceback is the error's ``__cause__``."""


def command_line_text(e: DesignError, traced: bool = False) -> str:
    """``e`` as the command line prints it: its text, and for a user's own exception
    (:func:`user_exception`, raised from it) the fix says that ``AIEDSL_TRACEBACK=1`` shows the
    whole traceback (a Python caller has it as ``e.__cause__``, which Python prints), or, when
    it was printed (``traced``), that it is above."""
    text = str(e)
    cause = e.__cause__
    if e.rule == "python error" and cause is not None and \
            not isinstance(cause, (SystemExit, SyntaxError)) and e.fix and text.endswith(e.fix):
        return f"{text}; {'the whole traceback is above' if traced else TRACEBACK_HINT}"
    return text


def with_call_chain(e: "DesignError") -> "DesignError":
    """``e``, raised by aiedsl at a line of the user's inside a helper of theirs (``fifo(...,
    depth=0)`` in ``make_fifo()``), with the user's lines that called the helper, as a Python
    error there shows them (``pt() calls make_fifo()``): the mistake may be the call's."""
    frames = _user_frames(e.__traceback__)
    if frames and frames[-1].loc == e.loc:
        known = set(e.related)
        e.related = e.related + [r for r in _call_chain(frames) if r not in known]
        e.args = (e.render(),)  # what str(e) prints
    return e


def _last_frame(tb: TracebackType | None) -> FrameType | None:
    """The innermost frame of traceback ``tb`` (where a call's TypeError for its arguments was
    raised: the caller's)."""
    frame = None
    while tb is not None:
        frame, tb = tb.tb_frame, tb.tb_next
    return frame


def _callee(qualname: str, frame: FrameType | None) -> Callable[..., Any] | None:
    """The aiedsl function ``qualname`` names where ``frame`` called it: a plain name as the
    frame sees it (``define`` imported from aiedsl), a method (``ObjectFifo.forward``) of the
    aiedsl class of that name; None for anything of the user's own (a ``tiles`` or a
    ``Buffer`` class the design defines) or not found."""
    import builtins
    import sys

    head, *rest = qualname.split(".")
    seen = ({**vars(builtins), **frame.f_globals, **frame.f_locals} if frame is not None
            else {})
    if head in seen:
        found = seen[head]
    elif rest:  # a method called on an instance: its class, defined in an aiedsl module
        found = next((c for name, m in sorted(sys.modules.items())
                      if name.startswith("aiedsl.") and m is not None
                      for c in [getattr(m, head, None)]
                      if isinstance(c, type) and c.__module__ == name), None)
    else:
        return None
    for part in rest:
        found = getattr(found, part, None)
    ours = str(getattr(found, "__module__", "")).startswith("aiedsl.")
    return found if callable(found) and ours else None  # type: ignore[return-value]


def _keywords_fix(qualname: str, given: str, frame: FrameType | None) -> str | None:
    """The fix for keyword ``given`` that aiedsl's ``qualname`` (``ObjectFifo.forward``), called
    in ``frame``, does not take: the keywords it does take, the nearest first when one is near;
    None when the callee is not aiedsl's (:func:`_callee`)."""
    import difflib
    import inspect

    found = _callee(qualname, frame)
    if found is None:
        return None
    try:
        params = inspect.signature(found).parameters.values()
    except (TypeError, ValueError):
        return None
    takes = [p.name for p in params if p.name not in ("self", "cls") and not
             p.name.startswith("_") and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    if not takes:
        return None
    near = difflib.get_close_matches(given, takes, n=1)
    short = qualname.rsplit(".", 1)[-1]
    return (f"{short}() takes {', '.join(f'{t}=' for t in takes)}"
            + (f" ({given}= is not one of them: {near[0]}=?)" if near else
               f" ({given}= is not one of them)"))


class _Frame(NamedTuple):
    """One line of the user's code in a traceback (see :func:`_user_frames`)."""

    loc: Loc
    function: str
    """Its code's name: ``core``, ``<module>``, ``<lambda>``."""
    file: str
    """Its file as Python names it (the one to read, whatever the working directory)."""
    direct: bool
    """Called by the user frame before it, with no frame of aiedsl or a library between."""
    via_design: bool
    """Run by ``@design`` (its decorator in aiedsl.lang.design is between it and the frame
    before)."""


def _user_frames(tb: TracebackType | None) -> list[_Frame]:
    """The lines of the user's code in traceback ``tb``, outermost first (what
    :func:`user_line` takes the last of)."""
    out: list[_Frame] = []
    previous_user, design_between = False, False
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_filename in _IMPORTING:  # an import statement's own machinery: the
            pass  # module it runs is the importing line's direct callee, as Python's shows it
        elif not is_users(code.co_filename):
            previous_user = False
            design_between |= code.co_filename == _DESIGN_FILE and code.co_name == "decorate"
        else:
            out.append(_Frame(file_loc(code.co_filename, tb.tb_lineno),
                              code.co_name, code.co_filename, previous_user and bool(out),
                              design_between))
            previous_user, design_between = True, False
        tb = tb.tb_next
    return out


_IMPORTING = (os.path.join(PACKAGE_DIR, "folder_imports.py"),
              "<frozen importlib._bootstrap>", "<frozen importlib._bootstrap_external>")
"""The files of the frames between an import statement of a design (or of a module beside it)
and the module of the design's folder it runs (:mod:`aiedsl.folder_imports`), which Python's
own import leaves out of a traceback."""

_DESIGN_FILE = os.path.join(PACKAGE_DIR, "lang", "design.py")
"""The module of ``@design``'s decorator, whose ``decorate`` runs the design function."""

_UNNAMED = {"<module>": "the module", "<lambda>": "a lambda", "<listcomp>": "a list "
            "comprehension", "<dictcomp>": "a dict comprehension", "<setcomp>": "a set "
            "comprehension", "<genexpr>": "a generator expression"}
MAX_CHAIN = 10
"""Most call-chain lines an error shows: the outermost ones and the innermost, a count of the
ones left out between (a recursion would list a thousand)."""


def _called(function: str) -> str:
    """A function of the chain as a message names it: ``core()``, ``the module``."""
    return _UNNAMED.get(function, f"{function}()")


def _call_chain(frames: list[_Frame]) -> list[tuple[str, Loc]]:
    """The user's lines that led to the innermost one, outermost first, each labelled with the
    call it made (``core() calls outer()``; ``the module: @design runs pt()`` and ``pt():
    aiedsl runs core()`` where aiedsl ran it): only when one of the user's functions called
    another itself (a helper). Without one, the error's own line is in the function aiedsl ran,
    which its line and message place. A recursion's repeated lines are one entry with their
    count; a long chain keeps its ends."""
    if not any(f.direct for f in frames):
        return []
    chain: list[tuple[str, Loc, int]] = []
    for f, callee in zip(frames, frames[1:]):
        runs = "calls" if callee.direct else "@design runs" if callee.via_design else \
            "aiedsl runs"
        label = f"{_called(f.function)}{' ' if callee.direct else ': '}{runs} " \
            f"{_called(callee.function)}"
        if callee.function == "<module>":  # a module run by an import, not a call
            label = f"{_called(f.function)} imports {os.path.splitext(callee.loc.file)[0]}"
        if chain and chain[-1][0] == label and chain[-1][1] == f.loc:
            chain[-1] = (label, f.loc, chain[-1][2] + 1)
        else:
            chain.append((label, f.loc, 1))
    shown = [(label + (f" ({n} times)" if n > 1 else ""), loc) for label, loc, n in chain]
    if len(shown) > MAX_CHAIN:
        head, tail = MAX_CHAIN // 2, MAX_CHAIN - MAX_CHAIN // 2
        left = len(shown) - head - tail
        first = shown[-tail]
        shown = shown[:head] + [(f"({left} calls between left out) {first[0]}", first[1])] + \
            shown[len(shown) - tail + 1:]
    return shown


def _defined_below(e: NameError, frames: list[_Frame]) -> tuple[int, int] | None:
    """For a name the design function (or a function it ran) did not find: the line of
    ``@design`` that ran it and the line below it that defines the name, when the design
    file's top level does."""
    name = getattr(e, "name", None)
    top = next((f for f in frames if f.function == "<module>"), None)
    if not isinstance(name, str) or top is None or frames[-1] is top or not any(
            f.via_design for f in frames[frames.index(top) + 1:]):
        return None
    below = defined_below(top.file, name, top.loc.line)
    return None if below is None else (top.loc.line, below)


def _defined_below_fix(e: NameError, frames: list[_Frame]) -> str | None:
    """The fix of a NameError for a name the design file defines below its ``@design``."""
    found = _defined_below(e, frames)
    if found is None:
        return None
    at, below = found
    return (f"move '{e.name}' above line {at} (it is defined at line {below}): @design runs "
            "the function where it is decorated, so the names it uses must be defined above it")


_MISSING_EXPORT = re.compile(r"cannot import name '(\w+)' from '(aiedsl(?:\.kernels)?)'"
                             r"|module '(aiedsl(?:\.kernels)?)' has no attribute '(\w+)'")


def _attribute_fix(e: AttributeError) -> str | None:
    """For an attribute the object has not (``f.consum()``): the closest of its names by
    spelling, as Python's own traceback suggests one (which a one-line message leaves out)."""
    import difflib
    import inspect

    obj, name = getattr(e, "obj", None), getattr(e, "name", None)  # (Python 3.10 and later)
    if obj is None or not isinstance(name, str):
        return None
    try:
        names = [n for n in dir(obj) if not n.startswith("_") or name.startswith("_")]
        close = difflib.get_close_matches(name, names, n=1)
        # static: no property or __getattr__ of the user's runs while an error is said
        found = inspect.getattr_static(obj, close[0], None) if close else None
        called = callable(found) or isinstance(found, (classmethod, staticmethod))
    except Exception:  # a user's __dir__ may raise, or return other than names: no hint then
        return None
    if not close:
        return None
    return f"did you mean .{close[0]}{'()' if called else ''}? (not .{name})"


def _export_hint(detail: str) -> str | None:
    """For a name ``aiedsl`` (or ``aiedsl.kernels``) does not export, as an import or an
    attribute: the name it has for it (numpy's ``int32`` is ``i32``), the module that has it
    (``passthrough`` is in aiedsl.kernels), or the closest of its exports by spelling."""
    import difflib

    from importlib import import_module

    from aiedsl.dtypes import DTYPES, dtype

    m = _MISSING_EXPORT.search(detail)
    if m is None:
        return None
    name, module = (m[1], m[2]) if m[1] else (m[4], m[3])
    types = ", ".join(DTYPES)
    try:
        dt = dtype(name).name  # numpy's spellings too: int32, bfloat16, float32
    except KeyError:
        dt = None
    if dt is not None and dt != name:  # i32 itself from aiedsl.kernels: the module, below
        return (f"aiedsl calls the element type {name} {dt}: import {dt} (from aiedsl import "
                f"{dt}) and write {dt} where the design says {name}; its element types are "
                f"{types}")
    if re.fullmatch(r"u?int\d+|float\d+|bool_?|complex\d*", name):
        return f"aiedsl has no element type {name}: its element types are {types}"
    # each package's exports, as `from ... import` sees them (aiedsl's names load lazily)
    top, kernels = (list(import_module(p).__all__) for p in ("aiedsl", "aiedsl.kernels"))
    other, names = ("aiedsl.kernels", kernels) if module == "aiedsl" else ("aiedsl", top)
    if name in names:
        return f"{name} is in {other}: from {other} import {name}"
    own = top if module == "aiedsl" else kernels
    close = difflib.get_close_matches(name.lower(), [n.lower() for n in own], n=1, cutoff=0.6)
    if close:
        match = next(n for n in own if n.lower() == close[0])
        return f"{module} has no {name}; the closest name it has is {match}: from {module} " \
            f"import {match}"
    return f"{module} has no {name}: help({module}) lists what it has"


_PATTERNED = ("fill", "drain", "channel", "fifo", "forward")
FOREIGN_KEYWORDS: dict[str, tuple[tuple[str, ...], str]] = {
    "broadcast_shape": (("channel",), "MLIR-AIR's broadcast_shape=[1, n] is broadcast=n on an "
                        "aiedsl channel (each consuming core uses the one index c[i])"),
    "sizes": (("herd", *_PATTERNED), "MLIR-AIR's herd sizes=[c, r] is @herd(cols=c, rows=r); a "
              "transfer's sizes go in its pattern: rt.fill(f, t, (offset, sizes, strides))"),
    "offsets": (_PATTERNED, "a transfer's offset is one linear element offset in its pattern: "
                "rt.fill(f, t, (offset, sizes, strides)), or tiles(t, (th, tw)) for a whole "
                "tiling"),
    "strides": (_PATTERNED, "a transfer's strides go in its pattern: rt.fill(f, t, (offset, "
                "sizes, strides)); a fifo's or channel's layout is dims_to_stream=[(size, "
                "stride), ...]"),
    "indices": (("channel", "consume", "produce"), "a channel's index goes in brackets: "
                "c[x, y].consume()"),
    "via_DMA": (("fifo",), "IRON's via_DMA= has no counterpart: as mlir-aie lowers a fifo, "
                "one between neighbouring cores (one consumer, not linked) is in shared memory, "
                "and a layout on either end (dims_to_stream=, dims_from_stream=) moves it by DMA"),
    "init_values": (("fifo",), "IRON's init_values= has no counterpart: a fifo's buffers start "
                    "empty; a core's own buffer with initial values is local(T, initial=v)"),
    "aie_stream": (("fifo",), "IRON's aie_stream= has no counterpart: every fifo moves through "
                   "buffers, locks and DMAs (or shared memory)"),
    "disable_synchronization": (("fifo",), "IRON's disable_synchronization= has no "
                                "counterpart: every fifo end takes and gives its locks"),
    "obj_type": (("forward",), "IRON's forward(obj_type=T) is f.forward(T): the new fifo's "
                 "element, its first argument"),
}
"""Keywords of MLIR-AIR and IRON calls that aiedsl spells otherwise: the aiedsl calls a porter
writes them on, and how aiedsl spells them (the README's "Coming from" tables). The fix of the
TypeError a design gets for writing one on those calls; a function of the user's own with the
same keyword keeps the plain fix."""
