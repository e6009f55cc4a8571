"""Native simulations and kernel tests/profiles in a process that runs several threads: the
kernel worker's child, and the child a kernel's guarded run goes in (aiedsl.kernels.guarded), is
then forked by a server process (aiedsl.kernels.worker_server), not from this process, whose
fork could wait forever on another thread's library (OpenBLAS's pre-fork handler). The
server's child must say everything a forked child says, word for word."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator

import numpy as np
import pytest

from aiedsl.errors import DesignError
from aiedsl.kernels import worker_client
from aiedsl.loader import load_design
from aiedsl.sim import simulate
from test_kernels import (NATIVE_FAULTS, NEVER_RETURNS, OUT_OF_BOUNDS, TO_BF16, TO_BF16_CC,
                          WRONG, _faulty_design)

DesignFile = Callable[..., Path]
ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"),
                                reason="native calls run in a child only where there is os.fork")


@contextmanager
def another_thread() -> Iterator[None]:
    """A second thread alive (waiting) for the time of the block, as in a notebook's kernel or
    a thread pool."""
    stop = threading.Event()
    t = threading.Thread(target=stop.wait)
    t.start()
    try:
        yield
    finally:
        stop.set()
        t.join()


@pytest.fixture
def server_starts(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The pid of each worker the server forks (a run with none forked its child itself)."""
    pids: list[int] = []
    start = worker_client.start

    def counted(*args: Any) -> tuple[int, int]:
        pid, status = start(*args)
        pids.append(pid)
        return pid, status

    monkeypatch.setattr(worker_client, "start", counted)
    return pids


def _error(path: Path, served: bool) -> str:
    """The design error a native simulation of ``path`` raises, its child forked by the
    server (``served``) or by this process."""
    with pytest.raises(DesignError) as excinfo:
        if served:
            with another_thread():
                simulate(load_design(path), kernels="native")
        else:
            simulate(load_design(path), kernels="native")
    return str(excinfo.value)


@pytest.mark.parametrize("bug", sorted(NATIVE_FAULTS))
def test_the_servers_child_reports_a_crash_or_stray_write_as_a_forked_one(
        design_file: DesignFile, server_starts: list[int], bug: str) -> None:
    """The same message, word for word, from either child; and twice from the server's: each
    of its children loads the library afresh, so a kernel's static call counter starts at 0
    (the null pointer comes on call 3 both times), as in a fork of the simulating process."""
    body, message = NATIVE_FAULTS[bug]
    path = _faulty_design(design_file, body)
    assert _error(path, served=False) == message
    assert not server_starts
    assert _error(path, served=True) == message
    assert _error(path, served=True) == message
    assert len(server_starts) == 2


