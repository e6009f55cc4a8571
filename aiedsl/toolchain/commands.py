"""The command lines that turn aiedsl's output into ``aie.xclbin`` and ``insts.bin``, and that
lower ``aie.mlir`` with mlir-aie's own passes.

Everything here follows mlir-aie, checked against its sources (nothing here ran the real tools):

* kernels: Peano's clang++ for the device's AIE architecture with the flags of mlir-aie's
  ``programming_examples/makefile-common`` (``PEANOWRAP2_FLAGS``: ``-O2 -std=c++20``, its
  ``WARNING_FLAGS``, ``-DNDEBUG``) and ``-D__AIE_API_AIE_ADF_HPP__``: since mlir-aie PR 3262
  (2026-07-01) the AIE API headers are stock Xilinx/aie_api, whose ``aie.hpp`` includes the
  Vitis-only ``adf.h`` whenever ``__AIENGINE__`` is defined, as Peano always defines it; the define
  pre-trips that header's include guard (as makefile-common's ``NO_ADF_FLAGS`` and IRON's JIT
  compile do). Older installs ignore it. aiedsl adds ``-fstack-usage`` (clang's, since LLVM 13):
  the frame of each function, to check kernels against their cores' stack; and
  ``-ffunction-sections``, as aiecc's own Peano compile of a core's code has it, so the
  ``--gc-sections`` of aiecc's link keeps only the functions a core calls; then the
  architecture's own macros (:attr:`~aiedsl.targets.TargetModel.kernel_defines`: for AIE2P,
  the AIE API macro that runs a bf16 ``aie::mmul`` on the bfp16 unit, as IRON's AIE2P GEMM
  compiles it: :data:`~aiedsl.targets.kernel_arch.BFP16_MMUL`); and a kernel's own
  ``defines=`` as ``-DNAME=VALUE`` words.
* aiecc: its options changed twice. PR 3364 (merged 2026-07-21) replaced
  ``--aie-generate-xclbin``/``--aie-generate-npu-insts`` with the ``--get-xclbin``/
  ``--get-npu-insts`` selectors (``--xclbin-name``/``--npu-insts-name`` unchanged); PR 3501
  (merged 2026-08-05) made Peano the default core compiler and deleted ``--no-xchesscc``/
  ``--no-xbridge``. aiecc rejects an unknown option (since PR 3066, 2026-05), so the spelling
  must be the installed one's: :func:`aiecc_spelling` reads it from ``aiecc --help``, and
  ``build.sh`` asks the same question when it runs (:func:`aiecc_script`).
* lowering: ``aie-opt`` with the passes aiecc runs, in aiecc's order (:func:`pass_pipeline`),
  then ``aie-translate --aie-npu-to-binary``.

Arguments are plain lists so the same list is written to ``build.sh`` and run by ``--compile``;
:func:`aiedsl.shell.shell_line` is the one function that turns them into shell text. The rest of
``build.sh``'s shell (its search for aiecc, its record of aiecc's folder, its choice of aiecc's
spelling: :func:`find_aiecc_script`, :func:`project_listing_script`, :func:`aiecc_script`) is
jinja2 templates in ``codegen/templates/`` (``find_aiecc.sh.j2``, ``project_listing.sh.j2``,
``aiecc.sh.j2``, put together by ``build.sh.j2``), and every word they are given from data is
quoted by :func:`shell_line` first.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Literal

from aiedsl.render import render
from aiedsl.shell import ArrayWords, EnvWord, Word, shell_line
from aiedsl.targets import TargetModel

WARNING_FLAGS = ["-Wno-parentheses", "-Wno-attributes", "-Wno-macro-redefined", "-Wno-empty-body",
                 "-Wno-missing-template-arg-list-after-template-kw"]
"""mlir-aie's ``makefile-common`` ``WARNING_FLAGS`` for Peano (the AIE API headers trip them)."""
NO_ADF = "-D__AIE_API_AIE_ADF_HPP__"
"""Keeps stock aie_api's ``aie.hpp`` from including the Vitis-only ``adf.h`` (mlir-aie PR 3262)."""
PEANO_FLAGS = ["-O2", "-std=c++20"]
PEANO_DEFINES = ["-DNDEBUG", NO_ADF]
STACK_USAGE = "-fstack-usage"
"""aiedsl's own addition: clang writes each function's frame to ``<object stem>.su``, which the
compile step reads to check the kernel against its cores' stack (:mod:`aiedsl.toolchain.stack`)."""
FUNCTION_SECTIONS = "-ffunction-sections"
"""aiedsl's own addition: each function in a section of its own, as aiecc compiles a core's own
code (Peano's ``llc --function-sections``, aiecc.cpp), so that the ``--gc-sections`` aiecc links
a core with drops the functions of a kernel object the core does not call. An object holds
every kernel a design declares from one C++ file (:mod:`aiedsl.kernels.units`): without it, a
core calling one of them would carry them all in its 16 KB of program memory."""

