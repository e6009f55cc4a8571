"""The bad-input corpus: one small design file per mistake, each reported where the user wrote it.

Every file in ``tests/bad_inputs/`` is a design with exactly one mistake (most are a shipped
design, e.g. ``designs/passthrough.py``, with one thing changed). Its first lines say what aiedsl
must report::

    # expect: <rule> <line>        the DesignError's rule and line (line 0: no line)
    # defines: NAME=VALUE ...      optional -D overrides, space-separated (\\n in a value: newline)
    # device: npu2                 optional --device override
    # run: sim                     optional: also simulate (mistakes only the simulator or the
                                   reference finds); the default is check
    # why: the mistake, and the mlir-aie / hardware rule it breaks when there is one

Each file is loaded with :func:`~aiedsl.loader.load_from_command_line`, checked with
:func:`~aiedsl.checks.check_design` (and simulated for ``run: sim``) from ``tests/bad_inputs/``, so
locations read ``<name>.py:<line>``. It runs in a forked child process with a time bound, so a
hang fails its own case only. Anything but a :class:`~aiedsl.errors.DesignError` of the expected
rule, at the expected line of the file itself, with a message, fails: another exception is a
crash and the failure shows its traceback. The simulator's :class:`~aiedsl.sim.Deadlock` (rule
``deadlock``, no line) is allowed for ``run: sim`` files only.

``KNOWN_CRASHES`` lists the files aiedsl gets wrong today: each keeps the expectation a user needs
and is an expected failure (strict: fixing aiedsl makes it pass, and then it must come off the
list). Kernel C++ the corpus needs is ``tests/bad_inputs/kernels_ok.cc``.
"""

from __future__ import annotations

import multiprocessing
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from aiedsl.checks import check_design
from aiedsl.errors import DesignError
from aiedsl.loader import load_from_command_line
from aiedsl.sim import simulate

CORPUS = Path(__file__).resolve().parent / "bad_inputs"
TIME_LIMIT = 10.0
"""Seconds one file may take (they take well under one)."""
MIN_FILES = 160
MIN_RULES = 40

KNOWN_CRASHES: dict[str, str] = {}


@dataclass(frozen=True)
class Expectation:
    """What a corpus file says aiedsl must report, and how to run it."""

    rule: str
    line: int
    defines: dict[str, str] = field(default_factory=dict)
    device: str | None = None
    run: str = "check"
    why: str = ""


def read_header(path: Path) -> Expectation:
    """The ``# key: value`` lines at the top of a corpus file."""
    keys: dict[str, str] = {}
    for text in path.read_text().splitlines():
        if not text.startswith("# "):
            break
        key, sep, value = text[2:].partition(": ")
        assert sep and key in ("expect", "defines", "device", "run", "why"), \
            f"{path.name}: header line {text!r}"
        assert key not in keys, f"{path.name}: two '{key}' lines"
        keys[key] = value.strip()
    assert "expect" in keys and keys.get("why"), f"{path.name}: needs '# expect:' and '# why:'"
    rule, _, line = keys["expect"].rpartition(" ")
    assert rule and line.isdigit(), \
        f"{path.name}: '# expect: <rule> <line>', got {keys['expect']!r}"
    defines = {}
    for word in keys.get("defines", "").split():
        name, sep, value = word.partition("=")
        assert sep, f"{path.name}: define {word!r} is not NAME=VALUE"
        defines[name] = value.replace("\\n", "\n").replace("\\t", "\t")
    run = keys.get("run", "check")
    assert run in ("check", "sim"), f"{path.name}: run: {run!r} (check or sim)"
    return Expectation(rule=rule, line=int(line), defines=defines,
                       device=keys.get("device") or None, run=run, why=keys["why"])