def test_the_servers_child_names_a_file_from_the_askers_working_directory(
        design_file: DesignFile, server_starts: list[int], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The server is started once, in the directory its first asker was in; a child it forks
    later works where the asker is then, as a forked child does: a misaligned access names the
    kernel's file relative to it, not by the path from where the server started (seen when
    the command line ran in a thread of a test's process)."""
    path = _faulty_design(design_file, "for (unsigned i = 0; i < 64; ++i) dst[i] = src[i];\n"
                                       "  aie::store_v(dst + 4, aie::load_v<16>(src + 4));")
    forked = _error(path, served=False)
    assert "(at bad_copy.cc:5)" in forked
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    first = _error(path, served=True)  # the server starts here
    assert "(at " + str(tmp_path / "bad_copy.cc") + ":5)" in first
    monkeypatch.chdir(tmp_path)
    assert _error(path, served=True) == forked
    assert len(server_starts) == 2


def test_the_servers_child_is_stopped_after_the_time_limit(
        design_file: DesignFile, monkeypatch: pytest.MonkeyPatch,
        server_starts: list[int]) -> None:
    path = _faulty_design(design_file, NEVER_RETURNS)
    monkeypatch.setenv("AIEDSL_KERNEL_TIMEOUT", "0.5")
    forked = _error(path, served=False)
    assert forked.startswith("d.py:11: error [native kernel]: kernel 'copy_i32_64' did not "
                             "return within 0.5 s in call 1 of it by core[0,0]")
    assert _error(path, served=True) == forked
    assert len(server_starts) == 1
    with pytest.raises(ProcessLookupError):  # killed, and reaped by the server
        os.kill(server_starts[0], 0)


def test_the_servers_child_keeps_each_cores_rounding_mode(design_file: DesignFile) -> None:
    """The core's modes go with each call and come back with its answer: a conversion under
    the reset mode is refused, one under conv_even passes, as in a forked child."""
    path = design_file(TO_BF16)
    (path.parent / "to_bf16.cc").write_text(TO_BF16_CC % ("", ""))
    forked = _error(path, served=False)
    assert "under rounding mode floor" in forked
    assert _error(path, served=True) == forked
    (path.parent / "to_bf16.cc").write_text(TO_BF16_CC % (
        "  const aie::rounding_mode old = aie::get_rounding();\n"
        "  aie::set_rounding(aie::rounding_mode::conv_even);", "  aie::set_rounding(old);"))
    with another_thread():
        assert simulate(load_design(path), kernels="native").passed


def test_native_results_are_the_same_from_the_servers_child(
        tmp_path: Path, server_starts: list[int]) -> None:
    """Outputs, timing, statistics and trace, from the calls run by either child."""
    handle = load_design(ROOT / "designs" / "gemm_bf16.py",
                         {"M": "128", "K": "128", "N": "256", "ROWS": "2", "COLS": "2"})
    forked = simulate(handle, kernels="native", trace=str(tmp_path / "forked.json"))
    with another_thread():
        served = simulate(handle, kernels="native", trace=str(tmp_path / "served.json"))
    assert len(server_starts) == 1
    assert forked.passed and served.passed
    assert all(np.array_equal(forked.outputs[n], served.outputs[n]) for n in handle.outputs)
    assert forked.timing == served.timing
    assert forked.machine.kernel_calls == served.machine.kernel_calls > 0
    assert json.loads((tmp_path / "forked.json").read_text()) == \
        json.loads((tmp_path / "served.json").read_text())


def test_a_kernels_printf_shows_on_this_process_stdout(
        design_file: DesignFile, capfd: pytest.CaptureFixture[str]) -> None:
    """The server's child writes where this process's stdout is now (the server was started
    with another: an earlier test's captured one)."""
    path = design_file(WRONG)
    (path.parent / "bad_copy.cc").write_text(
        "#include <cstdio>\n#include <stdint.h>\n"
        "void bad_copy(const int32_t *src, int32_t *dst) {\n"
        "  for (unsigned i = 0; i < 64; ++i) dst[i] = src[i];\n"
        '  printf("copied %d\\n", (int)dst[0]);\n}\n')
    capfd.readouterr()
    forked = simulate(load_design(path), kernels="native")
    out_forked = capfd.readouterr().out
    with another_thread():
        served = simulate(load_design(path), kernels="native")
    assert forked.passed and served.passed
    assert out_forked == capfd.readouterr().out == f"copied {forked.inputs['X'][0]}\n"


def test_a_server_that_died_is_started_again(design_file: DesignFile) -> None:
    path = design_file(WRONG)
    (path.parent / "bad_copy.cc").write_text(
        "#include <stdint.h>\nvoid bad_copy(const int32_t *src, int32_t *dst) {\n"
        "  for (unsigned i = 0; i < 64; ++i) dst[i] = src[i];\n}\n")
    with another_thread():
        assert simulate(load_design(path), kernels="native").passed
        server = worker_client._server
        assert server is not None
        os.kill(server.pid, signal.SIGKILL)
        assert simulate(load_design(path), kernels="native").passed
        assert worker_client._server is not None and worker_client._server.pid != server.pid


def test_native_simulations_in_a_thread_pool(design_file: DesignFile,
                                             server_starts: list[int]) -> None:
    """Threads share the one server: each simulation gets its own child and its own answers,
    a crash in one stops that one alone."""
    from concurrent.futures import ThreadPoolExecutor

    crash, message = NATIVE_FAULTS["null pointer on the third call"]
    bad = _faulty_design(design_file, crash)
    good = design_file(WRONG.replace("bad_copy.cc", "good_copy.cc"), "good.py")
    (good.parent / "good_copy.cc").write_text(
        "#include <stdint.h>\nvoid bad_copy(const int32_t *src, int32_t *dst) {\n"
        "  for (unsigned i = 0; i < 64; ++i) dst[i] = src[i];\n}\n")

    def run(path: Path) -> str:
        try:
            return "PASS" if simulate(load_design(path), kernels="native").passed else "FAIL"
        except DesignError as e:
            return str(e)

    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(run, [good, bad] * 4))
    assert got == ["PASS", message] * 4
    assert len(server_starts) == 8


