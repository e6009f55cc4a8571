"""Reusing mlir-aie's kernel files as they are: a kernel without ``entry=`` calls the file's own
``extern "C"`` function, one with ``entry=`` may not be named like one; the kernels declared from
one file share one object (a core calling several links), and ``defines=`` reach every compile.

The IRON port that found these: mlir-aie's matrix_vector example (``mv.cc``: templates, then
``extern "C"`` entries pasted by macros from ``DIM_M``/``DIM_K``), and two kernels of one file
with a plain helper on one core, which Peano's lld would refuse as duplicate symbols.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Callable

import pytest

import aiedsl
from aiedsl.checks import check_design
from aiedsl.errors import DesignError
from aiedsl.kernels.host import HOST_INCLUDE
from aiedsl.loader import load_design
from tests.command_line import run_command

DesignFile = Callable[..., Path]
ROOT = Path(__file__).resolve().parents[1]

MV_CC = r'''// A cut of mlir-aie's aie_kernels/aie2/mv.cc: templates, then extern "C" entries
// pasted by macros, sized by DIM_M and DIM_K (-DDIM_M=16 on the compiler's command line).
#include <aie_api/aie.hpp>
#include <stdint.h>

template <typename T, int M, int N> void zero_scalar(T *__restrict c) {
  for (int i = 0; i < M * N; i++) c[i] = 0;
}

template <typename T_in, typename T_out, int M, int K>
void matvec_scalar(T_in *a, T_in *b, T_out *c) {
  for (int row = 0; row < M; row++) {
    T_out running = 0;
    for (int i = 0; i < K; i++) running += a[row * K + i] * b[i];
    c[row] += running;
  }
}

extern "C" {

#ifndef DIM_M
#define DIM_M 32
#endif
#ifndef DIM_K
#define DIM_K 32
#endif

#define combos(X) X(int16_t, i16, int32_t, i32)

#define matvec_scalar_c_func(ctype_in, mlir_type_in, ctype_out, mlir_type_out)   \
  void matvec_scalar_##mlir_type_in##_##mlir_type_out(ctype_in *a_in, ctype_in *b_in, \
                                                      ctype_out *c_out) {            \
    matvec_scalar<ctype_in, ctype_out, DIM_M, DIM_K>(a_in, b_in, c_out);             \
  }

#define zero_scalar_c_func(ctype_in, mlir_type_in, ctype_out, mlir_type_out) \
  void zero_scalar_##mlir_type_out(ctype_out *c_out) {                       \
    zero_scalar<ctype_out, DIM_M, 1>(c_out);                                 \
  }

combos(matvec_scalar_c_func) combos(zero_scalar_c_func)

} // extern "C"
'''

MV = '''
    import numpy as np
    from aiedsl import Tensor, design, fifo, herd, i16, i32, loop, runtime
    from aiedsl.kernels import buffer, declare

    M, K, m, k = 32, 64, 16, 16
    DIMS = {"DIM_M": m, "DIM_K": k}

    def zero_ref(c):
        c[...] = 0

    def matvec_ref(a, b, c):
        c[...] = (c.astype(np.int64) + a.astype(np.int64) @ b.astype(np.int64)).astype(np.int32)

    @design(device="npu1_1col")
    def mv(A: Tensor[M, K, i16], B: Tensor[K, i16], C: Tensor[M, i32]):
        zero = declare("zero_scalar_i32", source="mv.cc", defines=DIMS,
                       args=[buffer("c", Tensor[m, i32], "out")], reference=zero_ref,
                       cycles=40, cost="scalar zero")
        matvec = declare("matvec_scalar_i16_i32", source="mv.cc", defines=DIMS,
                         args=[buffer("a", Tensor[m, k, i16]), buffer("b", Tensor[k, i16]),
                               buffer("c", Tensor[m, i32], "inout")],
                         reference=matvec_ref, cycles=2 * m * k, cost="scalar mac")
        a = fifo(Tensor[m, k, i16], name="a")
        b = fifo(Tensor[k, i16], name="b")
        c = fifo(Tensor[m, i32], name="c")

        @herd()
        def core():
            for _ in loop(M // m):
                with c.produce() as tc:
                    zero(tc)
                    for _ in loop(K // k):
                        with a.consume() as ta, b.consume() as tb:
                            matvec(ta, tb, tc)

        with runtime() as rt:
            rt.fill(a, A, (0, [2, 4, 16, 16], [1024, 16, 64, 1]))
            rt.fill(b, B, (0, [2, 1, 1, 64], [0, 0, 0, 1]))
            rt.drain(c, C)

    @mv.reference
    def reference(A, B):
        return (A.astype(np.int64) @ B.astype(np.int64)).astype(np.int32)
    '''


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """``aiedsl ARGS`` in this process, with a wide terminal and the system's PATH alone."""
    return run_command(*args, cwd=cwd, env={"COLUMNS": "300", "PATH": "/usr/bin:/bin",
                                            "HOME": str(Path.home())})


def _mv(design_file: DesignFile, old: str = "", new: str = "") -> Path:
    path = design_file(MV.replace(old, new) if old else MV)
    (path.parent / "mv.cc").write_text(MV_CC)
    return path


# -- 2a: a symbol the file defines itself ---------------------------------------------------------

def test_without_entry_a_kernel_is_the_files_own_extern_c_function(
        design_file: DesignFile) -> None:
    """IRON's Kernel("matvec_scalar_i16_i32", "mv.o"): the file's own function, called as it
    is, compiled with the declared defines (the file's defaults, 32, would run past the 16-row
    buffers)."""
    path = _mv(design_file)
    files = aiedsl.build(path, output="out").files
    # one object of mv.cc holds both (the same defines): the file once, nothing around it
    assert sorted(f for f in files if f.startswith("kernels/")) == ["kernels/zero_scalar_i32.cc"]
    assert re.findall(r'link_with = "(\w+\.o)"', files["aie.mlir"]) == ["zero_scalar_i32.o"] * 2
    cc = files["kernels/zero_scalar_i32.cc"]
    assert cc.split(MV_CC) == ["\n".join([
        "// zero_scalar_i32: generated by aiedsl 0.1.0 from mv.cc (do not edit here)",
        "// Compiled with -DDIM_K=16 -DDIM_M=16: the defines= of its declarations.",
        "// zero_scalar_i32: scalar zero",
        "// zero_scalar_i32 is mv.cc's own extern \"C\" function (no entry= declared): cores "
        "call it as it is.",
        "// Called by design 'mv' at: d.py:31",
        "// matvec_scalar_i16_i32: scalar mac",
        "// matvec_scalar_i16_i32 is mv.cc's own extern \"C\" function (no entry= declared): "
        "cores call it as it is.",
        "// Called by design 'mv' at: d.py:34", "", ""]), ""]
    r = _cli("kernel", "test", str(path), cwd=path.parent)
    assert r.stdout.splitlines() == [
        "PASS zero_scalar_i32.c: exact (integers must match exactly)",
        "PASS matvec_scalar_i16_i32.c: exact (integers must match exactly)",
        r.stdout.splitlines()[-1]]
    assert r.returncode == 0 and r.stdout.splitlines()[-1].startswith(
        "2 of 2 kernels match their references")
    r = _cli("sim", str(path), "--kernels", "native", cwd=path.parent)
    assert r.returncode == 0 and "PASS C" in r.stdout, r.stdout + r.stderr


def test_an_entry_under_a_symbol_the_file_defines_is_a_check_error(
        design_file: DesignFile) -> None:
    """The tester's first port: symbol and entry both given, mv.cc defining the symbol by a
    macro. The generated entry would define it again: g++ and Peano said so, check did not."""
    path = _mv(design_file, '''"matvec_scalar_i16_i32", source="mv.cc", defines=DIMS,''',
               '''"matvec_scalar_i16_i32", source="mv.cc", defines=DIMS,
                         entry="matvec_scalar<int16_t, int32_t, 16, 16>",''')
    r = _cli("check", str(path), cwd=path.parent)
    assert r.returncode == 2
    assert r.stderr == (
        "d.py:19: error [kernel entry]: kernel 'matvec_scalar_i16_i32' would be defined twice: "
        "mv.cc defines the extern \"C\" function matvec_scalar_i16_i32 itself (its line 31, "
        "pasted by a macro as matvec_scalar_##mlir_type_in##_##mlir_type_out), and "
        "entry=\"matvec_scalar<int16_t, int32_t, 16, 16>\" makes aiedsl generate another "
        "around matvec_scalar<int16_t, int32_t, 16, 16>\n"
        "  limit: one definition of each extern \"C\" function in a kernel's object\n"
        "  found: matvec_scalar_i16_i32 in mv.cc and "
        "entry=\"matvec_scalar<int16_t, int32_t, 16, 16>\"\n"
        "  fix: leave entry= out to call mv.cc's own matvec_scalar_i16_i32 as it is (with the "
        "defines= it reads), or name the kernel for what entry= computes, e.g. "
        "matvec_scalar_i16_i32_16x16\n")
    # named for what entry= computes, it is a kernel of its own beside the file's
    path.write_text(path.read_text().replace('"matvec_scalar_i16_i32"',
                                             '"matvec_scalar_i16_i32_16x16"'))
    r = _cli("kernel", "test", str(path), cwd=path.parent)
    assert r.returncode == 0, r.stdout + r.stderr


