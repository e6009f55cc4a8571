"""Find the toolchain: Peano (llvm-aie), mlir-aie's aiecc, aie-opt, aie-translate and AIE API
headers, and pyxrt.

None of them comes from PyPI's default index, so each is looked for where its installers put it:

* Peano: ``--peano DIR`` or ``PEANO_INSTALL_DIR`` (its ``bin/clang++``), else the ``llvm-aie``
  directory a ``pip install llvm-aie`` leaves in site-packages; its ``-print-targets`` must list
  ``aie2`` (a host clang++ there is found, and unusable: :attr:`Tool.problem`);
* aiecc: ``aiecc`` (or the older ``aiecc.py``) on ``PATH``, else under ``MLIR_AIE_INSTALL_DIR/bin``
  or the ``mlir_aie`` directory of a ``pip install mlir_aie``; its ``--help`` is read once, with
  its version, for the option spelling it takes (:func:`~aiedsl.toolchain.commands.aiecc_spelling`);
  one whose ``--help`` fails is found, and unusable;
* aie-opt and aie-translate: the same places, in the same order (``aiedsl build`` lowers each
  design with them when both are found: :mod:`aiedsl.toolchain.lower`);
* headers: as ``build.sh`` looks for them (:func:`header_places`): ``MLIR_AIE_INSTALL_DIR/include``,
  else the install aiecc came from, else, for pip's aiecc (a launcher script in its environment's
  ``bin/``), the ``mlir_aie`` package of the Python that launcher names, which holds
  ``include/aie_api/``;
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
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Mapping

from aiedsl.text import tool_output
from aiedsl.toolchain.commands import (AIECC_NAMES, PIP_PACKAGE, PURELIB, AieccSpelling,
                                       aiecc_spelling, help_offers, launcher_python)

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
    problem: str = ""
    """Why the tool found at ``path`` cannot be used, said after its name (``fails to run``,
    ``is a clang++ without the aie2 target (not Peano)``); empty when it can."""
    detail: str = ""
    """What shows the problem: the command asked and the first words of its answer."""
    plural: bool = False
    """Its name is plural (``AIE API headers``): "are missing"."""
    targets: tuple[str, ...] = ()
    """Peano only: the AIE targets its clang++ lists (``aie2``, ``aie2p``)."""

    @property
    def usable(self) -> bool:
        """Found, and nothing found wrong with it."""
        return self.path is not None and not self.problem

    @property
    def status(self) -> str:
        """``found``, ``MISSING`` or ``UNUSABLE`` (found, with a :attr:`problem`), as doctor
        prints it."""
        return "found" if self.usable else "MISSING" if self.path is None else "UNUSABLE"


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
        """Tools not found, or found but unusable (:attr:`Tool.problem`): what stops a compile
        (the compilers and headers only, with ``compile_only``)."""
        tools = [self.clang, self.aiecc, self.headers] if compile_only else self.all()
        return [t for t in tools if not t.usable]

    @property
    def lowering(self) -> bool:
        """aie-opt and aie-translate are both here: ``aiedsl build`` lowers with them."""
        return self.aie_opt.path is not None and self.aie_translate.path is not None

    @property
    def aiecc_spelling(self) -> AieccSpelling:
        """The option spelling the aiecc found takes (from its ``--help`` and its name)."""
        return aiecc_spelling(self.aiecc.help, self.aiecc.path.name if self.aiecc.path else "")

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


def _run(argv: list[str], env: Mapping[str, str],
         timeout: float = 30) -> subprocess.CompletedProcess[str] | str:
    """``argv`` run in an empty temporary directory, its output captured; or, when it could not
    be run or did not end within ``timeout`` seconds, why."""
    with tempfile.TemporaryDirectory(prefix="aiedsl-ask-") as scratch:
        try:
            return subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                                  env=dict(env), cwd=scratch, stdin=subprocess.DEVNULL,
                                  errors="replace")
        except subprocess.TimeoutExpired:
            return f"it did not answer within {timeout:g} s"
        except OSError as e:
            return e.strerror or str(e)


def _ask(argv: list[str], env: Mapping[str, str]) -> str | None:
    """What a tool prints (stdout, else stderr) for ``argv``, run in an empty temporary directory
    (None when it cannot run)."""
    r = _run(argv, env)
    if isinstance(r, str):
        return None
    return (r.stdout or r.stderr or "").strip()


def _failure(argv: list[str], r: subprocess.CompletedProcess[str] | str) -> str:
    """How ``argv`` failed, in one line: its exit code and the line of its output that says why
    (a Python traceback's last line, the exception; else the first line)."""
    said = f"`{' '.join([Path(argv[0]).name, *argv[1:]])}`"
    if isinstance(r, str):
        return f"{said}: {r}"
    lines = [line.strip() for line in tool_output(r.stderr or r.stdout or "").split("\n")
             if line.strip()]
    why = (lines[-1] if lines[0].startswith("Traceback") else lines[0]) if lines else "no output"
    return f"{said} exited {r.returncode}: {why[:300]}"


def _version(argv: list[str], env: Mapping[str, str], *, whole: bool = False) -> str:
    """What a tool says for ``--version`` on one line (``unknown`` if it will not say): the lines
    naming a version (LLVM tools print several), else the first; ``whole`` keeps every line."""
    lines = [line.strip() for line in tool_output(_ask(argv, env) or "").split("\n")
             if line.strip()]
    if not lines:
        return "unknown"
    named = [line for line in lines if "version" in line.lower()]
    return "; ".join(lines if whole else named or lines[:1])[:300]


def executable(folder: Path, name: str) -> Path | None:
    """The program ``name`` in ``folder``, as the system runs it: on Windows a file of that
    name or of it with an extension of PATHEXT (llvm-aie's ``bin\\clang++.exe``, mlir-aie's
    ``aiecc.exe``), where ``folder / name`` alone found nothing (a Windows tester); elsewhere an
    executable file. Only ``folder`` is looked in (``shutil.which`` looks in the working
    directory first on Windows: a ``clang++.exe`` there would stand for the install's)."""
    exts = [""]
    if sys.platform == "win32":  # PATHEXT's first, as Windows runs them (aiecc.exe, not aiecc)
        listed = os.environ.get("PATHEXT", ".COM;.EXE;.BAT;.CMD")
        exts = [e.lower() for e in listed.split(";") if e] + exts
    for ext in exts:
        p = folder / f"{name}{ext}"
        if p.is_file() and (sys.platform == "win32" or os.access(p, os.X_OK)):
            return p
    return None


def _find_peano(env: Mapping[str, str], peano: str | Path | None) -> Tool:
    candidates = []
    if peano is not None:
        candidates.append((Path(peano), "--peano"))
    elif env.get("PEANO_INSTALL_DIR"):
        candidates.append((Path(env["PEANO_INSTALL_DIR"]), "PEANO_INSTALL_DIR"))
    else:
        candidates.append((_site_packages() / "llvm-aie", "pip package llvm-aie"))
    for root, how in candidates:
        clang = executable(root / "bin", "clang++")
        if clang is not None:
            version = _version([str(clang), "--version"], env)
            targets, problem, detail = _aie_targets(clang, env)
            return Tool("Peano (llvm-aie)", clang, how, version, INSTALL["peano"],
                        problem=problem, detail=detail, targets=targets)
    root, how = candidates[0]
    return Tool("Peano (llvm-aie)", None, f"no bin/clang++ under {root} ({how})",
                install=INSTALL["peano"])


AIE_TARGETS = ("aie2", "aie2p")
"""The targets of npu1's and npu2's cores, as llvm-aie registers them (``aie``, ``aie2`` and
``aie2p``: ``LLVMInitializeAIETargetInfo``, llvm/lib/Target/AIE/TargetInfo/AIETargetInfo.cpp)."""


def _aie_targets(clang: Path, env: Mapping[str, str]) -> tuple[tuple[str, ...], str, str]:
    """(the AIE targets, problem, detail) of a clang++ that may be Peano, from its
    ``-print-targets`` (clang's list of the targets it was built with; one quick run, none of
    them compiled): any clang++ in a ``bin/`` under PEANO_INSTALL_DIR passed for Peano, and the
    kernels' compile then failed on ``--target=aie2-none-unknown-elf``."""
    argv = [str(clang), "-print-targets"]
    r = _run(argv, env, timeout=10)
    if isinstance(r, str) or r.returncode != 0:
        return (), "fails to list its targets", _failure(argv, r)
    listed = re.findall(r"^\s+(\S+)\s+- ", r.stdout.split("Registered Targets:", 1)[-1], re.M)
    targets = tuple(t for t in AIE_TARGETS if t in listed)
    if "aie2" not in targets:
        shown = ", ".join(listed[:6]) + (", ..." if len(listed) > 6 else "") or "none"
        return targets, "is a clang++ without the aie2 target (not Peano)", \
            f"`clang++ -print-targets` lists {shown}"
    return targets, "", ""


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
            p = executable(root / "bin", name)
            if p is not None:
                return _aiecc(p, how, env)
    looked = ", ".join(f"{r}/bin" for r, _ in roots)
    return Tool("aiecc (mlir-aie)", None, f"not on PATH, nor in {looked}",
                install=INSTALL["aiecc"])


def _aiecc(path: Path, how: str, env: Mapping[str, str]) -> Tool:
    """aiecc, its version and its help (read once: the option spelling it takes). One whose
    ``--help`` fails (an ``aiecc.py`` whose Python cannot import mlir-aie's ``aie`` package)
    fails on any design too: it is found, and unusable."""
    argv = [str(path), "--help"]
    r = _run(argv, env)
    if isinstance(r, str) or r.returncode != 0:
        return Tool("aiecc (mlir-aie)", path, how, install=INSTALL["aiecc"],
                    problem="fails to run", detail=_failure(argv, r))
    help_text = (r.stdout or r.stderr).strip()
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
        p = executable(root / "bin", name)
        if p is not None:
            return Tool(label, p, how, _version([str(p), "--version"], env), INSTALL["aie-opt"])
    looked = ", ".join(f"{r}/bin" for r, _ in roots)
    return Tool(label, None, f"not on PATH, nor in {looked}", install=INSTALL["aie-opt"])


def header_places(env: Mapping[str, str], aiecc: Path | None) -> Iterator[tuple[Path, str]]:
    """Where the AIE API headers are looked for, in order, as (install root, how): the rule of
    ``build.sh`` (:func:`~aiedsl.toolchain.commands.find_aiecc_script`), so that what doctor and
    ``--compile`` find is what ``build.sh`` compiles with. ``MLIR_AIE_INSTALL_DIR``; else the
    install ``aiecc`` came from (``<install>/bin/aiecc``, links followed); else, for pip's aiecc
    (a launcher script in its environment's ``bin/``), the mlir_aie package in the site-packages
    of the interpreter its first line names, which may be another environment than aiedsl's.
    That interpreter is asked only when the places before it hold no headers."""
    if env.get("MLIR_AIE_INSTALL_DIR"):
        yield Path(env["MLIR_AIE_INSTALL_DIR"]), "MLIR_AIE_INSTALL_DIR"
    if aiecc is None:
        return
    yield aiecc.resolve().parent.parent, "beside aiecc"
    python = launcher_python(aiecc)
    if python is not None:
        r = _run([str(python), "-c", PURELIB], env)
        if not isinstance(r, str) and r.returncode == 0 and r.stdout.strip():
            yield (Path(r.stdout.strip()) / PIP_PACKAGE,
                   f"pip package {PIP_PACKAGE} of aiecc's Python, {python}")


def _find_headers(env: Mapping[str, str], aiecc: Tool) -> Tool:
    looked = []
    for root, how in header_places(env, aiecc.path):
        inc = root / "include"
        if (inc / "aie_api" / "aie.hpp").is_file():
            return Tool("AIE API headers", inc, how, install=INSTALL["headers"], plural=True)
        looked.append(f"{inc}/aie_api")
    where = ", ".join(looked) or "MLIR_AIE_INSTALL_DIR is not set and aiecc was not found"
    return Tool("AIE API headers", None, f"no aie_api/aie.hpp ({where})",
                install=INSTALL["headers"], plural=True)


def _find_pyxrt() -> Tool:
    loaded = sys.modules.get("pyxrt")
    if loaded is not None:  # already imported (its spec may be gone)
        return Tool("pyxrt (XRT)", Path(getattr(loaded, "__file__", None) or "pyxrt"),
                    "import pyxrt", install=INSTALL["pyxrt"])
    spec = importlib.util.find_spec("pyxrt")
    if spec is None or spec.origin is None:
        return Tool("pyxrt (XRT)", None, "not importable", install=INSTALL["pyxrt"])
    return Tool("pyxrt (XRT)", Path(spec.origin), "import pyxrt", install=INSTALL["pyxrt"])
