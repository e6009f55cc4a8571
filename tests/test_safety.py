"""Safe by construction: no text a user gives becomes code or a path outside the build, no false
PASS, and no input crashes aiedsl (every mistake a DesignError at the user's line, exit 2)."""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path
from typing import Callable

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import aiedsl
from aiedsl.render import comment_text, mlir_string
from aiedsl.errors import DesignError
from aiedsl.loader import load_design
from aiedsl.shell import EnvWord, shell_line
from tests.command_line import run_command

DesignFile = Callable[..., Path]
ROOT = Path(__file__).resolve().parents[1]
PASSTHROUGH = (ROOT / "designs" / "passthrough.py").read_text()


def aiedsl_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return run_command(*args, cwd=cwd)


def error_of(path: Path, defines: dict[str, str] | None = None) -> str:
    """The DesignError a design file raises when loaded and checked."""
    from aiedsl.checks import check_design

    with pytest.raises(DesignError) as excinfo:
        check_design(load_design(path, defines).ir)
    return str(excinfo.value)


def first_line(path: Path, defines: dict[str, str] | None = None) -> str:
    return error_of(path, defines).splitlines()[0]


def variant(before: str, after: str, text: str = PASSTHROUGH) -> str:
    assert text.count(before) == 1, before
    return text.replace(before, after)


# -- injection and escape -------------------------------------------------------------------------

KERNEL = '''
    import numpy as np
    from aiedsl import Tensor, design, fifo, herd, i32, runtime
    from aiedsl.kernels import buffer, declare

    def ref(src, dst):
        dst[...] = src

    @design(device="npu1_1col")
    def d(X: Tensor[64, i32], Y: Tensor[64, i32]):
        k = declare(SYMBOL, source=SOURCE, entry=ENTRY,
                    args=[buffer("src", Tensor[64, i32]), buffer("dst", Tensor[64, i32], "out")],
                    reference=ref, cycles=20, cost=COST)
        a = fifo(Tensor[64, i32], name="a")
        b = fifo(Tensor[64, i32], name="b")

        @herd()
        def core():
            with a.consume() as s, b.produce() as t:
                k(s, t)

        with runtime() as rt:
            rt.fill(a, X)
            rt.drain(b, Y)

    @d.reference
    def reference(X):
        return X
    '''


def kernel_design(design_file: DesignFile, symbol: str = "copy_i32_64",
                  source: str = "copy.cc", entry: str = "copy", cost: str = "-") -> Path:
    text = (KERNEL.replace("SYMBOL", repr(symbol)).replace("SOURCE", repr(source))
            .replace("ENTRY", repr(entry)).replace("COST", repr(cost)))
    path = design_file(text)
    (path.parent / "copy.cc").write_text(
        "#include <stdint.h>\nvoid copy(const int32_t *s, int32_t *d) "
        "{ for (int i = 0; i < 64; ++i) d[i] = s[i]; }\n")
    return path


def test_a_kernel_symbol_with_shell_code_is_refused(design_file: DesignFile) -> None:
    path = kernel_design(design_file, symbol="cp$(touch PWNED)")
    r = aiedsl_cli("build", str(path), cwd=path.parent)
    assert r.returncode == 2
    assert r.stderr == (
        "d.py:10: error [name]: kernel symbol 'cp$(touch PWNED)' is not a plain name\n"
        "  limit: ASCII letters, digits and _, not starting with a digit, at most 200 characters "
        "(it becomes an MLIR symbol, a C name and a file name)\n"
        "  found: 'cp$(touch PWNED)'\n"
        "  fix: rename it, e.g. cp_touch_PWNED\n")
    assert not (path.parent / "PWNED").exists() and not (path.parent / "build").exists()


def test_a_kernel_symbol_cannot_leave_the_build_directory(design_file: DesignFile) -> None:
    path = kernel_design(design_file, symbol="../../ESCAPED")
    assert first_line(path) == ("d.py:10: error [name]: kernel symbol '../../ESCAPED' is not a "
                                "plain name")


def test_a_kernel_symbol_is_not_a_c_library_function(design_file: DesignFile) -> None:
    """A tester's SYM=memcpy passed check and failed in g++ ("conflicting declaration of C
    function")."""
    path = kernel_design(design_file, symbol="memcpy")
    assert error_of(path).splitlines()[0] == (
        "d.py:10: error [name]: kernel symbol 'memcpy' is a C library function")


@pytest.mark.parametrize("symbol, clash", [
    ("std", "a type or namespace the kernels' C++ uses"),
    ("aie", "a type or namespace the kernels' C++ uses"),
    ("NDEBUG", "a macro the kernel compiles define"),
    ("__cplusplus", "reserved for the compiler and its library (it starts with __, or _ and a "
                    "capital)"),
    ("_Kernel", "reserved for the compiler and its library (it starts with __, or _ and a "
                "capital)"),
    ("main", "the name of a C program's entry point"),
    # (a tester's: check passed, the host build did not)
    ("v16int32", "a type or macro the AIE API or Peano's headers declare at the global scope"),
    ("rnd_floor", "a type or macro the AIE API or Peano's headers declare at the global "
                  "scope")])
def test_a_kernel_symbol_the_cpp_cannot_define_is_refused(design_file: DesignFile, symbol: str,
                                                          clash: str) -> None:
    """A tester's std, aie, NDEBUG and __cplusplus passed check and build, and the C++ did not
    compile ("redeclared as different kind of entity", "expected unqualified-id"); main was
    called a C++ keyword."""
    path = kernel_design(design_file, symbol=symbol)
    assert error_of(path) == (
        f"d.py:10: error [name]: kernel symbol '{symbol}' is {clash}\n"
        "  limit: ASCII letters, digits and _, not starting with a digit, at most 200 characters "
        "(it becomes an MLIR symbol, a C name and a file name), not a C++ keyword, main, a C "
        "library function, a type or namespace the C++ uses (std, aie, int32_t, v16int32), "
        "NDEBUG, or a "
        "name starting __ or _ and a capital\n"
        f"  found: {symbol}\n"
        f"  fix: put the kernel's shape in it, e.g. {symbol.lstrip('_')}_i32_1024")


@pytest.mark.parametrize("arg, clash", [
    ("class", "a C++ keyword"), ("int32_t", "a C++ type name"),
    ("copy", "the function it calls (copy)"), ("copy_i32_64", "the kernel's own symbol")])
def test_a_kernel_argument_name_the_cpp_cannot_declare_is_refused(
        design_file: DesignFile, arg: str, clash: str) -> None:
    """A tester's ARG=class passed check and build, and wrote `int32_t *class` into the C++."""
    path = kernel_design(design_file)
    path.write_text(path.read_text().replace('buffer("src"', f'buffer("{arg}"'))
    assert error_of(path) == (
        f"d.py:10: error [name]: argument '{arg}' of kernel 'copy_i32_64' is {clash}\n"
        "  limit: a name the generated C++ can declare: not a C++ keyword, a type, or the "
        "kernel's or its entry's name\n"
        f"  found: {arg}\n"
        f"  fix: rename it, e.g. {arg}_buf")


