"""The Python API, mirroring the command line: build a design, then run what was built.

Every result is data (:mod:`aiedsl.run_result`): what the command line prints is rendered from
these fields. Where a run goes, and a run on the NPU, are :mod:`aiedsl.npu_run`'s.

Example
-------
Run from the project's folder (``tests/test_api.py`` runs it as written):

>>> import aiedsl, ml_dtypes, numpy as np
>>> art = aiedsl.build("designs/gemm_bf16.py", defines={"M": 256}, write=False)
>>> rng = np.random.default_rng(0)
>>> A = rng.standard_normal((256, 512)).astype(ml_dtypes.bfloat16)
>>> B = rng.standard_normal((512, 512)).astype(ml_dtypes.bfloat16)
>>> result = art.run(A, B, target="sim")   # target="auto": the NPU when there is one
>>> result.passed, result.target, result.outputs["C"].shape
(True, 'sim', (256, 512))
>>> round(result.timing.seconds, 6), round(result.timing.gops, 1), result.timing.bottleneck.kind
(0.000271, 494.9, 'runtime')
>>> result.checks[0].line()[:20]    # the worst element depends on numpy's BLAS
'PASS C: worst elemen'
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from aiedsl.builddir.build import sharing
from aiedsl.checks.resources import TileUsage
from aiedsl.codegen.syntax import AUTO, CHOICES, DEFAULT, NEWER, MlirSyntax
from aiedsl.errors import DesignError, ToolchainError
from aiedsl.ir.design import Design
from aiedsl.ir.loc import Loc
from aiedsl.lang.design import DesignHandle
from aiedsl.npu_run import choose_target, run_on_npu
# Measured is re-exported: aiedsl.api.Measured is where users have found it
from aiedsl.run_result import Measured, RunResult  # noqa: F401
from aiedsl.sim.compare import check_inputs, make_inputs
from aiedsl.sim.options import (
    CHECK_FIX, check_clock, check_flag, check_kernels, check_runs_once, check_seed,
    check_target,
)
from aiedsl.source_loc import caller_loc
from aiedsl.text import short_numbers, whole_ints
from aiedsl.values import as_int, by_type, shown
from aiedsl.toolchain.compile import Compiled, Progress, compile_build
from aiedsl.toolchain.discover import Tools, find_lowering_tools, find_tools

if TYPE_CHECKING:
    from aiedsl.sim import Watch
    from aiedsl.sim.hang_run import HangRun
    from aiedsl.toolchain.lower import Lowering


@dataclass
class Artifacts:
    """A built design: its directory, its placed IR and, when compiled, what the tools made."""

    path: Path | None
    """The build directory (None when nothing was written: ``build(..., write=False)``)."""
    handle: DesignHandle
    design: Design
    files: dict[str, str]
    """Relative path -> text of every generated file."""
    usage: dict[tuple[int, int], TileUsage] = field(default_factory=dict)
    """Resource use per tile (what report.txt tabulates)."""
    compiled: Compiled | None = None
    tools: Tools | None = None
    lowering: Lowering | None = None
    """mlir-aie's lowering of this build (``physical.mlir``, ``npu.mlir``, ``insts.bin``), when
    aie-opt and aie-translate were found; None when they were not (or ``lower=False``)."""
    hang: HangRun | None = None
    """How far the build's hang check ran (:mod:`aiedsl.sim.hang_run`); None when nothing was
    written (``write=False`` checks and places only)."""
    mlir_syntax: MlirSyntax = DEFAULT
    """The mlir-aie spelling ``aie.mlir`` is written in (:mod:`aiedsl.codegen.syntax`)."""
    respelled: str = ""
    """Why ``aie.mlir`` is in :data:`~aiedsl.codegen.syntax.NEWER`'s spelling though none was
    asked for (``mlir_syntax="auto"``): what the mlir-aie found refused in the default's; ""
    when it is not."""
    replaced: str = ""
    """The design file whose build the directory held before, when it was another one's (two
    design files of one design name build into one ``build/<name>``); "" otherwise."""
    _building: bool = field(default=False, repr=False, compare=False)
    """Made by an :func:`building` block still open: its compile shares the block's lock from
    any thread."""

    def __repr__(self) -> str:
        # short: the fields' reprs (the placed IR, every file's text) ran to hundreds of KB
        where = "nothing written" if self.path is None else f"{self.path}: {len(self.files)} files"
        return (f"Artifacts({self.design.name} on {self.design.device}, {where}"
                f"{', compiled' if self.compiled is not None else ''})")

    @property
    def notes(self) -> list[str]:
        """The notes ``aiedsl check`` prints of this design, a line each (``file:line: note:
        ...``): what is legal but often a mistake (a host tensor's bytes read as another type,
        a depth that counts nowhere), for a CI that holds notes as errors."""
        from aiedsl.notes import check_notes

        return check_notes(self.design)

    def compile(self, tools: Tools | None = None, progress: Progress | None = None) -> Compiled:
        """Run Peano and aiecc (or find their outputs cached); raises when they are missing."""
        return self._compile(tools, progress)

    def _compile(self, tools: Tools | None = None, progress: Progress | None = None, *,
                 npu_run: bool = False) -> Compiled:
        """:meth:`compile`; ``npu_run``: for a run on the NPU (what its errors say to do)."""
        if self.path is None:
            raise DesignError(
                "compile", f"{self.design.name} was built with write=False: there is no build "
                "directory for Peano and aiecc to work in", loc=caller_loc(),
                fix="build it with aiedsl.build(..., write=True) (the default), then compile")
        self.tools = tools or self.tools or find_tools()
        loc = caller_loc()
        asked = loc if loc.line else None  # a Python line; the command line's has none
        # inside its building() block, the block's lock is this compile's too, whichever thread
        # runs it (a thread pool's): without, it met the block's own lock as another build's
        try:
            with sharing(self.path) if self._building else nullcontext():
                self.compiled = compile_build(self.design, self.files, self.path, self.tools,
                                              progress, npu_run=npu_run, loc=asked)
        except ToolchainError as e:
            raise e.said_at(asked)
        return self.compiled

    def run(self, *inputs: np.ndarray, target: str = "auto", iters: int = 1, warmup: int = 0,
            seed: int = 0, check: bool = True, trace: str | None = None,
            clock_hz: float | None = None, kernels: str = "reference",
            say: Callable[[str], None] | None = None, watch: Watch | None = None) -> RunResult:
        """Run on ``target`` (``auto``, ``npu`` or ``sim``) with ``inputs`` in argument order.

        With no inputs, seeded random ones are made. ``auto`` uses the NPU when pyxrt finds one
        and the design can be compiled, the simulator otherwise; ``say`` hears which and why.
        ``kernels="native"`` simulates with each kernel's C++ built for the host; ``watch``
        hears a simulation's stages (:data:`aiedsl.sim.Watch`). On the simulator, ``iters`` and
        ``warmup`` asking for more than one run simulate two invocations, the second from what
        the first left (:func:`aiedsl.sim.simulate`'s ``invocations``).
        """
        loc = caller_loc()
        with whole_ints():  # a message may quote a huge int given (iters=10**5000)
            if isinstance(trace, str) and not trace:
                raise DesignError("output file", "trace='' names no file", loc=loc, found="''",
                                  fix=f"name the file, e.g. trace='{self.design.name}.json', or "
                                  "leave trace= out")
            _check_run_options(iters, warmup, check, trace, self.design.name, loc)
            check = bool(check)  # np.True_ too
            check_runs_once(self.design, int(iters) + int(warmup),
                            f"{int(iters) + int(warmup)} runs were asked (iters={int(iters)}, "
                            f"warmup={int(warmup)})", "run it once (iters=1, warmup=0)")
            target, kernels = check_target(target, loc), check_kernels(kernels, loc)
            seed, clock_hz = check_seed(seed, loc), check_clock(clock_hz, loc)
            ins = self._inputs(inputs, seed, loc)
            if inputs:
                check_inputs(self.design, ins, loc)
            where, why, session = choose_target(
                target, loc, self.design, self.path,
                lambda npu_run: self._compile(npu_run=npu_run))
            # On the NPU every run after the first starts from what the one before left (barrier
            # locks, rtp slots, locals, native kernels' C++ statics: only the load sets them, and
            # the cores, whose programs start again as they end); every one after the second
            # starts as the second does, but for locals and statics a kernel keeps changing. So
            # more than one run asked is two simulated, back to back on one timeline.
            invocations = 2 if where == "sim" and iters + warmup > 1 else 1
            if invocations > 1:
                asked = short_numbers(str(iters + warmup))  # --iters 10**4000: not 4000 digits
                why += (f"; of the {asked} runs asked (warmup and iters count runs "
                        "on the NPU) it simulates 2: the first, from the load, and the second, "
                        "from what the first left (barrier locks, rtp slots, locals, and each "
                        "core where it was: its program starts again as soon as it ends), as "
                        "every later run on the NPU starts; the time shown is the first's"
                        + (", and so is the trace" if trace else ""))
            if where != "sim" and kernels == "native":
                why += ("; kernels='native' is the simulator's: the NPU runs the kernels "
                        "compiled for it")
            if say:
                say(why)
            if where == "sim":
                from aiedsl.sim import simulate

                r = simulate(self.handle, ins, check=check, trace=trace, clock_hz=clock_hz,
                             placed=self.design, kernels=kernels, watch=watch,
                             invocations=invocations)
                return RunResult("sim", why, ins, r.outputs, r.checks, r.timing)
            return run_on_npu(session, self.design, self.handle, ins, why, check, iters, warmup)

    # -- helpers ------------------------------------------------------------------------------

    def _inputs(self, inputs: tuple[np.ndarray, ...], seed: int,
                loc: Loc) -> dict[str, np.ndarray]:
        if not inputs:
            return make_inputs(self.design, seed)
        names = self.handle.inputs
        if any(isinstance(i, Mapping) for i in inputs):  # simulate's form, by tensor name
            given = next(i for i in inputs if isinstance(i, Mapping))
            raise DesignError(
                "inputs", f"run() takes the inputs of '{self.design.name}' as arrays in "
                "argument order, not a dict", loc=loc, limit=f"one array per tensor the "
                f"runtime fills, in argument order: {', '.join(names)}",
                found=f"a dict of {', '.join(map(repr, given)) or 'nothing'}",
                fix=f"pass the arrays themselves: run({', '.join(names)}, ...) (a dict by "
                "tensor name is what aiedsl.simulate takes)")
        if len(inputs) != len(names):
            raise DesignError(
                "inputs", f"{self.design.name} takes {len(names)} input(s), got {len(inputs)}",
                loc=loc, limit=f"one array per tensor the runtime fills, in argument order: "
                f"{', '.join(names)}", found=f"{len(inputs)} array(s)",
                fix=f"pass {', '.join(names)}" + (" (the outputs are returned, not passed)"
                                                   if len(inputs) > len(names) else ""))
        return dict(zip(names, inputs))


def _refuse_load_options(handle: DesignHandle, defines: dict[str, Any] | None,
                         device: str | None, name: str | None) -> None:
    """``defines``, ``device`` and ``name`` choose how a design file is loaded: a design
    already traced cannot take them, and ignoring them would build another design than asked."""
    given = [f"{k}={v!r}" for k, v in (("defines", defines), ("device", device), ("name", name))
             if v is not None]
    if given:
        raise DesignError(
            "build", f"build() of '{handle.name}', a design already traced, cannot take "
            f"{' and '.join(given)}", loc=caller_loc(),
            limit="defines=, device= and name= choose how a design file is loaded",
            found=", ".join(given),
            fix="pass the design file's path instead (aiedsl.build('design.py', ...)), or set "
                "them where the design is made (@design(device=...), define's default)")


def _check_run_options(iters: object, warmup: object, check: object, trace: object,
                       design: str, loc: Loc) -> None:
    """Refuse (DesignError "run options") what ``aiedsl run`` refuses of the same options:
    ``iters`` below 1, ``warmup`` below 0, a ``check`` that is not a bool, a ``trace`` that is
    not a path."""
    for what, value, least in (("iters", iters, 1), ("warmup", warmup, 0)):
        number = as_int(value)
        if number is None or number < least:
            raise DesignError("run options", f"{what}={shown(value)}", loc=loc,
                              limit=f"an int >= {least}", found=shown(value),
                              fix=f"give {what}={max(least, 1) if what == 'iters' else 0} or "
                              "more")
    check_flag(check, "check", loc, CHECK_FIX)
    if trace is not None and not isinstance(trace, (str, os.PathLike)):
        raise DesignError("run options", f"trace={shown(trace)}", loc=loc,
                          limit="a file path (str or Path)", found=shown(trace),
                          fix=f"name the file, e.g. trace='{design}.json'")


def build(design: str | Path | DesignHandle, *, defines: dict[str, Any] | None = None,
          device: str | None = None, name: str | None = None, output: str | Path | None = None,
          compile: bool = False, peano: str | Path | None = None,
          progress: Progress | None = None, write: bool = True, lower: bool = True,
          mlir_syntax: str = AUTO, whole_run: bool = False) -> Artifacts:
    """Check, place and write ``design`` (a design file or a loaded design); optionally compile.

    ``defines`` set a design file's define()s as :func:`~aiedsl.loader.load_design` takes them
    (a str as ``-D``'s text, any other value of the define's own type); ``compile``, ``write``
    and ``lower`` are bools (a str or None is refused, never read as true or false).

    When mlir-aie's ``aie-opt`` and ``aie-translate`` are found (and ``lower`` is left True),
    the build is also lowered with mlir-aie's own passes: ``physical.mlir``, ``npu.mlir`` and
    ``insts.bin`` are written, and ``report.txt`` and ``map.svg`` are drawn from the lowering
    (:mod:`aiedsl.toolchain.lower`); a tool that fails raises
    :class:`~aiedsl.errors.ToolchainError` (``exit_code`` 5) at the design line it names, after
    the build and the tools' logs are written.

    ``compile=True`` runs Peano and aiecc (cached) and raises
    :class:`~aiedsl.errors.ToolchainError` (``exit_code`` 4) naming what is missing, after the
    MLIR and C++ are written. ``write=False`` checks and places only (nothing is rendered or
    written): enough to run on the simulator. ``mlir_syntax`` is the mlir-aie spelling of
    ``aie.mlir``: ``"2026-03"`` (upstream 1e400306), ``"2026-11"`` (acquire returning memrefs,
    SSA rtp values and lock counts: :mod:`aiedsl.codegen.syntax`), or ``"auto"`` (the
    default): ``"2026-03"``'s unless the aie-opt found refuses it and lowers ``"2026-11"``'s.
    ``whole_run=True`` runs the build's hang check to the end of the design's run however long
    it is (by default it stops after :data:`~aiedsl.sim.hang_run.EVENTS` engine steps, and
    ``Artifacts.hang`` says how far it got).
    """
    _refuse_empty_output(output)
    loc = caller_loc()
    _build_flags(loc, compile=compile, write=write, lower=lower, whole_run=whole_run)
    _check_syntax(mlir_syntax, loc)
    if compile and not write:  # it compiled nothing, unsaid (a tester)
        raise DesignError(
            "build options", "build() was given compile=True and write=False: a compile needs "
            "the build directory that write=False does not write", loc=loc if loc.line else None,
            found="compile=True, write=False",
            fix="leave write= out (True) to compile, or compile= out to check and place only")
    handle = _load(design, defines, device, name)
    if not write:
        from aiedsl.checks import check_design

        placed, table = check_design(handle.ir)
        return Artifacts(None, handle, placed, {}, table)
    # One lock from the write to the end of the compile: a build swapped in between would
    # have its aie.mlir compiled under this one's manifest.
    with building(handle, output=output, lower=lower, mlir_syntax=mlir_syntax,
                  whole_run=whole_run) as art:
        if compile:
            art.compile(find_tools(peano=peano), progress)
    return art


@contextmanager
def building(design: str | Path | DesignHandle, *, defines: dict[str, Any] | None = None,
             device: str | None = None, name: str | None = None,
             output: str | Path | None = None, lower: bool = True,
             mlir_syntax: str = AUTO, whole_run: bool = False) -> Iterator[Artifacts]:
    """:func:`build` (written, not compiled), the build directory's lock held over the block:
    what the block does there (``art.compile()``, as ``aiedsl build --compile`` does) meets this
    build, never another one that replaced it meanwhile (which then says another build is
    writing).

    >>> with aiedsl.api.building("designs/passthrough.py") as art:  # doctest: +SKIP
    ...     art.compile()
    """
    from aiedsl.build_lowering import lower_build
    from aiedsl.emit import Generated, built_from, generate, holds_only_a_build, writing
    from aiedsl.builddir.refuse import check_output_dir
    from aiedsl.toolchain.lower import settle

    _refuse_empty_output(output)
    _build_flags(caller_loc(), lower=lower, whole_run=whole_run)
    asked = _check_syntax(mlir_syntax, caller_loc())
    handle = _load(design, defines, device, name)
    syntax: MlirSyntax = DEFAULT if asked == AUTO else asked  # type: ignore[assignment]
    gen = generate(handle, syntax, whole_run)
    out = Path(output) if output else Path("build") / handle.name
    lowering = None
    respelled = ""
    if lower:
        aie_opt, aie_translate = find_lowering_tools()
        if aie_opt.path is not None and aie_translate.path is not None:
            # refuse before running any tool
            check_output_dir(out, handle.name, holds_only_a_build)
            gen, lowering, respelled = lower_build(gen, out, aie_opt, aie_translate,
                                                   auto=asked == AUTO)
            if respelled:
                syntax = NEWER
            gen = Generated(gen.design, gen.usage, {**gen.files, **lowering.files}, gen.hang)
    before = built_from(out, gen.design.name)
    with writing(gen, out) as path:
        settle(path, lowering)
        if lowering is not None and lowering.error is not None:
            raise lowering.error
        art = Artifacts(path, handle, gen.design, gen.files, gen.usage, lowering=lowering,
                        hang=gen.hang, mlir_syntax=syntax, respelled=respelled,
                        replaced=before if before not in ("", Path(gen.design.loc.file).name)
                        else "")
        art._building = True
        try:
            yield art
        finally:
            art._building = False


def _refuse_empty_output(output: object) -> None:
    """``output=""`` (an unset variable) names no directory: refused before any work, as the
    command line's ``-o ''`` is (it quietly built into ``build/<design>``); nor does anything
    but a path."""
    if isinstance(output, str) and not output:
        raise DesignError(
            "output directory", "output='' names no directory", loc=caller_loc(),
            found="''", fix="name a directory, or leave output= out for build/<design>")
    if output is not None and not isinstance(output, (str, os.PathLike)):  # (was a TypeError)
        raise DesignError(
            "output directory", f"output={shown(output)} is not a path", loc=caller_loc(),
            limit="a directory's path (str or Path)", found=shown(output),
            fix="name a directory, e.g. output='build/mine', or leave output= out for "
            "build/<design>")


_BUILD_FLAGS = {
    "compile": "give compile=True to compile with Peano and aiecc, False not to",
    "write": "give write=True to write the build directory, False to check and place only",
    "lower": "give lower=True to lower with mlir-aie's passes when aie-opt and aie-translate "
             "are found, False not to",
    "whole_run": "give whole_run=True to run the hang check to the end of the run, False to "
                 "stop it after its bound",
}
"""The fix for each flag of :func:`build` and :func:`building` that is not a bool."""


def _build_flags(loc: Loc, **flags: object) -> None:
    """Refuse (DesignError "build options", at ``loc``) a flag of ``build`` that is not a
    bool, as a run's are (:func:`~aiedsl.sim.options.check_flag`): ``write="no"`` wrote."""
    for option, value in flags.items():
        check_flag(value, option, loc, _BUILD_FLAGS[option], rule="build options")


def _check_syntax(value: object, loc: Loc) -> str:
    """``mlir_syntax=`` as given, when it names a spelling aiedsl writes or ``"auto"``; else a
    DesignError at ``loc`` listing them."""
    if isinstance(value, str) and value in CHOICES:
        return value
    raise DesignError(
        "build options", f"mlir_syntax={shown(value)} names no mlir-aie spelling aiedsl writes",
        loc=loc if loc.line else None, limit=", ".join(f'"{s}"' for s in CHOICES),
        found=shown(value), fix=f'leave it out ("{AUTO}": "{DEFAULT}", mlir-aie upstream '
        f'1e400306, unless the mlir-aie found lowers only "{NEWER}"\'s), or give "{DEFAULT}" '
        f'or "{NEWER}" (an mlir-aie whose acquire returns memrefs)')


def _is_ir(value: object) -> bool:
    """Is ``value`` a design IR (:class:`~aiedsl.ir.Design`, what load_json gives)?"""
    from aiedsl.ir import Design

    return isinstance(value, Design)


def _load(design: str | Path | DesignHandle, defines: dict[str, Any] | None,
          device: str | None, name: str | None) -> DesignHandle:
    """The design ``build`` was given: loaded from its file, or as it was traced."""
    from aiedsl.loader import load_design

    if not isinstance(design, (str, os.PathLike, DesignHandle)):
        raise DesignError(
            "design", f"build() takes a design file's path or a design, not {by_type(design)}",
            loc=caller_loc(), limit="a path (str or Path) of a design file, or a design (what "
            "@design returns, or load_design gives)", found=by_type(design),
            fix="build(DesignHandle(ir), ...) (from aiedsl import DesignHandle) builds a design "
            "IR (load_json's), byte for byte as its design's build" if _is_ir(design) else
            "pass e.g. build(\"designs/passthrough.py\"), or the @design function's "
            "result" if not isinstance(design, Artifacts) else
            "this is a build already: run it (art.run(...)), or build(art.handle, ...)")
    if isinstance(design, DesignHandle):
        _refuse_load_options(design, defines, device, name)
        return design
    if isinstance(device, str) and not device:  # an unset variable: not "the design's own"
        raise DesignError("device", "device='' names no device", loc=caller_loc(), found="''",
                          fix="name a device (npu1, npu2, npu2_4col, ...), or leave device= "
                          "out for the design's own")
    # a str as given: Path("") is the working folder, which load_design would call a directory;
    # defines as given: each define takes a value of its type, or text as -D gives it
    return load_design(design if isinstance(design, str) else Path(design), defines, device,
                       name)
