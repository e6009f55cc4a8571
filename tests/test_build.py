"""aiedsl build: the files it writes, determinism, overrides, and the pattern/layout helpers."""

from __future__ import annotations

import builtins
import json
import os
import subprocess
import sys
from typing import Any
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from aiedsl.builddir.build import tool_outputs
from aiedsl.emit import generate, write
from aiedsl.errors import DesignError
from aiedsl.ir.design import Design
from aiedsl.ir.types import Pattern
from aiedsl.kernels import block, block_dims, unblock, unblock_dims
from aiedsl.kernels.library import matmul_ref
from aiedsl.loader import load_design
from aiedsl.version import __version__

ROOT = Path(__file__).resolve().parents[1]
DESIGNS = ["passthrough", "vector_scalar_mul", "gemm_bf16", "gemm_i8"]


@pytest.mark.parametrize("name", DESIGNS)
def test_build_writes_every_file(name: str, in_root: Path, tmp_path: Path) -> None:
    out = write(generate(load_design(f"designs/{name}.py")), tmp_path / name)
    files = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file())
    assert {"aie.mlir", "build.sh", "design.json", "report.txt"} <= set(files)
    assert any(f.startswith("kernels/") and f.endswith(".cc") for f in files)
    assert (out / "build.sh").stat().st_mode & 0o111
    Design.model_validate_json((out / "design.json").read_text())  # the IR round-trips


def test_gemm_build_has_the_kernels_and_the_exact_commands(in_root: Path, tmp_path: Path) -> None:
    out = write(generate(load_design("designs/gemm_bf16.py")), tmp_path / "g")
    assert sorted(p.name for p in (out / "kernels").iterdir()) == [
        "matmul_bf16_f32_64x64x64_4x8x4.cc", "zero_f32_4096.cc"]
    mm = (out / "kernels" / "matmul_bf16_f32_64x64x64_4x8x4.cc").read_text()
    assert "void matmul_bf16_f32_64x64x64_4x8x4(bfloat16 *a, bfloat16 *b, float *c) {\n" \
           "  matmul_blocked<bfloat16, float, 4, 8, 4, 64, 64, 64>(a, b, c);\n}" in mm
    sh = (out / "build.sh").read_text().splitlines()
    assert ('"$PEANO_INSTALL_DIR"/bin/clang++ -O2 -std=c++20 --target=aie2-none-unknown-elf '
            "-Wno-parentheses -Wno-attributes -Wno-macro-redefined -Wno-empty-body "
            "-Wno-missing-template-arg-list-after-template-kw -DNDEBUG -D__AIE_API_AIE_ADF_HPP__ "
            '-fstack-usage -ffunction-sections -I"$MLIR_AIE_INSTALL_DIR"/include '
            '-I"$MLIR_AIE_INSTALL_DIR"/aie_runtime_lib/AIE2 '
            "-c kernels/matmul_bf16_f32_64x64x64_4x8x4.cc -o matmul_bf16_f32_64x64x64_4x8x4.o"
            ) in sh
    # the aiecc options are chosen when build.sh runs, from that aiecc's --help
    assert sh[-1] == ('"$aiecc" ${backend[@]+"${backend[@]}"} ${outputs[@]+"${outputs[@]}"} '
                      'aie.mlir')
    assert "  outputs=(--get-xclbin --xclbin-name=aie.xclbin --get-npu-insts " \
           "--npu-insts-name=insts.bin)" in sh


def test_gemm_report_counts_resources(in_root: Path) -> None:
    gen = generate(load_design("designs/gemm_bf16.py"))
    report = gen.files["report.txt"]
    # A and B double-buffered (2 x 8 KB each), C single (16 KB), 1 KB stack.
    assert "(0,2)  core     49.0 / 64 KB    2 / 2   1 / 2    6 / 16   5 / 16   core[0,0]" in report
    # A, B: 2 x 8 KB; C join: 2 x 64 KB. Six inputs: A, B and four C tiles.
    assert "(0,1)  memtile  160.0 / 512 KB  6 / 6   3 / 6    12 / 64  24 / 48" in report


@pytest.mark.parametrize("name", DESIGNS)
def test_build_is_deterministic(name: str, in_root: Path) -> None:
    a = generate(load_design(f"designs/{name}.py")).files
    b = generate(load_design(f"designs/{name}.py")).files
    assert a == b


