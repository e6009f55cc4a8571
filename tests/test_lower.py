"""``aiedsl build`` with mlir-aie's own lowering (``aiedsl/toolchain/lower.py``), tested without
mlir-aie: fake ``aie-opt``/``aie-translate`` scripts record how they are called and hand back a
reference lowering (``mlir-aie-lowered/passthrough_npu1``, made by the real mlir-aie 1e400306
from the same ``aie.mlir``). They test aiedsl's driving of the tools and its reading of what the
tools give, never what the real tools produce; the test at the end runs the real ones and skips
(saying why) where they are absent.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

import aiedsl
from aiedsl.builddir.marker import read_marker
from aiedsl.checks import check_design
from aiedsl.errors import ToolchainError
from aiedsl.loader import load_design
from aiedsl.toolchain.lower import renderable
from aiedsl.toolchain.physical import diff_physical, parse_physical, unread
from aiedsl.targets import get_target
from shared_reference import reference_file

ROOT = Path(__file__).resolve().parents[1]
PASSTHROUGH = ROOT / "designs" / "passthrough.py"

PHYSICAL_PIPELINE = (
    "--pass-pipeline=builtin.module(lower-affine,aie-canonicalize-device,aie.device("
    "aie-assign-lock-ids,aie-register-objectFifos,aie-objectFifo-stateful-transform,"
    "aie-assign-bd-ids,aie-lower-cascade-flows,aie-lower-broadcast-packet,aie-lower-multicast,"
    "aie-assign-tile-controller-ids,aie-generate-column-control-overlay,"
    "aie-assign-buffer-addresses,aie-assign-core-link-files,aie-vector-transfer-lowering),"
    "convert-scf-to-cf,aie.device(aie-create-pathfinder-flows))")
NPU_PIPELINE = (
    "--pass-pipeline=builtin.module(aie-materialize-runtime-sequences,aie.device("
    "aie-materialize-bd-chains,aie-substitute-shim-dma-allocations,"
    "aie-assign-runtime-sequence-bd-ids,aie-dma-tasks-to-npu,aie-dma-to-npu,aie-lower-set-lock))")

FAKE_TOOL = '''#!/bin/sh
# test double for {name}: records its arguments (one per line, then "--"), keeps a copy of its
# input, and writes the reference lowering's file for the pipeline it is given
if [ "$1" = "--version" ]; then echo "{name} 0.9 (test double)"; exit 0; fi
for a in "$@"; do printf '%s\\n' "$a" >> "{log}"; done
echo "--" >> "{log}"
out=""; prev=""; input=""
for a in "$@"; do
  if [ "$prev" = "-o" ]; then out="$a"; else case "$a" in -*) ;; *) input="$a" ;; esac; fi
  prev="$a"
done
cp "$input" "{seen}/$input"
{fail}
case "$*" in
  *aie-create-pathfinder-flows*) cp "{fixture}/physical.mlir" "$out" ;;
  *aie-dma-to-npu*) cp "{fixture}/npu.mlir" "$out" ;;
  *--aie-npu-to-binary*) cp "{fixture}/insts.bin" "$out" ;;
esac
'''


def _script(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)


def _install(root: Path, fixture: Path, log: Path, seen: Path, fail: dict[str, str]) -> None:
    for name in ("aie-opt", "aie-translate"):
        _script(root / "bin" / name, FAKE_TOOL.format(name=name, log=log, seen=seen,
                                                      fixture=fixture, fail=fail.get(name, "")))


@pytest.fixture
def fixture_dir() -> Path:
    return reference_file("mlir-aie-lowered", "passthrough_npu1", "physical.mlir").parent


@pytest.fixture
def lowering_tools(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fixture_dir: Path
                   ) -> dict[str, Path]:
    """An mlir-aie tree with fake aie-opt and aie-translate (no aiecc, no Peano)."""
    log, seen = tmp_path / "calls.log", tmp_path / "seen"
    seen.mkdir()
    _install(tmp_path / "mlir-aie", fixture_dir, log, seen, {})
    monkeypatch.setenv("MLIR_AIE_INSTALL_DIR", str(tmp_path / "mlir-aie"))
    monkeypatch.delenv("PEANO_INSTALL_DIR", raising=False)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    monkeypatch.chdir(tmp_path)
    return {"root": tmp_path, "log": log, "seen": seen, "fixture": fixture_dir,
            "mlir_aie": tmp_path / "mlir-aie"}


def _calls(log: Path) -> list[list[str]]:
    calls, call = [], []
    for line in log.read_text().splitlines():
        if line == "--":
            calls.append(call)
            call = []
        else:
            call.append(line)
    return calls


def test_build_runs_aiecc_s_pipeline_and_writes_the_lowering(
        lowering_tools: dict[str, Path]) -> None:
    art = aiedsl.build(PASSTHROUGH, output="out")
    root, fixture = lowering_tools["root"], lowering_tools["fixture"]
    assert _calls(lowering_tools["log"]) == [
        [PHYSICAL_PIPELINE, "aie.mlir", "-o", "physical.mlir"],
        [NPU_PIPELINE, "physical.mlir", "-o", "npu.mlir"],
        ["--aie-npu-to-binary", "npu.mlir", "-o", "insts.bin"],
    ]
    out = root / "out"
    # the tools read what the build wrote
    assert (lowering_tools["seen"] / "aie.mlir").read_text() == (out / "aie.mlir").read_text()
    assert (out / "physical.mlir").read_text() == (fixture / "physical.mlir").read_text()
    assert (out / "npu.mlir").read_text() == (fixture / "npu.mlir").read_text()
    assert (out / "insts.bin").read_bytes() == (fixture / "insts.bin").read_bytes()
    stamp = json.loads((out / "lowering.json").read_text())
    assert stamp["insts.bin"]["bytes"] == 300 and stamp["insts.bin"]["words"] == 75
    assert stamp["tools"] == {"aie-opt (mlir-aie)": "aie-opt 0.9 (test double)",
                              "aie-translate (mlir-aie)": "aie-translate 0.9 (test double)"}
    assert stamp["commands"][2] == "aie-translate --aie-npu-to-binary npu.mlir -o insts.bin"
    # everything is aiedsl's: listed in the build directory's marker
    listed = read_marker(out)["files"]  # type: ignore[index]
    assert {"physical.mlir", "npu.mlir", "insts.bin", "lowering.json",
            "logs/aie-opt-physical.log", "logs/aie-opt-npu.log",
            "logs/aie-translate.log"} <= set(listed)
    assert (out / "logs" / "aie-translate.log").read_text().startswith(
        f"$ {lowering_tools['mlir_aie']}/bin/aie-translate --aie-npu-to-binary npu.mlir -o "
        "insts.bin\n")
    assert art.lowering is not None and art.lowering.ok and not art.lowering.cached
    assert {"physical.mlir", "npu.mlir", "lowering.json"} <= set(art.files)


def test_a_lowered_build_without_its_marker_holds_only_what_builds_write(
        lowering_tools: dict[str, Path]) -> None:
    """What a refusal tells from an older aiedsl's build, safe to delete: the lowering's files
    are among what builds write."""
    from aiedsl.builddir.marker import MARKER
    from aiedsl.emit import holds_only_a_build

    aiedsl.build(PASSTHROUGH, output="out")
    out = lowering_tools["root"] / "out"
    (out / MARKER).unlink()
    assert holds_only_a_build(out)
    (out / "logs" / "notes.txt").write_text("mine\n")
    assert not holds_only_a_build(out)


def test_report_and_map_are_drawn_from_the_lowering(lowering_tools: dict[str, Path]) -> None:
    aiedsl.build(PASSTHROUGH, output="out")
    out = lowering_tools["root"] / "out"
    report = (out / "report.txt").read_text().splitlines()
    assert report[1] == (
        "streams, ports and allocation drawn from mlir-aie's lowering (physical.mlir, by "
        "aie-opt: aie-opt 0.9 (test double); aie-translate: aie-translate 0.9 (test double)); "
        "the resource table counts aiedsl's plan")
    text = "\n".join(report)
    # the reference lowering's channels, BDs, addresses and banks, stream by stream
    assert "  in_l3: (0,0) MM2S 0 -> (0,1) S2MM 0; 1 wire\n" \
           "  in_l1: (0,1) MM2S 0 -> (0,2) S2MM 0; 1 wire\n" \
           "  out_l1: (0,2) MM2S 0 -> (0,1) S2MM 1; 1 wire\n" \
           "  out_l3: (0,1) MM2S 1 -> (0,0) S2MM 0; 1 wire" in text
    assert "  (0,1) S2MM 0 in_l3 (BDs 0-1), MM2S 0 in_l1 (BDs 2-3), S2MM 1 out_l1 (BDs 24-25), " \
           "MM2S 1 out_l3 (BDs 26-27); 4 locks" in text
    assert "      out_l1_buff_0 4096 B @ 0x00400 bank 0" in text
    svg = (out / "map.svg").read_text()
    assert '<text x="40" y="64" font-size="11" fill="#455a64" class="lowering">streams, ports ' \
           "and allocation drawn from mlir-aie's lowering (physical.mlir, by aie-opt" in svg
    assert svg.count('class="route') >= 4


def test_cli_build_says_it_lowered(lowering_tools: dict[str, Path]) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "400"}
    r = subprocess.run([sys.executable, "-m", "aiedsl.cli", "build", str(PASSTHROUGH), "-o",
                        "out"], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[-1] == (
        "lowered with mlir-aie (aie-opt: aie-opt 0.9 (test double); aie-translate: "
        "aie-translate 0.9 (test double)): physical.mlir, npu.mlir, insts.bin; report.txt and "
        "map.svg are drawn from it")


def test_unchanged_design_is_not_lowered_again(lowering_tools: dict[str, Path]) -> None:
    aiedsl.build(PASSTHROUGH, output="out")
    calls = lowering_tools["log"].read_text()
    art = aiedsl.build(PASSTHROUGH, output="out")
    assert lowering_tools["log"].read_text() == calls  # no tool ran
    assert art.lowering is not None and art.lowering.cached
    out = lowering_tools["root"] / "out"
    fixture = lowering_tools["fixture"]
    assert (out / "insts.bin").read_bytes() == (fixture / "insts.bin").read_bytes()
    assert "drawn from mlir-aie's lowering" in (out / "report.txt").read_text()
    art = aiedsl.build(PASSTHROUGH, defines={"TILE": 512}, output="out")  # a new aie.mlir
    assert art.lowering is not None and not art.lowering.cached
    assert len(_calls(lowering_tools["log"])) == 6


def test_a_build_without_the_tools_drops_the_old_lowering(
        lowering_tools: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """physical.mlir, npu.mlir and insts.bin in a build directory always belong to its aie.mlir:
    a later build that does not lower removes the earlier lowering."""
    aiedsl.build(PASSTHROUGH, output="out")
    monkeypatch.delenv("MLIR_AIE_INSTALL_DIR")
    art = aiedsl.build(PASSTHROUGH, output="out")
    out = lowering_tools["root"] / "out"
    assert art.lowering is None
    for name in ("physical.mlir", "npu.mlir", "insts.bin", "lowering.json"):
        assert not (out / name).exists(), name
    assert "drawn from mlir-aie's lowering (" not in (out / "report.txt").read_text()
    assert "are aiedsl's plan" in (out / "report.txt").read_text().splitlines()[1]
    assert set(read_marker(out)["files"]) == {  # type: ignore[index]
        ".aiedsl-build.json", "aie.mlir", "build.sh", "design.json", "kernels/",
        "kernels/passthrough_i32_1024.cc", "map.svg", "report.txt", "logs/",
        "logs/aie-opt-physical.log", "logs/aie-opt-npu.log", "logs/aie-translate.log"}


def test_lower_false_skips_the_tools(lowering_tools: dict[str, Path]) -> None:
    art = aiedsl.build(PASSTHROUGH, output="out", lower=False)
    assert art.lowering is None and not lowering_tools["log"].exists()
    assert not (lowering_tools["root"] / "out" / "physical.mlir").exists()


def test_a_lowering_error_is_shown_at_the_design_line(lowering_tools: dict[str, Path]) -> None:
    fail = ('echo "loading aie.mlir"; '
            'echo "designs/passthrough.py:18:0: error: \'aie.dma_bd\' op Size may not exceed '
            '1023." >&2; exit 1')
    _install(lowering_tools["mlir_aie"], lowering_tools["fixture"], lowering_tools["log"],
             lowering_tools["seen"], {"aie-opt": fail})
    handle = aiedsl.build(PASSTHROUGH, output="out", lower=False).handle
    with pytest.raises(ToolchainError) as excinfo:
        aiedsl.build(handle, output="out")
    e = excinfo.value
    assert e.exit_code == 5
    mlir_aie = lowering_tools["mlir_aie"]
    # placed at the design's file as aiedsl knows it (loaded by its absolute path here), not
    # at the shortened name the tool printed
    assert str(e) == (
        f"{PASSTHROUGH}:18: error [aie-opt]: aie-opt physical.mlir failed (exit 1)\n"
        f"  $ {mlir_aie}/bin/aie-opt '{PHYSICAL_PIPELINE}' aie.mlir -o physical.mlir\n"
        "    loading aie.mlir\n"
        "    designs/passthrough.py:18:0: error: 'aie.dma_bd' op Size may not exceed 1023.\n"
        "  fix: the whole output is in out/logs/aie-opt-physical.log (the MLIR and C++ are "
        "written; build with --no-lower, or lower=False, to skip mlir-aie's lowering: the map "
        "and report then show aiedsl's plan)")
    out = lowering_tools["root"] / "out"
    assert (out / "aie.mlir").is_file() and not (out / "physical.mlir").exists()
    log = (out / "logs" / "aie-opt-physical.log").read_text()
    assert "designs/passthrough.py:18:0: error" in log
    assert "logs/aie-opt-physical.log" in read_marker(out)["files"]  # type: ignore[index]
    assert len(_calls(lowering_tools["log"])) == 1  # stopped at the failing step


def test_a_failure_in_the_runtime_lowering_names_its_step(lowering_tools: dict[str, Path]) -> None:
    _install(lowering_tools["mlir_aie"], lowering_tools["fixture"], lowering_tools["log"],
             lowering_tools["seen"], {"aie-translate": 'echo "npu.mlir:12:3: error: bad" >&2; '
                                                      'exit 2'})
    with pytest.raises(ToolchainError) as excinfo:
        aiedsl.build(PASSTHROUGH, output="out")
    assert str(excinfo.value).splitlines()[0] == \
        "error [aie-translate]: aie-translate insts.bin failed (exit 2)"
    assert not (lowering_tools["root"] / "out" / "insts.bin").exists()


def test_doctor_reports_the_lowering_tools(lowering_tools: dict[str, Path]) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "400"}
    r = subprocess.run([sys.executable, "-m", "aiedsl.cli", "doctor"], capture_output=True,
                       text=True, env=env)
    lines = r.stdout.splitlines()
    mlir_aie = lowering_tools["mlir_aie"]
    assert any(line.split() == ["aie-opt", "(mlir-aie)", "found",
                                f"{mlir_aie}/bin/aie-opt", "(MLIR_AIE_INSTALL_DIR)", "aie-opt",
                                "0.9", "(test", "double)"] for line in lines), r.stdout
    assert any(line.startswith("aie-translate (mlir-aie)") and " found " in line
               for line in lines)
    assert "aie-opt and aie-translate found: aiedsl build lowers each design with mlir-aie " \
           "(physical.mlir, npu.mlir, insts.bin) and draws map.svg and report.txt from it" in lines
    assert r.returncode == 4  # Peano, aiecc, pyxrt and the NPU are still missing


# -- the reference lowerings, drawn: every stream is found and named after its fifo -------------

FIXTURES = {
    "passthrough_npu1": ("passthrough", {}, None),
    "passthrough_npu2_1col": ("passthrough", {}, "npu2_1col"),
    "vector_scalar_mul_npu1": ("vector_scalar_mul", {}, None),
    "vector_scalar_mul_npu2": ("vector_scalar_mul", {}, "npu2"),
    "gemm_bf16_npu1_512": ("gemm_bf16", {}, None),
    "gemm_bf16_npu1_1024x512x768": ("gemm_bf16", {"M": "1024", "K": "512", "N": "768"}, None),
    "gemm_bf16_npu2_8x4_512": ("gemm_bf16", {"COLS": "8"}, "npu2"),
}


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_every_stream_of_a_reference_lowering_is_drawn(name: str, in_root: Path) -> None:
    """Each DMA-to-DMA stream mlir-aie routed, traced through its switch connections, goes from
    its fifo's producer tile to its consumers' tiles, and every fifo aiedsl streams has one."""
    real = parse_physical(reference_file("mlir-aie-lowered", name, "physical.mlir").read_text())
    design, defines, device = FIXTURES[name]
    placed, _ = check_design(load_design(ROOT / "designs" / f"{design}.py", defines, device).ir)
    drawn = renderable(real, placed, get_target(placed.device))
    streamed = {f.name for f in placed.fifos} - set(placed.physical.shared)  # type: ignore[union-attr]
    assert {r.fifo for r in drawn.routes} == streamed
    for r in drawn.routes:
        f = placed.fifo(r.fifo)
        assert r.src == f.producer.tile, r.fifo
        assert sorted(r.dsts) == sorted(c.tile for c in f.consumers), r.fifo
        chans = {(c.tile, c.direction) for c in drawn.channels if c.fifo == r.fifo}
        assert (r.src, "MM2S") in chans and all((t, "S2MM") in chans for t in r.dsts)
    # the drawing renames channels, never changes the facts the lowering gave
    assert diff_physical(real, drawn, ("buffer", "lock", "bd", "connect", "packet flow")) == []


# -- with the real mlir-aie (skipped here) ---------------------------------------------------------

@pytest.mark.mlir_aie
def test_real_lowering_of_passthrough_matches_the_reference(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fixture_dir: Path) -> None:
    monkeypatch.chdir(tmp_path)
    art = aiedsl.build(PASSTHROUGH, output="out")
    assert art.lowering is not None and art.lowering.ok
    real = parse_physical((tmp_path / "out" / "physical.mlir").read_text())
    want = parse_physical((fixture_dir / "physical.mlir").read_text())
    assert diff_physical(want, real) == []
    assert (tmp_path / "out" / "insts.bin").stat().st_size > 0


def test_a_compile_after_the_lowering_keeps_the_lowerings_logs(
        lowering_tools: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """The compile's tools run beside the build and their logs/ goes in when they are done:
    into the logs/ the lowering filled, beside its logs, not over them."""
    from test_toolchain import FAKE_CLANG, fake_aiecc

    root = lowering_tools["root"]
    _script(root / "peano" / "bin" / "clang++",
            FAKE_CLANG.format(version="19.0.0", log=root / "tools.log", fail=""))
    _script(lowering_tools["mlir_aie"] / "bin" / "aiecc", fake_aiecc(root / "tools.log"))
    (lowering_tools["mlir_aie"] / "include" / "aie_api").mkdir(parents=True)
    (lowering_tools["mlir_aie"] / "include" / "aie_api" / "aie.hpp").write_text("// double\n")
    monkeypatch.setenv("PEANO_INSTALL_DIR", str(root / "peano"))
    art = aiedsl.build(PASSTHROUGH, output="out", compile=True)
    assert art.compiled is not None and not art.compiled.cached
    out = root / "out"
    assert sorted(os.listdir(out / "logs")) == [
        "aie-opt-npu.log", "aie-opt-physical.log", "aie-translate.log", "aiecc.log",
        "passthrough_i32_1024.log"]
    assert read_marker(out)["files"] == sorted(  # type: ignore[index]
        p.relative_to(out).as_posix() + ("/" if p.is_dir() else "") for p in out.rglob("*"))


def test_a_lowering_that_differs_from_the_plan_says_where(lowering_tools: dict[str, Path]) -> None:
    """A report auditor moved a buffer in a copy of the reference lowering: report.txt showed
    the lowering's address and nothing said it was not what aiedsl's checks judged."""
    import shutil

    moved = lowering_tools["root"] / "moved"
    shutil.copytree(lowering_tools["fixture"], moved)
    physical = moved / "physical.mlir"
    physical.write_text(physical.read_text().replace(
        '{address = 1024 : i32, mem_bank = 0 : i32, sym_name = "out_l1_buff_0"}',
        '{address = 9216 : i32, mem_bank = 0 : i32, sym_name = "out_l1_buff_0"}', 1))
    _install(lowering_tools["mlir_aie"], moved, lowering_tools["log"], lowering_tools["seen"], {})
    art = aiedsl.build(PASSTHROUGH, output="out")
    assert art.lowering is not None and art.lowering.differs == [
        "buffer out_l1_buff_0 on (0, 2): 4096 B @ 0x02400, planned 4096 B @ 0x00400"]
    note = (lowering_tools["root"] / "out" / "report.txt").read_text().splitlines()[1]
    assert note.endswith("; it differs from aiedsl's plan, which the checks judged, in 1 place: "
                         "buffer out_l1_buff_0 on (0, 2): 4096 B @ 0x02400, planned 4096 B @ "
                         "0x00400")
    # the unmoved reference agrees with the plan in every place
    _install(lowering_tools["mlir_aie"], lowering_tools["fixture"], lowering_tools["log"],
             lowering_tools["seen"], {})
    again = aiedsl.build(PASSTHROUGH, defines={"TILE": 1024}, output="out2")
    assert again.lowering is not None and again.lowering.differs == []


# an mlir-aie whose objectfifo rework removed aie.objectfifo.subview.access: its parser refuses
# the op at aie.mlir's own line, in MLIR's words for an op no dialect registers
REFUSES_SUBVIEW = (
    'if grep -q "aie.objectfifo.subview.access" "$input"; then '
    'n=$(grep -n "aie.objectfifo.subview.access" "$input" | head -1 | cut -d: -f1); '
    'echo "$input:$n:21: error: custom op \'aie.objectfifo.subview.access\' is unknown (tried '
    '\'func.aie.objectfifo.subview.access\' as well)" >&2; exit 1; fi')


def test_auto_spelling_follows_an_mlir_aie_that_reads_only_the_newer_one(
        lowering_tools: dict[str, Path]) -> None:
    """With mlir_syntax left "auto", an aie-opt that refuses the 2026-03 spelling as it reads
    aie.mlir, and lowers the same design in 2026-11's, gets 2026-11's: the build says why."""
    from aiedsl.toolchain.mlir_syntax import NEWER_MARK

    _install(lowering_tools["mlir_aie"], lowering_tools["fixture"], lowering_tools["log"],
             lowering_tools["seen"], {"aie-opt": REFUSES_SUBVIEW})
    art = aiedsl.build(PASSTHROUGH, output="out")
    out = lowering_tools["root"] / "out"
    mlir = (out / "aie.mlir").read_text()
    assert mlir.splitlines()[2].startswith(NEWER_MARK) and "subview" not in mlir
    assert art.mlir_syntax == "2026-11" and art.lowering is not None and art.lowering.ok
    assert art.respelled == (
        "aie-opt 0.9 (test double) refused aie.mlir in mlir-aie 2026-03's spelling (its "
        "aie.objectfifo.subview.access): aie.mlir:27:21: error: custom op "
        "'aie.objectfifo.subview.access' is unknown (tried 'func.aie.objectfifo.subview.access' "
        "as well)")
    # read once in each spelling, then lowered on: the logs are the lowering that succeeded
    calls = _calls(lowering_tools["log"])
    assert [c[0] for c in calls] == [PHYSICAL_PIPELINE, PHYSICAL_PIPELINE, NPU_PIPELINE,
                                     "--aie-npu-to-binary"]
    assert "error" not in (out / "logs" / "aie-opt-physical.log").read_text()
    assert (out / "physical.mlir").is_file()
    # what is not drawn from the lowering is what the default spelling's build writes
    plain = aiedsl.build(PASSTHROUGH, output="plain", lower=False)
    same = [k for k in plain.files if k not in ("aie.mlir", "report.txt", "map.svg")]
    assert len(same) == 3 and all(art.files[k] == plain.files[k] for k in same)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "400"}
    r = subprocess.run([sys.executable, "-m", "aiedsl.cli", "build", str(PASSTHROUGH), "-o",
                        "cli"], capture_output=True, text=True, env=env,
                       cwd=lowering_tools["root"])
    assert r.returncode == 0, r.stderr
    assert ("aie.mlir is spelled for mlir-aie 2026-11 (--mlir-syntax auto): aie-opt 0.9 (test "
            "double) refused aie.mlir in mlir-aie 2026-03's spelling (its "
            "aie.objectfifo.subview.access): aie.mlir:27:21: error: custom op "
            "'aie.objectfifo.subview.access' is unknown (tried "
            "'func.aie.objectfifo.subview.access' as well); the lowering of 2026-11's spelling "
            "succeeded\n") in r.stdout


def test_a_spelling_asked_for_is_never_changed(lowering_tools: dict[str, Path]) -> None:
    """mlir_syntax="2026-03" given: the refusal is the build's error, with the hint, and
    nothing is tried in another spelling."""
    _install(lowering_tools["mlir_aie"], lowering_tools["fixture"], lowering_tools["log"],
             lowering_tools["seen"], {"aie-opt": REFUSES_SUBVIEW})
    with pytest.raises(ToolchainError) as excinfo:
        aiedsl.build(PASSTHROUGH, output="out", mlir_syntax="2026-03")
    assert "build with --mlir-syntax 2026-11" in str(excinfo.value)
    assert len(_calls(lowering_tools["log"])) == 1


def test_auto_spelling_refused_both_ways_raises_the_first_failure_and_says_so(
        lowering_tools: dict[str, Path]) -> None:
    """An aie-opt that refuses aie.mlir in either spelling: the first refusal is the error;
    it says the newer spelling was tried, and no longer offers it."""
    fail = ('echo "$input:27:21: error: custom op \'aie.objectfifo.subview.access\' is '
            'unknown" >&2; exit 1')
    _install(lowering_tools["mlir_aie"], lowering_tools["fixture"], lowering_tools["log"],
             lowering_tools["seen"], {"aie-opt": fail})
    with pytest.raises(ToolchainError) as excinfo:
        aiedsl.build(PASSTHROUGH, output="out")
    mlir_aie = lowering_tools["mlir_aie"]
    assert str(excinfo.value) == (
        "error [aie-opt]: aie-opt physical.mlir failed (exit 1)\n"
        f"  $ {mlir_aie}/bin/aie-opt '{PHYSICAL_PIPELINE}' aie.mlir -o physical.mlir\n"
        "    aie.mlir:27:21: error: custom op 'aie.objectfifo.subview.access' is unknown\n"
        "  aiedsl then wrote aie.mlir in mlir-aie 2026-11's spelling (--mlir-syntax auto), "
        "which this mlir-aie refused too: aie.mlir:27:21: error: custom op "
        "'aie.objectfifo.subview.access' is unknown\n"
        "  fix: the whole output is in out/logs/aie-opt-physical.log (the MLIR and C++ are "
        "written; build with --no-lower, or lower=False, to skip mlir-aie's lowering: the map "
        "and report then show aiedsl's plan)")
    out = lowering_tools["root"] / "out"
    assert "subview.access" in (out / "aie.mlir").read_text()  # the first spelling's, as raised
    assert len(_calls(lowering_tools["log"])) == 2


@pytest.mark.parametrize("name", ["gemm_bf16_npu1_512", "passthrough_npu1"])
def test_lock_counts_spelled_as_ssa_values_read_the_same(name: str) -> None:
    """mlir-aie since PR 3308 (July 2026) spells a use_lock's count as an i32 SSA value: the
    reader resolves it through its arith.constant, and every BD reads as the literal spelling
    did (read by the 2026-03 pattern alone, each lock came back None, unsaid: a reviewer)."""
    import re

    text = reference_file("mlir-aie-lowered", name, "physical.mlir").read_text()
    counts = sorted({int(n) for n in re.findall(r"aie\.use_lock\(%[\w.$-]+, \w+, (\d+)\)", text)})
    assert counts
    # each DMA block defines its constants first, as the newer lowering does
    ssa = re.sub(r"aie\.use_lock\((%[\w.$-]+), (\w+), (\d+)\)",
                 lambda m: f"aie.use_lock({m[1]}, {m[2]}, %c{m[3]}_i32)", text)
    consts = "".join(f"\n      %c{n}_i32 = arith.constant {n} : i32" for n in counts)
    ssa = re.sub(r"(= aie\.(?:mem|memtile_dma|shim_dma)\(%[\w.$-]+\) \{)", r"\1" + consts, ssa)
    assert parse_physical(ssa) == parse_physical(text)
    assert unread(ssa) == unread(text) == []
    missing = ssa.replace(f"%c{counts[0]}_i32 = arith.constant {counts[0]} : i32", "")
    assert unread(missing) == [
        f"lock counts given by %c{counts[0]}_i32, which no arith.constant defines (those BDs' "
        "acquires and releases)"]
