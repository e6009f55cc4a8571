"""A design.json read back is held to every rule the front end keeps: a tester, as a tool
author editing design.json and reading it back (load_json, then build or simulate), had the
simulator run a shell command named as a kernel's reference, C++ and MLIR written from text
in the JSON, lock values, lines and sizes past what the hardware and MLIR hold, memory
exhausted and tracebacks. Each edit is now a DesignError naming the field, word for word;
nothing runs, nothing is written."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

import aiedsl
from aiedsl import load_json
from aiedsl.emit import generate
from aiedsl.errors import DesignError
from aiedsl.ir import Design
from aiedsl.kernels.library_refs import LIBRARY_MODULES, library_reference
from aiedsl.loader import load_design

ROOT = Path(__file__).resolve().parents[1]
REBUILD = "a design.json aiedsl wrote holds none: rebuild the design (aiedsl build) rather " \
    "than edit its design.json"
SRC = "the design IR text"

LB = '''import numpy as np
from aiedsl import Tensor, barrier, design, fifo, herd, i32, local, loop, runtime
from aiedsl.kernels import passthrough as copy_kernel


@design(device="npu1_1col")
def lb(inp: Tensor[1024, i32], out: Tensor[1024, i32]):
    a = fifo(Tensor[1024, i32], name="a")
    b = fifo(Tensor[1024, i32], name="b")
    st = local(Tensor[1024, i32], initial=7, name="st")
    go = barrier(name="go")
    copy = copy_kernel(Tensor[1024, i32])

    @herd()
    def core():
        go.wait_for_value(1)
        with a.consume() as x, b.produce() as y:
            copy(x, st)
            copy(st, y)

    with runtime() as rt:
        rt.set_barrier(go, 1)
        rt.fill(a, inp)
        rt.drain(b, out, wait=True)


@lb.reference
def reference(inp):
    return inp.copy()
'''


@pytest.fixture(scope="module")
def texts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """design.json of passthrough, matmul_cascade and lb (a local and a barrier), and the
    passthrough handle."""
    here = os.getcwd()
    os.chdir(ROOT)
    try:
        folder = tmp_path_factory.mktemp("lb")
        (folder / "lb.py").write_text(LB)
        handle = load_design("designs/passthrough.py")
        return {"passthrough": generate(handle).files["design.json"], "handle": handle,
                "matmul_cascade": generate(load_design("designs/matmul_cascade.py")
                                           ).files["design.json"],
                "lb": generate(load_design(folder / "lb.py")).files["design.json"]}
    finally:
        os.chdir(here)


def refusal(text: str, edit: str) -> str:
    """What load_json says of ``text`` after ``edit`` (Python over its data ``d``)."""
    d = json.loads(text)
    exec(edit)
    with pytest.raises(DesignError) as e:
        load_json(json.dumps(d), home=ROOT / "designs")
    return str(e.value)


def msg(at: str, head: str, limit: str | None, found: str, fix: str) -> str:
    """An error [design IR] at ``at`` (``file:line: `` or "")."""
    return (f"{at}error [design IR]: {SRC}: {head}\n" + (f"  limit: {limit}\n" if limit else "")
            + f"  found: {found}\n  fix: {fix}")


KERNEL = "kernels[0]"
PT = "passthrough_i32_1024"
LIBRARY = ("module:function of one of aiedsl's library references: a public function defined "
           "at the top of aiedsl.kernels.activations, aiedsl.kernels.cascade, "
           "aiedsl.kernels.conv, aiedsl.kernels.library, aiedsl.kernels.matmul")
NAME_FORM = ("ASCII letters, digits and _, not starting with a digit, at most 200 characters (it "
             "becomes an MLIR symbol, a C name and a file name)")
SOURCE_FORM = ("a relative path to a C++ file (.cc, .cpp, .cxx, .c, .h, .hpp) beside the design "
               "or in kernels_cpp/, without '..'")
LOCK = "(a lock's value)"

CASES: list[tuple[str, str, str, str]] = [
    ("an entry with a statement after it", "passthrough",
     'd["kernels"][0]["entry"] += "(src, dst); system(\\"touch /tmp/x\\"); //"',
     msg("passthrough.py:22: ", f"{KERNEL}.entry: entry='passthrough<int32_t, 1024>(src, dst); "
         f"system(\"touch /tmp/x\"); //' of kernel '{PT}' is not a C++ function name",
         "a C++ function name, optionally qualified (ns::f), with template arguments that end it "
         "(f<int16_t, 64>), on one line: each a type, an integer or a name, with ::, *, & and "
         "nested <> or () (static_cast<unsigned>(64))",
         "'passthrough<int32_t, 1024>(src, dst); system(\"touch /tmp/x\"); //': its template "
         "arguments end at character 26, and '(src, dst); system(\"touch /tmp/x\"); //' follows "
         "them", "name the function (template) the kernel's C++ defines, e.g. "
         "entry=\"scale<int16_t, 1024>\"")),
    ("an argument name holding C++", "passthrough",
     'd["kernels"][0]["args"][1]["name"] = "dst) { system(\\"id\\"); } void f(int32_t *dst"',
     msg("passthrough.py:22: ", f"{KERNEL}.args[1].name: kernel argument 'dst) {{ system(\"id\"); "
         "} void f(int32_t *dst' is not a plain name", NAME_FORM,
         "'dst) { system(\"id\"); } void f(int32_t *dst'",
         "rename it, e.g. dst_system_id_void_f_int32_t_dst")),
    ("a parameter of two lines", "passthrough",
     'd["kernels"][0]["params"]["cpp"] = "int32_t\\n#include </etc/passwd>\\n"',
     msg("passthrough.py:22: ", f"{KERNEL}.params.cpp: parameter 'cpp' of kernel '{PT}' = "
         "'int32_t\\n#include </etc/passwd>\\n' is not one line of printable text",
         "printable characters on one line, at most 100", "'int32_t\\n#include </etc/passwd>\\n'",
         "remove line breaks and control characters")),
    ("a define value of two lines", "passthrough",
     'd["kernels"][0]["defines"] = {"X": "1\\n#include </etc/passwd>"}',
     msg("passthrough.py:22: ", f"{KERNEL}.defines.X: kernel '{PT}' defines X as "
         "'1\\n#include </etc/passwd>'",
         "NAME: a C identifier, not a C++ keyword, not the compiler's (starting with __: "
         "__cplusplus, __AIE_ARCH__), nor NDEBUG, which the compiles set (a feature-test macro "
         "such as _GNU_SOURCE is the program's to set); VALUE: an int (within 64 bits, as a "
         "number or a literal in a str), a finite float, or a str of one C identifier or number "
         "literal (at most 100 characters)", "'1\\n#include </etc/passwd>'",
         "give one number or name, e.g. defines={\"X\": 8} (True and False: write 1 and 0)")),
    ("an absolute source", "passthrough",
     'd["kernels"][0].update(source="/abs/path.cc", shipped=False)',
     msg("passthrough.py:22: ", f"{KERNEL}.source: source='/abs/path.cc' of kernel '{PT}' is "
         "not a C++ file name aiedsl may read", SOURCE_FORM, "'/abs/path.cc'",
         "put the C++ file next to the design and give its name, e.g. source=\"my_kernel.cc\"")),
    ("a shipped source outside kernels_cpp", "passthrough",
     'd["kernels"][0].update(source="../../evil/pt.cc", shipped=True)',
     msg("passthrough.py:22: ", f"{KERNEL}.source: source='../../evil/pt.cc' of kernel '{PT}' "
         "is not a C++ file name aiedsl may read", SOURCE_FORM, "'../../evil/pt.cc'",
         "put the C++ file next to the design and give its name, e.g. source=\"my_kernel.cc\"")),
    ("a core name holding MLIR", "passthrough",
     'd["cores"][0]["name"] = "core[0,0]\\n    aie.end"',
     msg("passthrough.py:24: ", "cores[0].name is not 'core[0,0]', the name of core [0, 0] of "
         "herd 'core'", "<herd>[x,y] of the core's herd and index",
         '"core[0,0]\\n    aie.end"', f"name it 'core[0,0]' (and every reference to it); "
         f"{REBUILD}")),
    ("a define name holding MLIR", "passthrough", 'd["defines"] = {"X\\n  aie.end": 1}',
     msg("passthrough.py:16: ", "defines[\"X\\n  aie.end\"]: define 'X\\n  aie.end' is not a "
         "plain name", NAME_FORM, "'X\\n  aie.end'", "rename it, e.g. X_aie_end")),
    ("a line past 32 bits", "passthrough", 'd["loc"]["line"] = 2**40',
     msg("", "loc.line is 1099511627776, past the lines MLIR locations hold",
         "0 to 4294967295 (MLIR's FileLineColLoc: an unsigned line)", "1099511627776",
         f"give the 1-based line, or 0 for none; {REBUILD}")),
    ("a depth of 64", "passthrough", 'd["fifos"][0]["consumers"][0]["depth"] = 64',
     msg("passthrough.py:19: ", "fifos[0].consumers[0].depth is 64", f"1 to 63 {LOCK}", "64",
         f"give 1 to 63; {REBUILD}")),
    ("a depth of 2**80", "passthrough", 'd["fifos"][0]["consumers"][0]["depth"] = 2**80',
     msg("passthrough.py:19: ", "fifos[0].consumers[0].depth is 1208925819614629174706176",
         f"1 to 63 {LOCK}", "1208925819614629174706176", f"give 1 to 63; {REBUILD}")),
    ("a tensor of 2**40 elements", "passthrough",
     'd["tensors"][0]["type"]["shape"] = [2**40]',
     msg("passthrough.py:16: ", "tensors[0].type.shape has 1,099,511,627,776 elements",
         "fewer than 2^31 = 2,147,483,648 elements", "[1099511627776]",
         f"give a shape of fewer elements; {REBUILD}")),
    ("a herd of 2**40 columns", "passthrough", 'd["herds"][0]["cols"] = 2**40',
     msg("passthrough.py:24: ", "herds[0].cols and rows make a 1099511627776x1 herd, which does "
         "not fit on npu1_1col", "1 column(s) x 4 core row(s)", "[1099511627776, 1]",
         f"give a herd that fits; {REBUILD}")),
    ("a link twice", "passthrough", 'd["links"].append(d["links"][0])',
     msg("passthrough.py:19: ", "links[2].srcs[0] names fifo 'in_l3', which links[0].srcs[0] "
         "names too", "one link per fifo", '"in_l3"',
         f"one link per fifo (mlir-aie refuses a fifo in two links); {REBUILD}")),
    ("a fifo in two links", "passthrough",
     'd["links"][1]["srcs"] = [d["links"][0]["dsts"][0]]',
     msg("passthrough.py:21: ", "links[1].srcs[0] names fifo 'in_l1', which links[0].dsts[0] "
         "names too", "one link per fifo", '"in_l1"',
         f"one link per fifo (mlir-aie refuses a fifo in two links); {REBUILD}")),
    ("a fifo with no consumer", "passthrough", 'd["fifos"][1]["consumers"] = []',
     msg("passthrough.py:19: ", "fifos[1].consumers is empty: a fifo has one consumer or more",
         "1 consumer or more", "[]", f"give the fifo's consumers; {REBUILD}")),
    ("a cascade between tiles apart", "matmul_cascade",
     'd["cascades"].append({"src": "core[3,0]", "dst": "core[0,0]", '
     '"loc": d["cascades"][0]["loc"]})',
     msg("matmul_cascade.py:40: ", "cascades[3] is core[3,0] -> core[0,0], which no herd's "
         "cascade= makes", "each core to its neighbour in its herd's cascade direction "
         "(mlir-aie's cascade_flow joins adjacent tiles only): core[0,0] -> core[1,0], "
         "core[1,0] -> core[2,0], core[2,0] -> core[3,0]",
         '{"src": "core[3,0]", "dst": "core[0,0]"}', "give each herd its cascade direction and "
         f"the cascades it makes; {REBUILD}")),
    ("roundings on a kernel that sums", "matmul_cascade", 'd["kernels"][1]["roundings"] = 2',
     msg("matmul_cascade.py:30: ", "kernels[1].roundings: kernel "
         "'matmul_cascade_put_get_bf16_f32_64x64x64_4x8x4' declares roundings=2, which its "
         "comparison does not use: it sums into what it writes (an accumulator, a reduction or "
         "a cascade), whose outputs get a sum's allowance", "roundings= for a kernel whose "
         "float results each go through that many roundings, without summing", "roundings=2",
         "leave roundings= out")),
    ("roundings on an exact kernel", "passthrough", 'd["kernels"][0]["roundings"] = 2',
     msg("passthrough.py:22: ", f"{KERNEL}.roundings: kernel '{PT}' is declared exact=True and "
         "roundings=2", "an exact kernel (a copy, relu, max) rounds nothing",
         "exact=True, roundings=2", "leave one of them out")),
    ("a barrier's initial value of 64", "lb", 'd["barriers"][0]["init"] = 64',
     msg("lb.py:11: ", "barriers[0].init is 64", f"0 to 63 {LOCK}", "64",
         f"give 0 to 63; {REBUILD}")),
    ("a barrier's initial value of -1", "lb", 'd["barriers"][0]["init"] = -1',
     msg("lb.py:11: ", "barriers[0].init is -1", f"0 to 63 {LOCK}", "-1",
         f"give 0 to 63; {REBUILD}")),
    ("a barrier set to 64", "lb", 'd["runtime"][0]["value"] = 64',
     msg("lb.py:22: ", "runtime[0].value is 64", f"0 to 63 {LOCK}", "64",
         f"give 0 to 63; {REBUILD}")),
    ("a barrier waited on for 0", "lb", 'd["cores"][0]["body"][0]["value"] = 0',
     msg("lb.py:16: ", "cores[0].body[0].value is 0", f"1 to 63 {LOCK}", "0",
         f"give 1 to 63; {REBUILD}")),
    ("a local's initial value of one byte", "lb", 'd["locals"][0]["init"] = "07"',
     msg("lb.py:10: ", "locals[0].init is not the 4096 bytes of a 1024xi32 buffer in "
         "hexadecimal", "8192 hexadecimal digits (0-9, a-f)", '"07"',
         f"give 8192 lowercase hexadecimal digits, or null for none; {REBUILD}")),
]


@pytest.mark.parametrize("name, design, edit, message", CASES, ids=[c[0] for c in CASES])
def test_load_json_refuses_each_edit_naming_the_field(texts: dict[str, Any], name: str,
                                                      design: str, edit: str,
                                                      message: str) -> None:
    assert refusal(texts[design], edit) == message


def test_the_fixes_work_and_an_unedited_design_json_builds_byte_identical(
        texts: dict[str, Any], tmp_path: Path) -> None:
    """Each design.json read back passes (what the fixes ask for is what aiedsl writes), and
    a rebuild from it writes the same bytes as the design's own build."""
    for name in ("passthrough", "matmul_cascade"):
        ir = load_json(texts[name], home=ROOT / "designs")
        out = aiedsl.build(aiedsl.DesignHandle(ir), output=str(tmp_path / name))
        assert (tmp_path / name / "design.json").read_text() == texts[name]
        assert out is not None
    fixed = json.loads(texts["passthrough"])
    fixed["defines"] = {"X_aie_end": 1}  # the rename the refusal suggests
    assert load_json(json.dumps(fixed), home=ROOT / "designs").defines == {"X_aie_end": 1}