def test_build_cli_is_byte_identical_across_runs(in_root: Path, tmp_path: Path) -> None:
    outs = []
    for i in range(2):
        out = tmp_path / str(i)
        subprocess.run([sys.executable, "-m", "aiedsl.cli", "build", "designs/passthrough.py",
                        "-o", str(out)], check=True, capture_output=True)
        outs.append({p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()})
    assert outs[0] == outs[1]


@pytest.mark.parametrize("damage", ["truncated", "not code"])
def test_a_damaged_template_cache_entry_is_a_miss(
        in_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: str) -> None:
    """A cache entry cut short stopped every build with an UnpicklingError, exit 1 (a tester):
    now it is compiled again and written over."""
    import io
    import marshal
    import pickle

    from jinja2.bccache import bc_magic

    from aiedsl import render

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    render.environment.cache_clear()  # an environment with the cache of this test's home
    try:
        want = generate(load_design("designs/passthrough.py")).files
        cached = sorted((tmp_path / "cache" / "aiedsl" / "templates").iterdir())
        assert cached
        good = {p: p.read_bytes() for p in cached}
        for p, data in good.items():
            if damage == "truncated":
                p.write_bytes(data[:20])
            else:  # jinja2's header and the template's checksum, then a marshalled int
                f = io.BytesIO(data)
                f.read(len(bc_magic))
                pickle.load(f)
                p.write_bytes(data[:f.tell()] + marshal.dumps(7))
        render.environment.cache_clear()
        assert generate(load_design("designs/passthrough.py")).files == want
        for p in cached:  # written over with a whole entry (its bytes need not be the
            # first's: marshal's references to shared objects depend on reference counts,
            # which differ between Python releases and runs)
            f = io.BytesIO(p.read_bytes())
            assert f.read(len(bc_magic)) == bc_magic
            pickle.load(f)
            assert type(marshal.load(f)).__name__ == "code"
    finally:
        render.environment.cache_clear()


def test_a_relative_xdg_cache_home_is_ignored(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """XDG_CACHE_HOME=relcache put the cache in ./relcache of whatever folder a command ran in
    (a tester's ``aiedsl kernel test``); the XDG Base Directory specification calls a relative
    path there invalid, to be ignored: the cache goes to ~/.cache."""
    from aiedsl import render
    from aiedsl.cache import cache_dir

    home = tmp_path / "home"
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CACHE_HOME", "relcache")
    monkeypatch.chdir(work)
    assert cache_dir("host-kernels") == home / ".cache" / "aiedsl" / "host-kernels"
    render.environment.cache_clear()  # an environment with the cache of this test's home
    try:
        generate(load_design(ROOT / "designs" / "passthrough.py"))
    finally:
        render.environment.cache_clear()
    assert os.listdir(work) == []
    assert os.listdir(home / ".cache" / "aiedsl" / "templates")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "abs"))  # an absolute one is used
    assert cache_dir("templates") == tmp_path / "abs" / "aiedsl" / "templates"