def test_two_kernel_arguments_with_one_name_are_named(design_file: DesignFile) -> None:
    """The error printed both arguments' pydantic reprs."""
    path = kernel_design(design_file)
    path.write_text(path.read_text().replace('buffer("dst"', 'buffer("src"'))
    assert error_of(path) == (
        "d.py:10: error [kernel signature]: kernel 'copy_i32_64' has two arguments named 'src'\n"
        "  limit: one name per argument\n"
        "  found: src\n"
        "  fix: give each argument its own name")


def test_a_kernel_source_including_its_own_header_is_refused(design_file: DesignFile) -> None:
    """A tester's double.cc included "helper.h": check and build passed, and the compile of
    kernels/<symbol>.cc (the source alone, in the build directory) found no helper.h."""
    path = kernel_design(design_file)
    (path.parent / "helper.h").write_text("#define N 64\n")
    (path.parent / "copy.cc").write_text(
        '// uses "x.h" only in a comment\n#include <stdint.h>\n  #  include "helper.h"\n'
        "void copy(const int32_t *s, int32_t *d) { for (int i = 0; i < N; ++i) d[i] = s[i]; }\n")
    assert error_of(path) == (
        'd.py:10: error [kernel source]: copy.cc includes "helper.h" (its line 3), which the '
        "build does not carry: kernels/copy_i32_64.cc holds the source alone\n"
        "  limit: a kernel's C++ in one file; #include <...> finds the compiler's and the AIE "
        "API's headers\n"
        '  found: #include "helper.h"\n'
        "  fix: paste helper.h into copy.cc where it is included")


def test_every_include_of_a_kernel_source_is_named_at_once(design_file: DesignFile) -> None:
    """mlir-aie's mv.cc includes "../aie_kernel_utils.h" and "zero.cc": they were reported one
    per run."""
    path = kernel_design(design_file)
    (path.parent / "copy.cc").write_text(
        '#include <stdint.h>\n#include "../aie_kernel_utils.h"\n#include "zero.cc"\n'
        "void copy(const int32_t *s, int32_t *d) { for (int i = 0; i < 64; ++i) d[i] = s[i]; }\n")
    assert error_of(path) == (
        'd.py:10: error [kernel source]: copy.cc includes "../aie_kernel_utils.h" (its line 2) '
        'and "zero.cc" (its line 3), which the build does not carry: kernels/copy_i32_64.cc holds '
        "the source alone\n"
        "  limit: a kernel's C++ in one file; #include <...> finds the compiler's and the AIE "
        "API's headers\n"
        '  found: #include "../aie_kernel_utils.h"; #include "zero.cc"\n'
        "  fix: paste ../aie_kernel_utils.h and zero.cc into copy.cc where they are included")


@pytest.mark.parametrize("name", ["tile_0_0", "core_0_2", "rtp_thr", "lock_a", "local_acc"])
def test_a_host_tensor_named_like_a_device_value_is_refused(design_file: DesignFile,
                                                             name: str) -> None:
    """A host tensor becomes an argument of aie.runtime_sequence, inside the device where
    %tile_0_0 (and %core_C_R, %rtp_*, %lock_*, %local_*) are defined: mlir-aie's parser refuses the
    clash, so aiedsl refuses the name where it is written."""
    path = design_file(PASSTHROUGH.replace("inp", name))
    line = path.read_text().split("@design")[0].count("\n") + 1
    assert error_of(path).splitlines()[:2] == [
        f"d.py:{line}: error [name]: host tensor '{name}' is named like a value aiedsl's MLIR "
        "defines for the device",
        "  limit: ASCII letters, digits and _, not starting with a digit, at most 200 characters "
        "(it becomes an MLIR symbol, a C name and a file name), not tile_C_R, core_C_R, or "
        "starting rtp_, lock_ or local_"]


def test_a_kernel_of_no_cycles_is_refused(design_file: DesignFile) -> None:
    """cycles=0 was taken: every call free, and any throughput."""
    path = kernel_design(design_file)
    path.write_text(path.read_text().replace("cycles=20", "cycles=0"))
    assert error_of(path) == (
        "d.py:10: error [kernel cost]: kernel 'copy_i32_64' has cycles=0\n"
        "  limit: an integer >= 1\n"
        "  found: 0\n"
        "  fix: give cycles as a whole number per call (a call takes time: the simulator charges "
        "these cycles)")


def test_cycles_given_as_a_function_points_at_cycles_none(design_file: DesignFile) -> None:
    """(a tester) cycles=lambda f, n: n // 8 + 14 was refused with "give cycles as a whole
    number per call", silent on cycles=None, which profiles the kernel per call's scalars."""
    path = kernel_design(design_file)
    path.write_text(path.read_text().replace("cycles=20", "cycles=lambda: 14"))
    assert error_of(path) == (
        "d.py:10: error [kernel cost]: kernel 'copy_i32_64' has cycles= a function\n"
        "  limit: an integer >= 1, or None\n"
        "  found: cycles=a lambda\n"
        "  fix: give cycles as a whole number per call, or cycles=None: the kernel is then "
        "profiled as the design loads, once per set of scalar values its calls pass, and each "
        "call charged its own values' cycles (a function is taken by ops=, not cycles=)")


COST_LIMIT = ("  limit: text: the one-line reason for the kernel's cycles, printed beside them in "
              "the report and the simulator's timing\n")
COST_FIX = ('  fix: say where the cycles come from, e.g. cost="n/16 vector adds + 14 for the '
            'call" (with cycles=None, cost="profiled")')


@pytest.mark.parametrize("cost, message, found", [
    ('""', "has an empty cost=", "''"), ('"  "', "has an empty cost=", "'  '"),
    ("None", "has cost=None, not text", "None (NoneType)"),
    ("5", "has cost=5, not text", "5 (int)")])
def test_a_cost_is_text_saying_what_the_cycles_are(design_file: DesignFile, cost: str,
                                                   message: str, found: str) -> None:
    """(a tester) cost="" was taken (the report printed "32 cycles per call ()"), and
    cost=None or cost=5 was "not one line of printable text", fixed by removing line breaks."""
    path = kernel_design(design_file)
    path.write_text(path.read_text().replace("cost='-'", f"cost={cost}"))
    assert error_of(path) == (
        f"d.py:10: error [kernel cost]: kernel 'copy_i32_64' {message}\n{COST_LIMIT}"
        f"  found: {found}\n{COST_FIX}")