def test_without_entry_the_symbol_must_be_a_function_of_the_file(
        design_file: DesignFile) -> None:
    path = _mv(design_file, '"zero_scalar_i32"', '"zero_i32_16"')
    with pytest.raises(DesignError) as excinfo:
        check_design(load_design(path).ir)
    assert str(excinfo.value) == (
        "d.py:16: error [kernel entry]: kernel 'zero_i32_16' has no entry=, so cores call "
        "mv.cc's own extern \"C\" function zero_i32_16, which it does not define (compiled "
        "with -DDIM_K=16 -DDIM_M=16)\n"
        "  limit: without entry=, the name of an extern \"C\" function the source defines (as "
        "mlir-aie's kernel files do)\n"
        "  found: its extern \"C\" functions: matvec_scalar_i16_i32, zero_scalar_i32\n"
        "  fix: name one of them as the symbol, or give entry= the C++ function to call (aiedsl "
        "then generates zero_i32_16 around it)")


def test_a_definition_the_text_cannot_decide_is_explained_by_the_host_build(
        design_file: DesignFile) -> None:
    """A definition under a condition on a name the compiler predefines (check cannot know it
    is compiled) is left to the host build, which says it in words: the source's function and
    the generated entry are one name."""
    path = _mv(design_file, '''"matvec_scalar_i16_i32", source="mv.cc", defines=DIMS,''',
               '''"matvec_scalar_i16_i32", source="mv.cc", defines=DIMS,
                         entry="matvec_scalar<int16_t, int32_t, 16, 16>",''')
    pasted = MV_CC[MV_CC.index("#define matvec_scalar_c_func"):MV_CC.index("#define zero_")]
    (path.parent / "mv.cc").write_text(
        MV_CC.replace(pasted, "").replace("combos(matvec_scalar_c_func)", "")
        + '#ifdef __GNUC__\nextern "C" void matvec_scalar_i16_i32(int16_t *a, int16_t *b, '
          'int32_t *c) { matvec_scalar<int16_t, int32_t, 16, 16>(a, b, c); }\n#endif\n')
    check_design(load_design(path).ir)  # Peano may not define __GNUC__: not refused here
    r = _cli("kernel", "test", str(path), cwd=path.parent)
    assert r.returncode == 2
    assert r.stderr.startswith(
        "d.py:19: error [host kernel build]: the source defines matvec_scalar_i16_i32 itself, "
        "and the generated extern \"C\" entry of the kernel of that name defines it again\n")
    assert r.stderr.endswith(
        "  fix: leave entry= out to call the source's own function as it is, or name the kernel "
        "for what its entry= computes (put the shape in the symbol)\n")


def test_a_function_the_text_cannot_decide_is_left_to_the_host_build(
        design_file: DesignFile) -> None:
    """Without entry=: a function defined only under a condition on a name the compiler
    predefines may be there or not: check lets it be, and the host build, which does not define
    __clang__, says it is not there as compiled."""
    path = _mv(design_file)
    (path.parent / "mv.cc").write_text(MV_CC.replace(
        "combos(matvec_scalar_c_func) combos(zero_scalar_c_func)",
        "combos(matvec_scalar_c_func)\n#ifdef __clang__\ncombos(zero_scalar_c_func)\n#endif"))
    check_design(load_design(path).ir)
    r = _cli("kernel", "test", str(path), cwd=path.parent)
    assert r.returncode == 2
    assert r.stderr.splitlines()[0] == (
        "d.py:16: error [kernel entry]: kernel 'zero_scalar_i32' has no entry=, so cores call "
        "mv.cc's own extern \"C\" function zero_scalar_i32, which it does not define as "
        "compiled (with -DDIM_K=16 -DDIM_M=16)")


def test_a_combination_the_file_comments_out_is_not_defined(design_file: DesignFile) -> None:
    """The tester's port: mv.cc's combos list has its bf16 line commented out, yet
    matvec_scalar_bf16_f32 without entry= passed check, sim and build (the pasted pattern took
    any type tags) and failed only on the host or at the link. The invocations are expanded as
    the file writes them now."""
    path = _mv(design_file, '"matvec_scalar_i16_i32"', '"matvec_scalar_bf16_f32"')
    (path.parent / "mv.cc").write_text(MV_CC.replace(
        "#define combos(X) X(int16_t, i16, int32_t, i32)",
        "#define combos(X) /* X(bfloat16, bf16, float, f32) */ \\\n"
        "  X(int16_t, i16, int32_t, i32)"))
    r = _cli("check", str(path), cwd=path.parent)
    assert (r.returncode, r.stderr) == (2, (
        "d.py:19: error [kernel entry]: kernel 'matvec_scalar_bf16_f32' has no entry=, so cores "
        "call mv.cc's own extern \"C\" function matvec_scalar_bf16_f32, which it does not define "
        "(compiled with -DDIM_K=16 -DDIM_M=16)\n"
        "  limit: without entry=, the name of an extern \"C\" function the source defines (as "
        "mlir-aie's kernel files do)\n"
        "  found: its extern \"C\" functions: matvec_scalar_i16_i32, zero_scalar_i32\n"
        "  fix: name one of them as the symbol, or give entry= the C++ function to call (aiedsl "
        "then generates matvec_scalar_bf16_f32 around it)\n"))


ZERO_VEC = '''
    from aiedsl import Tensor, design, fifo, herd, i32, runtime
    from aiedsl.kernels import buffer, declare

    def z(c): c[...] = 0

    @design(device="npu1_1col")
    def d3(A: Tensor[64, i32], B: Tensor[64, i32]):
        k = declare("zero_64x64", source="zz.cc", entry="zero_vec<int32_t, 64>",
                    args=[buffer("b", Tensor[64, i32], "out")], reference=z, cycles=100,
                    cost="x")
        a = fifo(Tensor[64, i32]); b = fifo(Tensor[64, i32])

        @herd()
        def core():
            with a.consume() as x, b.produce() as y:
                k(y)

        with runtime() as rt:
            rt.fill(a, A); rt.drain(b, B)

    @d3.reference
    def reference(A): return A * 0
    '''

ZZ_CC = '''#include <stdint.h>
template <typename T, int N> void zero_vec(T *c) { for (int i = 0; i < N; i++) c[i] = 0; }
extern "C" {
#define zero_c_func(ctype, tag) void zero_##tag(ctype *c) { zero_vec<ctype, 32>(c); }
zero_c_func(int32_t, i32)
}
'''


def test_an_entry_named_like_a_cpp_function_of_the_file_is_refused(
        design_file: DesignFile) -> None:
    """A kernel author's: check passed, and the host build (g++) said helper was redefined."""
    path = design_file(ZERO_VEC.replace('"zero_64x64"', '"zero_helper"'))
    (path.parent / "zz.cc").write_text(ZZ_CC + "void zero_helper(int32_t *c) {}\n")
    with pytest.raises(DesignError) as excinfo:
        check_design(load_design(path).ir)
    assert str(excinfo.value) == (
        "d.py:8: error [kernel entry]: kernel 'zero_helper' is named like a C++ function of "
        "zz.cc, and entry=\"zero_vec<int32_t, 64>\" makes aiedsl generate an extern \"C\" "
        "function zero_helper around zero_vec<int32_t, 64>\n"
        "  limit: a generated entry's name is no function's of the source: C++ takes a C "
        "function beside a C++ one of the same name only when their parameters differ (g++: a "
        "redefinition, or conflicting declarations)\n"
        "  found: zero_helper in zz.cc and entry=\"zero_vec<int32_t, 64>\"\n"
        "  fix: name the kernel for what entry= computes, e.g. zero_helper_64")