HOSTILE = ("aiedsl.kernels.host:subprocess.run", "aiedsl.kernels.library:DesignError")


@pytest.mark.parametrize("reference", HOSTILE)
def test_nothing_runs_from_a_hostile_reference(texts: dict[str, Any], tmp_path: Path,
                                               reference: str,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """A reference in aiedsl's package that is no library reference is refused by
    simulate(placed=...), naming the field, before anything is imported; the simulator's own
    lookup refuses it too (an IR past that check)."""
    import subprocess

    import aiedsl.sim
    from aiedsl.sim import simulate

    ran: list[object] = []
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: ran.append((a, k)))
    d = json.loads(texts["passthrough"])
    k = d["kernels"][0]
    # (a text parameter of aiedsl's own kernels is a C++ name: "touch <marker>" is refused)
    k.update(symbol="zz", args=[], reference=reference, params={"args": "true", "shell": 1})
    d["cores"][0]["body"][0]["body"][2].update(kernel="zz", args=[])
    ir = load_json(json.dumps(d))  # a name the front end could write: only its import is ruled
    with pytest.raises(DesignError) as e:
        simulate(texts["handle"], placed=ir)
    assert str(e.value).split(": ", 1)[1] == (
        "error [design IR]: simulate(placed=...): kernels[0].reference names no reference of "
        f"aiedsl's library\n  limit: {LIBRARY}\n  found: {reference}\n"
        "  fix: simulate the placed design of this handle's design (its kernels hold their "
        "references), or name the library reference the kernel was declared with")
    original = aiedsl.sim._check_placed
    try:
        aiedsl.sim._check_placed = lambda *a: None  # as if the check were skipped
        with pytest.raises(DesignError) as e:
            simulate(texts["handle"], placed=ir)
    finally:
        aiedsl.sim._check_placed = original
    assert str(e.value).splitlines()[0].endswith(
        f"error [kernel reference]: kernel 'zz' names reference {reference}, which is none of "
        "aiedsl's library references")
    assert ran == []


