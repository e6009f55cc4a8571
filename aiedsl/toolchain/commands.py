"""The command lines that turn aiedsl's output into ``aie.xclbin`` and ``insts.bin``.

Flags follow mlir-aie: kernels with Peano's clang++ for the device's AIE architecture, then
``aiecc`` with the flags of mlir-aie's ``add_one_func_link_with_peano`` test. Arguments are plain
lists so the same list is written to ``build.sh`` and run by ``--compile``; :func:`shell_line` is
the one function that turns them into shell text.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from aiedsl.targets import TargetModel

PEANO_FLAGS = ["-O2", "-std=c++20", "-DNDEBUG"]
AIECC_FLAGS = ["--no-xchesscc", "--no-xbridge", "--aie-generate-xclbin",
               "--xclbin-name=aie.xclbin", "--aie-generate-npu-insts",
               "--npu-insts-name=insts.bin"]


@dataclass(frozen=True)
class EnvWord:
    """A command word that starts from an environment variable ``build.sh`` expands:
    ``EnvWord("-I", "MLIR_AIE_INSTALL_DIR", "/include")`` is ``-I"$MLIR_AIE_INSTALL_DIR"/include``.

    Only these words expand anything; every other word is quoted whole, so no text a user gave
    can become shell code.
    """

    prefix: str
    var: str
    suffix: str

    def shell(self) -> str:
        """The word as shell text: the variable double-quoted, the rest single-quoted."""
        parts = [shlex.quote(self.prefix) if self.prefix else "", f'"${self.var}"',
                 shlex.quote(self.suffix) if self.suffix else ""]
        return "".join(parts)


Word = str | EnvWord

PEANO_CLANG = EnvWord("", "PEANO_INSTALL_DIR", "/bin/clang++")
AIE_API_INCLUDE = EnvWord("-I", "MLIR_AIE_INSTALL_DIR", "/include")


def kernel_compile_argv(target: TargetModel, source: str, output: str, *,
                        clang: Word = PEANO_CLANG, include: str | None = None) -> list[Word]:
    """Compile one kernel source to an object file for ``target``'s cores.

    ``clang`` and ``include`` default to the environment variables ``build.sh`` reads; the
    compile step passes the paths it found.

    >>> from aiedsl.targets import get_target
    >>> shell_line(kernel_compile_argv(get_target("npu1"), "kernels/k.cc", "k.o"))[:50]
    '"$PEANO_INSTALL_DIR"/bin/clang++ -O2 -std=c++20 -D'
    """
    inc: Word = AIE_API_INCLUDE if include is None else f"-I{include}"
    return [clang, *PEANO_FLAGS, f"--target={target.peano_target}", inc, "-c", source, "-o",
            output]


def aiecc_argv(mlir: str = "aie.mlir", *, aiecc: str = "aiecc") -> list[Word]:
    """Lower, place and package ``mlir`` into ``aie.xclbin`` and ``insts.bin``."""
    return [aiecc, *AIECC_FLAGS, mlir]


def shell_line(argv: list[Word]) -> str:
    """One shell command line: every word quoted whole, :class:`EnvWord` variables expanded.

    >>> print(shell_line(["echo", "a b", "$(touch x)", EnvWord("", "HOME", "/x y")]))
    echo 'a b' '$(touch x)' "$HOME"'/x y'
    """
    return " ".join(w.shell() if isinstance(w, EnvWord) else shlex.quote(w) for w in argv)


def argv_strings(argv: list[Word]) -> list[str]:
    """``argv`` for running directly (no shell): every word must already be a plain string."""
    out = []
    for w in argv:
        if isinstance(w, EnvWord):
            raise ValueError(f"{w} needs the shell to expand ${w.var}: pass the path found")
        out.append(w)
    return out
