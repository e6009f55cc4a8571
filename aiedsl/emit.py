"""``aiedsl build``: check a design and produce its files, all in memory, then write them at once.

A failed build writes nothing, and the same design always gives byte-identical files.

Example
-------
>>> from aiedsl.loader import load_design
>>> out = generate(load_design("designs/passthrough.py"))
>>> sorted(out.files)[:4]
['aie.mlir', 'build.sh', 'design.json', 'kernels/passthrough_i32_1024.cc']
>>> write(out, "build/passthrough")             # doctest: +SKIP
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from aiedsl.version import __version__
from aiedsl.checks import TileUsage, check_design
from aiedsl.kernels.text import render_kernels
from aiedsl.kernels.units import kernel_units
from aiedsl.render import render
from aiedsl.codegen.mlir import render_mlir
from aiedsl.codegen.report import render_report
from aiedsl.codegen.tilemap import tile_map
from aiedsl.errors import stable_path
from aiedsl.ir import Design, Loc
from aiedsl.lang.design import DesignHandle
from aiedsl.builddir.build import building
from aiedsl.targets import get_target
from aiedsl.toolchain.commands import (
    aiecc_argv, find_aiecc_script, kernel_compile_argv, shell_line,
)
from aiedsl.toolchain.compile import script_outputs, tool_input


@dataclass
class Generated:
    """Everything a build produces, before anything touches the disk."""

    design: Design
    """The placed design."""
    usage: dict[tuple[int, int], TileUsage]
    files: dict[str, str]
    """Relative path -> text."""


def generate(handle: DesignHandle) -> Generated:
    """Check and place ``handle``'s design and render every output file."""
    placed, table = check_design(handle.ir)
    recorded = relocated(placed, os.path.dirname(placed.loc.file))
    kernels = render_kernels(placed)
    target = get_target(placed.device)
    kernel_lines = [shell_line(kernel_compile_argv(target, u.file, u.object, defines=u.flags))
                    for u in kernel_units(placed.kernels)]
    files = {
        "aie.mlir": render_mlir(recorded, target),
        **kernels,
        "design.json": recorded.model_dump_json(indent=2) + "\n",
        "report.txt": render_report(placed, target, table),
        "map.svg": tile_map(placed, target, table),
        "build.sh": render("build.sh.j2", design=placed.name, version=__version__,
                           device=placed.device, kernel_lines=kernel_lines,
                           find_aiecc=find_aiecc_script(),  # first: a missing aiecc stops it
                           aiecc_line=shell_line(aiecc_argv(packet=placed.flows == "packet",
                                                            find=False))),
    }
    return Generated(placed, table, files)


def relocated(node: Any, home: str) -> Any:
    """``node`` (a design, or any part of one) with every ``Loc`` naming its file by
    :func:`~aiedsl.errors.stable_path` from ``home``: the locations generated files record,
    the same from any working directory (error messages keep the user's own paths)."""
    if isinstance(node, Loc):
        return node.model_copy(update={"file": stable_path(node.file, home)})
    if isinstance(node, BaseModel):
        changed = {}
        for name in type(node).model_fields:
            value = getattr(node, name)
            new = relocated(value, home)
            if new is not value:
                changed[name] = new
        return node.model_copy(update=changed) if changed else node
    if isinstance(node, (list, tuple)):
        items = [relocated(v, home) for v in node]
        same = all(a is b for a, b in zip(items, node))
        return node if same else type(node)(items)
    if isinstance(node, dict):
        pairs = {k: relocated(v, home) for k, v in node.items()}
        return node if all(pairs[k] is v for k, v in node.items()) else pairs
    return node


def write(gen: Generated, out_dir: str | Path) -> Path:
    """Write ``gen``'s files into ``out_dir``, replacing a previous build there whole.

    The previous build's tool outputs (xclbin, logs, cache, and what its build.sh wrote when
    run by hand) are kept while ``aie.mlir`` and the kernels are unchanged, and dropped
    otherwise (they were made from other inputs). A
    directory holding files aiedsl did not write is refused, as is one another build is writing
    (see :mod:`aiedsl.builddir`): a DesignError, and nothing is written.
    """
    with writing(gen, out_dir) as path:
        return path


@contextmanager
def writing(gen: Generated, out_dir: str | Path) -> Iterator[Path]:
    """:func:`write`, the build directory's lock held on over the block that follows (the
    lowering's outputs placed, the compile): no other build replaces the directory between
    them. Yields the directory."""
    with building(out_dir, gen.files, design=gen.design.name, executable=("build.sh",),
                  tool_input=tool_input, script_outputs=script_outputs(gen.files)) as path:
        yield path
