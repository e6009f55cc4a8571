"""How many of mlir-aie's own kernels compile against aiedsl's host AIE API header.

Give it an mlir-aie source checkout (its ``aie_kernels/`` is read in place, never copied):

    python bench/mlir_aie_kernels.py /path/to/mlir-aie        (or MLIR_AIE_SRC=/path/to/mlir-aie)

Every ``aie_kernels/aie2/*.cc`` and ``aie_kernels/aie2p/*.cc`` with an ``extern "C"`` entry is
compiled with the host's g++ as ``aiedsl kernel test`` compiles a kernel (C++20, the header's
directory on the include path). Each line says OK, or the first error (usually the first API
name the header lacks); the last line counts them. Compiling is the first step: a kernel also
needs a numpy reference to be checked on the host.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from aiedsl.kernels.host import HOST_INCLUDE  # noqa: E402


def first_error(cxx: str, src: Path, kernels: Path) -> str | None:
    """The first error line g++ prints for ``src``, or None when it compiles."""
    r = subprocess.run([cxx, "-std=c++20", "-fsyntax-only", "-w", f"-I{HOST_INCLUDE}",
                        f"-I{kernels}", f"-I{src.parent}", str(src)],
                       capture_output=True, text=True, env={**os.environ, "LC_ALL": "C"})
    if r.returncode == 0:
        return None
    errors = [line for line in r.stderr.splitlines() if "error" in line]
    return re.sub(r"^.*?error: ", "", errors[0]) if errors else r.stderr.strip()[:160]


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
    return 0


if __name__ == "__main__":
    sys.exit(main())
