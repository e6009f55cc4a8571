"""The command line as a new user meets it: version and help, every usage error as one line and
the usage (exit 2), Python errors in a design file at the user's line, output that a pipe does
not wrap, and a start-up that loads nothing heavy before a command needs it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Callable

import pytest

from aiedsl.version import __version__
from tests.command_line import run_command

DesignFile = Callable[..., Path]
ROOT = Path(__file__).resolve().parents[1]


def aiedsl(*args: str, cwd: Path = ROOT, **env: str) -> subprocess.CompletedProcess:
    """Run the ``aiedsl`` program with a narrow, piped terminal, in this process
    (:func:`~tests.command_line.run_command`)."""
    return run_command(*args, cwd=cwd, env={**os.environ, "COLUMNS": "80", **env})


def aiedsl_process(*args: str, cwd: Path = ROOT, **env: str) -> subprocess.CompletedProcess:
    """:func:`aiedsl` as a process of its own (``python -m aiedsl``), for what only a process
    shows: its exit path, its signals, its start-up."""
    return subprocess.run([sys.executable, "-m", "aiedsl", *args], capture_output=True,
                          text=True, cwd=cwd, env={**os.environ, "COLUMNS": "80", **env})


def test_what_an_exit_function_says_is_written(tmp_path: Path) -> None:
    """The program leaves with os._exit, after running the exit functions: what one wrote to
    a buffered standard stream (a design's atexit, a cache folder's removal said) was lost,
    the streams flushed before the functions ran (a reviewer)."""
    design = tmp_path / "passthrough.py"
    design.write_text("import atexit, sys\n"
                      "atexit.register(lambda: (print('said at exit', file=sys.stderr), "
                      "print('printed at exit')))\n"
                      + (ROOT / "designs" / "passthrough.py").read_text())
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # buffered, as usual
    r = subprocess.run([sys.executable, "-m", "aiedsl", "check", "passthrough.py"],
                       capture_output=True, text=True, cwd=tmp_path, env=env)
    assert r.returncode == 0
    assert r.stderr.splitlines()[-1] == "said at exit"
    assert r.stdout.splitlines()[-1] == "printed at exit"


def test_aiedsls_own_failure_is_one_error_with_its_own_exit_code(tmp_path: Path) -> None:
    """An exception no design mistake explains ended in a traceback with exit 1, which says a
    result differs from the reference (a tester's CI read it so): it is one error [internal],
    exit 70, its traceback shown with AIEDSL_TRACEBACK=1. (Here aiedsl's build is made to
    fail; a locale whose standard output could not print the output folder's name did it
    once, and now writes the name escaped.)"""
    design = tmp_path / "passthrough.py"
    design.write_bytes((ROOT / "designs" / "passthrough.py").read_bytes())
    failing = ("import sys, aiedsl.api\n"
               "def building(*a, **k):\n"
               "    raise UnicodeEncodeError('latin-1', 'x', 6, 8, 'ordinal not in range(256)')\n"
               "aiedsl.api.building = building\n"
               "sys.argv = ['aiedsl', 'build', 'passthrough.py']\n"
               "from aiedsl.cli.entry import run\n"
               "run()\n")
    r = subprocess.run([sys.executable, "-c", failing], capture_output=True, text=True,
                       cwd=tmp_path, env={**os.environ, "COLUMNS": "80"})
    traced = subprocess.run([sys.executable, "-c", failing], capture_output=True, text=True,
                            cwd=tmp_path, env={**os.environ, "AIEDSL_TRACEBACK": "1"})
    assert traced.returncode == 70
    assert traced.stderr.startswith("Traceback (most recent call last):")
    assert r.returncode == 70
    assert r.stderr.splitlines() == [
        "error [internal]: aiedsl failed: UnicodeEncodeError: 'latin-1' codec can't encode "
        "characters in position 6-7: ordinal not in range(256)",
        "  fix: this is a failure of aiedsl itself (or of its environment: a locale that cannot "
        "print a path, a full disk), not a mistake in the design; AIEDSL_TRACEBACK=1 shows "
        "where it happened, for a report"]
    # the locale that did it: the name is written escaped, and the build succeeds
    r = aiedsl_process("build", "passthrough.py", "-o", "\u65e5\u672c", cwd=tmp_path,
                       PYTHONIOENCODING="latin-1")  # (read as a process starts)
    assert r.returncode == 0, r.stderr
    assert "wrote \\u65e5\\u672c/: " in r.stdout



def test_aiedsls_own_failure_while_loading_a_design_is_not_the_users_python_error(
        tmp_path: Path) -> None:
    """An exception of aiedsl's own code while a design loaded (here loop()'s, made to fail)
    was the user's "python error" at their line, "fix the code at this line": the user looked
    for a mistake in a line that has none. It is aiedsl's failure, naming the line that led
    there; from Python, the exception itself (not a DesignError)."""
    design = tmp_path / "passthrough.py"
    design.write_bytes((ROOT / "designs" / "passthrough.py").read_bytes())
    failing = ("import sys, functools, operator, aiedsl.lang.loops\n"
               "aiedsl.lang.loops.caller_loc = functools.partial(operator.getitem, {}, 'x')\n"
               "sys.argv = ['aiedsl', 'check', 'passthrough.py']\n"
               "from aiedsl.cli.entry import run\n"
               "run()\n")
    r = subprocess.run([sys.executable, "-c", failing], capture_output=True, text=True,
                       cwd=tmp_path, env={**os.environ, "COLUMNS": "80"})
    assert r.returncode == 70
    assert r.stderr.splitlines()[0] == (
        "error [internal]: aiedsl failed: KeyError: 'x' (in a call from passthrough.py:26)")
    python = ("import functools, operator, aiedsl.lang.loops\n"
              "from aiedsl.loader import load_design\n"
              "aiedsl.lang.loops.caller_loc = functools.partial(operator.getitem, {}, 'x')\n"
              "try:\n"
              "    load_design('passthrough.py')\n"
              "except Exception as e:\n"
              "    print(type(e).__name__, e)\n")
    r = subprocess.run([sys.executable, "-c", python], capture_output=True, text=True,
                       cwd=tmp_path)
    assert r.stdout == "KeyError 'x'\n", r.stderr

# -- version and help -----------------------------------------------------------------------------

def test_version() -> None:
    r = aiedsl("--version")
    assert (r.returncode, r.stdout, r.stderr) == (0, f"aiedsl {__version__}\n", "")


@pytest.mark.parametrize("args", [["-h"], ["--help"], []])
def test_help_lists_every_command(args: list[str]) -> None:
    r = aiedsl(*args)
    assert r.returncode == 0 and r.stderr == ""
    first = r.stdout.splitlines()[0]  # click writes [COMMAND] or COMMAND, by version
    assert first.startswith("Usage: aiedsl [OPTIONS] ") and "COMMAND" in first
    for command in ("build", "check", "map", "sim", "run", "doctor", "kernel"):
        assert f"\n  {command} " in r.stdout, command


def test_help_keeps_its_defaults_in_brackets() -> None:
    build = " ".join(aiedsl("build", "-h").stdout.split())
    assert "Output directory [default: build/<design>]." in build
    assert "[default: $PEANO_INSTALL_DIR]" in build
    sim = " ".join(aiedsl("sim", "-h").stdout.split())
    assert "[default: reference]" in sim and "[default: 0" in sim
    assert "\\[" not in sim


@pytest.mark.parametrize("command, argument, options", [
    ("build", "DESIGN", ["--device DEVICE", "--name NAME", "-o, --output DIR", "--peano DIR"]),
    ("sim", "DESIGN", ["--seed N", "--trace FILE", "--clock GHZ", "--stats FILE"]),
    ("run", "DESIGN", ["--iters N", "--warmup N", "--trace FILE", "-o, --output DIR",
                       "--stats FILE"]),
    ("map", "DESIGN", ["-o, --output FILE"]),
    ("inspect", "INSTS", []),
    ("kernel test", "PATH", ["--seed N"]),
    ("kernel cost", "KERNEL", ["--shape SHAPE", "--dtype DTYPE", "--device DEVICE"]),
])
def test_help_names_each_value_as_the_docs_do(command: str, argument: str,
                                              options: list[str]) -> None:
    # the words of the docstrings and the README (DESIGN, N, FILE), not the value's type
    out = aiedsl(*command.split(), "-h").stdout
    usage = out.splitlines()[0]  # click brackets an argument by version: DESIGN, {DESIGN}
    assert usage.startswith(f"Usage: aiedsl {command} [OPTIONS] ") and argument in usage
    assert any(line.split()[:1] in ([argument], [f"[{argument}]"]) for line in
               out.split("Arguments:")[1].splitlines()), out  # typer 0.22 shows no help here
    for option in options:
        assert f"\n  {option} " in out, option


def test_kernel_group_without_a_command_shows_its_help() -> None:
    r = aiedsl("kernel")
    assert r.returncode == 0 and r.stdout.startswith("Usage: aiedsl kernel [OPTIONS] ")
    assert "\n  test " in r.stdout and "\n  cost " in r.stdout


# -- usage errors ---------------------------------------------------------------------------------

@pytest.mark.parametrize("args, command, mentions", [
    (["build"], "build", "Missing argument"),
    (["sim", "designs/passthrough.py", "--seed", "abc"], "sim", "--seed"),
    (["sim", "designs/passthrough.py", "--kernels", "foo"], "sim", "--kernels"),
    (["run", "designs/passthrough.py", "--target", "gpu"], "run", "--target"),
    (["sim", "designs/passthrough.py", "--clock", "0"], "sim", "--clock"),
    # the command line's bad value, not the design's @design line (which names a good one)
    (["check", "designs/passthrough.py", "--device", "npu2_8col"], "check",
     "error: Invalid value for '--device': unknown device 'npu2_8col'; did you mean 'npu2' "
     "(mlir-aie's npu2 is the whole 8-column array)?"),
    (["check", "designs/passthrough.py", "--device", "npu2_9col"], "check",
     "error: Invalid value for '--device': unknown device 'npu2_9col'; known: npu1, npu1_1col, "
     "npu1_2col, npu1_3col, npu2, npu2_1col, npu2_2col, npu2_3col, npu2_4col, npu2_5col, "
     "npu2_6col, npu2_7col"),
    (["kernel", "test", "nonexist.cc"], "kernel test", "error: Invalid value for PATH: "
     "nonexist.cc does not exist (nor is a library kernel made from a file named nonexist.cc)"),
    (["kernel", "profile", "nonexist.cc"], "kernel profile", "nonexist.cc does not exist"),
    # a Path read "" as ".": "no library kernel is made from :" (a tester)
    (["kernel", "test", ""], "kernel test", "error: Invalid value for PATH: the path is empty: "
     "give a kernel file or a design file"),
    (["kernel", "profile", ""], "kernel profile", "the path is empty"),
    (["build", "designs/passthrough.py", "--no-such-flag"], "build", "--no-such-flag"),
    (["no-such-command"], "", "no-such-command"),
])
def test_a_usage_error_is_one_line_and_the_usage(args: list[str], command: str,
                                                 mentions: str) -> None:
    r = aiedsl(*args)
    assert r.returncode == 2
    lines = r.stderr.splitlines()
    assert lines[0].startswith("error: ") and mentions in lines[0], r.stderr
    assert lines[1].startswith(f"Usage: aiedsl {command}".rstrip()), r.stderr
    assert lines[2] == f"Try 'aiedsl {command + ' ' if command else ''}-h' for help."
    assert len(lines) == 3 and "Traceback" not in r.stderr and r.stdout == ""


@pytest.mark.parametrize("args, command, first", [
    # -D N=8192 -D N=2048 kept the last, unsaid (a tester)
    (["check", "designs/passthrough.py", "-D", "N=8192", "-D", "N=2048"], "check",
     "error: Invalid value for '-D' / '--define': N is given two values, -D N=8192 and "
     "-D N=2048: give it once"),
    (["sim", "designs/passthrough.py", "-D", "N=8192", "--define", "TILE=512", "-D", "N=4096"],
     "sim", "error: Invalid value for '-D' / '--define': N is given two values, -D N=8192 and "
     "-D N=4096: give it once"),
    # -D W was an error [define] without the usage lines (a tester)
    (["check", "designs/passthrough.py", "-D", "W"], "check",
     "error: Invalid value for '-D' / '--define': -D W is not NAME=VALUE: write e.g. -D M=1024, "
     "M a define() of the design"),
    (["sim", "designs/passthrough.py", "-D", "a-b=3"], "sim",
     "error: Invalid value for '-D' / '--define': -D a-b=3 is not NAME=VALUE: write e.g. "
     "-D M=1024, M a define() of the design"),
    # --peano '' was taken for '.', and --peano without --compile was ignored, unsaid
    (["build", "designs/passthrough.py", "--peano", ""], "build",
     "error: Invalid value for '--peano': the directory name is empty (name a directory, or "
     "leave the option out)"),
    (["doctor", "--peano", ""], "doctor",
     "error: Invalid value for '--peano': the directory name is empty (name a directory, or "
     "leave the option out)"),
    (["build", "designs/passthrough.py", "--peano", "/opt/peano"], "build",
     "error: Invalid value for '--peano': only --compile runs Peano: add --compile, or leave "
     "--peano out"),
    # map -o x.png wrote SVG into x.png
    (["map", "designs/passthrough.py", "-o", "maps/x.png"], "map",
     "error: Invalid value for '-o' / '--output': aiedsl map draws SVG, not .png: name a .svg "
     "file, e.g. -o maps/x.svg"),
    # both given: the message asked for one of them
    (["kernel", "test", "--all", "kernels_cpp/passthrough.cc"], "kernel test",
     "error: Invalid value for PATH: --all and kernels_cpp/passthrough.cc exclude each other: "
     "give a kernel file or a design file, or --all alone"),
    (["kernel", "test"], "kernel test",
     "error: Invalid value for PATH: give a kernel file or a design file, or --all"),
    # --clock nan said "Input should be less than or equal to 100"
    (["sim", "designs/passthrough.py", "--clock", "nan"], "sim",
     "error: Invalid value for '--clock': nan is not a core clock: give a number of GHz from "
     "0.001 to 100 (1 MHz to 100 GHz), e.g. --clock 1.5"),
    (["sim", "designs/passthrough.py", "--clock", "fast"], "sim",
     "error: Invalid value for '--clock': fast is not a core clock: give a number of GHz from "
     "0.001 to 100 (1 MHz to 100 GHz), e.g. --clock 1.5"),
    (["sim", "designs/passthrough.py", "--clock", "200"], "sim",
     "error: Invalid value for '--clock': 200 is not a core clock: give a number of GHz from "
     "0.001 to 100 (1 MHz to 100 GHz), e.g. --clock 1.5"),
    # 5000 digits were said whole, and a control character raw
    (["sim", "designs/passthrough.py", "--clock", "9" * 5000], "sim",
     "error: Invalid value for '--clock': 999999...999999 (5000 digits) is not a core clock: "
     "give a number of GHz from 0.001 to 100 (1 MHz to 100 GHz), e.g. --clock 1.5"),
    (["sim", "designs/passthrough.py", "--clock", "1\x1b[2J"], "sim",
     "error: Invalid value for '--clock': 1\\x1b[2J is not a core clock: give a number of "
     "GHz from 0.001 to 100 (1 MHz to 100 GHz), e.g. --clock 1.5"),
])
def test_a_bad_combination_or_value_is_a_usage_error_before_any_work(
        tmp_path: Path, args: list[str], command: str, first: str) -> None:
    args = [str(ROOT / a) if a.startswith(("designs/", "kernels_cpp/")) else a for a in args]
    first = first.replace("kernels_cpp/", f"{ROOT}/kernels_cpp/")
    r = aiedsl(*args, cwd=tmp_path)
    assert (r.returncode, r.stdout) == (2, "")
    lines = r.stderr.splitlines()
    assert lines[0] == first
    assert lines[2] == f"Try 'aiedsl {command} -h' for help." and len(lines) == 3
    assert os.listdir(tmp_path) == []


def test_a_define_given_twice_with_one_value_is_taken() -> None:
    r = aiedsl("check", "designs/passthrough.py", "-D", "N=8192", "-D", "N=8192")
    assert r.returncode == 0 and r.stdout.endswith("passthrough: all checks pass on npu1_1col\n")


def test_clock_in_ghz_reaches_the_simulator(tmp_path: Path) -> None:
    import json

    r = aiedsl("sim", "designs/passthrough.py", "--clock", "0.5", "--stats",
               str(tmp_path / "s.json"))
    assert r.returncode == 0, r.stderr
    assert json.loads((tmp_path / "s.json").read_text())["timing"]["clock_hz"] == 0.5e9


@pytest.mark.parametrize("args, option, kind", [
    (["sim", "--stats", ""], "'--stats'", "file"),
    (["sim", "--trace", ""], "'--trace'", "file"),
    (["run", "--trace", ""], "'--trace'", "file"),
    (["run", "--stats", ""], "'--stats'", "file"),
    (["map", "-o", ""], "'-o' / '--output'", "file"),
    (["build", "-o", ""], "'-o' / '--output'", "directory"),
    (["run", "-o", ""], "'-o' / '--output'", "directory"),
])
def test_an_empty_output_name_is_a_usage_error_before_any_work(
        tmp_path: Path, args: list[str], option: str, kind: str) -> None:
    """--stats '' (an unset variable) exited 0 and wrote nothing, unsaid; run --trace '' built
    and simulated, then said ' is a folder, not a file' (a tester)."""
    command, *rest = args
    r = aiedsl(command, str(ROOT / "designs" / "passthrough.py"), *rest, cwd=tmp_path)
    assert r.returncode == 2 and r.stdout == ""
    first, usage, last = r.stderr.splitlines()
    assert first == (f"error: Invalid value for {option}: the {kind} name is empty (name a "
                     f"{kind}, or leave the option out)")
    # click brackets an argument by version: DESIGN, {DESIGN}
    assert usage.replace("{DESIGN}", "DESIGN") == f"Usage: aiedsl {command} [OPTIONS] DESIGN"
    assert last == f"Try 'aiedsl {command} -h' for help."
    assert os.listdir(tmp_path) == []


# -- Python errors in a design file ---------------------------------------------------------------

BROKEN = '''
    import numpy as np
    from aiedsl import Tensor, design, fifo, herd, i32, runtime

    TILE = 1024
    PARTS = TILE // len([])
    '''


def test_an_exception_in_a_design_file_is_a_design_error_at_its_line(
        design_file: DesignFile) -> None:
    path = design_file(BROKEN)
    r = aiedsl("check", str(path), cwd=path.parent)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr == (
        "d.py:5: error [python error]: ZeroDivisionError: integer division or modulo by zero "
        "(while loading d.py)\n"
        "  fix: fix the code at this line; AIEDSL_TRACEBACK=1 shows the whole traceback\n")


def test_an_exception_inside_a_library_call_is_reported_at_the_users_line(
        design_file: DesignFile) -> None:
    path = design_file('''
        import numpy as np

        ones = np.ones(3)
        grid = ones.reshape(2, 2)
        ''')
    r = aiedsl("sim", str(path), cwd=path.parent)
    assert r.returncode == 2
    assert r.stderr.startswith("d.py:4: error [python error]: ValueError: cannot reshape array "
                               "of size 3 into shape (2,2) (while loading d.py)\n")


def test_traceback_on_request(design_file: DesignFile) -> None:
    path = design_file(BROKEN)
    plain = aiedsl("check", str(path), cwd=path.parent)
    r = aiedsl("check", str(path), cwd=path.parent, AIEDSL_TRACEBACK="1")
    assert r.returncode == plain.returncode == 2
    assert r.stderr.startswith("Traceback (most recent call last)")
    assert "ZeroDivisionError" in r.stderr
    # the traceback, then the message as it is printed without one, but that the traceback
    # it offers is above (a newcomer's tester: it still said AIEDSL_TRACEBACK=1 shows it)
    assert plain.stderr.endswith("; AIEDSL_TRACEBACK=1 shows the whole traceback\n")
    assert r.stderr.endswith("\naiedsl.errors.DesignError:\n" + plain.stderr.replace(
        "AIEDSL_TRACEBACK=1 shows the whole traceback", "the whole traceback is above")), r.stderr


@pytest.mark.parametrize("args, code", [
    (["sim", str(ROOT / "tests" / "hang_corpus" / "broadcast_under_buffered.py")], 3),
    (["run", str(ROOT / "designs" / "passthrough.py"), "--target", "npu", "-o", "b"], 4),
    (["build", str(ROOT / "designs" / "passthrough.py"), "-o", "."], 2),
])
def test_a_traceback_changes_no_exit_code(tmp_path: Path, args: list[str], code: int) -> None:
    """AIEDSL_TRACEBACK=1 re-raised the error: every code (a deadlock's 3, a missing NPU's 4, a
    refused output directory's 2) became Python's 1 (a tester)."""
    plain = aiedsl(*args, cwd=tmp_path, PATH="/usr/bin:/bin")
    shown = aiedsl(*args, cwd=tmp_path, PATH="/usr/bin:/bin", AIEDSL_TRACEBACK="1")
    assert plain.returncode == shown.returncode == code, shown.stderr
    assert "Traceback" not in plain.stderr and shown.stderr.startswith("Traceback")
    assert shown.stderr.endswith(":\n" + plain.stderr) and shown.stdout == plain.stdout


def test_a_syntax_error_is_a_design_error(design_file: DesignFile) -> None:
    path = design_file('''
        from aiedsl import Tensor, design

        def core(:
            pass
        ''')
    r = aiedsl("build", str(path), cwd=path.parent)
    assert r.returncode == 2
    assert r.stderr == ("d.py:3: error [python error]: SyntaxError: invalid syntax\n"
                        "  found: def core(:\n"
                        "  fix: fix the Python syntax at this line\n")


def test_sys_exit_in_a_design_file_is_a_design_error(design_file: DesignFile) -> None:
    path = design_file('''
        import sys

        sys.exit(0)
        ''')
    r = aiedsl("build", str(path), cwd=path.parent)
    assert r.returncode == 2
    assert r.stderr.splitlines()[0] == (
        "d.py:3: error [design file]: d.py called sys.exit(0) while aiedsl was loading it")
    assert not (path.parent / "build").exists()


def test_an_exception_in_the_reference_is_at_the_references_line(
        design_file: DesignFile) -> None:
    path = design_file((ROOT / "designs" / "passthrough.py").read_text().replace(
        "return inp.copy()", "return inp.copy().reshape(3, -1)"))
    text = path.read_text()
    line = text[:text.index("reshape(3, -1)")].count("\n") + 1
    r = aiedsl("sim", str(path), cwd=path.parent)
    assert r.returncode == 2
    assert r.stderr.startswith(f"d.py:{line}: error [python error]: ValueError: cannot reshape "
                               "array of size")
    assert "(while running the reference of 'passthrough')" in r.stderr


@pytest.mark.parametrize("call", ["sys.exit()", "sys.exit(0)", "raise Boom('x')"])
def test_an_exit_in_the_reference_is_a_design_error(design_file: DesignFile, call: str) -> None:
    """A tester's reference calling sys.exit() made sim and run exit 0 without a word (a CI job
    would call it passing); an exception that is not an Exception printed a traceback."""
    path = design_file((ROOT / "designs" / "passthrough.py").read_text().replace(
        "    return inp.copy()", f"    import sys\n\n    class Boom(BaseException):\n"
        f"        pass\n\n    {call}"))
    text = path.read_text()
    line = text[:text.index(call)].count("\n") + 1
    r = aiedsl("sim", str(path), cwd=path.parent)
    assert r.returncode == 2
    if call.startswith("sys"):
        assert r.stderr == (
            f"d.py:{line}: error [python error]: {call} called while running the reference of "
            "'passthrough'\n  fix: return from the function instead: sys.exit would end aiedsl "
            "itself\n")
    else:
        assert r.stderr.startswith(f"d.py:{line}: error [python error]: Boom: x (while running "
                                   "the reference of 'passthrough')")


def test_a_reference_returning_a_dict_is_told_what_to_return(design_file: DesignFile) -> None:
    """A tester's reference returned {"out": ...}: the error spoke of 'object values'."""
    path = design_file((ROOT / "designs" / "passthrough.py").read_text().replace(
        "return inp.copy()", "return {'out': inp.copy()}"))
    r = aiedsl("sim", str(path), cwd=path.parent)
    assert r.returncode == 2
    assert r.stderr.splitlines()[1:] == [
        "  limit: one array per drained tensor, in argument order (a tuple or list of them for "
        "several: out)",
        "  found: a dict of ['out']",
        "  fix: return the array itself"]
    assert "error [reference]: the reference of 'passthrough' returned a dict" in r.stderr


