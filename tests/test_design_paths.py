"""The files a design names are found from the design's own folder, whatever the working
directory is by the time they are read: a kernel's C++ beside the design file, the design's
own lines. Locations (``Loc.file``) are what the user reads, relative to the working directory
of the moment they were recorded; :attr:`~aiedsl.ir.loc.Loc.path` is the file to open.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from aiedsl.emit import generate
from aiedsl.errors import DesignError
from aiedsl.loader import load_design

DOUBLE_CC = '''#include <aie_api/aie.hpp>
template <unsigned N> void double_i32(const int32_t *in, int32_t *out) {
  for (unsigned i = 0; i < N; i += 16)
    aie::store_v(out + i, aie::add(aie::load_v<16>(in + i), aie::load_v<16>(in + i)));
}
'''

OTHER_CC = DOUBLE_CC.replace("aie::add(", "aie::sub(")
"""Another folder's double.cc: what the working directory's lookup compiled instead."""

DBL = '''
from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
from aiedsl.kernels import buffer, declare


def double_ref(src, dst):
    dst[...] = src * 2


@design(device="npu1_1col")
def dbl(inp: Tensor[4096, i32], out: Tensor[4096, i32]):
    a = fifo(Tensor[1024, i32])
    b = a.forward()
    c = fifo(Tensor[1024, i32])
    d = c.forward()
    k = declare("double_i32_1024", source="double.cc", entry="double_i32<1024>",
                args=[buffer("src", Tensor[1024, i32]), buffer("dst", Tensor[1024, i32], "out")],
                reference=double_ref, cost="s", cycles=142, ops=1024)

    @herd()
    def core():
        for _ in loop(4):
            with b.consume() as s, c.produce() as o:
                k(s, o)

    with runtime() as rt:
        rt.fill(a, inp)
        rt.drain(d, out, wait=True)


@dbl.reference
def ref(inp):
    return inp * 2
'''


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``proj/designs/dbl.py`` with its ``double.cc``, ``other/`` holding another
    ``double.cc``, ``empty/`` none; the working directory is ``proj/designs``."""
    designs = tmp_path / "proj" / "designs"
    designs.mkdir(parents=True)
    (designs / "dbl.py").write_text(DBL)
    (designs / "double.cc").write_text(DOUBLE_CC)
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "double.cc").write_text(OTHER_CC)
    (tmp_path / "empty").mkdir()
    monkeypatch.chdir(designs)
    return tmp_path


def test_a_kernels_cpp_is_read_beside_the_design_whatever_the_working_directory(
        project: Path) -> None:
    """A tester's: loaded, then the process changed directory (a notebook, a sweep), the design
    compiled the other folder's double.cc (a silently wrong kernel), and was refused where the
    working directory had none: the C++ was looked up from the location's display path."""
    handle = load_design("dbl.py")
    want = generate(handle).files
    assert "aie::add(" in want["kernels/double_i32_1024.cc"]
    for folder in ("other", "empty"):
        os.chdir(project / folder)
        assert generate(handle).files == want
    assert handle.ir.loc.file == "dbl.py"  # what messages and outputs read: unchanged
    assert handle.ir.loc.path == str(project / "proj" / "designs" / "dbl.py")


def test_a_designs_own_lines_are_read_from_it_whatever_the_working_directory(
        project: Path) -> None:
    """A message quoting the design's own text (how an argument was written) read the file
    its location names from the working directory of the moment: another folder's dbl.py."""
    from aiedsl.source_loc import written_arguments

    handle = load_design("dbl.py")
    call = handle.ir.cores[0].body[0].body[2]  # type: ignore[union-attr]  # the loop's call
    (project / "other" / "dbl.py").write_text("\n" * 40)
    os.chdir(project / "other")
    assert written_arguments(call.loc, 2) == ["s", "o"]


def test_a_location_is_its_file_and_line_as_the_user_reads_them(project: Path) -> None:
    """Where a location's file is opened is no part of it: design.json's locations, read back
    without it, are the same, and so are the IRs holding them."""
    from aiedsl.ir.loc import Loc

    loc = load_design("dbl.py").ir.loc
    assert loc == Loc(file="dbl.py", line=loc.line) and loc.path != "dbl.py"
    assert hash(loc) == hash(Loc(file="dbl.py", line=loc.line))
    assert loc.model_dump_json() == f'{{"file":"dbl.py","line":{loc.line}}}'
    assert Loc(file="d.py", line=3).path == "d.py"  # made by hand: the file as it is named


def test_a_kernel_source_missing_beside_the_design_is_refused_wherever_the_process_is(
        project: Path) -> None:
    """The other side: a design whose folder lacks the C++ is refused even from a folder that
    has a file of that name."""
    (project / "proj" / "designs" / "double.cc").unlink()
    handle = load_design("dbl.py")
    os.chdir(project / "other")
    with pytest.raises(DesignError) as e:
        generate(handle)
    assert str(e.value).splitlines()[0] == (
        "dbl.py:16: error [kernel source]: kernel 'double_i32_1024' names double.cc, found "
        f"neither beside dbl.py (in {project / 'proj' / 'designs'}) nor in aiedsl's "
        "kernels_cpp/")
    os.chdir(project / "proj" / "designs")
    with pytest.raises(DesignError) as e:
        generate(handle)
    assert str(e.value).splitlines()[0].endswith(
        "found neither beside dbl.py nor in aiedsl's kernels_cpp/")


