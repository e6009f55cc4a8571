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

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aiedsl.version import __version__
from aiedsl.checks import TileUsage, check_design
from aiedsl.kernels.text import render_kernels
from aiedsl.kernels.units import kernel_units
from aiedsl.render import render
from aiedsl.codegen.mlir import render_mlir
from aiedsl.codegen.report import render_report
from aiedsl.codegen.tilemap import tile_map
from aiedsl.errors import DesignError, stable_path
from aiedsl.lang.design import DesignHandle
from aiedsl.builddir.build import building
from aiedsl.builddir.marker import SCRIPT_LIST, entries, read_marker
from aiedsl.ir.design import Design
from aiedsl.ir.loc import Loc, with_locs
from aiedsl.sim.hang_run import HangRun, hang_run
from aiedsl.targets import get_target
from aiedsl.codegen.syntax import DEFAULT, MlirSyntax
from aiedsl.toolchain.commands import (
    aiecc_argv, find_aiecc_script, kernel_compile_argv, project_listing_script, shell_line,
)
from aiedsl.toolchain.commands import INSTS
from aiedsl.toolchain.compile import script_outputs
from aiedsl.toolchain.compile_outputs import CACHE, MANIFEST, tool_input
from aiedsl.toolchain.program_memory import PROJECT
from aiedsl.toolchain.lower import STAMP, TEXT_OUTPUTS


GENERATED = ("aie.mlir", "design.json", "report.txt", "map.svg", "build.sh")
"""What :func:`generate` writes besides ``kernels/<name>.cc``: the top of every build."""


@dataclass
class Generated:
    """Everything a build produces, before anything touches the disk."""

    design: Design
    """The placed design."""
    usage: dict[tuple[int, int], TileUsage]
    files: dict[str, str]
    """Relative path -> text."""
    hang: HangRun | None = None
    """How far the hang check ran (:mod:`aiedsl.sim.hang_run`)."""


def design_json(placed: Design) -> str:
    """``design.json`` of placed design ``placed``: the IR with its physical plan, its
    locations as generated files record them (:func:`relocated`)."""
    return relocated(placed, os.path.dirname(placed.loc.path)).model_dump_json(indent=2) + "\n"


def generate(handle: DesignHandle, syntax: MlirSyntax = DEFAULT,
             whole_run: bool = False) -> Generated:
    """Check and place ``handle``'s design, run the hang check (to the run's end with
    ``whole_run``), and render every output file (``aie.mlir`` in mlir-aie ``syntax``'s
    spelling: :mod:`aiedsl.codegen.syntax`)."""
    placed, table = check_design(handle.ir)
    hang = hang_run(handle.ir, placed, handle.kernels, whole=whole_run)
    recorded = relocated(placed, os.path.dirname(placed.loc.path))
    kernels = render_kernels(placed)
    target = get_target(placed.device)
    kernel_lines = [shell_line(kernel_compile_argv(target, u.file, u.object, defines=u.flags))
                    for u in kernel_units(placed.kernels)]
    files = {  # GENERATED, and the kernels
        "aie.mlir": render_mlir(recorded, target, syntax),
        **kernels,
        "design.json": design_json(placed),
        "report.txt": render_report(placed, target, table, hang=hang.line()),
        "map.svg": tile_map(placed, target, table),
        "build.sh": render("build.sh.j2", design=placed.name, version=__version__,
                           device=placed.device, kernel_lines=kernel_lines,
                           find_aiecc=find_aiecc_script(),  # first: a missing aiecc stops it
                           project_lines=project_listing_script(PROJECT, SCRIPT_LIST),
                           aiecc_line=shell_line(aiecc_argv(packet=placed.flows == "packet",
                                                            find=False))),
    }
    return Generated(placed, table, files, hang)


def respelled(gen: Generated, syntax: MlirSyntax) -> Generated:
    """``gen`` with its ``aie.mlir`` written in ``syntax``'s spelling, every other file as it
    was (the spelling changes nothing else a build writes)."""
    placed = gen.design
    recorded = relocated(placed, os.path.dirname(placed.loc.path))
    files = {**gen.files, "aie.mlir": render_mlir(recorded, get_target(placed.device), syntax)}
    return Generated(placed, gen.usage, files, gen.hang)


def relocated(node: Any, home: str) -> Any:
    """``node`` (a design, or any part of one) with every ``Loc`` naming its file by
    :func:`~aiedsl.errors.stable_path` from ``home``: the locations generated files record,
    the same from any working directory (error messages keep the user's own paths)."""
    # one design names a few files in thousands of locations: each resolved once (a runtime
    # sequence of 16,000 transfers spent 10 s in realpath: a scalability tester)
    files: dict[str, str] = {}
    moved: dict[Loc, Loc] = {}

    def change(loc: Loc) -> Loc:
        if loc not in moved:
            if loc.path not in files:
                files[loc.path] = stable_path(loc.path, home)
            moved[loc] = loc.model_copy(update={"file": files[loc.path]})
        return moved[loc]
    return with_locs(node, change)


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
                  tool_input=tool_input, script_outputs=script_outputs(gen.files),
                  older_build=holds_only_a_build) as path:
        yield path


