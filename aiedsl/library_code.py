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
    return filename.startswith(PACKAGE_DIR + os.sep) or filename.startswith(library_dirs())


USER_PSEUDO_FILES = ("<stdin>", "<string>", "<console>", "<input>", "<ipython-input-")
"""The file names Python gives code typed at a prompt or run from a string: the user's, where
other ``<...>`` names are Python's or a library's (``<frozen importlib._bootstrap>``, numpy
1.x's ``<__array_function__ internals>``)."""


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
    """The folders of Python's standard library, of installed packages and of their console
    scripts (the ``aiedsl`` command itself: its launcher's line is no user's), each ending in a
    separator (``startswith`` then matches whole folder names)."""
    paths = sysconfig.get_paths()
    return tuple(sorted({paths[k] + os.sep for k in ("stdlib", "platstdlib", "purelib",
                                                     "platlib", "scripts") if k in paths}))
