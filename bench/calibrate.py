"""The simulator's timing model against real npu1 measurements, and the shipped GEMMs against
Taka et al.'s published figures: one table.

    python bench/calibrate.py            # the table: ten calibration rows, four Taka rows
    python bench/calibrate.py --fit      # also redo the least-squares fit and print the values
    python bench/calibrate.py --no-taka  # the calibration rows only (seconds, not minutes)

Calibration rows: ten IRON designs measured on an npu1 (Phoenix) laptop, re-expressed in aiedsl
in ``bench/calibration/`` (same sizes and dataflow as the MLIR that ran). The figures are the
average of 100 timed ``run.start(); run.wait()`` of one invocation, once per IRON front end
("iron" / "iron_ext"): public repository ``hunhoffe/mlir-aie``, branch ``example-analysis``,
commit ``4f2eccc4``, ``programming_examples/analysis/2025-01-09_21-47-11/{iron,iron_ext}_result``
(``../shared/reference/npu1-measured.md`` collects them; this script holds them, so it runs
without that folder). "measured" is the mean of the two; a row passes within 15% of it.

Fitted constants (``--fit``): ``invocation_s``, ``shim_task_s`` and ``shim_burst_cycles`` of
npu1's :class:`~aiedsl.targets.TimingModel`, by weighted least squares of the relative residuals
(MVAdd at half weight: its two figures differ by 26%), the model linearised around the current
constants and refitted twice. Every other constant is physical and taken from its source (see
``aiedsl/targets/devices.py``); kernel cycles come from each kernel's source (each design's
docstring). The Taka rows are checks, never fitted to.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from aiedsl.loader import load_design
from aiedsl.sim import simulate
from aiedsl.sim.summary import Timing
from aiedsl.targets import DEVICES, TimingModel, get_target

HERE = Path(__file__).resolve().parent
CALIB = HERE / "calibration"
ROOT = HERE.parent
TOLERANCE = 0.15
"""A row passes when modelled / measured is within 1 +- this."""


@dataclass(frozen=True)
class Row:
    """One measured design: its aiedsl re-expression and what it determines."""

    name: str
    file: str
    """Design file in ``bench/calibration/``."""
    figures: tuple[float, float]
    """Average us per invocation, IRON / IRON-ext front end."""
    determines: tuple[str, ...]
    """The TimingModel constants this row determines (or checks, in brackets)."""
    bytes_in: int
    """Bytes the runtime sequence that ran moves host -> NPU (npu1-measured.md)."""
    bytes_out: int
    """Bytes it moves NPU -> host."""
    weight: float = 1.0
    """Weight in the fit."""

    @property
    def measured_us(self) -> float:
        """Mean of the two figures."""
        return sum(self.figures) / len(self.figures)


SMALL = ("invocation_s",)
STREAM = ("(shim_burst_cycles)", "(dma_bytes_per_cycle)")
ROWS: list[Row] = [
    Row("Copy(DMA)", "copy_dma.py", (133.99, 128.81), SMALL, 16_384, 16_384),
    Row("Copy(Kern)", "copy_kern.py", (118.39, 117.15), SMALL, 4_096, 4_096),
    Row("VSOp(Mul)", "vsop_mul.py", (114.54, 116.77), SMALL, 8_196, 8_192),
    Row("VVOp(Mul)", "vvop_mul.py", (120.18, 119.95), SMALL, 2_048, 1_024),
    Row("VReduce(Max)", "vreduce_max.py", (118.24, 112.78), SMALL, 4_096, 4),
    Row("VReLU", "vrelu.py", (176.69, 171.48), STREAM, 131_072, 131_072),
    Row("VVOp(AddKern)", "vvop_addkern.py", (179.44, 171.35), STREAM, 262_144, 131_072),
    Row("ColorThreshold", "color_threshold.py", (672.07, 677.56),
        ("shim_burst_cycles", "dma_bytes_per_cycle[shim]"), 2_073_600, 2_073_600),
    Row("MVAdd", "mvadd.py", (2375.98, 2998.89), ("shim_burst_cycles",), 7_087_104, 7_077_888,
        weight=0.5),
    Row("GEMM i16 512^3", "gemm_i16.py", (413.04, 422.93), ("shim_task_s",), 2_097_152,
        524_288),
]
"""The ten rows of npu1-measured.md, in its order."""

FITTED = ("invocation_s", "shim_task_s", "shim_burst_cycles")
"""The constants ``--fit`` solves for; the rest are physical figures from their sources."""
STEP = {"invocation_s": 1e-6, "shim_task_s": 1e-6, "shim_burst_cycles": 4.0}
"""Finite-difference steps of the linearisation."""


@dataclass(frozen=True)
class TakaRow:
    """One published GEMM figure and the shipped design and settings that should reach it."""

    name: str
    design: str
    device: str
    defines: dict[str, object]
    published: float
    """TFLOPS (bf16) or TOPS (int8), Taka et al. arXiv 2512.13282."""
    unit: str = field(default="TFLOPS")


TAKA: list[TakaRow] = [  # Taka et al.'s tiles at the sizes nearest 4096^3 that they divide
    TakaRow("Taka npu1 bf16", "designs/gemm_bf16.py", "npu1",
            {"M": 4224, "K": 4032, "N": 4224, "m": 96, "k": 56, "n": 96, "OUT": "bf16",
             "K_MT": 448}, 3.14),
    TakaRow("Taka npu2 bf16", "designs/gemm_bf16.py", "npu2",
            {"COLS": 8, "M": 4032, "K": 4032, "N": 4608, "m": 112, "k": 48, "n": 96,
             "OUT": "bf16", "K_MT": 336}, 14.71),
    TakaRow("Taka npu1 int8", "designs/gemm_i8.py", "npu1",
            {"M": 4032, "K": 4032, "N": 4032, "m": 112, "k": 112, "n": 112, "K_MT": 672,
             "SHIFT": 9}, 6.76, "TOPS"),
    TakaRow("Taka npu2 int8", "designs/gemm_i8.py", "npu2",
            {"COLS": 8, "M": 4032, "K": 4032, "N": 4608, "m": 144, "k": 72, "n": 144,
             "K_MT": 576, "SHIFT": 9}, 38.05, "TOPS"),
]


@contextlib.contextmanager
def timing_of(family: str, timing: TimingModel) -> Iterator[None]:
    """Every device of ``family`` uses ``timing`` inside the block (the device table is patched
    and restored)."""
    saved = {name: t for name, t in DEVICES.items() if t.family == family}
    try:
        for name, t in saved.items():
            DEVICES[name] = t.model_copy(update={"timing": timing})
        yield
    finally:
        DEVICES.update(saved)


_HANDLES: dict[str, object] = {}


def run_row(row: Row, timing: TimingModel | None = None, compute: bool = False) -> Timing:
    """Simulate one calibration row (with ``timing`` for npu1 when given)."""
    handle = _HANDLES.get(row.file)
    if handle is None:
        handle = _HANDLES[row.file] = load_design(CALIB / row.file)
    ctx = timing_of("npu1", timing) if timing is not None else contextlib.nullcontext()
    with ctx:
        return simulate(handle, compute=compute).timing  # type: ignore[arg-type]


def fit(base: TimingModel, rounds: int = 3, log: bool = True) -> TimingModel:
    """Weighted least squares of (modelled / measured - 1) over :data:`ROWS` for
    :data:`FITTED`, the model linearised around the current values each round."""
    current = base
    for _ in range(rounds):
        values = np.array([getattr(current, c) for c in FITTED], dtype=float)
        device = np.array([run_row(r, current).device_seconds for r in ROWS])
        cols = []
        for c in FITTED:
            if c == "invocation_s":  # exactly additive: d(total)/d(invocation) = 1
                cols.append(np.ones(len(ROWS)))
                continue
            moved = current.model_copy(update={c: getattr(current, c) + STEP[c]})
            cols.append((np.array([run_row(r, moved).device_seconds for r in ROWS]) - device)
                        / STEP[c])
        jac = np.stack(cols, axis=1)  # d(total seconds)/d(constant)
        meas = np.array([r.measured_us * 1e-6 for r in ROWS])
        w = np.sqrt(np.array([r.weight for r in ROWS]))
        # total = invocation + device(values) + jac @ (x - values) ; residual = total/meas - 1
        rhs = (meas - (device + current.invocation_s) + jac @ values) / meas
        x, *_ = np.linalg.lstsq((jac / meas[:, None]) * w[:, None], rhs * w, rcond=None)
        current = current.model_copy(update={c: float(v) for c, v in zip(FITTED, x)})
        if log:
            print("  fit round: " + ", ".join(f"{c} = {_fmt(c, getattr(current, c))}"
                                             for c in FITTED), flush=True)
    return current


def _fmt(name: str, value: float | str) -> str:
    """A timing constant as the table shows it: ``*_bytes_per_s`` in GB/s, other ``*_s`` in
    the unit that reads best (the fitted costs in us; the driver's 10 s timeout was
    ``10000000.00 us``), any other a plain number."""
    if isinstance(value, str):  # a name (measured_on: the device the constants were fitted on)
        return value
    if name.endswith("bytes_per_s"):
        return f"{value / 1e9:g} GB/s"
    if name.endswith("_s"):
        if value >= 1:
            return f"{value:g} s"
        if value >= 1e-3:
            return f"{value * 1e3:.2f} ms"
        return f"{value * 1e6:.2f} us"
    return f"{value:g}"


def calibration_table(timing: TimingModel | None = None) -> list[tuple[Row, Timing]]:
    """Simulate every row (numpy checks on) and print the calibration part of the table."""
    print(f"{'row':<16} {'measured us (iron / ext)':>26} {'modelled':>9} {'device':>8} "
          f"{'ratio':>6}  {'15%':<4} determines")
    out = []
    for row in ROWS:
        t = run_row(row, timing, compute=True)
        ratio = t.seconds * 1e6 / row.measured_us
        ok = "ok" if abs(ratio - 1) <= TOLERANCE else "MISS"
        figures = f"{row.measured_us:.2f} ({row.figures[0]:.2f} / {row.figures[1]:.2f})"
        print(f"{row.name:<16} {figures:>26} {t.seconds * 1e6:>9.2f} "
              f"{t.device_seconds * 1e6:>8.2f} {ratio:>6.3f}  {ok:<4} "
              f"{', '.join(row.determines)}", flush=True)
        out.append((row, t))
    return out


def taka_table() -> None:
    """Simulate the four Taka settings (compute=False: timing only) and print their rows."""
    print(f"\n{'published GEMM':<16} {'sizes (M K N / m k n / K_MT)':<34} {'modelled':>9} "
          f"{'published':>9} {'ratio':>6}  {'reached':<7} unit")
    for row in TAKA:
        d = row.defines
        start = time.perf_counter()
        handle = load_design(ROOT / row.design, {k: str(v) for k, v in d.items()}, row.device)
        t = simulate(handle, compute=False).timing
        got = t.gops / 1e3
        sizes = (f"{d['M']} {d['K']} {d['N']} / {d['m']} {d['k']} {d['n']} / {d['K_MT']}"
                 f" ({row.device})")
        reached = "yes" if got >= row.published else "NO"
        clock = get_target(row.device).clock_hz / 1e9
        print(f"{row.name:<16} {sizes:<34} {got:>9.2f} {row.published:>9.2f} "
              f"{got / row.published:>6.3f}  {reached:<7} {row.unit} at {clock:g} GHz, "
              f"{t.device_seconds * 1e3:.2f} ms on the device [simulated in "
              f"{time.perf_counter() - start:.0f} s]", flush=True)
        print(f"{'':<16} bottleneck: {t.bottleneck.sentence()}")
        print(f"{'':<16} {limits(t, row, get_target(row.device).timing)}", flush=True)


def limits(t: Timing, row: TakaRow, tm: TimingModel) -> str:
    """What bounds a Taka row: the DRAM reads at the model's bandwidth, the kernels on the
    busiest core, and the read bandwidth the published figure needs."""
    reads = t.dram_read_bytes
    dram_bound = t.ops / (reads / tm.dram_read_bytes_per_s + t.invocation_s) / 1e12
    core_s = max(t.core_busy.values()) * t.device_seconds
    compute_bound = t.ops / (core_s + t.invocation_s) / 1e12
    need = reads / (t.ops / (row.published * 1e12) - t.invocation_s)
    short = "" if t.gops / 1e3 >= row.published else (
        f"{1 - t.gops / 1e3 / row.published:.1%} short of it; ")
    return (f"{short}bounds: DRAM reads {reads / 1e6:.0f} MB at "
            f"{tm.dram_read_bytes_per_s / 1e9:g} GB/s -> <= {dram_bound:.2f}; the kernels on the "
            f"busiest core ({core_s * 1e3:.2f} ms) -> <= {compute_bound:.2f}; the published "
            f"figure needs >= {need / 1e9:.1f} GB/s of reads")


PROVENANCE = {
    "shim_burst_bytes": "from its source (mlir-aie's burst encodings)",
    "dram_read_bytes_per_s": "from its source (Taka et al.)",
    "dram_write_bytes_per_s": "assumed equal to the reads'",
    "dma_bytes_per_cycle": "from its source (AM020)",
    "lock_acquire_cycles": "estimated (instruction sequence)",
    "lock_release_cycles": "estimated (instruction sequence)",
    "kernel_call_cycles": "estimated (branch delay slots)",
    "measured_on": "the rows' device",
    "driver_timeout_s": "from its source (xdna-driver)",
}
"""How each constant that is not fitted was come by, as its docstring in
``aiedsl/targets/timing.py`` says: a figure from a source, an estimate, or an assumption."""


def constants_table(timing: TimingModel) -> None:
    """The npu1 constants with their values and the rows behind each."""
    print("\nnpu1 timing constants (aiedsl/targets/devices.py NPU1_TIMING):")
    rows_of: dict[str, list[str]] = {}
    for row in ROWS:
        for c in row.determines:
            rows_of.setdefault(c.strip("()").split("[")[0], []).append(
                row.name + (" (check)" if c.startswith("(") else ""))
    for name in TimingModel.model_fields:
        value = getattr(timing, name)
        shown = (", ".join(f"{k} {v}" for k, v in value.items()) if isinstance(value, dict)
                 else _fmt(name, value))
        how = ("the fit's spread" if name == "invocation_spread_s" else
               "fitted" if name in FITTED else PROVENANCE.get(name, "from its source"))
        behind = ", ".join(rows_of.get("invocation_s" if name == "invocation_spread_s"
                                       else name, [])) or "no row resolves it"
        print(f"  {name:<24} {shown:<28} {how}; rows: {behind}")


def main(argv: list[str] | None = None) -> int:
    """Print the table; ``--fit`` first redoes the fit."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--fit", action="store_true", help="redo the least-squares fit first")
    ap.add_argument("--no-taka", action="store_true", help="leave out the Taka rows")
    args = ap.parse_args(argv)
    timing = get_target("npu1").timing
    if args.fit:
        print("fitting " + ", ".join(FITTED) + " to the ten rows:")
        timing = fit(timing)
        print("fitted: " + ", ".join(f"{c} = {_fmt(c, getattr(timing, c))}" for c in FITTED)
              + "  (devices.py holds these, rounded)\n")
    rows = calibration_table(timing if args.fit else None)
    res = np.array([t.seconds * 1e6 / r.measured_us - 1 for r, t in rows])
    print(f"residuals: rms {np.sqrt(np.mean(res ** 2)):.1%}, worst {np.max(np.abs(res)):.1%}; "
          f"{int(np.sum(np.abs(res) <= TOLERANCE))}/{len(rows)} rows within 15%")
    if not args.no_taka:
        taka_table()
    constants_table(timing)
    return 0 if np.all(np.abs(res) <= TOLERANCE) else 1


if __name__ == "__main__":
    sys.exit(main())
