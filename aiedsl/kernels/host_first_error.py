"""Where a failed host build's first error is: the compiler's output cut from that error on, and
the kernel of the one C++ file whose code (or generated ``extern "C"`` entry) holds it.

A file's kernels build as one object, so one kernel's error fails them all; these say which
kernel the report should name and at whose declaration it is shown
(:func:`~aiedsl.kernels.host_build.compile_host`). What the error means, in words a kernel
writer can act on, is :mod:`aiedsl.kernels.host_errors`'s.

Example
-------
>>> print(first_errors("k.cc: In function 'void f(int*)':\\nk.cc:3:5: error: 'x' was not "
...                    "declared in this scope\\nk.cc:4:1: note: something"))
k.cc: In function 'void f(int*)':
k.cc:3:5: error: 'x' was not declared in this scope
k.cc:4:1: note: something
"""

from __future__ import annotations

import re

from aiedsl.kernels.text import KernelText

_FUNCTION = re.compile(r"In (?:function|instantiation of) [‘'][^’']*?(\w+)(?:<[^’']*>)?\(")
"""g++'s head of an error inside a function: ``In function 'void f(int*)'``, ``In instantiation
of 'void f(...) [with ...]'``: the function's name."""


def first_errors(stderr: str, most: int = 12) -> str:
    """The compiler's output from its first error on (what follows an error is often its
    consequences), at most ``most`` lines."""
    lines = stderr.strip().splitlines()
    first = next((i for i, ln in enumerate(lines) if "error:" in ln), None)
    if first is None:
        return "\n".join(lines[-most:])
    # the "In function ..." line just before the error says where it is; an error inside a
    # template (the header's size rules) follows "In instantiation of ..." and the "required
    # from" lines that lead to the kernel's own line
    start = first
    while start and (re.search(r"\brequired (?:from|by)\b", lines[start - 1])
                     or (": In " in lines[start - 1] and lines[start - 1].rstrip().endswith(":"))):
        start -= 1
    return "\n".join(lines[start:start + most])


def first_error_entry(kt: KernelText, excerpt: str) -> str | None:
    """The kernel whose generated ``extern "C"`` entry holds the compiler's first error (the
    first ``error:`` line of ``excerpt``, mapped by :meth:`KernelText.map_output`), if it is
    in one."""
    first = next((ln for ln in excerpt.splitlines() if ": error:" in ln), "")
    m = re.match(re.escape(f"kernels/{kt.name}.cc:") + r"(\d+):", first)
    return kt.kernel_at(int(m[1])) if m else None


def first_error_kernel(kt: KernelText, excerpt: str) -> str | None:
    """The kernel of ``kt`` whose code the compiler's first error (``excerpt``, as
    :func:`first_errors` cuts it, its lines mapped by :meth:`KernelText.map_output`) is in:
    the first generated entry it names (a template's ``required from here``), else the one
    kernel whose function the error is in; None if it cannot be told."""
    entry_line = re.compile(re.escape(f"kernels/{kt.name}.cc:") + r"(\d+)")
    for m in entry_line.finditer(excerpt):
        symbol = kt.kernel_at(int(m[1]))
        if symbol is not None:
            return symbol
    entries = dict(kt.callees)
    for m in _FUNCTION.finditer(excerpt):
        named = [s for s in kt.symbols if entries.get(s) == m[1]]
        if len(named) == 1:
            return named[0]
    return None