def test_a_template_cache_that_cannot_be_written_is_not_used(
        in_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import jinja2.bccache

    from aiedsl import render

    def refuse(*args: object, **kwargs: object) -> None:  # a folder chmod 555 (root writes)
        raise PermissionError(13, "Permission denied", str(tmp_path / "cache"))

    def refuse_writing(file: object, mode: str = "r", *args: object, **kwargs: object) -> Any:
        if "w" in mode:  # an older jinja2 (3.1.0) opens the entry itself, no temporary file
            refuse()
        return builtins.open(file, mode, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(jinja2.bccache.tempfile, "NamedTemporaryFile", refuse)
    monkeypatch.setattr(jinja2.bccache, "open", refuse_writing, raising=False)
    render.environment.cache_clear()
    try:
        files = generate(load_design("designs/passthrough.py")).files
    finally:
        render.environment.cache_clear()
    assert files["aie.mlir"].startswith("// passthrough")
    assert os.listdir(tmp_path / "cache" / "aiedsl" / "templates") == []


_OWN_KERNEL = '''
from aiedsl import Tensor, design, fifo, herd, i32, runtime
from aiedsl.kernels import buffer, declare

@design(device="npu1_1col")
def d(X: Tensor[256, i32], Y: Tensor[256, i32]):
    k = declare("dbl_256", source="dbl.cc", entry="dbl<256>",
                args=[buffer("a", Tensor[256, i32]), buffer("o", Tensor[256, i32], "out")],
                reference=lambda a, o: None, cycles=100, cost="-")
    a = fifo(Tensor[256, i32], name="a")
    b = fifo(Tensor[256, i32], name="b")

    @herd()
    def core():
        with a.consume() as s, b.produce() as t:
            k(s, t)

    with runtime() as rt:
        rt.fill(a, X)
        rt.drain(b, Y)
'''


def test_build_is_the_same_from_any_working_directory(tmp_path: Path) -> None:
    """The design's path as the working directory saw it went into aie.mlir, design.json and
    the kernels' C++ (a tester: built from two folders, the files differed, and a rebuild from
    the other folder dropped the compiled outputs). Files now record paths relative to the
    design's folder."""
    designs = tmp_path / "proj" / "designs"
    designs.mkdir(parents=True)
    (designs / "d.py").write_text(_OWN_KERNEL)
    (designs / "dbl.cc").write_text("template <unsigned N> void dbl(const int *a, int *o) {}\n")
    outs = []
    for cwd, arg in ((designs, "d.py"), (tmp_path, "proj/designs/d.py"),
                     (Path("/"), str(designs / "d.py"))):
        out = tmp_path / "out" / str(len(outs))
        subprocess.run([sys.executable, "-m", "aiedsl.cli", "build", arg, "-o", str(out)],
                       check=True, capture_output=True, cwd=cwd)
        outs.append({p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()
                     if p.name != ".aiedsl-build.json"})
    assert outs[0] == outs[1] == outs[2]
    for rel, data in outs[0].items():
        assert b"proj" not in data and str(tmp_path).encode() not in data, rel
    mlir = outs[0][Path("aie.mlir")].decode()
    assert mlir.startswith("// d: generated by aiedsl ") and " from d.py (do not edit)" in mlir
    assert "(memref<256xi32>, memref<256xi32>) -> () loc(\"d.py\":16:0)\n" in mlir
    cc = outs[0][Path("kernels/dbl_256.cc")].decode().splitlines()
    assert cc[0] == f"// dbl_256: generated by aiedsl {__version__} from dbl.cc (do not edit here)"
    assert cc[2] == "// Called by design 'd' at: d.py:16"


def test_generated_files_name_library_files_by_their_package(tmp_path: Path) -> None:
    """A location in aiedsl itself or in an installed package is recorded from the folder
    packages are installed in, not from the design (where the venv is must not matter)."""
    import sysconfig

    import aiedsl
    from aiedsl.errors import stable_path

    base = Path(aiedsl.__file__).resolve().parent
    assert stable_path(str(base / "kernels" / "base.py"), str(tmp_path)) == \
        "aiedsl/kernels/base.py"
    lib = sysconfig.get_paths()["purelib"]
    assert stable_path(f"{lib}/numpy/core.py", str(tmp_path)) == "numpy/core.py"
    assert stable_path(str(tmp_path / "a" / "d.py"), str(tmp_path / "a")) == "d.py"
    assert stable_path(str(tmp_path / "lib" / "h.py"), str(tmp_path / "a")) == "../lib/h.py"
    assert stable_path("<unknown>", str(tmp_path)) == "<unknown>"


def test_defines_override_sizes(in_root: Path) -> None:
    d = load_design("designs/gemm_bf16.py", {"M": "1024", "N": "256"}).ir
    assert d.defines["M"] == 1024 and d.defines["N"] == 256
    assert d.tensor("A").type.shape == (1024, 512)
    assert d.tensor("C").type.shape == (1024, 256)


def test_device_override(in_root: Path) -> None:
    d = load_design("designs/gemm_bf16.py", {"COLS": "8"}, device="npu2").ir
    assert d.device == "npu2" and len(d.cores) == 32


def test_rebuild_keeps_toolchain_outputs(in_root: Path, tmp_path: Path) -> None:
    gen = generate(load_design("designs/passthrough.py"))
    out = write(gen, tmp_path / "p")
    with tool_outputs(out):  # as --compile runs the tools: what they make is aiedsl's
        (out / "aie.xclbin").write_bytes(b"xclbin")
    write(gen, out)
    assert (out / "aie.xclbin").read_bytes() == b"xclbin"


# -- tiles(): the GEMM's runtime patterns are one line each (compare IRON's GEMM) -----------

def _tiles(**kw: object) -> Pattern:
    from aiedsl import Tensor, design, fifo, herd, i16, runtime, tiles

    got: list[Pattern] = []

    @design(device="npu1")
    def d(A: Tensor[512, 512, i16]) -> None:
        got.append(tiles(A, **kw))  # type: ignore[arg-type]
        f = fifo(Tensor[64, i16])

        @herd()
        def core() -> None:
            with f.consume():
                pass

        with runtime() as rt:
            rt.fill(f, A, (0, [64], [1]))

    return got[0]


def test_tiles_row_of_tiles_repeated() -> None:
    p = _tiles(tile=(64, 64), rows=4, repeat=2)
    assert (p.offset, p.sizes, p.strides) == (131072, (2, 8, 64, 64), (0, 64, 512, 1))


def test_tiles_column_major_merges_contiguous_rows() -> None:
    p = _tiles(tile=(64, 64), cols=range(1, 8, 4), order="col")
    assert (p.offset, p.sizes, p.strides) == (64, (1, 2, 512, 64), (0, 256, 512, 1))


def test_tiles_grouped() -> None:
    p = _tiles(tile=(64, 64), cols=range(2, 8, 4), order="grouped", group=4)
    assert (p.offset, p.sizes, p.strides) == (128, (2, 2, 256, 64), (131072, 256, 512, 1))


def test_tiles_whole_matrix_is_one_linear_run() -> None:
    p = _tiles(tile=(64, 512))
    assert (p.offset, p.sizes, p.strides) == (0, (1, 1, 1, 262144), (0, 0, 0, 1))


def test_tiles_visit_the_right_elements() -> None:
    p = _tiles(tile=(64, 64), cols=range(1, 8, 4), order="col")
    m = np.arange(512 * 512).reshape(512, 512)
    got = m.reshape(-1)[p.indices()].reshape(2, 512, 64)
    assert (got[0] == m[:, 64:128]).all() and (got[1] == m[:, 320:384]).all()


# -- layouts and the matmul reference ---------------------------------------------------------

def _address(dims: list[tuple[int, int]]) -> np.ndarray:
    idx = np.array(0)
    for size, stride in dims:
        idx = idx[..., None] + np.arange(size) * stride
    return idx.ravel()


def test_block_dims_pack_and_unblock_dims_unpack() -> None:
    m = np.arange(64 * 64).reshape(64, 64)
    assert (m.reshape(-1)[_address(block_dims(64, 64, 4, 8))] == block(m, 4, 8)).all()
    assert (block(m, 4, 4)[_address(unblock_dims(64, 64, 4, 4))] == m.reshape(-1)).all()
    assert (unblock(block(m, 8, 4), 64, 64, 8, 4) == m).all()


@pytest.mark.parametrize("m, br, bc", [
    (np.arange(64).reshape(8, 8), 4, 8),                        # blocks of whole rows
    (np.arange(64).reshape(8, 8), 8, 8),                        # one block: the matrix
    (np.arange(64).reshape(8, 8), 4, 4),
    (np.asfortranarray(np.arange(64).reshape(8, 8)), 4, 8),     # not in C order
    (np.arange(8 * 24, dtype=np.int8).reshape(8, 24), 4, 24),   # 24 bytes: no move unit
])
def test_block_and_unblock_return_new_arrays(m: np.ndarray, br: int, bc: int) -> None:
    """Documented as "a new array", block() returned a view of m when its blocks spanned
    whole rows: written into, it changed m (a tester), and in a reference, whose inputs are
    read-only, the write was called a write into a read-only array."""
    rows, cols = m.shape
    before = m.copy()
    blocked = block(m, br, bc)
    assert not np.shares_memory(blocked, m) and blocked.flags.writeable
    blocked[...] = -1
    assert np.array_equal(m, before)
    flat = block(m, br, bc)
    back = unblock(flat, rows, cols, br, bc)
    assert np.array_equal(back, m) and not np.shares_memory(back, flat)
    m.flags.writeable = False  # as a reference is handed its inputs
    block(m, br, bc)[...] = 0
    unblock(flat, rows, cols, br, bc)[...] = 0


def test_block_of_a_matrix_its_blocks_do_not_tile_is_a_block_layout_error(
        in_root: Path) -> None:
    """block(np.arange(60).reshape(6, 10), 4, 4) raised numpy's bare ValueError ("cannot
    reshape array of size 60 into shape (1,4,2,4)"); block_dims gave error [block layout]."""
    with pytest.raises(DesignError) as e:
        block(np.arange(60).reshape(6, 10), 4, 4)  # the caller's line
    line = _test_line("block(np.arange(60).reshape(6, 10), 4, 4)  # the caller's line")
    assert str(e.value) == (
        f"tests/test_build.py:{line}: error [block layout]: block(m, 4, 4) with m of shape "
        "[6, 10]: blocks of 4 rows do not tile 6 rows\n"
        "  limit: br dividing rows: the tile is whole blocks\n"
        "  found: rows % br = 6 % 4 = 2\n"
        "  fix: give the tile's size and the kernel's blocks: the mmul's r, s, t (mm.ir.params)")
    with pytest.raises(DesignError) as e:
        block(np.arange(60), 4, 4)
    assert str(e.value).split(": ", 1)[1] == (
        "error [block layout]: block(m, 4, 4) with m of shape [60]\n"
        "  limit: a 2-D matrix (rows, cols)\n"
        "  found: shape [60]\n"
        "  fix: pass the matrix as rows x cols, e.g. m.reshape(rows, cols)")
    with pytest.raises(DesignError) as e:
        unblock(np.arange(60), 8, 8, 4, 4)
    assert str(e.value).split(": ", 1)[1] == (
        "error [block layout]: unblock(flat, 8, 8, 4, 4) with flat of 60 elements: 8 x 8 is "
        "64\n"
        "  limit: rows x cols elements\n"
        "  found: 60 elements\n"
        "  fix: give the matrix's rows and cols, and its blocks br, bc")
    with pytest.raises(DesignError) as e:
        unblock(np.arange(64), 8, 8, 4, 3)
    assert str(e.value).split(": ", 1)[1].splitlines()[0] == (
        "error [block layout]: unblock(flat, 8, 8, 4, 3) with flat of 64 elements: blocks of "
        "3 cols do not tile 8 cols")


def _test_line(marker: str) -> int:
    """The line of this file that holds ``marker`` (a call an error must point at)."""
    lines = Path(__file__).read_text().splitlines()
    return next(i for i, text in enumerate(lines, 1) if marker in text and "_test_line" not in text)


def test_matmul_reference_on_blocked_buffers_matches_numpy() -> None:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((64, 32)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((32, 16)).astype(ml_dtypes.bfloat16)
    c0 = rng.standard_normal((64, 16)).astype(np.float32)
    cbuf = block(c0, 4, 4).copy()
    matmul_ref(block(a, 4, 8), block(b, 8, 4), cbuf, m=64, k=32, n=16, r=4, s=8, t=4)
    want = c0 + a.astype(np.float32) @ b.astype(np.float32)
    np.testing.assert_allclose(unblock(cbuf, 64, 16, 4, 4), want, rtol=1e-6, atol=1e-5)


def test_design_json_is_plain_data(in_root: Path) -> None:
    d = generate(load_design("designs/vector_scalar_mul.py")).files["design.json"]
    data = json.loads(d)
    assert list(data)[0] == "ir_version" and data["ir_version"] == 1  # first: a reader checks it
    assert [f["name"] for f in data["fifos"]] == ["infactor", "in", "out"]
    assert data["kernels"][0]["symbol"] == "scale_i16_1024"


def test_a_build_replacing_another_design_files_build_says_so(tmp_path: Path) -> None:
    """Two design files of one design name build into one build/<name>: the second replaced
    the first's without a word (an MLIR-AIR user's tester)."""
    import aiedsl

    root = Path(__file__).resolve().parent.parent
    text = (root / "designs" / "passthrough.py").read_text()
    for name in ("a.py", "b.py"):
        (tmp_path / name).write_text(text)
    first = aiedsl.build(tmp_path / "a.py", output=tmp_path / "out", lower=False)
    assert first.replaced == ""
    again = aiedsl.build(tmp_path / "a.py", output=tmp_path / "out", lower=False)
    assert again.replaced == ""
    other = aiedsl.build(tmp_path / "b.py", output=tmp_path / "out", lower=False)
    assert other.replaced == "a.py"
    env = {**os.environ, "PYTHONPATH": str(root), "COLUMNS": "400"}
    r = subprocess.run([sys.executable, "-m", "aiedsl.cli", "build", "a.py", "-o", "out"],
                       capture_output=True, text=True, env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert ("note: out/ held the build of b.py, another design file of the design name "
            "'passthrough', which this build replaced: give each its own directory (-o) to "
            "keep both\n") in r.stdout
