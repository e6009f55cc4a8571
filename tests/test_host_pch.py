"""Host builds reading g++'s precompiled copy of aiedsl's host AIE API header: from the second
build with the same flags on, the same results, and a compiler error as g++ says it without."""

from __future__ import annotations

import dataclasses
import json
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from aiedsl.errors import DesignError
from aiedsl.kernels import host_build
from aiedsl.kernels.host_check import check_kernel
from aiedsl.kernels.host_pch import forced_include_safe, prune
from aiedsl.kernels.samples import library_cases

ROOT = Path(__file__).resolve().parents[1]
needs_gcc = pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")


def test_only_what_reads_the_header_the_same_after_it_takes_it_first() -> None:
    guard = "#ifndef MY_K\n#define MY_K\n#include <cstdint>\n#include <aie_api/aie.hpp>\n"
    assert forced_include_safe("// a comment\n#pragma once\n" + guard)
    assert forced_include_safe('/* x */\n#include "aie_api/aie.hpp"\nint x;\n')
    assert not forced_include_safe("#define NDEBUG\n#include <aie_api/aie.hpp>\n")
    assert not forced_include_safe("#ifndef A\n#define B\n#include <aie_api/aie.hpp>\n")
    # an #ifndef with no #define of its name is a condition, not a guard
    assert not forced_include_safe("#ifndef NO_AIE\n#include <aie_api/aie.hpp>\n#endif\n")
    assert not forced_include_safe("#ifndef G\n#include <cstdint>\n#define G\n"
                                   "#include <aie_api/aie.hpp>\n")
    assert not forced_include_safe('#include "mine.h"\n#include <aie_api/aie.hpp>\n')
    assert not forced_include_safe("#include </abs/inc.h>\n#include <aie_api/aie.hpp>\n")
    assert not forced_include_safe("#ifdef __AIE_ARCH__\n#include <aie_api/aie.hpp>\n#endif\n")
    assert not forced_include_safe("int f();\n#include <aie_api/aie.hpp>\n")
    assert not forced_include_safe("#include <cstdint>\nvoid f() {}\n")
    for kernel in ("mm.cc", "scale.cc", "relu.cc", "passthrough.cc"):
        path = ROOT / "kernels_cpp" / kernel
        if path.exists():
            assert forced_include_safe(path.read_text()), kernel


@needs_gcc
def test_the_second_build_reads_the_precompiled_header_and_computes_the_same(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # (built apart: made from two files)
    cases = [c for c in library_cases() if c.kernel.symbol in ("scale_i16_32", "relu_i16_32")]
    assert len(cases) == 2
    seen: list[list[str]] = []
    compile_ = host_build._compile

    def recorded(cxx: str, flags: list[str], src: Path, lib: Path) -> Any:
        seen.append(flags)
        return compile_(cxx, flags, src, lib)

    monkeypatch.setattr(host_build, "_compile", recorded)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert [check_kernel(c).passed for c in cases] == [True, True]
    assert ["-include" in f for f in seen] == [False, True]
    folder = tmp_path / "cache" / "aiedsl" / "host-kernels"
    built = list(folder.glob("pch-*/aie.hpp.gch"))
    assert len(built) == 1
    # a library's record of the headers it read does not name the precompiled header's folder
    for deps in folder.glob("*.deps"):
        assert not any("pch-" in p for p in json.loads(deps.read_text())), deps

    # an error reads as g++ says it reading the header's text: the same as in a fresh cache
    broken = dataclasses.replace(cases[0], cpp=dataclasses.replace(
        cases[0].cpp, text=cases[0].cpp.text.replace('extern "C" {', "int z = undeclared_q;\n"
                                                      'extern "C" {')))
    said = []
    for cache in (tmp_path / "cache", tmp_path / "fresh"):
        monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
        with pytest.raises(DesignError) as e:
            host_build.compile_host(broken.cpp, broken.kernel.loc, broken.aie_arch)
        said.append(str(e.value))
        if len(said) == 1:  # tried with it, then without
            assert ["-include" in f for f in seen[2:]] == [True, False]
    assert "undeclared_q" in said[0]
    assert said[0] == said[1]


def test_pruning_keeps_the_newest_and_what_aiedsl_did_not_write(tmp_path: Path) -> None:
    import os
    import time

    old = time.time() - 7200
    for i in range(6):
        here = tmp_path / f"pch-{i:024x}"
        here.mkdir()
        (here / "aie.hpp.gch").write_text("x")
        (here / "aie.hpp").write_text("x")
        (tmp_path / f"pch-{i:024x}.wanted").touch()
        os.utime(here / "aie.hpp.gch", (old + i, old + i))
    (tmp_path / f"pch-{0:024x}" / "notes.txt").write_text("mine")
    prune(tmp_path, keep=4)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [f"pch-{0:024x}", *(f"pch-{i:024x}{s}" for i in range(2, 6) for s in ("", ".wanted"))])
    assert [p.name for p in (tmp_path / f"pch-{0:024x}").iterdir()] == ["notes.txt"]