def test_a_pasted_name_no_invocation_makes_is_free_for_an_entry(
        design_file: DesignFile) -> None:
    """A reviewer's: zz.cc pastes zero_##tag for i32 only, yet zero_64x64 with entry= was
    refused as defined twice (any tag matched), with the fix "leave entry= out", which would
    then fail at the link."""
    path = design_file(ZERO_VEC)
    (path.parent / "zz.cc").write_text(ZZ_CC)
    check_design(load_design(path).ir)
    r = _cli("kernel", "test", str(path), cwd=path.parent)
    assert r.returncode == 0, r.stdout + r.stderr
    path.write_text(path.read_text().replace('"zero_64x64"', '"zero_i32"'))  # that one is
    with pytest.raises(DesignError) as excinfo:
        check_design(load_design(path).ir)
    assert str(excinfo.value).splitlines()[0] == (
        "d.py:8: error [kernel entry]: kernel 'zero_i32' would be defined twice: zz.cc defines "
        "the extern \"C\" function zero_i32 itself (its line 4, pasted by a macro as "
        "zero_##tag), and entry=\"zero_vec<int32_t, 64>\" makes aiedsl generate another around "
        "zero_vec<int32_t, 64>")


def test_a_function_after_a_brace_in_a_literal_is_found(design_file: DesignFile) -> None:
    """A reviewer's: '{' in a character literal opened a block for the old scan, which then
    missed the next function and refused the kernel calling it."""
    path = design_file(ZERO_VEC.replace(
        'k = declare("zero_64x64", source="zz.cc", entry="zero_vec<int32_t, 64>",',
        'k = declare("after_brace", source="br.cc",'))
    (path.parent / "br.cc").write_text(
        '#include <stdint.h>\nextern "C" {\nvoid mark(int32_t *b) { char c = \'{\'; b[0] = c; }\n'
        'void after_brace(int32_t *b) { for (int i = 0; i < 64; i++) b[i] = 0; }\n}\n')
    check_design(load_design(path).ir)
    r = _cli("kernel", "test", str(path), cwd=path.parent)
    assert r.returncode == 0, r.stdout + r.stderr


def test_an_error_directive_every_reading_reaches_is_a_check_error(
        design_file: DesignFile) -> None:
    """check and build passed a kernel whose file reaches its #error under its defines= (a
    tester): only the host build and Peano said it."""
    from aiedsl.kernels.cscan import extern_c

    guard = '#include <stdint.h>\n#ifndef VEC\n#  error "VEC must be defined"\n#endif\n'
    assert extern_c(guard).error == (3, '"VEC must be defined"')
    assert extern_c(guard, {"VEC": 16}).error is None
    # reached one way of a condition the scan cannot decide only: not sure, not refused
    assert extern_c("#ifdef __chess__\n#error no chess\n#endif\n").error is None
    assert extern_c("#ifdef __chess__\n#error a\n#else\n#error b\n#endif\n").error == (2, "a")
    # after a header the scan does not read (quoted aie_api too), a name it may define is not
    # taken as undefined (a reviewer: g++ compiled what check refused)
    assert extern_c('#include "aie_api/aie.hpp"\n#ifndef INT32_MAX\n#error x\n#endif\n'
                    ).error is None
    path = _mv(design_file)
    # an #error under a condition on what one architecture's compiles define (npu2's bfp16
    # mmul) is not refused: this check reads the file as either architecture compiles it
    arch = "#ifndef AIE_API_EMULATE_BFLOAT16_MMUL_WITH_BFP16\n#error aie2p only\n#endif\n"
    (path.parent / "mv.cc").write_text(arch + MV_CC)
    check_design(load_design(path).ir)
    (path.parent / "mv.cc").write_text(guard + MV_CC)
    with pytest.raises(DesignError) as e:
        check_design(load_design(path).ir)
    assert str(e.value).split(": ", 1)[1].splitlines()[:3] == [
        "error [kernel source]: mv.cc reaches its #error (line 3) when compiled with "
        "-DDIM_K=16 -DDIM_M=16, as kernel 'zero_scalar_i32' is: it does not compile so",
        "  limit: a kernel's C++ compiles with its defines= (read as the compiler reads it, #if "
        "decided by them)",
        '  found: #error "VEC must be defined"']


def test_the_extern_c_functions_of_a_file_are_read_as_the_compiler_reads_them() -> None:
    """The reviewer's cases: what the old text scan missed or invented."""
    from aiedsl.kernels.cscan import extern_c

    def names(src: str, defines: dict | None = None) -> list[str]:
        scan = extern_c(src, defines)
        assert scan.complete, scan.unsure
        return [f.name for f in scan.functions]

    mv = extern_c(MV_CC, {"DIM_M": 16})
    assert [(f.name, f.spelled, f.line, f.sure) for f in mv.functions] == [
        ("matvec_scalar_i16_i32", "matvec_scalar_##mlir_type_in##_##mlir_type_out", 31, True),
        ("zero_scalar_i32", "zero_scalar_##mlir_type_out", 37, True)]
    assert mv.find("matvec_scalar") is None and mv.complete  # the template is not extern "C"
    # a macro pastes only what its invocations give it: one combination, not every name
    zz = ('template <typename T, int N> void zero_vec(T *c) { for (int i = 0; i < N; i++) '
          'c[i] = 0; }\nextern "C" {\n#define zero_c_func(ctype, tag) void zero_##tag(ctype *c)'
          ' { zero_vec<ctype, 32>(c); }\nzero_c_func(int32_t, i32)\n}\n')
    assert names(zz) == ["zero_i32"]
    assert names(MV_CC.replace("#define combos(X) X(int16_t, i16, int32_t, i32)",
                               "#define combos(X) /* X(bfloat16, bf16, float, f32) */ \\\n"
                               "  X(int16_t, i16, int32_t, i32)")) == [
        "matvec_scalar_i16_i32", "zero_scalar_i32"]
    # literals and comments are not code; braces are counted outside them
    assert names('extern "C" {\nvoid br(char *a) { a[0] = \'{\'; }\nvoid after(int *a) {}\n}\n'
                 ) == ["br", "after"]
    assert names('extern "C" {\nvoid br(char *a) { const char *s = "{"; }\n'
                 'void after(int *a) {}\n}\n') == ["br", "after"]
    assert names('auto s = R"x(extern "C" void fake(int *a);)x";\n'
                 '// extern "C" void ghost(int *a);\n/* extern "C" void spirit(int *a); */\n'
                 'const char *t = "extern \\"C\\" void fake2(int *a);";\n') == []
    # what is not an extern "C" function in a block: a static helper, a template, a variable,
    # a typedef, a member, a C++ block; a namespace's functions are
    assert names('extern "C" {\nstatic inline int helper(int x) { return x; }\n'
                 'template <typename T> void tmpl(T *a) {}\nint table(3);\n'
                 'typedef void (*cb)(int);\nstruct S { void method(int x) {} };\n'
                 'int x = compute(3);\nnamespace n { void in_ns(int *a) {} }\n'
                 'extern "C++" { void cpp(int *a) {} }\nvoid real(void (*f)(int)) {}\n}\n'
                 ) == ["in_ns", "real"]
    # #if with the kernel's defines; a head split by #if/#else is one function
    split = ('extern "C" {\n#ifdef WIDE\nvoid f(int *a, int n)\n#else\nvoid f(int *a)\n'
             '#endif\n{ a[0] = 1; }\n#if BITS == 8\nvoid g8(int *a) {}\n#else\n'
             'void g32(int *a) {}\n#endif\n}\n')
    assert names(split) == ["f", "g32"]
    assert names(split, {"WIDE": 1, "BITS": 8}) == ["f", "g8"]
    # what it cannot decide: every way, none sure; a macro it does not see: not complete
    maybe = extern_c('extern "C" {\n#ifdef __clang__\nvoid k(int *a) {}\n#endif\n}\n')
    assert [(f.name, f.sure) for f in maybe.functions] == [("k", False)] and maybe.complete
    # a name a standard header defines, once one is included: not known either way (the scan
    # had read it as undefined, and a file defining its kernel under it was refused)
    guarded = ('extern "C" {\n#if defined(UINT8_MAX) && UINT8_MAX == 255\n'
               'void u(int *a) {}\n#endif\n}\n')
    assert [(f.name, f.sure) for f in extern_c("#include <stdint.h>\n" + guarded).functions] == [
        ("u", False)]
    assert extern_c(guarded).functions == ()  # no header: only defines= and the file define it
    own = '#include <stdint.h>\nextern "C" {\n#ifdef DIM_M\nvoid m(int *a) {}\n#endif\n}\n'
    assert extern_c(own).functions == ()  # the kernel's own names are still decided
    # ... also those that start like a header's (a reviewer: M_TILE, FP_MODE, DBL_BUFFER were
    # read both ways, and a kernel defined only under them passed check)
    for name in ("M_TILE", "FP_MODE", "DBL_BUFFER", "FLT_ACC", "PRIdEBUG"):
        assert extern_c(own.replace("DIM_M", name)).functions == (), name
    sizes = "".join(f"#if M_TILE == {32 * i}\nvoid k{i}(int *a) {{}}\n#endif\n"
                    for i in range(1, 7))
    tile = extern_c("#include <aie_api/aie.hpp>\n#ifndef M_TILE\n#define M_TILE 64\n#endif\n"
                    'extern "C" {\n' + sizes + "}\n")
    assert [(f.name, f.sure) for f in tile.functions] == [("k2", True)] and tile.complete
    hidden = extern_c('extern "C" {\nDEFINE_KERNEL(k)\n}\n')
    assert (hidden.functions, hidden.complete, hidden.unsure) == (
        (), False, "DEFINE_KERNEL(...) on its line 2 is a macro it does not define (from a "
        "header?), which may define functions")