def test_a_kernel_declaring_more_operations_than_its_cycles_allow_is_refused(
        design_file: DesignFile) -> None:
    """ops=10**30 was taken, and sim printed a throughput of 32,877,432,930,036,821,358,804,992
    GOPS. The kernel copies i32, whose multiplies the core emulates (no longer held to i8's
    peak, as a type the model listed no peak for)."""
    path = kernel_design(design_file)
    path.write_text(path.read_text().replace("cycles=20", "cycles=20, ops=10**30"))
    assert error_of(path) == (
        "d.py:10: error [kernel cost]: kernel 'copy_i32_64' declares "
        "1,000,000,000,000,000,000,000,000,000,000 operations per call in 20 cycles\n"
        "  limit: at most 32 per cycle (npu1_1col's i32 peak of 16 MACs per cycle, the type of "
        "its operands, emulated with 16-bit multiplies; a MAC counting 2)\n"
        "  found: 50,000,000,000,000,000,000,000,000,000 per cycle\n"
        "  fix: count ops as one call's arithmetic (a multiply-accumulate is 2) and cycles as its "
        "time")


MM_BF16 = '''
from aiedsl import Tensor, bf16, design, f32, fifo, herd, runtime
from aiedsl.kernels import buffer, declare

M = K = N = 32

def ref(a, b, c):
    c[...] += a.astype("float32") @ b.astype("float32")

@design(device="npu1_1col")
def d(A: Tensor[M, K, bf16], B: Tensor[K, N, bf16], C: Tensor[M, N, f32]):
    k = declare("mm_bf16_32", source="mm.cc", entry="mm<32, 32, 32>",
                args=[buffer("a", Tensor[M, K, bf16]), buffer("b", Tensor[K, N, bf16]),
                      buffer("c", Tensor[M, N, f32], "inout")],
                reference=ref, ops=2 * M * K * N, cycles=CYCLES, cost="aie::mmul<4, 8, 4>")
    a, b = fifo(Tensor[M, K, bf16], name="a"), fifo(Tensor[K, N, bf16], name="b")
    c = fifo(Tensor[M, N, f32], name="c")

    @herd()
    def core():
        with a.consume() as x, b.consume() as y, c.produce() as z:
            k(x, y, z)

    with runtime() as rt:
        rt.fill(a, A)
        rt.fill(b, B)
        rt.drain(c, C)
'''


@pytest.mark.parametrize("cycles", [140, 256])
def test_a_bf16_kernel_is_held_to_the_bf16_peak(design_file: DesignFile, cycles: int) -> None:
    """A tester's bf16 aie::mmul<4, 8, 4> kernel, 32x32x32 in 140 cycles (234 MACs a cycle,
    1.8 times npu1's bf16 peak of 128), passed: it was judged against the int8 peak of 256.
    256 cycles (128 MACs a cycle) is the peak itself, and passes."""
    from aiedsl.checks import check_design

    path = design_file(MM_BF16.replace("CYCLES", str(cycles)))
    (path.parent / "mm.cc").write_text(
        "#include <aie_api/aie.hpp>\ntemplate <unsigned M, unsigned K, unsigned N>\n"
        "void mm(const bfloat16 *a, const bfloat16 *b, float *c) {}\n")
    if cycles == 256:
        check_design(load_design(path).ir)
        return
    assert error_of(path) == (
        "d.py:11: error [kernel cost]: kernel 'mm_bf16_32' declares 65,536 operations per call "
        "in 140 cycles\n"
        "  limit: at most 256 per cycle (npu1_1col's bf16 peak of 128 MACs per cycle, the type "
        "of its operands; a MAC counting 2)\n"
        "  found: 469 per cycle\n"
        "  fix: count ops as one call's arithmetic (a multiply-accumulate is 2) and cycles as its "
        "time")


@pytest.mark.parametrize("source, why", [
    ("/etc/passwd", "absolute"), ("../copy.cc", "leaves its folder"), ("copy.txt", "not C++"),
    ("~/copy.cc", "home")])
def test_a_kernel_source_is_a_relative_cpp_file(design_file: DesignFile, source: str,
                                                why: str) -> None:
    path = kernel_design(design_file, source=source)
    assert error_of(path).splitlines()[:2] == [
        f"d.py:10: error [kernel source]: source={source!r} of kernel 'copy_i32_64' is not a C++ "
        "file name aiedsl may read",
        "  limit: a relative path to a C++ file (.cc, .cpp, .cxx, .c, .h, .hpp) beside the design "
        "or in kernels_cpp/, without '..'"], why


@pytest.mark.parametrize("source, tail", [("copy.cc/", "/"), ("sub/copy.cc//", "/"),
                                          ("copy.cc/.", "/.")])
def test_a_kernel_source_ending_in_a_slash_names_a_directory(design_file: DesignFile,
                                                             source: str, tail: str) -> None:
    """A tester's: source="double.cc/" passed the check, the path's trailing '/' dropped as it
    was taken apart, and double.cc was compiled. It names a directory."""
    path = kernel_design(design_file, source=source)
    name = source[:-len(tail)].rstrip("/")
    assert error_of(path) == (
        f"d.py:10: error [kernel source]: source={source!r} of kernel 'copy_i32_64' names a "
        f"directory (it ends in '{tail}'), not a C++ file\n"
        "  limit: a relative path to a C++ file (.cc, .cpp, .cxx, .c, .h, .hpp) beside the design "
        "or in kernels_cpp/, without '..'\n"
        f"  found: {source!r}: a directory\n"
        f"  fix: name the C++ file in source=, without the '{tail}': source={name!r} if that is "
        f"the file, or source='{name}/<file>' for one inside the directory")


@pytest.mark.parametrize("entry", ["copy(); system(\"x\")", "copy\n#include </etc/passwd>",
                                   "copy<64> /* */", "copy{}"])
def test_a_kernel_entry_is_a_function_name(design_file: DesignFile, entry: str) -> None:
    path = kernel_design(design_file, entry=entry)
    assert first_line(path) == (f"d.py:10: error [kernel entry]: entry={entry!r} of kernel "
                                "'copy_i32_64' is not a C++ function name")


ENTRY_LIMIT = (
    "  limit: a C++ function name, optionally qualified (ns::f), with template arguments that "
    "end it (f<int16_t, 64>), on one line: each a type, an integer or a name, with ::, *, & and "
    "nested <> or () (static_cast<unsigned>(64))")


