"""Find the toolchain: Peano (llvm-aie), mlir-aie's aiecc, aie-opt, aie-translate and AIE API
headers, and pyxrt.

None of them comes from PyPI's default index, so each is looked for where its installers put it:

* Peano: ``--peano DIR`` or ``PEANO_INSTALL_DIR`` (its ``bin/clang++``), else the ``llvm-aie``
  directory a ``pip install llvm-aie`` leaves in site-packages;
* aiecc: ``aiecc`` (or the older ``aiecc.py``) on ``PATH``, else under ``MLIR_AIE_INSTALL_DIR/bin``
  or the ``mlir_aie`` directory of a ``pip install mlir_aie``; its ``--help`` is read once, with
  its version, for the option spelling it takes (:func:`~aiedsl.toolchain.commands.aiecc_spelling`);
* aie-opt and aie-translate: the same places, in the same order (``aiedsl build`` lowers each
  design with them when both are found: :mod:`aiedsl.toolchain.lower`);
* headers: ``MLIR_AIE_INSTALL_DIR/include``, else the install aiecc came from, else the
  ``mlir_aie`` directory of a ``pip install mlir_aie`` (whose aiecc is a launcher script in the
  environment's ``bin/``), which holds ``aie_api/``;
* pyxrt: importable (XRT puts it on ``PYTHONPATH`` with ``source /opt/xilinx/xrt/setup.sh``).

A tool is asked for its version (and aiecc for its help) in an empty temporary directory, so no
tool writes anything where aiedsl runs. The tools run in other folders than the command (that
one, the build's staging folder), so the paths that find them (``--peano``, the variables above
and ``PATH``'s folders) are made absolute once, against the working directory, before anything is
looked for (:func:`absolute_env`): ``doctor`` and ``--compile`` find the same tools, and the tools
are handed the same absolute paths.

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
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from aiedsl.toolchain.commands import AIECC_NAMES, AieccSpelling, aiecc_spelling, help_offers

INSTALL = {
    "peano": "pip install llvm-aie -f https://github.com/Xilinx/llvm-aie/releases/expanded_assets/"
             "nightly, then export PEANO_INSTALL_DIR=$(python -c \"import sysconfig; "
             "print(sysconfig.get_paths()['purelib'])\")/llvm-aie",
    "aiecc": "pip install mlir_aie -f https://github.com/Xilinx/mlir-aie/releases/expanded_assets/"
             "latest-wheels-4 (puts aiecc on PATH), or export MLIR_AIE_INSTALL_DIR=<your mlir-aie "
             "install>",
    "headers": "comes with mlir-aie (include/aie_api); export MLIR_AIE_INSTALL_DIR=<your mlir-aie "
               "install>",
    "aie-opt": "comes with mlir-aie, beside aiecc (pip install mlir_aie -f "
               "https://github.com/Xilinx/mlir-aie/releases/expanded_assets/latest-wheels-4 puts "
               "it on PATH), or export MLIR_AIE_INSTALL_DIR=<your mlir-aie install> (its bin/)",
    "pyxrt": "install the amdxdna driver and XRT (https://github.com/amd/xdna-driver), then "
             "source /opt/xilinx/xrt/setup.sh",
}
"""How to get each tool, as doctor and error messages say it."""
FOLDER_VARIABLES = ("PEANO_INSTALL_DIR", "MLIR_AIE_INSTALL_DIR")
"""The environment variables that name a tool's install folder (``build.sh`` makes them
absolute, as :func:`absolute_env` does)."""


@dataclass(frozen=True)
class Tool:
    """One tool: where it was found (None when missing), how, and its version."""

    name: str
    path: Path | None
    how: str
    """How it was found (``PEANO_INSTALL_DIR``, ``PATH`` ...) or what was looked at."""
    version: str = ""
    install: str = ""
    help: str = ""
    """What ``--help`` printed (read for aiecc only: the option spelling it takes)."""


@dataclass(frozen=True)
class Tools:
    """The toolchain as found on this machine."""

    clang: Tool
    aiecc: Tool
    headers: Tool
    pyxrt: Tool
    env: dict[str, str] = field(default_factory=dict)
    """Environment for running the tools (PEANO_INSTALL_DIR set to what was found)."""
    aie_opt: Tool = field(
        default_factory=lambda: Tool("aie-opt (mlir-aie)", None, "not looked for"))
    aie_translate: Tool = field(
        default_factory=lambda: Tool("aie-translate (mlir-aie)", None, "not looked for"))

    def all(self) -> list[Tool]:
        """Every tool, in doctor's order."""
        return [self.clang, self.aiecc, self.headers, self.aie_opt, self.aie_translate,
                self.pyxrt]

    def missing(self, *, compile_only: bool = False) -> list[Tool]:
        """Tools not found (the compilers and headers only, with ``compile_only``)."""
        tools = [self.clang, self.aiecc, self.headers] if compile_only else self.all()
        return [t for t in tools if t.path is None]

    @property
    def lowering(self) -> bool:
        """aie-opt and aie-translate are both here: ``aiedsl build`` lowers with them."""
        return self.aie_opt.path is not None and self.aie_translate.path is not None

    @property
    def aiecc_spelling(self) -> AieccSpelling:
        """The option spelling the aiecc found takes (from its ``--help``)."""
        return aiecc_spelling(self.aiecc.help)

    def versions(self) -> dict[str, str]:
        """Name -> version of every found tool (what the build cache and manifest record)."""
        return {t.name: t.version for t in self.all() if t.path is not None}