THREE_OUTPUTS = """
import numpy as np
from aiedsl import Tensor, design, fifo, herd, i32, runtime
from aiedsl.kernels.library import vector_scalar

@design(device="npu1_2col")
def three(a: Tensor[16, 32, i32], b: Tensor[16, 32, i32], c: Tensor[16, 32, i32],
          d: Tensor[16, 32, i32]):
    src = fifo(Tensor[16, 32, i32], name="src")
    outs = [fifo(Tensor[16, 32, i32], name=n) for n in ("ob", "oc", "od")]
    adds = [vector_scalar("add", Tensor[16, 32, i32]) for _ in range(3)]

    def one_herd(n):
        @herd(name=f"h{n}")
        def body():
            with src.consume() as x, outs[n].produce() as y:
                adds[n](x, y, n + 1)

    for n in range(3):
        one_herd(n)

    with runtime() as rt:
        rt.fill(src, a)
        for o, t in zip(outs, (b, c, d)):
            rt.drain(o, t)

@three.reference
def reference(a):
    return {value}
"""


def test_a_reference_may_return_a_list_for_several_outputs(design_file: DesignFile) -> None:
    """AIR's broadcast/multi_herd port returned [a + 1, a + 2, a + 3] for its three outputs
    and was told it 'returned 1 value(s) for 3 output(s)', with the fix it had followed."""
    path = design_file(THREE_OUTPUTS.replace("{value}", "[a + 1, a + 2, a + 3]"))
    r = aiedsl("sim", str(path), cwd=path.parent)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[1:4] == [
        f"PASS {n}: exact (integers must match exactly)" for n in "bcd"]
    # two arrays for three outputs, in a list: the count, the limit and what to return
    path = design_file(THREE_OUTPUTS.replace("{value}", "[a + 1, a + 2]"))
    r = aiedsl("sim", str(path), cwd=path.parent)
    assert r.returncode == 2
    line = path.read_text().splitlines().index("@three.reference") + 1  # its first line
    assert r.stderr == (
        f"d.py:{line}: error [reference]: the reference of 'three' returned 2 value(s) for 3 "
        "output(s) ['b', 'c', 'd']\n"
        "  limit: one array per drained tensor, in argument order (a tuple or list of them for "
        "several: b, c, d)\n"
        "  found: 2 value(s) in a list\n"
        "  fix: return b, c, d, one array per drained tensor in argument order\n")


