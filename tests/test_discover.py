"""Discovery trusts only tools that answer as they should: a clang++ that is not Peano, an aiecc
that cannot run, and the AIE API headers of an mlir_aie pip-installed in another environment
(found where ``build.sh`` finds them). With the fake tools of ``test_toolchain.py``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from test_toolchain import (AIECC_WORDS, FAKE_AIECC, PASSTHROUGH, PEANO_WORDS, FakeXrt,  # noqa: F401
                            _cli, _script, _words, fake_aiecc, fake_tools, no_tools)

import aiedsl
from aiedsl.errors import ToolchainError
from aiedsl.toolchain.discover import find_tools

HOST_CLANG = '''#!/bin/sh
# test double for a host clang++ (not Peano): its targets are the host's, an AIE one is rejected
case "$1" in
  --version) echo "Ubuntu clang version 18.1.3 (1ubuntu1)"; exit 0 ;;
  -print-targets) printf '  Registered Targets:\\n    x86    - 32-bit X86: Pentium-Pro and \
above\\n    x86-64 - 64-bit X86: EM64T and AMD64\\n'; exit 0 ;;
esac
for a in "$@"; do case "$a" in --target=*) t=${a#--target=};; esac; done
echo "error: unknown target triple '$t'" >&2; exit 1
'''

BROKEN_AIECC_PY = '''#!/bin/sh
# test double for an aiecc.py whose Python cannot import mlir-aie's python package
echo "$@" >> "{log}"
cat >&2 <<'ERR'
Traceback (most recent call last):
  File "/opt/mlir-aie/install/bin/aiecc.py", line 5, in <module>
    import aie.compiler.aiecc.main as aiecc
ModuleNotFoundError: No module named 'aie'
ERR
exit 1
'''


# -- Peano ----------------------------------------------------------------------------------------

def test_a_host_clang_is_found_but_not_taken_for_peano(fake_tools: dict[str, Path]) -> None:
    """A tester's: doctor said "Peano found" of the host's clang++, and the kernels' compile
    then failed on --target=aie2-none-unknown-elf."""
    _script(fake_tools["peano"] / "bin" / "clang++", HOST_CLANG)
    tools = find_tools()
    assert (tools.clang.status, tools.clang.problem, tools.clang.detail) == (
        "UNUSABLE", "is a clang++ without the aie2 target (not Peano)",
        "`clang++ -print-targets` lists x86, x86-64")
    doctor = _cli("doctor")
    assert doctor.returncode == 4
    peano = fake_tools["peano"] / "bin" / "clang++"
    assert ["Peano", "(llvm-aie)", "UNUSABLE", str(peano), "(PEANO_INSTALL_DIR)", "Ubuntu"] in [
        line.split()[:6] for line in doctor.stdout.splitlines()]
    assert _words(
        f"Unusable Peano (llvm-aie): {peano} is a clang++ without the aie2 target (not Peano) "
        "(`clang++ -print-targets` lists x86, x86-64). To get one that works: pip install "
        "llvm-aie") in _words(doctor.stdout)
    r = _cli("build", str(PASSTHROUGH), "-o", "out", "--compile")
    assert r.returncode == 4
    assert r.stderr.splitlines()[:2] == [
        "error [toolchain]: cannot compile passthrough: Peano (llvm-aie) is a clang++ without "
        "the aie2 target (not Peano)",
        f"  Peano (llvm-aie): {peano} (PEANO_INSTALL_DIR): `clang++ -print-targets` lists x86, "
        "x86-64"]
    assert not fake_tools["log"].exists()  # no tool ran


def test_a_clang_that_cannot_list_its_targets_is_not_taken_for_peano(
        fake_tools: dict[str, Path]) -> None:
    _script(fake_tools["peano"] / "bin" / "clang++",
            '#!/bin/sh\n[ "$1" = --version ] && { echo "clang version 3"; exit 0; }\n'
            'echo "clang++: error: unknown argument: \'$1\'" >&2; exit 1\n')
    clang = find_tools().clang
    assert (clang.problem, clang.detail) == (
        "fails to list its targets",
        "`clang++ -print-targets` exited 1: clang++: error: unknown argument: '-print-targets'")


def test_peano_without_aie2p_cannot_compile_for_npu2(fake_tools: dict[str, Path]) -> None:
    """An llvm-aie from before aie2p compiles npu1's kernels, not npu2's."""
    clang = fake_tools["peano"] / "bin" / "clang++"
    _script(clang, clang.read_text().replace("    aie2p  - AMD AIE2p Engine\n", ""))
    assert find_tools().clang.targets == ("aie2",)
    with pytest.raises(ToolchainError) as e:
        aiedsl.build(PASSTHROUGH, output="out", device="npu2_1col", compile=True)
    assert e.value.loc is not None and e.value.loc.file.endswith("tests/test_discover.py")
    assert str(e.value).split(": ", 1)[1].splitlines()[:3] == [
        "error [toolchain]: cannot compile passthrough: Peano (llvm-aie) has no aie2p target, "
        "which the cores of npu2_1col need",
        f"  found: {clang} lists aie2",
        "  fix: install a newer llvm-aie: pip install llvm-aie -f "
        "https://github.com/Xilinx/llvm-aie/releases/expanded_assets/nightly, then export "
        "PEANO_INSTALL_DIR=$(python -c \"import sysconfig; "
        "print(sysconfig.get_paths()['purelib'])\")/llvm-aie"]
    aiedsl.build(PASSTHROUGH, output="out1", compile=True)  # npu1's aie2 compiles


# -- aiecc ----------------------------------------------------------------------------------------

def test_an_aiecc_that_fails_to_run_is_reported_so(fake_tools: dict[str, Path],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A tester's: an aiecc.py exiting 1 with ModuleNotFoundError on --help was "found", doctor
    said "aiecc takes --get-xclbin ...", which it never read, and --compile passed --get-xclbin
    to it."""
    (fake_tools["mlir_aie"] / "bin" / "aiecc").unlink()
    broken = _script(fake_tools["mlir_aie"] / "bin" / "aiecc.py",
                     BROKEN_AIECC_PY.format(log=fake_tools["log"]))
    aiecc = find_tools().aiecc
    assert (aiecc.path, aiecc.status, aiecc.problem, aiecc.detail) == (
        broken, "UNUSABLE", "fails to run",
        "`aiecc.py --help` exited 1: ModuleNotFoundError: No module named 'aie'")
    doctor = _cli("doctor")
    assert _words(f"Unusable aiecc (mlir-aie): {broken} fails to run (`aiecc.py --help` exited "
                  "1: ModuleNotFoundError: No module named 'aie'). To get one that works: pip "
                  "install mlir_aie") in _words(doctor.stdout)
    assert "aiecc takes" not in doctor.stdout
    fake_tools["log"].unlink()
    r = _cli("build", str(PASSTHROUGH), "-o", "out", "--compile")
    assert r.returncode == 4
    assert r.stderr.splitlines()[0] == (
        "error [toolchain]: cannot compile passthrough: aiecc (mlir-aie) fails to run")
    assert fake_tools["log"].read_text() == "--help\n"  # asked once, never given a design