MISALIGNED = '''
import numpy as np
from aiedsl import Tensor, design, fifo, herd, i32, runtime
from aiedsl.kernels import buffer, declare

def copy_ref(src, dst):
    dst[...] = src

@design(device="npu1_1col")
def d(X: Tensor[64, i32], Y: Tensor[64, i32]):
    k = declare("copy_i32_64", source="bad_copy.cc", entry="bad_copy",
                args=[buffer("src", Tensor[64, i32]), buffer("dst", Tensor[64, i32], "out")],
                reference=copy_ref, cycles=20, cost="-")
    a = fifo(Tensor[64, i32], name="a")
    b = fifo(Tensor[64, i32], name="b")

    @herd()
    def core():
        with a.consume() as s, b.produce() as t:
            k(s, t)

    with runtime() as rt:
        rt.fill(a, X)
        rt.drain(b, Y)
'''


@needs_gcc
def test_a_misaligned_access_names_the_kernels_line_read_precompiled_too(tmp_path: Path) -> None:
    """The header finds the kernel's own lines by the file being compiled (__BASE_FILE__),
    which a precompiled header would have named the header itself."""
    import subprocess
    import sys

    (tmp_path / "d.py").write_text(MISALIGNED)
    env = {**__import__("os").environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    env.pop("AIEDSL_TRACEBACK", None)
    said = []
    for run in range(2):  # the second build with these flags reads it precompiled
        (tmp_path / "bad_copy.cc").write_text(
            "#include <aie_api/aie.hpp>\n#include <stdint.h>\n"
            "void bad_copy(const int32_t *src, int32_t *dst) {\n"
            "  for (unsigned i = 0; i < 64; ++i) dst[i] = src[i];\n"
            "  aie::store_v(dst + 4, aie::load_v<16>(src + 4));\n}\n" + f"// build {run}\n")
        r = subprocess.run([sys.executable, "-m", "aiedsl.cli", "kernel", "test", "d.py"],
                           cwd=tmp_path, capture_output=True, text=True, env=env)
        assert r.returncode == 1, r.stdout + r.stderr
        said.append(r.stdout.splitlines()[0])
        assert len(list((tmp_path / "cache").glob("*/host-kernels/pch-*/aie.hpp.gch"))) == run
    assert said[0] == said[1]
    assert "(at bad_copy.cc:5)" in said[1]


@needs_gcc
def test_builds_made_several_at_a_time_build_the_header_once_and_are_found_cached(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """host_build.prebuild (kernel test, kernel profile, sim --kernels native) runs g++ on
    several files at once: once a first build with these flags has asked for the precompiled
    header, the builds running together would each build it (1.7 s and 30 MB each); one does,
    the others read it. And what it built is what the builds one by one after it find."""
    from aiedsl.kernels import host_pch

    symbols = ("zero_i16_32", "passthrough_i16_64", "threshold_u8_64", "rgba2gray_u8_32")
    cases = {c.kernel.symbol: c for c in library_cases()}
    first, *together = (cases[s] for s in symbols)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    host_build.build_native(first.kernel, first.cpp, first.aie_arch)  # asks for the header
    built: list[Path] = []
    build = host_pch._build

    def slow(cxx: str, flags: list[str], include: Path, here: Path) -> bool:
        built.append(here)
        time.sleep(0.5)  # the other threads reach the header meanwhile
        return build(cxx, flags, include, here)

    monkeypatch.setattr(host_pch, "_build", slow)
    host_build.prebuild([(c.kernel, c.cpp, c.aie_arch) for c in together], jobs=3)
    assert len(built) == 1
    monkeypatch.setattr(host_build, "_compile", None)  # no compiler runs from here on
    for c in together:
        host_build.build_native(c.kernel, c.cpp, c.aie_arch)
