"""What a compile leaves, and when it need not run again: the cache key of everything the tools
read, the digests of what they wrote, and the check that what aiecc wrote is an xclbin and an
instruction stream.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from aiedsl.errors import DesignError, ToolchainError
from aiedsl.shell import shell_line
from aiedsl.text import encoded
from aiedsl.toolchain.discover import Tools
from aiedsl.toolchain.insts import read_header
from aiedsl.toolchain.tool_run import Step
from aiedsl.version import __version__

OUTPUTS = ("aie.xclbin", "insts.bin")
MANIFEST, CACHE = "manifest.json", "cache.json"


def tool_input(rel: str) -> bool:
    """Is generated file ``rel`` one the tools read (``aie.mlir``, ``kernels/*``)? The cache key
    hashes these, and a rebuild keeps the previous tool outputs only while these are unchanged
    (:func:`aiedsl.builddir.build.write_build`)."""
    return rel == "aie.mlir" or rel.startswith("kernels/")


def cache_key(files: dict[str, str], steps: list[Step], tools: Tools) -> str:
    """sha256 of everything the tools read: MLIR, kernel sources, command lines, tool versions."""
    h = hashlib.sha256()
    h.update(f"aiedsl {__version__}\n".encode())
    for rel in sorted(files):
        if tool_input(rel):
            h.update(f"{rel}\n".encode())
            h.update(encoded(files[rel]))  # the bytes the tools read
    for s in steps:
        h.update(shell_line(s.argv).encode())
    h.update(json.dumps(tools.versions(), sort_keys=True).encode())
    return h.hexdigest()


def digests(folder: Path) -> dict[str, str]:
    """sha256 of each output in ``folder``: a cache hit needs them as the tools wrote them (a CI
    cache restored in part, or a file cut short, is compiled again)."""
    return {name: hashlib.sha256((folder / name).read_bytes()).hexdigest() for name in OUTPUTS}


XCLBIN_MAGIC = b"xclbin2\0"
"""How every xclbin starts (XRT's ``axlf.m_magic``)."""


def not_what_aiecc_writes(work: Path, out: Path) -> ToolchainError | None:
    """The error for an ``aie.xclbin`` or ``insts.bin`` in ``work`` that is not one (an aiecc
    that exited 0 having written something else: a broken install, a wrapper script); None
    when both look as they should. Only their heads are read: an instruction stream's
    operations are for ``aiedsl inspect`` to read, and a newer mlir-aie may add some."""
    log = out / "logs" / "aiecc.log"
    fix = (f"see {log}; check the mlir-aie installation (`aiedsl doctor` shows what aiedsl "
           "finds)")
    with open(work / "aie.xclbin", "rb") as f:
        head = f.read(len(XCLBIN_MAGIC))
    if head != XCLBIN_MAGIC:
        return ToolchainError(
            "aiecc", "aiecc finished but the aie.xclbin it wrote is not an xclbin",
            exit_code=5, limit="an xclbin starts with XRT's signature 'xclbin2'",
            found=f"its first bytes: {head!r}", fix=fix)
    try:
        read_header((work / "insts.bin").read_bytes(), "insts.bin")
    except DesignError as e:
        return ToolchainError(
            "aiecc", f"aiecc finished but the insts.bin it wrote is not an NPU instruction "
            f"stream: {e.message}", exit_code=5, limit=e.limit, found=e.found, fix=fix)
    return None


def cache_hit(out: Path, key: str) -> dict | None:
    """The manifest when ``out`` holds outputs made from exactly these inputs, unchanged since
    they were written."""
    try:
        cache = json.loads((out / CACHE).read_text())
        if cache["key"] != key or cache["outputs"] != digests(out):
            return None
        manifest = json.loads((out / MANIFEST).read_text())
    except (OSError, ValueError, KeyError, TypeError):  # (TypeError: a cache.json not a dict)
        return None
    return manifest
