"""The build directory: aiedsl never deletes what it did not write, and replaces a build whole.

Refusals (the working directory, a directory with the user's files, a file dropped into a
build), an interrupted and a killed rebuild (the previous build survives, its compiled outputs
included), concurrent builds into one directory (one wins whole, the others fail cleanly), the
marker after ``--compile``, and single files (map.svg, traces) written over nothing foreign.
"""

from __future__ import annotations

import errno
import json
import socket
import multiprocessing
import os
import re
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

import aiedsl
from aiedsl.builddir.build import tool_outputs
from aiedsl.builddir.lock import claim
from aiedsl.builddir.marker import MARKER, entries, read_marker, write_marker
from aiedsl.cli.process import main
from aiedsl.emit import Generated, generate, write
from aiedsl.errors import DesignError, ToolchainError
from aiedsl.loader import load_design

ROOT = Path(__file__).resolve().parents[1]
PASSTHROUGH = ROOT / "designs" / "passthrough.py"


def _gen(n: int = 4096) -> Generated:
    return generate(load_design(PASSTHROUGH, {"N": str(n)}))


def _tree(root: Path) -> dict[str, bytes | None]:
    """Every entry under ``root`` with its bytes (None for a folder)."""
    return {rel: None if rel.endswith("/") else (root / rel).read_bytes()
            for rel in entries(root)}


def _build_of(gen: Generated) -> dict[str, bytes | None]:
    """What a fresh build directory of ``gen`` holds, without its marker."""
    tree: dict[str, bytes | None] = {rel: text.encode() for rel, text in gen.files.items()}
    tree.update({f"{p}/": None for rel in gen.files for p in Path(rel).parents if str(p) != "."})
    return tree


def _assert_whole(out: Path, want: dict[str, bytes | None]) -> None:
    """``out`` holds exactly ``want`` plus a marker listing exactly what is there."""
    tree = _tree(out)
    assert tree.pop(MARKER) is not None
    assert tree == want
    marker = read_marker(out)
    assert marker is not None and marker["files"] == entries(out)


def _compiled_build(out: Path, gen: Generated) -> dict[str, bytes | None]:
    """A build of ``gen`` in ``out`` whose (faked) toolchain left an xclbin and instructions,
    listed in its marker as --compile lists them; returns the directory's content."""
    write(gen, out)
    with tool_outputs(out):
        (out / "aie.xclbin").write_bytes(b"xclbin of the previous build")
        (out / "insts.bin").write_bytes(b"\x01\x00\x00\x00")
    return _tree(out)


# -- refusals -------------------------------------------------------------------------------------


def test_cli_refuses_the_working_directory_and_a_directory_with_user_files(
        tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("my notes\n")
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "x.bin").write_bytes(b"\x00\x01")
    mine = tmp_path / "mine"
    mine.mkdir()
    for name in ("a.txt", "b.txt", "c.txt", "d.txt", "e.txt", "f.txt"):
        (mine / name).write_text(name)
    (mine / "photos").mkdir()
    (mine / "photos" / "p.jpg").write_bytes(b"jpg")
    before = _tree(tmp_path)
    procs = [subprocess.Popen([sys.executable, "-m", "aiedsl", "build", str(PASSTHROUGH),
                               "-o", where], cwd=tmp_path, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for where in (".", "mine")]
    (_, here), (_, there) = (p.communicate() for p in procs)
    assert [p.returncode for p in procs] == [2, 2]
    assert here == (
        "error [output directory]: cannot build into . (the working directory): a build "
        "replaces its output directory whole, by renaming it\n"
        "  fix: build into a directory of its own, e.g. -o build/passthrough\n")
    assert there == (
        "error [output directory]: mine holds 7 files aiedsl did not write, and a build "
        "replaces the whole directory\n"
        "  limit: a new or empty directory, or a build directory holding only what aiedsl "
        "wrote\n"
        "  found: a.txt, b.txt, c.txt, d.txt, e.txt and 2 more\n"
        "  fix: choose another directory with -o, or move those files out of mine\n")
    assert _tree(tmp_path) == before  # every user file still there, unchanged; nothing added


def test_an_ancestor_of_the_working_directory_is_refused(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "here").mkdir()
    monkeypatch.chdir(tmp_path / "here")
    with pytest.raises(DesignError) as e:
        write(_gen(), "..")
    assert str(e.value) == (
        "error [output directory]: cannot build into .. (it holds the working directory): a "
        "build replaces its output directory whole, by renaming it\n"
        "  fix: build into a directory of its own, e.g. -o build/passthrough")
    assert entries(tmp_path) == ["here/"]


def test_a_generated_file_edited_by_hand_makes_the_next_build_refuse_naming_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A rebuild replaced a hand-edited build.sh or aie.mlir with the generated one: the edit,
    the user's work, was lost with no word (a newcomer's tester)."""
    monkeypatch.chdir(tmp_path)
    out = write(_gen(), "p")
    write(_gen(), "p")  # unchanged: rebuilt as before
    with open(out / "build.sh", "a") as f:
        f.write("# my change\n")
    before = _tree(out)
    with pytest.raises(DesignError) as e:
        write(_gen(8192), "p")
    assert str(e.value) == (
        "error [output directory]: p holds 1 file aiedsl wrote that was edited since, and a "
        "build replaces the whole directory: the edit would be lost\n"
        "  found: build.sh\n"
        "  fix: copy it out of p to keep the edit, then delete it there (the build writes it "
        "again), or build into another directory with -o")
    assert _tree(out) == before
    assert os.listdir(tmp_path) == ["p"]
    (out / "build.sh").unlink()  # as the fix says: the build then writes it again
    write(_gen(8192), "p")
    _assert_whole(out, _build_of(_gen(8192)))


def test_a_file_a_command_rewrites_in_a_build_is_not_taken_for_an_edit(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """map.svg is the build's, and ``aiedsl map -o`` writes it again: its digest is what that
    wrote, so the next build does not refuse it (and would refuse an edit after it)."""
    import hashlib

    monkeypatch.chdir(tmp_path)
    out = write(_gen(), "p")
    assert "map.svg" in read_marker(out)["digests"]
    main(["map", str(PASSTHROUGH), "-o", "p/map.svg"])
    assert read_marker(out)["digests"]["map.svg"] == hashlib.sha256(
        (out / "map.svg").read_bytes()).hexdigest()
    write(_gen(8192), "p")
    _assert_whole(out, _build_of(_gen(8192)))


def test_a_file_dropped_into_a_build_makes_the_next_build_refuse_naming_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    out = write(_gen(), "p")
    (out / "kernels" / "mine.cc").write_text("// my kernel\n")
    before = _tree(out)
    with pytest.raises(DesignError) as e:
        write(_gen(8192), "p")
    assert str(e.value) == (
        "error [output directory]: p holds 1 file aiedsl did not write, and a build replaces "
        "the whole directory\n"
        "  limit: a new or empty directory, or a build directory holding only what aiedsl "
        "wrote\n"
        "  found: kernels/mine.cc\n"
        "  fix: choose another directory with -o, or move those files out of p")
    assert _tree(out) == before
    assert os.listdir(tmp_path) == ["p"]  # nothing staged, nothing left


def test_an_empty_directory_is_built_into(tmp_path: Path) -> None:
    (tmp_path / "p").mkdir()
    gen = _gen()
    write(gen, tmp_path / "p")
    _assert_whole(tmp_path / "p", _build_of(gen))


# -- interrupted and killed rebuilds --------------------------------------------------------------


def test_an_interrupted_rebuild_leaves_the_previous_build_whole(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "p"
    before = _compiled_build(out, _gen())
    from aiedsl.builddir import build

    real_put = build._put
    written: list[Path] = []

    def put(path: Path, text: str) -> None:
        if len(written) == 3:
            raise KeyboardInterrupt  # Ctrl-C, three files into the new build
        written.append(path)
        real_put(path, text)

    monkeypatch.setattr(build, "_put", put)
    with pytest.raises(KeyboardInterrupt):
        write(_gen(8192), out)
    assert len(written) == 3
    assert _tree(out) == before  # aie.xclbin and insts.bin included
    assert os.listdir(tmp_path) == ["p"]  # no staging dir left


def test_without_renameat2_an_interrupt_between_the_two_renames_puts_the_old_build_back(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from aiedsl.builddir import swap

    out = tmp_path / "p"
    before = _compiled_build(out, _gen())
    monkeypatch.setattr(swap, "_renameat2", lambda: None)  # no RENAME_EXCHANGE here
    real_rename = os.rename
    renames: list[str] = []

    def rename(src: str | Path, dst: str | Path) -> None:
        renames.append(Path(dst).name)
        if len(renames) == 2:
            raise KeyboardInterrupt  # the old build is aside, the new one not yet in
        real_rename(src, dst)

    monkeypatch.setattr(os, "rename", rename)
    with pytest.raises(KeyboardInterrupt):
        write(_gen(8192), out)
    monkeypatch.setattr(os, "rename", real_rename)
    assert renames[:2] == ["old", "p"]
    assert _tree(out) == before
    assert os.listdir(tmp_path) == ["p"]
    gen = _gen(8192)
    write(gen, out)  # and, uninterrupted, the fallback replaces the build
    _assert_whole(out, _build_of(gen))  # the old xclbin was made from another aie.mlir: gone
    assert os.listdir(tmp_path) == ["p"]


def _dropping(monkeypatch: pytest.MonkeyPatch, drops: dict[Path, str]) -> None:
    """The build's ``_put`` seam, slowed as a slow disk would: the user writes ``drops`` (path
    -> text) into the build directory while the new build is being written."""
    from aiedsl.builddir import build

    real_put = build._put
    count = [0]

    def put(path: Path, text: str) -> None:
        count[0] += 1
        if count[0] == 2:
            for drop, data in drops.items():
                drop.parent.mkdir(parents=True, exist_ok=True)
                drop.write_text(data)
        real_put(path, text)

    monkeypatch.setattr(build, "_put", put)


@pytest.mark.parametrize("renameat2", [True, False])
def test_a_file_put_in_while_a_build_writes_is_moved_into_the_new_build_not_deleted(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture,
        renameat2: bool) -> None:
    """A tester's: building() checked for foreign files once, as it took the lock, and after
    the swap deleted all of the old build, notes.txt saved into it meanwhile included (exit 0).
    Only what the old build held when the lock was taken goes; what came since is moved into
    the new build, where it was put, and a warning names it. The new build stays in."""
    from aiedsl.builddir import swap

    if not renameat2:
        monkeypatch.setattr(swap, "_renameat2", lambda: None)  # two renames, and link+unlink
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "p"
    _compiled_build(out, _gen())
    _dropping(monkeypatch, {out / "notes.txt": "my notes\n",
                            out / "kernels" / "mine.cc": "// mine\n",
                            out / "photos" / "a.jpg": "jpg"})
    capsys.readouterr()
    assert _main("build", str(PASSTHROUGH), "-o", "p", "-D", "N=8192") == 0
    assert capsys.readouterr().err == (
        "warning [output directory]: kernels/mine.cc, notes.txt, photos/ appeared in p while "
        "the build replaced it: aiedsl did not write them, so they were moved into the new "
        "build, not deleted\n"
        "  fix: move them out of p (a build directory holds only what aiedsl writes: the next "
        "build of p refuses to start while they are there)\n"
        "note [output directory]: p no longer holds aie.xclbin, insts.bin, the toolchain's "
        "outputs of its previous build: aie.mlir changed, so they were not this build's; run "
        "its build.sh (or build --compile) to make them again\n")
    gen = _gen(8192)
    tree = _tree(out)
    assert tree.pop(MARKER) is not None
    assert tree == {**_build_of(gen), "notes.txt": b"my notes\n",
                    "kernels/mine.cc": b"// mine\n", "photos/": None, "photos/a.jpg": b"jpg"}
    assert read_marker(out)["files"] == sorted([*_build_of(gen), MARKER])  # type: ignore[index]
    assert os.listdir(tmp_path) == ["p"]  # no staging folder left
    with pytest.raises(DesignError, match=r"found: kernels/mine\.cc, notes\.txt, photos/\n"):
        write(gen, out)


def test_a_file_put_in_while_a_build_writes_with_a_name_the_new_build_writes_is_kept(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    """What cannot go back (the new build wrote a file of its name) is not deleted either: it
    stays in the staging folder, a warning names it, and the next build refuses to start until
    it is moved out."""
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "p"
    write(_gen(), out)
    kernel = Path("kernels") / "passthrough_i32_2048.cc"  # TILE=2048's, not TILE=1024's
    _dropping(monkeypatch, {out / kernel: "// mine\n"})
    capsys.readouterr()
    assert _main("build", str(PASSTHROUGH), "-o", "p", "-D", "TILE=2048") == 0
    assert capsys.readouterr().err == (
        "warning [output directory]: kept .p.aiedsl-new, aiedsl's staging folder of p: it holds "
        f"what aiedsl did not write (build/{kernel})\n"
        "  fix: move it out of .p.aiedsl-new, then delete .p.aiedsl-new (the next build of p "
        "refuses to start while it is there)\n")
    gen = generate(load_design(PASSTHROUGH, {"TILE": "2048"}))
    _assert_whole(out, _build_of(gen))  # the new build is in, whole
    staging = tmp_path / ".p.aiedsl-new"
    assert entries(staging) == ["build/", f"build/{MARKER}", "build/kernels/", f"build/{kernel}"]
    assert (staging / "build" / kernel).read_text() == "// mine\n"
    assert _main("build", str(PASSTHROUGH), "-o", "p") == 2
    assert f"found: build/{kernel}\n" in capsys.readouterr().err
    assert (staging / "build" / kernel).read_text() == "// mine\n"


def test_a_file_put_in_while_a_build_writes_beside_build_sh_s_outputs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    """build.sh's outputs, aiedsl's by its record and their times, are carried into a rebuild
    of the same design by hard links, which change their times: the old build's are still
    removed as aiedsl's, and only the file put in meanwhile is moved back."""
    _fake_tools(tmp_path / "tools", monkeypatch)
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "out"
    gen = _gen()
    write(gen, out)
    subprocess.run(["bash", "out/build.sh"], check=True, capture_output=True)
    made = {rel: data for rel, data in _tree(out).items() if rel not in _build_of(gen)}
    made.pop(MARKER)
    _dropping(monkeypatch, {out / "notes.txt": "mine\n"})
    capsys.readouterr()
    assert _main("build", str(PASSTHROUGH), "-o", "out") == 0
    assert capsys.readouterr().err.startswith(
        "warning [output directory]: notes.txt appeared in out while the build replaced it: ")
    tree = _tree(out)
    assert tree.pop(MARKER) is not None and tree.pop("notes.txt") == b"mine\n"
    assert tree == {**_build_of(gen), **made}
    assert sorted(os.listdir(tmp_path)) == ["out", "tools"]


