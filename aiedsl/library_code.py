"""Which files hold library code (aiedsl's own, Python's, an installed package's), never a line
of the user's: what error locations skip, and what generated files record relative to where
it is installed.

A module of its own because :mod:`aiedsl.errors` reads it (for ``stable_path``) as well as the
modules that find the user's lines (:mod:`aiedsl.source_loc`, :mod:`aiedsl.user_errors`), which
import :mod:`aiedsl.errors`: imports then run one way.
"""

from __future__ import annotations

import functools
import os
import sys
import sysconfig
from pathlib import Path

PACKAGE_DIR = str(Path(__file__).resolve().parent)
"""aiedsl's own folder (the package's ``__init__.py`` is in it): no file below it is the user's."""


def is_library(filename: str) -> bool:
    """Is ``filename`` part of aiedsl, Python itself or an installed package (not the user's)?
    Code without a file (``<string>``, ``<frozen ...>``) is never the user's line either."""
    if filename.startswith("<"):
        return True
    filename = os.path.abspath(filename)
    return (filename.startswith(PACKAGE_DIR + os.sep) or filename.startswith(library_dirs())
            or is_launcher(filename))


USER_PSEUDO_FILES = ("<stdin>", "<string>", "<console>", "<input>", "<ipython-input-",
                     "<doctest ")
"""The file names Python gives code typed at a prompt, run from a string or from a docstring's
example: the user's, where other ``<...>`` names are Python's or a library's (``<frozen
importlib._bootstrap>``, numpy 1.x's ``<__array_function__ internals>``). Code compiled under a
name of one's own (``compile(src, "<my design>", "exec")``) is taken for a library's: give it
``"<string>"``."""


def is_users(filename: str) -> bool:
    """Is ``filename`` the user's code: a file outside aiedsl, Python and installed packages,
    or code typed at a prompt or run from a string (:data:`USER_PSEUDO_FILES`)?"""
    if filename.startswith("<"):
        return filename.startswith(USER_PSEUDO_FILES)
    if filename.startswith(PACKAGE_DIR + os.sep):  # aiedsl's own frames, most of those asked
        return False
    return not is_library(filename)


@functools.lru_cache(maxsize=1)
def library_dirs() -> tuple[str, ...]:
    """The folders of Python's standard library and of installed packages, each ending in a
    separator (``startswith`` then matches whole folder names)."""
    paths = sysconfig.get_paths()
    return tuple({paths[k] + os.sep for k in ("stdlib", "platstdlib", "purelib", "platlib")})


LAUNCHER_NAMES = ("aiedsl", "aiedsl.exe", "aiedsl-script.py")
"""What pip names the ``aiedsl`` command's launcher (``[project.scripts]``): a few lines that
import and call :func:`aiedsl.cli.entry.run`, no user's code."""


def is_launcher(filename: str) -> bool:
    """Is ``filename`` the ``aiedsl`` command's launcher: the file of that name in the scripts
    folder of this Python (a venv's ``bin/``), or the one this process was started as? A user's
    own files in that folder (a design beside the launcher) are still the user's."""
    if os.path.basename(filename) not in LAUNCHER_NAMES:
        return False
    here = os.path.abspath(filename)
    scripts = sysconfig.get_paths().get("scripts", "")
    started = os.path.abspath(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    return here in (os.path.join(os.path.abspath(scripts), os.path.basename(here)), started)
