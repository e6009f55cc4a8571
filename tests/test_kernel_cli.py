"""The ``kernel`` commands live in their own module, :mod:`aiedsl.cli.kernel`, which
:mod:`aiedsl.cli.commands` registers: it leans on :mod:`aiedsl.cli.common`, never on the module
that imports it, and loads nothing heavy before a command runs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest


def test_the_kernel_group_is_the_one_the_command_line_registers() -> None:
    import aiedsl.cli.commands
    from aiedsl.cli import kernel

    assert aiedsl.cli.commands.kernel_app is kernel.kernel_app
    groups = {g.name: g.typer_instance for g in aiedsl.cli.commands.app.registered_groups}
    assert groups == {"kernel": kernel.kernel_app}
    commands = [c.name for c in kernel.kernel_app.registered_commands]
    assert commands == ["test", "profile", "cost"]
    assert not hasattr(aiedsl.cli.commands, "kernel_cost")  # defined once, in cli.kernel


def test_the_kernel_module_imports_neither_the_command_line_nor_anything_heavy() -> None:
    code = ("import sys, aiedsl.cli.kernel; print(sorted(m for m in ('aiedsl.cli.commands', "
            "'aiedsl.cli.process', 'numpy', 'pydantic', 'rich', 'jinja2', 'ml_dtypes', "
            "'aiedsl.ir') if m in sys.modules))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert (r.stdout, r.stderr) == ("[]\n", "")


def test_a_new_file_in_the_librarys_folder_is_told_where_its_sizes_go(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A contributor's new kernels_cpp/add_sat.cc was told to declare it in a design, advice for
    a design's author: the library's own kernels get their sizes from samples.py."""
    import aiedsl.kernels.paths as paths
    from aiedsl.cli.kernel import _no_library_kernel

    monkeypatch.setattr(paths, "KERNELS_CPP", tmp_path)
    (tmp_path / "add_sat.cc").write_text("// new\n")
    assert _no_library_kernel(tmp_path / "add_sat.cc", "test").message == (
        "no library kernel is made from add_sat.cc yet: a kernel of the library gets the sizes "
        "`kernel test` and `kernel profile` run from aiedsl/kernels/samples.py "
        "(kernels_cpp/README.md, \"Adding a kernel to the library\")")
    elsewhere = tmp_path / "mine"
    elsewhere.mkdir()
    (elsewhere / "k.cc").write_text("// mine\n")
    assert _no_library_kernel(elsewhere / "k.cc", "test").message.startswith(
        "no library kernel is made from k.cc: declare your kernel with")