def test_simulate_placed_compiles_only_the_handles_kernels(texts: dict[str, Any]) -> None:
    """A placed IR whose kernel differs from the handle's by that symbol (its entry, say) is
    not the handle's: kernels="native" would have compiled the IR's."""
    from aiedsl.sim import simulate

    d = json.loads(texts["passthrough"])
    d["kernels"][0]["entry"] = "passthrough<int32_t, 512>"
    with pytest.raises(DesignError) as e:
        simulate(texts["handle"], placed=load_json(json.dumps(d)), kernels="native")
    assert str(e.value).split(": ", 1)[1].splitlines() == [
        "error [design IR]: simulate(placed=...): kernels[0] 'passthrough_i32_1024' is not the "
        "kernel 'passthrough' declares by that symbol: its C++ or its reference differs",
        "  limit: the handle's kernel, as declared",
        "  found: kernels[0]: source passthrough.cc, entry passthrough<int32_t, 512>",
        "  fix: give the placed design of this handle's design (check_design(handle.ir)[0], or "
        "its build's design.json), or leave placed= out"]


def test_every_library_reference_is_one_aiedsl_imports() -> None:
    """Every public ``*_ref`` function of the library's modules passes the rule (the kernels
    aiedsl ships name those), and nothing but a function defined there does."""
    import importlib
    import inspect

    found = 0
    for module in LIBRARY_MODULES:
        m = importlib.import_module(module)
        for name, fn in vars(m).items():
            if inspect.isfunction(fn) and fn.__module__ == module and name.endswith("_ref") \
                    and not name.startswith("_"):
                assert library_reference(f"{module}:{name}") is fn
                found += 1
    assert found >= 15
    for bad in ("aiedsl.kernels.library:np", "aiedsl.kernels.library:_eltwise_ref",
                "aiedsl.kernels.host:subprocess.run", "aiedsl.__main__:main",
                "aiedsl.kernels.library:add_ref.__globals__", "os:system"):
        assert library_reference(bad) is None


