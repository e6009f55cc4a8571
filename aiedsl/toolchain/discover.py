"""Find the toolchain: Peano (llvm-aie), mlir-aie's aiecc and AIE API headers, and pyxrt.

None of them comes from PyPI's default index, so each is looked for where its installers put it:

* Peano: ``--peano DIR`` or ``PEANO_INSTALL_DIR`` (its ``bin/clang++``), else the ``llvm-aie``
  directory a ``pip install llvm-aie`` leaves in site-packages;
* aiecc: ``aiecc`` (or the older ``aiecc.py``) on ``PATH``, else under ``MLIR_AIE_INSTALL_DIR/bin``
  or the ``mlir_aie`` directory of a ``pip install mlir_aie``;
* headers: ``MLIR_AIE_INSTALL_DIR/include`` (or the install aiecc came from), which holds
  ``aie_api/``;
* pyxrt: importable (XRT puts it on ``PYTHONPATH`` with ``source /opt/xilinx/xrt/setup.sh``).

Example
-------
>>> tools = find_tools()            # doctest: +SKIP
>>> tools.missing()                 # doctest: +SKIP
['Peano (llvm-aie)', 'aiecc (mlir-aie)', 'pyxrt (XRT)']
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

INSTALL = {
    "peano": "pip install llvm-aie -f https://github.com/Xilinx/llvm-aie/releases/expanded_assets/"
             "nightly, then export PEANO_INSTALL_DIR=$(python -c \"import sysconfig; "
             "print(sysconfig.get_paths()['purelib'])\")/llvm-aie",
    "aiecc": "pip install mlir_aie -f https://github.com/Xilinx/mlir-aie/releases/expanded_assets/"
             "latest-wheels-4 (puts aiecc on PATH), or export MLIR_AIE_INSTALL_DIR=<your mlir-aie "
             "install>",
    "headers": "comes with mlir-aie (include/aie_api); export MLIR_AIE_INSTALL_DIR=<your mlir-aie "
               "install>",
    "pyxrt": "install the amdxdna driver and XRT (https://github.com/amd/xdna-driver), then "
             "source /opt/xilinx/xrt/setup.sh",
}
"""How to get each tool, as doctor and error messages say it."""


@dataclass(frozen=True)
class Tool:
    """One tool: where it was found (None when missing), how, and its version."""

    name: str
    path: Path | None
    how: str
    """How it was found (``PEANO_INSTALL_DIR``, ``PATH`` ...) or what was looked at."""
    version: str = ""
    install: str = ""


@dataclass(frozen=True)
class Tools:
    """The toolchain as found on this machine."""

    clang: Tool
    aiecc: Tool
    headers: Tool
    pyxrt: Tool
    env: dict[str, str] = field(default_factory=dict)
    """Environment for running the tools (PEANO_INSTALL_DIR set to what was found)."""

    def all(self) -> list[Tool]:
        """Every tool, in doctor's order."""
        return [self.clang, self.aiecc, self.headers, self.pyxrt]

    def missing(self, *, compile_only: bool = False) -> list[Tool]:
        """Tools not found (the compilers and headers only, with ``compile_only``)."""
        tools = self.all()[:3] if compile_only else self.all()
        return [t for t in tools if t.path is None]

    def versions(self) -> dict[str, str]:
        """Name -> version of every found tool (what the build cache and manifest record)."""
        return {t.name: t.version for t in self.all() if t.path is not None}


def find_tools(env: Mapping[str, str] | None = None, peano: str | Path | None = None) -> Tools:
    """Look for every tool; ``peano`` overrides ``PEANO_INSTALL_DIR``."""
    env = dict(os.environ if env is None else env)
    clang = _find_peano(env, peano)
    aiecc = _find_aiecc(env)
    headers = _find_headers(env, aiecc)
    pyxrt = _find_pyxrt()
    run_env = dict(env)
    if clang.path is not None:
        run_env["PEANO_INSTALL_DIR"] = str(clang.path.parent.parent)
    return Tools(clang, aiecc, headers, pyxrt, run_env)