# -- 2b: one object per file ----------------------------------------------------------------------

TWO_ON_ONE_CORE = '''
    from aiedsl import Tensor, design, fifo, herd, i32, runtime
    from aiedsl.kernels import buffer, declare

    def r1(a, b): b[...] = a + 1
    def r2(a, b): b[...] = a + 2

    @design(device="npu1_1col")
    def twok(A: Tensor[64, i32], C: Tensor[64, i32], D: Tensor[64, i32]):
        sig = [buffer("a", Tensor[64, i32]), buffer("b", Tensor[64, i32], "out")]
        k1 = declare("inc1_64", source="twok.cc", entry="inc1<64>", args=sig, reference=r1,
                     cycles=80, cost="scalar")
        k2 = declare("inc2_64", source="twok.cc", entry="inc2<64>", args=sig, reference=r2,
                     cycles=80, cost="scalar")
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
    '''

TWOK_CC = '''#include <aie_api/aie.hpp>
#include <stdint.h>
int32_t helper(int32_t x) { return x + 1; }  // a plain (non-template, non-inline) helper
template <unsigned N> void inc1(const int32_t *a, int32_t *b) {
  for (unsigned i = 0; i < N; i++) b[i] = helper(a[i]);
}
template <unsigned N> void inc2(const int32_t *a, int32_t *b) {
  for (unsigned i = 0; i < N; i++) b[i] = helper(helper(a[i]));
}
'''


def _host_objects(out: Path, build: Path) -> dict[str, Path]:
    """Each ``kernels/*.cc`` of build ``out`` compiled for the host as build.sh compiles it for
    the core (its -D words taken from build.sh's Peano line), by object name."""
    sh = (out / "build.sh").read_text()
    objects = {}
    for line in sh.splitlines():
        m = re.search(r" -c (kernels/\w+\.cc) -o (\w+\.o)$", line)
        if m:
            defines = re.findall(r" (-D[A-Za-z_]\w*=\S+)", line)[2:]  # after aiedsl's own two
            obj = build / m[2]
            subprocess.run(["g++", "-std=c++20", "-O1", "-fPIC", *defines, f"-I{HOST_INCLUDE}",
                            "-c", str(out / m[1]), "-o", str(obj)], check=True)
            objects[m[2]] = obj
    return objects


@pytest.mark.skipif(shutil.which("g++") is None or shutil.which("nm") is None,
                    reason="needs the host's g++ and nm")
