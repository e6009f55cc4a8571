"""The ``kernel`` commands live in their own module, :mod:`aiedsl.kernel_cli`, which
:mod:`aiedsl.cli` registers: it leans on :mod:`aiedsl.cli_common`, never on the module that
imports it, and loads nothing heavy before a command runs."""

from __future__ import annotations

import subprocess
import sys


def test_the_kernel_group_is_the_one_the_command_line_registers() -> None:
    import aiedsl.cli
    from aiedsl import kernel_cli

    assert aiedsl.cli.kernel_app is kernel_cli.kernel_app
    groups = {g.name: g.typer_instance for g in aiedsl.cli.app.registered_groups}
    assert groups == {"kernel": kernel_cli.kernel_app}
    commands = [c.name for c in kernel_cli.kernel_app.registered_commands]
    assert commands == ["test", "profile", "cost"]
    assert not hasattr(aiedsl.cli, "kernel_cost")  # defined once, in kernel_cli


def test_the_kernel_module_imports_neither_the_command_line_nor_anything_heavy() -> None:
    code = ("import sys, aiedsl.kernel_cli; print(sorted(m for m in ('aiedsl.cli', 'numpy', "
            "'pydantic', 'rich', 'jinja2', 'ml_dtypes', 'aiedsl.ir') if m in sys.modules))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert (r.stdout, r.stderr) == ("[]\n", "")
