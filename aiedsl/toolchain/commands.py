"""The command lines that turn aiedsl's output into ``aie.xclbin`` and ``insts.bin``.

Flags follow mlir-aie (``aie2-facts.md`` s3): kernels with Peano's clang++ for the device's AIE
architecture, then ``aiecc`` with the flags of mlir-aie's ``add_one_func_link_with_peano`` test.
Arguments are plain lists so the same list is written to ``build.sh`` and run by ``--compile``.
"""

from __future__ import annotations

from aiedsl.targets import TargetModel

PEANO_FLAGS = ["-O2", "-std=c++20", "-DNDEBUG"]
AIECC_FLAGS = ["--no-xchesscc", "--no-xbridge", "--aie-generate-xclbin",
               "--xclbin-name=aie.xclbin", "--aie-generate-npu-insts",
               "--npu-insts-name=insts.bin"]


def kernel_compile_argv(target: TargetModel, source: str, output: str, *,
                        clang: str = "$PEANO_INSTALL_DIR/bin/clang++",
                        include: str = "$MLIR_AIE_INSTALL_DIR/include") -> list[str]:
    """Compile one kernel source to an object file for ``target``'s cores.

    >>> from aiedsl.targets import get_target
    >>> kernel_compile_argv(get_target("npu1"), "kernels/k.cc", "k.o")[:4]
    ['$PEANO_INSTALL_DIR/bin/clang++', '-O2', '-std=c++20', '-DNDEBUG']
    """
    return [clang, *PEANO_FLAGS, f"--target={target.peano_target}", f"-I{include}", "-c",
            source, "-o", output]


def aiecc_argv(mlir: str = "aie.mlir", *, aiecc: str = "aiecc") -> list[str]:
    """Lower, place and package ``mlir`` into ``aie.xclbin`` and ``insts.bin``."""
    return [aiecc, *AIECC_FLAGS, mlir]


def shell_line(argv: list[str]) -> str:
    """One shell command line: ``$VAR`` words are double-quoted so they expand, others quoted."""
    import shlex

    return " ".join(f'"{a}"' if "$" in a else shlex.quote(a) for a in argv)