@pytest.mark.parametrize("entry, why", [
    ("double_i32<1024>(0,0), double_i32<1024>",
     "its template arguments end at character 16, and '(0,0), double_i32<1024>' follows them"),
    ("copy<64>; copy<64>", "its template arguments end at character 8, and '; copy<64>' follows "
                           "them"),
    ("copy<N-1>", "'-' at character 7 is not a name, an integer or one of :: , * & < > ( ) in a "
                  "template argument"),
    ("copy<(a>b)>", "the '>' at character 8 closes no <"),
    ("copy<64", "its template arguments are not closed"),
    ("copy<\"x\">", "'\"' at character 6 is not a name, an integer or one of :: , * & < > ( ) "
                    "in a template argument"),
])
def test_an_entry_s_template_arguments_end_it(design_file: DesignFile, entry: str,
                                              why: str) -> None:
    """A tester's: entry='double_i32<1024>(0,0), double_i32<1024>' passed the check (its
    characters were all allowed up to the last >), and kernels/*.cc called double_i32 twice,
    once with null pointers. The template argument list must close at the end."""
    path = kernel_design(design_file, entry=entry)
    assert error_of(path) == (
        f"d.py:10: error [kernel entry]: entry={entry!r} of kernel 'copy_i32_64' is not a C++ "
        f"function name\n{ENTRY_LIMIT}\n"
        f"  found: {entry!r}: {why}\n"
        "  fix: name the function (template) the kernel's C++ defines, e.g. "
        "entry=\"scale<int16_t, 1024>\"")


def test_a_cost_is_one_line_of_text(design_file: DesignFile) -> None:
    path = kernel_design(design_file, cost="fast\n}\nint evil() {")
    assert first_line(path) == ("d.py:10: error [text]: cost of kernel 'copy_i32_64' "
                                "'fast\\n}\\nint evil() {' is not one line of printable text")


@pytest.mark.parametrize("before, after, message", [
    ('@design(device="npu1_1col")', '@design(device="npu1_1col", name="../../X")',
     "d.py:16: error [name]: design name '../../X' is not a plain name"),
    ("def passthrough(inp:", "def données(inp:",
     "d.py:16: error [name]: design name 'données' is not a plain name"),
    ("    @herd()", '    @herd(name="core; rm")',
     "d.py:24: error [name]: herd name 'core; rm' is not a plain name"),
    ('fifo(Tensor[TILE, i32], name="in_l3")', 'fifo(Tensor[TILE, i32], name="in l3")',
     "d.py:18: error [name]: fifo name 'in l3' is not a plain name"),
    ("def passthrough(inp:", "def passthrough(entrée:",
     "d.py:16: error [name]: host tensor 'entrée' is not a plain name"),
])
def test_names_are_plain_ascii_identifiers(design_file: DesignFile, before: str, after: str,
                                           message: str) -> None:
    text = variant(before, after)
    if "entrée" in after:
        text = text.replace("rt.fill(to_mem, inp)", "rt.fill(to_mem, entrée)")
    assert first_line(design_file(text)) == message


def test_a_design_name_from_the_command_line_cannot_break_a_line(design_file: DesignFile) -> None:
    path = design_file(variant('@design(device="npu1_1col")',
                               '@design(device="npu1_1col", name=define("NAME", "copy"))'))
    assert first_line(path, {"NAME": "x\ntouch PWNED2 #"}) == (
        "d.py:16: error [text]: define 'NAME' = 'x\\ntouch PWNED2 #' is not one line of "
        "printable text")
    assert first_line(path, {"NAME": "x y"}) == (
        "d.py:16: error [name]: design name 'x y' is not a plain name")


def test_build_sh_quotes_every_word(design_file: DesignFile, tmp_path: Path) -> None:
    art = aiedsl.build(ROOT / "designs" / "passthrough.py", output=tmp_path / "b")
    sh = art.files["build.sh"]
    assert '"$PEANO_INSTALL_DIR"/bin/clang++ ' in sh
    assert '-I"$MLIR_AIE_INSTALL_DIR"/include -I"$MLIR_AIE_INSTALL_DIR"/aie_runtime_lib/AIE2 ' in sh
    # the command substitutions are constant text: the script's folder, and the install aiecc
    # came from (for the AIE API headers when MLIR_AIE_INSTALL_DIR does not hold them)
    constant = ['here=$(readlink -f -- "${BASH_SOURCE[0]}" && printf x)',
                'MLIR_AIE_INSTALL_DIR=$(dirname -- "$(dirname -- "$(readlink -f -- "$(command -v '
                '-- "$aiecc")")")")', '< "$(command -v -- "$aiecc")"',
                'MLIR_AIE_INSTALL_DIR=$("$python" -c \'import sysconfig; '
                'print(sysconfig.get_paths()["purelib"])\')']
    for text in constant:
        assert text in sh
        sh = sh.replace(text, "")
    assert "$(" not in sh


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.lists(st.text(min_size=0, max_size=12), min_size=1, max_size=5))
def test_shell_lines_give_back_exactly_the_words(words: list[str]) -> None:
    words = [w.replace("\x00", "") for w in words]
    line = shell_line(["printf", "%s\\0", *words])
    assert shlex.split(line)[2:] == words
    out = subprocess.run(["bash", "-c", line], capture_output=True, env={"PATH": "/usr/bin:/bin"})
    assert out.stdout.split(b"\0")[:-1] == [w.encode() for w in words]


def test_env_words_expand_only_their_variable() -> None:
    line = shell_line([EnvWord("-I", "X", "/a b$(c)")])
    out = subprocess.run(["bash", "-c", f"printf %s {line}"], capture_output=True, text=True,
                         env={"X": "/x", "PATH": "/usr/bin:/bin"})
    assert out.stdout == "-I/x/a b$(c)"


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.text(max_size=20))
def test_comments_and_mlir_strings_stay_on_their_line(text: str) -> None:
    assert "\n" not in comment_text(text) and "\r" not in comment_text(text)
    escaped = mlir_string(text)
    assert escaped.isascii() and escaped.isprintable() and '"' not in escaped
    decoded = bytearray()  # MLIR's lexer reads \XX as one byte
    i = 0
    while i < len(escaped):
        if escaped[i] == "\\":
            decoded.append(int(escaped[i + 1:i + 3], 16))
            i += 3
        else:
            decoded.append(ord(escaped[i]))
            i += 1
    assert decoded.decode("utf-8") == text


def test_a_design_in_an_odd_file_stays_quoted_in_the_mlir(tmp_path: Path) -> None:
    # the file's name, not its folder's: aie.mlir names it relative to its own folder
    design = tmp_path / 'odd"dir\nname.py'
    design.write_text(PASSTHROUGH)
    art = aiedsl.build(design, output=tmp_path / "b")
    mlir = art.files["aie.mlir"]
    assert mlir.splitlines()[0].startswith("// passthrough: generated by aiedsl ")
    assert mlir.splitlines()[0].endswith('odd"dir\\nname.py (do not edit)')
    assert mlir.splitlines()[1].startswith("// device npu1_1col; N=4096, TILE=1024")
    assert 'loc("odd\\22dir\\0Aname.py":' in mlir and 'odd"dir' not in mlir.split("\n", 2)[2]


# -- false PASS -----------------------------------------------------------------------------------

REFERENCE = "    return inp.copy()"