XCLBIN, INSTS = "aie.xclbin", "insts.bin"
OUTPUTS_GET = ["--get-xclbin", f"--xclbin-name={XCLBIN}", "--get-npu-insts",
               f"--npu-insts-name={INSTS}"]
"""aiecc's output selectors since mlir-aie PR 3364 (2026-07-21)."""
OUTPUTS_GENERATE = ["--aie-generate-xclbin", f"--xclbin-name={XCLBIN}", "--aie-generate-npu-insts",
                    f"--npu-insts-name={INSTS}"]
"""aiecc's output flags before PR 3364 (and the Python ``aiecc.py``)."""
PEANO_BACKEND = ["--no-xchesscc", "--no-xbridge"]
"""Peano instead of Chess, for an aiecc that defaults to Chess (before PR 3501, 2026-08-05); an
aiecc from PR 3501 on defaults to Peano and rejects these."""
GENERATE_OPTION = "--aie-generate-xclbin"
"""The option whose presence in ``aiecc --help`` means the old output spelling."""
CHESS_DEFAULT_OPTION = "--no-xchesscc"
"""The option whose presence in ``aiecc --help`` means Peano must be asked for."""
GET_OPTION = "--get"
"""The option (``--get=<name>``) whose presence in ``aiecc --help`` means the ``--get-*``
selectors."""
PYTHON_AIECC = "aiecc.py"
"""The Python driver of older mlir-aie, whose spelling is the old one (:func:`aiecc_spelling`)."""


def pass_pipeline(stage: Literal["physical", "npu"], packet: bool = False) -> str:
    """aie-opt's ``--pass-pipeline`` for a lowering stage, as aiecc runs it: ``physical``
    (resource allocation, then the router; ``packet`` for ``--packet-sw-objFifos``) or ``npu``
    (the runtime sequence to NPU instructions). The pass lists live in
    ``codegen/templates/pass_pipeline.j2``, with where each comes from.

    >>> pass_pipeline("npu").startswith("builtin.module(aie-materialize-runtime-sequences,")
    True
    """
    return render("pass_pipeline.j2", stage=stage, packet=packet).strip()


def pipeline_passes(pipeline: str) -> list[str]:
    """The top-level entries of a ``builtin.module(...)`` pipeline, nested ones kept whole.

    >>> pipeline_passes("builtin.module(a,dev(b,c),d)")
    ['a', 'dev(b,c)', 'd']
    """
    body = pipeline[pipeline.index("(") + 1:-1]
    out, depth, start = [], 0, 0
    for i, ch in enumerate(body):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            out.append(body[start:i])
            start = i + 1
    return out + [body[start:]]



@dataclass(frozen=True)
class AieccScript:
    """aiecc run with the option spelling of whichever aiecc runs it: as shell text, the
    ``build.sh`` lines of :func:`aiecc_script` (they ask ``aiecc --help``, then run it).
    ``aiecc`` None: ``build.sh`` finds it as aiedsl does (:func:`find_aiecc_script`)."""

    aiecc: str | None
    mlir: str
    packet: bool = False
    find: bool = True
    """Whether these lines find aiecc themselves (False: earlier lines of ``build.sh`` did,
    before the kernels compile, so a missing aiecc stops it at once)."""

    def shell(self) -> str:
        """The ``build.sh`` lines that find the spelling and run aiecc."""
        return "\n".join(aiecc_script(self.mlir, aiecc=self.aiecc, packet=self.packet,
                                      find=self.find))



