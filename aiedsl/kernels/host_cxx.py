"""The host's C++ compiler, which builds kernels' C++ for this machine: what ``aiedsl kernel
test``, ``kernel profile``, ``sim --kernels native`` and the profile of a kernel declared with
``cycles=None`` (run as its design loads) need, and ``aiedsl doctor`` reports.

It is ``$CXX`` when that is set and not empty (as make reads it: set but empty is unset), else
``g++`` on ``PATH``. Missing, it is a tool that is missing (a
:class:`~aiedsl.errors.ToolchainError`, exit 4), not a mistake of the design line that asked
for the build. Only the standard library loads here (``doctor`` imports it).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass

from aiedsl.errors import ToolchainError

DEFAULT = "g++"
"""The compiler looked for on ``PATH`` when ``CXX`` is unset or empty."""
NEEDED_BY = ("aiedsl kernel test, kernel profile, sim --kernels native and the profile of a "
             "kernel declared with cycles=None (run as its design loads)")
"""What builds kernels' C++ for the host, said wherever the compiler is missing."""
INSTALL = "install g++ (apt install g++, dnf install gcc-c++), or set CXX to a C++ compiler"
"""How to get one."""


@dataclass(frozen=True)
class HostCompiler:
    """The host C++ compiler as looked for (:func:`find_host_compiler`)."""

    path: str | None
    """The compiler's path; None when it is missing."""
    named: str | None
    """``$CXX`` when it is set and not empty (None: ``g++`` was looked for)."""

    @property
    def how(self) -> str:
        """How it was looked for, as ``doctor`` says it: ``CXX`` or ``PATH`` when found,
        what was looked for when missing."""
        if self.path is not None:
            return "CXX" if self.named else "PATH"
        return f"CXX={self.named}: not found" if self.named else f"{DEFAULT} not on PATH"

    def missing_error(self, what: str) -> ToolchainError:
        """The error for building ``what`` (``kernel 'k'``) without a compiler: a tool is
        missing (exit 4), said at no design line (the design is not wrong)."""
        if self.named:  # "(or set CXX)" would be no help: it is set
            return ToolchainError(
                "host compiler", f"CXX={self.named} names no C++ compiler that is found, so "
                f"{what} cannot be built for the host", exit_code=4,
                limit="CXX: one compiler command, a path or a name on PATH, without flags",
                found=f"CXX={self.named}",
                fix="set CXX to the host's C++ compiler (CXX=g++, CXX=/usr/bin/g++-13), or "
                    f"unset it for {DEFAULT}")
        return ToolchainError(
            "host compiler", f"no host C++ compiler ({DEFAULT}) on PATH, so {what} cannot be "
            f"built for the host", exit_code=4, limit=f"{NEEDED_BY} build kernels' C++ with "
            f"the host's C++ compiler", found=f"{DEFAULT}: not on PATH; CXX: unset",
            fix=f"{INSTALL}; `aiedsl doctor` says what it finds")


def find_host_compiler() -> HostCompiler:
    """The host C++ compiler: ``$CXX`` (unless empty), else ``g++``, found on ``PATH``."""
    named = os.environ.get("CXX") or None  # set but empty: as unset, as make reads it
    return HostCompiler(shutil.which(named or DEFAULT), named)


def compiler_version(path: str) -> str:
    """The first line of ``path --version`` (``g++ (Debian 12.2.0-14) 12.2.0``), or what kept
    it from answering."""
    try:
        r = subprocess.run([path, "--version"], capture_output=True, text=True,
                           errors="replace", timeout=30, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"does not answer --version ({type(e).__name__})"
    lines = r.stdout.strip().splitlines()
    return lines[0] if r.returncode == 0 and lines else f"--version exited {r.returncode}"
