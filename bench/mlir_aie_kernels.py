"""How many of mlir-aie's own kernels compile against aiedsl's host AIE API header.

Give it an mlir-aie source checkout (its ``aie_kernels/`` is read in place, never copied):

    python bench/mlir_aie_kernels.py /path/to/mlir-aie        (or MLIR_AIE_SRC=/path/to/mlir-aie)

Every ``aie_kernels/aie2/*.cc`` and ``aie_kernels/aie2p/*.cc`` with an ``extern "C"`` entry is
compiled with the host's g++ as ``aiedsl kernel test`` compiles a kernel (C++20, the header's
directory on the include path). Each line says OK, or the first error (usually the first API
name the header lacks); then the kernels this script has a numpy reference for (:data:`CASES`)
are built, run on random inputs and compared with it (integers exactly; bf16 within the
tolerance given, the references computing in float).
"""

from __future__ import annotations

import ctypes
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import ml_dtypes
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from aiedsl.kernels.host import HOST_INCLUDE  # noqa: E402


ARCH = {"aie2": 20, "aie2p": 21}
"""``__AIE_ARCH__`` as Peano defines it for each kernel folder (TargetModel.aie_arch)."""


def first_error(cxx: str, src: Path, kernels: Path) -> str | None:
    """The first error line g++ prints for ``src``, or None when it compiles (built for the
    architecture of its folder, as Peano would)."""
    r = subprocess.run([cxx, "-std=c++20", "-fsyntax-only", "-w", f"-I{HOST_INCLUDE}",
                        f"-D__AIE_ARCH__={ARCH[src.parent.name]}",
                        f"-I{kernels}", f"-I{src.parent}", str(src)],
                       capture_output=True, text=True, env={**os.environ, "LC_ALL": "C"})
    if r.returncode == 0:
        return None
    errors = [line for line in r.stderr.splitlines() if "error" in line]
    return re.sub(r"^.*?error: ", "", errors[0]) if errors else r.stderr.strip()[:160]


BF16 = np.dtype(ml_dtypes.bfloat16)


def _f(x: np.ndarray) -> np.ndarray:
    return x.astype(np.float32)


@dataclass
class Case:
    """One kernel entry run against a numpy reference."""

    file: str
    symbol: str
    args: list[tuple[str, object]]
    """("in"|"out", (dtype, n)) buffers or ("int", value) scalars, in the C order."""
    reference: Callable[..., list[np.ndarray]]
    """Takes the inputs (and the scalars), returns the outputs."""
    atol: float = 0.0
    defines: list[str] = field(default_factory=list)


CASES = [
    Case("aie2/add.cc", "eltwise_add_bf16_vector", [("in", (BF16, 1024)), ("in", (BF16, 1024)),
                                                    ("out", (BF16, 1024))],
         lambda a, b: [(_f(a) + _f(b)).astype(BF16)], atol=0.0),
    Case("aie2/mul.cc", "eltwise_mul_bf16_vector", [("in", (BF16, 1024)), ("in", (BF16, 1024)),
                                                    ("out", (BF16, 1024))],
         lambda a, b: [(_f(a) * _f(b)).astype(BF16)], atol=0.0),
    Case("aie2/scale.cc", "vector_scalar_mul_vector",
         [("in", (np.int16, 1024)), ("out", (np.int16, 1024)), ("in", (np.int32, 1)),
          ("int", 1024)],
         lambda a, f, n: [(a.astype(np.int64) * int(f[0])).astype(np.int16)],
         defines=["-DBIT_WIDTH=16"]),
    Case("aie2/bitwiseAND.cc", "bitwiseANDLine",
         [("in", (np.uint8, 256)), ("in", (np.uint8, 256)), ("out", (np.uint8, 256)),
          ("int", 256)], lambda a, b, n: [a & b], defines=["-DBIT_WIDTH=8"]),
    Case("aie2/reduce_add.cc", "reduce_add_vector",
         [("in", (np.int32, 1024)), ("out", (np.int32, 1)), ("int", 1024)],
         lambda a, n: [np.array([a.sum()], np.int32)]),
    Case("aie2/reduce_min.cc", "reduce_min_vector",
         [("in", (np.int32, 1024)), ("out", (np.int32, 1)), ("int", 1024)],
         lambda a, n: [np.array([a.min()], np.int32)]),
    Case("aie2/reduce_max.cc", "reduce_max_vector",
         [("in", (np.int32, 1024)), ("out", (np.int32, 1)), ("int", 1024)],
         lambda a, n: [np.array([a.max()], np.int32)]),
    Case("aie2/reduce_max.cc", "reduce_max_vector_bfloat16",
         [("in", (BF16, 1024)), ("out", (BF16, 1)), ("int", 1024)],
         lambda a, n: [np.array([a.max()], BF16)]),
    Case("aie2/relu.cc", "bf16_relu", [("in", (BF16, 1024)), ("out", (BF16, 1024))],
         lambda a: [np.maximum(a, BF16.type(0))]),
    Case("aie2p/rms_norm.cc", "rms_norm", [("in", (BF16, 256)), ("out", (BF16, 256)),
                                           ("int", 256)],
         lambda x, n: [(_f(x) / np.sqrt(np.mean(_f(x) ** 2) + 1e-5)).astype(BF16)],
         atol=0.02),
    Case("aie2p/silu.cc", "silu_bf16", [("in", (BF16, 1024)), ("out", (BF16, 1024))],
         lambda x: [(_f(x) / (1 + np.exp(-_f(x)))).astype(BF16)], atol=0.02),
    Case("aie2p/softmax.cc", "softmax_bf16", [("in", (BF16, 256)), ("out", (BF16, 256)),
                                              ("int", 256)],
         lambda x, n: [(np.exp(_f(x) - _f(x).max()) / np.exp(_f(x) - _f(x).max()).sum())
                       .astype(BF16)], atol=0.002),
]