# -- a design reached through a symlink ------------------------------------------------------------

MYLIB = '''
from aiedsl import Tensor, i32
from aiedsl.kernels import buffer, declare


def double_ref(src, dst):
    dst[...] = src * 2


def make_double():
    return declare("double_i32_1024", source="double.cc", entry="double_i32<1024>",
                   args=[buffer("src", Tensor[1024, i32]), buffer("dst", Tensor[1024, i32], "out")],
                   reference=double_ref, cost="store-bound", cycles=142, ops=1024)
'''

DBL_LIB = DBL.replace("from aiedsl.kernels import buffer, declare\n",
                      "from aiedsl.kernels import buffer, declare\nfrom mylib import make_double\n")
DBL_LIB = DBL_LIB[:DBL_LIB.index("    k = declare(")] + "    k = make_double()\n" + \
    DBL_LIB[DBL_LIB.index("\n    @herd()"):]


@pytest.fixture
def linked(project: Path) -> Path:
    """``project`` with ``proj/designs/lib_dbl.py`` importing its kernel from ``mylib.py``
    beside it, ``projlink`` a symlink to ``proj``, and ``sl/`` symlinks to both design files
    beside a ``double.cc`` of its own (another's); the working directory is the root."""
    designs = project / "proj" / "designs"
    (designs / "mylib.py").write_text(MYLIB)
    (designs / "lib_dbl.py").write_text(DBL_LIB)
    (project / "projlink").symlink_to(project / "proj")
    (project / "sl").mkdir()
    for name in ("dbl.py", "lib_dbl.py"):
        (project / "sl" / name).symlink_to(designs / name)
    (project / "sl" / "double.cc").write_text(OTHER_CC)
    os.chdir(project)
    return project


@pytest.mark.parametrize("name", ["dbl.py", "lib_dbl.py"])
def test_outputs_are_the_same_however_the_design_is_reached(linked: Path, name: str) -> None:
    """A tester's: through a symlinked folder, the helper module (imported from the resolved
    folder the loader puts on the import path) was recorded as
    ``../../proj/designs/mylib.py`` in design.json and in the kernel's header (its cache key
    too); through a symlinked file, the kernel's C++ was looked for beside the symlink (here
    another double.cc), not where its imported modules are found."""
    real = generate(load_design(f"proj/designs/{name}")).files
    assert "aie::add(" in real["kernels/double_i32_1024.cc"]
    assert "../" not in real["design.json"] and "../" not in real["kernels/double_i32_1024.cc"]
    for path in (f"projlink/designs/{name}", f"sl/{name}"):
        assert generate(load_design(path)).files == real, path
    if name == "lib_dbl.py":
        assert '"file": "mylib.py"' in real["design.json"]


def test_a_map_of_the_real_path_fits_a_build_made_through_a_symlink(linked: Path) -> None:
    """A tester's: ``aiedsl map <real path>`` after ``aiedsl build <symlinked path>`` was
    refused as the map of another design (their design.json differed)."""
    import subprocess
    import sys

    def aiedsl(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "aiedsl", *args], capture_output=True,
                              text=True, cwd=linked)

    assert aiedsl("build", "projlink/designs/lib_dbl.py", "-o", "out").returncode == 0
    done = aiedsl("map", "proj/designs/lib_dbl.py", "-o", "out/map.svg")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "wrote out/map.svg\n"


def test_a_symlinked_design_says_where_its_kernel_source_was_looked_for(linked: Path) -> None:
    """Its C++ is looked for in the folder the symlink leads to, which the message names."""
    (linked / "proj" / "designs" / "double.cc").unlink()
    with pytest.raises(DesignError) as e:
        generate(load_design("sl/dbl.py"))
    assert str(e.value).splitlines()[0] == (
        "sl/dbl.py:16: error [kernel source]: kernel 'double_i32_1024' names double.cc, found "
        "neither beside sl/dbl.py (in proj/designs) nor in aiedsl's "
        "kernels_cpp/")


@pytest.mark.skipif(sys.platform == "darwin", reason="macOS file systems refuse such names")
def test_a_design_file_whose_name_is_not_utf8_is_refused_naming_its_bytes(
        tmp_path: Path) -> None:
    """A file named p\\xff.py passed check and sim, and crashed build (exit 70: its name could
    not be written into design.json): it is refused at load, its bytes shown (a tester)."""
    name = os.fsdecode(b"p\xff.py")
    (tmp_path / name).write_text(
        (Path(__file__).resolve().parent.parent / "designs" / "passthrough.py").read_text())
    r = subprocess.run([sys.executable, "-m", "aiedsl.cli", "build", name, "-o", "out"],
                       cwd=tmp_path, capture_output=True, text=True)
    assert (r.returncode, r.stderr.splitlines()[0]) == (
        2, "error [design file]: the name of p\\xff.py is not UTF-8")
    assert not (tmp_path / "out").exists()