def _site_packages() -> Path:
    return Path(sysconfig.get_paths()["purelib"])


def _version(argv: list[str], env: Mapping[str, str]) -> str:
    """First line a tool prints for ``--version`` (``unknown`` if it will not say)."""
    try:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=30, env=dict(env))
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    lines = (r.stdout or r.stderr).strip().splitlines()
    return lines[0].strip() if lines else "unknown"


def _find_peano(env: Mapping[str, str], peano: str | Path | None) -> Tool:
    candidates = []
    if peano is not None:
        candidates.append((Path(peano), "--peano"))
    elif env.get("PEANO_INSTALL_DIR"):
        candidates.append((Path(env["PEANO_INSTALL_DIR"]), "PEANO_INSTALL_DIR"))
    else:
        candidates.append((_site_packages() / "llvm-aie", "pip package llvm-aie"))
    for root, how in candidates:
        clang = root / "bin" / "clang++"
        if clang.is_file() and os.access(clang, os.X_OK):
            return Tool("Peano (llvm-aie)", clang, how, _version([str(clang), "--version"], env),
                        INSTALL["peano"])
    root, how = candidates[0]
    return Tool("Peano (llvm-aie)", None, f"no bin/clang++ under {root} ({how})",
                install=INSTALL["peano"])


def _find_aiecc(env: Mapping[str, str]) -> Tool:
    path_var = env.get("PATH", "")
    for name in ("aiecc", "aiecc.py"):
        found = shutil.which(name, path=path_var)
        if found:
            return _aiecc(Path(found), "PATH", env)
    roots = []
    if env.get("MLIR_AIE_INSTALL_DIR"):
        roots.append((Path(env["MLIR_AIE_INSTALL_DIR"]), "MLIR_AIE_INSTALL_DIR"))
    roots.append((_site_packages() / "mlir_aie", "pip package mlir_aie"))
    for root, how in roots:
        for name in ("aiecc", "aiecc.py"):
            p = root / "bin" / name
            if p.is_file() and os.access(p, os.X_OK):
                return _aiecc(p, how, env)
    looked = ", ".join(f"{r}/bin" for r, _ in roots)
    return Tool("aiecc (mlir-aie)", None, f"not on PATH, nor in {looked}",
                install=INSTALL["aiecc"])


def _aiecc(path: Path, how: str, env: Mapping[str, str]) -> Tool:
    return Tool("aiecc (mlir-aie)", path, how, _version([str(path), "--version"], env),
                INSTALL["aiecc"])


def _find_headers(env: Mapping[str, str], aiecc: Tool) -> Tool:
    roots = []
    if env.get("MLIR_AIE_INSTALL_DIR"):
        roots.append((Path(env["MLIR_AIE_INSTALL_DIR"]), "MLIR_AIE_INSTALL_DIR"))
    if aiecc.path is not None:  # <install>/bin/aiecc -> <install>/include
        roots.append((aiecc.path.resolve().parent.parent, "beside aiecc"))
    for root, how in roots:
        inc = root / "include"
        if (inc / "aie_api" / "aie.hpp").is_file():
            return Tool("AIE API headers", inc, how, install=INSTALL["headers"])
    looked = ", ".join(f"{r}/include/aie_api" for r, _ in roots) or \
        "MLIR_AIE_INSTALL_DIR is not set and aiecc was not found"
    return Tool("AIE API headers", None, f"no aie_api/aie.hpp ({looked})",
                install=INSTALL["headers"])


def _find_pyxrt() -> Tool:
    loaded = sys.modules.get("pyxrt")
    if loaded is not None:  # already imported (its spec may be gone)
        return Tool("pyxrt (XRT)", Path(getattr(loaded, "__file__", None) or "pyxrt"),
                    "import pyxrt", install=INSTALL["pyxrt"])
    spec = importlib.util.find_spec("pyxrt")
    if spec is None or spec.origin is None:
        return Tool("pyxrt (XRT)", None, "not importable", install=INSTALL["pyxrt"])
    return Tool("pyxrt (XRT)", Path(spec.origin), "import pyxrt", install=INSTALL["pyxrt"])
