"""The toolchain path, tested without the toolchain: discovery and ``doctor`` over fake install
trees, the exact command lines, logs, the manifest, the cache, tool failures, and the pyxrt calls
against a recording stand-in for pyxrt.

The fake tools here are shell scripts that record their arguments and write placeholder files;
they test aiedsl's driving of the tools, never what the real tools produce. The tests at the
end run the real Peano, aiecc and NPU, and skip (saying why) where those are absent.
"""

from __future__ import annotations

import inspect
import json
import os
import stat
import struct
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import aiedsl
from aiedsl.builddir.marker import read_marker
from aiedsl.errors import DesignError, ToolchainError
from aiedsl.toolchain.discover import find_tools
from aiedsl.toolchain.xrt import NpuSession
from tests.command_line import run_command

ROOT = Path(__file__).resolve().parents[1]
PASSTHROUGH = ROOT / "designs" / "passthrough.py"
KERNEL = "passthrough_i32_1024"

PEANO_TARGETS = """  Registered Targets:
    aie    - Xilinx AI Engine
    aie2   - Xilinx AIML Engine
    aie2p  - AMD AIE2p Engine"""
"""What llvm-aie's clang++ -print-targets prints (LLVM's printRegisteredTargetsForVersion, the
names and descriptions of llvm-aie's AIETargetInfo.cpp)."""

FAKE_CLANG = '''#!/bin/sh
# test double for Peano's clang++: records its arguments, writes the -o file
if [ "$1" = "--version" ]; then echo "clang version {version} (llvm-aie test double)"; exit 0; fi
if [ "$1" = "-print-targets" ]; then cat <<'TARGETS'
''' + PEANO_TARGETS + '''
TARGETS
exit 0; fi
echo "$@" >> "{log}"
{fail}
out=""; prev=""
for a in "$@"; do [ "$prev" = "-o" ] && out="$a"; prev="$a"; done
echo "object" > "$out"
'''

FAKE_AIECC = '''#!/bin/sh
# test double for aiecc ({flavor}): --help lists its options as the real one's does, an option
# it does not take is rejected as the real one rejects it (since mlir-aie PR 3066); it records its
# arguments and writes placeholder aie.xclbin and insts.bin
case "$1" in
  --version|--aie-version) echo "aiecc 1.2.3 (test double)"; exit 0 ;;
  --help) cat <<'HELP'
{help}
HELP
    exit 0 ;;
esac
echo "$@" >> "{log}"
echo "PEANO_INSTALL_DIR=$PEANO_INSTALL_DIR" >> "{log}"
for a in "$@"; do
  case "$a" in
    {accepted}) ;;
    -*) echo "aiecc: Unknown command line argument '$a'.  Try: 'aiecc --help'" >&2; exit 1 ;;
  esac
done
{fail}
printf 'xclbin2\\000' > aie.xclbin
printf '\\000\\001\\003\\006\\001\\001\\000\\000\\000\\000\\000\\000\\020\\000\\000\\000' > insts.bin
'''

AIECC_FLAVORS = {
    # mlir-aie before PR 3364 (e.g. 1e400306, 2026-03-14, the reference lowerings' version)
    "2026-03": (
        "USAGE: aiecc [options] <input file> [host source files...]\n\nOPTIONS:\n\n"
        "AIE Compiler Options:\n"
        "  --aie-generate-npu-insts   - Generate NPU instruction stream\n"
        "  --aie-generate-xclbin      - Generate xclbin\n"
        "  --aie-version              - Show version information\n"
        "  --no-xbridge               - Link using peano (disable xbridge)\n"
        "  --no-xchesscc              - Compile using peano (also disables xbridge)\n"
        "  --npu-insts-name=<string>  - Output instructions filename for NPU target\n"
        "  --xbridge                  - Link using xbridge\n"
        "  --xchesscc                 - Compile using xchesscc\n"
        "  --xclbin-name=<string>     - Output xclbin filename",
        "--aie-generate-xclbin|--aie-generate-npu-insts|--xclbin-name=*|--npu-insts-name=*|"
        "--no-xchesscc|--no-xbridge"),
    # PR 3364 (2026-07-21) to PR 3501 (2026-08-05): --get-* selectors (not listed one by one),
    # Chess still the default
    "2026-07": (
        "USAGE: aiecc [options] <input mlir> [-- <host cc args>...]\n\nOPTIONS:\n"
        "  --get=<name>               - Request graph output(s) by edge name (repeatable / "
        "comma-separated); named artifacts also have --get-<name> shorthands (e.g. "
        "--get-xclbin)\n"
        "  --no-xbridge               - Link cores with Peano lld instead of the Chess "
        "toolchain (xbridge/BCF)\n"
        "  --no-xchesscc              - Compile cores with Peano instead of the Chess toolchain "
        "(implies --no-xbridge)\n"
        "  --npu-insts-name=<string>  - Output NPU insts filename template (use {{0}} for "
        "multi-device)\n"
        "  --xchesscc                 - Compile cores with the Chess toolchain (xchesscc) "
        "instead of Peano\n"
        "  --xclbin-name=<string>     - Output xclbin filename template (use {{0}} for "
        "multi-device)",
        "--get-xclbin|--get-npu-insts|--xclbin-name=*|--npu-insts-name=*|--no-xchesscc|"
        "--no-xbridge"),
    # PR 3501 (2026-08-05) on: Peano the default, --no-xchesscc/--no-xbridge deleted
    "current": (
        "USAGE: aiecc [options] <input mlir> [-- <host cc args>...]\n\nOPTIONS:\n"
        "  --get=<name>               - Request graph output(s) by edge name (repeatable / "
        "comma-separated); named artifacts also have --get-<name> shorthands (e.g. "
        "--get-xclbin)\n"
        "  --npu-insts-name=<string>  - Output NPU insts filename template (use {{0}} for "
        "multi-device)\n"
        "  --xbridge                  - Link cores with the Chess toolchain (xbridge/BCF) "
        "instead of the default Peano lld; implies --xchesscc unless that is stated too\n"
        "  --xchesscc                 - Compile cores with the Chess toolchain (xchesscc) "
        "instead of the default Peano; implies --xbridge unless that is stated too\n"
        "  --xclbin-name=<string>     - Output xclbin filename template (use {{0}} for "
        "multi-device)",
        "--get-xclbin|--get-npu-insts|--xclbin-name=*|--npu-insts-name=*"),
}
AIECC_WORDS = {
    "2026-03": "--no-xchesscc --no-xbridge --aie-generate-xclbin --xclbin-name=aie.xclbin "
               "--aie-generate-npu-insts --npu-insts-name=insts.bin",
    "2026-07": "--no-xchesscc --no-xbridge --get-xclbin --xclbin-name=aie.xclbin "
               "--get-npu-insts --npu-insts-name=insts.bin",
    "current": "--get-xclbin --xclbin-name=aie.xclbin --get-npu-insts --npu-insts-name=insts.bin",
}
BFP16_WORD = " -DAIE_API_EMULATE_BFLOAT16_MMUL_WITH_BFP16 -fstack-usage"
"""What npu2's Peano line has before ``-fstack-usage`` that npu1's has not."""
PEANO_WORDS = ("-O2 -std=c++20 --target={arch}-none-unknown-elf -Wno-parentheses -Wno-attributes "
               "-Wno-macro-redefined -Wno-empty-body "
               "-Wno-missing-template-arg-list-after-template-kw -DNDEBUG "
               "-D__AIE_API_AIE_ADF_HPP__ -fstack-usage -ffunction-sections")


def fake_aiecc(log: Path | str, fail: str = "", flavor: str = "current") -> str:
    """The text of a fake aiecc of mlir-aie ``flavor`` (one of :data:`AIECC_FLAVORS`)."""
    help_text, accepted = AIECC_FLAVORS[flavor]
    return FAKE_AIECC.format(flavor=flavor, help=help_text, accepted=accepted, log=log, fail=fail)