@pytest.mark.parametrize("body, message", [
    ("    inp.copy()", "d.py:35: error [reference]: the reference of 'passthrough' returned None "
                     "for output 'out'"),
    ("    return inp[:100]", "d.py:35: error [reference]: the reference of 'passthrough' "
                           "returned an array of shape [100] (100 values) for output 'out' "
                           "(4096xi32)"),
    ("    return inp * 1.5", "d.py:35: error [reference]: the reference of 'passthrough' "
                           "returned float64 values for output 'out' (4096xi32)"),
    ("    return inp.astype(str)", "d.py:35: error [reference]: the reference of 'passthrough' "
                                 "returned <U11 values for output 'out' (4096xi32)"),
])
def test_a_reference_that_cannot_be_right_is_a_design_error(design_file: DesignFile, body: str,
                                                            message: str) -> None:
    path = design_file(variant(REFERENCE, body))
    r = aiedsl_cli("sim", str(path), cwd=path.parent)
    assert r.returncode == 2, r.stdout
    assert r.stderr.splitlines()[0] == message
    assert "Traceback" not in r.stderr


def test_nan_is_compared_only_when_the_design_expects_it(design_file: DesignFile) -> None:
    handle = load_design(design_file(variant("@passthrough.reference",
                                             "@passthrough.reference(nonfinite=True)")))
    art = aiedsl.build(handle, write=False)
    x = np.arange(4096, dtype=np.float32)
    x[7], x[9] = np.nan, -np.inf
    handle = load_design(design_file(variant("@passthrough.reference",
                                             "@passthrough.reference(nonfinite=True)",
                                             PASSTHROUGH.replace("i32", "f32"))))
    art = aiedsl.build(handle, write=False)
    assert art.run(x, target="sim").passed
    strict = load_design(design_file(PASSTHROUGH.replace("i32", "f32")))
    with pytest.raises(DesignError) as excinfo:
        aiedsl.build(strict, write=False).run(x, target="sim")
    assert str(excinfo.value).splitlines()[0] == (
        "d.py:35: error [reference]: the reference of 'passthrough' returned nan at [7] of "
        "output 'out' (input 'inp'[7] is not finite either)")


def test_a_bf16_reference_is_checked_for_nan_in_its_own_type(design_file: DesignFile) -> None:
    import ml_dtypes

    x = np.arange(4096, dtype=np.float32).astype(ml_dtypes.bfloat16)
    x[9], x[7] = -np.inf, np.nan
    strict = load_design(design_file(PASSTHROUGH.replace("i32", "bf16")))
    with pytest.raises(DesignError) as excinfo:
        aiedsl.build(strict, write=False).run(x, target="sim")
    assert str(excinfo.value).splitlines()[0] == (
        "d.py:35: error [reference]: the reference of 'passthrough' returned nan at [7] of "
        "output 'out' (input 'inp'[7] is not finite either)")


def test_a_nan_output_fails_against_a_finite_reference() -> None:
    from aiedsl.sim.compare import compare

    want = np.ones(8, dtype=np.float32)
    got = want.copy()
    got[3] = np.nan
    check = compare("C", got, want, "f32")
    assert not check.passed and check.worst_index == (3,)
    assert not compare("C", want * np.nan, want * np.nan, "f32").passed
    assert compare("C", want * np.nan, want * np.nan, "f32", nonfinite=True).passed


# -- crashes on user input, now DesignErrors -------------------------------------------------------

@pytest.mark.parametrize("before, after, message", [
    ("inp: Tensor[N, i32]", 'inp: Tensor[N, "float64"]',
     "d.py:17: error [tensor type]: unknown element type 'float64'"),
    ("    @herd()", '    @herd(anchor="0,2")',
     "d.py:24: error [herd]: herd 'core' has anchor='0,2'"),
    ("    @herd()", "    @herd(stack=-100000)",
     "d.py:24: error [herd]: herd 'core' has stack=-100000"),
    ('fifo(Tensor[TILE, i32], name="in_l3")', 'fifo(Tensor[TILE, i32], name="in_l3", '
     "depth=10**12)", "d.py:18: error [fifo depth]: fifo 'in_l3' has depth=1000000000000"),
    ('to_mem.forward(name="in_l1")', 'to_mem.forward(name="in_l1", depth=0)',
     "d.py:19: error [fifo depth]: fifo 'in_l1' has depth=0"),
    ('@design(device="npu1_1col")', '@design(device="npu1_1col", reference=3)',
     "d.py:16: error [reference]: the reference of 'passthrough' is int 3, not a function"),
    ("def reference(inp: np.ndarray)", "def reference(inp: np.ndarray, scale)",
     "d.py:35: error [reference]: the reference of 'passthrough' cannot be called with 1 "
     "argument(s): missing a required argument: 'scale'"),
])
def test_user_input_that_used_to_crash(design_file: DesignFile, before: str, after: str,
                                       message: str) -> None:
    path = design_file(variant(before, after))
    r = aiedsl_cli("check", str(path), cwd=path.parent)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.splitlines()[0] == message


def test_a_huge_depth_from_the_command_line_is_refused_at_once(design_file: DesignFile) -> None:
    path = design_file(variant('fifo(Tensor[TILE, i32], name="in_l3")',
                               'fifo(Tensor[TILE, i32], name="in_l3", depth=define("D", 2))'))
    assert error_of(path, {"D": "1000000000"}).splitlines()[:2] == [
        "d.py:18: error [fifo depth]: fifo 'in_l3' has depth=1000000000",
        "  limit: an integer from 1 to 63 (a lock starts at the depth and counts to 63)"]


@pytest.mark.parametrize("clock", ["-1", "0", "1e9"])
def test_the_clock_is_in_range(clock: str) -> None:
    r = aiedsl_cli("sim", "designs/passthrough.py", "--clock", clock, cwd=ROOT)
    assert r.returncode == 2 and r.stderr.startswith("error: Invalid value for '--clock'")


def test_a_scalar_out_of_range_for_its_type(design_file: DesignFile) -> None:
    path = design_file((ROOT / "tests" / "golden" / "add_one_link_with.py").read_text()
                       .replace('scalar("n", i32)', 'scalar("n", i8)')
                       .replace("add_one(a, b, 8)", "add_one(a, b, 300)")
                       .replace("from aiedsl import Tensor, design, fifo, herd, i32, loop, "
                                "runtime", "from aiedsl import Tensor, design, fifo, herd, i8, "
                                "i32, loop, runtime"))
    (path.parent / "add_one.cc").write_text((ROOT / "tests" / "golden" / "add_one.cc")
                                            .read_text().replace("int32_t n", "int8_t n"))
    assert error_of(path).splitlines()[:2] == [
        "d.py:26: error [kernel signature]: argument 2 ('n') of 'add_one' is i8, but core[0,0] "
        "passes 300", "  limit: i8 values from -128 to 127"]


