"""A file kernel's declaration held against the C++ function it calls, at ``aiedsl check``: the
argument count, buffers for pointers and scalars for values, each buffer's element type, each
scalar's type, the order of named arguments, a function template's template arguments, and C
linkage.

A kernel author's mistakes that passed ``check`` before: the host build then failed in the
generated ``kernels/<name>.cc`` (its fix blaming the C++), or, without ``entry=``, the kernel
ran past its buffers (a SIGSEGV in ``kernel test``), or nothing was said at all (an extra
argument the C++ does not take, an f32 scalar for an ``int32_t`` parameter).
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest

from aiedsl.checks import check_design
from aiedsl.errors import DesignError
from aiedsl.loader import load_design

DesignFile = Callable[..., Path]

CC = r'''#include <stdint.h>
#include <aie_api/aie.hpp>

template <unsigned N> void double_i32(const int32_t *in, int32_t *out) {
  for (unsigned i = 0; i < N; i++) out[i] = in[i] * 2;
}

template <typename T> void double_any(const T *in, T *out, int n) {
  for (int i = 0; i < n; i++) out[i] = in[i] * 2;
}

typedef int16_t my_t;

extern "C" {
void scale_i32(int32_t *a_in, int32_t *c_out, int32_t *factor, int32_t n) {
  for (int i = 0; i < n; i++) c_out[i] = a_in[i] * factor[0];
}
void bytes_u8(uint8_t *src, uint8_t *dst) {
  for (int i = 0; i < 64; i++) dst[i] = src[i];
}
void typed(my_t *src, void *dst) {}
}

void cpp_only(int32_t *src, int32_t *dst) {}
'''

DESIGN = '''
import numpy as np
from aiedsl import Tensor, design, fifo, herd, i8, i16, i32, loop, runtime
from aiedsl.kernels import buffer, declare, scalar

def ref(*args, **kw):
    pass

k = declare({decl}, source="k.cc", reference=ref, cycles=100, cost="a guess", args=[
    {args}])

@design(device="npu1_1col")
def d(inp: Tensor[1024, {dt}], out: Tensor[1024, {dt}]):
    fi = fifo(Tensor[64, {dt}], name="fi")
    fo = fifo(Tensor[64, {dt}], name="fo")

    @herd()
    def core():
        for _ in loop(16):
            with fi.consume() as a, fo.produce() as b:
                k({call})

    with runtime() as rt:
        rt.fill(fi, inp)
        rt.drain(fo, out)
'''

IO = 'buffer("src", Tensor[64, {dt}]), buffer("dst", Tensor[64, {dt}], "out")'


def error(design_file: DesignFile, decl: str, args: str, call: str = "a, b",
          dt: str = "i32") -> str:
    design_file(CC, "k.cc")
    path = design_file(DESIGN.format(decl=decl, args=args.format(dt=dt), call=call, dt=dt))
    with pytest.raises(DesignError) as e:
        check_design(load_design(path).ir)
    return str(e.value)


def passes(design_file: DesignFile, decl: str, args: str, call: str = "a, b",
           dt: str = "i32") -> None:
    design_file(CC, "k.cc")
    path = design_file(DESIGN.format(decl=decl, args=args.format(dt=dt), call=call, dt=dt))
    check_design(load_design(path).ir)


def test_entry_buffer_of_another_element_type(design_file: DesignFile) -> None:
    assert error(design_file, '"double_i16", entry="double_i32<64>"', IO, dt="i16") == (
        "d.py:8: error [kernel signature]: kernel 'double_i16' passes buffer 'src' of i16 "
        "(int16_t, 2-byte elements) as the first argument of k.cc's double_i32 (its line 4), "
        "which takes const int32_t *in (4-byte integer elements)\n"
        "  limit: a buffer's element type is the type its C++ parameter points to (through "
        "entry=, the generated call passes a pointer of the buffer's type, and C++ converts no "
        "pointer to another element type)\n"
        "  found: i16 for const int32_t *in\n"
        "  fix: declare 'src' with the element type the C++ takes, or point the C++ parameter "
        "at int16_t")


def test_extern_c_buffer_of_another_size(design_file: DesignFile) -> None:
    """Without entry= the core calls the function as declared: 2-byte elements where it reads
    4-byte ones (it would run past the buffer's end)."""
    msg = error(design_file, '"scale_i32"', 'buffer("a_in", Tensor[64, {dt}]), '
                'buffer("c_out", Tensor[64, {dt}], "out"), buffer("factor", Tensor[64, {dt}]), '
                'scalar("n", i32)', call="a, b, a, 64", dt="i16")
    assert msg.splitlines()[0] == (
        "d.py:8: error [kernel signature]: kernel 'scale_i32' passes buffer 'a_in' of i16 "
        "(int16_t, 2-byte elements) as the first argument of k.cc's scale_i32 (its line 15), "
        "which takes int32_t *a_in (4-byte integer elements)")
    assert msg.splitlines()[1] == (
        "  limit: a buffer's element type is the type its C++ parameter points to")


def test_extern_c_signedness_is_not_judged(design_file: DesignFile) -> None:
    """uint8_t* for an i8 buffer: the same bytes, read unsigned; without entry= nothing
    converts a pointer, and a kernel may mean it."""
    passes(design_file, '"bytes_u8"', IO, dt="i8")


def test_entry_same_type_by_another_name(design_file: DesignFile) -> None:
    """int32_t is int on the core: the generated call converts nothing, and needs nothing."""
    CCint = CC.replace("const int32_t *in, int32_t *out", "const int *in, int *out")
    design_file(CCint, "k.cc")
    path = design_file(DESIGN.format(decl='"double_64", entry="double_i32<64>"',
                                     args=IO.format(dt="i32"), call="a, b", dt="i32"))
    check_design(load_design(path).ir)


def test_argument_count(design_file: DesignFile) -> None:
    msg = error(design_file, '"scale_i32"', 'buffer("a_in", Tensor[64, {dt}]), '
                'buffer("c_out", Tensor[64, {dt}], "out"), buffer("factor", Tensor[64, {dt}]), '
                'scalar("n", i32), scalar("extra", i32)', call="a, b, a, 64, 1")
    assert msg == (
        "d.py:8: error [kernel signature]: kernel 'scale_i32' declares 5 arguments, and "
        "k.cc's scale_i32 (its line 15) takes 4\n"
        "  limit: the kernel's args= are the C++ function's parameters, in its order\n"
        "  found: args a_in, c_out, factor, n, extra; scale_i32(int32_t *a_in, int32_t *c_out, "
        "int32_t *factor, int32_t n)\n"
        "  fix: declare one buffer() or scalar() per parameter of scale_i32, in its order")


def test_arguments_swapped(design_file: DesignFile) -> None:
    msg = error(design_file, '"scale_i32"', 'buffer("c_out", Tensor[64, {dt}], "out"), '
                'buffer("a_in", Tensor[64, {dt}]), buffer("factor", Tensor[64, {dt}]), '
                'scalar("n", i32)', call="b, a, a, 64")
    assert msg.splitlines()[0] == (
        "d.py:8: error [kernel signature]: kernel 'scale_i32' declares its arguments in the "
        "order c_out, a_in, factor, n; k.cc's scale_i32 (its line 15) takes the same names in "
        "the order a_in, c_out, factor, n")
    assert msg.splitlines()[-1] == (
        "  fix: list args= in a_in, c_out, factor, n order (and pass them so in the core's "
        "call)")


def test_scalar_for_a_pointer(design_file: DesignFile) -> None:
    msg = error(design_file, '"scale_i32"', 'buffer("a_in", Tensor[64, {dt}]), '
                'buffer("c_out", Tensor[64, {dt}], "out"), scalar("factor", i32), '
                'scalar("n", i32)', call="a, b, 3, 64")
    assert msg.splitlines()[0] == (
        "d.py:8: error [kernel signature]: kernel 'scale_i32' passes scalar 'factor' as the "
        "third argument of k.cc's scale_i32 (its line 15), which takes a pointer there: "
        "int32_t *factor")


def test_buffer_for_a_value(design_file: DesignFile) -> None:
    msg = error(design_file, '"double_any_64", entry="double_any<int32_t>"',
                IO + ', buffer("n", Tensor[64, i32])', call="a, b, a")
    assert msg.splitlines()[0] == (
        "d.py:8: error [kernel signature]: kernel 'double_any_64' passes buffer 'n' as the "
        "third argument of k.cc's double_any (its line 8), which takes a value there: int n")


def test_template_parameter_nothing_deduces(design_file: DesignFile) -> None:
    assert error(design_file, '"double_64", entry="double_i32"', IO) == (
        "d.py:8: error [kernel entry]: kernel 'double_64' calls k.cc's double_i32 (its line "
        "4), a function template, without template arguments (entry=\"double_i32\"), and no "
        "argument's type gives its N: the compiler cannot deduce it\n"
        "  limit: entry= spells the call's template arguments that no parameter deduces\n"
        "  found: entry=\"double_i32\"; double_i32's template parameters: N\n"
        "  fix: give them in entry=, e.g. entry=\"double_i32<64>\" (N = 64 (the elements of "
        "each of its buffers): check that the C++ takes it so)")


def test_deduced_template_parameter_needs_no_argument(design_file: DesignFile) -> None:
    passes(design_file, '"double_any_64", entry="double_any"', IO + ', scalar("n", i32)',
           call="a, b, 64")


def test_python_name_inside_entry(design_file: DesignFile) -> None:
    assert error(design_file, '"double_64", entry="double_i32<TILE>"', IO) == (
        "d.py:8: error [kernel entry]: kernel 'double_64' calls double_i32<TILE> "
        "(entry=\"double_i32<TILE>\"), and 'TILE' is nothing the C++ defines: entry= is C++ "
        "text, so a Python name inside the string is not its value\n"
        "  limit: entry= names only what the C++ sees after the file: its defines=, a macro, "
        "a constant or a type the file declares outside every function, class and template, or "
        "a name of the C++ language, a standard header or the AIE API\n"
        "  found: 'TILE' in entry=\"double_i32<TILE>\"\n"
        "  fix: put the value in the string, e.g. entry=f\"double_i32<{TILE}>\" in Python, or "
        "pass it as defines={'TILE': ...}")


def test_entry_names_a_define(design_file: DesignFile) -> None:
    passes(design_file, '"double_64", entry="double_i32<TILE>", defines={"TILE": 64}', IO)


# -- the names entry= spells: only what the generated call, after the file, sees --------------

SCOPES = r'''#include <stdint.h>
#include <aie_api/aie.hpp>
#define MACRO_TILE 64
constexpr unsigned TOP_TILE = 64;
enum { ENUM_TILE = 64 };
enum class Scoped { SCOPED_TILE = 64 };
namespace { constexpr unsigned ANON_TILE = 64; }
namespace tiles { constexpr unsigned NS_TILE = 64; }
namespace opened { constexpr unsigned OPEN_TILE = 64; }
using namespace opened;
struct Shape { static constexpr unsigned MEMBER_TILE = 64; };

template <unsigned N> void double_i32(const int32_t *in, int32_t *out) {
  constexpr unsigned LOCAL_TILE = N;
  for (unsigned i = 0; i < LOCAL_TILE; i++) out[i] = in[i] * 2;
}

template <typename T, unsigned N> void twice(const T *in, T *out) {}
'''


def scope_error(design_file: DesignFile, entry: str) -> str:
    design_file(SCOPES, "k.cc")
    path = design_file(DESIGN.format(decl=f'"double_64", entry="{entry}"',
                                     args=IO.format(dt="i32"), call="a, b", dt="i32"))
    with pytest.raises(DesignError) as e:
        check_design(load_design(path).ir)
    return str(e.value)


LIMIT = ("  limit: entry= names only what the C++ sees after the file: its defines=, a macro, a "
         "constant or a type the file declares outside every function, class and template, or "
         "a name of the C++ language, a standard header or the AIE API\n")


def test_the_templates_own_parameter_names(design_file: DesignFile) -> None:
    """The tester's affine_relu_bf16<R, C>: R and C are in the C++, as the template's own
    parameters, which the generated call outside the template does not see (g++: 'R' was not
    declared in this scope); check passed it, and the build wrote it out."""
    assert scope_error(design_file, "twice<T, N>") == (
        "d.py:8: error [kernel entry]: kernel 'double_64' calls twice<T, N> "
        "(entry=\"twice<T, N>\"), and 'T' and 'N' are the template parameters of k.cc's twice "
        "(its line 18): entry= is C++ text, called from the extern \"C\" function aiedsl "
        "generates after the file, outside every function and template, where only the file's "
        "top-level names are seen\n" + LIMIT +
        "  found: 'T', 'N' in entry=\"twice<T, N>\"\n"
        "  fix: put the values in the string, e.g. entry=f\"twice<{T}, {N}>\" in Python")


def test_a_python_name_beside_a_template_parameter(design_file: DesignFile) -> None:
    """The fix resolves every name: it said entry=f"affine_relu_bf16<{TILE}, C>", C left as
    it was."""
    assert scope_error(design_file, "twice<TILE, N>") == (
        "d.py:8: error [kernel entry]: kernel 'double_64' calls twice<TILE, N> "
        "(entry=\"twice<TILE, N>\"), and 'TILE' is nothing the C++ defines, and 'N' is a "
        "template parameter of k.cc's twice (its line 18): entry= is C++ text, called from the "
        "extern \"C\" function aiedsl generates after the file, outside every function and "
        "template, where only the file's top-level names are seen; a Python name inside the "
        "string is not its value\n" + LIMIT +
        "  found: 'TILE', 'N' in entry=\"twice<TILE, N>\"\n"
        "  fix: put the values in the string, e.g. entry=f\"twice<{TILE}, {N}>\" in Python")


@pytest.mark.parametrize("entry, name, fixed", [
    ("double_i32<LOCAL_TILE>", "LOCAL_TILE", "double_i32<{LOCAL_TILE}>"),
    ("double_i32<NS_TILE>", "NS_TILE", "double_i32<{NS_TILE}>"),
    ("double_i32<MEMBER_TILE>", "MEMBER_TILE", "double_i32<{MEMBER_TILE}>"),
    ("double_i32<SCOPED_TILE>", "SCOPED_TILE", "double_i32<{SCOPED_TILE}>"),
], ids=["a-local", "a-named-namespace-member", "a-class-member", "a-scoped-enumerator"])
def test_a_name_the_file_declares_where_the_call_does_not_see_it(
        design_file: DesignFile, entry: str, name: str, fixed: str) -> None:
    assert scope_error(design_file, entry) == (
        f"d.py:8: error [kernel entry]: kernel 'double_64' calls {entry} "
        f"(entry=\"{entry}\"), and '{name}' is declared in k.cc only where that call does not "
        "see it (in a function, a class, a template's parameters or a named namespace): entry= "
        "is C++ text, called from the extern \"C\" function aiedsl generates after the file, "
        "outside every function and template, where only the file's top-level names are seen\n"
        + LIMIT + f"  found: '{name}' in entry=\"{entry}\"\n"
        f"  fix: put the value in the string, e.g. entry=f\"{fixed}\" in Python")


def test_a_template_parameter_inside_an_expression(design_file: DesignFile) -> None:
    assert scope_error(design_file, "double_i32<N * 2>").splitlines()[-1] == (
        "  fix: put the value in the string, e.g. entry=f\"double_i32<{N} * 2>\" in Python")


def test_a_template_parameter_given_and_one_missing(design_file: DesignFile) -> None:
    """twice<T> lacks N too: the fix gives both, not twice<{T}> and then an error for N."""
    assert scope_error(design_file, "twice<T>").splitlines()[-1] == (
        "  fix: put the values in the string, e.g. entry=f\"twice<{T}, {N}>\" in Python")


def test_python_names_only_may_be_defines(design_file: DesignFile) -> None:
    assert scope_error(design_file, "twice<T_CPP, TILE>").splitlines()[-1] == (
        "  fix: put the values in the string, e.g. entry=f\"twice<{T_CPP}, {TILE}>\" in "
        "Python, or pass them as defines={'T_CPP': ..., 'TILE': ...}")


@pytest.mark.parametrize("entry", [
    "double_i32<MACRO_TILE>", "double_i32<TOP_TILE>", "double_i32<ENUM_TILE>",
    "double_i32<ANON_TILE>", "double_i32<OPEN_TILE>", "double_i32<tiles::NS_TILE>",
    "double_i32<Shape::MEMBER_TILE>", "double_i32<unsigned(Scoped::SCOPED_TILE)>",
    "double_i32<TOP_TILE * 1>", "double_i32<sizeof(int32_t) * 16>",
    "twice<int32_t, TOP_TILE>", "twice<bfloat16, 64>", "twice<Shape, 64>",
    "double_i32<UINT8_MAX>", "double_i32<__AIE_ARCH__>",
], ids=["a-macro", "a-constexpr", "an-enumerator", "an-unnamed-namespace", "an-opened-namespace",
        "qualified", "a-member", "a-scoped-enumerator-qualified", "an-expression", "sizeof",
        "a-type-and-constant", "an-aie-type", "a-class", "a-header-macro", "a-compiler-macro"])
def test_names_the_call_sees(design_file: DesignFile, entry: str) -> None:
    design_file(SCOPES, "k.cc")
    path = design_file(DESIGN.format(decl=f'"double_64", entry="{entry}"',
                                     args=IO.format(dt="i32"), call="a, b", dt="i32"))
    check_design(load_design(path).ir)


@pytest.mark.parametrize("entry", [
    "twice<int4, 64>", "twice<uint4, 64>", "twice<cint16, 64>", "twice<cint32, 64>",
    "twice<cfloat, 64>", "twice<cbfloat16, 64>", "twice<acc48, 64>", "twice<acc80, 64>",
    "twice<caccfloat, 64>", "twice<accfloat, 64>", "twice<bfp16ebs8, 64>",
    "twice<bfp16ebs16, 64>", "twice<v16bfloat16, 1>", "twice<v64int4, 1>",
    "twice<v16cint16, 1>", "twice<v16accfloat, 1>", "twice<v8acc64, 1>",
    "double_i32<rnd_conv_even>", "double_i32<sizeof(v16int32) * 2>",
])
def test_names_of_the_real_aie_api_and_intrinsic_headers(design_file: DesignFile,
                                                         entry: str) -> None:
    """aiedsl's host copy of the AIE API lacks these: Peano's headers and the AIE API declare
    them at the global scope (aiedsl.kernels.aie_names)."""
    design_file(SCOPES, "k.cc")
    path = design_file(DESIGN.format(decl=f'"double_64", entry="{entry}"',
                                     args=IO.format(dt="i32"), call="a, b", dt="i32"))
    check_design(load_design(path).ir)


def test_a_name_from_a_header_the_scan_does_not_read(design_file: DesignFile) -> None:
    """mlir-aie's <lut_based_ops.h> (on Peano's include path) or the user's <foo.h> may define
    LUT_SIZE: it is not refused; the template's own parameter still is."""
    design_file("#include <lut_based_ops.h>\n#include <foo.h>\n" + SCOPES, "k.cc")
    for entry in ("double_i32<LUT_SIZE>", "twice<lut_t, FOO_TILE>"):
        path = design_file(DESIGN.format(decl=f'"double_64", entry="{entry}"',
                                         args=IO.format(dt="i32"), call="a, b", dt="i32"))
        check_design(load_design(path).ir)
    path = design_file(DESIGN.format(decl='"double_64", entry="twice<T, N>"',
                                     args=IO.format(dt="i32"), call="a, b", dt="i32"))
    with pytest.raises(DesignError) as e:
        check_design(load_design(path).ir)
    assert str(e.value).splitlines()[0] == (
        "d.py:8: error [kernel entry]: kernel 'double_64' calls twice<T, N> "
        "(entry=\"twice<T, N>\"), and 'T' and 'N' are the template parameters of k.cc's twice "
        "(its line 20): entry= is C++ text, called from the extern \"C\" function aiedsl "
        "generates after the file, outside every function and template, where only the file's "
        "top-level names are seen")


def test_a_quoted_aie_api_include_leaves_entry_unjudged(design_file: DesignFile) -> None:
    """#include "aie_api/aie.hpp" is found on the include path; the scan does not read a
    quoted include, so it is unsure, and refuses no name of entry=."""
    design_file(SCOPES.replace("<aie_api/aie.hpp>", '"aie_api/aie.hpp"'), "k.cc")
    path = design_file(DESIGN.format(decl='"double_64", entry="double_i32<LUT_SIZE>"',
                                     args=IO.format(dt="i32"), call="a, b", dt="i32"))
    check_design(load_design(path).ir)


def test_typedef_and_void_pointer_are_not_judged(design_file: DesignFile) -> None:
    """my_t is a typedef the scan does not resolve; void* takes any buffer."""
    passes(design_file, '"typed"', IO, dt="i8")


def test_function_with_cpp_linkage(design_file: DesignFile) -> None:
    assert error(design_file, '"cpp_only"', IO) == (
        "d.py:8: error [kernel entry]: kernel 'cpp_only' has no entry=, so cores call k.cc's "
        "extern \"C\" function cpp_only, which it declares with C++ linkage (outside any "
        "extern \"C\" block): its symbol is mangled, and the core's link does not find it\n"
        "  limit: without entry=, the name of an extern \"C\" function the source defines (as "
        "mlir-aie's kernel files do)\n"
        "  found: its extern \"C\" functions: bytes_u8, scale_i32, typed\n"
        "  fix: wrap cpp_only's definition in extern \"C\" { ... }, or give entry=\"cpp_only\" "
        "and declare the kernel under a name of its own, so aiedsl generates the extern \"C\" "
        "function around it")


def test_a_function_in_a_namespace_is_named_with_it(design_file: DesignFile) -> None:
    """A kernel tuner's my::nsfunc_256 was told it was "outside any extern "C" block" and
    given entry="nsfunc_256", which the generated call does not see."""
    design_file("#include <stdint.h>\nnamespace my {\nvoid twice(const int32_t *a, "
                "int32_t *b) { b[0] = a[0]; }\n}\n", "k.cc")
    path = design_file(DESIGN.format(decl='"twice"', args=IO.format(dt="i32"), call="a, b",
                                     dt="i32"))
    with pytest.raises(DesignError) as e:
        check_design(load_design(path).ir)
    lines = str(e.value).splitlines()
    assert "which it declares with C++ linkage (in namespace my, outside any extern \"C\" " \
        "block)" in lines[0]
    assert lines[-1] == (
        "  fix: wrap twice's definition in extern \"C\" { ... } outside namespace my, or give "
        "entry=\"my::twice\" and declare the kernel under a name of its own, so aiedsl "
        "generates the extern \"C\" function around it")


# -- what a reviewer's C++ styles showed: none of these is a mistake ------------------------

STYLES = r'''#include <stdint.h>
#include <aie_api/aie.hpp>
typedef int32_t *i32_ptr;
using in_t = const int32_t *;
template <typename T, unsigned N> void twice(const T *in, T *out) {}
template <typename In, typename Out> void deduced(In src, Out dst) {}
template <typename T = int32_t, unsigned N = 64> void defaults(const T *in, T *out) {}
template <typename... Ts> void pack(Ts *...bufs) {}
template <typename T, typename Acc, unsigned N> void acc(const T *in, T *out) {}
extern "C" {
void typed_ptr(i32_ptr src, i32_ptr dst) {}
void alias_ptr(in_t src, int32_t *dst) {}
void unused(int32_t *src, int32_t *dst, [[maybe_unused]] int32_t n) {}
void vec(aie::vector<int16_t, 32> *src, int32_t *dst) {}
}
'''


@pytest.mark.parametrize("decl, args, call", [
    ('"twice_64", entry="twice<std::int32_t, 64>"', IO, "a, b"),
    ('"twice_64", entry="twice<int32_t, static_cast<unsigned>(64)>"', IO, "a, b"),
    ('"twice_64", entry="twice<decltype(1), 64>"', IO, "a, b"),
    ('"deduced_64", entry="deduced"', IO, "a, b"),
    ('"deduced_64", entry="deduced<const int32_t *, int32_t *>"', IO, "a, b"),
    ('"defaults_64", entry="defaults"', IO, "a, b"),
    ('"pack_64", entry="pack"', IO, "a, b"),
    ('"acc_64", entry="acc<int32_t, acc64, 64>"', IO, "a, b"),
    ('"typed_ptr"', IO, "a, b"),
    ('"alias_ptr"', IO, "a, b"),
    ('"unused"', IO + ', scalar("n", i32)', "a, b, 64"),
    ('"vec"', IO, "a, b"),
], ids=["std-qualified", "cast", "decltype", "deduced-pointers", "pointer-arguments",
        "template-defaults", "parameter-pack", "aie-api-name", "pointer-typedef",
        "pointer-alias", "attribute", "class-template-pointer"])
def test_cpp_styles_that_are_not_mistakes(design_file: DesignFile, decl: str, args: str,
                                          call: str) -> None:
    design_file(STYLES, "k.cc")
    path = design_file(DESIGN.format(decl=decl, args=args.format(dt="i32"), call=call, dt="i32"))
    check_design(load_design(path).ir)


def test_a_c_call_gives_no_default_arguments(design_file: DesignFile) -> None:
    """Without entry= the core calls the extern "C" function directly: n = 64 is C++'s default,
    which a C call does not apply (the kernel read garbage for n)."""
    design_file(CC.replace("int32_t *factor, int32_t n)", "int32_t *factor, int32_t n = 64)"),
                "k.cc")
    path = design_file(DESIGN.format(
        decl='"scale_i32"', args='buffer("a_in", Tensor[64, i32]), buffer("c_out", '
        'Tensor[64, i32], "out"), buffer("factor", Tensor[64, i32])', call="a, b, a", dt="i32"))
    with pytest.raises(DesignError) as e:
        check_design(load_design(path).ir)
    assert str(e.value).splitlines()[0] == (
        "d.py:8: error [kernel signature]: kernel 'scale_i32' declares 3 arguments, and k.cc's "
        "scale_i32 (its line 15) takes 4")


def test_template_arguments_given_in_part(design_file: DesignFile) -> None:
    design_file(STYLES, "k.cc")
    path = design_file(DESIGN.format(decl='"twice_64", entry="twice<int32_t>"',
                                     args=IO.format(dt="i32"), call="a, b", dt="i32"))
    with pytest.raises(DesignError) as e:
        check_design(load_design(path).ir)
    assert str(e.value).splitlines()[-1] == (
        "  fix: give them in entry=, e.g. entry=\"twice<int32_t, 64>\" (N = 64 (the elements "
        "of each of its buffers): check that the C++ takes it so)")


def test_a_python_name_among_template_arguments(design_file: DesignFile) -> None:
    design_file(STYLES, "k.cc")
    path = design_file(DESIGN.format(decl='"twice_64", entry="twice<int32_t, TILE>"',
                                     args=IO.format(dt="i32"), call="a, b", dt="i32"))
    with pytest.raises(DesignError) as e:
        check_design(load_design(path).ir)
    assert str(e.value).splitlines()[-1] == (
        "  fix: put the value in the string, e.g. entry=f\"twice<int32_t, {TILE}>\" in Python, "
        "or pass it as defines={'TILE': ...}")


def test_a_function_only_called_is_not_said_to_have_cpp_linkage(
        design_file: DesignFile) -> None:
    design_file(CC + "int32_t use(int32_t *p) { return 2 * helper(p[0]); }\n", "k.cc")
    path = design_file(DESIGN.format(decl='"helper"', args=IO.format(dt="i32"), call="a, b",
                                     dt="i32"))
    with pytest.raises(DesignError) as e:
        check_design(load_design(path).ir)
    assert "C++ linkage" not in str(e.value)
    assert "which it does not define" in str(e.value).splitlines()[0]


def test_a_cplusplus_guarded_extern_c_block_is_read(design_file: DesignFile) -> None:
    """Kernels compile as C++20 (Peano's and the host's -std=c++20): a C header's
    `#ifdef __cplusplus extern "C" { #endif` guard is taken. Read both ways, one reading's
    braces did not balance and the scan gave up, so nothing was checked."""
    design_file('''#include <stdint.h>
#ifdef __cplusplus
extern "C" {
#endif
void guarded(int32_t *src, int32_t *dst) {}
#ifdef __cplusplus
}
#endif
''', "k.cc")
    path = design_file(DESIGN.format(decl='"guarded"', args=IO.format(dt="i16"), call="a, b",
                                     dt="i16"))
    with pytest.raises(DesignError) as e:
        check_design(load_design(path).ir)
    assert str(e.value).splitlines()[0] == (
        "d.py:8: error [kernel signature]: kernel 'guarded' passes buffer 'src' of i16 "
        "(int16_t, 2-byte elements) as the first argument of k.cc's guarded (its line 5), "
        "which takes int32_t *src (4-byte integer elements)")


# -- each scalar's type, against the C++ parameter it is passed to -----------------------------

SCALARS_CC = r'''#include <stdint.h>
#include <aie_api/aie.hpp>

template <typename T> void by(const int32_t *in, int32_t *out, T s) {}
template <unsigned N> void count_i16(const int32_t *in, int32_t *out, int16_t n) {}
template <unsigned N> void gain_f(const int32_t *in, int32_t *out, float gain) {}
template <unsigned N> void gain_bf(const int32_t *in, int32_t *out, bfloat16 gain) {}
template <unsigned N> void width_i32(const int32_t *in, int32_t *out, const int width) {}
typedef int16_t my_t;

extern "C" {
void line_i32(int32_t *src, int32_t *dst, int32_t width) {}
void level_u8(int32_t *src, int32_t *dst, uint8_t level) {}
void level_i8(int32_t *src, int32_t *dst, int8_t level) {}
void gain_bf16(int32_t *src, int32_t *dst, bfloat16 gain) {}
void typed_s(int32_t *src, int32_t *dst, my_t s) {}
void wide(int32_t *src, int32_t *dst, int64_t s) {}
void by_ref(int32_t *src, int32_t *dst, const int32_t &n) {}
}

template <unsigned N> void ref_n(const int32_t *in, int32_t *out, const int &n) {}
template <unsigned N> void rref_n(const int32_t *in, int32_t *out, int &&n) {}
'''


def scalar_error(design_file: DesignFile, decl: str, scalar: str, call: str) -> str:
    design_file(SCALARS_CC, "k.cc")
    path = design_file(DESIGN.format(decl=decl, args=IO.format(dt="i32") + ", " + scalar,
                                     call=f"a, b, {call}", dt="i32"))
    with pytest.raises(DesignError) as e:
        check_design(load_design(path).ir)
    return str(e.value)


def scalar_passes(design_file: DesignFile, decl: str, scalar: str, call: str) -> None:
    design_file(SCALARS_CC, "k.cc")
    path = design_file(DESIGN.format(decl=decl, args=IO.format(dt="i32") + ", " + scalar,
                                     call=f"a, b, {call}", dt="i32"))
    check_design(load_design(path).ir)


def test_extern_c_scalar_for_a_reference(design_file: DesignFile) -> None:
    """A tester's: `check` passed, and the C ABI passes a reference as an address, so the
    kernel would read the core's value 64 as a pointer (host builds crashed)."""
    assert scalar_error(design_file, '"by_ref"', 'scalar("n", i32)', "64") == (
        "d.py:8: error [kernel signature]: kernel 'by_ref' passes scalar 'n' as the third "
        "argument of k.cc's by_ref (its line 18), which takes a C++ reference there: "
        "const int32_t &n\n"
        "  limit: a scalar argument is a parameter taken by value: the core's call passes the "
        "value, where the C ABI passes a reference as an address (the kernel would read the "
        "value as a pointer)\n"
        "  found: scalar('n', ...) for const int32_t &n\n"
        "  fix: take it by value in the C++ (int32_t n)")


def test_a_reference_through_entry_binds_the_wrappers_value(design_file: DesignFile) -> None:
    scalar_passes(design_file, '"ref_n_64", entry="ref_n<64>"', 'scalar("n", i32)', "64")


def test_an_rvalue_reference_through_entry_is_refused(design_file: DesignFile) -> None:
    """The reviewer's: the generated entry passes its parameter, an lvalue, which int &&n
    does not bind; check passed and the compile failed."""
    msg = scalar_error(design_file, '"rref_n_64", entry="rref_n<64>"', 'scalar("n", i32)', "64")
    assert msg.splitlines()[0] == (
        "d.py:8: error [kernel signature]: kernel 'rref_n_64' passes scalar 'n' as the third "
        "argument of k.cc's rref_n (its line 22), which takes an rvalue reference there: "
        "int &&n")


def test_extern_c_float_scalar_for_an_integer(design_file: DesignFile) -> None:
    """A tester's port declared mlir-aie's thresholdLine(..., int32_t lineWidth, ...) with an
    f32 scalar: `check` passed, and the core's call would put a float where the C++ reads an
    integer."""
    assert scalar_error(design_file, '"line_i32"', 'scalar("width", "f32")', "1920.0") == (
        "d.py:8: error [kernel signature]: kernel 'line_i32' passes scalar 'width' of f32 "
        "(float, 4 bytes) as the third argument of k.cc's line_i32 (its line 12), which takes "
        "int32_t width (a 4-byte integer), and the core's call converts nothing: the C++ "
        "receives the f32's bits as an int32_t, not its value\n"
        "  limit: a scalar's type is its C++ parameter's: the same size and kind, or an "
        "integer scalar's narrows_to= type (without entry=, the core's call converts nothing)\n"
        "  found: f32 for int32_t width\n"
        "  fix: declare it scalar('width', i32), the type the C++ takes, or change the C++ "
        "parameter to float")


def test_extern_c_narrower_integer_scalar(design_file: DesignFile) -> None:
    """An i16 for int32_t: the call sets 2 bytes of the register the C++ reads 4 of."""
    assert scalar_error(design_file, '"line_i32"', 'scalar("width", i16, equals=64)',
                        "64") == (
        "d.py:8: error [kernel signature]: kernel 'line_i32' passes scalar 'width' of i16 "
        "(int16_t, 2 bytes) as the third argument of k.cc's line_i32 (its line 12), which "
        "takes int32_t width (a 4-byte integer), and the core's call converts nothing: the "
        "C++ reads 4 bytes where the call passes 2, the upper 2 whatever the register held\n"
        "  limit: a scalar's type is its C++ parameter's: the same size and kind, or an "
        "integer scalar's narrows_to= type (without entry=, the core's call converts nothing)\n"
        "  found: i16 for int32_t width\n"
        "  fix: declare it scalar('width', i32, equals=64), the type the C++ takes, or change "
        "the C++ parameter to int16_t")


def test_extern_c_wider_integer_scalar_is_pointed_at_narrows_to(
        design_file: DesignFile) -> None:
    msg = scalar_error(design_file, '"level_u8"', 'scalar("level", i32)', "50")
    assert msg.splitlines()[0] == (
        "d.py:8: error [kernel signature]: kernel 'level_u8' passes scalar 'level' of i32 "
        "(int32_t, 4 bytes) as the third argument of k.cc's level_u8 (its line 13), which "
        "takes uint8_t level (a 1-byte integer), and the core's call converts nothing: the C++ "
        "reads 1 byte of the call's 4, so a value outside 0 to 255 is not what it receives")
    assert msg.splitlines()[-1] == (
        "  fix: declare it scalar('level', u8), or scalar('level', i32, narrows_to=u8) to pass "
        "an i32 (as an rtp slot holds) whose values `aiedsl check` keeps in uint8_t's range")


def test_extern_c_float_narrows_to_is_no_bfloat16(design_file: DesignFile) -> None:
    """narrows_to= is the C++'s own conversion: without entry= nothing converts the f32, and a
    bfloat16 parameter gets 2 of its 4 bytes."""
    msg = scalar_error(design_file, '"gain_bf16"', 'scalar("gain", "f32", narrows_to="bf16")',
                       "0.5")
    assert msg.splitlines()[0] == (
        "d.py:8: error [kernel signature]: kernel 'gain_bf16' passes scalar 'gain' of f32 "
        "(float, narrows_to=bf16, 4 bytes) as the third argument of k.cc's gain_bf16 (its line "
        "15), which takes bfloat16 gain (a 2-byte floating-point number), and the core's call "
        "converts nothing: the C++ reads 2 bytes of the call's 4, so it receives part of the "
        "f32's bits, not its value")
    assert msg.splitlines()[2:] == [
        "  found: f32 (narrows_to=bf16) for bfloat16 gain",
        "  fix: declare it scalar('gain', bf16), the type the C++ takes, or change the C++ "
        "parameter to float"]


def test_extern_c_scalar_of_a_size_aiedsl_has_not(design_file: DesignFile) -> None:
    assert scalar_error(design_file, '"wide"', 'scalar("s", i32)', "1").splitlines()[-1] == (
        "  fix: change the C++ parameter to int32_t (no aiedsl scalar type has 8 bytes)")


def test_entry_float_scalar_for_an_integer(design_file: DesignFile) -> None:
    """Through entry= the generated call converts the scalar: it compiles, and the C++
    receives another value than the reference."""
    assert scalar_error(design_file, '"width_64", entry="width_i32<64>"',
                        'scalar("width", "f32")', "2.5") == (
        "d.py:8: error [kernel signature]: kernel 'width_64' passes scalar 'width' of f32 "
        "(float, 4 bytes) as the third argument of k.cc's width_i32 (its line 8), which takes "
        "const int width (a 4-byte integer), and the generated call converts the float to int, "
        "truncating it (2.5 arrives as 2)\n"
        "  limit: a scalar's type is one whose every value its C++ parameter holds (through "
        "entry=, the generated call converts the scalar to the parameter's type; with "
        "narrows_to=, every value of that type)\n"
        "  found: f32 for const int width\n"
        "  fix: declare it scalar('width', i32), the type the C++ takes, or change the C++ "
        "parameter to float")


@pytest.mark.parametrize("decl, scalar, call, first", [
    ('"count_64", entry="count_i16<64>"', 'scalar("n", i32)', "64",
     "d.py:8: error [kernel signature]: kernel 'count_64' passes scalar 'n' of i32 (int32_t, "
     "4 bytes) as the third argument of k.cc's count_i16 (its line 5), which takes int16_t n "
     "(a 2-byte integer), and the generated call converts the int32_t to int16_t: a value "
     "outside -32768 to 32767 arrives changed"),
    ('"gain_64", entry="gain_f<64>"', 'scalar("gain", i32)', "3",
     "d.py:8: error [kernel signature]: kernel 'gain_64' passes scalar 'gain' of i32 (int32_t, "
     "4 bytes) as the third argument of k.cc's gain_f (its line 6), which takes float gain (a "
     "4-byte floating-point number), and the generated call converts the int32_t to float: an "
     "integer beyond 16777216 in magnitude arrives rounded"),
    ('"gain_64", entry="gain_bf<64>"', 'scalar("gain", "f32")', "0.5",
     "d.py:8: error [kernel signature]: kernel 'gain_64' passes scalar 'gain' of f32 (float, "
     "4 bytes) as the third argument of k.cc's gain_bf (its line 7), which takes bfloat16 gain "
     "(a 2-byte floating-point number), and the generated call converts the float to "
     "bfloat16, rounding it to 8 significant bits"),
], ids=["narrowing", "int-to-float", "float-to-bfloat16"])
def test_entry_scalar_the_parameter_cannot_hold(design_file: DesignFile, decl: str,
                                               scalar: str, call: str, first: str) -> None:
    assert scalar_error(design_file, decl, scalar, call).splitlines()[0] == first


@pytest.mark.parametrize("decl, scalar, call", [
    # the tester's port of color_threshold: an rtp slot's i32 for mlir-aie's uint8_t parameter
    ('"level_u8"', 'scalar("level", i32, narrows_to="u8")', "50"),
    # the C++ takes the i32 and narrows it itself
    ('"line_i32"', 'scalar("width", i32, narrows_to=i16)', "64"),
    ('"line_i32"', 'scalar("width", i32, equals=64)', "64"),
    # the same bytes, read signed: as for buffers, signedness is not judged without entry=
    ('"level_i8"', 'scalar("level", "u8")', "50"),
    ('"count_64", entry="count_i16<64>"', 'scalar("n", i32, narrows_to=i16)', "64"),
    ('"count_64", entry="count_i16<64>"', 'scalar("n", i16)', "64"),
    ('"width_64", entry="width_i32<64>"', 'scalar("width", i16)', "64"),
    ('"count_64", entry="count_i16<64>"', 'scalar("n", "u8")', "64"),
    ('"gain_64", entry="gain_f<64>"', 'scalar("gain", i16)', "3"),
    ('"gain_64", entry="gain_f<64>"', 'scalar("gain", "bf16")', "0.5"),
    ('"gain_64", entry="gain_bf<64>"', 'scalar("gain", "f32", narrows_to="bf16")', "0.5"),
    ('"by_64", entry="by<float>"', 'scalar("s", i32)', "3"),
    ('"typed_s"', 'scalar("s", "f32")', "0.5"),
], ids=["narrows-to-the-parameter", "narrowed-in-the-cpp", "equals", "signedness",
        "entry-narrows-to", "entry-same", "entry-widened", "entry-u8-to-int16",
        "entry-small-int-to-float",
        "entry-bf16-to-float", "entry-narrows-to-bf16", "template-parameter", "typedef"])
def test_scalars_the_cpp_takes_as_they_are(design_file: DesignFile, decl: str, scalar: str,
                                          call: str) -> None:
    """Each arrives as the design passes it: the same bytes, or, through entry=, a conversion
    that changes no value; narrows_to= and equals= keep working. A template parameter or a
    typedef is not judged (the scan does not resolve them)."""
    scalar_passes(design_file, decl, scalar, call)


# -- several scalars of other types: one error names them all ---------------------------------

FILTER_CC = r"""#include <stdint.h>
#include <aie_api/aie.hpp>

// 3x3 symmetric filter, edges replicated, weights from rtp: c centre, s sides, k corners
template <unsigned W>
void filter3x3(const uint8_t *__restrict top, const uint8_t *__restrict mid,
               const uint8_t *__restrict bot, uint8_t *__restrict out,
               int16_t c, int16_t s, int16_t k, uint8_t shift) {
  for (unsigned x = 0; x < W; ++x) {
    unsigned l = x == 0 ? 0 : x - 1, r = x == W - 1 ? W - 1 : x + 1;
    int32_t acc = c * mid[x] + s * (top[x] + bot[x] + mid[l] + mid[r]) +
                  k * (top[l] + top[r] + bot[l] + bot[r]);
    acc = acc >> shift;
    out[x] = (uint8_t)(acc < 0 ? 0 : acc > 255 ? 255 : acc);
  }
}
"""

FILTER = """
import numpy as np
from aiedsl import Tensor, define, design, fifo, herd, i16, i32, loop, rtp, runtime, u8
from aiedsl.kernels import buffer, declare, scalar

W = define("W", 256)


def filter_ref(top, mid, bot, out, c, s, k, shift):
    out[...] = np.clip((c + 4 * s + 4 * k) * mid.astype(np.int32) >> shift, 0, 255)


filt = declare(f"filter3x3_{W}", source="vision16.cc", entry=f"filter3x3<{W}>",
               args=[buffer("top", Tensor[W, u8]), buffer("mid", Tensor[W, u8]),
                     buffer("bot", Tensor[W, u8]), buffer("out", Tensor[W, u8], "out"),
                     SCALARS],
               reference=filter_ref, cycles=12 * W + 30, cost="scalar: ~12 cycles/pixel")


@design(device="npu1_1col")
def d(img: Tensor[32, W, u8], out: Tensor[32, W, u8]):
    gray = fifo(Tensor[W, u8], name="gray")
    res = fifo(Tensor[W, u8], name="res")
    fw = rtp(Tensor[16, i32], name="fw")

    @herd()
    def core():
        for _ in loop(32):
            with gray.consume() as g, res.produce() as o:
                filt(g, g, g, o, fw[0], fw[1], fw[2], fw[3])

    with runtime() as rt:
        for i, v in enumerate((8, 1, 1, 4)):
            rt.rtp_write(fw, i, v)
        rt.fill(gray, img)
        rt.drain(res, out)
"""


def test_every_misfit_scalar_in_one_error(design_file: DesignFile) -> None:
    """A tester's 3x3 filter took int16_t c, s, k and uint8_t shift, declared as four i32
    scalars: `check` named c alone, then, fixed, s, and so on: four rounds for one mistake.
    The one error names them all, and its fix, applied, passes."""
    design_file(FILTER_CC, "vision16.cc")
    path = design_file(FILTER.replace("SCALARS", 'scalar("c", i32), scalar("s", i32), '
                                      'scalar("k", i32), scalar("shift", i32)'))
    with pytest.raises(DesignError) as e:
        check_design(load_design(path).ir)
    assert str(e.value) == (
        "d.py:12: error [kernel signature]: kernel 'filter3x3_256' passes scalar 'c' of i32 "
        "(int32_t, 4 bytes) as the fifth argument of vision16.cc's filter3x3 (its line 6), "
        "which takes int16_t c (a 2-byte integer), and the generated call converts the int32_t "
        "to int16_t: a value outside -32768 to 32767 arrives changed; and 3 more scalars do "
        "not fit their parameters either: 's', 'k' and 'shift'\n"
        "  limit: a scalar's type is one whose every value its C++ parameter holds (through "
        "entry=, the generated call converts the scalar to the parameter's type; with "
        "narrows_to=, every value of that type)\n"
        "  found: i32 for int16_t c\n"
        "  found: i32 for int16_t s (scalar 's', the sixth argument)\n"
        "  found: i32 for int16_t k (scalar 'k', the seventh argument)\n"
        "  found: i32 for uint8_t shift (scalar 'shift', the eighth argument)\n"
        "  fix: declare them scalar('c', i16), scalar('s', i16), scalar('k', i16) and "
        "scalar('shift', u8), or scalar('c', i32, narrows_to=i16), scalar('s', i32, "
        "narrows_to=i16), scalar('k', i32, narrows_to=i16) and scalar('shift', i32, "
        "narrows_to=u8) to pass i32s (as rtp slots hold) whose values `aiedsl check` keeps "
        "in the ranges of int16_t and uint8_t")
    # the fix for rtp slots, as the tester applied it
    path = design_file(FILTER.replace("SCALARS", 'scalar("c", i32, narrows_to=i16), '
                                      'scalar("s", i32, narrows_to=i16), scalar("k", i32, '
                                      'narrows_to=i16), scalar("shift", i32, narrows_to=u8)'))
    check_design(load_design(path).ir)


MISFITS_CC = r"""#include <stdint.h>

extern "C" {
void mixed(int32_t *src, int32_t *dst, int32_t width, uint8_t level, int64_t s) {}
void two_i32(int32_t *src, int32_t *dst, int32_t a, int32_t b) {}
void two_narrow(int32_t *src, int32_t *dst, int16_t a, int8_t b) {}
void then_ptr(int32_t *src, int32_t *dst, int16_t a, int32_t *p, int16_t b) {}
}
"""


def misfits_error(design_file: DesignFile, decl: str, scalars: str, call: str) -> str:
    design_file(MISFITS_CC, "k.cc")
    path = design_file(DESIGN.format(decl=decl, args=IO.format(dt="i32") + ", " + scalars,
                                     call=f"a, b, {call}", dt="i32"))
    with pytest.raises(DesignError) as e:
        check_design(load_design(path).ir)
    return str(e.value)


def test_misfit_scalars_fixed_alike_share_one_fix(design_file: DesignFile) -> None:
    """Without entry=, two narrower C++ integers: one fix declares both, equals= kept."""
    msg = misfits_error(design_file, '"two_narrow"', 'scalar("a", i32, equals=64), '
                        'scalar("b", i32)', "64, 1")
    assert msg.splitlines()[0].endswith(
        "the C++ reads 2 bytes of the call's 4, so a value outside -32768 to 32767 is not what "
        "it receives; and 1 more scalar does not fit its parameter either: 'b'")
    assert msg.splitlines()[2:] == [
        "  found: i32 for int16_t a",
        "  found: i32 for int8_t b (scalar 'b', the fourth argument)",
        "  fix: declare them scalar('a', i16, equals=64) and scalar('b', i8), or scalar('a', "
        "i32, equals=64, narrows_to=i16) and scalar('b', i32, narrows_to=i8) to pass i32s (as "
        "rtp slots hold) whose values `aiedsl check` keeps in the ranges of int16_t and int8_t"]


def test_misfit_scalars_of_the_same_type(design_file: DesignFile) -> None:
    msg = misfits_error(design_file, '"two_i32"', 'scalar("a", "f32"), scalar("b", "f32")',
                        "0.5, 0.5")
    assert msg.splitlines()[-1] == (
        "  fix: declare them scalar('a', i32) and scalar('b', i32), the types the C++ takes, "
        "or change the C++ parameters to float")


def test_misfit_scalars_fixed_differently_each_have_their_fix(
        design_file: DesignFile) -> None:
    msg = misfits_error(design_file, '"mixed"', 'scalar("width", "f32"), scalar("level", i32), '
                        'scalar("s", i32)', "1.0, 50, 1")
    assert msg.splitlines()[2:] == [
        "  found: f32 for int32_t width",
        "  found: i32 for uint8_t level (scalar 'level', the fourth argument)",
        "  found: i32 for int64_t s (scalar 's', the fifth argument)",
        "  fix: for 'width', declare it scalar('width', i32), the type the C++ takes, or change "
        "the C++ parameter to float; for 'level', declare it scalar('level', u8), or "
        "scalar('level', i32, narrows_to=u8) to pass an i32 (as an rtp slot holds) whose "
        "values `aiedsl check` keeps in uint8_t's range; for 's', change the C++ parameter to "
        "int32_t (no aiedsl scalar type has 8 bytes)"]


def test_misfits_stop_at_another_mistake(design_file: DesignFile) -> None:
    """A misfit scalar is reported before a later mistake, as it was; past that mistake (a
    scalar for a pointer: args= may be out of order) nothing more is judged."""
    msg = misfits_error(design_file, '"then_ptr"', 'scalar("a", i32), scalar("p", i32), '
                        'scalar("b", i32)', "1, 2, 3")
    assert msg.splitlines()[0] == (
        "d.py:8: error [kernel signature]: kernel 'then_ptr' passes scalar 'a' of i32 "
        "(int32_t, 4 bytes) as the third argument of k.cc's then_ptr (its line 7), which takes "
        "int16_t a (a 2-byte integer), and the core's call converts nothing: the C++ reads 2 "
        "bytes of the call's 4, so a value outside -32768 to 32767 is not what it receives")
    assert msg.splitlines()[2:] == [
        "  found: i32 for int16_t a",
        "  fix: declare it scalar('a', i16), or scalar('a', i32, narrows_to=i16) to pass an "
        "i32 (as an rtp slot holds) whose values `aiedsl check` keeps in int16_t's range"]


# -- a kernel declared in a helper module: the error names the design's call too ----------------

HELPER = '''
from aiedsl import Tensor, i32
from aiedsl.kernels import buffer, declare


def ref(*args, **kw):
    pass


def doubler(entry, args=None):
    return declare("double_64", source="k.cc", entry=entry, reference=ref, cycles=100,
                   cost="a guess", args=args or [buffer("src", Tensor[64, i32]),
                                                 buffer("dst", Tensor[64, i32], "out")])
'''

USER = '''
from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
from aiedsl.kernels import buffer
from kern import doubler


@design(device="npu1_1col")
def d(inp: Tensor[1024, i32], out: Tensor[1024, i32]):
    k = doubler(ENTRY)
    fi = fifo(Tensor[64, i32], name="fi")
    fo = fifo(Tensor[64, i32], name="fo")

    @herd()
    def core():
        for _ in loop(16):
            with fi.consume() as a, fo.produce() as b:
                k(a, b)

    with runtime() as rt:
        rt.fill(fi, inp)
        rt.drain(fo, out)
'''


def helper_error(design_file: DesignFile, entry: str) -> list[str]:
    design_file(CC, "k.cc")
    design_file(HELPER, "kern.py")
    path = design_file(USER.replace("ENTRY", entry))
    with pytest.raises(DesignError) as e:
        check_design(load_design(path).ir)
    return str(e.value).splitlines()


def test_a_helper_modules_kernel_names_the_designs_call(design_file: DesignFile) -> None:
    """A tester's shared affine_kernel.py: the error named its declare() line only, not the
    design whose entry= (passed through the helper) was wrong, nor where it calls it."""
    assert helper_error(design_file, '"double_i32<N>"') == [
        "kern.py:10: error [kernel entry]: kernel 'double_64' calls double_i32<N> "
        "(entry=\"double_i32<N>\"), and 'N' is a template parameter of k.cc's double_i32 (its "
        "line 4): entry= is C++ text, called from the extern \"C\" function aiedsl generates "
        "after the file, outside every function and template, where only the file's top-level "
        "names are seen",
        LIMIT.rstrip("\n"),
        "  found: 'N' in entry=\"double_i32<N>\"",
        "  d.py:16: the call of 'double_64' in design 'd'",
        "  fix: put the value in the string, e.g. entry=f\"double_i32<{N}>\" in Python"]


def test_a_helper_modules_signature_error_names_the_designs_call(
        design_file: DesignFile) -> None:
    assert helper_error(design_file, '"scale_i32"') == [
        "kern.py:10: error [kernel signature]: kernel 'double_64' declares 2 arguments, and "
        "k.cc's scale_i32 (its line 15) takes 4",
        "  limit: the kernel's args= are the C++ function's parameters, in its order",
        "  found: args src, dst; scale_i32(int32_t *a_in, int32_t *c_out, int32_t *factor, "
        "int32_t n)",
        "  d.py:16: the call of 'double_64' in design 'd'",
        "  fix: declare one buffer() or scalar() per parameter of scale_i32, in its order"]


def test_a_kernel_declared_in_the_design_file_adds_no_line(design_file: DesignFile) -> None:
    """Its declare() line is in the design already."""
    assert not any(" the call of " in line for line in error(
        design_file, '"double_64", entry="double_i32<N>"', IO).splitlines())


TYPED_CC = r'''#include <stdint.h>
namespace mykern {
template <typename T, unsigned N> void scale(const T *in, T *out) {
  for (unsigned i = 0; i < N; i++) out[i] = in[i] * 2;
}
}
'''


def test_a_number_for_a_type_parameter_and_a_qualified_entry(design_file: DesignFile) -> None:
    """entry="scale<1024>" for template <typename T, unsigned N> was told to add N after it
    (scale<1024, {N}>: 1024 for T), and mykern::scale's fix dropped its namespace (a tester)."""
    def check(entry: str) -> str:
        design_file(TYPED_CC, "k.cc")
        path = design_file(DESIGN.format(decl=f'"scale_i32_64", entry="{entry}"',
                                         args=IO.format(dt="i32"), call="a, b", dt="i32"))
        with pytest.raises(DesignError) as e:
            check_design(load_design(path).ir)
        return str(e.value)

    assert check("mykern::scale<64>") == (
        "d.py:8: error [kernel entry]: kernel 'scale_i32_64' calls k.cc's scale (its line 3) "
        "with the template argument 64 for its type parameter T (entry=\"mykern::scale<64>\"): "
        "a number is not a type\n"
        "  limit: template arguments fill the parameters in order: a type for typename and "
        "class, a value for the others\n"
        "  found: entry=\"mykern::scale<64>\"; scale's template parameters: typename T, N\n"
        "  fix: give a type first, e.g. entry=\"mykern::scale<int32_t, 64>\"")
    # typename T::value_type S is a value of that type, not a type (a reviewer)
    from aiedsl.kernels.cscan import extern_c

    sig = extern_c(TYPED_CC.replace("unsigned N>", "unsigned N, typename T::value_type S = 0,"
                                    " class... Rest>")).signature("scale")
    assert sig is not None and (sig.template, sig.types) == (("T", "N", "S", "Rest"),
                                                             ("T", "Rest"))
    assert check("mykern::scale<int32_t>").splitlines()[-2:] == [
        "  found: entry=\"mykern::scale<int32_t>\"; scale's template parameters: typename T, "
        "N",
        "  fix: give them in entry=, e.g. entry=\"mykern::scale<int32_t, 64>\" (N = 64 (the "
        "elements of each of its buffers): check that the C++ takes it so)"]


def test_an_unqualified_entry_of_a_function_in_a_namespace_is_refused(
        design_file: DesignFile) -> None:
    """entry="scale<int32_t, 64>" for mykern::scale passed check (a tester): the generated
    call, at the file's top level, does not see it; qualified, or opened by using namespace, it
    does."""
    design_file(TYPED_CC, "k.cc")
    path = design_file(DESIGN.format(decl='"scale_i32_64", entry="scale<int32_t, 64>"',
                                     args=IO.format(dt="i32"), call="a, b", dt="i32"))
    with pytest.raises(DesignError) as e:
        check_design(load_design(path).ir)
    assert str(e.value).splitlines()[0] == (
        "d.py:8: error [kernel entry]: kernel 'scale_i32_64' calls scale() (entry=\"scale<int32_t"
        ", 64>\"), which k.cc declares only inside namespace mykern: the extern \"C\" function "
        "aiedsl generates after the file calls it from the top level, where it is not seen")
    assert str(e.value).splitlines()[-1] == (
        "  fix: qualify it: entry=\"mykern::scale<int32_t, 64>\"")
    design_file(TYPED_CC + "using namespace mykern;\n", "k.cc")
    check_design(load_design(path).ir)
    design_file(TYPED_CC, "k.cc")
    path.write_text(path.read_text().replace('entry="scale<', 'entry="mykern::scale<'))
    check_design(load_design(path).ir)