def test_what_doctor_quotes_of_a_tool_has_its_control_characters_escaped(
        fake_tools: dict[str, Path]) -> None:
    """A tool's answer (its version, why it failed) is echoed by doctor and by --compile's
    refusal: an escape sequence in it would act on the terminal."""
    aiecc = _script(fake_tools["mlir_aie"] / "bin" / "aiecc",
                    "#!/bin/sh\nprintf '\\033]0;TITLE\\007\\033[31mboom\\033[0m\\n' >&2; exit 1\n")
    clang = fake_tools["peano"] / "bin" / "clang++"
    clang.write_text(clang.read_text().replace(
        'echo "clang version', 'printf \'\\033[1m\'; echo "clang version'))
    tools = find_tools()
    assert (tools.aiecc.path, tools.aiecc.detail) == (
        aiecc, "`aiecc --help` exited 1: \\x1b]0;TITLE\\x07\\x1b[31mboom\\x1b[0m")
    assert tools.clang.version == "\\x1b[1mclang version 19.0.0 (llvm-aie test double)"
    doctor = _cli("doctor").stdout
    assert "\x1b" not in doctor
    assert "(`aiecc --help` exited 1: \\x1b]0;TITLE\\x07\\x1b[31mboom\\x1b[0m)" in doctor


def test_aiecc_py_takes_its_own_spelling_when_its_help_says_neither(
        fake_tools: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """The Python aiecc.py knows only --aie-generate-* and asks for Peano with --no-xchesscc
    (mlir-aie's python/compiler/aiecc/cl_arguments.py): --compile and build.sh give it that
    spelling even when its help names neither."""
    (fake_tools["mlir_aie"] / "bin" / "aiecc").unlink()
    _script(fake_tools["mlir_aie"] / "bin" / "aiecc.py", FAKE_AIECC.format(
        flavor="aiecc.py, no help", help="", log=fake_tools["log"], fail="",
        accepted="--aie-generate-xclbin|--aie-generate-npu-insts|--xclbin-name=*|"
                 "--npu-insts-name=*|--no-xchesscc|--no-xbridge"))
    aiedsl.build(PASSTHROUGH, output="out", compile=True)
    assert fake_tools["log"].read_text().splitlines()[1] == f"{AIECC_WORDS['2026-03']} aie.mlir"
    fake_tools["log"].unlink()
    aiedsl.build(PASSTHROUGH, output="out2")
    r = subprocess.run(["bash", "out2/build.sh"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert fake_tools["log"].read_text().splitlines()[1] == f"{AIECC_WORDS['2026-03']} aie.mlir"


@pytest.mark.parametrize("help_text, name, spelling", [
    ("", "aiecc.py", ("generate", True)),
    ("", "aiecc", ("get", False)),
    # an aiecc.py whose help names the --get selectors is taken at its word
    ("  --get=<name>  - Request graph output(s)", "aiecc.py", ("get", False)),
])
def test_aiecc_spelling_from_its_name(help_text: str, name: str,
                                      spelling: tuple[str, bool]) -> None:
    from aiedsl.toolchain.commands import aiecc_spelling

    got = aiecc_spelling(help_text, name)
    assert (got.outputs, got.peano_flags) == spelling


# -- the AIE API headers --------------------------------------------------------------------------

def _pip_env(fake_tools: dict[str, Path]) -> tuple[Path, Path]:
    """An environment, not aiedsl's, with mlir_aie pip-installed: (its bin/, its site-packages).
    Its aiecc is pip's launcher (first line: the environment's Python)."""
    root = fake_tools["root"]
    env_bin, site = root / "env" / "bin", root / "env" / "site"
    (site / "mlir_aie" / "include" / "aie_api").mkdir(parents=True)
    (site / "mlir_aie" / "include" / "aie_api" / "aie.hpp").write_text("// test double\n")
    # a stand-in interpreter: -c prints its purelib; a script it runs as sh
    _script(env_bin / "python", f'#!/bin/sh\nif [ "$1" = -c ]; then echo {site}; exit 0; fi\n'
            'exec /bin/sh "$@"\n')
    launcher = (fake_tools["mlir_aie"] / "bin" / "aiecc").read_text().split("\n", 1)[1]
    _script(env_bin / "aiecc", f"#!{env_bin / 'python'}\n" + launcher)
    return env_bin, site


def test_the_headers_of_mlir_aie_pip_installed_elsewhere_are_found_as_build_sh_finds_them(
        fake_tools: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """A tester's: build.sh followed aiecc's launcher to its interpreter's site-packages, while
    doctor looked in aiedsl's own: "AIE API headers MISSING", and --compile and run --target npu
    refused ("AIE API headers is missing")."""
    env_bin, site = _pip_env(fake_tools)
    monkeypatch.delenv("MLIR_AIE_INSTALL_DIR")
    monkeypatch.setenv("PATH", f"{env_bin}:/usr/bin:/bin")
    headers = find_tools().headers
    assert (headers.path, headers.how) == (
        site / "mlir_aie" / "include", f"pip package mlir_aie of aiecc's Python, {env_bin}/python")
    aiedsl.build(PASSTHROUGH, output="out", compile=True)
    assert f"-I{site}/mlir_aie/include" in fake_tools["log"].read_text()
    # build.sh, from the same environment, takes the same
    fake_tools["log"].unlink()
    aiedsl.build(PASSTHROUGH, output="out2")
    r = subprocess.run(["bash", "out2/build.sh"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert f"-I{site}/mlir_aie/include" in fake_tools["log"].read_text()


def _sh_launcher_env(fake_tools: dict[str, Path], env_dir: Path) -> tuple[Path, Path]:
    """:func:`_pip_env` in ``env_dir``, whose path a #! line cannot hold (a space, or over 127
    bytes): pip's launcher is then a /bin/sh script whose second line execs the Python
    (distlib's ``_build_shebang``; the path quoted when it has a space)."""
    env_bin, site = env_dir / "bin", env_dir / "site"
    (site / "mlir_aie" / "include" / "aie_api").mkdir(parents=True)
    (site / "mlir_aie" / "include" / "aie_api" / "aie.hpp").write_text("// test double\n")
    # a stand-in interpreter: -c prints its purelib; a launcher it runs past its 3 sh lines,
    # as Python would run it past the string they are to Python
    _script(env_bin / "python3", f'#!/bin/sh\nif [ "$1" = -c ]; then echo "{site}"; exit 0; fi\n'
            'f=$1; shift; exec /bin/sh -c "$(tail -n +4 "$f")" "$f" "$@"\n')
    python = str(env_bin / "python3")
    exe = f'"{python}"' if " " in python else python
    launcher = (fake_tools["mlir_aie"] / "bin" / "aiecc").read_text().split("\n", 1)[1]
    _script(env_bin / "aiecc", f"#!/bin/sh\n'''exec' {exe} \"$0\" \"$@\"\n' '''\n" + launcher)
    return env_bin, site


@pytest.mark.parametrize("where", ["a space", "a long path"])
def test_the_headers_of_pip_s_sh_launcher_are_found_by_doctor_and_build_sh(
        fake_tools: dict[str, Path], monkeypatch: pytest.MonkeyPatch, where: str) -> None:
    """A tester's: in an environment whose path has a space (or is over 127 bytes), pip writes
    aiecc as a #!/bin/sh launcher, the Python on its second line; doctor said "AIE API headers
    MISSING", and build.sh ran /bin/sh -c 'import sysconfig ...' and died of its syntax error
    (exit 2, under set -e) instead of compiling."""
    root = fake_tools["root"]
    env_dir = root / "my env" if where == "a space" else root / ("e" * 130)
    env_bin, site = _sh_launcher_env(fake_tools, env_dir)
    assert len(str(env_bin / "python3")) + 3 > 127 or " " in str(env_bin)
    monkeypatch.delenv("MLIR_AIE_INSTALL_DIR")
    monkeypatch.setenv("PATH", f"{env_bin}:/usr/bin:/bin")
    headers = find_tools().headers
    assert (headers.path, headers.how) == (
        site / "mlir_aie" / "include", f"pip package mlir_aie of aiecc's Python, {env_bin}/python3")
    aiedsl.build(PASSTHROUGH, output="out")
    r = subprocess.run(["bash", "out/build.sh"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert fake_tools["log"].read_text().splitlines()[:2] == [
        f"{PEANO_WORDS.format(arch='aie2')} -I{site}/mlir_aie/include "
        f"-I{site}/mlir_aie/aie_runtime_lib/AIE2 -c kernels/passthrough_i32_1024.cc "
        "-o passthrough_i32_1024.o",
        f"{AIECC_WORDS['current']} aie.mlir"]


def test_a_shell_wrapper_for_aiecc_is_not_asked_for_a_python_s_site_packages(
        fake_tools: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """A #!/bin/bash wrapper as aiecc, no headers beside it: build.sh ran /bin/bash -c 'import
    sysconfig ...', and set -e ended it with bash's error, not its own message. Only a Python
    is asked; the headers are missing, and said so, by doctor and build.sh alike."""
    root = fake_tools["root"]
    calls = root / "wrapper-calls.log"
    wrapper = _script(root / "wrap" / "bin" / "aiecc",
                      f'#!/bin/bash\necho "$@" >> "{calls}"\n'
                      f'exec "{fake_tools["mlir_aie"] / "bin" / "aiecc"}" "$@"\n')
    monkeypatch.delenv("MLIR_AIE_INSTALL_DIR")
    monkeypatch.setenv("PATH", f"{wrapper.parent}:/usr/bin:/bin")
    tools = find_tools()
    assert tools.aiecc.path == wrapper and tools.headers.path is None
    assert "AIE API headers MISSING" in _words(_cli("doctor").stdout)
    aiedsl.build(PASSTHROUGH, output="out")
    r = subprocess.run(["bash", "out/build.sh"], capture_output=True, text=True)
    assert (r.returncode, r.stderr) == (127, (
        "build.sh: no AIE API headers (include/aie_api/aie.hpp) in MLIR_AIE_INSTALL_DIR, beside "
        "aiecc or in its Python's mlir_aie package: set MLIR_AIE_INSTALL_DIR to your mlir-aie "
        "install\n"))
    assert "-c" not in calls.read_text().split()  # asked for its --help, never for Python's


@pytest.mark.parametrize("lines, python", [
    ("#!{py}\n", "{py}"),
    ("#!/bin/sh\n'''exec' \"{py}\" \"$0\" \"$@\"\n' '''\n", "{py}"),
    ("#!/bin/sh\n'''exec' {py} \"$0\" \"$@\"\n' '''\n", "{py}"),
    ("#!/bin/sh\nexec {py} \"$0\" \"$@\"\n", None),  # not pip's second line
    ("#!/bin/sh\n'''exec' \"{py}\" -E \"$0\"\n", None),
    ("#!/bin/bash\n", None),  # not a Python
    ("#!{sh}\n", None),
    ("\x7fELF\x02\x01\n", None),
], ids=["#!python", "sh-quoted", "sh-bare", "sh-other", "sh-other-args", "bash", "named-sh",
        "compiled"])
def test_launcher_python_reads_both_of_pips_launchers(tmp_path: Path, lines: str,
                                                      python: str | None) -> None:
    from aiedsl.toolchain.commands import launcher_python

    py = _script(tmp_path / "e nv" / "bin" / "python3.12", "#!/bin/sh\n")
    sh = _script(tmp_path / "e nv" / "bin" / "sh", "#!/bin/sh\n")
    aiecc = _script(tmp_path / "aiecc", lines.format(py=py, sh=sh))
    assert launcher_python(aiecc) == (None if python is None else Path(python.format(py=py)))


def test_missing_headers_are_missing(fake_tools: dict[str, Path]) -> None:
    (fake_tools["mlir_aie"] / "include" / "aie_api" / "aie.hpp").unlink()
    r = _cli("build", str(PASSTHROUGH), "-o", "out", "--compile")
    assert r.stderr.splitlines()[0] == (
        "error [toolchain]: cannot compile passthrough: AIE API headers are missing")
    assert r.stderr.splitlines()[2].startswith("    to get them: comes with mlir-aie")
    assert "Missing AIE API headers. To get them: comes with mlir-aie" in _cli("doctor").stdout


def test_run_on_the_npu_without_the_tools_says_what_to_do_on_the_npu(
        no_tools: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The fix said "`aiedsl run` uses the simulator", which run --target npu does not; and after
    build.sh compiled by hand, run --target npu compiles again: it loads what aiedsl compiled
    itself (manifest.json, which build.sh does not write, gives the buffers)."""
    monkeypatch.setitem(sys.modules, "pyxrt", FakeXrt())
    art = aiedsl.build(PASSTHROUGH, output="out")
    with pytest.raises(ToolchainError) as e:
        art.run(np.arange(4096, dtype=np.int32), target="npu")
    assert e.value.fix == (  # in Python's words, at the run's line (a tester)
        "install them (`aiedsl doctor` shows what aiedsl finds): target='npu' runs what aiedsl "
        "compiled itself, whose manifest.json gives the buffers to load (a build.sh run by hand "
        "writes none); meanwhile target='sim' runs passthrough on the simulator")
    assert e.value.loc is not None and e.value.loc.file.endswith("tests/test_discover.py")
    assert e.value.exit_code == 4

