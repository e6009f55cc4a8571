"""User-facing errors, and the helpers that write their text.

Every mistake a user can make in a design is a :class:`DesignError`. It names the design file and
line of the construct, the rule broken, the limit, the value found, and how to fix it, so the CLI
can print it as is, with no traceback. The line it names is found by :mod:`aiedsl.source_loc`; a
user's own exception becomes one in :mod:`aiedsl.user_errors`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from aiedsl.ir.loc import Loc
from aiedsl.library_code import PACKAGE_DIR, library_dirs
from aiedsl.text import printable as printable  # (its home; builddir imports it from here)
from aiedsl.text import short_numbers


def counted(n: int, noun: str) -> str:
    """``n`` and ``noun``, plural unless ``n`` is one: the count of a message.

    >>> counted(1, "buffer"), counted(3, "buffer")
    ('1 buffer', '3 buffers')
    """
    return f"{n} {noun}" + ("" if n == 1 else "s")


def listed(items: list[str]) -> str:
    """``items`` as a message lists them: ``a``, ``a and b``, ``a, b and c``.

    >>> listed(["'a'"]), listed(["'a'", "'b'", "'c'"])
    ("'a'", "'a', 'b' and 'c'")
    """
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def display_path(filename: str) -> str:
    """Return ``filename`` as a user reads it: relative to the working directory when below it."""
    try:
        rel = os.path.relpath(filename)
    except ValueError:  # another drive on Windows
        return filename
    return filename if rel.startswith("..") else rel


def stable_path(filename: str, home: str) -> str:
    """``filename`` as generated files record it, the same whatever the working directory and
    wherever the design, aiedsl and its environment live: relative to ``home`` (the design
    file's folder), or, for a file of aiedsl or of an installed package, relative to the
    folder packages are installed in (``aiedsl/kernels/base.py``). ``<unknown>`` stays.

    Paths are compared as they really are, symlinks resolved: a design reached through a
    symlinked folder imports the modules beside it from its resolved folder (the loader looks
    there: :mod:`aiedsl.folder_imports`), and its own file, named by its symlink, would
    otherwise be in another folder than they are (``../../proj/designs/mylib.py`` in
    ``design.json``)."""
    if filename.startswith("<"):
        return filename
    path, home = os.path.realpath(filename), os.path.realpath(home)
    base = home
    if not path.startswith(home + os.sep):
        if path.startswith(PACKAGE_DIR + os.sep):
            base = os.path.dirname(PACKAGE_DIR)
        else:  # the innermost: site-packages may sit inside the standard library's folder
            inside = [real for real in (os.path.realpath(d) for d in library_dirs())
                      if path.startswith(real + os.sep)]
            base = max(inside, key=len, default=home)
    try:
        return Path(os.path.relpath(path, base)).as_posix()
    except ValueError:  # another drive on Windows
        return filename


class DesignError(Exception):
    """A mistake in a design, reported in the design's own terms.

    Parameters
    ----------
    rule:
        Short name of the rule broken, e.g. ``"L1 memory"``.
    message:
        One sentence saying what is wrong, naming the objects involved.
    loc:
        Where the offending construct was written.
    limit, found:
        The limit and the value found, when the rule is a limit.
    fix:
        How to fix it.
    related:
        Other lines involved (e.g. every fifo sharing an exhausted tile), each with a short label.

    Example
    -------
    >>> from aiedsl.ir.loc import Loc
    >>> e = DesignError("fifo depth", "fifo 'a' has depth 0", loc=Loc(file="d.py", line=3),
    ...                 limit="depth >= 1", found="0", fix="give depth=1 or more")
    >>> print(e)
    d.py:3: error [fifo depth]: fifo 'a' has depth 0
      limit: depth >= 1
      found: 0
      fix: give depth=1 or more
    """

    def __init__(
        self,
        rule: str,
        message: str,
        *,
        loc: Loc | None = None,
        limit: str | None = None,
        found: str | None = None,
        fix: str | None = None,
        related: list[tuple[str, Loc]] | None = None,
    ) -> None:
        self.rule = rule
        self.message = message
        self.loc = loc
        self.limit = limit
        self.found = found
        self.fix = fix
        self.related = related or []
        super().__init__(self.render())

    def __reduce__(self) -> tuple[Any, ...]:
        # Exception's own rebuilds an error as cls(*args): rule and message are not its args,
        # so pickle and copy failed (a multiprocessing pool hung on a worker's DesignError).
        # Rebuilt without __init__, then given every field back: subclasses' too.
        return _rebuilt, (type(self), self.args), dict(self.__dict__)

    def said_at(self, loc: Loc | None) -> DesignError:
        """This error, said at ``loc`` when it names no line of its own: a tool's failure
        reached from a Python call is told at that call's line. Returns itself."""
        if self.loc is None and loc is not None:
            self.loc = loc
            self.args = (self.render(),)
        return self

    def render(self) -> str:
        """The full multi-line text the CLI prints."""
        where = f"{self.loc.file}:{self.loc.line}: " if self.loc else ""
        lines = [f"{where}error [{self.rule}]: {self.message}"]
        if self.limit is not None:
            lines.append(f"  limit: {self.limit}")
        if self.found is not None:
            lines.append(f"  found: {self.found}")
        for label, loc in self.related:
            lines.append(f"  {loc.file}:{loc.line}: {label}")
        if self.fix is not None:
            lines.append(f"  fix: {self.fix}")
        return short_numbers("\n".join(lines))


HANG_EXIT = 3
"""The command line's exit code for a design whose run hangs: the simulator's deadlock, or a
hang the checks find before it (a rule ``hang: ...``: a wait-for cycle of cores, an element
held at the end, an unbalanced loop)."""


BUSY_EXIT = 75
"""The command line's exit code for a build directory another live build holds: ``EX_TEMPFAIL``
(``sysexits.h``), the same command may succeed later, so a CI step can retry it, where a design
error's 2 would not (a packager's tester)."""


def exit_code_of(e: DesignError) -> int:
    """The command line's exit code for ``e``: its own (a tool's 4 or 5, a deadlock's 3), 3 for
    a hang the checks find, else 2 (a mistake in the design or its command).

    >>> exit_code_of(DesignError("hang: core cycle", "...")), exit_code_of(DesignError("x", "y"))
    (3, 2)
    """
    own = getattr(e, "exit_code", None)
    if isinstance(own, int):
        return own
    return HANG_EXIT if e.rule.startswith("hang:") else 2


def _rebuilt(cls: type[DesignError], args: tuple[Any, ...]) -> DesignError:
    """A :class:`DesignError` (or subclass) with ``args``, its fields still to be set: how
    pickle and copy remake one (:meth:`DesignError.__reduce__`)."""
    return cls.__new__(cls, *args)


class ToolchainError(DesignError):
    """Peano, aiecc or XRT is missing or failed: printed like a DesignError, with its own exit code.

    ``exit_code`` is 4 when a tool is missing, 5 when one ran and failed; ``notes`` are printed
    as they are, before the fix (a tool's command line and the tail of its output); ``hint``
    is the part of ``fix`` that says the MLIR's spelling may be why
    (:func:`aiedsl.toolchain.mlir_syntax.hint`), "" when none does.
    """

    def __init__(self, rule: str, message: str, *, exit_code: int,
                 notes: list[str] | None = None, loc: Loc | None = None,
                 limit: str | None = None, found: str | None = None, fix: str | None = None,
                 related: list[tuple[str, Loc]] | None = None, hint: str = "") -> None:
        self.exit_code = exit_code
        self.notes = notes or []
        self.hint = hint
        super().__init__(rule, message, loc=loc, limit=limit, found=found, fix=fix,
                         related=related)

    def render(self) -> str:
        """Like a DesignError, with the notes before the fix."""
        lines = super().render().splitlines()
        fix = [i for i, line in enumerate(lines) if line.startswith("  fix: ")]
        at = fix[0] if fix else len(lines)
        return "\n".join(lines[:at] + [f"  {n}" for n in self.notes] + lines[at:])