PEANO_CLANG = EnvWord("", "PEANO_INSTALL_DIR", "/bin/clang++")
AIE_API_INCLUDE = EnvWord("-I", "MLIR_AIE_INSTALL_DIR", "/include")


def runtime_lib_include(target: TargetModel, include: str | None = None) -> Word:
    """The ``-I`` of mlir-aie's runtime library for ``target``'s cores: the folder
    ``aie_runtime_lib/<AIE2|AIE2P>`` (:attr:`~aiedsl.targets.TargetModel.runtime_lib_dir`)
    beside the install's ``include/``, where ``<vec_math.h>`` and ``<lut_based_ops.h>`` are,
    as IRON adds it to each kernel compile. ``include`` is the AIE API's include folder found
    (``--compile``); None: ``$MLIR_AIE_INSTALL_DIR``'s, as ``build.sh`` reads it.

    >>> from aiedsl.targets import get_target
    >>> shell_line([runtime_lib_include(get_target("npu2"))])
    '-I"$MLIR_AIE_INSTALL_DIR"/aie_runtime_lib/AIE2P'
    >>> runtime_lib_include(get_target("npu1"), "/opt/mlir_aie/include")
    '-I/opt/mlir_aie/aie_runtime_lib/AIE2'
    >>> runtime_lib_include(get_target("npu1"), "include")
    '-I./aie_runtime_lib/AIE2'
    """
    folder = f"/aie_runtime_lib/{target.runtime_lib_dir}"
    if include is None:
        return EnvWord("-I", "MLIR_AIE_INSTALL_DIR", folder)
    # an install's include/ and aie_runtime_lib/ are siblings (a source build's install, pip's
    # mlir_aie package alike); the folder above, in the system's own path syntax (a POSIX
    # path's parent of C:\...\include was ".": a Windows tester)
    return f"-I{os.path.dirname(os.path.normpath(include)) or '.'}{folder}"


def kernel_compile_argv(target: TargetModel, source: str, output: str, *,
                        clang: Word = PEANO_CLANG, include: str | None = None,
                        defines: Sequence[str] = ()) -> list[Word]:
    """Compile one kernel source to an object file for ``target``'s cores.

    ``clang`` and ``include`` default to the environment variables ``build.sh`` reads; the
    compile step passes the paths it found. ``defines`` are the kernels' own ``-DNAME=VALUE``
    words (their ``defines=``), after aiedsl's and the architecture's
    (:attr:`~aiedsl.targets.TargetModel.kernel_defines`), each one word of the command line.
    The include path is the AIE API's folder, then the runtime library's of the architecture
    (:func:`runtime_lib_include`), so a kernel written for mlir-aie that includes
    ``<vec_math.h>`` or ``<lut_based_ops.h>`` compiles as IRON compiles it.

    >>> from aiedsl.targets import get_target
    >>> shell_line(kernel_compile_argv(get_target("npu1"), "kernels/k.cc", "k.o"))[:74]
    '"$PEANO_INSTALL_DIR"/bin/clang++ -O2 -std=c++20 --target=aie2-none-unknown'
    """
    inc: Word = AIE_API_INCLUDE if include is None else f"-I{include}"
    return [clang, *PEANO_FLAGS, f"--target={target.peano_target}", *WARNING_FLAGS,
            *PEANO_DEFINES, *target.kernel_defines, *defines, STACK_USAGE, FUNCTION_SECTIONS,
            inc, runtime_lib_include(target, include), "-c", source, "-o", output]


@dataclass(frozen=True)
class AieccSpelling:
    """Which of aiecc's option spellings an install takes."""

    outputs: str = "get"
    """``"get"`` (``--get-xclbin``, mlir-aie PR 3364 on) or ``"generate"``
    (``--aie-generate-xclbin``, before)."""
    peano_flags: bool = False
    """Whether Peano must be asked for with ``--no-xchesscc --no-xbridge`` (before PR 3501)."""

    def words(self) -> list[str]:
        """The aiecc options of this spelling."""
        return [*(PEANO_BACKEND if self.peano_flags else []),
                *(OUTPUTS_GENERATE if self.outputs == "generate" else OUTPUTS_GET)]


