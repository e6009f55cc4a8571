"""``aiedsl sim --inputs FILE.npz`` and ``aiedsl run --inputs``: a run on the user's own arrays
(a transformer engineer's softmax passed on standard-normal inputs and overflowed on real ones,
and only Python could give it those). Read before anything is built; held to what
``run(a, b)`` takes; np.savez's bf16 (2-byte records) read back as bf16."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from tests.command_line import run_command

ROOT = Path(__file__).resolve().parents[1]
GEMM = str(ROOT / "designs" / "gemm_bf16.py")
SIZE = ["-D", "M=256", "-D", "K=128", "-D", "N=256"]
DEFINES = [f"  -D {d}: {d[0]}'s value, given on the command line"
           for d in ("M=256", "K=128", "N=256")]
"""What the command line adds under an error that quotes the defines' values."""


def aiedsl(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return run_command(*args, cwd=cwd, env={**os.environ, "COLUMNS": "80"})


def _operands() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(7)
    a = (rng.standard_normal((256, 128)) * 30).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((128, 256)).astype(ml_dtypes.bfloat16)
    return a, b


def test_a_run_on_inputs_from_a_file_compares_with_their_reference(tmp_path: Path) -> None:
    a, b = _operands()
    np.savez(tmp_path / "x.npz", A=a, B=b)  # bf16 stored as |V2 records
    r = aiedsl("sim", GEMM, *SIZE, "--inputs", "x.npz", "--stats", "s.json", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines()[0].endswith("(inputs x.npz)")
    stats = json.loads((tmp_path / "s.json").read_text())
    assert (stats["seed"], stats["inputs"], stats["passed"]) == (None, "x.npz", True)
    (out,) = stats["outputs"]
    i, j = out["worst_index"]
    want = a.astype(np.float32)[i] @ b.astype(np.float32)[:, j]
    assert out["want"] == pytest.approx(float(want), rel=1e-5)


@pytest.mark.parametrize("case, message", [
    ("missing", ["error [inputs]: --inputs x.npz: input 'B' of 'gemm_bf16' is missing",
                 "  limit: one array for each tensor the runtime fills: A, B",
                 "  found: 'A'",
                 "  fix: pass 'B' too (then save the file again)"]),
    ("f32", ["error [inputs]: --inputs x.npz: input 'A' of 'gemm_bf16' is float32, not bf16",
             "  limit: 32768 elements of bf16 (Tensor[256, 128, bf16]), in any shape",
             "  found: float32, shape [256, 128]", *DEFINES,
             "  fix: pass A.astype(ml_dtypes.bfloat16) (nothing is converted for you: a cast may "
             "round, truncate or wrap values) (then save the file again)"]),
    ("npy", ["error [inputs]: --inputs x.npz holds one array, not arrays by tensor name",
             "  limit: a .npz of A, B",
             "  found: an .npy array of shape [256, 128]", *DEFINES,
             "  fix: save the arrays by tensor name with np.savez(FILE, A=..., B=...)"]),
    ("text", ["error [inputs]: --inputs x.npz is not a numpy archive",
              "  limit: a .npz file (np.savez)",
              "  found: not an .npy or .npz file",
              "  fix: save the arrays by tensor name with np.savez(FILE, A=..., B=...)"]),
    ("objects", ["error [inputs]: --inputs x.npz: array 'A' holds Python objects",
                 "  limit: numbers of the tensor's element type",
                 "  found: dtype object",
                 "  fix: save 'A' as a numeric array (save the arrays by tensor name with "
                 "np.savez(FILE, A=..., B=...))"]),
])
def test_a_file_the_design_cannot_take_is_said_before_anything_is_built(
        tmp_path: Path, case: str, message: list[str]) -> None:
    a, b = _operands()
    path = tmp_path / "x.npz"
    if case == "missing":
        np.savez(path, A=a)
    elif case == "f32":
        np.savez(path, A=a.astype(np.float32), B=b)
    elif case == "npy":
        with open(path, "wb") as f:
            np.save(f, a)
    elif case == "text":
        path.write_text("A,B\n1,2\n")
    else:
        np.savez(path, A=np.array([1, "a"], dtype=object), B=b)
    r = aiedsl("run", GEMM, *SIZE, "--inputs", "x.npz", "-o", "out", cwd=tmp_path)
    assert r.returncode == 2, r.stdout + r.stderr
    assert r.stderr.splitlines() == message
    assert not (tmp_path / "out").exists()  # a refused run builds nothing


def test_seed_and_inputs_are_not_both_taken(tmp_path: Path) -> None:
    a, b = _operands()
    np.savez(tmp_path / "x.npz", A=a, B=b)
    r = aiedsl("sim", GEMM, *SIZE, "--inputs", "x.npz", "--seed", "3", cwd=tmp_path)
    assert r.returncode == 2
    assert r.stderr.splitlines() == [
        "error [inputs]: --seed 3 and --inputs x.npz both say where the inputs come from",
        "  fix: give one: --seed draws random inputs, --inputs reads them"]


def _zip(path: Path, members: dict[str, bytes]) -> None:
    import zipfile

    with zipfile.ZipFile(path, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)


def _npy(shape: tuple[int, ...], descr: str, data: bytes = b"") -> bytes:
    import io

    f = io.BytesIO()
    np.lib.format.write_array_header_1_0(f, {"descr": descr, "fortran_order": False,
                                              "shape": shape})
    return f.getvalue() + data


def _npy3(shape: tuple[int, ...], descr: str) -> bytes:
    """An .npy header of format 3.0 (numpy writes one for a utf-8 field name): no data."""
    text = repr({"descr": descr, "fortran_order": False, "shape": shape})
    pad = 64 - (12 + len(text) + 1) % 64
    header = (text + " " * pad + "\n").encode("utf-8")
    return b"\x93NUMPY\x03\x00" + len(header).to_bytes(4, "little") + header


@pytest.mark.parametrize("case, message", [
    ("huge", "error [inputs]: --inputs x.npz: input 'A' of 'gemm_bf16' has 1000000000 elements, "
             "not 32768"),
    ("header", "error [inputs]: --inputs x.npz: array 'A' cannot be read"),
    ("short", "error [inputs]: --inputs x.npz: array 'A' cannot be read"),
    ("member", "error [inputs]: --inputs x.npz: 'notes.txt' is not an array"),
    ("negative", "error [inputs]: --inputs x.npz: array 'A' cannot be read"),
    ("overflow", "error [inputs]: --inputs x.npz: array 'A' cannot be read"),
    ("v3", "error [inputs]: --inputs x.npz: input 'A' of 'gemm_bf16' has 1000000000 elements, "
           "not 32768"),
])
def test_an_array_is_refused_by_its_header_before_its_data_is_read(
        tmp_path: Path, case: str, message: str) -> None:
    """(a reviewer) A 389 KB file of an extra 400 MB array took 454 MB before it was refused;
    a garbled header, a CRC error or a member of other data ended in exit 70."""
    _, b = _operands()
    b_npy = _npy(b.shape, "|V2", b.tobytes())
    members = {
        "huge": {"A.npy": _npy((10 ** 9,), "|V2"), "B.npy": b_npy},  # claims 2 GB, holds none
        "header": {"A.npy": b"\x93NUMPY\x01\x00\x10\x00{'descr': '<f\n", "B.npy": b_npy},
        "short": {"A.npy": _npy((256, 128), "|V2", b"\x00" * 100), "B.npy": b_npy},
        "member": {"notes.txt": b"hello", "B.npy": b_npy},
        "negative": {"A.npy": _npy((-1, 128), "|V2"), "B.npy": b_npy},
        "overflow": {"A.npy": _npy((2 ** 62, 4), "|V2"), "B.npy": b_npy},
        "v3": {"A.npy": _npy3((10 ** 9,), "|V2"), "B.npy": b_npy},  # a utf-8 header
    }[case]
    _zip(tmp_path / "x.npz", members)
    r = aiedsl("sim", GEMM, *SIZE, "--inputs", "x.npz", cwd=tmp_path)
    assert r.returncode == 2, r.stdout + r.stderr
    assert r.stderr.splitlines()[0] == message