def run_case(cxx: str, kernels: Path, case: Case, rng: np.random.Generator) -> str:
    """'PASS' or 'FAIL ...' for one case (its worst element)."""
    src = kernels / case.file
    with tempfile.TemporaryDirectory() as tmp:
        lib = Path(tmp) / "k.so"
        r = subprocess.run([cxx, "-std=c++20", "-O1", "-shared", "-fPIC", "-w", *case.defines,
                            f"-D__AIE_ARCH__={ARCH[src.parent.name]}",
                            f"-I{HOST_INCLUDE}", f"-I{kernels}", f"-I{src.parent}", str(src),
                            "-o", str(lib)], capture_output=True, text=True)
        if r.returncode:
            return "FAIL (does not build)"
        fn = getattr(ctypes.CDLL(str(lib)), case.symbol)
        fn.restype = None
        ins, outs, scalars, call = [], [], [], []
        for kind, spec in case.args:
            if kind == "int":
                scalars.append(spec)
                call.append(ctypes.c_int32(int(spec)))  # type: ignore[arg-type]
                continue
            dt, n = spec  # type: ignore[misc]
            if kind == "in":
                arr = (rng.uniform(-4, 4, n).astype(np.float32).astype(dt) if dt == BF16
                       else rng.integers(0 if dt == np.uint8 else -100, 100, n).astype(dt))
                if n == 1:
                    arr[...] = 3
                ins.append(arr)
            else:
                arr = np.zeros(n, dt)
                outs.append(arr)
            call.append(ctypes.c_void_p(arr.ctypes.data))
        fn(*call)
        want = case.reference(*ins, *scalars)
        for got, exp in zip(outs, want):
            err = np.abs(got.astype(np.float64) - exp.astype(np.float64))
            if err.max() > case.atol:
                i = int(err.argmax())
                return f"FAIL worst [{i}] got {float(got[i]):g} want {float(exp[i]):g}"
    return "PASS"


def main() -> int:
    src = Path(sys.argv[1] if len(sys.argv) > 1 else os.environ.get("MLIR_AIE_SRC", ""))
    kernels = src / "aie_kernels"
    if not kernels.is_dir():
        print("give an mlir-aie source checkout (its aie_kernels/ folder): "
              "python bench/mlir_aie_kernels.py /path/to/mlir-aie", file=sys.stderr)
        return 2
    cxx = shutil.which(os.environ.get("CXX", "g++"))
    if cxx is None:
        print("no host C++ compiler (g++) on PATH", file=sys.stderr)
        return 2
    ok = total = 0
    for arch in ("aie2", "aie2p"):
        for f in sorted((kernels / arch).glob("*.cc")):
            if 'extern "C"' not in f.read_text(errors="replace"):
                continue  # a file other kernels include, not a kernel
            total += 1
            err = first_error(cxx, f, kernels)
            ok += err is None
            print(f"{'OK  ' if err is None else 'FAIL'} {arch}/{f.name}"
                  + ("" if err is None else f": {err[:140]}"))
    print(f"{ok} of {total} kernel files compile against the host header")
    rng = np.random.default_rng(0)
    passed = 0
    for case in CASES:
        verdict = run_case(cxx, kernels, case, rng)
        passed += verdict == "PASS"
        print(f"{verdict[:4]} {case.file}:{case.symbol} against numpy{verdict[4:]}")
    print(f"{passed} of {len(CASES)} checked against a numpy reference match it")
    return 0


if __name__ == "__main__":
    sys.exit(main())