def help_offers(help_text: str, option: str) -> bool:
    """Does ``aiecc --help`` list ``option`` (at the start of a line, as LLVM's and argparse's
    help print each option)?"""
    return re.search(rf"^\s*{re.escape(option)}(?![\w-])", help_text, re.M) is not None


def aiecc_spelling(help_text: str, name: str = "") -> AieccSpelling:
    """The spelling an aiecc named ``name`` whose ``--help`` printed ``help_text`` takes.

    The old output flags where its help lists ``--aie-generate-xclbin``, the ``--get-*``
    selectors where it lists ``--get=<name>`` (aiecc's help does not list them one by one);
    Peano asked for where its help lists ``--no-xchesscc``. A help that names neither output
    spelling (empty, or unreadable) gives the Python ``aiecc.py`` its own spelling, the old one
    with Peano asked for (its ``parse_args`` takes ``--aie-generate-xclbin``,
    ``--aie-generate-npu-insts``, ``--no-xchesscc`` and ``--no-xbridge`` and knows no
    ``--get-*``: python/compiler/aiecc/cl_arguments.py), and the C++ ``aiecc`` the current one.

    >>> aiecc_spelling("  --aie-generate-xclbin   - Generate xclbin\\n  --no-xchesscc  - ...")
    AieccSpelling(outputs='generate', peano_flags=True)
    >>> aiecc_spelling("  --get=<name>  - Request graph output(s)\\n  --xchesscc  - ...")
    AieccSpelling(outputs='get', peano_flags=False)
    >>> aiecc_spelling("", "aiecc.py")
    AieccSpelling(outputs='generate', peano_flags=True)
    """
    if help_offers(help_text, GENERATE_OPTION):
        outputs = "generate"
    elif help_offers(help_text, GET_OPTION) or name != PYTHON_AIECC:
        outputs = "get"
    else:  # the Python driver, whose help said nothing of either
        return AieccSpelling("generate", peano_flags=True)
    return AieccSpelling(outputs=outputs, peano_flags=help_offers(help_text, CHESS_DEFAULT_OPTION))


PACKET_OPTION = "--packet-sw-objFifos"
"""aiecc's option that lowers every objectfifo to a packet flow (``flows="packet"``); the pass
option of ``aie-objectFifo-stateful-transform`` is ``packet-sw-objFifos=true``."""


AIECC_NAMES = ("aiecc", PYTHON_AIECC)
"""aiecc's names, in the order they are looked for (the Python ``aiecc.py`` of older
mlir-aie second): on ``PATH``, then in an install's ``bin/``."""
FOUND_AIECC = EnvWord("", "aiecc", "")
"""The aiecc ``build.sh`` found (:func:`find_aiecc_script`)."""


PURELIB = 'import sysconfig; print(sysconfig.get_paths()["purelib"])'
"""The program ``build.sh`` and discovery hand the interpreter of pip's aiecc launcher: it prints
that environment's site-packages, where pip put the mlir_aie package."""
PIP_PACKAGE = "mlir_aie"
"""The folder of a pip-installed mlir-aie in site-packages (its ``include/`` holds the headers)."""


SH_LAUNCHER = "/bin/sh"
"""The first line's interpreter of pip's launcher for a Python whose path a ``#!`` line cannot
hold (a space in it, or longer than the 127 bytes Linux reads): the second line names the
Python (pip's vendored distlib, ``ScriptMaker._build_shebang``)."""
EXEC_PREFIX, EXEC_SUFFIX = "'''exec' ", ' "$0" "$@"'
"""What surrounds the Python on that second line: ``'''exec' "/env path/bin/python" "$0" "$@"``
(the path double-quoted when it has a space, as distlib's ``enquote_executable`` writes it)."""