def test_only_a_host_build_runs_in_the_servers_child() -> None:
    """A Python function standing for a kernel can run only in a child forked from here."""
    from aiedsl.kernels import matmul_cascade
    from aiedsl.kernels.worker import KernelWorker

    k = matmul_cascade(8, 8, 8, "put").ir
    with pytest.raises(TypeError, match=r"kernel 'matmul_cascade_put_bf16_f32_8x8x8_4x8x4': "
                       r"<function .*> is not its host build"):
        KernelWorker([(k, lambda *args: None)], fork=False)


def _blas_threads() -> int:
    """The threads numpy's BLAS uses by default here (threadpoolctl's word, else the threads
    a process has after a matrix product; 1 when neither can tell)."""
    script = textwrap.dedent('''
        import os
        import numpy as np
        try:
            from threadpoolctl import threadpool_info
        except ImportError:
            a = np.random.rand(600, 600)
            a @ a
            task = "/proc/self/task"
            print(len(os.listdir(task)) if os.path.isdir(task) else 1)
        else:
            print(max([i["num_threads"] for i in threadpool_info()
                       if i["user_api"] == "blas"] or [1]))
        ''')
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                       env=_default_blas_env(), check=True)
    return int(r.stdout)


def _default_blas_env() -> dict[str, str]:
    """This environment without the settings that make BLAS run one thread."""
    names = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "GOTO_NUM_THREADS",
             "BLIS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS")
    return {k: v for k, v in os.environ.items() if k not in names}


BLAS_BESIDE_NATIVE = '''
    import faulthandler, json, threading
    import numpy as np
    import aiedsl

    faulthandler.dump_traceback_later(100, exit=True)  # a hang shows where
    art = aiedsl.build("designs/vector_scalar_mul.py", write=False)
    x = np.arange(4096, dtype=np.int16)
    f = np.array([3], np.int32)

    stop = threading.Event()

    def blas():  # products long enough to keep OpenBLAS's threads busy at each fork
        a = np.random.rand(1000, 1000)
        while not stop.is_set():
            a @ a

    products = threading.Thread(target=blas)
    products.start()
    for i in range(20):
        r = art.run(x, f, target="sim", kernels="native")
        print(json.dumps([i, bool(r.passed), r.outputs["out"].tolist() == (x * 3).tolist()]),
              flush=True)
    stop.set()  # ended before the interpreter is (see BLAS_BESIDE_KERNEL_TESTS)
    products.join()
    '''


def test_native_simulations_beside_a_threaded_matrix_product_finish() -> None:
    """A tester's: kernels="native" in one thread while another multiplied matrices hung the
    whole process at the first run. The simulating process forked while OpenBLAS's threads
    were busy with the other thread's product: OpenBLAS's pre-fork handler waited for them to
    end, holding the GIL that thread needed to go on. Every run now ends, and is right."""
    if _blas_threads() < 2:
        pytest.skip("numpy's BLAS runs one thread here (the hang needs it to run several)")
    try:
        r = subprocess.run([sys.executable, "-c", textwrap.dedent(BLAS_BESIDE_NATIVE)],
                           capture_output=True, text=True, cwd=ROOT, env=_default_blas_env(),
                           timeout=120)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"the runs hung; they printed: {e.stdout!r}")
    assert r.returncode == 0, r.stdout + r.stderr
    assert [json.loads(line) for line in r.stdout.splitlines()] == \
        [[i, True, True] for i in range(20)]


# -- kernel test and profile (aiedsl.kernels.guarded.in_child) --------------------------------