def test_non_json_numbers_and_deep_nesting_are_refused(texts: dict[str, Any]) -> None:
    """NaN and Infinity are no JSON (design.json wrote a NaN define as null, which did not read
    back); an IR made in Python with one is refused by validation."""
    from aiedsl.validate import validate

    d = json.loads(texts["passthrough"])
    ir = Design.model_validate(d).model_copy(update={"defines": {"N": float("inf")}})
    with pytest.raises(DesignError) as e:
        validate(ir)
    assert str(e.value) == (
        "passthrough.py:16: error [design IR]: the design IR: defines.N is not a finite number\n"
        "  limit: an int, a finite float, a bool or a str\n"
        "  found: Infinity\n"
        f"  fix: give an int, a finite float, a bool or a str; {REBUILD}")
    with pytest.raises(DesignError) as e:
        load_json('{"ir_version": 1, "defines": {"N": NaN}}')
    assert str(e.value) == (
        "error [design IR]: the design IR text is not JSON: NaN is no JSON number (a design IR's "
        "numbers are finite)\n"
        "  found: '{\"ir_version\": 1, \"defines\": {\"N\": NaN}}'\n"
        "  fix: give the text of a design.json, or its path")
    with pytest.raises(DesignError) as e:
        load_json("[" * 100000 + "]" * 100000)
    assert str(e.value).splitlines()[0] == (
        "error [design IR]: the design IR text nests arrays or objects deeper than Python's JSON "
        "reader goes (its recursion limit)")