def test_a_rebuild_stopped_before_its_swap_leaves_build_sh_s_outputs_aiedsls(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Carried into the new build by hard links, build.sh's outputs got a newer ctime than
    build.sh's record, which vouches for them only when they are no newer: a rebuild stopped
    before its swap left them in the old build looking the user's, and the next build refused
    aie.xclbin, insts.bin and the kernel's .o. They are copied, not linked."""
    from aiedsl.builddir import build

    _fake_tools(tmp_path / "tools", monkeypatch)
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "out"
    gen = _gen()
    write(gen, out)
    subprocess.run(["bash", "out/build.sh"], check=True, capture_output=True)
    before = _tree(out)
    real_swap = build._swap

    def stopped(new: Path, out: Path) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(build, "_swap", stopped)
    with pytest.raises(KeyboardInterrupt):
        write(gen, out)
    assert _tree(out) == before
    monkeypatch.setattr(build, "_swap", real_swap)
    write(gen, out)
    made = {rel: data for rel, data in before.items() if rel not in _build_of(gen)}
    made.pop(MARKER)
    _assert_whole(out, {**_build_of(gen), **made})


KILLED_WRITER = '''
import sys, time
from pathlib import Path
import aiedsl.builddir.build as build
from aiedsl.emit import generate, write
from aiedsl.loader import load_design

real_put = build._put
count = [0]

def put(path, text):
    real_put(path, text)
    count[0] += 1
    if count[0] == 2:
        print("writing", flush=True)
        time.sleep(60)  # killed here

build._put = put
write(generate(load_design(sys.argv[1], {"N": "8192"})), sys.argv[2])
'''


def test_a_killed_build_leaves_the_previous_build_whole_and_the_next_build_cleans_up(
        tmp_path: Path) -> None:
    out = tmp_path / "p"
    before = _compiled_build(out, _gen())
    child = subprocess.Popen([sys.executable, "-c", textwrap.dedent(KILLED_WRITER),
                              str(PASSTHROUGH), str(out)], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline() == "writing\n"
    finally:
        child.kill()  # SIGKILL: no handler, no cleanup
        child.wait()
    assert _tree(out) == before
    staging = tmp_path / ".p.aiedsl-new"
    assert json.loads((staging / "pid").read_text())["pid"] == child.pid  # its leftover
    gen = _gen()
    write(gen, out)  # the dead build's staging dir is removed, not taken for a live one
    _assert_whole(out, {**_build_of(gen), "aie.xclbin": before["aie.xclbin"],
                        "insts.bin": before["insts.bin"]})  # same design: its outputs kept
    assert os.listdir(tmp_path) == ["p"]


def test_a_rebuild_of_other_tool_inputs_says_which_tool_outputs_it_did_not_keep(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The first rebuild after an upgrade, whose kernel C++ differed in a comment, dropped the
    xclbin, instructions and objects build.sh had made, and said nothing (a tester's find)."""
    out = tmp_path / "p"
    _compiled_build(out, _gen())
    capsys.readouterr()
    write(_gen(), out)  # the same inputs: the outputs stay, and nothing is said
    assert (out / "aie.xclbin").exists() and capsys.readouterr().err == ""
    write(_gen(8192), out)
    assert not (out / "aie.xclbin").exists()
    assert capsys.readouterr().err == (
        f"note [output directory]: {out} no longer holds aie.xclbin, insts.bin, the "
        "toolchain's outputs of its previous build: aie.mlir changed, so they were not this "
        "build's; run its build.sh (or build --compile) to make them again\n")


def test_a_rebuild_of_a_build_whose_marker_has_no_digests_says_an_edit_was_not_told(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An older aiedsl's marker records no digests: a hand edit there is replaced as before
    (refusing would refuse every such build), but no longer without a word (a tester)."""
    out = tmp_path / "p"
    write(_gen(), out)
    marker = read_marker(out)
    assert marker is not None
    del marker["digests"]
    (out / MARKER).write_text(json.dumps(marker))
    with open(out / "aie.mlir", "a") as f:
        f.write("// hand tuned\n")
    capsys.readouterr()
    write(_gen(), out)
    assert "hand tuned" not in (out / "aie.mlir").read_text()
    assert capsys.readouterr().err == (
        f"note [output directory]: {out} was written by an older aiedsl, which recorded no "
        "digest of its files: a file edited there by hand, if any, could not be told from "
        "aiedsl's, and was replaced; from this build on, an edited file is refused instead\n")
    with open(out / "aie.mlir", "a") as f:
        f.write("// hand tuned\n")
    with pytest.raises(DesignError, match="edited since"):
        write(_gen(), out)


def _killed_builds_staging(out: Path) -> Path:
    """The staging folder a build of ``out`` killed midway (SIGKILL) leaves, its pid file as
    that build wrote it."""
    child = subprocess.Popen([sys.executable, "-c", textwrap.dedent(KILLED_WRITER),
                              str(PASSTHROUGH), str(out)], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline() == "writing\n"
    finally:
        child.kill()
        child.wait()
    return out.parent / f".{out.name}.aiedsl-new"


def test_a_killed_builds_pid_another_process_has_since_is_still_a_leftover(
        tmp_path: Path) -> None:
    """A killed build's pid, taken since by another process, made every later build say
    "another aiedsl build (pid N) is writing" (a tester, after pid reuse): the lock is the
    flock the build held on its pid file, which died with it."""
    out = tmp_path / "p"
    staging = _killed_builds_staging(out)
    info = json.loads((staging / "pid").read_text())
    assert info["flock"] is True
    for pid in (os.getppid(), 1):  # alive, and no aiedsl build
        (staging / "pid").write_text(json.dumps({**info, "pid": pid}))
        gen = _gen()
        write(gen, out)
        _assert_whole(out, _build_of(gen))
        assert os.listdir(tmp_path) == ["p"]
        staging.mkdir()
        (staging / "build").mkdir()


def test_a_pid_file_whose_lock_is_held_is_a_live_build(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Whatever process the pid names, a held lock is a build writing (the message names the
    pid the file holds)."""
    import fcntl

    monkeypatch.chdir(tmp_path)
    staging = tmp_path / ".p.aiedsl-new"
    staging.mkdir()
    (staging / "pid").write_text(json.dumps({"pid": os.getppid(), "host": socket.gethostname(),
                                             "flock": True}))
    fd = os.open(staging / "pid", os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        with pytest.raises(DesignError) as e:
            write(_gen(), "p")
    finally:
        os.close(fd)
    assert str(e.value) == (
        f"error [output directory]: another aiedsl build (pid {os.getppid()}) is writing p\n"
        "  fix: try again when it is done (if no aiedsl is running, delete .p.aiedsl-new)")
    assert os.listdir(tmp_path) == [".p.aiedsl-new"]
    write(_gen(), "p")  # let go of: a leftover
    assert os.listdir(tmp_path) == ["p"]


def test_a_locked_pid_file_of_this_process_is_live_while_this_process_holds_it(
        tmp_path: Path) -> None:
    """This process's own pid is judged by what it holds, not by flock, which a file system
    emulating it with POSIX locks (NFS) would answer "free" to, dropping the lock as it asks."""
    from aiedsl.builddir.lock import holder

    out, staging = tmp_path / "p", tmp_path / ".p.aiedsl-new"
    with claim(out, "p"):
        assert json.loads((staging / "pid").read_text())["flock"] is True
        assert holder(staging, locked=False) == f"pid {os.getpid()}"
    staging.mkdir()  # a pid file of this pid, of a claim this process no longer holds
    (staging / "pid").write_text(json.dumps({"pid": os.getpid(), "host": socket.gethostname(),
                                             "flock": True}))
    assert holder(staging, locked=False) is None


def test_a_staging_dir_without_a_pid_is_a_killed_builds_leftover(tmp_path: Path) -> None:
    staging = tmp_path / ".p.aiedsl-new"
    (staging / "build").mkdir(parents=True)  # its pid gone, as the build was letting go of it
    write_marker(staging / "build", "passthrough", ["aie.mlir"])  # marked first, as a build does
    (staging / "build" / "aie.mlir").write_text("half a build\n")
    (staging / "compile").mkdir()  # and a compile's folder, made and killed before its marker
    gen = _gen()
    write(gen, tmp_path / "p")
    _assert_whole(tmp_path / "p", _build_of(gen))
    assert os.listdir(tmp_path) == ["p"]


def test_a_leftover_that_cannot_be_removed_is_named_by_its_whole_path(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    """A killed build's leftover that could not be removed was reported at the file's bare
    name ("Permission denied (at passthrough_i32_1024.cc) ... make . writable", a tester):
    rmtree's error names only the entry. It now names the path and the folder to fix."""
    monkeypatch.chdir(tmp_path)
    kernels = tmp_path / "x" / ".foo.aiedsl-new" / "build" / "kernels"
    kernels.mkdir(parents=True)  # a killed build's, without its pid
    write_marker(kernels.parent, "passthrough", ["kernels/", "kernels/passthrough_i32_1024.cc"])
    (kernels / "passthrough_i32_1024.cc").write_text("half\n")
    real_unlink = os.unlink

    def unlink(path: Any, *args: Any, **kwargs: Any) -> None:
        if os.fspath(path).endswith("passthrough_i32_1024.cc"):  # as a read-only folder does
            raise PermissionError(13, "Permission denied", path)
        real_unlink(path, *args, **kwargs)

    monkeypatch.setattr(os, "unlink", unlink)
    assert _main("build", str(PASSTHROUGH), "-o", "x/foo") == 2
    where = "x/.foo.aiedsl-new/build/kernels"
    assert capsys.readouterr().err == (
        f"error [output directory]: cannot write x/foo: Permission denied (at {where}/"
        "passthrough_i32_1024.cc)\n"
        f"  fix: make {where} writable for you (ls -ld {where} shows who may write it), or "
        "choose another path with -o\n")


@pytest.mark.parametrize("how", ["a file that cannot be deleted", "a read-only folder"])
def test_a_previous_build_that_cannot_be_removed_is_said_and_the_next_build_removes_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture,
        how: str) -> None:
    """A rebuild whose old build held a file that could not be deleted (chattr +i, a tester)
    exited 0 and said nothing; the old build stayed in .b.aiedsl-new without its marker, and
    the next build refused that folder as holding what aiedsl never puts there. The marker now
    stays while anything of the folder does, and the build warns, naming the path and why."""
    if how == "a read-only folder" and (os.name != "posix" or os.geteuid() == 0):
        pytest.skip("root deletes from a chmod 555 folder anyway")
    monkeypatch.chdir(tmp_path)
    assert _main("build", str(PASSTHROUGH), "-o", "lo/b") == 0
    staging = tmp_path / "lo" / ".b.aiedsl-new"
    real_unlink = os.unlink

    def unlink(path: Any, *args: Any, **kwargs: Any) -> None:
        if os.fspath(path).endswith("passthrough_i32_1024.cc"):  # as chattr +i on its folder
            raise PermissionError(errno.EPERM, "Operation not permitted", path)
        real_unlink(path, *args, **kwargs)

    if how == "a read-only folder":
        (tmp_path / "lo" / "b" / "kernels").chmod(0o555)
    else:
        monkeypatch.setattr(os, "unlink", unlink)
    capsys.readouterr()
    try:
        assert _main("build", str(PASSTHROUGH), "-o", "lo/b", "-D", "N=8192") == 0
    finally:
        monkeypatch.setattr(os, "unlink", real_unlink)
        for kernels in (tmp_path / "lo" / "b" / "kernels", staging / "build" / "kernels"):
            if kernels.is_dir():
                kernels.chmod(0o755)
    reason = "Permission denied" if how == "a read-only folder" else "Operation not permitted"
    where = "lo/.b.aiedsl-new/build/kernels"
    file = f"{where}/passthrough_i32_1024.cc"
    fix = (f"make {where} writable for you (ls -ld {where} shows who may write it)"
           if how == "a read-only folder" else  # the folder is writable: the file's attribute
           f"let {file} be removed (lsattr {file} shows an immutable or append-only file, "
           "which chattr -i or -a clears)")
    assert capsys.readouterr().err == (
        f"warning [output directory]: could not remove lo/.b.aiedsl-new, aiedsl's staging "
        f"folder of lo/b: {reason} (at {file})\n"
        f"  fix: {fix}, and the next build of lo/b removes it: it holds only what aiedsl "
        "wrote\n")
    _assert_whole(tmp_path / "lo" / "b", _build_of(_gen(8192)))  # the new build is in, whole
    # what is left of the old build still holds its marker, listing it
    assert entries(staging) == ["build/", f"build/{MARKER}", "build/kernels/",
                                "build/kernels/passthrough_i32_1024.cc"]
    assert "kernels/passthrough_i32_1024.cc" in read_marker(staging / "build")["files"]  # type: ignore[index]
    gen = _gen()
    assert _main("build", str(PASSTHROUGH), "-o", "lo/b") == 0  # takes it for a leftover
    assert capsys.readouterr().err == ""
    _assert_whole(tmp_path / "lo" / "b", _build_of(gen))
    assert os.listdir(tmp_path / "lo") == ["b"]


@pytest.mark.parametrize("kind", ["folder", "file", "link", "in build/", "in old/"])
def test_a_users_folder_named_like_a_staging_dir_is_never_deleted(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture,
        kind: str) -> None:
    """A folder the user named .foo.aiedsl-new was deleted as a killed build's leftover (a
    tester). A leftover is known by what aiedsl puts there: anything else is refused.

    In build/ or old/, aiedsl's names, the user's files were deleted, or old/ moved to x/foo
    and the build refused it as another build's, naming its own pid (a tester): a folder
    aiedsl makes there holds its marker, and nothing the marker does not list."""
    monkeypatch.chdir(tmp_path)
    staging = tmp_path / "x" / ".foo.aiedsl-new"
    staging.parent.mkdir()
    found = {"folder": "notes.txt", "file": "a file", "link": "a symbolic link",
             "in build/": "build/thesis.txt", "in old/": "old/precious.txt"}[kind]
    if kind == "folder":
        (staging / "build").mkdir(parents=True)  # what aiedsl puts there, and one file more
        (staging / "notes.txt").write_text("data\n")
    elif kind.startswith("in "):
        (staging / found).parent.mkdir(parents=True)
        (staging / found).write_text("mine\n")
    elif kind == "file":
        staging.write_text("data\n")
    else:
        (tmp_path / "mine").mkdir()
        staging.symlink_to(tmp_path / "mine")
    def state() -> dict[str, Any]:
        return {rel: os.readlink(tmp_path / rel) if (tmp_path / rel).is_symlink() else
                None if rel.endswith("/") else (tmp_path / rel).read_bytes()
                for rel in entries(tmp_path)}

    before = state()
    assert _main("build", str(PASSTHROUGH), "-o", "x/foo") == 2
    assert capsys.readouterr().err == (
        "error [output directory]: x/.foo.aiedsl-new is in the way of x/foo: aiedsl stages a "
        "build of x/foo in a folder of that name, and this one holds what aiedsl never puts "
        f"there\n  found: {found}\n"
        "  fix: move x/.foo.aiedsl-new out of the way (aiedsl leaves it alone: it may be yours), "
        "or choose another directory with -o\n")
    assert state() == before
    with pytest.raises(DesignError, match="is in the way of x/foo"):
        with claim(tmp_path / "x" / "foo", "x/foo"):  # the lock refuses it too
            pass
    assert state() == before


def test_a_file_dropped_in_while_a_build_takes_the_lock_is_named_not_called_a_build(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Found under the build's own lock, a user's file was reported as "another aiedsl build
    (pid <its own pid>) is writing" (a tester)."""
    from aiedsl.builddir import build

    monkeypatch.chdir(tmp_path)
    write(_gen(), "p")
    real_check = build.check_output_dir

    def check_then_drop(out_dir: str | Path, design: str, older_build: Any = None) -> None:
        real_check(out_dir, design, older_build)
        (tmp_path / "p" / "notes.txt").write_text("mine\n")  # the user, meanwhile

    monkeypatch.setattr(build, "check_output_dir", check_then_drop)
    with pytest.raises(DesignError) as e:
        write(_gen(8192), "p")
    assert str(e.value) == (
        "error [output directory]: p holds 1 file aiedsl did not write, and a build replaces "
        "the whole directory\n"
        "  limit: a new or empty directory, or a build directory holding only what aiedsl "
        "wrote\n"
        "  found: notes.txt\n"
        "  fix: choose another directory with -o, or move those files out of p")
    assert (tmp_path / "p" / "notes.txt").read_text() == "mine\n"
    assert sorted(os.listdir(tmp_path)) == ["p"]


# -- concurrent builds ----------------------------------------------------------------------------

def _racer(barrier: Any, n: int, err: str) -> None:
    """One build process: wait for the others, then ``aiedsl build`` as the command line runs it
    (exit 0, or a DesignError printed and its exit code, 75 for a busy directory; any other
    exception is a traceback)."""
    from aiedsl.builddir import build
    from aiedsl.cli.process import run

    real_put = build._put

    def put(path: Path, text: str) -> None:
        time.sleep(0.003)  # a slower disk: the writes of simultaneous builds overlap for sure
        real_put(path, text)

    build._put = put  # type: ignore[assignment]
    sys.stdout = open(os.devnull, "w")  # noqa: SIM115  (the process ends with os._exit)
    sys.stderr = open(err, "w")  # noqa: SIM115
    barrier.wait()
    sys.argv = ["aiedsl", "build", str(PASSTHROUGH), "-D", f"N={n}", "-o", "b"]
    run()  # leaves the process with os._exit


def test_concurrent_builds_one_wins_whole_the_others_fail_cleanly(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    procs_n, rounds = 8, 3
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    sizes = [1024 * (1 + i % 4) for i in range(procs_n)]  # different builds, told apart
    builds = {n: _build_of(_gen(n)) for n in set(sizes)}
    busy = re.compile(r"error \[output directory\]: another aiedsl build \(pid (\d+)\) is "
                      r"writing b\n  fix: try again when it is done \(if no aiedsl is "
                      r"running, delete \.b\.aiedsl-new\)\n")
    import aiedsl.api  # noqa: F401  (loaded before forking: the builds start at once)

    ctx = multiprocessing.get_context("fork")
    refused = 0
    for r in range(rounds):
        barrier = ctx.Barrier(procs_n)
        errs = [str(tmp_path / f"err.{r}.{i}") for i in range(procs_n)]
        procs = [ctx.Process(target=_racer, args=(barrier, n, err))
                 for n, err in zip(sizes, errs)]
        for p in procs:
            p.start()
        for p in procs:
            p.join(30)
        pids = {p.pid for p in procs}
        winners = []
        for p, n, err in zip(procs, sizes, errs):
            text = Path(err).read_text()
            if p.exitcode == 0:
                winners.append(n)
                continue
            m = busy.fullmatch(text)
            assert p.exitcode == 75 and m, (p.exitcode, text)  # never a traceback
            assert int(m[1]) in pids
            refused += 1
        assert winners
        # exactly one complete build, of one of this round's winners
        tree = _tree(work / "b")
        tree.pop(MARKER)
        assert tree in [builds[n] for n in winners]
        assert read_marker(work / "b")["files"] == entries(work / "b")  # type: ignore[index]
        assert os.listdir(work) == ["b"]  # no staging dir left
    assert refused  # the race was real: some builds found the directory being written


# -- --compile, with fake tools -------------------------------------------------------------------

FAKE_CLANG = '''#!/bin/sh
if [ "$1" = "--version" ]; then echo "clang version 19.0.0 (test double)"; exit 0; fi
if [ "$1" = "-print-targets" ]; then printf '  Registered Targets:\\n    aie2   - Xilinx AIML Engine\\n'; exit 0; fi
out=""; prev=""
for a in "$@"; do [ "$prev" = "-o" ] && out="$a"; prev="$a"; done
echo "object" > "$out"
'''

FAKE_AIECC = '''#!/bin/sh
# test double for aiecc: its outputs, and intermediate files it leaves behind
if [ "$1" = "--version" ]; then echo "aiecc 1.2.3 (test double)"; exit 0; fi
if [ "$1" = "--help" ]; then exit 0; fi
mkdir -p aie.mlir.prj && echo "intermediate" > aie.mlir.prj/main.o
{fail}
printf 'xclbin2\\000' > aie.xclbin
printf '\\000\\001\\003\\006\\001\\001\\000\\000\\000\\000\\000\\000\\020\\000\\000\\000' > insts.bin
'''


def _fake_tools(root: Path, monkeypatch: pytest.MonkeyPatch, fail: str = "") -> None:
    for path, text in ((root / "peano" / "bin" / "clang++", FAKE_CLANG),
                       (root / "mlir-aie" / "bin" / "aiecc", FAKE_AIECC.format(fail=fail))):
        path.parent.mkdir(parents=True)
        path.write_text(text)
        path.chmod(path.stat().st_mode | stat.S_IEXEC)
    (root / "mlir-aie" / "include" / "aie_api").mkdir(parents=True)
    (root / "mlir-aie" / "include" / "aie_api" / "aie.hpp").write_text("// test double\n")
    monkeypatch.setenv("PEANO_INSTALL_DIR", str(root / "peano"))
    monkeypatch.setenv("MLIR_AIE_INSTALL_DIR", str(root / "mlir-aie"))
    monkeypatch.setenv("PATH", "/usr/bin:/bin")


TOOL_OUTPUTS = ["aie.mlir.prj/", "aie.mlir.prj/main.o", "aie.xclbin", "cache.json",
                "insts.bin", "logs/", "logs/aiecc.log", "logs/passthrough_i32_1024.log",
                "manifest.json", "passthrough_i32_1024.o"]


def test_compile_outputs_are_in_the_marker_and_a_rebuild_of_the_same_design_keeps_them(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_tools(tmp_path / "tools", monkeypatch)
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    aiedsl.build(PASSTHROUGH, output="out", compile=True)
    marker = read_marker(out)
    assert marker is not None and marker["files"] == entries(out)
    assert set(TOOL_OUTPUTS) <= set(marker["files"])
    compiled = {rel: data for rel, data in _tree(out).items() if rel in TOOL_OUTPUTS}
    gen = _gen()  # the same design: the same aie.mlir and kernels
    write(gen, out)
    _assert_whole(out, {**_build_of(gen), **compiled})
    assert os.listdir(tmp_path) == ["out", "tools"]  # and no staging dir
    gen = _gen(8192)  # another aie.mlir: the outputs of the old one are not carried
    write(gen, out)
    _assert_whole(out, _build_of(gen))


def test_a_failed_compile_lists_its_logs_but_not_the_users_files(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_tools(tmp_path / "tools", monkeypatch,
                fail="printf half > aie.xclbin; echo 'aiecc: boom'; exit 1")
    monkeypatch.chdir(tmp_path)
    art = aiedsl.build(PASSTHROUGH, output="out")
    (tmp_path / "out" / "todo.txt").write_text("mine\n")  # the user's, before the tools ran
    with pytest.raises(ToolchainError):
        art.compile()
    listed = read_marker(tmp_path / "out")["files"]  # type: ignore[index]
    assert {"logs/aiecc.log", "aie.mlir.prj/main.o", "passthrough_i32_1024.o"} <= set(listed)
    assert "todo.txt" not in listed
    assert not (tmp_path / "out" / "aie.xclbin").exists()  # a failed aiecc's is not whole
    with pytest.raises(DesignError, match=r"found: todo\.txt\n"):
        write(_gen(), "out")


def test_the_outputs_of_build_sh_run_by_hand_are_aiedsls(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """README's manual route: build.sh, run by hand, wrote aie.xclbin, insts.bin and the
    kernel's .o, which the marker did not list, and the next build refused the directory (a
    tester). The marker names what build.sh writes; those are aiedsl's, nothing else is."""
    _fake_tools(tmp_path / "tools", monkeypatch)
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "out"
    gen = _gen()
    write(gen, out)
    assert read_marker(out)["script_outputs"] == [  # type: ignore[index]
        ".aiedsl-script.list", "aie.mlir.prj/", "aie.xclbin", "insts.bin",
        "passthrough_i32_1024.o", "passthrough_i32_1024.su"]
    r = subprocess.run(["bash", "out/build.sh"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    made = {rel: data for rel, data in _tree(out).items() if rel not in _build_of(gen)}
    made.pop(MARKER)
    assert sorted(made) == [".aiedsl-script.list", "aie.mlir.prj/", "aie.mlir.prj/main.o",
                            "aie.xclbin", "insts.bin", "passthrough_i32_1024.o"]
    # what aiecc added to its working folder, recorded by build.sh as it ran
    assert made[".aiedsl-script.list"] == b"#before\n#after\naie.mlir.prj\naie.mlir.prj/main.o\n"
    write(gen, out)  # the same design: build.sh's outputs are kept, and now listed
    _assert_whole(out, {**_build_of(gen), **made})
    (out / "notes.txt").write_text("mine\n")  # anything else is still the user's
    with pytest.raises(DesignError) as e:
        write(gen, out)
    assert str(e.value) == (
        f"error [output directory]: {out} holds 1 file aiedsl did not write, and a build "
        "replaces the whole directory\n"
        "  limit: a new or empty directory, or a build directory holding only what aiedsl wrote\n"
        "  found: notes.txt\n"
        f"  fix: choose another directory with -o, or move those files out of {out}")
    (out / "notes.txt").unlink()
    subprocess.run(["bash", "out/build.sh"], check=True, capture_output=True)
    # a compile whose aiecc writes nothing is not credited with build.sh's outputs
    _fake_tools(tmp_path / "quiet", monkeypatch, fail="exit 0")
    with pytest.raises(ToolchainError, match="aiecc finished but did not write aie.xclbin, "
                                             "insts.bin"):
        aiedsl.build(PASSTHROUGH, output="out", compile=True)
    gen = _gen(8192)  # another design: build.sh's outputs of the old one are dropped
    write(gen, out)
    assert not (out / "passthrough_i32_1024.o").exists()
    assert not (out / "aie.xclbin").exists() and not (out / "aie.mlir.prj").exists()


@pytest.mark.parametrize("how", ["by hand", "build.sh", "build.sh twice", "--compile"])
def test_a_users_file_in_aieccs_folder_is_refused_not_deleted(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    """A file put in build/<d>/aie.mlir.prj/ was deleted by a rebuild with other defines: the
    whole folder counted as build.sh's (a tester). Only what build.sh recorded aiecc adding
    there (or --compile listed) is aiedsl's; anything else is refused like any file of the
    user's."""
    _fake_tools(tmp_path / "tools", monkeypatch)
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "out"
    if how == "--compile":
        aiedsl.build(PASSTHROUGH, output="out", compile=True)
    else:
        write(_gen(), out)
    if how.startswith("build.sh"):
        for _ in range(2 if how.endswith("twice") else 1):
            subprocess.run(["bash", "out/build.sh"], check=True, capture_output=True)
    (out / "aie.mlir.prj").mkdir(exist_ok=True)
    (out / "aie.mlir.prj" / "mine.txt").write_text("notes\n")
    for gen in (_gen(8192), _gen()):  # another design, and the same
        with pytest.raises(DesignError) as e:
            write(gen, out)
        assert str(e.value) == (
            f"error [output directory]: {out} holds 1 file aiedsl did not write, and a build "
            "replaces the whole directory\n"
            "  limit: a new or empty directory, or a build directory holding only what aiedsl "
            "wrote\n"
            "  found: aie.mlir.prj/mine.txt\n"
            f"  fix: choose another directory with -o, or move those files out of {out}")
    assert (out / "aie.mlir.prj" / "mine.txt").read_text() == "notes\n"
    (out / "aie.mlir.prj" / "mine.txt").unlink()
    gen = _gen(8192)
    write(gen, out)  # what aiecc wrote there was aiedsl's: dropped with the old design
    _assert_whole(out, _build_of(gen))


def test_what_a_killed_build_sh_left_in_aieccs_folder_is_not_taken_for_aiedsls(
        tmp_path: Path) -> None:
    """build.sh lists the folder before aiecc and after it: a run stopped before its #after
    added nothing it can vouch for, and its files are refused, never deleted."""
    from aiedsl.builddir.marker import SCRIPT_LIST, script_made

    (tmp_path / SCRIPT_LIST).write_text(
        "#before\naie.mlir.prj\naie.mlir.prj/old.txt\n#after\naie.mlir.prj\n"
        "aie.mlir.prj/old.txt\naie.mlir.prj/a.elf\naie.mlir.prj/sub\naie.mlir.prj/sub/b.o\n"
        "#before\naie.mlir.prj\n")
    assert script_made(tmp_path) == {"aie.mlir.prj/a.elf", "aie.mlir.prj/sub",
                                     "aie.mlir.prj/sub/b.o"}
    (tmp_path / SCRIPT_LIST).write_text("#after\naie.mlir.prj/x\n")
    assert script_made(tmp_path) == set()


def test_a_users_file_of_a_name_build_sh_writes_is_refused_not_deleted(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    """A user's aie.xclbin and .aiedsl-script.list in a build were deleted by a rebuild with
    other defines, with the same ones kept as if that build's (a tester): build.sh never ran,
    but their names were among what the marker says it writes. Only what a run of build.sh
    recorded writing is aiedsl's."""
    monkeypatch.chdir(tmp_path)
    assert _main("build", str(PASSTHROUGH), "-o", "b2") == 0
    (tmp_path / "b2" / "aie.xclbin").write_text("my own xclbin, not from build.sh\n")
    (tmp_path / "b2" / ".aiedsl-script.list").write_text("mine\n")
    before = _tree(tmp_path / "b2")
    capsys.readouterr()
    for defines in (["-D", "N=8192"], []):  # another design, and the same
        assert _main("build", str(PASSTHROUGH), "-o", "b2", *defines) == 2
        assert capsys.readouterr().err == (
            "error [output directory]: b2 holds 2 files aiedsl did not write, and a build "
            "replaces the whole directory\n"
            "  limit: a new or empty directory, or a build directory holding only what aiedsl "
            "wrote\n"
            "  found: .aiedsl-script.list, aie.xclbin\n"
            "  fix: choose another directory with -o, or move those files out of b2 "
            "(.aiedsl-script.list: not a record build.sh writes; aie.xclbin: a name build.sh "
            "writes, but no run of build.sh recorded in .aiedsl-script.list wrote it)\n")
    assert _tree(tmp_path / "b2") == before
    assert os.listdir(tmp_path) == ["b2"]


def test_a_users_file_put_over_one_build_sh_wrote_is_refused_not_deleted(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """build.sh appends its record last, as it exits: a file of its names newer than the
    record was put there after the run, not written by it."""
    _fake_tools(tmp_path / "tools", monkeypatch)
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "out"
    write(_gen(), out)
    subprocess.run(["bash", "out/build.sh"], check=True, capture_output=True)
    (out / "aie.xclbin").unlink()
    (out / "aie.xclbin").write_text("my own xclbin\n")
    ran = (out / ".aiedsl-script.list").stat().st_mtime_ns
    os.utime(out / "aie.xclbin", ns=(ran + 10**9, ran + 10**9))  # a second after the run
    with pytest.raises(DesignError) as e:
        write(_gen(8192), out)
    assert str(e.value) == (
        f"error [output directory]: {out} holds 1 file aiedsl did not write, and a build "
        "replaces the whole directory\n"
        "  limit: a new or empty directory, or a build directory holding only what aiedsl "
        "wrote\n"
        "  found: aie.xclbin\n"
        f"  fix: choose another directory with -o, or move those files out of {out} "
        "(aie.xclbin: a name build.sh writes, but no run of build.sh recorded in "
        ".aiedsl-script.list wrote it)")
    assert (out / "aie.xclbin").read_text() == "my own xclbin\n"
    (out / "aie.xclbin").unlink()
    gen = _gen(8192)
    write(gen, out)  # what build.sh wrote (insts.bin, the .o, its record) goes with its design
    _assert_whole(out, _build_of(gen))


def test_build_sh_s_record_vouches_only_for_what_a_whole_run_wrote(tmp_path: Path) -> None:
    from aiedsl.builddir.marker import SCRIPT_LIST, script_wrote

    marker = {"aiedsl": aiedsl.__version__, "files": [],
              "script_outputs": [SCRIPT_LIST, "aie.mlir.prj/", "aie.xclbin", "k.o"]}
    record = tmp_path / SCRIPT_LIST
    for name in ("aie.xclbin", "k.o"):
        (tmp_path / name).write_text("made\n")
    for text, wrote in [
            ("mine\n", set()),  # not build.sh's record
            ("#before\naie.mlir.prj\nnotes.txt\n", set()),  # nor is this
            ("#before\naie.mlir.prj\n", {SCRIPT_LIST}),  # a run killed in aiecc: no outputs
            ("#before\n#after\naie.mlir.prj\naie.mlir.prj/main.o\n",
             {SCRIPT_LIST, "aie.xclbin", "k.o"})]:
        record.write_text(text)
        assert script_wrote(tmp_path, marker) == wrote, text
    ran = record.stat().st_mtime_ns
    k_o = tmp_path / "k.o"
    k_o.unlink()
    while True:  # a file put there after the run (the file system's clock ticks coarsely)
        k_o.write_text("mine\n")
        if k_o.stat().st_ctime_ns > ran:
            break
    os.utime(k_o, ns=(ran - 10**9, ran - 10**9))  # an old mtime kept (cp -p, tar) changes nothing
    assert script_wrote(tmp_path, marker) == {SCRIPT_LIST, "aie.xclbin"}
    assert script_wrote(tmp_path, {**marker, "script_outputs": []}) == set()


SLOW_AIECC = """
echo $$ > "{pid}"
echo "half" > half.xclbin
(sleep 1; echo "late" > late.txt) &  # a child of aiecc's, writing after a while
sleep 30
"""


@pytest.mark.parametrize("signame", ["SIGTERM", "SIGHUP"])
def test_a_stopped_compile_kills_its_tools_and_leaves_a_rebuildable_directory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, signame: str) -> None:
    """SIGTERM (a tester; SIGHUP as well) killed aiedsl outright during --compile: aiecc went
    on writing into the build, the lock stayed, and the next build refused aiecc's files as
    the user's. Now they stop it as Ctrl-C does."""
    import signal

    pid = tmp_path / "aiecc.pid"
    _fake_tools(tmp_path / "tools", monkeypatch,
                fail=f'[ "$1" = --help ] || {{ {SLOW_AIECC.format(pid=pid)} }}')
    monkeypatch.chdir(tmp_path)
    write(_gen(), "out")
    before = _tree(tmp_path / "out")
    child = subprocess.Popen([sys.executable, "-m", "aiedsl.cli", "build", str(PASSTHROUGH),
                              "-o", "out", "--compile"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    for _ in range(600):
        if pid.exists() and pid.read_text().strip():
            break
        time.sleep(0.05)
    number = getattr(signal, signame)
    child.send_signal(number)
    _, err = child.communicate(timeout=20)
    assert child.returncode == 128 + number, err
    assert err.endswith("aborted\n"), err
    with pytest.raises(ProcessLookupError):  # aiecc is dead
        os.kill(int(pid.read_text()), 0)
    time.sleep(1.5)  # its child would have written late.txt by now
    # the tools ran beside the build: what they wrote (half.xclbin, the logs) never got in
    assert _tree(tmp_path / "out") == before
    assert sorted(os.listdir(tmp_path)) == ["aiecc.pid", "out", "tools"]  # no lock left
    gen = _gen(8192)
    write(gen, "out")  # and the next build replaces it
    _assert_whole(tmp_path / "out", _build_of(gen))


GATED_AIECC = """#!/bin/sh
# test double for aiecc: its --help waits for the test's go; what it compiles is told by the
# xclbin it writes (the define line of the aie.mlir it read)
case "$1" in
  --version) echo "aiecc {version} (test double)"; exit 0 ;;
  --help) touch "{root}/help.started"; i=0
    while [ ! -e "{root}/go" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done
    echo "  --get=<name>  - Request graph output(s)"; exit 0 ;;
esac
echo $$ > "{root}/aiecc.pid"
{then}
mkdir -p aie.mlir.prj && echo "intermediate" > aie.mlir.prj/main.o
{{ printf 'xclbin2\\000'; sed -n 2p aie.mlir; }} > aie.xclbin
printf '\\000\\001\\003\\006\\001\\001\\000\\000\\000\\000\\000\\000\\020\\000\\000\\000' > insts.bin
"""


def _gated_aiecc(root: Path, version: str = "1.2.3", then: str = "") -> None:
    aiecc = root / "tools" / "mlir-aie" / "bin" / "aiecc"
    aiecc.write_text(GATED_AIECC.format(root=root, version=version, then=then))
    (root / "go").touch()  # open, unless a test closes it


def _wait_for(path: Path) -> None:
    for _ in range(600):
        if path.exists() and path.read_text().strip() != "":
            return
        time.sleep(0.05)
    raise AssertionError(f"{path} never came")


def test_a_build_cannot_swap_itself_in_between_a_builds_write_and_its_compile(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """build --compile let go of its directory after writing it and took it again to compile;
    a build of N=8192 swapped in meanwhile (while aiecc --help ran) had its aie.mlir compiled
    and reported as N=4096 (a tester). One lock is held from the write to the compile's end."""
    _fake_tools(tmp_path / "tools", monkeypatch)
    _gated_aiecc(tmp_path)
    (tmp_path / "go").unlink()
    monkeypatch.chdir(tmp_path)
    child = subprocess.Popen([sys.executable, "-m", "aiedsl.cli", "build", str(PASSTHROUGH),
                              "-D", "N=4096", "-o", "out", "--compile"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(600):  # the build is written, aiedsl asks aiecc what it takes
            if (tmp_path / "help.started").exists():
                break
            time.sleep(0.05)
        assert (tmp_path / "out" / MARKER).exists()
        with pytest.raises(DesignError) as e:
            write(_gen(8192), "out")
        assert str(e.value) == (
            f"error [output directory]: another aiedsl build (pid {child.pid}) is writing "
            "out\n"
            "  fix: try again when it is done (if no aiedsl is running, delete .out.aiedsl-new)")
    finally:
        (tmp_path / "go").touch()
        _, err = child.communicate(timeout=60)
    assert child.returncode == 0, err
    out = tmp_path / "out"
    assert (out / "aie.mlir").read_text() == _gen(4096).files["aie.mlir"]
    assert (out / "aie.xclbin").read_text() == "xclbin2\0// device npu1_1col; N=4096, TILE=1024\n"
    manifest = json.loads((out / "manifest.json").read_text())
    assert [b["shape"] for b in manifest["buffers"]] == [[4096], [4096]]


def test_a_compile_of_a_build_another_build_replaced_is_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What aiedsl run --target npu meets when a build replaces its directory between its
    build and its compile: the compile would compile the other build's aie.mlir under this
    one's manifest. It checks, under the lock, that the directory still holds its files."""
    _fake_tools(tmp_path / "tools", monkeypatch)
    _gated_aiecc(tmp_path)
    monkeypatch.chdir(tmp_path)
    art = aiedsl.build(PASSTHROUGH, output="out", defines={"N": 4096})
    write(_gen(8192), "out")  # another build, meanwhile
    before = _tree(tmp_path / "out")
    with pytest.raises(DesignError) as e:
        art.compile()
    assert str(e.value) == (
        "error [output directory]: out no longer holds the build of passthrough to be compiled: "
        "another build replaced it since\n"
        "  found: aie.mlir\n"
        "  fix: build and compile again (aiedsl build --compile holds the directory from the "
        "build to the end of the compile)")
    assert _tree(tmp_path / "out") == before
    assert not (tmp_path / "aiecc.pid").exists()  # no tool ran
    assert sorted(os.listdir(tmp_path)) == ["go", "help.started", "out", "tools"]


def test_a_compile_never_writes_over_a_users_logs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_tools(tmp_path / "tools", monkeypatch)
    _gated_aiecc(tmp_path)
    monkeypatch.chdir(tmp_path)
    art = aiedsl.build(PASSTHROUGH, output="out")
    (tmp_path / "out" / "logs").mkdir()  # the user's, after the build
    (tmp_path / "out" / "logs" / "aiecc.log").write_text("my notes\n")
    before = _tree(tmp_path / "out")
    with pytest.raises(DesignError) as e:
        art.compile()
    assert str(e.value) == (
        "error [output directory]: out holds what aiedsl did not write where the compile puts "
        "its own\n"
        "  found: logs/\n"
        "  fix: move it out of out, and compile again")
    assert _tree(tmp_path / "out") == before
    assert not (tmp_path / "aiecc.pid").exists()  # refused before any tool ran


def _killed_compile(root: Path, signame: str, *defines: str) -> str:
    """``aiedsl build --compile`` into root/out, sent ``signame`` while aiecc runs (its
    xclbin half written); aiecc killed too. Returns the command's standard error."""
    import signal

    # A test run started in the background by a shell without job control has SIGINT ignored,
    # and an ignored signal stays ignored across exec: Python then keeps Ctrl-C off, as it
    # should for a background job. The child is a foreground command: SIGINT as the default.
    child = subprocess.Popen([sys.executable, "-m", "aiedsl.cli", "build", str(PASSTHROUGH),
                              *defines, "-o", "out", "--compile"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True,
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    _wait_for(root / "half")
    child.send_signal(getattr(signal, signame))
    _, err = child.communicate(timeout=20)
    try:  # SIGKILL leaves aiecc running (its own process group): the test ends it
        os.kill(int((root / "aiecc.pid").read_text()), signal.SIGKILL)
    except ProcessLookupError:
        pass
    time.sleep(0.2)
    return err


def test_a_killed_first_compile_leaves_a_directory_the_next_build_takes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """SIGKILL during a first --compile left logs/ in the build, made by aiedsl and listed only
    when the compile ended: no later build accepted the directory (a tester). The tools now
    run beside the build, and nothing of theirs is in it until they are done."""
    _fake_tools(tmp_path / "tools", monkeypatch)
    _gated_aiecc(tmp_path, then=f'printf partial > aie.xclbin; echo 1 > "{tmp_path}/half"; '
                                "sleep 30")
    monkeypatch.chdir(tmp_path)
    gen = _gen()
    write(gen, "out")
    before = _tree(tmp_path / "out")
    _killed_compile(tmp_path, "SIGKILL")
    assert _tree(tmp_path / "out") == before
    write(gen, "out")  # the next build takes it, and removes the killed one's leftover
    _assert_whole(tmp_path / "out", _build_of(gen))
    assert sorted(os.listdir(tmp_path)) == ["aiecc.pid", "go", "half", "help.started", "out",
                                            "tools"]


@pytest.mark.parametrize("design", ["the same", "another"])
def test_an_interrupted_compile_leaves_the_previous_outputs_whole(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture,
        design: str) -> None:
    """Ctrl-C during aiecc left its half-written aie.xclbin in the build, listed as aiedsl's,
    and a rebuild kept it (a tester). Nothing of an interrupted compile gets in: the same
    design keeps its previous compile's outputs whole; another has none (they were another
    aie.mlir's), and a rebuild of it has none either."""
    _fake_tools(tmp_path / "tools", monkeypatch)
    _gated_aiecc(tmp_path)
    monkeypatch.chdir(tmp_path)
    aiedsl.build(PASSTHROUGH, output="out", compile=True)  # a complete compile, N=4096
    assert (tmp_path / "out" / "aie.xclbin").read_text() == \
        "xclbin2\0// device npu1_1col; N=4096, TILE=1024\n"
    # a newer aiecc (the same design compiles again), which is interrupted
    _gated_aiecc(tmp_path, version="1.2.4",
                 then=f'printf partial > aie.xclbin; echo 1 > "{tmp_path}/half"; sleep 30')
    defines = [] if design == "the same" else ["-D", "N=8192"]
    if design == "the same":
        before = _tree(tmp_path / "out")
    else:
        gen = _gen(8192)
        before = {**_build_of(gen), MARKER: None}
    err = _killed_compile(tmp_path, "SIGINT", *defines)
    assert err.endswith("aborted\n"), err
    after = _tree(tmp_path / "out")
    if design == "another":
        after[MARKER] = None
    assert after == before
    marker = read_marker(tmp_path / "out")
    assert marker is not None and marker["files"] == entries(tmp_path / "out")
    assert sorted(os.listdir(tmp_path)) == ["aiecc.pid", "go", "half", "help.started", "out",
                                            "tools"]
    assert _main("build", str(PASSTHROUGH), *defines, "-o", "out") == 0
    capsys.readouterr()
    after = _tree(tmp_path / "out")
    if design == "another":
        after[MARKER] = None
    assert after == before  # a rebuild keeps what it had, and no half-written xclbin


# -- single files: map.svg and traces -------------------------------------------------------------


def _main(*args: str) -> int:
    try:
        main(list(args))
    except SystemExit as e:
        return int(e.code or 0)
    return 0


def test_map_never_overwrites_a_users_file_and_joins_a_build_directory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "m.svg").write_text("<svg>my drawing</svg>\n")
    assert _main("map", str(PASSTHROUGH), "-o", "m.svg") == 2
    assert capsys.readouterr().err == (
        "error [output file]: m.svg exists and aiedsl did not write it\n"
        "  fix: choose another file with -o, or move m.svg away\n")
    assert (tmp_path / "m.svg").read_text() == "<svg>my drawing</svg>\n"
    # map first, then build: the directory map made is a build directory
    assert _main("map", str(PASSTHROUGH)) == 0
    out = tmp_path / "build" / "passthrough"
    assert read_marker(out)["files"] == [MARKER, "map.svg"]  # type: ignore[index]
    assert (out / "map.svg").read_text().splitlines()[1] == (
        f"<!-- passthrough on npu1_1col: generated by aiedsl {aiedsl.__version__} "
        "(do not edit) -->")
    gen = _gen()
    write(gen, out)
    # a second map into the build directory is listed in its marker, and a rebuild keeps it
    assert _main("map", str(PASSTHROUGH), "-o", "build/passthrough/extra/map2.svg") == 0
    write(gen, out)
    _assert_whole(out, {**_build_of(gen), "extra/": None,
                        "extra/map2.svg": gen.files["map.svg"].encode()})


@pytest.mark.parametrize("options, this", [
    (["-D", "TILE=2048"], "passthrough on npu1_1col with N=4096, TILE=2048"),
    (["--device", "npu2"], "passthrough on npu2 with N=4096, TILE=1024"),
])
def test_map_never_puts_another_configurations_map_into_a_build(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture,
        options: list[str], this: str) -> None:
    """build, then map -D TILE=2048 overwrote the build's map.svg with another configuration's
    beside the first one's aie.mlir, report.txt and design.json, and said 'wrote' (a
    tester)."""
    monkeypatch.chdir(tmp_path)
    assert _main("build", str(PASSTHROUGH)) == 0
    out = tmp_path / "build" / "passthrough"
    before = _tree(out)
    capsys.readouterr()
    assert _main("map", str(PASSTHROUGH), *options) == 2
    command = " ".join(["aiedsl build", str(PASSTHROUGH), *options])
    assert capsys.readouterr() == ("", (
        "error [output file]: build/passthrough/map.svg is part of the build of passthrough on "
        f"npu1_1col with N=4096, TILE=1024 in build/passthrough; this map is of {this}, and "
        "would disagree with that build's aie.mlir, report.txt and design.json\n"
        "  fix: draw this map elsewhere with -o (e.g. -o passthrough.svg), or rebuild "
        f"build/passthrough with these options first ({command})\n"))
    assert _tree(out) == before
    # elsewhere, or under another name the user chose, it is drawn; and after the rebuild too
    assert _main("map", str(PASSTHROUGH), *options, "-o", "passthrough.svg") == 0
    assert _main("map", str(PASSTHROUGH), *options, "-o", "build/passthrough/other.svg") == 0
    assert _main("build", str(PASSTHROUGH), *options) == 0
    assert _main("map", str(PASSTHROUGH), *options) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "wrote build/passthrough/map.svg"


def test_map_refuses_a_build_of_the_same_options_when_the_design_changed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    monkeypatch.chdir(tmp_path)
    design = tmp_path / "passthrough.py"
    design.write_text(PASSTHROUGH.read_text())
    assert _main("build", "passthrough.py", "-o", "b") == 0
    edited = PASSTHROUGH.read_text().replace('name="in_l1")', 'name="in_l1", depth=3)')
    assert edited != PASSTHROUGH.read_text()
    design.write_text(edited)
    capsys.readouterr()
    assert _main("map", "passthrough.py", "-o", "b/map.svg") == 2
    assert capsys.readouterr().err == (
        "error [output file]: b/map.svg is part of the build of passthrough on npu1_1col with "
        "N=4096, TILE=1024 in b; this map is of passthrough on npu1_1col with N=4096, TILE=1024 "
        "as the design file reads now, and would disagree with that build's aie.mlir, "
        "report.txt and design.json\n"
        "  fix: draw this map elsewhere with -o (e.g. -o passthrough.svg), or rebuild b with "
        "these options first (aiedsl build passthrough.py -o b)\n")


def test_map_keeps_a_map_its_build_drew_from_the_lowering(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    """The same design's map, but the build drew it from mlir-aie's lowering, which its
    report.txt follows: aiedsl's own plan would disagree with the report."""
    from aiedsl.builddir.lock import claim as take

    monkeypatch.chdir(tmp_path)
    assert _main("build", str(PASSTHROUGH)) == 0
    out = tmp_path / "build" / "passthrough"
    drawn = (out / "map.svg").read_text().replace(
        "</text>\n", '</text>\n  <text x="40" y="64" class="lowering">from the lowering</text>\n',
        1)
    with take(out, out):
        (out / "map.svg").write_text(drawn)
    capsys.readouterr()
    assert _main("map", str(PASSTHROUGH)) == 0
    assert capsys.readouterr().out == (
        "kept build/passthrough/map.svg: its build drew it from mlir-aie's lowering, of this "
        "same design (for aiedsl's own plan, give -o FILE)\n")
    assert (out / "map.svg").read_text() == drawn


def test_a_trace_says_aiedsl_wrote_it_and_never_overwrites_a_users_file(tmp_path: Path) -> None:
    from aiedsl.sim import simulate

    handle = load_design(PASSTHROUGH)
    trace = tmp_path / "t.json"
    simulate(handle, trace=str(trace))
    doc = json.loads(trace.read_text())
    assert doc["otherData"] == {
        "generator": f"aiedsl {aiedsl.__version__}", "clock_hz": 1e9,
        "origin": "ts 0 is the device's start: the invocation's fixed cost, before it, is not "
        "drawn", "complete": True}
    simulate(handle, trace=str(trace))  # its own trace: overwritten
    mine = tmp_path / "mine.json"
    mine.write_text('{"traceEvents": []}')
    with pytest.raises(DesignError) as e:
        simulate(handle, trace=str(mine))
    assert str(e.value) == (
        f"error [output file]: {mine} exists and aiedsl did not write it\n"
        f"  fix: choose another file with --trace, or move {mine} away")
    assert mine.read_text() == '{"traceEvents": []}'
    assert sorted(os.listdir(tmp_path)) == ["mine.json", "t.json"]


# -- file-system errors: a DesignError naming the path and the reason, exit 2, nothing left -------


def test_an_output_path_under_a_file_is_a_design_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "afile").write_text("mine\n")
    before = _tree(tmp_path)
    assert _main("build", str(PASSTHROUGH), "-o", "afile/b") == 2
    assert capsys.readouterr().err == (
        "error [output directory]: cannot write afile/b: Not a directory (at "
        "afile/.b.aiedsl-new)\n"
        "  fix: afile is a file, not a folder: choose another path with -o\n")
    assert _main("map", str(PASSTHROUGH), "-o", "afile/m.svg") == 2
    assert capsys.readouterr().err == (
        "error [output file]: cannot write afile/m.svg: Not a directory (at afile)\n"
        "  fix: afile is a file, not a folder: choose another path with -o\n")
    assert _main("sim", str(PASSTHROUGH), "--trace", "afile/sub/t.json") == 2
    assert capsys.readouterr().err == (
        "error [output file]: cannot write afile/sub/t.json: Not a directory (at afile/sub)\n"
        "  fix: afile is a file, not a folder: choose another path with --trace\n")
    assert _tree(tmp_path) == before


@pytest.mark.parametrize("links", [{"loop": "loop"}, {"a": "b", "b": "a"}])
def test_an_output_directory_that_is_a_symlink_loop_is_called_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture,
        links: dict[str, str]) -> None:
    """A tester's: -o loop, a symbolic link to itself, was called "a file, not a directory"."""
    monkeypatch.chdir(tmp_path)
    for link, target in links.items():
        (tmp_path / link).symlink_to(target)
    name = next(iter(links))
    assert _main("build", str(PASSTHROUGH), "-o", name) == 2
    assert capsys.readouterr().err == (
        f"error [output directory]: {name} is a symbolic link that does not resolve: following "
        "it leads back to itself (a loop)\n"
        f"  found: {name} -> {links[name]}\n"
        f"  fix: point {name} at a directory, or choose another directory with -o\n")
    assert sorted(os.listdir(tmp_path)) == sorted(links)
    assert {p: os.readlink(tmp_path / p) for p in links} == links


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux's /proc")
def test_an_output_directory_in_proc_is_a_design_error(capsys: pytest.CaptureFixture) -> None:
    # /proc refuses every mkdir, root's too
    assert _main("build", str(PASSTHROUGH), "-o", "/proc/x") == 2
    assert capsys.readouterr().err == (
        "error [output directory]: cannot write /proc/x: No such file or directory (at "
        "/proc/.x.aiedsl-new)\n"
        "  fix: choose another path with -o, in a folder you may write\n")


def test_a_refused_swap_leaves_the_previous_build_whole(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from aiedsl.builddir import swap

    out = tmp_path / "p"
    before = _compiled_build(out, _gen())

    def exchange(a: Path, b: Path) -> bool:  # what a build directory chmod 555 gets (not root)
        raise PermissionError(13, "Permission denied", str(b))

    monkeypatch.setattr(swap, "_exchange", exchange)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(DesignError) as e:
        write(_gen(8192), "p")
    assert str(e.value) == (
        "error [output directory]: cannot write p: Permission denied\n"
        "  fix: make p writable for you (ls -ld p shows who may write it), or choose another "
        "path with -o")
    assert _tree(out) == before
    assert os.listdir(tmp_path) == ["p"]  # no staging dir left


def test_a_failed_build_removes_the_folders_it_made_for_itself(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from aiedsl.builddir import build

    def put(path: Path, text: str) -> None:
        raise OSError(28, "No space left on device", str(path))

    monkeypatch.setattr(build, "_put", put)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(DesignError) as e:
        write(_gen(), "new/sub/b")
    assert str(e.value) == (
        "error [output directory]: cannot write new/sub/b: No space left on device (at "
        "new/sub/.b.aiedsl-new/build/aie.mlir)\n"
        "  fix: free space on the file system of new/sub/.b.aiedsl-new/build, or choose "
        "another path with -o")
    assert os.listdir(tmp_path) == []


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0,
                    reason="root writes into a chmod 555 folder anyway")
def test_a_read_only_parent_is_a_design_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ro").mkdir()
    (tmp_path / "ro").chmod(0o555)
    try:
        assert _main("build", str(PASSTHROUGH), "-o", "ro/b") == 2
        assert capsys.readouterr().err == (
            "error [output directory]: cannot write ro/b: Permission denied (at "
            "ro/.b.aiedsl-new)\n"
            "  fix: make ro writable for you (ls -ld ro shows who may write it), or choose "
            "another path with -o\n")
        assert _main("map", str(PASSTHROUGH), "-o", "ro/m.svg") == 2
        assert capsys.readouterr().err.splitlines()[0] == (
            "error [output file]: cannot write ro/m.svg: Permission denied (at ro)")
        assert os.listdir(tmp_path / "ro") == []
    finally:
        (tmp_path / "ro").chmod(0o755)


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0,
                    reason="root enters a chmod 000 folder anyway")
def test_a_path_inside_a_folder_nobody_may_enter_is_a_design_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    """Path.is_dir and Path.exists re-raise EACCES there: the error's own handling raised it."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "lock").mkdir()
    (tmp_path / "lock").chmod(0o000)
    try:
        for args in (("sim", str(PASSTHROUGH), "--trace", "lock/t.json"),
                     ("map", str(PASSTHROUGH), "-o", "lock/m.svg"),
                     ("build", str(PASSTHROUGH), "-o", "lock/sub/b")):
            assert _main(*args) == 2, args
            err = capsys.readouterr().err
            assert err.startswith("error [output "), err
            assert "Permission denied" in err and "Traceback" not in err, err
    finally:
        (tmp_path / "lock").chmod(0o755)
    assert os.listdir(tmp_path / "lock") == []


def test_a_build_into_a_directory_a_compile_is_writing_says_another_build_is_writing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    out = write(_gen(), "p")
    # what a running --compile leaves: its lock (alive: this process's pid), and tool outputs
    # not yet in the marker (it lists them when the tools are done)
    staging = tmp_path / ".p.aiedsl-new"
    staging.mkdir()
    (staging / "pid").write_text(json.dumps({"pid": os.getpid(),
                                             "host": socket.gethostname()}))
    for name in ("aie.xclbin", "insts.bin", "main.o"):
        (out / name).write_text("being written\n")
    before = _tree(out)
    try:
        with pytest.raises(DesignError) as e:
            write(_gen(8192), "p")
        assert str(e.value) == (
            f"error [output directory]: another aiedsl build (pid {os.getpid()}) is writing p\n"
            "  fix: try again when it is done (if no aiedsl is running, delete "
            ".p.aiedsl-new)")
        assert _tree(out) == before
    finally:
        (staging / "pid").unlink()
        staging.rmdir()
    # with nobody writing, they are the user's: build.sh's names too, as no run of it (its
    # record, .aiedsl-script.list) wrote them
    with pytest.raises(DesignError, match=r"p holds 3 files aiedsl did not write(.|\n)*"
                                          r"found: aie\.xclbin, insts\.bin, main\.o\n"):
        write(_gen(8192), "p")


def test_a_directory_changing_under_another_build_as_it_is_read_is_busy(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Racing --compile builds: one read the directory (without the lock) while another moved
    its compile's outputs in, and said "cannot read out: No such file or directory (at
    out/aie.mlir.prj)" (exit 2, found racing the tester's scripts)."""
    from aiedsl.builddir import refuse

    monkeypatch.chdir(tmp_path)
    write(_gen(), "p")
    staging = tmp_path / ".p.aiedsl-new"
    staging.mkdir()  # another build's lock: alive (this process's pid)
    (staging / "pid").write_text(json.dumps({"pid": os.getpid(),
                                             "host": socket.gethostname()}))

    def vanishing(folder: Path) -> list[str]:
        raise FileNotFoundError(2, "No such file or directory", str(folder / "aie.mlir.prj"))

    monkeypatch.setattr(refuse, "foreign", vanishing)
    try:
        with pytest.raises(DesignError) as e:
            write(_gen(8192), "p")
    finally:
        (staging / "pid").unlink()
        staging.rmdir()
    assert str(e.value) == (
        f"error [output directory]: another aiedsl build (pid {os.getpid()}) is writing p\n"
        "  fix: try again when it is done (if no aiedsl is running, delete .p.aiedsl-new)")


def test_a_refused_trace_is_refused_before_simulating_or_building(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    import aiedsl.sim as sim

    def no_simulation(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("simulated before refusing the trace")

    monkeypatch.setattr(sim, "_simulate", no_simulation)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mine.json").write_text('{"traceEvents": []}')
    refused = ("error [output file]: mine.json exists and aiedsl did not write it\n"
               "  fix: choose another file with --trace, or move mine.json away\n")
    assert _main("sim", str(PASSTHROUGH), "--trace", "mine.json") == 2
    assert capsys.readouterr().err == refused
    assert _main("run", str(PASSTHROUGH), "--trace", "mine.json", "-o", "rb") == 2
    assert capsys.readouterr().err == refused
    real_access = os.access

    def access(path: Any, mode: int, **kwargs: Any) -> bool:  # a folder we may not write
        return Path(path) != tmp_path and real_access(path, mode, **kwargs)

    monkeypatch.setattr(os, "access", access)
    assert _main("sim", str(PASSTHROUGH), "--trace", "t.json") == 2
    assert capsys.readouterr().err.splitlines()[0] == (
        "error [output file]: cannot write t.json: Permission denied (at .)")
    assert os.listdir(tmp_path) == ["mine.json"]  # no build directory: run refused first
    assert (tmp_path / "mine.json").read_text() == '{"traceEvents": []}'


@pytest.mark.parametrize("given", ["somedir", "somedir/", "new/"])
def test_a_folder_given_as_the_file_is_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture,
        given: str) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "somedir").mkdir()
    assert _main("map", str(PASSTHROUGH), "-o", given) == 2
    assert capsys.readouterr().err == (
        f"error [output file]: {given} is a folder, not a file\n"
        f"  fix: name the file, e.g. -o {given.rstrip('/')}/passthrough.svg\n")
    assert _main("sim", str(PASSTHROUGH), "--trace", given) == 2
    assert capsys.readouterr().err == (
        f"error [output file]: {given} is a folder, not a file\n"
        f"  fix: name the file, e.g. --trace {given.rstrip('/')}/passthrough.json\n")
    assert entries(tmp_path) == ["somedir/"]


def test_a_folder_with_the_users_files_and_an_aie_mlir_is_not_called_an_old_build(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    """A tester's: an aie.mlir copied from a build into their project folder, beside their
    thesis and photos, made the refusal say to delete the folder (rm -r myproject), as an
    older aiedsl's build. That is said only of a folder holding nothing but what aiedsl's builds
    write."""
    monkeypatch.chdir(tmp_path)
    assert _main("build", str(PASSTHROUGH), "-o", "b1") == 0
    (tmp_path / "myproject" / "photos").mkdir(parents=True)
    (tmp_path / "myproject" / "aie.mlir").write_bytes((tmp_path / "b1" / "aie.mlir").read_bytes())
    (tmp_path / "myproject" / "thesis.tex").write_text("x\n")
    (tmp_path / "myproject" / "photos" / "p1.jpg").write_text("x\n")
    before = _tree(tmp_path / "myproject")
    capsys.readouterr()
    assert _main("build", str(PASSTHROUGH), "-o", "myproject") == 2
    assert capsys.readouterr().err == (
        "error [output directory]: myproject holds 3 files aiedsl did not write, and a build "
        "replaces the whole directory\n"
        "  limit: a new or empty directory, or a build directory holding only what aiedsl "
        "wrote\n"
        "  found: aie.mlir, photos/, thesis.tex\n"
        "  fix: choose another directory with -o, or move those files out of myproject\n")
    assert _tree(tmp_path / "myproject") == before


def test_a_whole_build_without_a_marker_is_an_old_build_and_a_file_of_yours_in_it_is_not(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    """What an aiedsl older than the marker wrote (a build, compiled: logs, objects, aiecc's
    folder) is to be deleted once; with a file of the user's anywhere in it (kernels/ too), the
    refusal does not say so."""
    monkeypatch.chdir(tmp_path)
    assert _main("build", str(PASSTHROUGH), "-o", "old") == 0
    old = tmp_path / "old"
    (old / MARKER).unlink()
    (old / "logs").mkdir()
    (old / "logs" / "aiecc.log").write_text("$ aiecc\n")
    for name in ("passthrough_i32_1024.o", "aie.xclbin", "insts.bin", "manifest.json",
                 "cache.json"):
        (old / name).write_text("x\n")
    (old / "aie.mlir.prj" / "sub").mkdir(parents=True)  # aiecc names what it puts there
    (old / "aie.mlir.prj" / "sub" / "core_0_2.elf").write_text("x\n")
    capsys.readouterr()
    assert _main("build", str(PASSTHROUGH), "-o", "old") == 2
    assert capsys.readouterr().err == (
        "error [output directory]: old holds 13 files aiedsl did not write, and a build "
        "replaces the whole directory\n"
        "  limit: a new or empty directory, or a build directory holding only what aiedsl "
        "wrote\n"
        "  found: aie.mlir, aie.mlir.prj/, aie.xclbin, build.sh, cache.json and 8 more\n"
        "  fix: old looks like a build from an aiedsl older than the build marker "
        f"({MARKER}): delete it once (rm -r old) and build again\n")
    for mine in ("kernels/notes.txt", "logs/run1/out.log", "thesis.o"):
        (old / mine).parent.mkdir(exist_ok=True)
        (old / mine).write_text("mine\n")
        assert _main("build", str(PASSTHROUGH), "-o", "old") == 2
        err = capsys.readouterr().err
        assert err.endswith("  fix: choose another directory with -o, or move those files out "
                            "of old\n"), err
        os.unlink(old / mine)


def test_a_command_a_message_prints_runs_on_the_path_alone(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    """The fix for an old build in 'my build' printed (rm -r my build), which a paste ran on
    ./my and ./build (a tester); its ls -ld too. Both are quoted by the one quoting function."""
    from aiedsl.builddir import swap

    monkeypatch.chdir(tmp_path)
    old = tmp_path / "my build"
    old.mkdir()
    (old / "aie.mlir").write_text("// generated by aiedsl 0.0.1 (do not edit)\n")
    for name in ("my", "build"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "keep.txt").write_text("mine\n")
    assert _main("build", str(PASSTHROUGH), "-o", "my build") == 2
    err = capsys.readouterr().err
    assert err == (
        "error [output directory]: my build holds 1 file aiedsl did not write, and a build "
        "replaces the whole directory\n"
        "  limit: a new or empty directory, or a build directory holding only what aiedsl "
        "wrote\n"
        "  found: aie.mlir\n"
        "  fix: my build looks like a build from an aiedsl older than the build marker "
        f"({MARKER}): delete it once (rm -r 'my build') and build again\n")
    pasted = re.search(r"\((rm -r .*)\) and build again", err)
    assert pasted is not None
    subprocess.run(["sh", "-c", pasted[1]], check=True)
    assert entries(tmp_path) == ["build/", "build/keep.txt", "my/", "my/keep.txt"]

    write(_gen(), "my p")

    def exchange(a: Path, b: Path) -> bool:
        raise PermissionError(13, "Permission denied", str(b))

    monkeypatch.setattr(swap, "_exchange", exchange)
    with pytest.raises(DesignError) as e:
        write(_gen(8192), "my p")
    assert str(e.value) == (
        "error [output directory]: cannot write my p: Permission denied\n"
        "  fix: make my p writable for you (ls -ld 'my p' shows who may write it), or choose "
        "another path with -o")


def test_a_path_with_a_line_break_stays_on_its_line_of_the_message(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "new\nline").write_text("a file\n")
    assert _main("build", str(PASSTHROUGH), "-o", "new\nline/o") == 2
    assert capsys.readouterr().err == (
        "error [output directory]: cannot write new\\nline/o: Not a directory (at "
        "new\\nline/.o.aiedsl-new)\n"
        "  fix: new\\nline is a file, not a folder: choose another path with -o\n")
    (tmp_path / "new\nline").unlink()
    (tmp_path / "new\nline").mkdir()
    (tmp_path / "new\nline" / "o").mkdir()
    (tmp_path / "new\nline" / "o" / "a\nb").write_text("mine\n")
    assert _main("build", str(PASSTHROUGH), "-o", "new\nline/o") == 2
    assert capsys.readouterr().err == (
        "error [output directory]: new\\nline/o holds 1 file aiedsl did not write, and a build "
        "replaces the whole directory\n"
        "  limit: a new or empty directory, or a build directory holding only what aiedsl "
        "wrote\n"
        "  found: a\\nb\n"
        "  fix: choose another directory with -o, or move those files out of new\\nline/o\n")


def test_an_output_directory_that_cannot_be_read_is_a_design_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from aiedsl.builddir import refuse

    monkeypatch.chdir(tmp_path)
    (tmp_path / "p").mkdir()

    def unreadable(folder: Path) -> list[str]:  # what scandir meets in a chmod 300 folder
        raise PermissionError(13, "Permission denied", str(folder))

    monkeypatch.setattr(refuse, "foreign", unreadable)
    with pytest.raises(DesignError) as e:
        write(_gen(), "p")
    assert str(e.value) == (
        "error [output directory]: cannot read p: Permission denied\n"
        "  fix: make p readable for you (ls -ld p shows who may read it), or choose another "
        "path with -o")
    assert entries(tmp_path) == ["p/"]


@pytest.mark.skipif(not os.path.exists("/dev/null"), reason="needs /dev/null")
def test_an_output_directory_that_is_a_device_is_called_one(
        capsys: pytest.CaptureFixture) -> None:
    """-o /dev/null was called "a file", and the fix said to move it away (a tester)."""
    assert _main("build", str(PASSTHROUGH), "-o", "/dev/null") == 2
    assert capsys.readouterr().err == (
        "error [output directory]: /dev/null is a device, a pipe or a socket, not a directory\n"
        "  fix: choose a directory with -o\n")


def test_build_sh_is_executable_under_the_umask(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """build.sh was always 0o755: readable by everyone under a umask of 077."""
    monkeypatch.chdir(tmp_path)
    old = os.umask(0o077)
    try:
        out = write(_gen(), "p")
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(out / "build.sh").st_mode) == 0o700
    assert stat.S_IMODE(os.stat(out / "aie.mlir").st_mode) == 0o600


@pytest.mark.skipif(os.name != "posix", reason="POSIX permission bits")
def test_a_rebuild_keeps_the_build_directorys_permissions(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The new tree is swapped in as a folder of its own: a private (0700) build directory came
    back 0755, a shared setgid one lost its bit (a build-farm tester)."""
    monkeypatch.chdir(tmp_path)
    write(_gen(), "p")
    for mode in (0o700, 0o2750):
        (tmp_path / "p").chmod(mode)
        write(_gen(8192 if mode == 0o700 else 4096), "p")
        assert stat.S_IMODE((tmp_path / "p").stat().st_mode) == mode
    # in a shared (setgid) folder, its folders keep the bit, so what is made in them later
    # takes the folder's group (a reviewer)
    assert (tmp_path / "p" / "kernels").stat().st_mode & stat.S_ISGID


def test_a_compile_log_edited_by_hand_is_refused_as_a_generated_file_is(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What --compile leaves (its logs, manifest.json) had no digest, so a rebuild deleted an
    edit of it without a word (a build-farm tester); what build.sh writes when run by hand
    (aie.xclbin, insts.bin, the objects) stays unrecorded, as build.sh rewrites it."""
    _fake_tools(tmp_path / "tools", monkeypatch)
    monkeypatch.chdir(tmp_path)
    aiedsl.build(PASSTHROUGH, output="out", compile=True)
    digests = read_marker(tmp_path / "out")["digests"]
    assert {"manifest.json", "logs/aiecc.log"} <= set(digests)
    assert not {"aie.xclbin", "insts.bin"} & set(digests)
    (tmp_path / "out" / "logs" / "aiecc.log").write_text("my notes\n")
    with pytest.raises(DesignError) as e:
        write(_gen(8192), "out")
    assert str(e.value).splitlines()[:2] == [
        "error [output directory]: out holds 1 file aiedsl wrote that was edited since, and a "
        "build replaces the whole directory: the edit would be lost",
        "  found: logs/aiecc.log"]


def test_a_link_to_nothing_as_the_output_directory_is_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    """-o through a dangling symlink built at its target, making the folders on the way there
    (a build-farm tester); --stats and --trace refused such a link already."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere" / "deep")
    assert _main("build", str(PASSTHROUGH), "-o", "dangling") == 2
    assert capsys.readouterr().err.splitlines()[0] == (
        f"error [output directory]: dangling is a symbolic link to {tmp_path}/nowhere/deep, "
        "which does not exist, and aiedsl did not make it")
    assert sorted(os.listdir(tmp_path)) == ["dangling"]


def test_a_mount_point_as_the_output_directory_is_refused_with_a_folder_inside_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    """-o /out, a container's bind mount, failed with "Device or resource busy" and a fix that
    did not apply (a build-farm tester): the swap renames the folder, which a mount refuses."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mnt").mkdir()
    real = os.path.ismount
    monkeypatch.setattr(os.path, "ismount", lambda p: str(p) == str(tmp_path / "mnt") or real(p))
    assert _main("build", str(PASSTHROUGH), "-o", "mnt") == 2
    assert capsys.readouterr().err == (
        "error [output directory]: cannot build into mnt: it is a mount point, and a build "
        "replaces its output directory whole, by renaming it, which a mount point refuses\n"
        "  fix: build into a folder inside it, e.g. -o mnt/passthrough\n")
    assert os.listdir(tmp_path / "mnt") == []


def test_a_log_a_tool_rewrites_in_place_is_not_taken_for_an_edit(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A lowering's log, recorded with its digest when it arrived, was rewritten in place by the
    next lowering and kept the old digest: the build after was refused as edited (a
    reviewer)."""
    from aiedsl.builddir.build import tool_outputs

    monkeypatch.chdir(tmp_path)
    out = write(_gen(), "p")
    for text in ("first run\n", "second run\n"):
        with tool_outputs(out):
            (out / "logs").mkdir(exist_ok=True)
            (out / "logs" / "lower.log").write_text(text)
    write(_gen(8192), "p")  # not refused