def test_a_drain_into_the_input_passes_with_a_note(design_file: DesignFile) -> None:
    """A newcomer's rt.drain(b, inp) (meaning out) passed: the design writes inp, the reference
    says what it holds, and out is never moved. mlir-aie's designs keep untouched tensors for
    the host's buffer layout, so it is a note, not an error."""
    src = (ROOT / "designs" / "passthrough.py").read_text()
    assert src.count("rt.drain(from_mem, out") == 1
    path = design_file(src.replace("rt.drain(from_mem, out", "rt.drain(from_mem, inp"))
    r = aiedsl("sim", str(path), cwd=path.parent)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[1:3] == [
        "PASS inp: exact (integers must match exactly)",
        "  note: 'inp' is filled from and drained into, while 'out' is neither: does a drain "
        "name the wrong tensor?"]


def test_a_reference_of_another_2d_shape_is_refused(design_file: DesignFile) -> None:
    """A newcomer's transpose reference returned (16, 32) for a (32, 16) output: aiedsl
    reshaped it and compared a reordered result. A flat result is still taken."""
    src = (ROOT / "designs" / "passthrough.py").read_text()
    src = src.replace("out: Tensor[N, i32]", "out: Tensor[N // 128, 128, i32]")
    path = design_file(src.replace("return inp.copy()", "return inp.reshape(128, -1)"))
    r = aiedsl("sim", str(path), cwd=path.parent)
    assert r.returncode == 2, r.stdout + r.stderr
    assert r.stderr.splitlines()[1:] == [
        "  limit: shape [32, 128] (or a flat array of its 4096 values in row-major order)",
        "  found: shape [128, 32]",
        "  fix: return the output's shape (is a .T or a reshape missing?)"]
    path.write_text(path.read_text().replace("inp.reshape(128, -1)", "inp.copy()"))
    assert aiedsl("sim", str(path), cwd=path.parent).returncode == 0  # flat: taken