def test_a_design_ir_given_as_a_design_says_how_to_build_or_run_it(
        texts: dict[str, Any]) -> None:
    from aiedsl.sim import simulate

    ir = load_json(texts["passthrough"])
    with pytest.raises(DesignError) as e:
        aiedsl.build(ir)  # type: ignore[arg-type]
    assert str(e.value).splitlines()[-1] == (
        "  fix: build(DesignHandle(ir), ...) (from aiedsl import DesignHandle) builds a design IR "
        "(load_json's), byte for byte as its design's build")
    with pytest.raises(DesignError) as e:
        simulate(ir)  # type: ignore[arg-type]
    assert str(e.value).splitlines()[-1] == (
        "  fix: simulate(load_design(\"design.py\"), placed=ir) runs a placed design IR "
        "(load_json's) with its design's references; DesignHandle(ir) has none of the user's")


def test_a_design_json_read_without_home_elsewhere_says_to_pass_home(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from test_design_paths import DBL, DOUBLE_CC

    (tmp_path / "designs").mkdir()
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "designs" / "dbl.py").write_text(DBL)
    (tmp_path / "designs" / "double.cc").write_text(DOUBLE_CC)
    monkeypatch.chdir(tmp_path)
    text = generate(load_design("designs/dbl.py")).files["design.json"]
    monkeypatch.chdir(tmp_path / "elsewhere")
    with pytest.raises(DesignError) as e:
        aiedsl.build(aiedsl.DesignHandle(load_json(text)), output=str(tmp_path / "out"))
    assert str(e.value).splitlines()[-1] == (
        "  fix: read the design IR with load_json(..., home=\"<the design's folder>\"): without "
        "it, double.cc is looked for from the working directory")
    assert not (tmp_path / "out").exists()


