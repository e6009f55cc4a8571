"""The jinja2 environment every template renders in: strict, and errors name the template line.

jinja2 is imported when a template is first rendered, not with this module: importing it takes
some 80 ms, half of them compiling its identifier pattern, which a command that renders
nothing (``aiedsl check`` or ``sim`` of a design whose kernels are all C++ files) never uses.
"""

from __future__ import annotations

import types
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aiedsl.cache import cache_dir, private, trusted
from aiedsl.text import printable

if TYPE_CHECKING:
    import jinja2

TEMPLATES = Path(__file__).resolve().parent / "codegen" / "templates"
"""Where the MLIR, report, map and kernel-file templates live (kernel sources' own templates are
in ``aiedsl/kernels/templates/``)."""
KERNEL_TEMPLATES = Path(__file__).resolve().parent / "kernels" / "templates"
"""The templates of aiedsl's library kernels."""


@lru_cache(maxsize=None)
def environment(directory: str = str(TEMPLATES)) -> jinja2.Environment:
    """A strict environment over ``directory`` (undefined names are errors).

    Compiled templates are kept in aiedsl's cache (checked against the template's text), so a
    command does not spend its start-up compiling the same templates again.
    """
    import jinja2
    import jinja2.sandbox

    # A kernel's own template is data a design.json can name, not aiedsl's code: it renders
    # sandboxed (no reaching Python's internals through an attribute), aiedsl's own do not
    own = Path(directory).resolve() in (TEMPLATES, KERNEL_TEMPLATES)
    kind = jinja2.Environment if own else jinja2.sandbox.SandboxedEnvironment
    env = kind(
        loader=jinja2.FileSystemLoader(directory), undefined=jinja2.StrictUndefined,
        trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True, autoescape=False,
        bytecode_cache=_bytecode_cache())
    env.filters["comment"] = comment_text
    env.filters["mlir_str"] = mlir_string
    return env


def comment_text(value: object) -> str:
    """``value`` made safe for a one-line ``//`` or ``#`` comment: control characters (a line
    break would end the comment and start code) are written as escapes."""
    return printable(value)


def mlir_string(value: object) -> str:
    r"""``value`` as the inside of an MLIR string literal: ``"`` and ``\`` escaped, anything
    but printable ASCII as ``\XX`` hex bytes (MLIR's string escapes); a file name's bytes that
    are not UTF-8 (Python's surrogate escapes) as the bytes they are.

    >>> mlir_string('a"b\nc'), mlir_string("p\udcff.py")
    ('a\\22b\\0Ac', 'p\\FF.py')
    """
    out: list[str] = []
    for c in str(value):
        if c in '"\\' or not (c.isascii() and c.isprintable()):
            out.extend(f"\\{b:02X}" for b in c.encode("utf-8", "surrogateescape"))
        else:
            out.append(c)
    return "".join(out)


def _bytecode_cache() -> jinja2.BytecodeCache | None:
    folder = cache_dir("templates")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None  # a read-only home: compile each time
    if not private(folder):  # another user could swap an entry between its check and its load
        return None
    return _template_cache()(str(folder))


@lru_cache(maxsize=1)
def _template_cache() -> type[jinja2.FileSystemBytecodeCache]:
    """jinja2's cache of compiled templates, for which a damaged entry is a miss (a class made
    once jinja2 is imported).

    jinja2 reads an entry with pickle and marshal and lets their errors out: a file cut short
    (a full disk, a killed process, a copy) stopped every build with an UnpicklingError. An
    entry that cannot be read is compiled again and written over; a cache that cannot be
    written (a read-only folder) is not used.
    """
    import jinja2
    import jinja2.bccache

    class TemplateCache(jinja2.FileSystemBytecodeCache):
        def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
            """Fill ``bucket`` from its file, or leave it empty when the file is unreadable, or
            one another user could have written (:func:`~aiedsl.cache.trusted`: it is code)."""
            if not trusted(Path(self.directory) / (self.pattern % (bucket.key,))):
                return
            try:
                super().load_bytecode(bucket)
            except Exception:  # pickle's and marshal's errors have no common class
                bucket.reset()
                return
            if bucket.code is not None and not isinstance(bucket.code, types.CodeType):
                bucket.reset()  # marshal read something, but not compiled code

        def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
            """Write ``bucket``'s file; a folder that refuses it costs a compile next time."""
            try:
                super().dump_bytecode(bucket)
            except OSError:
                pass

    return TemplateCache


class TemplateError(RuntimeError):
    """A template failed to render: names the template and its line (an aiedsl bug)."""


def render(name: str, directory: str = str(TEMPLATES), **context: Any) -> str:
    """Render template ``name`` with ``context``."""
    import jinja2

    try:
        return environment(directory).get_template(name).render(**context)
    except jinja2.TemplateError as e:
        line = getattr(e, "lineno", None)
        where = f"{getattr(e, 'filename', None) or name}:{line}" if line else name
        raise TemplateError(f"template {where}: {e}") from e