# -- bytes, not elements ---------------------------------------------------------------------------

def test_a_host_tensor_of_another_type_is_balanced_in_bytes(design_file: DesignFile) -> None:
    # 4096 i16 on the host are 8 KB: two 1024 x i32 elements, not the four the core takes
    path = design_file(variant("def passthrough(inp: Tensor[N, i32]",
                               "def passthrough(inp: Tensor[N, i16]")
                       .replace("from aiedsl import Tensor, define,",
                                "from aiedsl import Tensor, i16, define,"))
    assert error_of(path).splitlines()[0] == (
        "d.py:27: error [balance]: fifo 'in_l1': the memtile forwards 2 element(s) per run, "
        "but core[0,0] takes 4")


def test_the_dma_reinterprets_bytes_it_never_converts(design_file: DesignFile) -> None:
    """The two_col shape: i32 host tensors through u8 fifos."""
    text = (PASSTHROUGH.replace("Tensor[TILE, i32]", "Tensor[TILE, u8]")
            .replace("import Tensor, define,", "import Tensor, u8, define,")
            .replace("loop(N // TILE)", "loop(4 * N // TILE)"))
    handle = load_design(design_file(text))
    x = np.arange(4096, dtype=np.int32) * 65535
    result = aiedsl.build(handle, write=False).run(x, target="sim")
    assert result.passed and np.array_equal(result.outputs["out"], x)


# -- hangs the NPU's runtime machinery would hit -----------------------------------------------------

def fills(n: int) -> str:
    """The passthrough design filling its input in ``n`` transfers of one element each."""
    return variant("        rt.fill(to_mem, inp)\n", "".join(
        f"        rt.fill(to_mem, inp, ({i * 1024}, [1024], [1]))\n" for i in range(n)))


def test_a_fifth_task_on_a_shim_channel_between_waits_is_refused(
        design_file: DesignFile) -> None:
    """A shim DMA channel queues four tasks; the NPU drops a fifth push and the run hangs."""
    from aiedsl.checks import check_design

    check_design(load_design(design_file(fills(4))).ir)  # four fills: fine
    path = design_file(fills(5))
    assert error_of(path, {"N": "5120"}).splitlines()[:3] == [
        "d.py:35: error [shim task queue]: 5 transfers (fills of 'in_l3') are pushed onto one "
        "DMA channel of shim tile (0, 0) before a wait shows the first done",
        "  limit: 4 queued tasks per channel: the NPU drops a push onto a full queue and the "
        "run hangs (mlir-aie PR 3734)",
        "  found: 5"]


def test_a_waited_fill_retires_its_channel_queue(design_file: DesignFile) -> None:
    """IRON's fill(..., wait=True): the fill issues a completion token and rt.sync() waits for
    it, so eight fills fit one channel in two batches of four (rt.sync() alone waits only for
    drains: the tester's fix for the error above did not work)."""
    from aiedsl.checks import check_design
    from aiedsl.codegen.mlir import render_mlir
    from aiedsl.sim import simulate
    from aiedsl.targets import get_target

    many = variant("        rt.fill(to_mem, inp)\n", "".join(
        f"        rt.fill(to_mem, inp, ({i * 1024}, [1024], [1])"
        + (", wait=True)\n        rt.sync()\n" if i == 3 else ")\n") for i in range(8)))
    path = design_file(many)
    assert "Traceback" not in path.read_text()
    handle = load_design(path, {"N": "8192"})
    placed, _ = check_design(handle.ir)
    waits = [(op.op, op.fifo) for op in placed.runtime if op.op in ("wait",)]
    assert waits[0] == ("wait", "in_l3")  # the fifo the shim fills, through the forward
    mlir = render_mlir(placed, get_target(placed.device))
    assert mlir.count("issue_token = true") == 2  # the waited fill and the drain
    assert "aiex.npu.dma_wait {symbol = @in_l3}" in mlir
    x = np.arange(8192, dtype=np.int32)
    assert simulate(handle, {"inp": x}).passed
    bad = design_file(variant("        rt.fill(to_mem, inp)\n",
                              "        rt.fill(to_mem, inp, wait=1)\n"), "bad.py")
    assert error_of(bad).splitlines()[0] == (
        "bad.py:31: error [runtime]: rt.fill of 'in_l3' with wait=1")


def test_rt_wait_waits_for_the_oldest_transfer_on_its_fifo_only(design_file: DesignFile) -> None:
    """IRON's dma_wait(of): the first half's drain is waited for while the second half's is
    still in flight (rt.sync() would wait for both); the rest is waited for at the end."""
    from aiedsl.codegen.mlir import render_mlir
    from aiedsl.checks import check_design
    from aiedsl.sim import simulate
    from aiedsl.targets import get_target

    halves = variant("rt.drain(from_mem, out, wait=True)",
                     "rt.drain(from_mem, out, (0, [2048], [1]))\n"
                     "        rt.drain(from_mem, out, (2048, [2048], [1]))\n"
                     "        rt.wait(from_mem)")
    handle = load_design(design_file(halves))
    placed, _ = check_design(handle.ir)
    assert [op.op for op in placed.runtime] == ["fill", "drain", "drain", "wait", "wait"]
    assert render_mlir(placed, get_target(placed.device)).count(
        "aiex.npu.dma_wait {symbol = @out_l3}") == 2
    x = np.arange(4096, dtype=np.int32)
    assert simulate(handle, {"inp": x}).passed
    early = design_file(variant("rt.drain(from_mem, out, wait=True)",
                                "rt.wait(from_mem)\n        rt.drain(from_mem, out)"), "early.py")
    assert error_of(early) == (
        "early.py:32: error [runtime]: rt.wait of 'out_l3' with nothing to wait for\n"
        "  limit: a waited transfer on the fifo, issued and not yet waited for (every drain, a "
        "fill given wait=True)\n"
        "  found: none\n"
        "  fix: issue the rt.drain (or rt.fill(..., wait=True)) of 'out_l3' before waiting for "
        "it")