def launcher_python(script: Path) -> Path | None:
    """The Python that pip's launcher ``script`` runs, read as ``build.sh`` reads it
    (:func:`find_aiecc_script`): the whole of its first line after ``#!``
    (``#!/env/bin/python``), or, when that is ``#!/bin/sh``, the path its second line
    execs (:data:`SH_LAUNCHER`, :data:`EXEC_PREFIX`). Taken only when it is an executable file
    named ``python*``: the interpreter is asked for its site-packages, a question only a Python
    answers (a ``#!/bin/bash`` wrapper would fail it). None otherwise (a compiled aiecc, a
    ``#!/usr/bin/env python3`` line, a script that cannot be read)."""
    try:
        with open(script, "rb") as f:
            first = f.readline(4096).rstrip(b"\n")
            second = f.readline(4096).rstrip(b"\n")
    except OSError:
        return None
    if not first.startswith(b"#!"):
        return None
    named = os.fsdecode(first[2:])
    if named == SH_LAUNCHER:
        launch = os.fsdecode(second)
        if not (launch.startswith(EXEC_PREFIX) and launch.endswith(EXEC_SUFFIX)
                and len(launch) > len(EXEC_PREFIX) + len(EXEC_SUFFIX)):
            return None
        named = launch[len(EXEC_PREFIX):-len(EXEC_SUFFIX)]
        if len(named) >= 2 and named[0] == named[-1] == '"':
            named = named[1:-1]
    python = Path(named)
    if not fnmatch.fnmatchcase(python.name, "python*"):
        return None
    return python if python.is_file() and os.access(python, os.X_OK) else None


def find_aiecc_script() -> list[str]:
    """The ``build.sh`` lines that find aiecc and the AIE API headers as
    :mod:`aiedsl.toolchain.discover` does: aiecc by the names of :data:`AIECC_NAMES` on
    ``PATH``, then in ``$MLIR_AIE_INSTALL_DIR/bin``, put in ``$aiecc``; the headers in
    ``$MLIR_AIE_INSTALL_DIR/include``, else in the install aiecc came from, else, for pip's
    aiecc (a launcher script), in the mlir_aie package of its interpreter's site-packages
    (:func:`launcher_python`, :data:`PURELIB`: the rule discovery follows too, in
    :func:`aiedsl.toolchain.discover.header_places`);
    ``MLIR_AIE_INSTALL_DIR`` is then set to where they were. Either
    missing stops it (exit 127) saying what it needs. No path of this machine is written into
    them: ``build.sh`` is the same on every machine.

    The shell text is ``codegen/templates/find_aiecc.sh.j2``; the words it is given (names,
    messages, paths) are quoted here, by :func:`shell_line`."""
    need = ("build.sh: no aiecc: put the aiecc (or aiecc.py) of mlir-aie on PATH, or set "
            "MLIR_AIE_INSTALL_DIR to an mlir-aie install whose bin/ holds it")
    no_headers = ("build.sh: no AIE API headers (include/aie_api/aie.hpp) in "
                  "MLIR_AIE_INSTALL_DIR, beside aiecc or in its Python's mlir_aie package: set "
                  "MLIR_AIE_INSTALL_DIR to your mlir-aie install")
    return render(
        "find_aiecc.sh.j2", names=shell_line(list(AIECC_NAMES)),
        bin_dir=shell_line([EnvWord("", "MLIR_AIE_INSTALL_DIR", "/bin/")]),
        need=shell_line([need]),
        headers=shell_line([EnvWord("", "MLIR_AIE_INSTALL_DIR", "/include/aie_api/aie.hpp")]),
        purelib=shell_line([PURELIB]), pip_package=shell_line([PIP_PACKAGE]),
        exec_prefix=shell_line([EXEC_PREFIX]), exec_suffix=shell_line([EXEC_SUFFIX]),
        no_headers=shell_line([no_headers])).splitlines()


def project_listing_script(project: str, record: str) -> list[str]:
    """The ``build.sh`` lines, before the kernels' compiles, that record in ``record`` what aiecc
    adds to its project folder ``project``: the folder's entries before the script compiles
    anything and, however it ends, after (:func:`aiedsl.builddir.marker.script_made` reads
    them). aiecc names its files there itself, so this record is what tells them from a file
    the user put there, which a rebuild of another design (dropping the folder) must not
    delete; and a run recorded whole is what makes the objects, ``aie.xclbin`` and
    ``insts.bin`` it left aiedsl's (:func:`aiedsl.builddir.marker.script_wrote`), a kernel
    compile that stopped it included.

    The shell text is ``codegen/templates/project_listing.sh.j2``, given both names quoted by
    :func:`shell_line` (and as they are, for its comment)."""
    return render("project_listing.sh.j2", project=project, record=record,
                  folder=shell_line([project]), listing=shell_line([record])).splitlines()