def find_tools(env: Mapping[str, str] | None = None, peano: str | Path | None = None) -> Tools:
    """Look for every tool; ``peano`` overrides ``PEANO_INSTALL_DIR``. Relative paths in either
    are taken from the working directory (:func:`absolute_env`)."""
    env = absolute_env(env)
    if peano is not None:
        peano = _absolute(str(peano))
    clang = _find_peano(env, peano)
    aiecc = _find_aiecc(env)
    headers = _find_headers(env, aiecc)
    pyxrt = _find_pyxrt()
    run_env = dict(env)
    if clang.path is not None:
        run_env["PEANO_INSTALL_DIR"] = str(clang.path.parent.parent)
    aie_opt, aie_translate = find_lowering_tools(env)
    return Tools(clang, aiecc, headers, pyxrt, run_env, aie_opt, aie_translate)


def find_lowering_tools(env: Mapping[str, str] | None = None) -> tuple[Tool, Tool]:
    """aie-opt and aie-translate (each a :class:`Tool`, ``path`` None when missing): what
    ``aiedsl build`` needs to lower a design with mlir-aie."""
    env = absolute_env(env)
    return (_find_mlir_aie_tool(env, "aie-opt", "aie-opt (mlir-aie)"),
            _find_mlir_aie_tool(env, "aie-translate", "aie-translate (mlir-aie)"))


def absolute_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """``env`` (default: this process's environment) with the paths that find the tools made
    absolute against the working directory: :data:`FOLDER_VARIABLES` and each folder of
    ``PATH`` (an empty one is the working directory, as the shell takes it).

    The tools run in another folder than the command, where a relative path names something
    else or nothing; ``doctor``, which looks for them from here, said "found" while
    ``--compile`` failed to run them. Empty values stay empty (unset)."""
    env = dict(os.environ if env is None else env)
    for name in FOLDER_VARIABLES:
        if env.get(name):
            env[name] = _absolute(env[name])
    if "PATH" in env:
        env["PATH"] = os.pathsep.join(_absolute(folder) for folder in env["PATH"].split(os.pathsep))
    return env


def _absolute(path: str) -> str:
    """``path`` from the working directory (an empty one: that directory), ``..`` kept (through
    a symbolic link it is not the folder above)."""
    return path if os.path.isabs(path) else str(Path.cwd() / path)


def _site_packages() -> Path:
    return Path(sysconfig.get_paths()["purelib"])


def _ask(argv: list[str], env: Mapping[str, str]) -> str | None:
    """What a tool prints (stdout, else stderr) for ``argv``, run in an empty temporary directory
    (None when it cannot run)."""
    with tempfile.TemporaryDirectory(prefix="aiedsl-ask-") as scratch:
        try:
            r = subprocess.run(argv, capture_output=True, text=True, timeout=30, env=dict(env),
                               cwd=scratch, stdin=subprocess.DEVNULL)
        except (OSError, subprocess.TimeoutExpired):
            return None
    return (r.stdout or r.stderr or "").strip()