def test_rt_wait_is_named_in_its_deadlock_and_wants_a_fifo(
        design_file: DesignFile, monkeypatch: pytest.MonkeyPatch) -> None:
    """A deadlock at rt.wait(f) said 'waits at rt.sync()' and told to move things before 'the
    rt.sync()'; rt.wait given a tensor said there was nothing to wait for (a reviewer's
    finds). The checks now refuse this wait before it runs, naming rt.wait() the same way;
    the simulator is asked without them."""
    from aiedsl.sim import simulate
    from aiedsl.sim.explain import Deadlock

    src = variant("        rt.fill(to_mem, inp)\n        rt.drain(from_mem, out, wait=True)",
                  "        rt.drain(from_mem, out, (0, [2048], [1]))\n"
                  "        rt.wait(from_mem)\n"
                  "        rt.fill(to_mem, inp)\n"
                  "        rt.drain(from_mem, out, (2048, [2048], [1]))")
    assert error_of(design_file(src)) == (
        "d.py:32: error [hang: wait before fill]: the runtime waits at rt.wait() for its drain "
        "of 'out_l3' (line 31) to complete, but that data needs the fill of 'in_l3' (line 33), "
        "issued only after the wait: the runtime blocks in the wait forever (a silent hang on "
        "the NPU)\n"
        "  limit: the drains a wait waits for (and the earlier drains of their fifo, which "
        "complete first) get only what the fills issued before the wait can make\n"
        "  found: they need 2 elements of 'out_l3'; at most 0 can arrive from the fills before "
        "the wait\n"
        "  d.py:31: the drain of 'out_l3' waited for\n"
        "  d.py:33: the runtime issues its fill of 'in_l3' only after the wait it is blocked "
        "in\n"
        "  fix: issue every fill and drain that the waited drain depends on before the "
        "rt.wait() that waits for it: move the fill of 'in_l3' (line 33) before line 32, or "
        "wait for the drain of 'out_l3' after issuing it")
    monkeypatch.setattr("aiedsl.checks.check_runtime_order", lambda d: None)
    with pytest.raises(Deadlock) as e:
        simulate(load_design(design_file(src)))
    lines = str(e.value).splitlines()
    assert lines[1].startswith("  the runtime waits at rt.wait() for its drain of 'out_l3'")
    assert lines[-1] == ("  fix: issue every fill and drain that the waited drain depends on "
                         "before the rt.wait() that waits for it (the fill of 'in_l3' (line 33) "
                         "and the drain of 'out_l3' (line 34) come after it)")
    bad = design_file(variant("rt.drain(from_mem, out, wait=True)",
                              "rt.drain(from_mem, out, wait=True)\n        rt.wait(out)"), "t.py")
    assert error_of(bad).splitlines()[0] == (
        "t.py:33: error [runtime]: rt.wait needs a fifo, got host tensor 'out' [4096]")


def test_a_partial_wait_frees_only_the_bds_it_retires(design_file: DesignFile) -> None:
    """rt.wait(f) leaves later transfers in flight: their shim BDs stay taken (reusing one
    would rewrite a transfer still moving). A waited drain retires what was issued before it
    (it needed those fills, as IRON's task groups assume); after a full sync every id is free
    again, as mlir-aie's designs assume."""
    from aiedsl.checks import check_design
    from aiedsl.ir.sequence import retirements, shim_bd_ids

    src = variant("        rt.fill(to_mem, inp)\n",
                  "        rt.fill(to_mem, inp, (0, [2048], [1]))\n")
    src = variant("rt.drain(from_mem, out, wait=True)",
                  "rt.drain(from_mem, out, (0, [2048], [1]))\n"
                  "        rt.drain(from_mem, out, (2048, [2048], [1]))\n"
                  "        rt.wait(from_mem)\n"
                  "        rt.fill(to_mem, inp, (2048, [2048], [1]))", src)
    d, _ = check_design(load_design(design_file(src)).ir)
    assert [op.op for op in d.runtime] == ["fill", "drain", "drain", "wait", "fill", "wait"]
    # the first wait retires the first drain and what was issued before it (the fill it
    # needed); the second drain is still moving. The last, a full sync, retires the rest.
    assert retirements(d) == {3: [0, 1], 5: [2, 4]}
    assert shim_bd_ids(d) == {0: 0, 1: 1, 2: 2, 4: 0}  # BDs 0 and 1 freed, 2 still moving
    from aiedsl.sim import simulate

    assert simulate(load_design(design_file(src))).passed


def test_a_runtime_used_without_with_says_to_write_the_with(design_file: DesignFile) -> None:
    """`rt = runtime()` then rt.fill(...) said "AttributeError: '_GeneratorContextManager'
    object has no attribute 'fill'" (a tester): the sequence opens only in a `with`."""
    path = design_file(variant("    with runtime() as rt:\n",
                               "    rt = runtime()\n    if True:\n"))
    assert error_of(path) == (
        "d.py:32: error [runtime]: rt.fill is used on runtime() outside a `with`: no runtime "
        "sequence is open\n"
        "  limit: runtime() is a context manager: the sequence opens as its `with` block starts, "
        "and `as` names the rt that fills and drains\n"
        "  found: rt = runtime()\n"
        "  d.py:30: runtime() is called here\n"
        "  fix: write `with runtime() as rt:` and put rt.fill(...) and the other transfers in "
        "its block")


def test_every_drain_is_waited_for(design_file: DesignFile) -> None:
    path = design_file(variant("rt.drain(from_mem, out, wait=True)",
                               "rt.drain(from_mem, out, wait=False)"))
    assert error_of(path).splitlines()[0] == (
        "d.py:32: error [runtime]: rt.drain of 'out_l3' with wait=False")


def test_the_simulator_gives_a_core_end_the_buffers_mlir_aie_gives_it(
        design_file: DesignFile) -> None:
    """A single depth of 6: the core end that acquires one element at a time gets 2 buffers."""
    from aiedsl.sim import simulate

    path = design_file(variant('to_mem.forward(name="in_l1")', 'to_mem.forward(name="in_l1", '
                               "depth=6)"))
    result = simulate(load_design(path))
    ring = next(p.info["ring"] for p in result.machine.engine.procs
                if p.info.get("fifo") == "in_l1" and "ring" in p.info)
    assert ring.bufs.shape[0] == 2 and result.passed


@pytest.mark.parametrize("call", ['fifo(Tensor[64, i32], name="")',
                                  'fifo(Tensor[64, i32]).forward(name="")',
                                  'channel(Tensor[64, i32], name="")'])
def test_an_empty_name_is_refused_where_it_is_given(design_file: DesignFile, call: str) -> None:
    """A tester's name="" became 'of' (or 'x_fwd') with no word, where an empty kernel symbol
    is refused."""
    path = design_file(f'''
        from aiedsl import Tensor, channel, design, fifo, i32

        @design(device="npu1_1col")
        def d(A: Tensor[64, i32]):
            x = {call}
        ''')
    assert error_of(path).splitlines()[0].endswith("name '' is not a plain name")


