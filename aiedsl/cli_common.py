"""What the command-line modules share (:mod:`aiedsl.cli`, :mod:`aiedsl.kernel_cli`): the
options several commands take, written once so their help reads the same everywhere, printing
a line, and loading a design file.

Only typer and the standard library load here: ``aiedsl --help`` imports this module.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, List, Optional

import typer

CONTEXT = {"help_option_names": ["-h", "--help"]}
"""Click settings of every command group: ``-h`` is help too."""

DefineOpt = typer.Option(None, "-D", "--define", metavar="NAME=VALUE",
                         help="Override a define() of the design, e.g. -D M=1024.")
DeviceOpt = typer.Option(None, "--device", metavar="DEVICE",
                         help="Override the design's device (npu1, npu2, ...).")
NameOpt = typer.Option(None, "--name", metavar="NAME",
                       help="Which design, when the file declares several.")
SeedOpt = typer.Option(0, "--seed", min=0, metavar="N", help="Seed of the random inputs.")
DesignArg = typer.Argument(..., metavar="DESIGN", help="The design file (.py).")
# Metavars name what a value is (the names the help texts and the README use); typer's own
# would show its type ("<int range>", "<path>").


def say(text: str = "") -> None:
    """Print a line to stdout as it is: no markup, no wrapping (piped output stays greppable)."""
    sys.stdout.write(text + "\n")


def load(design: Path, define: Optional[List[str]], device: Optional[str],
         name: Optional[str]) -> Any:
    """Load ``design`` with the command line's ``-D`` defines, ``--device`` and ``--name``."""
    from aiedsl.loader import load_design, parse_defines

    return load_design(design, parse_defines(define or []), device, name)