def _script(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return path


@pytest.fixture
def fake_tools(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """A Peano tree, an mlir-aie tree (aiecc and aie_api headers) and an environment using them."""
    log = tmp_path / "tool-calls.log"
    peano = tmp_path / "peano"
    mlir_aie = tmp_path / "mlir-aie"
    _script(peano / "bin" / "clang++", FAKE_CLANG.format(version="19.0.0", log=log, fail=""))
    _script(mlir_aie / "bin" / "aiecc", fake_aiecc(log))
    (mlir_aie / "include" / "aie_api").mkdir(parents=True)
    (mlir_aie / "include" / "aie_api" / "aie.hpp").write_text("// test double\n")
    monkeypatch.setenv("PEANO_INSTALL_DIR", str(peano))
    monkeypatch.setenv("MLIR_AIE_INSTALL_DIR", str(mlir_aie))
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    monkeypatch.chdir(tmp_path)
    return {"log": log, "peano": peano, "mlir_aie": mlir_aie, "root": tmp_path}


@pytest.fixture
def no_tools(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("PEANO_INSTALL_DIR", raising=False)
    monkeypatch.delenv("MLIR_AIE_INSTALL_DIR", raising=False)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    run_env = dict(os.environ if env is None else env)
    run_env["PYTHONPATH"] = str(ROOT)
    run_env["COLUMNS"] = "400"  # one table row per line
    return run_command(*args, env=run_env)


def _words(text: str) -> str:
    return " ".join(text.split())


# -- discovery and doctor ----------------------------------------------------------------------

def test_find_tools_in_fake_install_trees(fake_tools: dict[str, Path]) -> None:
    tools = find_tools()
    assert tools.clang.path == fake_tools["peano"] / "bin" / "clang++"
    assert (tools.clang.how, tools.clang.version) == (
        "PEANO_INSTALL_DIR", "clang version 19.0.0 (llvm-aie test double)")
    assert tools.aiecc.path == fake_tools["mlir_aie"] / "bin" / "aiecc"
    assert (tools.aiecc.how, tools.aiecc.version) == ("MLIR_AIE_INSTALL_DIR",
                                                      "aiecc 1.2.3 (test double)")
    assert tools.headers.path == fake_tools["mlir_aie"] / "include"
    assert tools.missing(compile_only=True) == []


def test_peano_flag_beats_the_environment_and_aiecc_py_on_path(
        fake_tools: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    other = fake_tools["root"] / "other-peano"
    _script(other / "bin" / "clang++", FAKE_CLANG.format(version="20.1", log="/dev/null",
                                                         fail=""))
    old = fake_tools["root"] / "old" / "bin"
    _script(old / "aiecc.py", fake_aiecc("/dev/null"))
    monkeypatch.setenv("PATH", f"{old}:/usr/bin:/bin")
    tools = find_tools(peano=other)
    assert (tools.clang.path, tools.clang.how) == (other / "bin" / "clang++", "--peano")
    assert tools.env["PEANO_INSTALL_DIR"] == str(other)
    assert (tools.aiecc.path, tools.aiecc.how) == (old / "aiecc.py", "PATH")
    # the headers still come from MLIR_AIE_INSTALL_DIR
    assert tools.headers.path == fake_tools["mlir_aie"] / "include"


def test_doctor_on_this_machine_names_what_is_missing_and_how_to_get_it(no_tools: Path) -> None:
    r = _cli("doctor")
    assert r.returncode == 4
    text = _words(r.stdout)
    assert "Peano (llvm-aie) MISSING" in text and "pyxrt (XRT) MISSING" in text
    assert _words(
        "Missing Peano (llvm-aie). To get it: pip install llvm-aie -f "
        "https://github.com/Xilinx/llvm-aie/releases/expanded_assets/nightly, then export "
        "PEANO_INSTALL_DIR=$(python -c \"import sysconfig; "
        "print(sysconfig.get_paths()['purelib'])\")/llvm-aie") in text
    assert _words(
        "Missing aiecc (mlir-aie). To get it: pip install mlir_aie -f "
        "https://github.com/Xilinx/mlir-aie/releases/expanded_assets/latest-wheels-4 (puts aiecc "
        "on PATH), or export MLIR_AIE_INSTALL_DIR=<your mlir-aie install>") in text
    assert _words(
        "Missing pyxrt (XRT). To get it: install the amdxdna driver and XRT "
        "(https://github.com/amd/xdna-driver), then source /opt/xilinx/xrt/setup.sh") in text
    assert _words("Without them aiedsl still checks, builds (MLIR and C++) and simulates "
                  "designs: aiedsl run uses the simulator.") in text


def test_doctor_with_the_compilers_found(fake_tools: dict[str, Path]) -> None:
    r = _cli("doctor")
    text = _words(r.stdout)
    assert "Peano (llvm-aie) found" in text and "aiecc (mlir-aie) found" in text
    assert "clang version 19.0.0 (llvm-aie test double)" in text
    assert r.returncode == 4  # pyxrt and the NPU are still missing here


# -- compiling ---------------------------------------------------------------------------------

def test_compile_runs_the_exact_commands(fake_tools: dict[str, Path]) -> None:
    art = aiedsl.build(PASSTHROUGH, output="out", compile=True)
    out = fake_tools["root"] / "out"
    peano, mlir_aie = fake_tools["peano"], fake_tools["mlir_aie"]
    assert fake_tools["log"].read_text().splitlines() == [
        f"{PEANO_WORDS.format(arch='aie2')} -I{mlir_aie}/include "
        f"-I{mlir_aie}/aie_runtime_lib/AIE2 -c kernels/{KERNEL}.cc -o {KERNEL}.o",
        f"{AIECC_WORDS['current']} aie.mlir",
        f"PEANO_INSTALL_DIR={peano}",
    ]
    assert (out / f"{KERNEL}.o").read_text() == "object\n"
    assert (out / "logs" / f"{KERNEL}.log").read_text().splitlines()[0] == (
        f"$ {peano}/bin/clang++ {PEANO_WORDS.format(arch='aie2')} -I{mlir_aie}/include "
        f"-I{mlir_aie}/aie_runtime_lib/AIE2 -c kernels/{KERNEL}.cc -o {KERNEL}.o")
    assert (out / "logs" / "aiecc.log").read_text().startswith(f"$ {mlir_aie}/bin/aiecc ")
    assert art.compiled is not None and not art.compiled.cached


@pytest.mark.parametrize("flavor", sorted(AIECC_FLAVORS))
def test_compile_speaks_the_installed_aiecc(fake_tools: dict[str, Path], flavor: str) -> None:
    """The aiecc found is asked for --help once (with its version) and run with the spelling
    it offers; each fake rejects the other spellings, as the real aiecc does."""
    _script(fake_tools["mlir_aie"] / "bin" / "aiecc", fake_aiecc(fake_tools["log"], flavor=flavor))
    tools = find_tools()
    assert tools.aiecc.help.startswith("USAGE: aiecc")
    art = aiedsl.build(PASSTHROUGH, output="out", compile=True)
    assert fake_tools["log"].read_text().splitlines()[1] == f"{AIECC_WORDS[flavor]} aie.mlir"
    assert art.compiled is not None and (fake_tools["root"] / "out" / "aie.xclbin").is_file()
    # --help ran in a scratch directory: the fake's outputs did not land where aiedsl runs
    assert sorted(p.name for p in fake_tools["root"].iterdir()) == [
        "mlir-aie", "out", "peano", "tool-calls.log"]


@pytest.mark.parametrize("flavor", sorted(AIECC_FLAVORS))
def test_build_sh_speaks_whichever_aiecc_runs_it(fake_tools: dict[str, Path],
                                                  flavor: str) -> None:
    """build.sh is written before anyone knows the aiecc that will run it: it asks that aiecc's
    --help and picks the spelling, and runs the same command lines as --compile."""
    _script(fake_tools["mlir_aie"] / "bin" / "aiecc", fake_aiecc(fake_tools["log"], flavor=flavor))
    aiedsl.build(PASSTHROUGH, output="out")  # the tools are not run: only build.sh is written
    assert not fake_tools["log"].exists()
    env = {**os.environ, "PATH": f"{fake_tools['mlir_aie'] / 'bin'}:/usr/bin:/bin"}
    r = subprocess.run(["bash", "out/build.sh"], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    peano = fake_tools["peano"]
    assert fake_tools["log"].read_text().splitlines() == [
        f"{PEANO_WORDS.format(arch='aie2')} -I{fake_tools['mlir_aie']}/include "
        f"-I{fake_tools['mlir_aie']}/aie_runtime_lib/AIE2 -c kernels/{KERNEL}.cc -o {KERNEL}.o",
        f"{AIECC_WORDS[flavor]} aie.mlir",
        f"PEANO_INSTALL_DIR={peano}",
    ]
    assert (fake_tools["root"] / "out" / "aie.xclbin").read_bytes() == b"xclbin2\0"


def test_a_compiled_build_without_its_marker_holds_only_what_builds_write(
        fake_tools: dict[str, Path]) -> None:
    """What a refusal tells from an older aiedsl's build, safe to delete: what --compile and a
    run of build.sh add are among what builds write; a file of the user's is not."""
    from aiedsl.builddir.marker import MARKER
    from aiedsl.emit import holds_only_a_build

    aiedsl.build(PASSTHROUGH, output="out", compile=True)
    env = {**os.environ, "PATH": f"{fake_tools['mlir_aie'] / 'bin'}:/usr/bin:/bin"}
    r = subprocess.run(["bash", "out/build.sh"], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    out = fake_tools["root"] / "out"
    (out / "aie.mlir.prj").mkdir(exist_ok=True)
    (out / "aie.mlir.prj" / "main_core_0_2.elf").write_text("elf\n")  # as aiecc leaves
    (out / MARKER).unlink()
    assert {"logs/", "manifest.json", "cache.json", f"{KERNEL}.o", ".aiedsl-script.list"} <= {
        p.name + ("/" if p.is_dir() else "") for p in out.iterdir()}
    assert holds_only_a_build(out)
    (out / "notes.o").write_text("mine\n")  # no kernel of that name
    assert not holds_only_a_build(out)


@pytest.mark.parametrize("where", ["aiecc.py on PATH", "aiecc.py in MLIR_AIE_INSTALL_DIR/bin",
                                   "aiecc in MLIR_AIE_INSTALL_DIR/bin"])
def test_build_sh_finds_aiecc_where_discovery_does(fake_tools: dict[str, Path], where: str,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    aiecc = fake_tools["mlir_aie"] / "bin" / "aiecc"
    name = where.split()[0]
    if name == "aiecc.py":
        aiecc.rename(aiecc.with_name("aiecc.py"))
    path = "/usr/bin:/bin"
    if where.endswith("on PATH"):  # and MLIR_AIE_INSTALL_DIR without it
        path = f"{fake_tools['mlir_aie'] / 'bin'}:{path}"
        (fake_tools["root"] / "headers-only" / "include").mkdir(parents=True)
        monkeypatch.setenv("MLIR_AIE_INSTALL_DIR", str(fake_tools["root"] / "headers-only"))
    assert find_tools({**os.environ, "PATH": path}).aiecc.path == \
        fake_tools["mlir_aie"] / "bin" / name  # where discovery finds it, build.sh does
    aiedsl.build(PASSTHROUGH, output="out")
    r = subprocess.run(["bash", "out/build.sh"], capture_output=True, text=True,
                       env={**os.environ, "PATH": path})
    assert r.returncode == 0, r.stderr
    assert fake_tools["log"].read_text().splitlines()[1] == f"{AIECC_WORDS['current']} aie.mlir"
    assert (fake_tools["root"] / "out" / "aie.xclbin").read_bytes() == b"xclbin2\0"


def test_relative_tool_paths_are_taken_from_where_the_command_runs(
        fake_tools: dict[str, Path]) -> None:
    """PEANO_INSTALL_DIR=relp and MLIR_AIE_INSTALL_DIR=fastml (a tester's): doctor said found,
    and --compile failed with "No such file or directory: 'relp/bin/clang++'", the tools
    running in the build's staging folder. Both take them from the working directory, once,
    and the tools are handed absolute paths."""
    root, log = fake_tools["root"], fake_tools["log"]
    (root / "bin").mkdir()
    env = {**os.environ, "PEANO_INSTALL_DIR": "peano", "MLIR_AIE_INSTALL_DIR": "mlir-aie",
           "PATH": "bin:/usr/bin:/bin"}
    doctor = _words(_cli("doctor", env=env).stdout)
    assert "Peano (llvm-aie) found" in doctor and "aiecc (mlir-aie) found" in doctor
    assert "AIE API headers found" in doctor
    r = _cli("build", str(PASSTHROUGH), "-o", "out", "--compile", env=env)
    assert r.returncode == 0, r.stderr
    peano, mlir_aie = fake_tools["peano"], fake_tools["mlir_aie"]
    assert log.read_text().splitlines() == [
        f"{PEANO_WORDS.format(arch='aie2')} -I{mlir_aie}/include "
        f"-I{mlir_aie}/aie_runtime_lib/AIE2 -c kernels/{KERNEL}.cc -o {KERNEL}.o",
        f"{AIECC_WORDS['current']} aie.mlir",
        f"PEANO_INSTALL_DIR={peano}",
    ]
    assert (root / "out" / "logs" / f"{KERNEL}.log").read_text().startswith(
        f"$ {peano}/bin/clang++ ")
    # --peano too, and the folders of PATH: what the tools are handed
    log.unlink()
    tools = find_tools({**env, "PEANO_INSTALL_DIR": ""}, peano="peano")
    assert (tools.clang.path, tools.clang.how) == (peano / "bin" / "clang++", "--peano")
    assert (tools.env["PEANO_INSTALL_DIR"], tools.env["MLIR_AIE_INSTALL_DIR"]) == (
        str(peano), str(mlir_aie))
    assert tools.env["PATH"] == f"{root / 'bin'}:/usr/bin:/bin"
    r = _cli("build", str(PASSTHROUGH), "-o", "out2", "--compile", "--peano", "peano",
             env={**env, "PEANO_INSTALL_DIR": str(root / "nowhere")})
    assert r.returncode == 0, r.stderr
    assert log.read_text().splitlines()[-1] == f"PEANO_INSTALL_DIR={peano}"


def test_build_sh_takes_relative_install_dirs_from_where_it_is_run(
        fake_tools: dict[str, Path]) -> None:
    """build.sh moves to its own folder first: a relative PEANO_INSTALL_DIR named nothing
    there, and a relative MLIR_AIE_INSTALL_DIR made it say "set MLIR_AIE_INSTALL_DIR", which
    was set. It takes both from the folder it is run from, before it moves."""
    aiedsl.build(PASSTHROUGH, output="out")
    env = {**os.environ, "PEANO_INSTALL_DIR": "peano", "MLIR_AIE_INSTALL_DIR": "./mlir-aie",
           "PATH": "/usr/bin:/bin"}
    r = subprocess.run(["bash", "out/build.sh"], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    root = fake_tools["root"]
    assert fake_tools["log"].read_text().splitlines() == [
        f"{PEANO_WORDS.format(arch='aie2')} -I{root}/./mlir-aie/include "
        f"-I{root}/./mlir-aie/aie_runtime_lib/AIE2 -c kernels/{KERNEL}.cc -o {KERNEL}.o",
        f"{AIECC_WORDS['current']} aie.mlir",
        f"PEANO_INSTALL_DIR={root}/peano",
    ]
    assert (root / "out" / "aie.xclbin").read_bytes() == b"xclbin2\0"


@pytest.mark.parametrize("how", ["CDPATH", "a link to it", "a folder name ending in a newline"])
def test_build_sh_builds_in_its_own_folder_and_nowhere_else(fake_tools: dict[str, Path],
                                                            how: str) -> None:
    """A tester's: build.sh went to its folder with cd "$(dirname "$0")". With CDPATH exported,
    cd took a folder of the same relative name under CDPATH and compiled there, into another
    build; run through a link to it, it wrote its record in the link's folder; in a folder whose
    name ends in a newline, $(...) dropped the newline and it compiled in the sibling folder."""
    root = fake_tools["root"]
    env = {**os.environ, "PATH": f"{fake_tools['mlir_aie'] / 'bin'}:/usr/bin:/bin"}
    out = "x\n" if how.startswith("a folder") else "out"
    aiedsl.build(PASSTHROUGH, output=out)
    script = f"{out}/build.sh"
    if how == "CDPATH":
        decoy = root / "other" / "out"  # another build of the same relative name
        decoy.mkdir(parents=True)
        env["CDPATH"] = str(root / "other")
    elif how == "a link to it":
        decoy = root / "elsewhere"
        decoy.mkdir()
        (decoy / "build.sh").symlink_to(Path("..") / out / "build.sh")
        script = "elsewhere/build.sh"
    else:
        decoy = root / "x"  # the name without its newline
        decoy.mkdir()
    before = sorted(os.listdir(decoy))
    r = subprocess.run(["bash", script], capture_output=True, text=True, env=env)
    assert (r.returncode, r.stdout) == (0, ""), r.stderr
    assert sorted(os.listdir(decoy)) == before  # nothing written there
    built = root / out
    assert (built / "aie.xclbin").read_bytes() == b"xclbin2\0"
    assert {".aiedsl-script.list", "insts.bin", f"{KERNEL}.o"} <= set(os.listdir(built))
    assert fake_tools["log"].read_text().splitlines()[0].endswith(
        f"-c kernels/{KERNEL}.cc -o {KERNEL}.o")


def test_build_sh_without_aiecc_says_what_it_needs(fake_tools: dict[str, Path]) -> None:
    (fake_tools["mlir_aie"] / "bin" / "aiecc").unlink()
    aiedsl.build(PASSTHROUGH, output="out")
    r = subprocess.run(["bash", "out/build.sh"], capture_output=True, text=True,
                       env={**os.environ, "PATH": "/usr/bin:/bin"})
    assert r.returncode == 127
    assert r.stderr == ("build.sh: no aiecc: put the aiecc (or aiecc.py) of mlir-aie on PATH, "
                        "or set MLIR_AIE_INSTALL_DIR to an mlir-aie install whose bin/ holds "
                        "it\n")
    # it looks first: no kernel was compiled for nothing
    assert not fake_tools["log"].exists() or not fake_tools["log"].read_text()


def test_build_sh_takes_the_headers_from_beside_aiecc_without_mlir_aie_install_dir(
        fake_tools: dict[str, Path]) -> None:
    """A docs tester's: README's pip route exports only PEANO_INSTALL_DIR, and build.sh stopped
    at once (MLIR_AIE_INSTALL_DIR unset), though aiecc was on PATH and the headers beside it,
    where --compile and doctor find them."""
    aiedsl.build(PASSTHROUGH, output="out")
    env = {k: v for k, v in os.environ.items() if k != "MLIR_AIE_INSTALL_DIR"}
    env["PATH"] = f"{fake_tools['mlir_aie'] / 'bin'}:/usr/bin:/bin"
    r = subprocess.run(["bash", "out/build.sh"], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    assert f"-I{fake_tools['mlir_aie'].resolve()}/include" in fake_tools["log"].read_text()


def test_build_sh_finds_the_headers_of_a_pip_installed_mlir_aie(fake_tools: dict[str, Path]
                                                                ) -> None:
    """The reviewer's: pip writes aiecc as a launcher script in the environment's bin/, and the
    headers are in site-packages/mlir_aie/include, not beside it: build.sh and doctor looked in
    <env>/include."""
    root = fake_tools["root"]
    env_bin, site = root / "env" / "bin", root / "env" / "site"
    (site / "mlir_aie" / "include" / "aie_api").mkdir(parents=True)
    (site / "mlir_aie" / "include" / "aie_api" / "aie.hpp").write_text("// test double\n")
    # a stand-in interpreter: -c prints its purelib; a script it runs as sh
    _script(env_bin / "python", f'#!/bin/sh\nif [ "$1" = -c ]; then echo {site}; exit 0; fi\n'
            'exec /bin/sh "$@"\n')
    launcher = (fake_tools["mlir_aie"] / "bin" / "aiecc").read_text().split("\n", 1)[1]
    _script(env_bin / "aiecc", f"#!{env_bin / 'python'}\n" + launcher)
    aiedsl.build(PASSTHROUGH, output="out")
    env = {k: v for k, v in os.environ.items() if k != "MLIR_AIE_INSTALL_DIR"}
    env["PATH"] = f"{env_bin}:/usr/bin:/bin"
    r = subprocess.run(["bash", "out/build.sh"], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    assert f"-I{site}/mlir_aie/include" in fake_tools["log"].read_text()


def test_build_sh_stops_when_aiecc_rejects_its_command(fake_tools: dict[str, Path]) -> None:
    """An aiecc whose help names neither spelling gets the current one; if it rejects it,
    build.sh stops there (set -e) with aiecc's message."""
    _script(fake_tools["mlir_aie"] / "bin" / "aiecc", FAKE_AIECC.format(
        flavor="no help", help="", accepted="--only-this", log=fake_tools["log"], fail=""))
    aiedsl.build(PASSTHROUGH, output="out")
    env = {**os.environ, "PATH": f"{fake_tools['mlir_aie'] / 'bin'}:/usr/bin:/bin"}
    r = subprocess.run(["bash", "out/build.sh"], capture_output=True, text=True, env=env)
    assert r.returncode == 1
    assert "aiecc: Unknown command line argument '--get-xclbin'." in r.stderr
    assert not (fake_tools["root"] / "out" / "aie.xclbin").exists()


def test_build_sh_quotes_the_aiecc_choice() -> None:
    """The spelling choice is shell text from the templates commands.py renders
    (find_aiecc.sh.j2, aiecc.sh.j2); every word they are given is quoted by shell_line. The
    one command substitution is constant text: the install aiecc came from, for the headers
    when MLIR_AIE_INSTALL_DIR does not hold them."""
    from aiedsl.toolchain.commands import aiecc_argv, shell_line

    script = shell_line(aiecc_argv())
    assert [line for line in script.splitlines() if "$(" in line] == [
        '  MLIR_AIE_INSTALL_DIR=$(dirname -- "$(dirname -- "$(readlink -f -- "$(command -v -- '
        '"$aiecc")")")")',
        '  { IFS= read -r shebang || true; IFS= read -r launch || true; } < "$(command -v -- '
        '"$aiecc")"',
        '        MLIR_AIE_INSTALL_DIR=$("$python" -c \'import sysconfig; '
        'print(sysconfig.get_paths()["purelib"])\')/mlir_aie']
    assert "  outputs=(--aie-generate-xclbin --xclbin-name=aie.xclbin --aie-generate-npu-insts " \
           "--npu-insts-name=insts.bin)" in script.splitlines()
    assert script.splitlines()[-1] == \
        '"$aiecc" ${backend[@]+"${backend[@]}"} ${outputs[@]+"${outputs[@]}"} aie.mlir'


def test_peano_line_keeps_stock_aie_api_off_adf_h() -> None:
    """mlir-aie PR 3262: stock aie_api includes adf.h under Peano unless its guard is
    pre-defined; makefile-common's warning flags come along. On npu2 the AIE API macro that
    runs a bf16 mmul on the bfp16 unit follows aiedsl's defines, as IRON's AIE2P GEMM passes
    it; npu1's line has none of it."""
    from aiedsl.targets import get_target
    from aiedsl.toolchain.commands import kernel_compile_argv, shell_line

    assert shell_line(kernel_compile_argv(get_target("npu2"), "kernels/k.cc", "k.o")) == (
        f'"$PEANO_INSTALL_DIR"/bin/clang++ '
        f'{PEANO_WORDS.format(arch="aie2p").replace(" -fstack-usage", BFP16_WORD)} '
        '-I"$MLIR_AIE_INSTALL_DIR"/include -I"$MLIR_AIE_INSTALL_DIR"/aie_runtime_lib/AIE2P '
        '-c kernels/k.cc -o k.o')
    assert shell_line(kernel_compile_argv(get_target("npu1"), "kernels/k.cc", "k.o")) == (
        f'"$PEANO_INSTALL_DIR"/bin/clang++ {PEANO_WORDS.format(arch="aie2")} '
        '-I"$MLIR_AIE_INSTALL_DIR"/include -I"$MLIR_AIE_INSTALL_DIR"/aie_runtime_lib/AIE2 '
        '-c kernels/k.cc -o k.o')


@pytest.mark.parametrize("help_text, spelling", [
    ("", ("get", False)),
    ("usage: aiecc.py [-h] ...\n  --aie-generate-xclbin  Generate xclbin\n"
     "  --no-xchesscc         Compile using peano", ("generate", True)),
    ("  --get=<name>  - ... (e.g. --get-xclbin)\n  --xchesscc  - ... instead of the default "
     "Peano; implies --xbridge", ("get", False)),
    # an option named inside another's description is not offered
    ("  --xchesscc  - use this, not --no-xchesscc or --aie-generate-xclbin", ("get", False)),
])
def test_aiecc_spelling_from_its_help(help_text: str, spelling: tuple[str, bool]) -> None:
    from aiedsl.toolchain.commands import aiecc_spelling

    got = aiecc_spelling(help_text)
    assert (got.outputs, got.peano_flags) == spelling


def test_npu2_kernels_compile_for_aie2p(fake_tools: dict[str, Path]) -> None:
    aiedsl.build(PASSTHROUGH, output="out", device="npu2_1col", compile=True)
    line = fake_tools["log"].read_text().splitlines()[0]
    assert "--target=aie2p-none-unknown-elf" in line
    assert " -DAIE_API_EMULATE_BFLOAT16_MMUL_WITH_BFP16 " in line


def test_manifest_records_design_tools_and_buffer_abi(fake_tools: dict[str, Path]) -> None:
    aiedsl.build(ROOT / "designs" / "gemm_bf16.py", defines={"M": 256, "K": 128, "N": 256},
                 output="out", compile=True)
    manifest = json.loads((fake_tools["root"] / "out" / "manifest.json").read_text())
    key = manifest.pop("cache_key")
    assert len(key) == 64
    assert manifest == {
        "design": "gemm_bf16", "device": "npu1", "aiedsl": aiedsl.__version__,
        "tools": {"Peano (llvm-aie)": "clang version 19.0.0 (llvm-aie test double)",
                  "aiecc (mlir-aie)": "aiecc 1.2.3 (test double)", "AIE API headers": ""},
        "xclbin": "aie.xclbin", "kernel": "MLIR_AIE", "opcode": 3,
        "instructions": {"file": "insts.bin", "group_id": 1, "words": 4},
        "buffers": [
            {"group_id": 3, "name": "A", "shape": [256, 128], "dtype": "bfloat16",
             "bytes": 65536, "direction": "in"},
            {"group_id": 4, "name": "B", "shape": [128, 256], "dtype": "bfloat16",
             "bytes": 65536, "direction": "in"},
            {"group_id": 5, "name": "C", "shape": [256, 256], "dtype": "float32",
             "bytes": 262144, "direction": "out"}],
        "ops_per_run": 2 * 256 * 128 * 256,
        "kernel_objects": ["zero_f32_4096.o", "matmul_bf16_f32_64x64x64_4x8x4.o"],
        "program_memory": {"bytes_per_core": 16384, "used": {},  # the fake leaves no ELF
                           "unread": [f"core[{c},{r}]" for r in range(4) for c in range(4)]},
        "stack": {"bytes_per_core": {f"core[{c},{r}]": 1024 for c in range(4) for r in range(4)},
                  "kernel_frames": {}},  # nor stack usage files
    }


def test_unchanged_design_is_not_recompiled(fake_tools: dict[str, Path]) -> None:
    aiedsl.build(PASSTHROUGH, output="out", compile=True)
    calls = fake_tools["log"].read_text()
    r = _cli("build", str(PASSTHROUGH), "-o", "out", "--compile")
    assert r.returncode == 0, r.stderr
    assert "aie.xclbin and insts.bin are up to date (nothing changed since they were built" \
        in _words(r.stdout)
    assert fake_tools["log"].read_text() == calls  # no tool ran


@pytest.mark.parametrize("name", ["insts.bin", "aie.xclbin"])
def test_an_output_changed_since_it_was_compiled_is_compiled_again(
        fake_tools: dict[str, Path], name: str) -> None:
    """(a CI tester) A cache restored in part, or a file cut short: the inputs are unchanged, so
    the outputs were taken as up to date."""
    aiedsl.build(PASSTHROUGH, output="out", compile=True)
    out = fake_tools["root"] / "out"
    good = (out / name).read_bytes()
    before = len(fake_tools["log"].read_text().splitlines())
    with open(out / name, "ab") as f:
        f.write(b"garbage!")
    art = aiedsl.build(PASSTHROUGH, output="out", compile=True)
    assert art.compiled is not None and not art.compiled.cached
    assert len(fake_tools["log"].read_text().splitlines()) == before + 3
    assert (out / name).read_bytes() == good
    assert aiedsl.build(PASSTHROUGH, output="out", compile=True).compiled.cached  # type: ignore


@pytest.mark.parametrize("change", ["define", "tool version"])
def test_a_change_recompiles(fake_tools: dict[str, Path], change: str) -> None:
    aiedsl.build(PASSTHROUGH, output="out", compile=True)
    before = len(fake_tools["log"].read_text().splitlines())
    defines = None
    if change == "define":
        defines = {"TILE": 512}
    else:
        _script(fake_tools["peano"] / "bin" / "clang++",
                FAKE_CLANG.format(version="19.0.1", log=fake_tools["log"], fail=""))
    art = aiedsl.build(PASSTHROUGH, defines=defines, output="out", compile=True)
    assert art.compiled is not None and not art.compiled.cached
    assert len(fake_tools["log"].read_text().splitlines()) == before + 3


@pytest.mark.parametrize("change", ["define", "tool version"])
def test_an_aiecc_that_writes_nothing_is_not_credited_with_the_old_outputs(
        fake_tools: dict[str, Path], change: str) -> None:
    aiedsl.build(PASSTHROUGH, output="out", compile=True)
    out = fake_tools["root"] / "out"
    # exits 0 without writing: the previous build's aie.xclbin and insts.bin must not pass
    _script(fake_tools["mlir_aie"] / "bin" / "aiecc", fake_aiecc(fake_tools["log"], "exit 0"))
    defines = ["-D", "TILE=512"] if change == "define" else []
    if change == "tool version":  # the same aie.mlir: the old outputs are carried, then dropped
        _script(fake_tools["peano"] / "bin" / "clang++",
                FAKE_CLANG.format(version="19.0.1", log=fake_tools["log"], fail=""))
    r = _cli("build", str(PASSTHROUGH), *defines, "-o", "out", "--compile")
    assert r.returncode == 5
    # (the progress display, not drawn off a terminal, leaves an empty line first)
    assert r.stderr.lstrip("\n") == (
        "error [aiecc]: aiecc finished but did not write aie.xclbin, insts.bin\n"
        "  found: see out/logs/aiecc.log\n"
        "  fix: check the aiecc version (aiedsl emits mlir-aie's 2026 syntax)\n")
    assert not any((out / name).exists() for name in
                   ("aie.xclbin", "insts.bin", "manifest.json", "cache.json"))
    assert {"aie.xclbin", "insts.bin"}.isdisjoint(read_marker(out)["files"])  # type: ignore


def test_a_rebuild_of_a_changed_design_drops_the_old_compiled_outputs(
        fake_tools: dict[str, Path]) -> None:
    aiedsl.build(PASSTHROUGH, output="out", compile=True)
    out = fake_tools["root"] / "out"
    compiled = {n: (out / n).read_bytes() for n in ("aie.xclbin", "insts.bin", "manifest.json")}
    aiedsl.build(PASSTHROUGH, output="out")  # unchanged: kept, and still a cache hit
    assert {n: (out / n).read_bytes() for n in compiled} == compiled
    art = aiedsl.build(PASSTHROUGH, output="out", compile=True)
    assert art.compiled is not None and art.compiled.cached
    aiedsl.build(PASSTHROUGH, defines={"TILE": 512}, output="out")  # changed: dropped
    assert sorted(p.name for p in out.iterdir()) == [
        ".aiedsl-build.json", "aie.mlir", "build.sh", "design.json", "kernels", "map.svg",
        "report.txt"]


def test_build_compile_without_tools_writes_the_mlir_and_exits_4(no_tools: Path) -> None:
    r = _cli("build", str(PASSTHROUGH), "-o", "out", "--compile")
    assert r.returncode == 4
    assert r.stderr.splitlines()[0] == (
        "error [toolchain]: cannot compile passthrough: Peano (llvm-aie), aiecc (mlir-aie) and "
        "AIE API headers are missing")
    assert r.stderr.splitlines()[-1] == (
        "  fix: install them; meanwhile the MLIR and C++ are in out/ (build.sh "
        "compiles them by hand) and `aiedsl run` uses the simulator; `aiedsl doctor` shows "
        "what aiedsl finds")
    written = sorted(p.name for p in (no_tools / "out").iterdir())
    assert written == [".aiedsl-build.json", "aie.mlir", "build.sh", "design.json", "kernels",
                       "map.svg", "report.txt"]


def test_a_compile_from_python_without_tools_is_told_at_its_line(no_tools: Path) -> None:
    """From Python, the error named no line, and its fix the command line's `aiedsl run`."""
    with pytest.raises(ToolchainError) as e:
        aiedsl.build(PASSTHROUGH, output="out", compile=True)
    line = inspect.currentframe().f_lineno - 1  # type: ignore[union-attr]
    assert str(e.value).splitlines()[0].endswith(
        f"tests/test_toolchain.py:{line}: error [toolchain]: cannot compile passthrough: "
        "Peano (llvm-aie), aiecc (mlir-aie) and AIE API headers are missing")
    assert e.value.fix == (
        "install them; meanwhile the MLIR and C++ are in out/ (build.sh compiles them by hand) "
        "and run() uses the simulator; `aiedsl doctor` shows what aiedsl finds")
    art = aiedsl.build(PASSTHROUGH, output="out")
    with pytest.raises(ToolchainError) as e:
        art.compile()
    line = inspect.currentframe().f_lineno - 1  # type: ignore[union-attr]
    assert e.value.loc is not None and e.value.loc.line == line
    assert e.value.loc.file.endswith("tests/test_toolchain.py")


def test_aiecc_failure_names_the_command_its_output_and_the_design_line(
        fake_tools: dict[str, Path]) -> None:
    fail = ('echo "loading aie.mlir"; '
            'echo "designs/passthrough.py:18:0: error: \'aie.objectfifo\' op does not fit"; '
            'exit 1')
    _script(fake_tools["mlir_aie"] / "bin" / "aiecc", fake_aiecc(fake_tools["log"], fail))
    handle = aiedsl.build(PASSTHROUGH, output="out").handle
    with pytest.raises(ToolchainError) as excinfo:
        aiedsl.build(handle, output="out", compile=True)
    e = excinfo.value
    assert e.exit_code == 5
    out = fake_tools["root"] / "out"
    mlir_aie = fake_tools["mlir_aie"]
    assert str(e) == (  # the design file as it is: the tool printed its last parts
        f"{PASSTHROUGH}:18: error [aiecc]: aiecc failed (exit 1)\n"
        f"  $ {mlir_aie}/bin/aiecc {AIECC_WORDS['current']} aie.mlir\n"
        "    loading aie.mlir\n"
        "    designs/passthrough.py:18:0: error: 'aie.objectfifo' op does not fit\n"
        "  fix: the whole output is in out/logs/aiecc.log"
    )
    assert not (out / "manifest.json").exists()


def test_an_mlir_aie_that_refuses_the_spelling_aiedsl_writes_is_said_to_be_newer(
        fake_tools: dict[str, Path]) -> None:
    """mlir-aie 1.3.5 (July 2026) takes aie.use_lock's count and rtp_write's value as SSA
    values; its aiecc fails on the first it reads, at a line of aie.mlir the design's line
    does not explain (an IRON user's tester). The failure says so. The fake aiecc points at
    the first rtp_write of threshold_rtp's aie.mlir."""
    design = ROOT / "designs" / "threshold_rtp.py"
    handle = aiedsl.build(design, output="out").handle
    mlir = (fake_tools["root"] / "out" / "aie.mlir").read_text().splitlines()
    line = next(i for i, t in enumerate(mlir, 1) if "aiex.npu.rtp_write(" in t)
    fail = f'echo "aie.mlir:{line}:40: error: expected SSA operand"; exit 1'
    _script(fake_tools["mlir_aie"] / "bin" / "aiecc", fake_aiecc(fake_tools["log"], fail))
    with pytest.raises(ToolchainError) as excinfo:
        aiedsl.build(handle, output="out", compile=True)
    assert str(excinfo.value).endswith(
        "  fix: the whole output is in out/logs/aiecc.log; the MLIR was written in mlir-aie's "
        "spelling as of upstream 1e400306 (2026-03-14), and this mlir-aie refuses its "
        "aiex.npu.rtp_write: later mlir-aie takes aie.use_lock's count and "
        "aiex.npu.rtp_write's value as SSA values (PRs 3308 and 3225, mlir-aie 1.3.5, July "
        "2026) and, after its objectfifo rework, returns aie.objectfifo.acquire's elements as "
        "memrefs: build with --mlir-syntax 2026-11 (mlir_syntax=\"2026-11\" from Python), "
        "written from mlir-aie's op definitions and not yet run through its parser, or use an "
        "mlir_aie from before them (mlir-air pinned 1.3.4.dev19+g92e9475 until July 2026)")


@pytest.mark.parametrize("said,ops", [
    ("d.py:13:0: error: 'aie.objectfifo.acquire' op result #0 must be variadic of memref of "
     "any type values, but got '!aie.objectfifosubview<memref<64xi32>>'",
     "aie.objectfifo.acquire"),
    ("aie.mlir:2:5: error: custom op 'aie.objectfifo.subview.access' is unknown",
     "aie.objectfifo.subview.access"),
    ("aie.mlir:1:40: error: expected SSA operand", "aiex.npu.rtp_write"),
    # not a spelling: a design's value, a failure of another op, a line of no changed op
    ("d.py:13:0: error: 'aie.use_lock' op value out of range", ""),
    ("aie.mlir:2:5: error: 'aie.objectfifo' op does not fit", ""),
    ("aie.mlir:3:1: error: expected SSA operand", ""),
])
def test_a_refused_spelling_is_told_from_other_errors(tmp_path: Path, said: str,
                                                      ops: str) -> None:
    from aiedsl.toolchain.mlir_syntax import hint

    (tmp_path / "aie.mlir").write_text(
        "      aiex.npu.rtp_write(@p0, 3, 7)\n"
        "      %a_0 = aie.objectfifo.subview.access %a[0] : !aie.objectfifosubview<x> -> x\n"
        "      aie.end\n")
    text = hint(f"loading aie.mlir\n{said}\n", tmp_path)
    assert (text.split(" refuses its ")[1].split(":")[0] if text else "") == ops


def test_a_failing_tools_output_reaches_the_terminal_with_its_control_characters_escaped(
        fake_tools: dict[str, Path]) -> None:
    """A tester's: an aiecc printing colours and a window title (ESC ] 0; ... BEL) had them
    echoed raw to stderr, where they act on the terminal. The tail keeps its lines and tabs and
    escapes the rest; the log keeps the output as it was (its line ends read as Python reads
    text: a carriage return is one)."""
    fail = r"printf 'line1\r\n\033[31mRED\033[0m \033]0;TITLE\007 error:\tboom\fend\n'; exit 1"
    _script(fake_tools["mlir_aie"] / "bin" / "aiecc", fake_aiecc(fake_tools["log"], fail))
    r = _cli("build", str(PASSTHROUGH), "-o", "out", "--compile")
    assert r.returncode == 5
    mlir_aie = fake_tools["mlir_aie"]
    assert r.stderr.lstrip("\n") == (
        "error [aiecc]: aiecc failed (exit 1)\n"
        f"  $ {mlir_aie}/bin/aiecc {AIECC_WORDS['current']} aie.mlir\n"
        "    line1\n"
        "    \\x1b[31mRED\\x1b[0m \\x1b]0;TITLE\\x07 error:\tboom\\x0cend\n"
        "  fix: the whole output is in out/logs/aiecc.log\n")
    assert (fake_tools["root"] / "out" / "logs" / "aiecc.log").read_text().endswith(
        "line1\n\x1b[31mRED\x1b[0m \x1b]0;TITLE\x07 error:\tboom\x0cend\n")


def test_a_tool_error_is_placed_in_a_design_whose_path_has_a_space(
        fake_tools: dict[str, Path]) -> None:
    design = fake_tools["root"] / "my designs" / "passthrough.py"
    design.parent.mkdir()
    design.write_text(PASSTHROUGH.read_text())
    # 'designs/passthrough.py' is in the output too: it must not be taken for the design
    fail = ('echo "my designs/passthrough.py:18:0: error: \'aie.objectfifo\' op does not fit"; '
            'exit 1')
    _script(fake_tools["mlir_aie"] / "bin" / "aiecc", fake_aiecc(fake_tools["log"], fail))
    with pytest.raises(ToolchainError) as excinfo:
        aiedsl.build(design, output="out", compile=True)
    assert str(excinfo.value).splitlines()[0] == (
        "my designs/passthrough.py:18: error [aiecc]: aiecc failed (exit 1)")


def _elf32(segments: list[tuple[int, int]], order: str = "<") -> bytes:
    """A 32-bit ELF whose program headers load ``(address, bytes)`` segments (nothing else)."""
    ident = b"\x7fELF" + bytes([1, 1 if order == "<" else 2, 1]) + bytes(9)
    header = struct.pack(order + "HHIIIIIHHHHHH", 2, 0x108, 1, 0, 52, 0, 0, 52, 32,
                         len(segments), 0, 0, 0)
    return ident + header + b"".join(struct.pack(order + "IIIIIIII", 1, 0, a, a, 0, n, 5, 4)
                                     for a, n in segments)


def _aiecc_leaving(fake_tools: dict[str, Path], elf: bytes, then: str = "") -> None:
    """The fake aiecc leaves ``elf`` as core (0, 2)'s ELF in its project folder, then runs
    ``then``."""
    src = fake_tools["root"] / "core.elf"
    src.write_bytes(elf)
    _script(fake_tools["mlir_aie"] / "bin" / "aiecc", fake_aiecc(
        fake_tools["log"], f"mkdir -p aie.mlir.prj; cp {src} aie.mlir.prj/main_core_0_2.elf\n"
        + then))


def test_elf_program_end_is_read_as_the_loader_reads_it(tmp_path: Path) -> None:
    """Only segments that start in program memory count (aie-rt's _XAie_WriteProgramSection);
    the data-memory one at 0x70000 does not, whatever its size."""
    from aiedsl.toolchain.elf import ElfError, load_segments, program_end

    for order in "<>":
        path = tmp_path / f"core{order == '<'}.elf"
        path.write_bytes(_elf32([(0, 4096), (4096, 1030), (0x70000, 60000)], order))
        assert load_segments(path) == [(0, 4096), (4096, 1030), (0x70000, 60000)]
        assert program_end(path, 16384) == 5126
    assert program_end("/bin/sh", 1 << 40) > 0  # the host's own (64-bit) ELF reads too
    (tmp_path / "text.elf").write_text("not an elf")
    (tmp_path / "cut.elf").write_bytes(_elf32([(0, 64)])[:40])
    (tmp_path / "short.elf").write_bytes(_elf32([(0, 64)])[:60])
    for name, why in (("text.elf", " is not an ELF file"), ("cut.elf", ": the ELF is cut short"),
                      ("short.elf", ": program headers past the end of the file")):
        with pytest.raises(ElfError) as e:
            load_segments(tmp_path / name)
        assert str(e.value) == f"{tmp_path / name}{why}"


def test_compile_records_how_much_program_memory_each_core_uses(
        fake_tools: dict[str, Path]) -> None:
    _aiecc_leaving(fake_tools, _elf32([(0, 5120), (0x70000, 800)]))
    aiedsl.build(PASSTHROUGH, output="out", compile=True)
    manifest = json.loads((fake_tools["root"] / "out" / "manifest.json").read_text())
    assert manifest["program_memory"] == {"bytes_per_core": 16384, "used": {"core[0,0]": 5120},
                                          "unread": []}
    r = _cli("build", str(PASSTHROUGH), "-o", "out", "--compile")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[-1] == "program memory: core[0,0] 5.0 of 16 KB"


def test_a_compile_that_left_no_core_elf_says_program_memory_is_not_known(
        fake_tools: dict[str, Path]) -> None:
    """The manifest's program memory was an empty "used", and the build said nothing of it (a
    tester)."""
    r = _cli("build", str(PASSTHROUGH), "-o", "out", "--compile")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[-1] == (
        "program memory: not known for core[0,0] (aiecc left no core ELF aiedsl could read in "
        "out/aie.mlir.prj/)")
    manifest = json.loads((fake_tools["root"] / "out" / "manifest.json").read_text())
    assert manifest["program_memory"]["unread"] == ["core[0,0]"]


@pytest.mark.parametrize("then, said", [
    ("printf 'junk' > aie.xclbin; printf '\\000\\001\\003\\006' > insts.bin",
     "error [aiecc]: aiecc finished but the aie.xclbin it wrote is not an xclbin\n"
     "  limit: an xclbin starts with XRT's signature 'xclbin2'\n"
     "  found: its first bytes: b'junk'\n"),
    ("printf 'xclbin2\\000' > aie.xclbin; printf 'aiecc did this' > insts.bin",
     "error [aiecc]: aiecc finished but the insts.bin it wrote is not an NPU instruction "
     "stream: insts.bin is a text file, not an NPU instruction stream\n"
     "  found: text at byte 0: 'aiecc did this'\n"),
    ("printf 'xclbin2\\000' > aie.xclbin; printf '\\000\\001\\003\\006' > insts.bin",
     "error [aiecc]: aiecc finished but the insts.bin it wrote is not an NPU instruction "
     "stream: insts.bin is truncated: 4 bytes, shorter than the 16-byte header\n"
     "  found: 4 bytes\n"),
])
def test_an_aiecc_that_exits_0_having_written_junk_is_not_believed(
        fake_tools: dict[str, Path], then: str, said: str) -> None:
    """A fake aiecc writing junk and exiting 0 was reported as compiled (a tester)."""
    _script(fake_tools["mlir_aie"] / "bin" / "aiecc", fake_aiecc(fake_tools["log"],
                                                                 then + "; exit 0"))
    r = _cli("build", str(PASSTHROUGH), "-o", "out", "--compile")
    assert r.returncode == 5, r.stdout
    assert r.stderr.lstrip("\n") == said + (
        "  fix: see out/logs/aiecc.log; check the mlir-aie installation (`aiedsl doctor` shows "
        "what aiedsl finds)\n")
    assert not (fake_tools["root"] / "out" / "aie.xclbin").exists()


def test_program_memory_overflow_names_the_core_and_its_size(
        fake_tools: dict[str, Path]) -> None:
    """aie-rt's loader says only "Overflow of program memory" (and aiecc fails with it); aiedsl
    reads the core ELFs aiecc left and says which core, by how much, at the design's line."""
    _aiecc_leaving(fake_tools, _elf32([(0, 17920)]), then=(
        'echo "[AIE ERROR] _XAie_LoadProgMemSection():231: Overflow of program memory" >&2; '
        "exit 1"))
    with pytest.raises(ToolchainError) as excinfo:
        aiedsl.build(PASSTHROUGH, output="out", compile=True)
    e = excinfo.value
    assert e.exit_code == 5
    mlir_aie = fake_tools["mlir_aie"]
    assert str(e) == (
        f"{PASSTHROUGH}:24: error [program memory]: core[0,0] on tile (0, 2): its program ends "
        "at byte 17,920, past the 16,384 of program memory\n"
        "  limit: 16,384 bytes of program memory per core (aie-rt's ELF loader refuses more)\n"
        "  found: 17,920 bytes\n"
        f"  $ {mlir_aie}/bin/aiecc {AIECC_WORDS['current']} aie.mlir\n"
        "    [AIE ERROR] _XAie_LoadProgMemSection():231: Overflow of program memory\n"
        "  program memory used: core[0,0] (0, 2) 17,920 B\n"
        "  fix: call fewer or smaller kernels on it (each kernel it calls is linked in whole), "
        "or let the objectfifo lowering unroll less (it repeats a loop body once per buffer of "
        "the fifos acquired in it: lower their depth); the whole output is in "
        "out/logs/aiecc.log")
    assert not (fake_tools["root"] / "out" / "manifest.json").exists()


def test_an_aiecc_that_exits_0_leaving_an_elf_over_program_memory_is_not_believed(
        fake_tools: dict[str, Path]) -> None:
    """aiecc's CDO step loads each core ELF with aie-rt's loader, which refuses a program past
    program memory; one read at 10^9 bytes after an aiecc that exited 0 was reported as the
    program memory used (a tester)."""
    _aiecc_leaving(fake_tools, _elf32([(0, 10**9)]))
    r = _cli("build", str(PASSTHROUGH), "-o", "out", "--compile")
    assert r.returncode == 5, r.stdout
    assert r.stderr.lstrip("\n") == (
        f"{PASSTHROUGH}:24: error [program memory]: aiecc finished, but the ELF it left for "
        "core[0,0] on tile (0, 2) ends the program at byte 1,000,000,000, past the 16,384 of "
        "program memory: aie-rt's loader refuses such a program, so aie.xclbin cannot hold "
        "this one\n"
        "  limit: 16,384 bytes of program memory per core (aie-rt's ELF loader refuses more)\n"
        "  found: 1,000,000,000 bytes\n"
        "  program memory used: core[0,0] (0, 2) 1,000,000,000 B\n"
        "  fix: check the mlir-aie installation (`aiedsl doctor` shows what aiedsl finds); if "
        "the program is that large: call fewer or smaller kernels on it "
        "(each kernel it calls is linked in whole), or let the objectfifo lowering unroll less "
        "(it repeats a loop body once per buffer of the fifos acquired in it: lower their "
        "depth); the whole output is in out/logs/aiecc.log\n")
    assert not (fake_tools["root"] / "out" / "aie.xclbin").exists()


def test_program_memory_overflow_without_core_elfs_says_so(fake_tools: dict[str, Path]) -> None:
    """Some aiecc versions delete their project folder when they fail: nothing to measure."""
    _script(fake_tools["mlir_aie"] / "bin" / "aiecc", fake_aiecc(
        fake_tools["log"], 'echo "[AIE ERROR] _XAie_LoadProgMemSection():231: Overflow of '
        'program memory" >&2; exit 1'))
    with pytest.raises(ToolchainError) as excinfo:
        aiedsl.build(PASSTHROUGH, output="out", compile=True)
    line = inspect.currentframe().f_lineno - 1  # type: ignore[union-attr]
    lines = str(excinfo.value).splitlines()
    where, lines[0] = lines[0].split(" ", 1)  # the build(...)'s line: aiecc named no core's
    assert where.endswith(f"tests/test_toolchain.py:{line}:")
    assert lines[0] == ("error [program memory]: a core's program does not fit its 16,384 bytes "
                        "of program memory; aiecc did not say which, and left no core ELF that "
                        "is over")
    assert lines[-1].startswith("  fix: look for the core calling the most or the largest "
                                "kernels: call fewer or smaller kernels on it")


def _clang_reporting_frames(fake_tools: dict[str, Path], lines: str) -> None:
    """Peano's double writing ``lines`` (``\\t`` between fields) to ``<object stem>.su``, as
    clang's -fstack-usage does."""
    _script(fake_tools["peano"] / "bin" / "clang++",
            FAKE_CLANG.format(version="19.0.0", log=fake_tools["log"], fail="")
            + f'printf "{lines}" > "${{out%.o}}.su"\n')


def test_a_kernel_frame_over_its_cores_stack_stops_the_build(
        fake_tools: dict[str, Path]) -> None:
    """Nothing on the core checks its stack: a kernel with a large local array writes over the
    buffers beyond it. Peano's -fstack-usage says the frame; the build stops before aiecc."""
    _clang_reporting_frames(fake_tools, f"kernels/{KERNEL}.cc:{KERNEL}\\t8224\\tstatic\\n")
    with pytest.raises(ToolchainError) as excinfo:
        aiedsl.build(PASSTHROUGH, output="out", compile=True)
    e = excinfo.value
    assert e.exit_code == 5
    assert str(e) == (
        f"{PASSTHROUGH}:28: error [kernel stack]: kernel '{KERNEL}' needs at least 8,224 bytes "
        "of stack, more than the 1,024 core[0,0] reserves\n"
        "  limit: 1,024 bytes of stack on core[0,0] (its herd's stack=, mlir-aie's stack_size; "
        "nothing on the core checks it: a kernel past it writes over the buffers beyond)\n"
        f"  found: 8,224 bytes: its largest frame as Peano compiled it ({KERNEL}.su, from "
        "-fstack-usage), before what the core's own code and deeper calls need\n"
        f"  core[0,0]'s herd: {PASSTHROUGH}:24\n"
        "  fix: give the herd more stack, e.g. @herd(..., stack=10240) (it comes out of the "
        "core's data memory), or keep the kernel's large local arrays out of its frame "
        "(static, or a fifo buffer passed in)")
    assert "aiecc" not in fake_tools["log"].read_text()  # stopped before linking
    assert not (fake_tools["root"] / "out" / "manifest.json").exists()


def test_the_frame_of_a_kernels_function_listed_apart_counts(
        fake_tools: dict[str, Path]) -> None:
    """The extern "C" entry calls the kernel's C++ function; the .su may list it apart under
    its mangled name, inlined or not (so the frames are not added: a reviewer's clang listed
    the same 600-byte frame twice, and the sum stopped a good build)."""
    _clang_reporting_frames(
        fake_tools, f"kernels/{KERNEL}.cc:{KERNEL}\\t32\\tstatic\\n"
        f"kernels/{KERNEL}.cc:_Z11passthroughIiLi1024EEvPT_S1_\\t2000\\tstatic\\n"
        f"kernels/{KERNEL}.cc:_Z6helperv\\t60000\\tstatic\\n")  # not the entry's: not counted
    with pytest.raises(ToolchainError) as excinfo:
        aiedsl.build(PASSTHROUGH, output="out", compile=True)
    assert "found: 2,000 bytes: its largest frame" in str(excinfo.value)
    _clang_reporting_frames(  # the same frame twice, as clang lists an inlined function
        fake_tools, f"kernels/{KERNEL}.cc:{KERNEL}\\t600\\tstatic\\n"
        f"kernels/{KERNEL}.cc:_Z11passthroughIiLi1024EEvPT_S1_\\t600\\tstatic\\n")
    aiedsl.build(PASSTHROUGH, output="out", compile=True)


def test_kernel_frames_that_fit_are_recorded(fake_tools: dict[str, Path]) -> None:
    _clang_reporting_frames(fake_tools, f"kernels/{KERNEL}.cc:{KERNEL}\\t96\\tstatic\\n")
    aiedsl.build(PASSTHROUGH, output="out", compile=True)
    manifest = json.loads((fake_tools["root"] / "out" / "manifest.json").read_text())
    assert manifest["stack"] == {"bytes_per_core": {"core[0,0]": 1024},
                                 "kernel_frames": {KERNEL: 96}}
    # a Peano that writes no .su (the earlier one's is not read again): nothing is said
    _script(fake_tools["peano"] / "bin" / "clang++",
            FAKE_CLANG.format(version="19.0.1", log=fake_tools["log"], fail=""))
    aiedsl.build(PASSTHROUGH, output="out", compile=True)
    manifest = json.loads((fake_tools["root"] / "out" / "manifest.json").read_text())
    assert manifest["stack"]["kernel_frames"] == {}


TWO_OF_ONE_FILE = """
from aiedsl import Tensor, design, fifo, herd, i32, runtime
from aiedsl.kernels import buffer, declare

def r1(a, b): b[...] = a + 1
def r2(a, b): b[...] = a + 2

@design(device="npu1_1col")
def twok(A: Tensor[64, i32], C: Tensor[64, i32], D: Tensor[64, i32]):
    sig = [buffer("a", Tensor[64, i32]), buffer("b", Tensor[64, i32], "out")]
    k1 = declare("inc1_64", source="twok.cc", entry="inc1<64>", defines={"STEP": 1}, args=sig,
                 reference=r1, cycles=80, cost="scalar")
    k2 = declare("inc2_64", source="twok.cc", entry="inc2<64>", defines={"STEP": 1}, args=sig,
                 reference=r2, cycles=80, cost="scalar")
    i = fifo(Tensor[64, i32]); o1 = fifo(Tensor[64, i32]); o2 = fifo(Tensor[64, i32])

    @herd()
    def core():
        with i.consume() as a, o1.produce() as b, o2.produce() as c:
            k1(a, b)
            k2(a, c)

    with runtime() as rt:
        rt.fill(i, A); rt.drain(o1, C); rt.drain(o2, D)

@twok.reference
def reference(A): return A + 1, A + 2
"""


def test_kernels_of_one_file_are_one_peano_compile_with_their_defines(
        fake_tools: dict[str, Path]) -> None:
    """One object per file and defines: one Peano run with the -D words, one .su whose frames
    are each kernel's, one object in the manifest; other defines are another cache key."""
    root = fake_tools["root"]
    (root / "twok.cc").write_text("template <unsigned N> void inc1(const int *a, int *b) {}\n"
                                  "template <unsigned N> void inc2(const int *a, int *b) {}\n")
    design = root / "twok.py"
    design.write_text(TWO_OF_ONE_FILE)
    _clang_reporting_frames(fake_tools, "kernels/inc1_64.cc:inc1_64\\t64\\tstatic\\n"
                            "kernels/inc1_64.cc:inc2_64\\t96\\tstatic\\n")
    art = aiedsl.build(design, output="out", compile=True)
    mlir_aie = fake_tools["mlir_aie"]
    assert fake_tools["log"].read_text().splitlines()[0] == (
        f"{PEANO_WORDS.format(arch='aie2').replace(' -fstack-usage', ' -DSTEP=1 -fstack-usage')}"
        f" -I{mlir_aie}/include -I{mlir_aie}/aie_runtime_lib/AIE2 -c kernels/inc1_64.cc "
        "-o inc1_64.o")
    assert fake_tools["log"].read_text().splitlines()[1].startswith("--get-xclbin")
    assert art.compiled is not None
    manifest = art.compiled.manifest
    assert manifest["kernel_objects"] == ["inc1_64.o"]
    assert manifest["stack"]["kernel_frames"] == {"inc1_64": 64, "inc2_64": 96}
    assert aiedsl.build(design, output="out", compile=True).compiled.cached  # type: ignore
    design.write_text(TWO_OF_ONE_FILE.replace('{"STEP": 1}', '{"STEP": 2}'))
    again = aiedsl.build(design, output="out", compile=True).compiled
    assert again is not None and not again.cached
    assert again.manifest["cache_key"] != manifest["cache_key"]
    assert " -DSTEP=2 " in fake_tools["log"].read_text().splitlines()[-3]


BIG_OF_ONE_FILE = """
from aiedsl import Tensor, design, fifo, herd, i32, runtime
from aiedsl.kernels import buffer, declare

def r(a, b): b[...] = a

@design(device="npu1_1col")
def d2(A: Tensor[64, i32], B: Tensor[64, i32], C: Tensor[64, i32]):
    sig = [buffer("a", Tensor[64, i32]), buffer("b", Tensor[64, i32], "out")]
    small = declare("small_k", source="big.cc", entry="big<64>", args=sig, reference=r,
                    cycles=100, cost="x")
    large = declare("large_k", source="big.cc", entry="big<2048>", args=sig, reference=r,
                    cycles=100, cost="x")
    a = fifo(Tensor[64, i32]); b = fifo(Tensor[64, i32])
    a2 = fifo(Tensor[64, i32]); c = fifo(Tensor[64, i32])

    @herd()
    def core1():
        with a.consume() as x, b.produce() as y:
            small(x, y)

    @herd()
    def core2():
        with a2.consume() as x, c.produce() as y:
            large(x, y)

    with runtime() as rt:
        rt.fill(a, A); rt.fill(a2, A); rt.drain(b, B); rt.drain(c, C)

@d2.reference
def reference(A): return A, A
"""


def test_each_kernel_of_one_object_counts_its_own_instantiation(
        fake_tools: dict[str, Path]) -> None:
    """A reviewer's: small_k (big<64>) and large_k (big<2048>) share big.cc's object, whose .su
    lists both instantiations; each kernel took the smallest frame of any function named big,
    so large_k's 8,208 bytes passed as 272. Its template arguments now tell its own apart."""
    root = fake_tools["root"]
    (root / "big.cc").write_text("template <int N> void big(int *a, int *b) { int t[N]; }\n")
    design = root / "d2.py"
    design.write_text(BIG_OF_ONE_FILE)
    frames = ("kernels/small_k.cc:_Z3bigILi64EEvPiS0_\\t272\\tstatic\\n"
              "kernels/small_k.cc:_Z3bigILi2048EEvPiS0_\\t8208\\tstatic\\n"
              "kernels/small_k.cc:small_k\\t16\\tstatic\\n"
              "kernels/small_k.cc:large_k\\t16\\tstatic\\n")
    _clang_reporting_frames(fake_tools, frames)
    with pytest.raises(ToolchainError) as excinfo:
        aiedsl.build(design, output="out", compile=True)
    assert str(excinfo.value).splitlines()[0] == (
        "d2.py:25: error [kernel stack]: kernel 'large_k' needs at least 8,208 bytes of "
        "stack, more than the 1,024 core2[0,0] reserves")
    # with room for it, each kernel's own frame is recorded
    design.write_text(BIG_OF_ONE_FILE.replace("    def core2", "    @herd(stack=9216)\n"
                                              "    def core2").replace("@herd()\n    @herd",
                                                                          "@herd"))
    manifest = aiedsl.build(design, output="out", compile=True).compiled.manifest  # type: ignore
    assert manifest["stack"]["kernel_frames"] == {"small_k": 272, "large_k": 8208}


def test_the_template_arguments_of_an_entry_tell_its_instantiation() -> None:
    from aiedsl.toolchain.stack import arguments_match, entry_arguments, mangled_arguments
    assert mangled_arguments("_Z3bigILi2048EEvPiS0_") == [("value", 2048)]
    assert mangled_arguments("_ZN2ns8zero_vecIiLin3EEEvPT_") == [("type", "i"), ("value", -3)]
    assert mangled_arguments("_Z2mmIDF16bLi64EEvPv") == [None, ("value", 64)]  # bfloat16
    assert mangled_arguments("_Z3fooI8bfloat16fLj4EEvv") == [None, ("type", "f"), ("value", 4)]
    assert mangled_arguments("_ZN2ns6KernelIiE3runEPi") is None  # the class's, not read
    assert mangled_arguments("_Z4zerofPf") == []
    assert entry_arguments("ns::zero_vec<int16_t, 0x40>") == [("type", ("s",)),
                                                              ("value", (64,))]
    assert entry_arguments("Kernel<int>::run") is None
    assert entry_arguments("f<a::b<3>, true>") == [None, ("value", (1,))]
    assert arguments_match(entry_arguments("big<64>"), [("value", 64)]) is True
    assert arguments_match(entry_arguments("big<64>"), [("value", 2048)]) is False
    # int32_t is int or long as the target's C library says: not certain, unless the value
    # tells it apart
    assert arguments_match(entry_arguments("z<int32_t, 64>"), [("type", "i"), ("value", 64)]) \
        is None
    assert arguments_match(entry_arguments("z<int32_t, 64>"), [("type", "i"), ("value", 8)]) \
        is False
    assert arguments_match(entry_arguments("z<int16_t>"), [("type", "i")]) is False
    assert arguments_match(entry_arguments("big<64>"), [("value", 64), ("type", "i")]) is None


def test_a_peano_failure_outside_every_entry_names_the_file_not_a_kernel(
        fake_tools: dict[str, Path]) -> None:
    """A reviewer's: clang's error on the closing `} // extern "C"` of the generated block was
    blamed on the last kernel's entry, and the step of an object of several kernels was
    labelled with the first kernel's name."""
    root = fake_tools["root"]
    (root / "twok.cc").write_text("template <unsigned N> void inc1(const int *a, int *b) {}\n"
                                  "template <unsigned N> void inc2(const int *a, int *b) {}\n")
    design = root / "twok.py"
    design.write_text(TWO_OF_ONE_FILE)
    cc = aiedsl.build(design, output="out").files["kernels/inc1_64.cc"].splitlines()
    closing = cc.index('} // extern "C"') + 1
    last_entry = cc.index("void inc2_64(int32_t *a, int32_t *b) {") + 1
    for line, at, where in ((closing, 11, "the C++ of kernels inc1_64 and inc2_64"),
                            (last_entry + 2, 13, "kernel 'inc2_64'")):
        fail = f'echo "kernels/inc1_64.cc:{line}:1: error: expected }}" >&2; exit 1'
        _script(fake_tools["peano"] / "bin" / "clang++",
                FAKE_CLANG.format(version="19.0.0", log=fake_tools["log"], fail=fail))
        with pytest.raises(ToolchainError) as excinfo:
            aiedsl.build(design, output="out", compile=True)
        assert str(excinfo.value).splitlines()[0] == (
            f"twok.py:{at}: error [Peano]: Peano kernels/inc1_64.cc "
            f"failed (exit 1) in {where} (kernels/inc1_64.cc:{line})")


def test_stack_usage_files_are_read_as_clang_writes_them() -> None:
    from aiedsl.toolchain.stack import mangled_name, parse_su
    assert parse_su("kernels/a:b.cc:12:k\t64\tstatic\nk.cc:k\t80\tdynamic\n"
                    "garbage\nx.cc:f\tmany\tstatic\n") == {"k": 80}
    assert mangled_name("_ZN2ns11passthroughIiLi1024EEvPT_S1_") == "passthrough"
    assert mangled_name("_ZNK3Foo3barEv") == "bar"
    assert mangled_name("_ZL4workPKiPi") == "work"  # static: internal linkage
    assert mangled_name("_ZN2nsL4workEPi") == "work"
    assert mangled_name("_ZN2ns6KernelIiE3runEPi") == "run"  # after a class's arguments
    assert mangled_name("_ZN2ns6KernelILin3EE3runEPi") == "run"  # a negative literal
    assert mangled_name("_Z4tileIL6Layout1EEvPi") == "tile"  # an enum's literal (a reviewer)
    assert mangled_name("_Z4tileIL2XL1EEvPi") == "tile"
    assert mangled_name("_Z4zerofPf") == "zero"
    assert mangled_name("_Z99short") is None
    assert mangled_name("passthrough_i32_1024") is None


def test_kernel_failure_points_at_the_kernel_declaration(fake_tools: dict[str, Path]) -> None:
    fail = f'echo "kernels/{KERNEL}.cc:40:5: error: use of undeclared identifier \'v\'" >&2; exit 1'
    _script(fake_tools["peano"] / "bin" / "clang++",
            FAKE_CLANG.format(version="19.0.0", log=fake_tools["log"], fail=fail))
    with pytest.raises(ToolchainError) as excinfo:
        aiedsl.build(PASSTHROUGH, output="out", compile=True)
    first = str(excinfo.value).splitlines()[0]
    assert first.endswith(f"error [Peano]: Peano {KERNEL} failed (exit 1) in kernel "
                          f"'{KERNEL}' (kernels/{KERNEL}.cc:40, from "
                          f"{ROOT}/kernels_cpp/passthrough.cc:36)")
    assert first.startswith(f"{PASSTHROUGH}:22:")  # the copy_kernel(...) declaration


# -- running through pyxrt -----------------------------------------------------------------------

class FakeXrt(types.SimpleNamespace):
    """A recording stand-in for pyxrt with the calls aiedsl makes (a test double: its "kernel"
    runs the passthrough design's function on the host so the plumbing can be checked, or, with
    ``behave="scale"``, the in-place scaling of :data:`IN_PLACE`: its first buffer, int16,
    times the int32 of its second, written back where it was read). The device's name is
    ``name`` (an exception to raise it instead)."""

    def __init__(self, behave: str = "copy", name: str | Exception = "RyzenAI-npu1") -> None:
        calls: list[tuple[Any, ...]] = []
        fake = self

        class Bo:
            cacheable, host_only = "cacheable", "host_only"

            def __init__(self, device: Any, size: int, flags: str, group: int) -> None:
                self.size, self.flags, self.group = size, flags, group
                self.data = bytearray(size)
                calls.append(("bo", size, flags, group))

            def write(self, arr: np.ndarray, offset: int) -> None:
                raw = np.asarray(arr).tobytes()
                self.data[offset:offset + len(raw)] = raw

            def map(self) -> memoryview:
                return memoryview(self.data)

            def sync(self, direction: str) -> None:
                calls.append(("sync", self.group, direction))

        class Run:
            def wait(self) -> str:
                calls.append(("wait",))
                return "ERT_CMD_STATE_TIMEOUT" if fake.behave == "hang" else \
                    "ERT_CMD_STATE_COMPLETED"

        class Kernel:
            def __init__(self, ctx: Any, name: str) -> None:
                calls.append(("kernel", name))

            def group_id(self, i: int) -> int:
                return i

            def __call__(self, opcode: int, instr: Bo, words: int, *bos: Bo) -> Run:
                calls.append(("launch", opcode, instr.group, words, [b.group for b in bos]))
                if fake.behave == "copy":
                    bos[1].data[:] = bos[0].data
                elif fake.behave == "scale":
                    x = np.frombuffer(bos[0].data, dtype=np.int16)
                    factor = int(np.frombuffer(bos[1].data, dtype=np.int32)[0])
                    bos[0].data[:] = (x * factor).astype(np.int16).tobytes()
                return Run()

        class Xclbin:
            def __init__(self, path: str) -> None:
                calls.append(("xclbin", Path(path).name))

            def get_uuid(self) -> str:
                return "uuid"

        class Device:
            def __init__(self, i: int) -> None:
                calls.append(("device", i))

            def register_xclbin(self, x: Xclbin) -> None:
                calls.append(("register",))

            def get_info(self, key: str) -> str:
                calls.append(("get_info", key))
                if isinstance(fake.name, Exception):
                    raise fake.name
                return fake.name

        def hw_context(device: Any, uuid: str) -> str:
            calls.append(("hw_context", uuid))
            return "ctx"

        super().__init__(calls=calls, behave=behave, name=name, bo=Bo, kernel=Kernel,
                         xclbin=Xclbin, device=Device, hw_context=hw_context,
                         xrt_info_device=types.SimpleNamespace(name="name"),
                         ert_cmd_state=types.SimpleNamespace(
                             ERT_CMD_STATE_COMPLETED="ERT_CMD_STATE_COMPLETED"),
                         xclBOSyncDirection=types.SimpleNamespace(
                             XCL_BO_SYNC_BO_TO_DEVICE="to_device",
                             XCL_BO_SYNC_BO_FROM_DEVICE="from_device"))


@pytest.fixture
def fake_npu(fake_tools: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> FakeXrt:
    xrt = FakeXrt()
    monkeypatch.setitem(sys.modules, "pyxrt", xrt)
    return xrt


def test_npu_run_uses_mlir_aies_buffer_abi(fake_npu: FakeXrt) -> None:
    art = aiedsl.build(PASSTHROUGH, output="out")
    x = np.arange(4096, dtype=np.int32)
    said: list[str] = []
    result = art.run(x, target="npu", iters=3, warmup=2, say=said.append)
    assert result.target == "npu" and result.passed
    np.testing.assert_array_equal(result.outputs["out"], x)
    assert said == ["running on the NPU (NPU device 0, 'RyzenAI-npu1': an npu1)"]
    calls = fake_npu.calls
    assert calls[:7] == [("device", 0), ("get_info", "name"), ("xclbin", "aie.xclbin"),
                         ("register",), ("hw_context", "uuid"), ("kernel", "MLIR_AIE"),
                         ("bo", 16, "cacheable", 1)]
    assert ("bo", 16384, "host_only", 3) in calls and ("bo", 16384, "host_only", 4) in calls
    launches = [c for c in calls if c[0] == "launch"]
    assert launches == [("launch", 3, 1, 4, [3, 4])] * 5  # 2 warm-up + 3 timed
    assert len(result.latencies) == 3
    assert ("sync", 3, "to_device") in calls and ("sync", 4, "from_device") in calls
    assert ("sync", 4, "to_device") not in calls  # the output is never written by the host
    assert sum(c[0] == "hw_context" for c in calls) == 1
    assert result.timing.warmup == 2 and result.timing.latencies == result.latencies
    assert result.seconds == sorted(result.latencies)[1]
    assert result.lines()[1].startswith(
        "  measured on the NPU: 3 run(s) after 2 warm-up: latency")


def test_an_npu_run_that_does_not_complete_is_an_error_not_a_comparison(
        fake_npu: FakeXrt) -> None:
    """XRT's run.wait() returns the run's state; a hung design ends timed out once the driver
    stops it, and its output buffer holds nothing to compare (mlir-aie's own host code checks
    for ERT_CMD_STATE_COMPLETED)."""
    art = aiedsl.build(PASSTHROUGH, output="out")
    fake_npu.behave = "hang"
    with pytest.raises(ToolchainError) as excinfo:
        art.run(np.arange(4096, dtype=np.int32), target="npu", iters=1, warmup=0)
    lines = str(excinfo.value).splitlines()
    assert lines[0].startswith("error [npu]: the NPU run did not complete: XRT ended it as "
                               "ERT_CMD_STATE_TIMEOUT after ")
    assert lines[1:] == [
        "  limit: a run XRT reports as ERT_CMD_STATE_COMPLETED",
        "  found: ERT_CMD_STATE_TIMEOUT",
        "  fix: the design hung on the NPU and the driver stopped it: `aiedsl sim` runs the "
        "same design and names the core and the lock or stream it waits on; if the simulation "
        "completes, the hang is not one aiedsl models (report the design)"]
    assert excinfo.value.exit_code == 5
    assert [c for c in fake_npu.calls if c[0] == "wait"] == [("wait",)]  # stopped at the first


def test_a_compile_in_a_building_block_shares_its_lock_from_any_thread(
        fake_tools: dict[str, Path]) -> None:
    """A reviewer's: art.compile() run in a thread pool inside `with api.building(...) as art`
    met the block's own lock: "another aiedsl build (pid <its own>) is writing bz", fix "delete
    .bz.aiedsl-new", which would have broken the live lock. It shares the lock now; an unrelated
    build in another thread is refused, saying the holder is this process."""
    from concurrent.futures import ThreadPoolExecutor

    from aiedsl import api

    root = fake_tools["root"]
    with api.building(PASSTHROUGH, output="bz") as art, ThreadPoolExecutor(1) as pool:
        compiled = pool.submit(art.compile).result()
        assert not compiled.cached and (root / "bz" / "aie.xclbin").is_file()
        with pytest.raises(DesignError) as excinfo:
            pool.submit(aiedsl.build, PASSTHROUGH, output="bz").result()
        assert str(excinfo.value).splitlines()[0] == (
            f"error [output directory]: another aiedsl build in this process (pid "
            f"{os.getpid()}, thread MainThread) is writing bz")
        assert (root / ".bz.aiedsl-new").is_dir()  # held to the end of the block
    assert not (root / ".bz.aiedsl-new").exists()
    # the block closed: a compile takes the lock itself, from any thread
    with ThreadPoolExecutor(1) as pool:
        assert pool.submit(art.compile).result().cached


def test_an_npu_run_holds_its_build_from_the_compile_to_the_loaded_xclbin(
        fake_npu: FakeXrt, monkeypatch: pytest.MonkeyPatch) -> None:
    """run --target npu let go of the build directory between its compile and loading the
    xclbin (and between the build and the compile): another build could swap its own in (a
    tester). A build started while the xclbin loads is refused; a compile of a directory
    another build replaced is refused (tests/test_outdir.py)."""
    import threading

    art = aiedsl.build(PASSTHROUGH, output="out")
    real_xclbin = fake_npu.xclbin
    refused: list[str] = []

    def xclbin(path: str) -> Any:
        def rebuild() -> None:  # another build, in another thread, while the xclbin loads
            try:
                aiedsl.build(PASSTHROUGH, defines={"N": 8192}, output="out")
            except DesignError as e:
                refused.append(str(e))

        racer = threading.Thread(target=rebuild)
        racer.start()
        racer.join()
        return real_xclbin(path)

    monkeypatch.setattr(fake_npu, "xclbin", xclbin)
    result = art.run(target="npu")
    assert result.target == "npu" and result.passed
    assert refused == [
        f"error [output directory]: another aiedsl build in this process (pid {os.getpid()}, "
        "thread MainThread) is writing out\n"
        "  fix: try again when it is done (it lets go of the directory when it ends); to compile "
        "a build inside `with aiedsl.api.building(...) as art:` from another thread, call "
        "art.compile(), which shares the block's lock"]


def test_an_xrt_failure_says_which_step_failed_and_exits_5(
        fake_npu: FakeXrt, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture) -> None:
    from aiedsl.cli.process import main

    def refuse(self: Any, xclbin: Any) -> None:
        raise RuntimeError("load_axlf: Operation not permitted")

    monkeypatch.setattr(fake_npu.device, "register_xclbin", refuse)
    with pytest.raises(SystemExit) as e:
        main(["run", str(PASSTHROUGH), "-o", "out", "--target", "npu"])
    assert e.value.code == 5
    err = capsys.readouterr().err
    assert err.endswith(
        "error [npu]: XRT failed to register aie.xclbin with the device: load_axlf: Operation "
        "not permitted\n"
        "  fix: check the NPU driver and XRT (`aiedsl doctor`, `xrt-smi examine`); the design "
        "still runs on the simulator with --target sim\n"), err
    assert "Traceback" not in err


def test_an_xrt_failure_while_running_names_the_step(fake_npu: FakeXrt,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    art = aiedsl.build(PASSTHROUGH, output="out")

    def launch(self: Any, *args: Any) -> None:
        raise RuntimeError("ERT command timed out")

    monkeypatch.setattr(fake_npu.kernel, "__call__", launch)
    with pytest.raises(ToolchainError) as e:
        art.run(target="npu")
    assert e.value.exit_code == 5
    assert e.value.message == "XRT failed to launch the kernel: ERT command timed out"


def test_npu_run_checks_against_the_reference(fake_tools: dict[str, Path],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pyxrt", FakeXrt(behave="nothing"))
    art = aiedsl.build(PASSTHROUGH, output="out")
    result = art.run(target="npu")
    assert not result.passed
    assert result.checks[0].line().startswith("FAIL out:")


def test_auto_without_an_npu_uses_the_simulator_and_says_why(no_tools: Path) -> None:
    r = _cli("run", str(PASSTHROUGH), "-o", "out")
    assert r.returncode == 0, r.stderr
    assert "no NPU (pyxrt is not importable" in _words(r.stdout)
    assert "PASS out: exact" in r.stdout


def test_target_npu_without_an_npu_exits_4(no_tools: Path) -> None:
    r = _cli("run", str(PASSTHROUGH), "-o", "out", "--target", "npu")
    assert r.returncode == 4
    assert r.stderr.startswith("error [npu]: no NPU: pyxrt is not importable")
    # the command line's words (it said target='sim' first, Python's: a tester)
    assert r.stderr.endswith("  fix: run on the simulator: --target sim\n")


def test_auto_with_an_npu_but_no_compiler_falls_back_to_the_simulator(
        no_tools: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pyxrt", FakeXrt())
    said: list[str] = []
    result = aiedsl.build(PASSTHROUGH, output="out").run(say=said.append)
    assert result.target == "sim" and result.passed
    assert said[0].startswith("an NPU is present but the design cannot be compiled here "
                              "(cannot compile passthrough: Peano (llvm-aie), aiecc")


def test_api_run_with_inputs_in_argument_order(no_tools: Path) -> None:
    art = aiedsl.build(PASSTHROUGH, output="out")
    x = np.arange(4096, dtype=np.int32) * 3
    result = art.run(x, target="sim")
    np.testing.assert_array_equal(result.outputs["out"], x)
    with pytest.raises(DesignError) as e:  # a DesignError at the caller's line, as README says
        art.run(x, x)
    message = str(e.value)
    assert message.split(": ", 1)[1].splitlines() == [
        "error [inputs]: passthrough takes 1 input(s), got 2",
        "  limit: one array per tensor the runtime fills, in argument order: inp",
        "  found: 2 array(s)",
        "  fix: pass inp (the outputs are returned, not passed)"]
    assert message.split(":")[0].endswith("test_toolchain.py")  # the caller's line


def test_npu_session_reads_bf16_as_raw_words(fake_npu: FakeXrt, tmp_path: Path) -> None:
    (tmp_path / "aie.xclbin").write_bytes(b"x")
    np.array([7, 8], dtype=np.uint32).tofile(tmp_path / "insts.bin")
    manifest = {"xclbin": "aie.xclbin", "kernel": "MLIR_AIE", "opcode": 3,
                "instructions": {"file": "insts.bin", "group_id": 1, "words": 2},
                "buffers": [{"group_id": 3, "name": "A", "shape": [4], "dtype": "bfloat16",
                             "bytes": 8, "direction": "in"},
                            {"group_id": 4, "name": "B", "shape": [4], "dtype": "bfloat16",
                             "bytes": 8, "direction": "out"}]}
    s = NpuSession(tmp_path, manifest, pyxrt=fake_npu)
    import ml_dtypes

    a = np.array([1.5, -2.0, 3.25, 0.0], dtype=ml_dtypes.bfloat16)
    out = s.run({"A": a})
    assert out["B"].dtype == ml_dtypes.bfloat16
    np.testing.assert_array_equal(out["B"], a)


# -- with the real tools (skipped here) ----------------------------------------------------------

@pytest.mark.peano
def test_real_compile_of_passthrough(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    art = aiedsl.build(PASSTHROUGH, output="out", compile=True)
    assert (tmp_path / "out" / "aie.xclbin").stat().st_size > 0
    assert art.compiled is not None and art.compiled.manifest["instructions"]["words"] > 0


@pytest.mark.peano
@pytest.mark.npu
def test_real_npu_run_of_passthrough(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = aiedsl.build(PASSTHROUGH, output="out", compile=True).run(target="npu")
    assert result.target == "npu" and result.passed


def test_a_peano_that_writes_no_object_is_named_not_aiecc(fake_tools: dict[str, Path]) -> None:
    """A tester's Peano exited 0 without its .o, and the failure was blamed on aiecc."""
    _script(fake_tools["peano"] / "bin" / "clang++",
            FAKE_CLANG.format(version="19.0.0", log=fake_tools["log"], fail="exit 0"))
    r = _cli("build", str(PASSTHROUGH), "-o", "out", "--compile")
    assert r.returncode == 5
    lines = r.stderr.lstrip("\n").splitlines()
    assert lines[0] == "error [Peano]: Peano passthrough_i32_1024 finished but did not write " \
        "passthrough_i32_1024.o"
    assert lines[1] == "  found: see out/logs/passthrough_i32_1024.log"
    assert lines[2].startswith("  $ ") and lines[2].endswith(
        " -c kernels/passthrough_i32_1024.cc -o passthrough_i32_1024.o")
    assert lines[3:] == [
        "  fix: check the Peano installation (PEANO_INSTALL_DIR; `aiedsl doctor` shows what "
        "aiedsl finds)"]
    assert "PEANO_INSTALL_DIR=" not in fake_tools["log"].read_text()  # aiecc never ran


def test_a_build_sh_stopped_by_a_kernel_compile_leaves_what_a_rebuild_removes(
        fake_tools: dict[str, Path]) -> None:
    """build.sh records its run before it compiles anything, so the objects a run stopped by a
    failing compile left are aiedsl's: a rebuild with other defines removes them, where it
    refused them as the user's when the record began only before aiecc."""
    _script(fake_tools["peano"] / "bin" / "clang++",
            FAKE_CLANG.format(version="19.0.0", log=fake_tools["log"],
                              fail='case "$*" in *TILE=512*) ;; *) echo "object" > '
                                   f'{KERNEL}.o; exit 1 ;; esac'))
    aiedsl.build(PASSTHROUGH, output="out")
    env = {**os.environ, "PATH": f"{fake_tools['mlir_aie'] / 'bin'}:/usr/bin:/bin"}
    r = subprocess.run(["bash", "out/build.sh"], capture_output=True, text=True, env=env)
    assert r.returncode == 1 and (fake_tools["root"] / "out" / f"{KERNEL}.o").exists()
    aiedsl.build(PASSTHROUGH, defines={"TILE": 512}, output="out")
    assert not (fake_tools["root"] / "out" / f"{KERNEL}.o").exists()


def test_a_build_sh_output_that_cannot_be_removed_keeps_the_record_that_vouches_for_it(
        fake_tools: dict[str, Path], monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture) -> None:
    """A reviewer: with build.sh's aie.xclbin undeletable, its record went first, and the next
    build refused the leftover as the user's, though the warning said it would remove it."""
    import errno

    aiedsl.build(PASSTHROUGH, output="out")
    env = {**os.environ, "PATH": f"{fake_tools['mlir_aie'] / 'bin'}:/usr/bin:/bin"}
    assert subprocess.run(["bash", "out/build.sh"], capture_output=True, env=env).returncode == 0
    real_unlink = os.unlink

    def unlink(path: Any, *args: Any, **kwargs: Any) -> None:
        if os.fspath(path).endswith("aie.xclbin"):  # as chattr +i
            raise PermissionError(errno.EPERM, "Operation not permitted", path)
        real_unlink(path, *args, **kwargs)

    real_path_unlink = Path.unlink

    def path_unlink(self: Path, missing_ok: bool = False) -> None:
        if self.name == "aie.xclbin":  # Python 3.10's Path.unlink holds the os.unlink of import
            raise PermissionError(errno.EPERM, "Operation not permitted", str(self))
        real_path_unlink(self, missing_ok=missing_ok)

    monkeypatch.setattr(os, "unlink", unlink)
    monkeypatch.setattr(Path, "unlink", path_unlink)
    try:
        aiedsl.build(PASSTHROUGH, defines={"TILE": 512}, output="out")
    finally:
        monkeypatch.setattr(os, "unlink", real_unlink)
        monkeypatch.setattr(Path, "unlink", real_path_unlink)
    assert "warning [output directory]: could not remove .out.aiedsl-new" in capsys.readouterr().err
    aiedsl.build(PASSTHROUGH, output="out")  # takes what is left for aiedsl's, and removes it
    assert not (fake_tools["root"] / ".out.aiedsl-new").exists()