def test_a_design_above_the_working_directory_is_named_as_typed(design_file: DesignFile
                                                                 ) -> None:
    """-D BOGUS=1 named a design above the cwd by its absolute path and -D N=abc as typed;
    both name it as typed now."""
    path = design_file((ROOT / "designs" / "passthrough.py").read_text())
    (path.parent / "sub").mkdir()
    for define, line in (("BOGUS=1", 12), ("N=abc", 12)):  # (the first define())
        r = aiedsl("check", "../d.py", "-D", define, cwd=path.parent / "sub")
        assert r.returncode == 2 and r.stderr.startswith(f"../d.py:{line}: error [define]"), \
            r.stderr


# -- output through a pipe ------------------------------------------------------------------------

def test_piped_output_is_not_wrapped(tmp_path: Path) -> None:
    doctor = aiedsl("doctor", PATH="/usr/bin:/bin")  # nothing installed: long install lines
    lines = doctor.stdout.splitlines()
    assert any(line.startswith("Missing aiecc (mlir-aie). To get it: pip install mlir_aie "
                               "-f https://github.com/Xilinx/mlir-aie/releases/") and
               line.endswith("or export MLIR_AIE_INSTALL_DIR=<your mlir-aie install>")
               for line in lines), doctor.stdout
    assert not any(line.startswith(("┃", "│", "┏")) for line in lines)  # no box drawing
    assert any(line.split()[:2] == ["pyxrt", "(XRT)"] for line in lines)
    r = aiedsl("run", "designs/passthrough.py", "-o", str(tmp_path / "out"))
    assert r.returncode == 0, r.stderr
    said = [line for line in r.stdout.splitlines() if line.startswith("no NPU (")]
    assert said and said[0].endswith("source /opt/xilinx/xrt/setup.sh)): running on the simulator")


# -- start-up -------------------------------------------------------------------------------------

def test_the_command_line_loads_nothing_heavy_before_a_command_needs_it() -> None:
    code = ("import sys, aiedsl.cli.process; print(sorted(m for m in ('numpy', 'pydantic', 'rich', "
            "'jinja2', 'ml_dtypes', 'aiedsl.ir') if m in sys.modules))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.stdout == "[]\n", r.stderr


def test_a_completion_variable_left_in_the_environment_is_not_obeyed() -> None:
    """Completion is off, yet _AIEDSL_COMPLETE=bash_source made every command print "Shell
    source not supported.", exit 1 and run nothing (a CLI tester's find)."""
    r = subprocess.run([sys.executable, "-m", "aiedsl", "check", "designs/passthrough.py"],
                       cwd=ROOT, capture_output=True, text=True,
                       env={**os.environ, "_AIEDSL_COMPLETE": "bash_source"})
    assert (r.returncode, r.stdout.splitlines()[-1]) == (
        0, "passthrough: all checks pass on npu1_1col"), r.stderr


@pytest.mark.parametrize("args", [["run", "--target", "gpu"], ["sim", "--seed", "-1"]])
def test_a_refused_option_value_is_said_in_aiedsls_words(args: list[str]) -> None:
    """typer 0.29 validates options with pydantic, whose words leaked: "Value error, 'gpu' is
    not one of ...", "Input should be greater than or equal to 0" (a CLI tester's find)."""
    r = subprocess.run([sys.executable, "-m", "aiedsl", args[0], "designs/passthrough.py",
                        *args[1:]], cwd=ROOT, capture_output=True, text=True)
    first = r.stderr.splitlines()[0]
    assert r.returncode == 2 and first.startswith(f"error: Invalid value for '{args[1]}'")
    assert "Value error" not in first and "Input should" not in first, first


def test_importing_aiedsl_loads_the_language_on_first_use() -> None:
    code = ("import sys, aiedsl; before = 'aiedsl.lang' in sys.modules; aiedsl.Tensor; "
            "print(before, 'aiedsl.lang' in sys.modules, 'aiedsl.api' in sys.modules)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.stdout == "False True False\n", r.stderr


# -- tables on a terminal -------------------------------------------------------------------------

def _column_text(rendered: str, index: int) -> str:
    """What column ``index`` of a rendered rich table holds, its folded pieces joined."""
    return "".join(line.split("│")[index + 1].strip() for line in rendered.splitlines()
                   if line.startswith("│"))


def test_a_table_on_an_80_column_terminal_keeps_every_name_whole() -> None:
    import io

    from rich.console import Console

    from aiedsl.checks import check_design
    from aiedsl.cli.reports import rich_table
    from aiedsl.codegen.report import COLUMNS, report_rows
    from aiedsl.loader import load_design
    from aiedsl.targets import get_target

    placed, usage = check_design(load_design(ROOT / "designs" / "gemm_bf16.py").ir)
    rows = report_rows(placed, get_target(placed.device), usage)
    path = "/tmp/venv_fresh/lib/python3.11/site-packages/llvm-aie"
    for title, columns, body, column, whole in [
            ("gemm", COLUMNS, rows, COLUMNS.index("runs"),
             ["core[1,1]:matmul_bf16_f32_64x64x64_4x8x4,zero_f32_4096"]),
            ("aiedsl doctor", ("tool", "status", "where / how found", "version"),
             [("Peano (llvm-aie)", "MISSING", f"no bin/clang++ under {path} (pip package "
               "llvm-aie)", "-")], 2, [path])]:
        out = io.StringIO()
        Console(file=out, width=80, force_terminal=True, color_system=None).print(
            rich_table(title, columns, body))
        text = out.getvalue()
        assert "…" not in text and max(len(line) for line in text.splitlines()) <= 80
        joined = _column_text(text, column).replace(" ", "")
        for name in whole:
            assert name in joined, text


def _on_a_terminal(*args: str, **env: str) -> str:
    """What ``aiedsl ARGS`` writes to a terminal (a pseudo-terminal 100 columns wide)."""
    import pty

    main, sub = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "aiedsl", *args], cwd=ROOT, stdout=sub,
                            stderr=subprocess.PIPE,
                            env={**os.environ, "COLUMNS": "100", "TERM": "xterm", **env})
    os.close(sub)
    chunks = []
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:  # the other end closed
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(main)
    assert proc.wait() == 0
    return b"".join(chunks).decode()


@pytest.mark.parametrize("value, styled", [("1", False), ("", True), (None, True)])
def test_no_color_draws_the_table_without_styles(value: str | None, styled: bool) -> None:
    """NO_COLOR=1 on a terminal still drew the table's italic title and bold header (rich
    drops only colours); any non-empty value now drops every style (https://no-color.org)."""
    env = {"NO_COLOR": value} if value is not None else {}
    if value is None and "NO_COLOR" in os.environ:
        pytest.skip("NO_COLOR is set around the tests")
    out = _on_a_terminal("check", "designs/passthrough.py", **env)
    assert "┃ tile " in out.replace("\x1b[1m", "").replace("\x1b[0m", "")  # a rich table
    assert ("\x1b[" in out) is styled, out


def test_a_table_too_wide_for_the_terminal_is_printed_as_plain_columns() -> None:
    """On 80 columns the boxed table of gemm_bf16 folded "160.0 / 512 KB" and every kernel name
    over several lines, 147 lines in all (a tester): it is printed as when piped."""
    out = _on_a_terminal("check", "designs/gemm_bf16.py", COLUMNS="80", NO_COLOR="1")
    lines = out.splitlines()
    assert "┃" not in out and lines[1].split() == [
        "tile", "kind", "memory", "dma", "in", "dma", "out", "locks", "bds", "runs"]
    assert any("160.0 / 512 KB" in line for line in lines)


