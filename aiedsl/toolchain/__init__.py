"""Peano, aiecc and pyxrt: the exact commands aiedsl runs or writes into ``build.sh``."""

from aiedsl.toolchain.commands import aiecc_argv, kernel_compile_argv

__all__ = ["aiecc_argv", "kernel_compile_argv"]
