"""Which names the call of a kernel's ``entry=`` sees, after its C++ file
(:mod:`aiedsl.kernels.entry_scope`): what the file declares at its top level is seen; a
template's own parameters, a function's parameters and locals, a class's members and a named
namespace's members are not. Each reading is a superset: a name not seen is certainly not seen
by the compiler either."""

from __future__ import annotations

import pytest

from aiedsl.kernels.cscan import extern_c
from aiedsl.kernels.entry_scope import file_scope


def seen(source: str, names: str, defines: dict[str, object] | None = None) -> list[str]:
    scope = file_scope(extern_c(source, defines))
    return [n for n in names.split() if scope.sees(n)]


def test_template_heads_declare_only_their_own_parameters() -> None:
    src = ("template <typename T = int, unsigned N = sizeof(T), template <class> class TT,\n"
           "          typename... Ts>\n"
           "struct Box { static constexpr unsigned M = N; };\n"
           "template <unsigned R, unsigned C = (R > 2 ? 1 : 2)> void f(const int *x) {}\n")
    assert seen(src, "T N TT Ts Box M R C f x") == ["Box", "f"]


def test_a_name_both_a_template_parameter_and_a_constant_is_seen() -> None:
    """The file's constant C shadows nothing at the top level: the call sees it."""
    src = "constexpr unsigned C = 64;\ntemplate <unsigned C2> void f(int *x) {}\n"
    assert seen(src, "C C2") == ["C"]


def test_parameters_and_locals_are_not_seen_but_an_elaborated_type_is() -> None:
    src = ("void f(int n, struct Opts *o) { int local = n; }\n"
           "int (*handler)(int code) = nullptr;\n"
           "auto lambda = [](int arg) { return arg; };\n")
    assert seen(src, "f n Opts o local handler code lambda") == [
        "f", "Opts", "handler", "code", "lambda"]


@pytest.mark.parametrize("src, names, want", [
    ('extern "C" { constexpr int A = 1; }', "A", ["A"]),
    ("namespace { constexpr int A = 1; }", "A", ["A"]),
    ("namespace ns { inline namespace v1 { constexpr int A = 1; } }", "A", []),
    ("inline namespace v1 { constexpr int A = 1; }", "A", ["A"]),
    ("namespace ns { constexpr int A = 1; }", "A", []),
    ("namespace ns { constexpr int A = 1; }\nusing namespace ns;", "A", ["A"]),
    ("namespace a::b { constexpr int A = 1; }\nusing namespace a::b;", "A", ["A"]),
    ("namespace a { namespace b { constexpr int A = 1; } using namespace b; }\n"
     "using namespace a;", "A", ["A"]),
    ("namespace ns { constexpr int A = 1; }\nusing ns::A;", "A", ["A"]),
    ("enum { A, B = 2 };", "A B", ["A", "B"]),
    ("typedef enum { A } mode_t;", "A mode_t", ["A", "mode_t"]),
    ("enum class E { A };", "A E", ["E"]),
    ("struct S { static constexpr int A = 1; enum { B }; };", "A B S", ["S"]),
    ("using vec_t = int;\ntypedef int word_t;", "vec_t word_t", ["vec_t", "word_t"]),
], ids=["extern-c", "unnamed-namespace", "inline-in-named", "inline", "named", "opened",
        "opened-nested", "opened-transitively", "using-declaration", "enum", "typedef-enum",
        "scoped-enum", "class-members", "aliases"])
def test_scopes(src: str, names: str, want: list[str]) -> None:
    assert seen(src, names) == want


def test_macros_every_branch_and_defines() -> None:
    """A macro is seen wherever the file defines it (a define in a branch not read is taken
    too: the reading is a superset), as is one of the kernel's defines=."""
    src = "#if 0\n#define OFF 1\n#endif\n#define ON 2\n#undef ON\n"
    assert seen(src, "OFF ON GIVEN") == ["OFF", "ON"]
    assert seen("", "GIVEN", {"GIVEN": 1}) == []  # defines= are the caller's to add


def test_every_reading_counts() -> None:
    """A condition on a name the compiler predefines goes both ways: a constant of either
    branch may be the one compiled."""
    src = "#ifdef __chess__\nconstexpr int A = 1;\n#else\nconstexpr int B = 2;\n#endif\n"
    assert seen(src, "A B") == ["A", "B"]


def test_the_aie_api_and_the_language() -> None:
    assert seen("#include <aie_api/aie.hpp>\n", "bfloat16 acc32 v16int32 int32_t true "
                "UINT8_MAX __AIE_ARCH__ mmul accum R C N T") == [
        "bfloat16", "acc32", "v16int32", "int32_t", "true", "UINT8_MAX", "__AIE_ARCH__"]
    assert seen("#include <aie_api/aie.hpp>\nusing namespace aie;\n", "mmul vector R C") == [
        "mmul", "vector"]


def test_a_namespace_from_a_header() -> None:
    """std's names are lower case (FILE aside); another header's namespace cannot be listed,
    so every name is taken as seen."""
    assert seen("#include <cstdint>\nusing namespace std;\n", "size_t byte FILE Tile") == [
        "size_t", "byte", "FILE"]
    assert seen("#include <foo.h>\nusing namespace foo;\n", "Tile R") == ["Tile", "R"]


# -- the real AIE API's and Peano's intrinsic headers' names (aiedsl.kernels.aie_names) -------

@pytest.mark.parametrize("names", [
    "int4 uint4 cint16 cint32 cfloat cbfloat16 float16 int8 uint16",
    "acc32 acc48 acc64 acc80 accfloat caccfloat cacc48 cacc64 accauto exact_acc32",
    "bfp16ebs8 bfp16ebs16 mx4",
    "v16bfloat16 v64int4 v16cint16 v16accfloat v8acc64 v32uint8 v4caccfloat v64int16_sparse",
    "rnd_conv_even rnd_floor cmp_slt T16_32x2_lo INTLV_lo_8o16",
], ids=["element-types", "accumulator-tags", "block-float", "vector-classes", "macros"])
def test_the_real_aie_headers_names(names: str) -> None:
    """aiedsl's host AIE API lacks most of these; Peano's headers declare them."""
    src = "#include <aie_api/aie.hpp>\ntemplate <typename T, int N> void f(T *x) {}\n"
    assert seen(src, names) == names.split()


def test_aie_names_per_architecture() -> None:
    from aiedsl.kernels.aie_names import aie_name
    assert [aie_name("v64bfp16ebs8", a) for a in ("aie2", "aie2p", None)] == [
        False, True, True]
    assert [aie_name("crSRSMode", a) for a in ("aie2", "aie2p")] == [False, True]
    assert [n for n in "v3int32 v16int7 vec TILE v1024int8 v16".split() if aie_name(n)] == []


def test_a_header_the_scan_does_not_read() -> None:
    """lut_based_ops.h may declare LUT_SIZE; the file's own template parameter N it does not
    make seen."""
    src = "#include <lut_based_ops.h>\ntemplate <int N> void f(int *x) { int local = N; }\n"
    assert seen(src, "LUT_SIZE local N") == ["LUT_SIZE", "local"]
    std = "#include <stdint.h>\n#include <cmath>\n#include <aie_api/aie.hpp>\n"
    assert seen(std + "void f(int *x) { int local = 1; }\n", "LUT_SIZE local") == []


def test_a_call_is_not_judged_but_a_template_parameter() -> None:
    scope = file_scope(extern_c("template <typename T> void f(T *x) {}\n"))
    assert [n for n in ("tile", "T") if scope.sees(n, called=True)] == ["tile"]
    assert not scope.sees("tile")