def aiecc_argv(mlir: str = "aie.mlir", *, aiecc: str | None = None,
               spelling: AieccSpelling | None = None, packet: bool = False,
               find: bool = True) -> list[Word]:
    """Lower, place and package ``mlir`` into ``aie.xclbin`` and ``insts.bin``.

    With the ``spelling`` of the aiecc found (``--compile``), the words to run; without one
    (``build.sh``, written before anyone knows which aiecc will run it), an :class:`AieccScript`
    whose shell text picks the spelling when it runs. ``aiecc`` is the aiecc to run (None:
    ``aiecc`` with a spelling, and for ``build.sh`` the one it finds itself). ``packet`` adds
    :data:`PACKET_OPTION`. ``find=False``: the script's earlier lines found aiecc
    (:func:`find_aiecc_script`).

    >>> aiecc_argv(spelling=AieccSpelling("generate", peano_flags=True))[:3]
    ['aiecc', '--no-xchesscc', '--no-xbridge']
    >>> shell_line(aiecc_argv()).splitlines()[-1]
    '"$aiecc" ${backend[@]+"${backend[@]}"} ${outputs[@]+"${outputs[@]}"} aie.mlir'
    """
    if spelling is None:
        return [AieccScript(aiecc, mlir, packet, find)]
    return [aiecc or AIECC_NAMES[0], *spelling.words(), *([PACKET_OPTION] if packet else []),
            mlir]


def aiecc_script(mlir: str = "aie.mlir", *, aiecc: str | None = None,
                 packet: bool = False, find: bool = True) -> list[str]:
    """The ``build.sh`` lines that run aiecc with the spelling of whichever aiecc runs them.

    ``build.sh`` is written before anyone knows which mlir-aie will run it, so it finds aiecc
    (the lines of :func:`find_aiecc_script` first, unless ``aiecc`` names it or ``find`` is
    False: earlier lines found it), asks it (``aiecc --help``) the same two questions
    :func:`aiecc_spelling` asks, and picks the words. The shell text is
    ``codegen/templates/aiecc.sh.j2``; every word it is given goes through :func:`shell_line`.
    """
    tool: Word = FOUND_AIECC if aiecc is None else aiecc
    python_driver = None if aiecc is None else PurePosixPath(aiecc).name == PYTHON_AIECC
    run = render(
        "aiecc.sh.j2", probe=shell_line([tool, "--help"]),
        chess_default_option=shell_line([CHESS_DEFAULT_OPTION]),
        generate_option=shell_line([GENERATE_OPTION]), get_option=shell_line([GET_OPTION]),
        peano_backend=shell_line(PEANO_BACKEND), outputs_generate=shell_line(OUTPUTS_GENERATE),
        outputs_get=shell_line(OUTPUTS_GET), python_driver=python_driver,
        python_aiecc=shell_line([PYTHON_AIECC]),
        command=shell_line([tool, ArrayWords("backend"), ArrayWords("outputs"),
                            *([PACKET_OPTION] if packet else []), mlir]))
    return [*(find_aiecc_script() if aiecc is None and find else []), *run.splitlines()]


def lower_argvs(aie_opt: str = "aie-opt", aie_translate: str = "aie-translate",
                packet: bool = False) -> list[tuple[str, list[Word]]]:
    """The lowering, one ``(step, argv)`` per tool run, in a directory holding ``aie.mlir``:
    ``physical.mlir`` (resources and routes), ``npu.mlir`` (the runtime sequence as NPU
    instructions) and ``insts.bin`` (those instructions as words).

    >>> [argv[1] for _, argv in lower_argvs()][2]
    '--aie-npu-to-binary'
    """
    return [
        ("aie-opt physical", [aie_opt, "--pass-pipeline=" + pass_pipeline("physical", packet),
                              "aie.mlir", "-o", "physical.mlir"]),
        ("aie-opt npu", [aie_opt, "--pass-pipeline=" + pass_pipeline("npu"), "physical.mlir",
                         "-o", "npu.mlir"]),
        ("aie-translate", [aie_translate, "--aie-npu-to-binary", "npu.mlir", "-o", INSTS]),
    ]