def built_from(out: Path, design: str) -> str:
    """The design file (as its ``design.json`` names it) of the build of design ``design``
    that ``out`` holds, "" when it holds none that says (or another design's build)."""
    try:
        held = json.loads((out / "design.json").read_text())
        loc = held.get("loc", {})
    except (OSError, ValueError, AttributeError):
        return ""
    name = loc.get("file") if isinstance(loc, dict) else None
    return name if isinstance(name, str) and held.get("name") == design else ""


def holds_only_a_build(folder: Path) -> bool:
    """Does ``folder`` hold nothing but what aiedsl writes into a build directory: the files of
    :func:`generate` (:data:`GENERATED`, ``kernels/<name>.cc``), the lowering's (its texts,
    stamp, ``insts.bin`` and ``logs/<step>.log``), and what ``--compile`` and ``build.sh`` add
    (each kernel's object and stack sizes, ``aie.xclbin``, the manifest and cache, and aiecc's
    project folder, whose files aiecc names)?

    Asked of a directory without a marker whose ``aie.mlir`` aiedsl wrote: a build of an aiedsl
    older than the marker, which the user may be told to delete whole only when nothing in it
    can be theirs (:func:`aiedsl.builddir.refuse.check_output_dir`).
    """
    try:
        found = entries(folder)
    except OSError:
        return False
    kernels = {rel for rel in found if _directly_in("kernels", rel, ".cc")}
    names = {*GENERATED, "kernels/", "logs/", *TEXT_OUTPUTS, STAMP, INSTS, MANIFEST, CACHE,
             *script_outputs(dict.fromkeys(kernels, ""))}
    return all(rel in names or rel in kernels or _directly_in("logs", rel, ".log")
               or rel.startswith(f"{PROJECT}/") for rel in found)


def _directly_in(folder: str, rel: str, suffix: str) -> bool:
    """Is entry ``rel`` a file of ``folder`` itself (not of a folder in it) ending in
    ``suffix``?"""
    head, _, name = rel.partition("/")
    return head == folder and "/" not in name and name.endswith(suffix) and name != suffix


# -- aiedsl map beside a build --------------------------------------------------------------------


def map_fits_build(folder: Path, rel: str, placed: Design, *, rebuild: str, example: str) -> bool:
    """May ``aiedsl map`` write its map of ``placed`` as ``rel`` in build directory ``folder``?

    A build's ``map.svg`` is one of its files: replaced by the map of another configuration
    (other defines, another device) or of a design changed since, it would disagree with the
    ``aie.mlir``, ``report.txt`` and ``design.json`` beside it. So when the folder holds a build
    (its marker lists ``design.json``) and ``rel`` is its ``map.svg``, the map must be of the
    design that build recorded; else a DesignError names both and the fix (``rebuild``, the
    build command of this map's options; ``example``, a file name for ``-o``). Of that same
    design, a map the build drew from mlir-aie's lowering (which its report.txt follows) is
    kept: False, nothing to write. Any other name in the folder is the user's choice: True.

    Run by :func:`aiedsl.builddir.outfile.write_file` under the folder's lock.
    """
    from aiedsl.codegen.tilemap import LOWERED
    from aiedsl.errors import display_path
    from aiedsl.text import printable

    marker = read_marker(folder)
    if rel != "map.svg" or marker is None or "design.json" not in marker["files"]:
        return True
    ours = design_json(placed)
    try:
        theirs = (folder / "design.json").read_text()
    except OSError:
        theirs = ""
    shown = printable(display_path(str(folder)))
    if theirs == ours:
        try:
            drawn = (folder / "map.svg").read_text(errors="replace")
        except OSError:
            return True
        return LOWERED not in drawn
    this = _configuration(placed.name, placed.device, placed.defines)
    try:
        data = json.loads(theirs)
        built = _configuration(str(data["name"]), str(data["device"]), dict(data["defines"]))
    except (ValueError, KeyError, TypeError):
        built = "a design.json aiedsl cannot read"
    if built == this:  # the same options, another design: the file (or aiedsl) changed since
        this += " as the design file reads now"
    raise DesignError(
        "output file", f"{shown}/map.svg is part of the build of {built} in {shown}; this map "
        f"is of {this}, and would disagree with that build's aie.mlir, report.txt and "
        "design.json",
        fix=f"draw this map elsewhere with -o (e.g. -o {printable(example)}), or rebuild "
            f"{shown} with these options first ({printable(rebuild)})")


def _configuration(name: str, device: str, defines: dict[str, Any]) -> str:
    """A design as built with these options: ``passthrough on npu1_1col with N=4096, TILE=1024``
    (values as ``-D`` takes them)."""
    given = ", ".join(f"{k}={v if isinstance(v, str) else json.dumps(v)}"
                      for k, v in defines.items())
    return f"{name} on {device}" + (f" with {given}" if given else "")