def _child(name: str, exp: Expectation, conn: Any) -> None:
    """Load, check (and simulate) one file; send back what happened (aiedsl is imported by the
    parent, so a forked child starts at once)."""
    try:
        try:
            # the header's defines are -D words: loaded as the command line loads them
            pairs = [f"{k}={v}" for k, v in exp.defines.items()]
            handle = load_from_command_line(name, pairs, exp.device)
            check_design(handle.ir)
            if exp.run == "sim":
                result = simulate(handle)
                conn.send({"kind": "accepted", "detail": f"simulated, passed={result.passed}"})
            else:
                conn.send({"kind": "accepted", "detail": "checked"})
        except DesignError as e:
            cause = e.__cause__  # a [python error]: the exception it wraps, with its traceback
            conn.send({"kind": "error", "type": type(e).__name__, "rule": e.rule,
                       "file": e.loc.file if e.loc else None,
                       "line": e.loc.line if e.loc else 0, "message": e.message,
                       "text": str(e) + ("" if cause is None else "\n\nwhich wraps:\n" + "".join(
                           traceback.format_exception(cause)))})
    except BaseException:  # noqa: BLE001 - a crash: report it whole
        conn.send({"kind": "crash", "traceback": traceback.format_exc()})
    finally:
        conn.close()


_FORK = multiprocessing.get_context("fork")


def outcome(name: str, exp: Expectation) -> dict[str, Any]:
    """What aiedsl does with corpus file ``name`` (run from the corpus folder), in a forked
    child killed after :data:`TIME_LIMIT` seconds."""
    receive, send = _FORK.Pipe(duplex=False)
    child = _FORK.Process(target=_child, args=(name, exp, send), daemon=True)
    child.start()
    send.close()
    try:
        if not receive.poll(TIME_LIMIT):
            return {"kind": "hang"}
        try:
            return receive.recv()
        except EOFError:
            return {"kind": "crash", "traceback": f"the child process died (exit code "
                                                  f"{child.exitcode}) without a result"}
    finally:
        child.kill()
        child.join()
        receive.close()


FILES = sorted(p.name for p in CORPUS.glob("*.py"))


def _param(name: str) -> Any:
    if name in KNOWN_CRASHES:
        return pytest.param(name, marks=pytest.mark.xfail(strict=True,
                                                          reason=KNOWN_CRASHES[name]))
    return name


@pytest.mark.parametrize("name", [_param(n) for n in FILES])
def test_bad_input_is_reported_at_its_line(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    exp = read_header(CORPUS / name)
    monkeypatch.chdir(CORPUS)
    got = outcome(name, exp)
    where = f"[{exp.rule}] at {name}:{exp.line}" if exp.line else f"[{exp.rule}] (no line)"
    if got["kind"] == "hang":
        pytest.fail(f"{name}: no answer within {TIME_LIMIT:g} s; expected {where}",
                    pytrace=False)
    if got["kind"] == "crash":
        pytest.fail(f"{name} crashed aiedsl (not a DesignError); expected {where}\n"
                    f"{got['traceback']}", pytrace=False)
    if got["kind"] == "accepted":
        pytest.fail(f"{name}: no error ({got['detail']}); expected {where}\n"
                    f"  why: {exp.why}", pytrace=False)
    if got["type"] == "Deadlock":
        assert exp.run == "sim", f"{name}: a Deadlock from a file that is only checked"
    expected = (exp.rule, name if exp.line else None, exp.line)
    assert (got["rule"], got["file"], got["line"]) == expected, (
        f"{name}: expected {where}, got:\n{got['text']}")
    assert got["message"].strip(), f"{name}: the error has no message"


def test_the_corpus_is_large_and_covers_the_rules() -> None:
    headers = {name: read_header(CORPUS / name) for name in FILES}
    rules = {h.rule for h in headers.values()}
    assert len(FILES) >= MIN_FILES, f"{len(FILES)} files"
    assert len(rules) >= MIN_RULES, f"{len(rules)} rules: {sorted(rules)}"
    assert not set(KNOWN_CRASHES) - set(FILES), "KNOWN_CRASHES names files not in the corpus"
    for name, h in headers.items():
        lines = len((CORPUS / name).read_text().splitlines())
        assert 1 <= h.line <= lines, f"{name}: line {h.line} of a {lines}-line file"
        assert h.rule != "deadlock" or h.run == "sim", f"{name}: only the simulator deadlocks"
    assert (CORPUS / "kernels_ok.cc").is_file()