@pytest.fixture
def calls_served(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The pid of each child the server forks for a kernel's guarded run."""
    pids: list[int] = []
    start = worker_client.start_call

    def counted(*args: Any) -> tuple[int, int]:
        pid, status = start(*args)
        pids.append(pid)
        return pid, status

    monkeypatch.setattr(worker_client, "start_call", counted)
    return pids


def _checked(path: Path, served: bool) -> tuple[list[str], tuple[str, ...]]:
    """What `aiedsl kernel test` and `kernel profile` say of the one kernel of ``path``: the
    test's lines and the profile's faults, their children forked by the server (``served``)
    or by this process."""
    from aiedsl.kernels.cases import design_cases
    from aiedsl.kernels.host_check import check_kernel
    from aiedsl.kernels.profile import profile_cases

    def run() -> tuple[list[str], tuple[str, ...]]:
        (case,) = design_cases(load_design(path))
        (prof,) = profile_cases([case], "npu1_1col")
        return check_kernel(case).lines, prof.faults

    if not served:
        return run()
    with another_thread():
        return run()


def _bad_copy(design_file: DesignFile, body: str) -> Path:
    path = design_file(WRONG)
    (path.parent / "bad_copy.cc").write_text(
        "#include <aie_api/aie.hpp>\n#include <stdlib.h>\n#include <stdint.h>\n"
        "void bad_copy(const int32_t *src, int32_t *dst) {\n  " + body + "\n}\n")
    return path


GUARDED_FAULTS = {**{bug: body for bug, (body, _) in OUT_OF_BOUNDS.items()},
                  "exits": "exit(3);"}


@pytest.mark.parametrize("bug", sorted(GUARDED_FAULTS))
def test_the_servers_child_reports_what_kernel_test_finds_as_a_forked_one(
        design_file: DesignFile, calls_served: list[int], bug: str) -> None:
    """Every FAIL line of kernel test and every fault of a profile, word for word, from either
    child (kernel test runs the C++ twice, then once more with other contents in its "out"
    buffer, the profile once: four children each; a result that depends on the guard bytes
    takes one more run per buffer, to name the one read around)."""
    path = _bad_copy(design_file, GUARDED_FAULTS[bug])
    forked = _checked(path, served=False)
    assert not calls_served
    if bug in OUT_OF_BOUNDS:
        assert OUT_OF_BOUNDS[bug][1] in forked[0]
    else:
        assert forked[0] == ["FAIL copy_i32_64: stopped with exit status 3"]
    assert _checked(path, served=True) == forked
    assert len(calls_served) == (2 if "crashes" in bug or "exits" in bug else
                                 6 if "reads" in bug else 4)


def test_the_servers_child_of_a_kernel_test_is_stopped_after_the_time_limit(
        design_file: DesignFile, monkeypatch: pytest.MonkeyPatch,
        calls_served: list[int]) -> None:
    from aiedsl.kernels.cases import design_cases
    from aiedsl.kernels.host_check import check_kernel

    monkeypatch.setenv("AIEDSL_KERNEL_TIMEOUT", "0.5")
    (case,) = design_cases(load_design(_faulty_design(design_file, NEVER_RETURNS)))
    forked = check_kernel(case).lines
    assert forked[0] == (
        "FAIL copy_i32_64: did not return within 0.5 s (its process was killed): a loop that "
        "never ends? check the kernel's loop bounds and steps (a step of 0, a counter that "
        "wraps before its bound); AIEDSL_KERNEL_TIMEOUT=SECONDS gives a slow kernel longer")
    with another_thread():
        assert check_kernel(case).lines == forked
    assert len(calls_served) == 1
    with pytest.raises(ProcessLookupError):  # killed, and reaped by the server
        os.kill(calls_served[0], 0)


def test_what_a_host_kernel_raises_comes_back_from_the_servers_child(
        calls_served: list[int]) -> None:
    """The exception the C++ call raised (a cascade kernel moving other words than it
    declares), raised again here, as from a forked child; a callable that holds no host
    build cannot go to the server."""
    from aiedsl.kernels import matmul_cascade
    from aiedsl.kernels.guarded import GuardedCall, in_child
    from aiedsl.kernels.host import native
    from aiedsl.kernels.text import kernel_text

    k = matmul_cascade(8, 8, 8, "put").ir
    wrong = k.model_copy(update={"cascade_out": k.cascade_out.model_copy(
        update={"shape": (16, 8)})})
    a = np.zeros((8, 8), np.uint16)
    call = GuardedCall(wrong, native(wrong, kernel_text(None, k)),
                       [a, a, np.zeros((16, 8), np.float32)], 0xA5)
    raised = []
    for served in (False, True):
        with pytest.raises(DesignError) as e:
            if served:
                with another_thread():
                    in_child(call, 10)
            else:
                in_child(call, 10)
        raised.append(str(e.value))
    assert raised[0] == raised[1]
    assert raised[0].split(": ", 1)[1].splitlines()[0] == (
        "error [kernel cascade]: kernel 'matmul_cascade_put_bf16_f32_8x8x8_4x8x4' moves other "
        "cascade words than it declares: its C++ put 4 words in a call, where "
        "cascade_out=16x8xf32 is 8")
    assert len(calls_served) == 1
    with another_thread(), pytest.raises(TypeError, match=r"cannot run in a child of the "
                                         r"kernel workers' server"):
        in_child(lambda: None, 10)
    with another_thread(), pytest.raises(TypeError, match=r"is not its host build"):
        in_child(GuardedCall(wrong, lambda *args, **kw: None, [], 0xA5), 10)


BLAS_BESIDE_KERNEL_TESTS = '''
    import faulthandler, json, threading
    import numpy as np
    from aiedsl.kernels.host_check import check_kernel
    from aiedsl.kernels.profile import profile_case
    from aiedsl.kernels.samples import library_cases
    from aiedsl.targets import get_target

    faulthandler.dump_traceback_later(100, exit=True)  # a hang shows where
    case = next(c for c in library_cases() if c.kernel.symbol == "passthrough_i32_1024")
    target = get_target("npu1_1col")
    check_kernel(case)  # built before the products start

    stop = threading.Event()

    def blas():  # products long enough to keep OpenBLAS's threads busy at each fork
        a = np.random.rand(1000, 1000)
        while not stop.is_set():
            a @ a

    products = threading.Thread(target=blas)
    products.start()
    for i in range(60):
        t = check_kernel(case)
        p = profile_case(case, target)
        print(json.dumps([i, t.passed, p.ran, list(p.faults)]), flush=True)
    # ended before the interpreter is: a daemon thread left inside a product at exit hung
    # OpenBLAS's own shutdown now and then (every run printed, then the process never ended)
    stop.set()
    products.join()
    '''


def test_kernel_tests_beside_a_threaded_matrix_product_finish() -> None:
    """A kernel test or profile from the Python API (or a design with cycles=None loaded)
    while another thread multiplies matrices forked this process through multiprocessing:
    OpenBLAS's pre-fork handler then hung it as it hung native simulations (here most runs of
    this script hung within its 180 forks). Every run now ends, and passes."""
    if _blas_threads() < 2:
        pytest.skip("numpy's BLAS runs one thread here (the hang needs it to run several)")
    try:
        r = subprocess.run([sys.executable, "-c", textwrap.dedent(BLAS_BESIDE_KERNEL_TESTS)],
                           capture_output=True, text=True, cwd=ROOT, env=_default_blas_env(),
                           timeout=120)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"the runs hung; they printed: {e.stdout!r}")
    assert r.returncode == 0, r.stdout + r.stderr
    assert [json.loads(line) for line in r.stdout.splitlines()] == \
        [[i, True, True, []] for i in range(60)]


def test_the_server_imports_no_aiedsl_or_numpy_of_the_current_directory(tmp_path: Path) -> None:
    """Python 3.10 has no -P: the server's sys.path began with the current directory, and an
    aiedsl/ or a numpy.py there was imported in place of the installed ones (a packager's
    tester: exit 70). Its program takes the directory out itself; run here without -P."""
    (tmp_path / "aiedsl").mkdir()
    (tmp_path / "aiedsl" / "__init__.py").write_text("raise SystemExit('the cwd aiedsl')\n")
    (tmp_path / "numpy.py").write_text("raise SystemExit('the cwd numpy')\n")
    program = worker_client._SERVER.split("from aiedsl")[0] + (
        "import numpy, aiedsl.kernels.worker_server as w; print(w.__file__)")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    r = subprocess.run([sys.executable, "-c", program], cwd=tmp_path, env=env,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert Path(r.stdout.strip()) == ROOT / "aiedsl" / "kernels" / "worker_server.py"
