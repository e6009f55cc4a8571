"""What of a kernel's C++ a host build cannot run as the AIE core does, said as the cause: a
type whose size differs between the two (``long``: 4 bytes on the core, 8 on the host), and a
``defines=`` name that the preprocessor also replaces inside the AIE API header (``N``).

Without these, the host build's symptoms blamed something else: a ``long *`` kernel "wrote 4096
bytes past the end of buffer 'out'", and ``defines={"N": 64}`` made g++ say the kernel's
``aie::add`` call took arguments no form of it takes.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Sequence

from aiedsl.errors import DesignError, listed
from aiedsl.ir.loc import Loc
from aiedsl.kernels.cscan import extern_c
from aiedsl.kernels.cscan.blank import blank
from aiedsl.kernels.text import KernelText

__all__ = ["HOST_SIZED", "define_clash", "define_names", "header_clash", "refuse_host_sizes"]

HOST_SIZED = re.compile(r"\blong\b(?!\s+(?:long|double)\b)(?<!long\slong)"
                        r"|\b(?:s?size_t|ptrdiff_t|u?intptr_t)\b")
"""Types 4 bytes on the AIE core, whose target is 32-bit (Peano's data layout keeps pointers
in 32 bits and ``long`` as ``int``), and 8 on a 64-bit host: ``long`` (not ``long long`` or
``long double``), ``size_t``, ``ssize_t``, ``ptrdiff_t``, ``intptr_t``, ``uintptr_t``."""


def define_names(flags: Sequence[str]) -> dict[str, str]:
    """The ``-DNAME=VALUE`` words among ``flags`` as ``{NAME: VALUE}`` (``-DNAME``: ``""``)."""
    return dict(f[2:].partition("=")[::2] for f in flags if f.startswith("-D"))


def header_clash(flags: Sequence[str], header: str, stderr: str, folder: Path) -> list[str]:
    """The ``-D`` names among ``flags`` that the AIE API header (its text ``header``, its
    files in ``folder``) uses as words of its code, not its comments, and that the compiler's
    ``stderr`` says it expanded there: g++'s ``<folder>/x.hpp:219:20: note: in expansion of
    macro 'N'``, or clang's error in ``folder`` with ``note: expanded from macro 'N'``."""
    code = blank(header)
    at = re.escape(str(folder))
    out = []
    for name in define_names(flags):
        if name.startswith("__") or not re.search(rf"\b{re.escape(name)}\b", code):
            continue
        macro = rf"[‘']{re.escape(name)}[’']"
        if re.search(rf"{at}/\S+:\d+:\d+: note: in expansion of macro {macro}", stderr) or (
                re.search(rf"{at}/\S+:\d+:\d+: error:", stderr)
                and re.search(rf"note: expanded from macro {macro}", stderr)):
            out.append(name)
    return out


def define_clash(label: str, names: list[str]) -> tuple[str, str]:
    """The message and fix of a host build that failed with ``names``, defines the AIE API
    header uses itself (``defines={"N": 64}``: its templates' ``template <unsigned N>`` became
    ``template <unsigned 64>``)."""
    said = listed([f"'{n}'" for n in names])
    return (f"{label} does not compile on the host: its defines= name {said}, which the "
            "compiler replaces everywhere after the -D, also inside the AIE API header the "
            "kernel includes, where " + ("it names" if len(names) == 1 else "they name")
            + " something else (a template parameter, a type); Peano's AIE API headers may "
            "break the same way",
            "give the defines names no header uses, prefixed for the kernel (KERNEL_N rather "
            "than N), in defines= and in the C++")


def refuse_host_sizes(kt: KernelText, loc: Loc | None) -> None:
    """A DesignError for a kernel of ``kt`` whose C++ function takes a type of
    :data:`HOST_SIZED` (a pointer to one, or one): its host build would read and write its
    buffers with other element sizes than the core. Said at the kernel's declaration (else
    ``loc``), before anything is built."""
    scan = extern_c(kt.source.text, define_names(kt.flags))
    for symbol, function in kt.callees:
        sig = scan.signature(function)
        sized = [p.text for p in (sig.params if sig is not None else ())
                 if HOST_SIZED.search(p.text)]
        if sized:
            at = next((where for s, where in kt.declared if s == symbol), loc)
            raise DesignError(
                "host kernel build", f"kernel '{symbol}' takes {listed(sized)} ({function} in "
                f"{kt.source.label}): long and size_t are 4 bytes on the AIE core but 8 on this "
                "host, so its host build would read and write its buffers with other element "
                "sizes than the core's", loc=at, limit="a host build runs C++ whose types have "
                "the core's sizes", found=listed(sized),
                fix="use the fixed-size types (int32_t for i32, uint32_t for u32), which are "
                "the same on both")
