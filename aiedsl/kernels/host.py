"""Kernels on the host: compile a kernel's C++ with g++ against aiedsl's host AIE API header,
load it with ctypes, run it on numpy buffers, and compare it with its numpy reference.

The C++ compiled is exactly the file a build writes (``kernels/<symbol>.cc``: the kernel source
plus its ``extern "C"`` entry), so what is tested is what Peano would compile. Libraries are
cached by content under ``$XDG_CACHE_HOME/aiedsl/host-kernels`` (``~/.cache`` by default).

Example
-------
>>> fn = native(kernel_ir, cpp_text)          # doctest: +SKIP
>>> fn(a, b, c)                               # runs the C++ on the arrays, in place
>>> check_kernel(kernel_ir, cpp_text, reference).passed   # doctest: +SKIP
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np

from aiedsl.dtypes import dtype as lookup_dtype
from aiedsl.errors import DesignError
from aiedsl.ir import Kernel, Loc
from aiedsl.kernels.base import KERNELS_CPP

HOST_INCLUDE = KERNELS_CPP / "host"
"""Holds ``aie_api/aie.hpp``, the host stand-in for the AIE API."""
CXX_FLAGS = ["-std=c++20", "-O2", "-shared", "-fPIC", "-w"]

_CTYPES = {"i8": ctypes.c_int8, "u8": ctypes.c_uint8, "i16": ctypes.c_int16,
           "i32": ctypes.c_int32, "f32": ctypes.c_float}


def cache_dir() -> Path:
    """Where compiled host libraries are kept."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "aiedsl" / "host-kernels"


def compile_host(cpp: str, label: str, loc: Loc | None = None) -> Path:
    """A shared library built from C++ text ``cpp`` (cached by content)."""
    cxx = shutil.which(os.environ.get("CXX", "g++"))
    if cxx is None:
        raise DesignError("host kernel build", "no host C++ compiler (g++) on PATH", loc=loc,
                          fix="install g++ (or set CXX) to test kernels on the host")
    header = (HOST_INCLUDE / "aie_api" / "aie.hpp").read_text()
    key = hashlib.sha256((cpp + header + " ".join(CXX_FLAGS) + cxx).encode()).hexdigest()[:24]
    out = cache_dir() / f"{key}.so"
    if out.is_file():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / f"{label}.cc"
        src.write_text(cpp)
        lib = Path(tmp) / "k.so"
        r = subprocess.run([cxx, *CXX_FLAGS, f"-I{HOST_INCLUDE}", str(src), "-o", str(lib)],
                           capture_output=True, text=True, env={**os.environ, "LC_ALL": "C"})
        if r.returncode != 0:
            raise DesignError("host kernel build", _explain(r.stderr, label), loc=loc,
                              found="\n".join(r.stderr.strip().splitlines()[-12:]),
                              fix="fix the C++; the host header covers the AIE API names listed "
                                  f"at the top of {HOST_INCLUDE / 'aie_api' / 'aie.hpp'}")
        tmp_out = out.with_suffix(f".{os.getpid()}.tmp")
        shutil.copyfile(lib, tmp_out)
        tmp_out.replace(out)  # atomic: parallel test runs may build the same library
    return out


def _explain(stderr: str, label: str) -> str:
    missing = sorted(set(re.findall(r"[‘'](\w+)[’'] is not a member of [‘']aie[’']", stderr)))
    if missing:
        names = ", ".join(f"aie::{n}" for n in missing)
        return (f"{label} uses {names}, which aiedsl's host AIE API header does not cover, so "
                "it cannot be tested on the host")
    return f"{label} does not compile on the host"


def native(k: Kernel, cpp: str) -> Callable[..., None]:
    """A callable running kernel ``k``'s C++ (text ``cpp``) on numpy arrays and scalars."""
    lib = ctypes.CDLL(str(compile_host(cpp, k.symbol, k.loc)))
    fn = getattr(lib, k.symbol)
    fn.restype = None
    fn.argtypes = [ctypes.c_void_p if a.kind == "buffer" else _CTYPES[lookup_dtype(a.dtype).name]
                   for a in k.args]

    def call(*args: Any) -> None:
        conv = []
        for a, v in zip(k.args, args):
            if a.kind == "buffer":
                arr = np.asarray(v)
                if not arr.flags.c_contiguous:
                    raise ValueError(f"{k.symbol}: argument {a.name} is not contiguous")
                conv.append(arr.ctypes.data)
            else:
                conv.append(v)
        fn(*conv)

    return call


@dataclass
class KernelTest:
    """One kernel run on the host against its reference."""

    symbol: str
    passed: bool
    lines: list[str]


def check_kernel(k: Kernel, cpp: str, reference: Callable[..., None], seed: int = 0
                ) -> KernelTest:
    """Run ``k``'s C++ and its ``reference`` on the same random inputs; compare what they write."""
    from aiedsl.sim.compare import compare

    rng = np.random.default_rng(seed)
    args_ref: list[Any] = []
    args_cpp: list[Any] = []
    for a in k.args:
        if a.kind == "scalar":
            # a size parameter of that name, else the element count (what `n` arguments carry)
            value = int(k.params.get(a.name, k.params.get("n", 1)))
            args_ref.append(value)
            args_cpp.append(value)
            continue
        assert a.type is not None
        arr = _random(a.type.shape, a.type.dtype, rng)
        args_ref.append(arr.copy())
        args_cpp.append(arr.copy())
    reference(*args_ref)
    native(k, cpp)(*args_cpp)
    checks = [compare(f"{k.symbol}.{a.name}", args_cpp[i], args_ref[i], a.dtype)
              for i, a in enumerate(k.args) if a.kind == "buffer" and a.access != "in"]
    return KernelTest(k.symbol, all(c.passed for c in checks), [c.line() for c in checks])


def _random(shape: tuple[int, ...], dt: str, rng: np.random.Generator) -> np.ndarray:
    d = lookup_dtype(dt)
    np_dt = np.dtype(d.numpy)
    if d.name in ("bf16", "f32"):
        return rng.uniform(-1.0, 1.0, size=shape).astype(np.float32).astype(np_dt)
    info = np.iinfo(np_dt)
    lo, hi = max(info.min, -100), min(info.max, 100)  # keeps products inside the wide types
    return rng.integers(lo, hi, size=shape, endpoint=True).astype(np_dt)