def test_the_schema_describes_every_field() -> None:
    """pydantic's use_attribute_docstrings: each field's docstring is its description."""
    schema = Design.model_json_schema()
    assert schema["properties"]["ir_version"]["const"] == 1
    found: list[bool] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for v in node.get("properties", {}).values():
                found.append("description" in v)
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(schema)
    assert len(found) > 200 and all(found)


def test_a_kernel_source_outside_the_design_folder_is_refused(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch
                                                               ) -> None:
    """A kernel's C++ is looked for beside the file its loc names: a design.json whose loc
    leaves the design's folder would have another folder's C++ compiled and run (a reviewer
    had a native simulation run a constructor from ../evil/cp.cc)."""
    from test_design_paths import DBL, DOUBLE_CC

    (tmp_path / "designs").mkdir()
    (tmp_path / "evil").mkdir()
    (tmp_path / "designs" / "dbl.py").write_text(DBL)
    (tmp_path / "designs" / "double.cc").write_text(DOUBLE_CC)
    (tmp_path / "evil" / "double.cc").write_text(DOUBLE_CC)
    monkeypatch.chdir(tmp_path)
    d = json.loads(generate(load_design("designs/dbl.py")).files["design.json"])
    assert load_json(json.dumps(d), home="designs").kernels[0].loc.file == "dbl.py"
    d["kernels"][0]["loc"]["file"] = "../evil/x.py"
    with pytest.raises(DesignError) as e:
        load_json(json.dumps(d), home="designs")
    assert str(e.value) == (
        f"error [design IR]: {SRC}: kernels[0].loc.file puts the source of kernel "
        "'double_i32_1024' outside the design's folder\n"
        "  limit: a file in designs (home=) or below it: a kernel's C++ is looked for beside "
        "the file that declared it\n"
        "  found: ../evil/x.py\n"
        "  fix: load the design.json with home= the design file's folder; a kernel declared in a "
        "module outside that folder is read back by building from the design file itself "
        "(aiedsl build), which imports the module")