@pytest.mark.parametrize("cycles", [256, 512])
def test_an_i16_kernel_is_held_to_the_i16_peak(design_file: DesignFile, cycles: int) -> None:
    """An i16 matmul declared at 256 MACs a cycle, four times npu1's i16 peak of 64, passed:
    integer kernels were judged against the int8 peak. 512 cycles (64 a cycle) is the peak."""
    from aiedsl.checks import check_design

    text = (MM_BF16.replace("CYCLES", str(cycles)).replace("bf16", "i16")
            .replace("f32", "i32").replace('"float32"', '"int32"'))
    path = design_file(text)
    (path.parent / "mm.cc").write_text(
        "#include <aie_api/aie.hpp>\ntemplate <unsigned M, unsigned K, unsigned N>\n"
        "void mm(const int16_t *a, const int16_t *b, int32_t *c) {}\n")
    if cycles == 512:
        check_design(load_design(path).ir)
        return
    assert error_of(path) == (
        "d.py:11: error [kernel cost]: kernel 'mm_i16_32' declares 65,536 operations per call "
        "in 256 cycles\n"
        "  limit: at most 128 per cycle (npu1_1col's i16 peak of 64 MACs per cycle, the type "
        "of its operands; a MAC counting 2)\n"
        "  found: 256 per cycle\n"
        "  fix: count ops as one call's arithmetic (a multiply-accumulate is 2) and cycles as its "
        "time")


def test_a_link_to_nothing_is_not_written_through(tmp_path: Path) -> None:
    """`--stats st.json`, st.json a link to a file not yet made, made that file outside the
    working directory (a tester's find); a link to an existing file was refused already."""
    from aiedsl.builddir.outfile import check_file
    from aiedsl.errors import DesignError

    link = tmp_path / "st.json"
    link.symlink_to(tmp_path / "elsewhere" / "new.json")
    with pytest.raises(DesignError) as e:
        check_file(link, ours=lambda head: True, option="--stats", example="stats.json")
    assert str(e.value) == (
        f"error [output file]: {link} is a symbolic link to {tmp_path}/elsewhere/new.json, "
        "which does not exist, and aiedsl did not make it\n"
        f"  fix: choose another file with --stats, or remove the link {link}")
    assert not (tmp_path / "elsewhere").exists()


@pytest.mark.parametrize("cycles", [40, 80])
def test_an_npu2_bf16_kernel_is_held_to_its_bfp16_units_peak(design_file: DesignFile,
                                                              cycles: int) -> None:
    """npu2's bf16 multiplies reach 512 MACs a cycle on the bfp16 unit (an 8x8x8
    mmul_bfp16_bfp16, mlir-aie's mm_bfp.cc), not only the 4x8x8 mmul's 256: a performance
    tester's honest 430 a cycle was refused. 80 cycles (410 a cycle) passes; 40 (819) is
    refused against 512, saying whose peak it is."""
    from aiedsl.checks import check_design

    path = design_file(MM_BF16.replace("CYCLES", str(cycles)).replace('"npu1_1col"',
                                                                       '"npu2_1col"'))
    (path.parent / "mm.cc").write_text(
        "#include <aie_api/aie.hpp>\ntemplate <unsigned M, unsigned K, unsigned N>\n"
        "void mm(const bfloat16 *a, const bfloat16 *b, float *c) {}\n")
    if cycles == 80:
        check_design(load_design(path).ir)
        return
    assert error_of(path).splitlines()[1:3] == [
        "  limit: at most 1024 per cycle (npu2_1col's bf16 peak of 512 MACs per cycle on its "
        "bfp16 unit (an 8x8x8 mmul_bfp16_bfp16; 256 in the 4x8x8 mmul aiedsl's matmul runs), "
        "the type of its operands; a MAC counting 2)",
        "  found: 1,639 per cycle"]


def test_a_file_written_whole_takes_the_umask_without_changing_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A reviewer: reading the umask meant setting it to 0 for a moment, and another thread's
    files made meanwhile came out writable by everyone (7,971 of 20,000). The temporary file
    is made with 0666 and the kernel applies the umask: nothing reads or sets it."""
    import os
    import stat

    from aiedsl.files import replace_file

    def refused(_: int) -> int:
        raise AssertionError("os.umask called")

    mask = os.umask(0o022)
    os.umask(mask | 0o022)  # whatever the test runner has, at least group and other unwritable
    try:
        monkeypatch.setattr(os, "umask", refused)
        replace_file(tmp_path / "a.txt", "text", tmp_path)
        replace_file(tmp_path / "b.bin", b"\x00\x01", tmp_path)
    finally:
        monkeypatch.undo()
        os.umask(mask)
    for name, want in (("a.txt", b"text"), ("b.bin", b"\x00\x01")):
        path = tmp_path / name
        assert path.read_bytes() == want
        assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~(mask | 0o022)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt", "b.bin"]  # no temporaries


def test_code_another_user_could_write_is_not_loaded_from_the_cache(tmp_path: Path) -> None:
    """A reviewer: a cached host kernel library or compiled template is code aiedsl loads; in a
    folder another user can write (a shared cache), they could plant theirs."""
    import os

    from aiedsl.cache import trusted

    if not hasattr(os, "getuid"):
        pytest.skip("no file owners on this system")
    folder = tmp_path / "cache"
    folder.mkdir()
    lib = folder / "k.so"
    lib.write_bytes(b"\x7fELF")
    folder.chmod(0o755)
    lib.chmod(0o644)
    assert trusted(lib)
    lib.chmod(0o646)  # anyone may write it
    assert not trusted(lib)
    lib.chmod(0o644)
    folder.chmod(0o777)  # anyone may put a file there
    assert not trusted(lib)
    folder.chmod(0o755)
    assert not trusted(folder / "missing.so")


def test_a_cache_another_user_could_change_is_not_used_for_code(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """(a security reviewer) Host libraries were built into, and loaded from, a cache folder
    others could write, trusted() asked only of a library there already: another user renamed
    theirs over each new one between its build and its load. A cache folder that another user
    can write, or whose parent they can write (and so move a folder of theirs in its place), is
    not used: libraries go to a folder of the process's own, templates are compiled afresh."""
    import os

    from aiedsl import render
    from aiedsl.cache import private
    from aiedsl.kernels import host_build

    if not hasattr(os, "getuid"):
        pytest.skip("no file owners on this system")
    base = tmp_path / "xdg"
    folder = base / "aiedsl" / "host-kernels"
    folder.mkdir(parents=True)
    (base / "aiedsl" / "templates").mkdir()
    for p in (base, base / "aiedsl", folder):
        p.chmod(0o755)
    monkeypatch.setenv("XDG_CACHE_HOME", str(base))
    assert private(folder)
    assert host_build.library_folder() == folder and render._bytecode_cache() is not None
    for shared, mode in ((folder, 0o777), (base / "aiedsl", 0o777), (folder, 0o1777)):
        shared.chmod(mode)
        assert not private(folder), (shared, oct(mode))
        assert host_build.library_folder() != folder
        assert render._bytecode_cache() is None or shared == folder
        shared.chmod(0o755)
    (base / "aiedsl").chmod(0o1777)  # sticky above it, as /tmp: others cannot move it away
    assert private(folder)
    (base / "aiedsl").chmod(0o755)
    link = tmp_path / "link"
    link.symlink_to(base)
    assert private(link / "aiedsl" / "host-kernels")