def test_no_color_draws_progress_bars_without_styles(monkeypatch: pytest.MonkeyPatch) -> None:
    from aiedsl.cli.progress import stderr_console

    monkeypatch.setenv("NO_COLOR", "yes")
    assert stderr_console().color_system is None


# -- Ctrl-C ---------------------------------------------------------------------------------------

def test_an_interrupted_command_says_aborted_and_exits_130(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    import aiedsl.checks
    from aiedsl.cli.process import main

    def interrupted(*args: object) -> None:
        raise KeyboardInterrupt  # Ctrl-C while the checks run

    monkeypatch.setattr(aiedsl.checks, "check_design", interrupted)
    with pytest.raises(SystemExit) as e:
        main(["check", str(ROOT / "designs" / "passthrough.py")])
    assert e.value.code == 130
    assert capsys.readouterr() == ("", "aborted\n")


@pytest.mark.parametrize("stop, code, by", [
    (KeyboardInterrupt(), 130, "Ctrl-C (SIGINT)"), ("SIGTERM", 143, "SIGTERM")])
def test_an_interrupted_run_writes_its_stats_file_in_place_of_the_last_runs(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture, tmp_path: Path,
        stop: object, code: int, by: str) -> None:
    """A CI job's timeout (SIGTERM) left the previous run's stats file, "passed": true, in
    place (a tester's find)."""
    import signal

    import aiedsl.sim
    from aiedsl.cli.process import main

    stats = tmp_path / "s.json"
    main(["sim", str(ROOT / "designs" / "passthrough.py"), "--stats", str(stats)])
    assert json.loads(stats.read_text())["passed"] is True

    def interrupted(*args: object, **kwargs: object) -> None:
        if isinstance(stop, BaseException):
            raise stop
        os.kill(os.getpid(), getattr(signal, str(stop)))  # as a CI job's timeout sends it

    monkeypatch.setattr(aiedsl.sim, "simulate", interrupted)
    capsys.readouterr()
    with pytest.raises(SystemExit) as e:
        main(["sim", str(ROOT / "designs" / "passthrough.py"), "--stats", str(stats)])
    assert e.value.code == code
    from aiedsl.version import __version__

    assert json.loads(stats.read_text()) == {
        "generator": f"aiedsl {__version__}", "design": "passthrough", "device": "npu1_1col",
        "passed": False, "error": {"exit_code": code, "rule": "interrupted",
                                   "message": f"stopped by {by} before it ended",
                                   "file": None, "line": None}}


STOPPED_AT_START = """
import os, signal, sys
STOP = sys.argv.pop(1)

class Stop:  # the stop lands while the command line loads PART
    def find_spec(self, name, path=None, target=None):
        if name == PART:
            if STOP == "SIGTERM":
                os.kill(os.getpid(), signal.SIGTERM)  # as a CI job's timeout sends it
            raise KeyboardInterrupt
        return None

sys.meta_path.insert(0, Stop())
from aiedsl.cli.entry import run
run()
"""


@pytest.mark.parametrize("part", ["aiedsl.cli.process", "aiedsl.api"])
@pytest.mark.parametrize("stop, code, by", [("Ctrl-C", 130, "Ctrl-C (SIGINT)"),
                                            ("SIGTERM", 143, "SIGTERM")])
def test_a_run_stopped_while_the_command_line_loads_writes_its_stats_file_too(
        tmp_path: Path, part: str, stop: str, code: int, by: str) -> None:
    """(a CI integrator's tester) Stopped 0.3 s in, while the command line loaded its parts
    (aiedsl.cli.process, then a command's own imports), a run left the previous run's stats
    file, "passed": true, in place, though it exited 130 (SIGTERM then killed it: 143)."""
    stats = tmp_path / "s.json"
    design = str(ROOT / "designs" / "passthrough.py")
    assert aiedsl("sim", design, "--stats", str(stats)).returncode == 0
    assert json.loads(stats.read_text())["passed"] is True
    r = subprocess.run([sys.executable, "-c", STOPPED_AT_START.replace("PART", repr(part)),
                        stop, "sim", "--seed", "3", design, "--stats", str(stats)],
                       capture_output=True, text=True)
    assert (r.returncode, r.stderr) == (code, "aborted\n")
    assert json.loads(stats.read_text()) == {
        "generator": f"aiedsl {__version__}", "design": "passthrough", "device": None,
        "passed": False, "error": {"exit_code": code, "rule": "interrupted",
                                   "message": f"stopped by {by} before it ended",
                                   "file": None, "line": None}}


def test_a_stop_replaces_only_an_aiedsl_stats_file_that_says_no_stop(tmp_path: Path) -> None:
    from aiedsl.cli.stopped_stats import interrupted_stats, replace_with_stopped, stats_words

    assert stats_words(["--version"]) == ("", None, None, None)
    assert stats_words(["run", "-DN=8", "--device", "npu2", "-h", "d.py", "--stats", "s"]) == (
        "run", "d", "s", "npu2")
    assert stats_words(["sim", "x/d.py", "--name", "other"])[1] == "other"
    stopped = interrupted_stats("d", None, None)
    theirs = tmp_path / "theirs.json"
    theirs.write_text('{"passed": true}\n')
    replace_with_stopped(str(theirs), stopped)
    replace_with_stopped(str(tmp_path / "missing.json"), stopped)
    assert theirs.read_text() == '{"passed": true}\n'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["theirs.json"]
    ours = tmp_path / "ours.json"
    ours.write_text(json.dumps({"generator": "aiedsl 0", "design": "e", "passed": True}))
    replace_with_stopped(str(ours), stopped)
    assert json.loads(ours.read_text()) == stopped
    replace_with_stopped(str(ours), interrupted_stats("other", None, 15))  # says a stop: kept
    assert json.loads(ours.read_text()) == stopped
    umask = os.umask(0)
    os.umask(umask)
    assert ours.stat().st_mode & 0o777 == 0o666 & ~umask  # (mkstemp's 0600: a reviewer)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ours.json", "theirs.json"]
    if hasattr(os, "mkfifo"):  # a pipe to a reader, whose end aiedsl holds: never read
        import threading

        os.mkfifo(tmp_path / "pipe")
        done = threading.Thread(target=replace_with_stopped, args=(str(tmp_path / "pipe"),
                                                                   stopped), daemon=True)
        done.start()
        done.join(10)
        assert not done.is_alive()


def test_ctrl_c_wrapped_by_pydantics_serializer_still_aborts(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    """Ctrl-C while design.json was serialized came out as pydantic's own error: a traceback and
    exit 1, a failed comparison's code (a tester's find, at 1.02 s into a build)."""
    from pydantic_core import PydanticSerializationError

    import aiedsl.checks
    from aiedsl.cli.process import main

    def interrupted(*args: object) -> None:
        raise PydanticSerializationError(
            "Error calling function `_without_circuit_rule`: KeyboardInterrupt: ")

    monkeypatch.setattr(aiedsl.checks, "check_design", interrupted)
    with pytest.raises(SystemExit) as e:
        main(["check", str(ROOT / "designs" / "passthrough.py")])
    assert e.value.code == 130
    assert capsys.readouterr() == ("", "aborted\n")


# -- output for machines -------------------------------------------------------------------------

@pytest.mark.parametrize("command", [["sim"], ["check"], ["build", "-o", "{tmp}/b"]])
def test_a_reader_that_leaves_early_does_not_change_the_exit_code(
        command: list[str], tmp_path: Path) -> None:
    """`aiedsl sim d.py | true` exited 1, a FAIL's code, for a PASS (click's handling of the
    broken pipe); under `set -o pipefail` a passing CI step failed with no message."""
    args = [a.format(tmp=tmp_path) for a in command]
    proc = subprocess.Popen([sys.executable, "-m", "aiedsl", *args, "designs/passthrough.py"],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader is gone before aiedsl writes a line
    err = proc.stderr.read()
    assert (proc.wait(), err) == (0, b"")


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("command", [["sim"], ["check"], ["build", "-o", "{tmp}/b"],
                                     ["sim", "--help"], ["--help"], ["kernel", "--help"]])
def test_standard_output_that_cannot_be_written_is_one_error_line(
        command: list[str], tmp_path: Path) -> None:
    """`aiedsl sim d.py > /dev/full` ended in an OSError traceback and exit 1 (a tester), and
    so did `aiedsl --help > /dev/full`, written by typer itself (another)."""
    args = [a.format(tmp=tmp_path) for a in command]  # --help is eager: the design is left
    with open("/dev/full", "w") as full:
        r = subprocess.run([sys.executable, "-m", "aiedsl", *args, "designs/passthrough.py"],
                           cwd=ROOT, stdout=full, stderr=subprocess.PIPE, text=True)
    assert (r.returncode, r.stderr) == (
        2, "error [standard output]: cannot write standard output: No space left on device\n"
        "  fix: send standard output where it can be written (> FILE, or > /dev/null to "
        "discard it)\n")


def test_a_line_that_cannot_be_written_stops_the_command_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Midway (more than a buffer's worth said), the write itself fails: one error, and the
    rest goes to the null device instead of failing again at exit."""
    import errno

    from aiedsl.cli.common import say
    from aiedsl.errors import DesignError

    with open(tmp_path / "out", "w") as target:
        class Full:
            def write(self, text: str) -> int:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

            def fileno(self) -> int:
                return target.fileno()

        monkeypatch.setattr(sys, "stdout", Full())
        with pytest.raises(DesignError) as e:
            say("a line")
        assert str(e.value) == ("error [standard output]: cannot write standard output: No "
                                "space left on device\n"
                                "  fix: send standard output where it can be written (> FILE, "
                                "or > /dev/null to discard it)")
        assert os.path.samefile(f"/proc/self/fd/{target.fileno()}", os.devnull)


@pytest.mark.parametrize("closed", [">&-", ">&- 2>&-"])
def test_a_closed_standard_output_stops_the_command_before_any_work(
        tmp_path: Path, closed: str) -> None:
    """`aiedsl check d.py >&-` failed with AttributeError: 'NoneType' object has no attribute
    'isatty' (a tester); a build would have written its files and said nothing of them."""
    line = (f"'{sys.executable}' -m aiedsl build '{ROOT}/designs/passthrough.py' -o "
            f"'{tmp_path}/b' {closed}")
    r = subprocess.run(["bash", "-c", line], capture_output=True, text=True)
    assert r.returncode == 2
    assert r.stderr == ("" if "2>&-" in closed else
                        "error [standard output]: standard output is closed (>&-), so aiedsl "
                        "could say nothing of what it does; to discard what it prints, send it "
                        "to /dev/null (> /dev/null)\n")
    assert os.listdir(tmp_path) == []


def test_a_closed_standard_error_changes_nothing_else(tmp_path: Path) -> None:
    line = f"'{sys.executable}' -m aiedsl check '{ROOT}/designs/passthrough.py' 2>&-"
    r = subprocess.run(["bash", "-c", line], capture_output=True, text=True)
    assert (r.returncode, r.stdout.splitlines()[-1]) == (
        0, "passthrough: all checks pass on npu1_1col")
    missing = f"'{sys.executable}' -m aiedsl check missing.py 2>&-"
    r = subprocess.run(["bash", "-c", missing], capture_output=True, text=True, cwd=tmp_path)
    assert (r.returncode, r.stdout, r.stderr) == (2, "", "")


def test_stats_are_strict_json_of_what_sim_prints(tmp_path: Path) -> None:
    """A performance gate had to scrape the printed text (thousands separators, rounded
    percentages): --stats writes the same results as numbers."""
    import json

    path = tmp_path / "s" / "gemm.json"
    r = aiedsl("sim", "designs/gemm_bf16.py", "-D", "M=256", "-D", "K=128", "-D", "N=256",
               "--stats", str(path))
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[-1] == f"stats: {path}"
    text = path.read_text()
    stats = json.loads(text, parse_constant=lambda c: pytest.fail(f"non-strict JSON: {c}"))
    assert text.startswith('{\n "generator": "aiedsl ')
    assert (stats["design"], stats["device"], stats["target"], stats["seed"],
            stats["passed"]) == ("gemm_bf16", "npu1", "sim", 0, True)
    # not run's "running on the simulator (--target sim)": aiedsl sim has no --target (a tester)
    assert stats["why"] == "aiedsl sim runs the simulator"
    assert stats["kernels"] == "reference"  # --kernels native's stats say "native"
    out, = stats["outputs"]
    assert out["name"] == "C" and out["passed"] and out["wrong"] == 0
    printed = r.stdout.split("PASS C: worst element ")[1]
    assert printed.startswith(str(out["worst_index"]))
    t = stats["timing"]
    assert t["kind"] == "simulated" and t["clock_hz"] == 1e9
    assert t["seconds"] == pytest.approx(t["device_seconds"] + t["invocation_seconds"])
    assert f"{t['seconds'] * 1e6:.2f} us per invocation" in r.stdout
    assert f"{t['device_cycles']:,.0f} cycles" in r.stdout
    assert t["dram_bytes"] == t["dram_read_bytes"] + t["dram_write_bytes"] == \
        2 * 256 * 128 * 2 + 256 * 256 * 4
    assert len(t["core_busy"]) == 16 and all(0 < b <= 1 for b in t["core_busy"].values())
    assert t["bottleneck"]["sentence"] in r.stdout
    again = aiedsl("sim", "designs/gemm_bf16.py", "-D", "M=256", "-D", "K=128", "-D", "N=256",
                   "--stats", str(path))
    assert again.returncode == 0 and path.read_text() == text  # its own file: replaced, same
    # from Python, a simulate() result gives the same document (a CI integrator's tester)
    import aiedsl as api
    from aiedsl.cli.run_stats import run_stats

    handle = api.load_design(ROOT / "designs" / "gemm_bf16.py", {"M": 256, "K": 128, "N": 256})
    made = run_stats(api.simulate(handle), "gemm_bf16", "npu1", seed=0, kernels="reference")
    assert json.loads(json.dumps({**made, "why": stats["why"]}, allow_nan=False)) == stats
    assert made["why"] == "aiedsl.simulate() runs the simulator"
    mine = tmp_path / "mine.json"
    mine.write_text("{}")
    refused = aiedsl("sim", "designs/passthrough.py", "--stats", str(mine))
    assert refused.returncode == 2 and refused.stdout == "" and refused.stderr == (
        f"error [output file]: {mine} exists and aiedsl did not write it\n"
        f"  fix: choose another file with --stats, or move {mine} away\n")


@pytest.mark.parametrize("command", ["sim", "run"])
def test_a_run_that_ends_in_an_error_says_so_in_place_of_the_last_runs_stats(
        tmp_path: Path, command: str) -> None:
    """(a CI tester) After a hang (exit 3) the file still held the previous run's
    "passed": true, which a dashboard read; a design error (exit 2) kept it too."""
    path = tmp_path / "s.json"
    out = ["-o", str(tmp_path / "build")] if command == "run" else []
    assert aiedsl(command, "designs/passthrough.py", "--stats", str(path), *out).returncode == 0
    assert json.loads(path.read_text())["passed"] is True
    hang = "tests/hang_corpus/drain_order_reversed.py"
    r = aiedsl(command, hang, "--stats", str(path), *out)
    assert r.returncode == 3
    stats = json.loads(path.read_text())
    assert {k: v for k, v in stats.items() if k != "error"} == {
        "generator": f"aiedsl {__version__}", "design": "drain_order_reversed",
        "device": "npu1_1col", "passed": False}
    assert {k: v for k, v in stats["error"].items() if k != "message"} == {
        "exit_code": 3, "rule": "deadlock", "file": hang, "line": 43}
    # (run's build finds it in its hang check, simulated without data; sim in its run)
    assert "nothing can move and the runtime sequence is not done" in stats["error"]["message"]
    (tmp_path / "broken.py").write_text("x = (\n")
    r = aiedsl(command, "broken.py", "--stats", str(path), cwd=tmp_path)
    assert r.returncode == 2
    assert json.loads(path.read_text()) == {
        "generator": f"aiedsl {__version__}", "design": "broken", "device": None,
        "passed": False, "error": {"exit_code": 2, "rule": "python error",
                                   "message": "SyntaxError: '(' was never closed",
                                   "file": "broken.py", "line": 1}}


def test_an_error_to_a_reader_that_left_keeps_its_exit_code(tmp_path: Path) -> None:
    """`aiedsl check missing.py 2>&1 | true` exited 1 (a FAIL's code) for a design error: the
    broken pipe was met writing the message to standard error (a reviewer)."""
    proc = subprocess.Popen([sys.executable, "-m", "aiedsl", "check", "missing.py"],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert proc.stdout is not None
    proc.stdout.close()
    assert proc.wait() == 2


def test_stats_and_trace_naming_one_file_are_refused_before_the_run(tmp_path: Path) -> None:
    """The trace was written, then --stats refused it as not its own, after the run."""
    same = tmp_path / "x.json"
    r = aiedsl("sim", "designs/passthrough.py", "--trace", str(same), "--stats", str(same))
    assert (r.returncode, r.stdout) == (2, "")
    assert r.stderr == (f"error [output file]: --stats and --trace both name {same}\n"
                        "  fix: give each its own file, e.g. --stats passthrough.stats.json\n")
    assert not same.exists()


def test_stats_of_a_fail_say_where_and_keep_non_finite_values_strict() -> None:
    from aiedsl.compare import compare
    from aiedsl.cli.run_stats import _output

    import numpy as np

    got = np.array([[1.0, np.nan], [3.0, 4.0]], dtype=np.float32)
    c = compare("C", got, np.ones((2, 2), np.float32), "f32")
    assert _output(c) == {
        "name": "C", "passed": False, "worst_index": [0, 1], "got": "nan", "want": 1.0,
        "error": "inf", "tolerance": "tolerance 0.0001 relative + 0.0001 absolute", "wrong": 3,
        "wrong_region": [[0, 2], [0, 2]], "note": None, "hints": []}


def test_a_dash_for_an_output_file_is_refused(tmp_path: Path) -> None:
    """`--trace -` wrote a file named '-' in the working folder (a tester)."""
    r = aiedsl("sim", str(ROOT / "designs" / "passthrough.py"), "--trace", "-", cwd=tmp_path)
    assert (r.returncode, r.stdout) == (2, "")
    assert r.stderr == ("error [output file]: --trace - would write a file named '-'\n"
                        "  fix: name the file, e.g. --trace passthrough.json, or a pipe, e.g. "
                        "--trace >(jq .) (aiedsl's own lines go to standard output)\n")
    assert os.listdir(tmp_path) == []


ADD_TWO_CC = """#include <stdint.h>
extern "C" void inc_i32_64(const int32_t *in, int32_t *out) {
  for (int i = 0; i < 64; i++) out[i] = in[i] + 2;
}
"""

ADD_ONE = """
import numpy as np
from aiedsl import Tensor, design, fifo, herd, i32, runtime
from aiedsl.kernels import buffer, declare


@design(device="npu1_1col")
def d(inp: Tensor[64, i32], out: Tensor[64, i32]):
    a = fifo(Tensor[64, i32], name="a")
    b = fifo(Tensor[64, i32], name="b")
    inc = declare("inc_i32_64", source="k.cc", args=[buffer("in", Tensor[64, i32]),
                  buffer("out", Tensor[64, i32], "out")],
                  reference=lambda i, o: o.__setitem__(..., i + 1), cycles=100,
                  cost="a scalar add per element")

    @herd()
    def core():
        with a.consume() as s, b.produce() as t:
            inc(s, t)

    with runtime() as rt:
        rt.fill(a, inp)
        rt.drain(b, out)


@d.reference
def reference(inp):
    return inp + 1
"""


def test_a_native_fail_says_what_tests_the_kernels_alone(tmp_path: Path) -> None:
    """(a vision tester) A FAIL of the kernels' C++ said nothing of them: a read before a
    buffer, which a run does not see, left the user with wrong pixels alone."""
    (tmp_path / "k.cc").write_text(ADD_TWO_CC)
    (tmp_path / "d.py").write_text(ADD_ONE)
    r = aiedsl("sim", "d.py", "--kernels", "native", cwd=tmp_path)
    assert r.returncode == 1, r.stderr
    assert r.stdout.splitlines()[1].startswith("FAIL out: worst element [0] got ")
    # the kernel's first call, held to its own reference: the C++ adds 2, the reference 1
    assert r.stdout.splitlines()[2:7] == [
        "  wrong: all 64 elements",
        "FAIL inc_i32_64.out at core[0,0]'s call 1 (d.py:19): worst element [0] got 22980 want "
        "22979 (|error| 1; integers must match exactly)",
        "  wrong: all 64 elements",
        "  note: the C++ and the kernel's numpy reference differ on this call's own inputs, "
        "beyond the tolerance of that kernel alone (the design's outputs may pass still: "
        "theirs covers every rounding on the way there)",
        "  kernels: ran as their C++; without --kernels native they run as their numpy "
        "references, and aiedsl kernel test runs each alone against its reference, between "
        "guard bytes that show a read before or past its buffers, which this run does not see"]


def test_stats_go_through_a_pipe(tmp_path: Path) -> None:
    """--stats /dev/fd/N (a shell's >(jq .)) ran the whole simulation, then failed: "cannot
    write /dev/fd/63: No such file or directory" (a tester). A pipe is written through."""
    read, write = os.pipe()
    r = subprocess.run([sys.executable, "-m", "aiedsl", "sim",
                        str(ROOT / "designs" / "passthrough.py"), "--stats", f"/dev/fd/{write}"],
                       cwd=tmp_path, capture_output=True, text=True, pass_fds=(write,),
                       env={**os.environ, "NO_COLOR": "1"})
    os.close(write)
    with os.fdopen(read) as f:
        stats = json.load(f)
    assert r.returncode == 0, r.stderr
    assert stats["design"] == "passthrough" and os.listdir(tmp_path) == []


def test_a_simulated_run_says_once_that_the_kernels_ran_as_their_references(
        tmp_path: Path) -> None:
    """A C++ kernel adding 2 where its reference adds 1 PASSed plain `aiedsl sim` with no word
    that its C++ never ran (a tester): the line under the comparison says so, once, and names
    what runs the C++."""
    r = aiedsl("sim", "designs/vector_scalar_mul.py")
    assert r.returncode == 0, r.stderr
    kept = [line for line in r.stdout.splitlines() if "kernels:" in line]
    assert kept == ["  kernels: ran as their numpy references; --kernels native or aiedsl "
                    "kernel test runs their C++"]
    assert r.stdout.splitlines().index(kept[0]) == 2  # under the one output's PASS
    r = aiedsl("run", "designs/vector_scalar_mul.py", "--target", "sim", "-o",
               str(tmp_path / "b"))
    assert r.returncode == 0, r.stderr
    assert [line for line in r.stdout.splitlines() if "kernels:" in line] == [
        "  kernels: ran as their numpy references; --kernels native or aiedsl kernel test runs "
        "their C++"]
    # and run takes --kernels as sim does (a tester found it only in the Python API)
    r = aiedsl("run", "designs/vector_scalar_mul.py", "--target", "sim", "--kernels", "native",
               "-o", str(tmp_path / "b"))
    assert r.returncode == 0, r.stderr
    assert "simulated in" in r.stdout and "kernels built from their C++ for the host)" in r.stdout
    assert "kernels:" not in r.stdout
    r = aiedsl("sim", "designs/transpose_dma.py")  # no kernel at all: nothing to say
    assert r.returncode == 0 and "kernels:" not in r.stdout


def test_a_path_with_a_line_break_is_one_line_of_what_build_says(tmp_path: Path) -> None:
    """A tester's -o $'we\\nird/b' split the 'wrote' line in two (errors escaped it already)."""
    out = tmp_path / "we\nird" / "b"
    r = aiedsl("build", str(ROOT / "designs" / "passthrough.py"), "-o", str(out),
               cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    wrote = [line for line in r.stdout.splitlines() if line.startswith("wrote ")]
    assert len(wrote) == 1 and "we\\nird/b/: aie.mlir" in wrote[0]


def test_a_ctrl_c_while_the_command_line_loads_is_an_abort_not_a_traceback() -> None:
    """A safety tester's Ctrl-C in the first tenth of a second (typer loading) printed a
    Python traceback of the import it stopped."""
    code = ("import sys\n"
            "class Stop:\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        if name == 'aiedsl.cli.process':\n"
            "            raise KeyboardInterrupt\n"
            "sys.meta_path.insert(0, Stop())\n"
            "from aiedsl.cli.entry import run\n"
            "run()\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert (r.returncode, r.stdout, r.stderr) == (130, "", "aborted\n")


def test_a_file_aiedsl_wrote_of_another_kind_is_refused_as_that_kind(tmp_path: Path) -> None:
    """--stats onto a trace aiedsl wrote said "exists and aiedsl did not write it" (a
    tester)."""
    design = str(ROOT / "designs" / "passthrough.py")
    assert aiedsl("sim", design, "--trace", "t.json", cwd=tmp_path).returncode == 0
    r = aiedsl("sim", design, "--stats", "t.json", cwd=tmp_path)
    assert (r.returncode, r.stderr) == (
        2, "error [output file]: t.json is a trace aiedsl wrote, not what --stats writes\n"
        "  fix: choose another file with --stats, or move t.json away\n")


def test_a_kernel_file_of_the_users_is_not_passed_over_for_the_librarys(tmp_path: Path) -> None:
    """`aiedsl kernel test ./passthrough.cc` (not C++ at all) tested the library's file of that
    name and passed; a mistyped path did too (a tester)."""
    (tmp_path / "passthrough.cc").write_text("this is not C++\n")
    r = aiedsl("kernel", "test", "./passthrough.cc", cwd=tmp_path)
    assert r.returncode == 2 and r.stderr.startswith(
        "error: Invalid value for PATH: passthrough.cc is not aiedsl's passthrough.cc (a library "
        "kernel file is named by its name alone, or by its path in aiedsl): a file of yours is "
        "tested through a design that declares it: declare(..., source=\"passthrough.cc\") and "
        "`aiedsl kernel test DESIGN.py`\n"), r.stderr
    r = aiedsl("kernel", "test", "no/such/dir/passthrough.cc", cwd=tmp_path)
    assert r.returncode == 2 and r.stderr.startswith(
        "error: Invalid value for PATH: no/such/dir/passthrough.cc does not exist\n")
    r = aiedsl("kernel", "profile", "passthrough.cc", "-D", "N=5", cwd=tmp_path.parent)
    assert r.returncode == 2 and r.stderr.startswith(
        "error: Invalid value for -D: -D N=5 sets a design's define(), and profiles of a library "
        "kernel file take none (they run its sample sizes)\n")


def test_kernel_test_takes_name_and_device_as_kernel_profile_does(tmp_path: Path) -> None:
    """A file of two designs was told to choose one with --name, which kernel test did not
    take; --device narrowed kernel profile's library cases but not kernel test's (a tester)."""
    one = """
@design(device="npu1_1col")
def NAME(inp: Tensor[4096, i32], out: Tensor[4096, i32]):
    a, b = fifo(Tensor[1024, i32], name="a"), fifo(Tensor[1024, i32], name="b")
    copy = copy_kernel(Tensor[1024, i32])

    @herd()
    def core():
        for _ in loop(4):
            with a.consume() as s, b.produce() as d:
                copy(s, d)

    with runtime() as rt:
        rt.fill(a, inp)
        rt.drain(b, out)


@NAME.reference
def reference_NAME(inp):
    return inp.copy()
"""
    (tmp_path / "two.py").write_text(
        "from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime\n"
        "from aiedsl.kernels import passthrough as copy_kernel\n"
        + one.replace("NAME", "first") + one.replace("NAME", "second"))
    r = aiedsl("kernel", "test", "two.py", "--name", "second", cwd=tmp_path)
    assert r.returncode == 0 and r.stdout.splitlines()[-1].startswith("1 of 1 kernels match")
    # (conv3x3.cc: 2 kernels per device, where mm.cc's 26 took 14 s)
    every = aiedsl("kernel", "test", "conv3x3.cc").stdout.splitlines()[-1].split()
    npu2 = aiedsl("kernel", "test", "conv3x3.cc", "--device", "npu2").stdout.splitlines()[-1]
    assert int(npu2.split()[2]) < int(every[2])
    assert npu2.startswith("2 of 2 kernels match")


def test_the_installed_command_is_no_users_line() -> None:
    """Run as the console script pip installs (not ``python -m``), the launcher's own line was
    taken for the user's: `-D ACC=x` read as Python's `defines={...}`, and a missing NPU was
    located at `.../bin/aiedsl:6` (a tester)."""
    import sysconfig

    script = Path(sysconfig.get_paths()["scripts"]) / "aiedsl"
    if not script.is_file():
        pytest.skip(f"no console script at {script} (aiedsl not installed by pip here)")
    root = Path(__file__).resolve().parent.parent
    r = subprocess.run([str(script), "check", "designs/gemm_i8.py", "-D", "ACC=x"], cwd=root,
                       capture_output=True, text=True)
    assert r.returncode == 2
    assert r.stderr.splitlines()[:3] == [
        "designs/gemm_i8.py:69: error [define]: ACC=x is not a place to sum C",
        "  limit: i32 or c", "  found: -D ACC=x"]


def test_only_the_launcher_in_the_scripts_folder_is_library_code() -> None:
    """Counting the whole scripts folder as library code made a design kept there nobody's (a
    reviewer: `<unknown>:0: error [define]`); only the `aiedsl` launcher is aiedsl's."""
    import sysconfig

    from aiedsl.library_code import is_library, is_users

    scripts = Path(sysconfig.get_paths()["scripts"])
    assert is_library(str(scripts / "aiedsl"))
    assert is_users(str(scripts / "bt.py")) and not is_library(str(scripts / "bt.py"))
    assert is_users(str(Path("/elsewhere") / "aiedsl"))  # a user's file of that name elsewhere


# -- -D values an error quotes --------------------------------------------------------------------

@pytest.mark.parametrize("flag", [["-D", "N=3000"], ["-DN=3000"], ["--define", "N=3000"],
                                  ["--define=N=3000"]])
def test_an_error_quoting_a_d_value_says_the_command_line_gave_it(
        flag: list[str], capsys: pytest.CaptureFixture) -> None:
    """`-D N=3000` made a fill of 3000 elements, and the error pointed at the rt.fill line of
    the design, whose text says N (an IRON user's find): the value's source is said."""
    from aiedsl.cli.process import main

    with pytest.raises(SystemExit) as e:
        main(["check", str(ROOT / "designs" / "passthrough.py"), *flag, "-D", "TILE=1024"])
    assert e.value.code == 2
    lines = capsys.readouterr().err.splitlines()
    assert lines[0].endswith("passthrough.py:31: error [fill/drain size]: rt.fill of 'in_l3' "
                             "moves 3000 elements, not a whole number of its 1024-element "
                             "buffers"), lines
    assert lines[-3:] == [
        "  -D N=3000: N's value, given on the command line",
        "  -D TILE=1024: TILE's value, given on the command line",  # the buffers' 1024
        "  fix: move a multiple of 1024 elements in each transfer of 'in_l3' (here 2048 or 3072 "
        "rather than 3000)"]


def test_a_d_value_of_5000_digits_is_cut_short(capsys: pytest.CaptureFixture) -> None:
    """-D N=<5000 nines> printed the number uncut, three times over (a tester)."""
    from aiedsl.cli.process import main

    with pytest.raises(SystemExit) as e:
        main(["check", str(ROOT / "designs" / "passthrough.py"), "-D", "N=" + "9" * 5000])
    assert e.value.code == 2
    lines = capsys.readouterr().err.splitlines()
    assert lines[0].endswith("error [tensor type]: Tensor[999999...999999 (5000 digits), i32] "
                             "has 999999...999999 (5000 digits) elements"), lines
    assert lines[-3:] == ["  found: 999999...999999 (5000 digits)",
                          "  -D N=999999...999999 (5000 digits): N's value, given on the "
                          "command line",
                          "  fix: split the problem over several runs"]


def test_a_d_value_the_error_does_not_quote_is_not_named(tmp_path: Path) -> None:
    from aiedsl.cli.process import given_defines, with_defines
    from aiedsl.errors import DesignError

    e = DesignError("tiles", "tile 32x32 does not divide the 100x288 matrix",
                    found="100 % 32 = 4", fix="choose a tile size that divides the matrix")
    argv = ["check", "d.py", "-D", "M=100", "-D", "K=2", "-DT=3", "--", "-D", "X=100"]
    assert given_defines(argv) == [("M", "100"), ("K", "2"), ("T", "3")]
    # not a pair the loader takes: no line saying it gave N's value (a tester)
    assert given_defines(["check", "d.py", "-D", "N =4096"]) == []
    assert with_defines(str(e), e, argv).splitlines()[-2:] == [
        "  -D M=100: M's value, given on the command line",
        "  fix: choose a tile size that divides the matrix"]
    assert with_defines(str(e), e, ["check", "d.py", "-D", "M=10"]) == str(e)
    # at a design's line, a value it quotes may follow from a define (-D H=50: "moves 32000
    # elements"): the defines given are said once, unless the message names them (a tester)
    from aiedsl.ir.loc import Loc

    e = DesignError("tiles", "tile 32x32 does not divide the 100x288 matrix",
                    loc=Loc(file="d.py", line=3), fix="choose a tile size that divides the matrix")
    assert with_defines(str(e), e, ["check", "d.py", "-D", "H=10", "-D", "W=8"]).splitlines()[
        -2:] == ["  with -D H=10 -D W=8, given on the command line",
                 "  fix: choose a tile size that divides the matrix"]
    named = DesignError("define", "-D H=10 is refused", loc=Loc(file="d.py", line=3),
                        fix="give H=12")
    assert with_defines(str(named), named, ["check", "d.py", "-D", "H=10"]) == str(named)
    # --device replaced the design's own device: said as well (a tester)
    assert with_defines(str(named), named, ["check", "d.py", "--device=npu1", "-D", "H=10"]
                        ).splitlines()[-2] == "  with --device npu1, given on the command line"
    # a one-character value is named when it is the whole value found (-D M=0, a tester), not
    # wherever its digit turns up (K=2 above: "2" is in "288")
    zero = DesignError("tensor type", "Tensor size 0 is not a positive integer", found="0",
                       fix="give a positive size")
    assert with_defines(str(zero), zero, ["check", "d.py", "-D", "M=0"]).splitlines()[-2:] == [
        "  -D M=0: M's value, given on the command line", "  fix: give a positive size"]
    # a one-character value the message quotes, with no two-digit number in it (-D ROWS=5: "8
    # columns x 5 rows"), is one the error may follow from: the defines given are said (a
    # tester: nothing said where the 5 came from)
    herd = DesignError("herd placement", "herd 'core' (8x5) does not fit on npu2",
                       loc=Loc(file="d.py", line=3), limit="8 columns x 4 core rows",
                       found="8 columns x 5 rows", fix="use a smaller herd")
    assert with_defines(str(herd), herd, ["check", "d.py", "-D", "ROWS=5"]).splitlines()[-2] == (
        "  with -D ROWS=5, given on the command line")
    # a number that follows from a define without quoting it, and no two-digit number in the
    # message (-D H=2: "loop(0)" from loop(H - 2); a newcomer's tester): said when the design
    # line uses the define, and not when it does not (a herd of a plain H = 5 with -D N=10240:
    # an MLIR-AIR user's tester)
    design = tmp_path / "d.py"
    design.write_text("H = define('H', 8)\nfor _ in loop(H - 2):\n    pass\n")
    loop0 = DesignError("loop", "loop(0) needs a positive integer count",
                        loc=Loc(file="d.py", line=2).at_path(str(design)), found="0",
                        fix="leave the loop out")
    assert with_defines(str(loop0), loop0, ["check", "d.py", "-D", "H=2"]).splitlines()[-2] == (
        "  with -D H=2, given on the command line")
    assert with_defines(str(loop0), loop0, ["check", "d.py", "-D", "N=2"]) == str(loop0)