def test_a_kernel_declared_in_no_file_finds_its_source_in_the_design_folder_only(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """(a security reviewer) A kernel whose loc is no file (<stdin>) was let through: its
    source is looked for in the working directory, which then must be the design's folder or
    below it too."""
    from test_design_paths import DBL, DOUBLE_CC

    (tmp_path / "designs").mkdir()
    (tmp_path / "cwd").mkdir()
    (tmp_path / "designs" / "dbl.py").write_text(DBL)
    (tmp_path / "designs" / "double.cc").write_text(DOUBLE_CC)
    monkeypatch.chdir(tmp_path / "designs")
    d = json.loads(generate(load_design("dbl.py")).files["design.json"])
    d["kernels"][0]["loc"]["file"] = "<stdin>"
    assert load_json(json.dumps(d), home=".").kernels[0].loc.file == "<stdin>"
    monkeypatch.chdir(tmp_path / "cwd")
    with pytest.raises(DesignError) as e:
        load_json(json.dumps(d), home="../designs")
    assert str(e.value).splitlines()[0] == (
        f"error [design IR]: {SRC}: kernels[0].loc.file puts the source of kernel "
        "'double_i32_1024' outside the design's folder")


def test_a_shipped_kernels_text_parameters_are_names_not_code() -> None:
    """(a security reviewer) aiedsl's own templates paste a kernel's cpp, dtype and op into
    the C++: a design.json's ``"cpp": "int32_t x;}; ..."`` was rendered into kernels/*.cc."""
    from aiedsl.kernels import add

    @aiedsl.design(device="npu1_1col")
    def d(a: aiedsl.Tensor[64, aiedsl.i32], b: aiedsl.Tensor[64, aiedsl.i32],
          c: aiedsl.Tensor[64, aiedsl.i32]) -> None:
        fa, fb, fc = (aiedsl.fifo(aiedsl.Tensor[64, aiedsl.i32], name=n) for n in "abc")
        k = add(aiedsl.Tensor[64, aiedsl.i32])

        @aiedsl.herd()
        def core() -> None:
            with fa.consume() as x, fb.consume() as y, fc.produce() as z:
                k(x, y, z)

        with aiedsl.runtime() as rt:
            rt.fill(fa, a)
            rt.fill(fb, b)
            rt.drain(fc, c)

    text = json.loads(d.ir.model_dump_json())
    assert load_json(json.dumps(text)).kernels[0].params["cpp"] == "int32_t"
    text["kernels"][0]["params"]["cpp"] = "int32_t x;}; int y = system(\"id\"); struct Q{int"
    with pytest.raises(DesignError) as e:
        load_json(json.dumps(text))
    assert str(e.value).splitlines()[0].endswith(
        "kernels[0].params.cpp is not a text aiedsl's own kernels take (their templates paste "
        "it into the C++)")


def test_a_kernel_template_renders_sandboxed(tmp_path: Path) -> None:
    """A kernel's own template is data a design.json can name: it cannot reach Python's
    internals (jinja2's sandbox), where aiedsl's own templates render unsandboxed."""
    from aiedsl.render import TemplateError, environment, render

    (tmp_path / "t.j2").write_text("{{ cycler.__init__.__globals__.os.getcwd() }}")
    with pytest.raises(TemplateError, match="unsafe"):
        render("t.j2", str(tmp_path))
    assert type(environment()).__name__ == "Environment"