def _version(argv: list[str], env: Mapping[str, str], *, whole: bool = False) -> str:
    """What a tool says for ``--version`` on one line (``unknown`` if it will not say): the lines
    naming a version (LLVM tools print several), else the first; ``whole`` keeps every line."""
    lines = [line.strip() for line in (_ask(argv, env) or "").splitlines() if line.strip()]
    if not lines:
        return "unknown"
    named = [line for line in lines if "version" in line.lower()]
    return "; ".join(lines if whole else named or lines[:1])[:300]


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
    for name in AIECC_NAMES:  # build.sh looks in the same order (find_aiecc_script)
        found = shutil.which(name, path=path_var)
        if found:
            return _aiecc(Path(found), "PATH", env)
    roots = []
    if env.get("MLIR_AIE_INSTALL_DIR"):
        roots.append((Path(env["MLIR_AIE_INSTALL_DIR"]), "MLIR_AIE_INSTALL_DIR"))
    roots.append((_site_packages() / "mlir_aie", "pip package mlir_aie"))
    for root, how in roots:
        for name in AIECC_NAMES:
            p = root / "bin" / name
            if p.is_file() and os.access(p, os.X_OK):
                return _aiecc(p, how, env)
    looked = ", ".join(f"{r}/bin" for r, _ in roots)
    return Tool("aiecc (mlir-aie)", None, f"not on PATH, nor in {looked}",
                install=INSTALL["aiecc"])


def _aiecc(path: Path, how: str, env: Mapping[str, str]) -> Tool:
    """aiecc, its version and its help (read once: the option spelling it takes)."""
    help_text = _ask([str(path), "--help"], env) or ""
    if help_offers(help_text, "--aie-version"):
        # the C++ aiecc: its --version is LLVM's; --aie-version names mlir-aie's commit
        version = _version([str(path), "--aie-version"], env, whole=True)
    else:
        version = _version([str(path), "--version"], env)
    return Tool("aiecc (mlir-aie)", path, how, version, INSTALL["aiecc"], help_text)


def _find_mlir_aie_tool(env: Mapping[str, str], name: str, label: str) -> Tool:
    """One of mlir-aie's tools: on PATH, else MLIR_AIE_INSTALL_DIR/bin, else the mlir_aie pip
    package's bin (aiecc's places, in aiecc's order)."""
    found = shutil.which(name, path=env.get("PATH", ""))
    if found:
        return Tool(label, Path(found), "PATH", _version([found, "--version"], env),
                    INSTALL["aie-opt"])
    roots = []
    if env.get("MLIR_AIE_INSTALL_DIR"):
        roots.append((Path(env["MLIR_AIE_INSTALL_DIR"]), "MLIR_AIE_INSTALL_DIR"))
    roots.append((_site_packages() / "mlir_aie", "pip package mlir_aie"))
    for root, how in roots:
        p = root / "bin" / name
        if p.is_file() and os.access(p, os.X_OK):
            return Tool(label, p, how, _version([str(p), "--version"], env), INSTALL["aie-opt"])
    looked = ", ".join(f"{r}/bin" for r, _ in roots)
    return Tool(label, None, f"not on PATH, nor in {looked}", install=INSTALL["aie-opt"])


def _find_headers(env: Mapping[str, str], aiecc: Tool) -> Tool:
    roots = []
    if env.get("MLIR_AIE_INSTALL_DIR"):
        roots.append((Path(env["MLIR_AIE_INSTALL_DIR"]), "MLIR_AIE_INSTALL_DIR"))
    if aiecc.path is not None:  # <install>/bin/aiecc -> <install>/include
        roots.append((aiecc.path.resolve().parent.parent, "beside aiecc"))
    # pip's aiecc is a launcher in the environment's bin/; the headers are in the package
    roots.append((_site_packages() / "mlir_aie", "pip package mlir_aie"))
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
