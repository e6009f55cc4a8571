"""The way back from ``design.json``: :func:`aiedsl.load_json` reads it and holds it to the
rules the front end keeps (:func:`aiedsl.validate.validate`), which ``check_design`` and
``simulate(placed=...)`` apply to any IR they are given. A tester's edits of a design.json
(edit.py): each was accepted by pydantic, then died in a check with a raw KeyError, passed, or
simulated as passed. Their messages word for word."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Any, Callable

import pytest

import aiedsl
from aiedsl.checks import check_design
from aiedsl.emit import generate
from aiedsl.errors import DesignError
from aiedsl import load_json
from aiedsl.ir import Design
from aiedsl.loader import load_design
from aiedsl.sim import Deadlock, simulate

ROOT = Path(__file__).resolve().parents[1]
PASSTHROUGH = ROOT / "designs" / "passthrough.py"
REBUILD = "a design.json aiedsl wrote holds none: rebuild the design (aiedsl build) rather " \
    "than edit its design.json"


@pytest.fixture(scope="module")
def built() -> tuple[Any, str]:
    """The passthrough design (loaded from the project's root) and its design.json."""
    here = os.getcwd()
    os.chdir(ROOT)
    try:
        handle = load_design("designs/passthrough.py")
        return handle, generate(handle).files["design.json"]
    finally:
        os.chdir(here)


def edited(text: str, edit: Callable[[dict[str, Any]], None]) -> str:
    """design.json ``text`` with ``edit`` applied to its data."""
    data = json.loads(text)
    edit(data)
    return json.dumps(data)


def loop_of(d: dict[str, Any]) -> dict[str, Any]:
    """The passthrough core's loop (line 26) in design.json's data."""
    return d["cores"][0]["body"][0]


def test_a_design_json_reads_back_as_the_ir_it_holds(built: tuple[Any, str],
                                                     tmp_path: Path) -> None:
    handle, text = built
    path = tmp_path / "design.json"
    path.write_text(text)
    for source in (text, path, str(path)):
        d = load_json(source)
        assert isinstance(d, Design) and d.placed
        assert d.model_dump_json(indent=2) + "\n" == text
    assert aiedsl.load_json is load_json


def test_a_design_json_read_with_its_home_finds_the_kernel_beside_the_design(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """design.json names files relative to the design's folder: read with ``home=``, its
    kernels' C++ is the one beside the design whatever the working directory (without, it is
    looked for from the working directory, as the names read)."""
    from test_design_paths import DBL, DOUBLE_CC, OTHER_CC

    designs = tmp_path / "designs"
    designs.mkdir()
    (designs / "dbl.py").write_text(DBL)
    (designs / "double.cc").write_text(DOUBLE_CC)
    (tmp_path / "double.cc").write_text(OTHER_CC)  # the working directory's, another
    monkeypatch.chdir(tmp_path)
    handle = load_design("designs/dbl.py")
    want = generate(handle).files
    (tmp_path / "design.json").write_text(want["design.json"])
    ir = load_json("design.json", home="designs")
    assert ir.loc.file == "dbl.py" and ir.loc.path == str(designs / "dbl.py")
    assert generate(dataclasses.replace(handle, ir=ir)).files == want
    cwd = load_json("design.json")  # relative to the working directory: its double.cc
    again = generate(dataclasses.replace(handle, ir=cwd)).files
    assert "aie::sub(" in again["kernels/double_i32_1024.cc"]


# -- what pydantic took and aiedsl's rules do not -------------------------------------------------

EDITS: list[tuple[str, Callable[[dict[str, Any]], None], str]] = [
    ("acquire of an unknown fifo", lambda d: loop_of(d)["body"][0].update(fifo="nope"),
     "passthrough.py:27: error [design IR]: {src}: cores[0].body[0].body[0].fifo names fifo "
     "'nope', which the design does not declare\n"
     "  limit: one of the design's fifos: in_l3, in_l1, out_l1, out_l3\n"
     "  found: \"nope\"\n"
     f"  fix: name one of them; {REBUILD}"),
    ("loop count 0", lambda d: loop_of(d).update(count=0),
     "passthrough.py:26: error [design IR]: {src}: cores[0].body[0].count is 0\n"
     "  limit: 1 to 9223372036854775807\n"
     "  found: 0\n"
     "  fix: give a loop 1 iteration or more (loop() refuses fewer: the simulator would run "
     "its body once, the scf.for no times)"),
    ("call of an unknown kernel", lambda d: loop_of(d)["body"][2].update(kernel="nokernel"),
     "passthrough.py:28: error [design IR]: {src}: cores[0].body[0].body[2].kernel names kernel "
     "'nokernel', which the design does not declare\n"
     "  limit: one of the design's kernels: passthrough_i32_1024\n"
     "  found: \"nokernel\"\n"
     f"  fix: name one of them; {REBUILD}"),
    ("a buffer of no acquire", lambda d: loop_of(d)["body"][2]["args"][0].update(value="ghost"),
     "passthrough.py:28: error [design IR]: {src}: cores[0].body[0].body[2].args[0].value names "
     "acquire result 'ghost', which the design does not declare\n"
     "  limit: one of the design's acquire results: v0, v1\n"
     "  found: \"ghost\"\n"
     f"  fix: name one of them; {REBUILD}"),
    ("unknown dtype", lambda d: d["tensors"][0]["type"].update(dtype="q7"),
     "passthrough.py:16: error [design IR]: {src}: tensors[0].type.dtype is 'q7', which aiedsl "
     "does not know\n"
     "  limit: one of i8, u8, i16, u16, i32, u32, bf16, f32\n"
     "  found: \"q7\"\n"
     "  fix: use one of i8, u8, i16, u16, i32, u32, bf16, f32"),
    ("unknown device", lambda d: d.update(device="npu9"),
     "passthrough.py:16: error [design IR]: {src}: device is 'npu9', which aiedsl does not "
     "know\n"
     "  limit: one of npu1, npu1_1col, npu1_2col, npu1_3col, npu2, npu2_1col, npu2_2col, "
     "npu2_3col, npu2_4col, npu2_5col, npu2_6col, npu2_7col\n"
     "  found: \"npu9\"\n"
     "  fix: use one of them (the device the design was built for)"),
    ("a memtile end of depth 0", lambda d: d["fifos"][0]["consumers"][0].update(depth=0),
     "passthrough.py:19: error [design IR]: {src}: fifos[0].consumers[0].depth is 0\n"
     "  limit: 1 to 63 (a lock's value)\n"
     "  found: 0\n"
     f"  fix: give 1 to 63; {REBUILD}"),
    ("a fifo name twice", lambda d: d["fifos"][1].update(name=d["fifos"][0]["name"]),
     "passthrough.py:19: error [design IR]: {src}: fifos[1].name 'in_l3' is fifos[0]'s too\n"
     "  limit: one of the fifos per name\n"
     "  found: \"in_l3\"\n"
     "  fix: give each of the fifos a name of its own"),
    ("a fill of an unknown tensor", lambda d: d["runtime"][0].update(tensor="ZZ"),
     "passthrough.py:31: error [design IR]: {src}: runtime[0].tensor names tensor 'ZZ', which "
     "the design does not declare\n"
     "  limit: one of the design's tensors: inp, out\n"
     "  found: \"ZZ\"\n"
     f"  fix: name one of them; {REBUILD}"),
    ("a negative line", lambda d: d["loc"].update(line=-5),
     "error [design IR]: {src}: loc.line is negative\n"
     "  limit: 0 or more\n"
     "  found: -5\n"
     f"  fix: give the 1-based line, or 0 for none; {REBUILD}"),
]


@pytest.mark.parametrize("name, edit, message", EDITS, ids=[e[0] for e in EDITS])
def test_load_json_refuses_what_the_front_end_never_makes(
        built: tuple[Any, str], tmp_path: Path, name: str,
        edit: Callable[[dict[str, Any]], None], message: str) -> None:
    path = tmp_path / "design.json"
    path.write_text(edited(built[1], edit))
    with pytest.raises(DesignError) as e:
        load_json(path)
    assert str(e.value) == message.format(src=str(path))


@pytest.mark.parametrize("name, edit, message", EDITS, ids=[e[0] for e in EDITS])
def test_check_design_and_simulate_placed_refuse_them_too(
        built: tuple[Any, str], name: str, edit: Callable[[dict[str, Any]], None],
        message: str) -> None:
    """An IR made by pydantic alone (model_validate_json) reaches the checks, which died with a
    KeyError, or passed (depth 0, version 99, a negative line) and generate then crashed the
    simulator; simulate(placed=...), which runs no check, simulated a loop of count 0 as
    passed."""
    handle, text = built
    ir = Design.model_validate_json(edited(text, edit))
    with pytest.raises(DesignError) as e:
        check_design(ir)
    assert str(e.value) == message.format(src="the design IR")
    with pytest.raises(DesignError) as e:
        simulate(handle, placed=ir)
    assert str(e.value) == message.format(src="simulate(placed=...)")


def test_another_version_of_the_ir_is_refused_before_its_fields_are_read(
        built: tuple[Any, str]) -> None:
    text = edited(built[1], lambda d: d.update(ir_version=99, tensors="changed meaning"))
    with pytest.raises(DesignError) as e:
        load_json(text)
    assert str(e.value) == (
        "error [design IR]: the design IR text: ir_version is 99: this aiedsl reads version 1 of "
        "the design IR\n"
        "  limit: ir_version 1\n"
        "  found: ir_version 99\n"
        "  fix: upgrade aiedsl to one that reads it (a newer aiedsl wrote it)")
    with pytest.raises(DesignError) as e:
        load_json(edited(built[1], lambda d: d.pop("ir_version")))
    assert str(e.value).splitlines()[0] == (
        "error [design IR]: the design IR text: ir_version is missing: this aiedsl reads version "
        "1 of the design IR")
    assert str(e.value).splitlines()[-1] == (
        "  fix: rebuild the design with this aiedsl (aiedsl build) for a design.json it reads")
    with pytest.raises(DesignError) as e:  # built by pydantic alone, it reaches the checks
        check_design(Design.model_validate_json(edited(built[1],
                                                       lambda d: d.update(ir_version=99))))
    assert str(e.value).splitlines()[0] == (
        "passthrough.py:16: error [design IR]: the design IR: ir_version is 99: this aiedsl "
        "reads version 1 of the design IR")


def test_numbers_are_numbers_and_a_union_is_one_complaint(built: tuple[Any, str]) -> None:
    """A number written as a string ("4") or a boolean where an integer goes is a tool's
    mistake: refused, not read as 4 or 1. A value none of a union's types takes (a define) is
    one complaint naming them all, at the JSON's path (not pydantic's "defines.N.bool")."""
    for edit, path, found in (
            (lambda d: loop_of(d)["body"][0].update(count="4"),
             "passthrough.py:27: error [design IR]: the design IR text: "
             "cores[0].body[0].body[0].count", '"4"'),
            (lambda d: d.update(ir_version=True),
             "passthrough.py:16: error [design IR]: the design IR text: ir_version", "true"),
            (lambda d: d["tensors"][0]["type"]["shape"].__setitem__(0, 4096.0),
             "passthrough.py:16: error [design IR]: the design IR text: tensors[0].type.shape[0]",
             "4096.0")):
        with pytest.raises(DesignError) as e:
            load_json(edited(built[1], edit))
        assert str(e.value).splitlines()[:2] == [
            f"{path}: Input should be a valid integer", f"  found: {found}"]
    for bad, found in (([1], "[1]"), (None, "null"), ({"a": 1}, '{"a": 1}')):
        with pytest.raises(DesignError) as e:
            load_json(edited(built[1], lambda d: d["defines"].update(N=bad)))
        assert str(e.value).splitlines()[0] == (
            "passthrough.py:16: error [design IR]: the design IR text: defines.N: Input should be "
            "a valid boolean, a valid integer, a valid number or a valid string"), found
    # two fields wrong: one more, not each of the second's four complaints
    with pytest.raises(DesignError) as e:
        load_json(edited(built[1], lambda d: d["defines"].update(N=[1], M=[2])))
    assert str(e.value).splitlines()[0].endswith("a valid number or a valid string (and 1 more)")


def test_a_field_of_the_wrong_shape_is_named_by_its_path_in_the_json(
        built: tuple[Any, str]) -> None:
    """pydantic's own path names each op by its tag (cores.0.body.0.loop.body...): the
    message spells the JSON's."""
    text = edited(built[1], lambda d: loop_of(d)["body"][0].update(count="two"))
    with pytest.raises(DesignError) as e:
        load_json(text)
    assert str(e.value) == (
        "passthrough.py:27: error [design IR]: the design IR text: cores[0].body[0].body[0].count:"
        " Input should be a valid integer\n"
        "  found: \"two\"\n"
        f"  fix: give cores[0].body[0].body[0].count as the design IR has it; {REBUILD}")
    text = edited(built[1], lambda d: d["tensors"][0].pop("type"))
    with pytest.raises(DesignError) as e:
        load_json(text)
    assert str(e.value).splitlines()[:2] == [
        "passthrough.py:16: error [design IR]: the design IR text: tensors[0].type: Field "
        "required", "  found: nothing"]


def test_what_is_no_design_json_is_refused(tmp_path: Path) -> None:
    with pytest.raises(DesignError) as e:
        load_json(tmp_path / "missing.json")
    assert str(e.value) == (
        f"error [design IR]: cannot read {tmp_path / 'missing.json'}: No such file or directory\n"
        f"  found: {tmp_path / 'missing.json'}\n"
        "  fix: give the path of a design.json (aiedsl build writes one into the build "
        "directory), or its text")
    with pytest.raises(DesignError) as e:
        load_json('{"ir_version": 1,')
    assert str(e.value).splitlines()[0].startswith(
        "error [design IR]: the design IR text is not JSON: ")
    with pytest.raises(DesignError) as e:
        load_json("[1, 2]")
    assert str(e.value).splitlines()[0] == (
        "error [design IR]: the design IR text holds a JSON list, not a design")


# -- simulate(placed=...) -------------------------------------------------------------------------

def test_simulate_placed_takes_a_placed_design_of_its_handle(built: tuple[Any, str]) -> None:
    handle, text = built
    assert simulate(handle, placed=load_json(text), seed=0).passed
    with pytest.raises(DesignError) as e:
        simulate(handle, placed=handle.ir)
    assert str(e.value).splitlines()[0] == (
        "designs/passthrough.py:16: error [design IR]: simulate(placed=...): placed is false: "
        "this design is not placed")
    other = load_design(ROOT / "designs" / "passthrough.py", {"N": "8192"})
    with pytest.raises(DesignError) as e:
        simulate(handle, placed=check_design(other.ir)[0])
    assert str(e.value).splitlines()[1:] == [
        "  limit: passthrough's: inp: 4096xi32, out: 4096xi32",
        "  found: inp: 8192xi32, out: 8192xi32",
        "  fix: give the placed design of this handle's design (check_design(handle.ir)[0], or "
        "its build's design.json), or leave placed= out"]


def test_simulate_placed_refuses_a_design_of_other_kernels() -> None:
    """An older build's design.json beside an upgraded design file: the same host tensors,
    other kernels. It ran its own kernels against the handle's reference, a FAIL that blamed
    the design (a tester upgrading aiedsl)."""
    handle = load_design(ROOT / "designs" / "gemm_i8.py", {"M": "256", "K": "256", "N": "256"})
    old = load_design(ROOT / "designs" / "gemm_i8.py",
                      {"M": "256", "K": "256", "N": "256", "SHIFT": "4"})
    with pytest.raises(DesignError) as e:
        simulate(handle, placed=check_design(old.ir)[0])
    lines = str(e.value).splitlines()
    assert lines[0].endswith(
        "error [design IR]: simulate(placed=...): the placed design 'gemm_i8' is not of "
        "'gemm_i8': its kernels differ (matmul_narrow_i8_i8_64x64_4x8x8_shift4 only in the "
        "placed design)")
    assert lines[3] == ("  fix: give the placed design of this handle's design "
                        "(check_design(handle.ir)[0], or its build's design.json), or leave "
                        "placed= out")


def test_the_simulator_runs_a_loop_of_count_0_no_times_as_scf_for(
        built: tuple[Any, str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Past validation (which refuses it), the simulator ran such a loop's body once before
    testing its count, and then on without end: the design simulated as passed. As the
    emitted scf.for, the core now takes nothing, and the drain waits for ever."""
    import aiedsl.sim

    handle, text = built
    ir = load_json(edited(text, lambda d: loop_of(d).update(count=1)))
    zero = ir.model_copy(update={"cores": (ir.cores[0].model_copy(update={"body": (
        ir.cores[0].body[0].model_copy(update={"count": 0}),)}),)})
    monkeypatch.setattr(aiedsl.sim, "validate", lambda d, *a, **k: d)
    with pytest.raises(Deadlock):
        simulate(handle, placed=zero)


def test_an_unknown_narrows_to_type_is_a_design_error(tmp_path: Path) -> None:
    """A scalar's narrows_to= names a dtype too; the walk checked dtype fields only, and an
    unknown one came out of the params check as a raw KeyError (found by fuzzing design.json
    while validate_ir was split)."""
    here = os.getcwd()
    os.chdir(ROOT)
    try:
        text = generate(load_design("designs/threshold_rtp.py")).files["design.json"]
    finally:
        os.chdir(here)

    def edit(d: dict[str, Any]) -> None:
        arg = d["kernels"][0]["args"][2]
        assert arg["narrows_to"] == "u8"
        arg["narrows_to"] = "q9"

    path = tmp_path / "design.json"
    path.write_text(edited(text, edit))
    with pytest.raises(DesignError) as e:
        load_json(path)
    assert str(e.value) == (
        f"threshold_rtp.py:33: error [design IR]: {path}: kernels[0].args[2].narrows_to is "
        "'q9', which aiedsl does not know\n"
        "  limit: one of i8, u8, i16, u16, i32, u32, bf16, f32\n"
        "  found: \"q9\"\n"
        "  fix: use one of i8, u8, i16, u16, i32, u32, bf16, f32")
