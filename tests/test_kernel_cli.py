"""The ``kernel`` commands live in their own module, :mod:`aiedsl.cli.kernel`, which
:mod:`aiedsl.cli.commands` registers: it leans on :mod:`aiedsl.cli.common`, never on the module
that imports it, and loads nothing heavy before a command runs."""

from __future__ import annotations

import subprocess
import sys


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