def test_a_core_calling_two_kernels_of_one_file_links_one_object(
        design_file: DesignFile, tmp_path: Path) -> None:
    """Each kernel used to get a copy of twok.cc: both objects defined helper(int), and the
    core linking both failed in lld (duplicate symbol) after check had passed. The file is now
    compiled once, with both entries, and the core links that one object: shown with the host's
    g++, nm and linker on the objects build.sh makes."""
    path = design_file(TWO_ON_ONE_CORE)
    (path.parent / "twok.cc").write_text(TWOK_CC)
    out = path.parent / "out"
    files = aiedsl.build(path, output=str(out)).files
    assert sorted(f for f in files if f.startswith("kernels/")) == ["kernels/inc1_64.cc"]
    cc = files["kernels/inc1_64.cc"]
    assert cc.count("int32_t helper(int32_t x)") == 1
    assert cc.split(TWOK_CC)[0].splitlines() == [
        "// inc1_64: generated by aiedsl 0.1.0 from twok.cc (do not edit here)",
        "// inc1_64: scalar", "// Called by design 'twok' at: d.py:19",
        "// inc2_64: scalar", "// Called by design 'twok' at: d.py:20", ""]
    assert cc.split(TWOK_CC)[1] == (
        "\n#include <stdint.h> // the entries' parameter types, whatever the source above "
        "includes\n"
        '\nextern "C" {\n\n'
        "void inc1_64(int32_t *a, int32_t *b) {\n  inc1<64>(a, b);\n}\n\n"
        "void inc2_64(int32_t *a, int32_t *b) {\n  inc2<64>(a, b);\n}\n\n"
        '} // extern "C"\n')
    linked = re.findall(r'func\.func private @(\w+)\(.*link_with = "(\w+\.o)"', files["aie.mlir"])
    assert linked == [("inc1_64", "inc1_64.o"), ("inc2_64", "inc1_64.o")]
    build = tmp_path / "host"
    build.mkdir()
    objects = _host_objects(out, build)
    assert sorted(objects) == ["inc1_64.o"]
    core = sorted({objects[o] for _, o in linked})  # what aiecc links into the core's ELF
    defined = [ln.split()[-1] for o in core for ln in subprocess.run(
        ["nm", "--defined-only", str(o)], capture_output=True, text=True, check=True
    ).stdout.splitlines() if ln.split()[1] in "TD"]
    assert defined.count("_Z6helperi") == 1
    assert {"inc1_64", "inc2_64"} <= set(defined)
    r = subprocess.run(["g++", "-shared", "-o", str(build / "core.so"), *map(str, core)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    r = _cli("kernel", "test", str(path), cwd=path.parent)
    assert r.returncode == 0, r.stdout + r.stderr


def test_one_file_spelled_two_ways_is_one_object(design_file: DesignFile) -> None:
    """A reviewer's: source="./twok.cc" beside source="twok.cc" made two objects of one file,
    both linked into one core (helper defined twice: lld would refuse), and check passed. The
    file named, not its spelling, is the object."""
    path = design_file(TWO_ON_ONE_CORE.replace('k2 = declare("inc2_64", source="twok.cc"',
                                               'k2 = declare("inc2_64", source="./twok.cc"'))
    (path.parent / "twok.cc").write_text(TWOK_CC)
    files = aiedsl.build(path, output="out").files
    assert sorted(f for f in files if f.startswith("kernels/")) == ["kernels/inc1_64.cc"]
    assert re.findall(r'link_with = "(\w+\.o)"', files["aie.mlir"]) == ["inc1_64.o"] * 2
    # with other defines for one of them, check names the clash whatever the spelling
    path.write_text(path.read_text().replace('source="./twok.cc",',
                                             'source="./twok.cc", defines={"X": 1},'))
    with pytest.raises(DesignError) as excinfo:
        check_design(load_design(path).ir)
    assert str(excinfo.value).splitlines()[0] == (
        "d.py:20: error [kernel objects]: core[0,0] calls kernels 'inc1_64' and 'inc2_64', "
        "which are compiled from twok.cc with different defines (no defines; -DX=1): it would "
        "link two objects of twok.cc, each defining helper")


def test_two_objects_of_a_file_of_templates_alone_say_what_is_not_known(
        design_file: DesignFile) -> None:
    """The refusal said each object defined "what the file defines outside templates" of a
    file that defines nothing there (a tester): it now says the text shows no function."""
    path = design_file(TWO_ON_ONE_CORE.replace('k2 = declare("inc2_64", source="twok.cc",',
                                               'k2 = declare("inc2_64", source="twok.cc", '
                                               'defines={"X": 1},'))
    (path.parent / "twok.cc").write_text(TWOK_CC.replace(
        "int32_t helper(int32_t x) { return x + 1; }", "template <typename T> T helper(T x) "
        "{ return x + 1; }"))
    with pytest.raises(DesignError) as excinfo:
        check_design(load_design(path).ir)
    assert str(excinfo.value).splitlines()[0].endswith(
        "it would link two objects of twok.cc, each defining whatever twok.cc defines outside "
        "templates (its text shows no function there: a variable would clash), and each "
        "instantiating its templates with its own defines under the same symbols, of which the "
        "linker keeps either silently")


def test_one_core_calling_a_file_compiled_two_ways_is_a_check_error(
        design_file: DesignFile) -> None:
    path = _mv(design_file, '''"zero_scalar_i32", source="mv.cc", defines=DIMS,''',
               '''"zero_scalar_i32", source="mv.cc", defines={"DIM_M": m, "DIM_K": 8},''')
    r = _cli("check", str(path), cwd=path.parent)
    assert r.returncode == 2
    assert r.stderr == (
        "d.py:34: error [kernel objects]: core[0,0] calls kernels 'zero_scalar_i32' and "
        "'matvec_scalar_i16_i32', which are compiled from mv.cc with different defines "
        "(-DDIM_K=8 -DDIM_M=16; -DDIM_K=16 -DDIM_M=16): it would link two objects of mv.cc, "
        "each defining matvec_scalar_i16_i32 and zero_scalar_i32\n"
        "  limit: one object of each C++ file per core (lld refuses a symbol defined twice, and "
        "keeps one of a template's instantiations)\n"
        "  found: zero_scalar_i32.o (-DDIM_K=8 -DDIM_M=16) and matvec_scalar_i16_i32.o "
        "(-DDIM_K=16 -DDIM_M=16)\n"
        "  d.py:31: the call of 'zero_scalar_i32'\n"
        "  fix: give both kernels the same defines=, make the setting a template parameter in "
        "entry=, or call them from different cores\n")


def _two_files(design_file: DesignFile, other: str) -> Path:
    """TWO_ON_ONE_CORE with inc2_64 from twoj.cc, TWOK_CC with its helper replaced by
    ``other``: two objects linked into one core."""
    path = design_file(TWO_ON_ONE_CORE.replace('k2 = declare("inc2_64", source="twok.cc"',
                                               'k2 = declare("inc2_64", source="twoj.cc"'))
    (path.parent / "twok.cc").write_text(TWOK_CC)
    (path.parent / "twoj.cc").write_text(TWOK_CC.replace(
        "int32_t helper(int32_t x) { return x + 1; }", other))
    return path


def test_two_files_defining_one_helper_for_one_core_are_a_check_error(
        design_file: DesignFile) -> None:
    """(a tester) Two files linked into one core, both defining int32_t bump(int32_t), passed
    every check and failed at lld (duplicate symbol): the rule on one file compiled twice did
    not look at two files."""
    path = _two_files(design_file, "int32_t helper(int32_t y) { return y + 2; }")
    with pytest.raises(DesignError) as excinfo:
        check_design(load_design(path).ir)
    assert str(excinfo.value) == (
        "d.py:12: error [kernel objects]: kernels 'inc1_64' (twok.cc) and 'inc2_64' (twoj.cc) "
        "both define the C++ function helper(int32_t), and core[0,0] links both objects: lld "
        "would refuse it as a duplicate symbol\n"
        "  limit: each symbol with external linkage defined once among the objects a core links "
        "(a static or inline function, a template or one in an unnamed namespace is each "
        "object's own)\n"
        "  found: twok.cc:3 and twoj.cc:3\n"
        "  d.py:10: kernel 'inc1_64' is declared\n"
        "  d.py:19: core[0,0] calls 'inc1_64'\n"
        "  d.py:20: and 'inc2_64'\n"
        "  fix: make 'helper' static or inline in twok.cc or twoj.cc, or rename it in one of "
        "them")


@pytest.mark.parametrize("other", [
    "int32_t helper(const int32_t y) { return y + 2; }",
    "int32_t helper(int32_t const y) { return y + 2; }",
    "int32_t helper(std::int32_t y) { return y + 2; }",
    "using i32 = int32_t;\ni32 helper(i32 y) { return y + 2; }",
    "typedef int32_t word;\ntypedef word w2;\nint32_t helper(w2 y) { return y + 2; }"])
def test_one_helper_spelled_two_ways_is_one_symbol(design_file: DesignFile, other: str) -> None:
    """(a reviewer) The mangled name drops a parameter's top-level const and holds a typedef
    as its type: helper(const int32_t) and helper(i32) (using i32 = int32_t) are the
    helper(int32_t) the other file defines, which the scan compared as written and passed."""
    with pytest.raises(DesignError) as excinfo:
        check_design(load_design(_two_files(design_file, other)).ir)
    assert str(excinfo.value).splitlines()[0] == (
        "d.py:12: error [kernel objects]: kernels 'inc1_64' (twok.cc) and 'inc2_64' (twoj.cc) "
        "both define the C++ function helper(int32_t), and core[0,0] links both objects: lld "
        "would refuse it as a duplicate symbol")


@pytest.mark.parametrize("other", [
    "static int32_t helper(int32_t x) { return x + 2; }",
    "inline int32_t helper(int32_t x) { return x + 2; }",
    "constexpr int32_t helper(int32_t x) { return x + 2; }",
    "namespace { int32_t helper(int32_t x) { return x + 2; } }",
    "namespace two { int32_t helper(int32_t x) { return x + 2; } }",
    "template <typename T> T helper(T x) { return x + 2; }",
    "int32_t helper(int16_t x) { return x + 2; }",  # an overload: another mangled name
    "int32_t helper(const int32_t *x) { return *x + 2; }",  # so is a pointer's
    "using i32 = int16_t;\nint32_t helper(i32 x) { return x + 2; }",
    "int32_t helper(int32_t x);",  # declared, not defined
    'extern "C" int32_t helper2(int32_t x) { return x + 2; }'])
def test_two_files_whose_helpers_are_each_their_own_pass(design_file: DesignFile,
                                                         other: str) -> None:
    """What two objects of one core may both define: no symbol lld would see twice."""
    check_design(load_design(_two_files(design_file, other)).ir)


def test_a_file_defining_another_kernels_symbol_for_one_core_is_a_check_error(
        design_file: DesignFile) -> None:
    """(a tester) hc.cc kept an extern "C" passthrough_i32_256 helper while the same core
    called the library's passthrough(Tensor[256, i32]), whose entry is that symbol: check
    passed and lld would refuse it."""
    path = design_file(TWO_ON_ONE_CORE.replace(
        'k2 = declare("inc2_64", source="twok.cc", entry="inc2<64>", args=sig, reference=r2,\n'
        '                     cycles=80, cost="scalar")', "k2 = passthrough(Tensor[64, i32])"
    ).replace("import buffer, declare", "import buffer, declare, passthrough"))
    (path.parent / "twok.cc").write_text(TWOK_CC.replace(
        "int32_t helper(int32_t x) { return x + 1; }",
        'int32_t helper(int32_t x) { return x + 1; }\n'
        'extern "C" void passthrough_i32_64(int32_t *a, int32_t *b) {}'))
    with pytest.raises(DesignError) as excinfo:
        check_design(load_design(path).ir)
    lines = str(excinfo.value).splitlines()
    assert lines[0] == (
        "d.py:12: error [kernel objects]: kernels 'inc1_64' (twok.cc) and 'passthrough_i32_64' "
        "(passthrough.cc) both define the extern \"C\" function 'passthrough_i32_64', and "
        "core[0,0] links both objects: lld would refuse it as a duplicate symbol")
    assert lines[2] == ("  found: twok.cc:4 and the generated entry of kernel "
                        "'passthrough_i32_64' (passthrough.cc)")
    assert lines[-1] == ("  fix: make 'passthrough_i32_64' static or inline in twok.cc, or "
                         "rename it there")


@pytest.mark.parametrize("cc, k1, message, found, fix", [
    ("#define a 0\n", "", "argument 'a' of kernel 'inc1_64' is a macro", "#define a in twok.cc "
     "(line 3)", "rename it, e.g. a_arg"),
    ("", 'defines={"b": 1}, ', "argument 'b' of kernel 'inc1_64' is a macro",
     "defines={'b': ...}", "rename it, e.g. b_arg"),
    ("#define a 0\n#define b 1\n", "", "arguments 'a' and 'b' of kernel 'inc1_64' are macros",
     "#define a in twok.cc (line 3); #define b in twok.cc (line 4)",
     "rename them, e.g. a_arg and b_arg"),
    ("#define inc1_64(x) x\n", "", "kernel symbol 'inc1_64' is a macro",
     "#define inc1_64 in twok.cc (line 3)",
     "name the kernel for what entry= computes, e.g. inc1_64_64")])
def test_a_name_the_generated_entry_declares_is_no_macro_of_the_file(
        design_file: DesignFile, cc: str, k1: str, message: str, found: str, fix: str) -> None:
    """(a tester) mac.cc's #define src 0 and a buffer("src", ...) with entry=: check and build
    passed, and the generated extern "C" function's int32_t *0 did not compile. The README
    says check reads the file's macros: the names the generated function declares are held to
    them (and to defines=)."""
    path = design_file(TWO_ON_ONE_CORE.replace('k1 = declare("inc1_64", source="twok.cc", ',
                                               f'k1 = declare("inc1_64", source="twok.cc", {k1}'))
    (path.parent / "twok.cc").write_text(TWOK_CC.replace("#include <stdint.h>\n",
                                                         "#include <stdint.h>\n" + cc))
    with pytest.raises(DesignError) as excinfo:
        check_design(load_design(path).ir)
    them = "them" if "macros" in message else "it"
    assert str(excinfo.value) == (
        f"d.py:10: error [name]: {message} the kernel's C++ defines: the extern \"C\" function "
        f"aiedsl generates after twok.cc declares {them} by name, and the preprocessor would "
        f"rewrite {them}\n"
        "  limit: a kernel's symbol and argument names are no macro of its C++ (its #define "
        "lines, its defines=)\n"
        f"  found: {found}\n"
        f"  fix: {fix}")


@pytest.mark.parametrize("cc", ["#define a(x) x\n", "#define a 0\n#undef a\n",
                                "#ifdef NOT_SET\n#define a 0\n#endif\n"])
def test_a_macro_that_does_not_rewrite_an_argument_passes(design_file: DesignFile,
                                                          cc: str) -> None:
    """A function-like macro rewrites only a name followed by (, and one undone or never
    defined rewrites nothing."""
    path = design_file(TWO_ON_ONE_CORE)
    (path.parent / "twok.cc").write_text(TWOK_CC.replace("#include <stdint.h>\n",
                                                         "#include <stdint.h>\n" + cc))
    check_design(load_design(path).ir)


# -- 2c: defines= ---------------------------------------------------------------------------------

def test_defines_reach_the_peano_line_of_build_sh(design_file: DesignFile) -> None:
    path = _mv(design_file)
    files = aiedsl.build(path, output="out").files
    assert [ln for ln in files["build.sh"].splitlines() if "clang++" in ln] == [
        f'"$PEANO_INSTALL_DIR"/bin/clang++ -O2 -std=c++20 --target=aie2-none-unknown-elf '
        "-Wno-parentheses -Wno-attributes -Wno-macro-redefined -Wno-empty-body "
        "-Wno-missing-template-arg-list-after-template-kw -DNDEBUG -D__AIE_API_AIE_ADF_HPP__ "
        f"{flags} -fstack-usage -ffunction-sections -I\"$MLIR_AIE_INSTALL_DIR\"/include "
        '-I"$MLIR_AIE_INSTALL_DIR"/aie_runtime_lib/AIE2 '
        f"-c kernels/{name}.cc -o {name}.o"
        for flags, name in (("-DDIM_K=16 -DDIM_M=16", "zero_scalar_i32"),)]
    assert '"defines": {\n        "DIM_K": 16,\n        "DIM_M": 16\n      }' in \
        files["design.json"]


def test_without_its_defines_the_file_is_compiled_with_its_own_sizes(
        design_file: DesignFile) -> None:
    """The file's defaults (32 rows) run past the 16-row buffers: what the defines prevent."""
    path = _mv(design_file, "defines=DIMS,", "")
    r = _cli("kernel", "test", str(path), cwd=path.parent)
    assert r.returncode == 1
    assert "FAIL matvec_scalar_i16_i32: wrote " in r.stdout or \
        "FAIL matvec_scalar_i16_i32: crashed" in r.stdout, r.stdout


ADD_CC = '''#include <aie_api/aie.hpp>
#include <stdint.h>
#ifndef ADD
#error "compile with -DADD=<the number to add>"
#endif
template <unsigned N> void add_n(const int32_t *a, int32_t *b) {
  for (unsigned i = 0; i < N; i += 16)
    aie::store_v(b + i, aie::add(aie::load_v<16>(a + i), aie::broadcast<int32_t, 16>(ADD)));
}
'''

ADD = '''
    from aiedsl import Tensor, design, fifo, herd, i32, runtime
    from aiedsl.kernels import buffer, declare

    def add3(a, b): b[...] = a + 3
    def add5(a, b): b[...] = a + 5

    @design(device="npu1_1col")
    def d(A: Tensor[64, i32], C: Tensor[64, i32]):
        sig = [buffer("a", Tensor[64, i32]), buffer("b", Tensor[64, i32], "out")]
        k3 = declare("add3_i32_64", source="add.cc", entry="add_n<64>", defines={"ADD": 3},
                     args=sig, reference=add3, cycles=None, cost="vector add")
        k5 = declare("add5_i32_64", source="add.cc", entry="add_n<64>", defines={"ADD": 5},
                     args=sig, reference=add5, cycles=None, cost="vector add")
        i = fifo(Tensor[64, i32]); t = fifo(Tensor[64, i32]); o = fifo(Tensor[64, i32])

        @herd(rows=2)
        def core(x, y):
            if y == 0:
                with i.consume() as a, t.produce() as b:
                    k3(a, b)
            else:
                with t.consume() as a, o.produce() as b:
                    k5(a, b)

        with runtime() as rt:
            rt.fill(i, A); rt.drain(o, C)

    @d.reference
    def reference(A): return A + 8
    '''


def test_defines_reach_the_host_compiles_and_name_their_own_objects(
        design_file: DesignFile) -> None:
    """One file, two sets of defines: two objects (each core links its own), each compiled
    with its -D words by kernel test, profile (cycles=None) and sim --kernels native."""
    path = design_file(ADD)
    (path.parent / "add.cc").write_text(ADD_CC)
    files = aiedsl.build(path, output="out").files
    assert sorted(f for f in files if f.startswith("kernels/")) == [
        "kernels/add3_i32_64.cc", "kernels/add5_i32_64.cc"]
    assert re.findall(r'link_with = "(\w+\.o)"', files["aie.mlir"]) == [
        "add3_i32_64.o", "add5_i32_64.o"]
    assert [re.findall(r" -DADD=\d+ ", ln) for ln in files["build.sh"].splitlines()
            if "clang++" in ln] == [[" -DADD=3 "], [" -DADD=5 "]]
    for command in (("kernel", "test"), ("kernel", "profile"), ("sim", "--kernels", "native")):
        r = _cli(*command, str(path), cwd=path.parent)
        assert r.returncode == 0, (command, r.stdout + r.stderr)
    r = _cli("kernel", "test", str(path), cwd=path.parent)
    assert r.stdout.splitlines()[:2] == [
        "PASS add3_i32_64.b: exact (integers must match exactly)",
        "PASS add5_i32_64.b: exact (integers must match exactly)"]


@pytest.mark.parametrize("defines, found, rest", [
    ('{"BIT WIDTH": 8}', "'BIT WIDTH'", "which is not a macro name it may set"),
    ('{"NDEBUG": 1}', "'NDEBUG'", "which is not a macro name it may set"),
    ('{"int": 1}', "'int'", "which is not a macro name it may set"),
    ('{"__cplusplus": 1}', "'__cplusplus'", "which is not a macro name it may set"),
    ('{"__AIE_ARCH__": 20}', "'__AIE_ARCH__'", "which is not a macro name it may set"),
    ('{"ADD": "3; rm -rf ~"}', "'3; rm -rf ~'", None),
    ('{"ADD": "$(touch x)"}', "'$(touch x)'", None),
    ('{"ADD": True}', "True", None),
    ('{"ADD": float("inf")}', "inf", None),
    ('[("ADD", 3)]', "[('ADD', 3)]", None),
])
def test_defines_are_checked_where_they_are_declared(design_file: DesignFile, defines: str,
                                                     found: str, rest: str | None) -> None:
    path = design_file(ADD.replace('defines={"ADD": 3}', f"defines={defines}"))
    (path.parent / "add.cc").write_text(ADD_CC)
    with pytest.raises(DesignError) as excinfo:
        load_design(path)
    e = excinfo.value
    assert (e.rule, e.loc.line, e.found) == ("kernel defines", 10, found)
    form = ("NAME: a C identifier, not a C++ keyword, not the compiler's (starting with __: "
            "__cplusplus, __AIE_ARCH__), nor NDEBUG, which the compiles set (a feature-test "
            "macro such as _GNU_SOURCE is the program's to set); VALUE: an int (within 64 bits, "
            "as a number or a literal in a str), a finite float, or a str of one C identifier "
            "or number literal (at most 100 characters)")
    if defines.startswith("["):
        assert (e.message, e.limit, e.fix) == (
            f"kernel 'add3_i32_64' has defines={found}", "a dict of NAME: VALUE",
            'write e.g. defines={"BIT_WIDTH": 8}')
    elif rest:
        assert (e.message, e.limit, e.fix) == (
            f"kernel 'add3_i32_64' defines {found}, {rest}", form,
            'name the macro the C++ reads (#ifndef NAME / #if NAME == ...), e.g. '
            'defines={"DIM_M": 32}')
    else:
        assert (e.message, e.limit, e.fix) == (
            f"kernel 'add3_i32_64' defines ADD as {found}", form,
            'give one number or name, e.g. defines={"ADD": 8} (True and False: write 1 and 0)')


def test_define_values_are_written_as_c_reads_them() -> None:
    """np.float64(1e-5) was written -DA=np.float64(1e-05) (a float subclass, its repr); a
    MappingProxyType, which declare()'s Mapping type takes, was refused."""
    import types

    from aiedsl.lang.names import check_defines, define_flags

    import numpy as np
    given = {"T": "int16_t", "N": np.int32(64), "EPS": 1e-05, "NEG": -3, "F": "1.5f",
             "H": "0x40", "A": np.float64(1e-5), "B": np.float32(0.5), "_low": 1}
    assert define_flags(check_defines(types.MappingProxyType(given), "k", None)) == [
        "-DA=1e-05", "-DB=0.5", "-DEPS=1e-05", "-DF=1.5f", "-DH=0x40", "-DN=64", "-DNEG=-3",
        "-DT=int16_t", "-D_low=1"]
    assert define_flags({"A": np.float64(2.5)}) == ["-DA=2.5"]
    edge = {"MIN": -(2 ** 63 - 1), "MAX": 2 ** 63 - 1}
    assert check_defines(edge, "k", None) == {"MAX": 2 ** 63 - 1, "MIN": -(2 ** 63 - 1)}


def test_feature_test_macros_are_the_programs_to_define() -> None:
    """_GNU_SOURCE (M_PI under -std=c++20) was refused as a name C reserves."""
    from aiedsl.lang.names import check_defines

    assert check_defines({"_GNU_SOURCE": 1, "_USE_MATH_DEFINES": 1}, "k", None) == {
        "_GNU_SOURCE": 1, "_USE_MATH_DEFINES": 1}


@pytest.mark.parametrize("value", [2 ** 70, 2 ** 63, -(2 ** 63), "1180591620717411303424",
                                   "0xfffffffffffffffffff"])
def test_an_int_define_past_the_preprocessors_64_bits_is_refused(value: int | str) -> None:
    """The tester's defines={"BIT_WIDTH": 2**70}: accepted, and g++ took another #if
    branch."""
    from aiedsl.lang.names import check_defines

    with pytest.raises(DesignError) as excinfo:
        check_defines({"BIT_WIDTH": value}, "k", None)
    assert str(excinfo.value) == (
        f"error [kernel defines]: kernel 'k' defines BIT_WIDTH as {value!r}\n"
        "  limit: an int from -9,223,372,036,854,775,807 to 9,223,372,036,854,775,807: the C "
        "preprocessor computes #if in intmax_t (64 bits): a value outside is not read as written "
        "there, and the C++ may take another branch\n"
        f"  found: {value!r}\n"
        "  fix: give BIT_WIDTH a value in that range")


def test_one_function_of_a_file_under_two_sets_of_defines_is_named_twice(
        design_file: DesignFile) -> None:
    """Without entry= the symbol is the file's: two sets of defines cannot both have it."""
    declared = '''                       cycles=40, cost="scalar zero")\n'''
    path = _mv(design_file, declared, declared + '''\
        zero8 = declare("zero_scalar_i32", source="mv.cc", defines={"DIM_M": 8},
                        args=[buffer("c", Tensor[8, i32], "out")], reference=zero_ref,
                        cycles=40, cost="scalar zero")
''')
    path.write_text(path.read_text().replace("zero(tc)\n", "zero(tc)\n                zero8(tc)\n"))
    with pytest.raises(DesignError) as excinfo:
        load_design(path)
    assert str(excinfo.value) == (
        "d.py:19: error [kernel]: two different kernels use the symbol 'zero_scalar_i32'\n"
        "  found: defines: {'DIM_K': 16, 'DIM_M': 16} and {'DIM_M': 8}; args: (c: 16xi32) and "
        "(c: 8xi32)\n"
        "  d.py:16: the first\n"
        "  fix: the file's extern \"C\" function has one name: call its template through entry= "
        "under a symbol of your own with the shape in it, or give both the same defines=")


def test_one_declare_run_twice_and_a_clash_with_the_library_are_said_so(
        design_file: DesignFile) -> None:
    """A function making kernels under one symbol (both at its declare line) and a kernel of
    one's own named like the library's were both told to put the shape in the symbol (a
    tester)."""
    source = '''
        from aiedsl import Tensor, design, fifo, herd, i32, runtime
        from aiedsl.kernels import buffer, declare, passthrough

        def ref(src, dst):
            dst[...] = src

        def mk(n):
            return declare(SYMBOL, source="k.cc", entry=f"copy<{n}>",
                           args=[buffer("src", Tensor[n, i32]), buffer("dst", Tensor[n, i32], "out")],
                           reference=ref, cycles=20, cost="-")

        @design(device="npu1_1col")
        def d(a: Tensor[64, i32], b: Tensor[64, i32]):
            x = fifo(Tensor[64, i32])
            y = fifo(Tensor[64, i32])
            k1, k2 = mk(64), OTHER

            @herd()
            def core():
                with x.consume() as s, y.produce() as o:
                    k1(s, o)
                    k2(s, o)

            with runtime() as rt:
                rt.fill(x, a)
                rt.drain(y, b)
        '''
    path = design_file(source.replace("SYMBOL", '"copy_i32"').replace("OTHER", "mk(32)"))
    with pytest.raises(DesignError) as e:
        load_design(path)
    assert str(e.value).splitlines()[1:] == [
        "  found: entry: copy<64> and copy<32>; args: (src: 64xi32, dst: 64xi32) and (src: "
        "32xi32, dst: 32xi32)",
        "  d.py:8: the first",
        "  fix: put every shape parameter (and define) into the symbol name: the declare() at "
        "that line makes both, so its symbol must tell them apart (an f-string, e.g. "
        "f\"copy_i32_{n}\")"]
    path = design_file(source.replace("SYMBOL", '"passthrough_i32_64"')
                       .replace("OTHER", "passthrough(Tensor[64, i32])"), "lib.py")
    with pytest.raises(DesignError) as e:
        load_design(path)
    assert str(e.value).splitlines()[-1] == (
        "  fix: 'passthrough_i32_64' is a kernel of aiedsl's library (passthrough.cc): give "
        "yours a symbol of its own")


def test_one_library_kernel_in_two_shapes_of_one_size(design_file: DesignFile) -> None:
    """passthrough of 32x64 and of 128x16 i32 are both passthrough_i32_2048, and one symbol
    takes one memref type: the fix gives the shape both can share (the tester's two herds
    through one L2 block), and following it loads."""
    source = '''
        from aiedsl import Tensor, design, fifo, herd, i32, runtime
        from aiedsl.kernels import passthrough

        @design(device="npu1_1col")
        def d(a: Tensor[4096, i32], b: Tensor[4096, i32]):
            rows = [fifo(Tensor[%s, i32], name=f"r{i}") for i in range(2)]
            cols = [fifo(Tensor[%s, i32], name=f"c{i}") for i in range(2)]
            cpr = passthrough(Tensor[%s, i32])
            cpc = passthrough(Tensor[%s, i32])

            @herd(rows=2)
            def core(x, y):
                with rows[y].consume() as s, cols[y].produce() as o:
                    (cpr if y == 0 else cpc)(s, o)

            with runtime() as rt:
                for i in range(2):
                    rt.fill(rows[i], a, (i * 2048, [2048], [1]))
                    rt.drain(cols[i], b, (i * 2048, [2048], [1]))
        '''
    path = design_file(source % ("32, 64", "128, 16", "32, 64", "128, 16"))
    with pytest.raises(DesignError) as excinfo:
        load_design(path)
    assert str(excinfo.value) == (
        "d.py:9: error [kernel]: two different kernels use the symbol 'passthrough_i32_2048'\n"
        "  found: args: (src: 32x64xi32, dst: 32x64xi32) and (src: 128x16xi32, dst: "
        "128x16xi32)\n"
        "  d.py:8: the first\n"
        "  fix: the symbol takes one memref type per argument, and the two differ in shape only "
        "(32x64xi32 and 128x16xi32): declare the fifos of both calls with one shape, e.g. "
        "Tensor[2048, i32] (the same bytes), and make the kernel for that shape")
    load_design(design_file(source % (("2048",) * 4), "fixed.py"))


SHADOW = '''
import numpy as np
from aiedsl import Tensor, design, fifo, herd, i16, loop, runtime
from aiedsl.kernels import buffer, declare, passthrough

def twice(src, dst, **params):
    dst[...] = src * 2

@design(device="npu1_1col")
def d(A: Tensor[1024, i16], B: Tensor[1024, i16]):
    mine = declare("my_twice_1024", source="KIND", entry="twice<1024>", reference=twice,
                   args=[buffer("src", Tensor[1024, i16]), buffer("dst", Tensor[1024, i16], "out")],
                   cycles=100, cost="-", params={"n": 1024})
    theirs = passthrough(Tensor[1024, i16])
    a = fifo(Tensor[1024, i16], name="a")
    b = fifo(Tensor[1024, i16], name="b")

    @herd()
    def core():
        with a.consume() as x, b.produce() as y:
            mine(x, y)
            theirs(x, y)

    with runtime() as rt:
        rt.fill(a, A)
        rt.drain(b, B)
'''
"""A kernel of the user's own from a file named like one of aiedsl's, beside a library kernel
of that name; ``KIND`` is the file."""


def test_a_users_file_named_like_the_librarys_leaves_the_library_kernel_alone(
        design_file: DesignFile) -> None:
    """A kernel author copied kernels_cpp/scale.cc beside the design to make a kernel of his
    own: the library's scale() was built from his copy (its generated file still said
    kernels_cpp/scale.cc), and check and sim passed. Here with passthrough.cc."""
    from aiedsl.kernels.source import kernel_source

    (design_file("template <unsigned N> void twice(const int16_t *s, int16_t *d) {\n"
                 "  for (unsigned i = 0; i < N; i++) d[i] = 2 * s[i];\n}\n", "passthrough.cc"))
    handle = load_design(design_file(SHADOW.replace("KIND", "passthrough.cc")))
    mine, theirs = (handle.kernels[s].ir for s in ("my_twice_1024", "passthrough_i16_1024"))
    assert (mine.shipped, theirs.shipped) == (False, True)
    assert kernel_source(mine).label == "passthrough.cc"
    source = kernel_source(theirs)
    assert source.label == "kernels_cpp/passthrough.cc"
    assert source.text == (ROOT / "kernels_cpp" / "passthrough.cc").read_text()


def test_a_template_beside_the_design_renders_and_one_that_cannot_is_a_check_error(
        design_file: DesignFile) -> None:
    """A kernel author's: source_kind="template" of his own passed check and sim, then build
    and every kernel command crashed (the template was looked for in aiedsl's folder only)."""
    from aiedsl.kernels.source import kernel_source

    design_file("template <unsigned N> void twice(const int16_t *s, int16_t *d) {\n"
                "  for (unsigned i = 0; i < {{ n }}; i++) d[i] = 2 * s[i];\n}\n", "twice.cc.j2")
    src = SHADOW.replace('"KIND"', '"twice.cc.j2", source_kind="template"')
    handle = load_design(design_file(src))
    check_design(handle.ir)
    assert "i < 1024;" in kernel_source(handle.kernels["my_twice_1024"].ir).text
    # a reviewer's: its generated file named it from the working directory, and entry= went
    # unchecked (a .cc kernel's was refused)
    path = design_file(src)
    first = aiedsl.build(path, output="one").files["kernels/my_twice_1024.cc"]
    assert first.splitlines()[0].endswith("from twice.cc.j2 (do not edit here)")
    here = os.getcwd()
    os.chdir("/")
    try:
        second = aiedsl.build(path, output=path.parent / "two").files["kernels/my_twice_1024.cc"]
    finally:
        os.chdir(here)
    assert second == first
    with pytest.raises(DesignError) as e:
        check_design(load_design(design_file(src.replace("twice<1024>", "nothere<1024>"))).ir)
    assert str(e.value).splitlines()[0].endswith("which twice.cc.j2 does not declare")
    src = src.replace('params={"n": 1024}', 'params={"m": 1024}')
    with pytest.raises(DesignError) as e:
        check_design(load_design(design_file(src)).ir)
    assert str(e.value) == (
        "d.py:10: error [kernel source]: kernel 'my_twice_1024': its template twice.cc.j2 does "
        "not render: 'n' is undefined\n"
        "  found: params={'m': 1024}\n"
        "  fix: give every name the template uses in params= (it renders with the kernel's "
        "params)")


# -- blanking: ASCII text read by regular expressions, as a character at a time ------------------

BLANKED = [
    'int a = 1\'000; // x "y"\nchar c = \'"\'; /* a\n b */ int b;\n',
    'extern "C" { void f(); }  extern  "C++" int g(); R"d(x "q" //)d" L"w" u8\'z\'\n',
    'x.5e+3 y1\'2 "a\\"b" \'\\\'\' // line \\\n continued\n#include "k.h"\n',
    '"unterminated\nR"(never closed',
]


@pytest.mark.parametrize("text", BLANKED + sorted(str(p) for p in (
    Path(aiedsl.__file__).parents[1] / "kernels_cpp").glob("*.cc")))
@pytest.mark.parametrize("strings", [True, False])
def test_ascii_text_is_blanked_as_a_character_at_a_time(text: str, strings: bool) -> None:
    from aiedsl.kernels.cscan.blank import _blank_ascii, _blank_chars

    source = Path(text).read_text() if text.endswith(".cc") else text
    assert source.isascii()
    assert _blank_ascii(source, strings) == _blank_chars(source, strings)


SCALE_CC = '''#include <stdint.h>
#ifndef ALPHA
#define ALPHA 2
#endif
template <unsigned N> void scale(const int32_t *a, int32_t *c) {
  for (unsigned i = 0; i < N; i++) c[i] = a[i] * ALPHA;
}
'''

SCALED_TWICE = '''
from aiedsl import Tensor, design, fifo, herd, i32, runtime
from aiedsl.kernels import buffer, declare

def ref(a, c):
    c[...] = a * 2

T = Tensor[64, i32]
SIG = [buffer("a", T), buffer("c", T, "out")]

@design(device="npu1_1col")
def d(x: Tensor[64, i32], y: Tensor[64, i32]):
    k2 = declare("scale2", source="scale.cc", entry="scale<64>", args=SIG, reference=ref,
                 cycles=100, cost="-", defines={"ALPHA": 2})
    k3 = declare("scale3", source="scale.cc", entry="scale<64>", args=SIG, reference=ref,
                 cycles=100, cost="-", defines={"ALPHA": 3})
    a, b = fifo(T, name="a"), fifo(T, name="b")

    @herd()
    def core():
        with a.consume() as s, b.produce() as t:
            k2(s, t)
            k3(s, t)

    with runtime() as rt:
        rt.fill(a, x)
        rt.drain(b, y)
'''


def test_one_template_instantiated_with_two_defines_says_the_linker_keeps_either(
        design_file: DesignFile) -> None:
    """A kernel tuner's two kernels of one template, ALPHA=0.5 and 0.25, were refused as if the
    file's templates could not clash: each object holds scale<64> under one symbol, and the
    linker keeps either, silently."""
    design_file(SCALE_CC, "scale.cc")
    with pytest.raises(DesignError) as excinfo:
        check_design(load_design(design_file(SCALED_TWICE)).ir)
    assert str(excinfo.value).splitlines()[0] == (
        "d.py:22: error [kernel objects]: core[0,0] calls kernels 'scale2' and 'scale3', which "
        "are compiled from scale.cc with different defines (-DALPHA=2; -DALPHA=3): it would "
        "link two objects of scale.cc, each instantiating scale<64> with its own defines under "
        "one symbol, of which the linker keeps either silently: one kernel would run with the "
        "other's defines")


def test_a_source_of_plain_ints_builds_its_entry(design_file: DesignFile) -> None:
    """A kernel file that includes nothing (its functions take int) did not build: the entry
    aiedsl generates names int32_t, which nothing had declared (a reviewer's test kernel)."""
    from aiedsl.sim import simulate

    design_file("template <unsigned N> void twice(const int *a, int *b) {\n"
                "  for (unsigned i = 0; i < N; ++i) b[i] = 2 * a[i];\n}\n", "k.cc")
    path = design_file("""
        import numpy as np
        from aiedsl import Tensor, design, fifo, herd, i32, runtime
        from aiedsl.kernels import buffer, declare

        def twice_ref(a, b):
            b[:] = 2 * a

        @design(device="npu1_1col")
        def d(inp: Tensor[64, i32], out: Tensor[64, i32]):
            k = declare("twice_i32_64", source="k.cc", entry="twice<64>",
                        args=[buffer("a", Tensor[64, i32]), buffer("b", Tensor[64, i32], "out")],
                        reference=twice_ref, cycles=10, cost="a vector multiply")
            a, b = fifo(Tensor[64, i32], name="a"), fifo(Tensor[64, i32], name="b")

            @herd()
            def core():
                with a.consume() as x, b.produce() as y:
                    k(x, y)

            with runtime() as rt:
                rt.fill(a, inp)
                rt.drain(b, out)

        @d.reference
        def reference(inp):
            return 2 * inp
        """)
    assert simulate(load_design(path), kernels="native").passed
