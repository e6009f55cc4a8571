"""A generator of random aiedsl designs, valid and broken, with their expected outputs computed
independently in numpy (never by aiedsl's kernel references).

Used by ``tests/test_fuzz.py`` (a CI-sized run) and ``bench/fuzz.py`` (a long run). One seed
gives one design: a dataflow shape (a direct shim-core fifo, forwards through a memtile or a core
tile with regrouping or blocked layouts, split/join, broadcast, channels, memtile outputs
repeated (``repeat=``), 2-D tiled host
patterns), a device, an element type, an elementwise kernel (or a threshold whose level each
core reads from a runtime parameter), buffer depths, and circuit or packet streams; a third of
the seeds also carry one mistake. The
property checked by :func:`run_one`: aiedsl raises nothing but a DesignError, never hangs, and
every design its checks accept simulates to exactly the expected numbers.
"""

from __future__ import annotations

import random
import textwrap
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

OPS = {"passthrough": ("bf16", "f32", "i8", "u8", "i16", "i32"),
       "relu": ("bf16", "i8", "i16", "i32"), "add": ("i16", "i32"), "mul": ("i16", "i32")}
ITEMSIZE = {"bf16": 2, "f32": 4, "i8": 1, "u8": 1, "i16": 2, "i32": 4}
DEVICES = ("npu1_1col", "npu1_2col", "npu1", "npu2_1col", "npu2_4col", "npu2")
SHAPES = ("direct", "forward", "regroup", "layout", "split", "join_only", "broadcast",
          "channel", "channel_bcast", "tiled", "pipeline", "gemm")
MISTAKES = ("depth", "name", "dtype", "loop", "kernel_size", "anchor", "fill_size", "stack",
            "consumer_depth", "offsets", "text", "dims")
GEMM = Path(__file__).resolve().parents[1] / "designs" / "gemm_bf16.py"


@dataclass
class Spec:
    """One generated design."""

    seed: int
    device: str
    dtype: str
    op: str
    shape: str
    parts: int
    """Cores (split/broadcast/channel) or 1."""
    tile: int
    """Elements of a core's fifo element."""
    iters: int
    """Elements each core takes per run."""
    depth: int
    regroup: int = 1
    block: tuple[int, int, int, int] = (0, 0, 0, 0)
    """(rows, cols, block rows, block cols) of the blocked layout."""
    tiled: tuple[int, int, int, int, str] = (0, 0, 0, 0, "row")
    """(host rows, host cols, tile rows, tile cols, order) of a 2-D tiled host pattern."""
    vertical: bool = False
    """The herd is a column (rows=parts) rather than a row."""
    mistake: str | None = None
    mistake_value: object = None
    notes: list[str] = field(default_factory=list)
    gemm: dict[str, int] = field(default_factory=dict)
    """``-D`` settings of designs/gemm_bf16.py (shape "gemm")."""
    level: int | None = None
    """For op "threshold": the level the runtime writes into each core's rtp (0..255: the
    kernel takes it as uint8, and check refuses a level that would wrap)."""
    via_core: bool = False
    """The forwards go through core tiles' memory rather than memtiles (forward shapes)."""
    packet: bool = False
    """The design routes its fifos as packet streams (``flows="packet"``)."""
    repeat: int = 1
    """The memtile (or core tile) sends each of its buffers this many times (``repeat=`` on the
    forwards, splits or channels carrying the inputs): each core takes that many times more."""
    batches: int = 1
    """Shape "direct": the runtime moves the data in this many batches of fills and a drain."""
    waits: str = "sync"
    """How the batches wait: "sync" after each, "every_other" after every second, "wait_z"
    (rt.wait on the output after each), "fill_wait" (every second batch's fills wait=True,
    then a sync)."""

    @property
    def inputs(self) -> int:
        return 2 if self.op in ("add", "mul") else 1


def make_spec(seed: int) -> Spec:
    """The design of ``seed`` (deterministic)."""
    r = random.Random(seed)
    op = r.choice(list(OPS))
    dtype = r.choice(OPS[op])
    lanes = 64 // ITEMSIZE[dtype]
    shape = r.choice(SHAPES)
    device = r.choice(DEVICES)
    cols = {"npu1_1col": 1, "npu1_2col": 2, "npu1": 4, "npu2_1col": 1, "npu2_4col": 4,
            "npu2": 8}[device]
    parts = 1
    vertical = r.random() < 0.5
    if shape in ("split", "broadcast", "channel", "channel_bcast", "join_only", "pipeline"):
        parts = 2 if shape == "pipeline" else r.randint(2, 4)
        if not vertical and parts > cols:
            vertical = True
    tile = lanes * r.choice((1, 2, 4, 8))
    spec = Spec(seed, device, dtype, op, shape, parts, tile, r.randint(1, 4), r.randint(1, 3),
                vertical=vertical)
    if shape == "regroup":
        spec.regroup = r.choice((2, 4))
        spec.iters = spec.regroup * r.randint(1, 2)
    if shape == "layout":
        rows = r.choice((4, 8, 16))
        spec.tile = rows * lanes
        br = r.choice([b for b in (1, 2, 4) if rows % b == 0])
        bc = r.choice([b for b in (lanes // 2, lanes) if b * ITEMSIZE[dtype] % 4 == 0])
        spec.block = (rows, lanes, br, bc)
    if shape == "tiled":
        tr, tc = r.choice((2, 4, 8)), lanes * r.choice((1, 2))
        th, tw = r.randint(1, 3), r.randint(1, 3)
        spec.tile = tr * tc
        spec.iters = th * tw
        spec.tiled = (tr * th, tc * tw, tr, tc, r.choice(("row", "col")))
    # drawn from a second generator, so every seed's other choices stay what they were
    extra = random.Random(f"extra-{seed}")
    spec.via_core = shape in ("forward", "regroup", "layout") and extra.random() < 0.3
    # packet streams only where mlir-aie's packet lowering supports them: no memtile link
    # (check refuses the others, error [packet flows]); the draw is made as before, so every
    # seed's later draws stay what they were
    spec.packet = shape != "gemm" and extra.random() < 0.15 and (
        shape in ("direct", "tiled", "pipeline")
        or (spec.via_core and shape in ("forward", "regroup", "layout")))
    if shape == "direct" and spec.iters > 1 and extra.random() < 0.5:
        spec.batches = extra.choice([b for b in (2, 3, 4) if spec.iters % b == 0])
        spec.waits = extra.choice(("sync", "every_other", "wait_z", "fill_wait"))
    if op == "passthrough" and dtype == "u8" and shape != "pipeline" and extra.random() < 0.5:
        spec.op, spec.level = "threshold", extra.randint(0, 255)  # a runtime parameter
    again = random.Random(f"repeat-{seed}")  # a third generator: the others' draws stay
    if shape in ("forward", "regroup", "layout", "split", "channel") and again.random() < 0.25:
        spec.repeat = again.choice((2, 3))
    if shape == "gemm":
        spec.op, spec.dtype = "matmul", "bf16"
        m, k, n = r.choice((32, 64)), r.choice((32, 64)), r.choice((32, 64))
        rows, cols_ = r.randint(1, 4), r.randint(1, min(4, cols))
        spec.gemm = {"m": m, "k": k, "n": n, "ROWS": rows, "COLS": cols_,
                     "M": m * rows * r.randint(1, 2), "K": k * r.randint(1, 4),
                     "N": n * cols_ * r.randint(1, 2)}
        if r.random() < 1 / 3:  # a setting that may not divide or fit
            key = r.choice(list(spec.gemm))
            spec.gemm[key] = r.choice((0, 1, 3, 48, 96, 100, 128, 4096, -64))
        return spec
    if r.random() < 1 / 3:
        spec.mistake = r.choice(MISTAKES)
        spec.mistake_value = r.choice({
            "depth": (0, -1, 64, 10 ** 9, 2.5, "2", None, True),
            "name": ("a b", "données", "1x", "", "x" * 300, "a-b", "$(id)", 7),
            "dtype": ('"float64"', '"int4"', "None", "3"),
            "loop": (-1, 1, 0, 2.0),
            "kernel_size": (2, 3),
            "anchor": ((0, 0), (0, 2), (9, 2), (-1, 2), "'0,2'", (0, 2, 1), (1, 7)),
            "fill_size": (-1, 1, 7),
            "stack": (-16, 0, 65536, 10 ** 9, 512, 1.5),
            "consumer_depth": (0, 1, 3, 99, "'x'"),
            "offsets": ("[1, 0]", "[0, 0]", "None", "[-5]"),
            "text": ('"a\\nb"', '"x" * 600', '"ok"'),
            "dims": ("[(0, 1)]", "[(2, 0), (5000, 1)]", "[(4, 8), (8, 2)]", "[(3, -1)]",
                     "[(2, 1, 1)]", "[(10**9, 1)]", "'rows'"),
        }[spec.mistake])
    return spec


# -- rendering ------------------------------------------------------------------------------------

HEAD = '''\
import numpy as np
from aiedsl import Tensor, {dtype}, channel, coretile, design, fifo, herd, join, loop, memtile
from aiedsl import i32, rtp, runtime, tiles
from aiedsl.kernels import {op} as kernel, block_dims, unblock_dims
'''


def render(spec: Spec) -> str:
    """The design file of ``spec``."""
    s = spec
    if s.shape == "gemm":
        return GEMM.read_text()
    dt = s.dtype
    shared = s.shape in ("broadcast", "channel_bcast", "pipeline")  # one input for all cores
    total = s.tile * s.iters * (1 if shared else s.parts)
    depth = _mistaken(s, "depth", s.depth)
    ktile = s.tile * (s.mistake_value if s.mistake == "kernel_size" and isinstance(
        s.mistake_value, int) else 1)
    elem = f"Tensor[{s.block[0]}, {s.block[1]}, {dt}]" if s.shape == "layout" else \
        f"Tensor[{s.tile}, {dt}]"
    kelem = elem if ktile == s.tile else f"Tensor[{ktile}, {dt}]"
    host_dt = _mistaken(s, "dtype", dt)
    names = [f"X{i}" for i in range(s.inputs)]
    if s.shape == "tiled":
        H, W = s.tiled[0], s.tiled[1]
        hosts = [f"{n}: Tensor[{H}, {W}, {host_dt}]" for n in names] + [f"Z: Tensor[{H}, {W}, {dt}]"]
    else:
        out_total = total * s.repeat * (
            s.parts if s.shape in ("broadcast", "channel_bcast") else 1)
        hosts = [f"{n}: Tensor[{total}, {host_dt}]" for n in names] + \
            [f"Z: Tensor[{out_total}, {dt}]"]
    name = _mistaken(s, "name", "fz")
    anchor = _mistaken(s, "anchor", None)
    stack = _mistaken(s, "stack", None)
    herd_args = [f"cols={s.parts}, rows=1" if not s.vertical else f"cols=1, rows={s.parts}"]
    if anchor is not None:
        herd_args.append(f"anchor={anchor}")
    if stack is not None:
        herd_args.append(f"stack={stack}")
    cost = _mistaken(s, "text", None)
    lines = [HEAD.format(dtype=dt, op=s.op), "",
             f"@design(device={s.device!r}, name={name!r}"
             + (', flows="packet")' if s.packet else ")"),
             f"def fz({', '.join(hosts)}):",
             f"    k = kernel({ktile if s.op == 'threshold' else kelem})"]
    body, cores, rt = _dataflow(s, elem, depth, total)
    if s.op == "threshold":  # one rtp per core, written before any transfer
        body.append("thr = [rtp(Tensor[16, i32], name='thr{}'.format(i)) "
                    f"for i in range({s.parts})]")
        cores[-1] = cores[-1].replace(", o)", f", o, thr[i][0], {ktile})")
        rt[:0] = [f"rt.rtp_write(thr[{i}], 0, {s.level})" for i in range(s.parts)]
    lines += ["    " + x for x in body]
    loop_n: object = s.iters * s.repeat
    if s.mistake == "loop":
        v = s.mistake_value
        loop_n = s.iters * s.repeat + v if isinstance(v, int) else v
    lines += [f"    @herd({', '.join(herd_args)})",
              "    def core(x, y):",
              "        i = y if " + repr(s.vertical) + " else x",
              f"        for _ in loop({loop_n}):"]
    lines += ["            " + x for x in cores]
    lines += ["    with runtime() as rt:"] + ["        " + x for x in rt]
    if cost is not None:
        lines += [f"    _ = __import__('aiedsl.kernels', fromlist=['x']).declare("
                  f"'c_{s.dtype}', source='copy.cc', entry='copy', args=[], "
                  f"reference=lambda: None, cycles=1, cost={cost})"]
    ref_args = ", ".join(names)
    lines += ["", "", "@fz.reference", f"def reference({ref_args}):",
              "    return np.zeros(1)  # not used: the fuzzer compares with its own numpy", ""]
    return "\n".join(lines)


def _mistaken(s: Spec, kind: str, value: object) -> object:
    return s.mistake_value if s.mistake == kind else value


def _batches(s: Spec, ins: list[str], chunk: int) -> list[str]:
    """The runtime sequence of a batched "direct" design: per batch a fill of each input and a
    drain of the output, waited for as ``s.waits`` says (what decides which shim BDs and queue
    places each wait frees, checked again by the simulator on its clocks)."""
    rt: list[str] = []
    for b in range(s.batches):
        held = ", wait=True" if s.waits == "fill_wait" and b % 2 else ""
        for j, a in enumerate(ins):
            rt.append(f"rt.fill({a}, X{j}, ({b * chunk}, [{chunk}], [1]){held})")
        rt.append(f"rt.drain(z, Z, ({b * chunk}, [{chunk}], [1]))")
        if s.waits == "wait_z":
            rt.append("rt.wait(z)")
        elif s.waits != "every_other" or b % 2:
            rt.append("rt.sync()")
    return rt


def _dataflow(s: Spec, elem: str, depth: object, total: int) -> tuple[list[str], list[str],
                                                                       list[str]]:
    """(declarations, the core loop's body, the runtime sequence) of ``s``'s shape."""
    dt, n_in = s.dtype, s.inputs
    ins = [f"a{j}" for j in range(n_in)]
    body: list[str] = []
    rt: list[str] = []
    with_ = ", ".join(f"{a}{'[i]' if s.parts > 1 else ''}.consume() as v{j}"
                      for j, a in enumerate(ins))
    out_use = "z[i]" if s.parts > 1 else "z"
    core = [f"with {with_}, {out_use}.produce() as o:",
            "    k(" + ", ".join(f"v{j}" for j in range(n_in)) + ", o)"]
    flat = f"Tensor[{s.tile}, {dt}]"
    fill_n = s.tile * s.iters
    if s.mistake == "fill_size" and isinstance(s.mistake_value, int):
        fill_n += s.mistake_value
    cd = f", consumer_depth={s.mistake_value}" if s.mistake == "consumer_depth" else ""
    if s.mistake == "dims":  # always a broken layout, on the core's side
        cd += f", dims_from_stream={s.mistake_value}"
    rep = f", repeat={s.repeat}" if s.repeat > 1 else ""
    if s.shape in ("direct", "tiled"):
        for j, a in enumerate(ins):
            body.append(f"{a} = fifo({elem}, depth={depth!r}, name='{a}'{cd})")
        body.append(f"z = fifo({elem}, depth={depth!r}, name='z')")
        if s.shape == "tiled":
            _, _, tr, tc, order = s.tiled
            for j, a in enumerate(ins):
                rt.append(f"rt.fill({a}, X{j}, tiles(X{j}, ({tr}, {tc}), order={order!r}))")
            rt.append(f"rt.drain(z, Z, tiles(Z, ({tr}, {tc}), order={order!r}))")
        elif s.batches > 1 and s.mistake != "fill_size":
            rt += _batches(s, ins, fill_n // s.batches)
        else:
            for j, a in enumerate(ins):
                rt.append(f"rt.fill({a}, X{j}, (0, [{fill_n}], [1]))")
            rt.append("rt.drain(z, Z)")
    elif s.shape in ("forward", "regroup", "layout"):
        big = f"Tensor[{s.tile * s.regroup}, {dt}]"
        down = up = ""
        if s.shape == "layout":
            rows, cols, br, bc = s.block
            down = f", dims_to_stream=block_dims({rows}, {cols}, {br}, {bc})"
            up = f", dims_to_stream=unblock_dims({rows}, {cols}, {br}, {bc})"
        via = ", via=coretile" if s.via_core else ""
        for j, a in enumerate(ins):
            body.append(f"{a}_l3 = fifo({big}, depth={depth!r}, name='{a}_l3')")
            body.append(f"{a} = {a}_l3.forward({elem}, name='{a}'{down}{cd}{via}{rep})")
        body.append(f"z = fifo({elem}, depth={depth!r}, name='z')")
        body.append(f"z_l3 = z.forward({big}, name='z_l3'{up}{via})")
        for j, a in enumerate(ins):
            rt.append(f"rt.fill({a}_l3, X{j}, (0, [{fill_n}], [1]))")
        rt.append("rt.drain(z_l3, Z)")
    elif s.shape in ("split", "join_only"):
        whole = f"Tensor[{s.tile * s.parts}, {dt}]"
        offs = _mistaken(s, "offsets", None)
        for j, a in enumerate(ins):
            if s.shape == "split":
                body.append(f"{a}_l3 = fifo({whole}, depth={depth!r}, name='{a}_l3')")
                body.append(f"{a} = {a}_l3.split({s.parts}, offsets={offs}, names=["
                            + ", ".join(f"'{a}_{i}'" for i in range(s.parts)) + f"]{cd}{rep})")
                rt.append(f"rt.fill({a}_l3, X{j}, (0, [{fill_n * s.parts}], [1]))")
            else:  # each core reads its own contiguous part straight from the host
                body.append(f"{a} = [fifo({flat}, depth={depth!r}, name='{a}_{{}}'.format(i)) "
                            f"for i in range({s.parts})]")
                rt += [f"rt.fill({a}[{i}], X{j}, ({i * fill_n}, [{fill_n}], [1]))"
                       for i in range(s.parts)]
        body.append(f"z = [fifo({flat}, depth={depth!r}, name='z_{{}}'.format(i)) "
                    f"for i in range({s.parts})]")
        if s.shape == "split":
            body.append(f"zj = join(z, name='zj', offsets={offs})")
            rt.append("rt.drain(zj, Z)")
        else:
            rt += [f"rt.drain(z[{i}], Z, ({i * fill_n}, [{fill_n}], [1]))"
                   for i in range(s.parts)]
    elif s.shape == "broadcast":
        for j, a in enumerate(ins):
            body.append(f"{a}_src = fifo({flat}, depth={depth!r}, name='{a}'{cd})")
            body.append(f"{a} = [{a}_src] * {s.parts}")
            rt.append(f"rt.fill({a}_src, X{j}, (0, [{fill_n}], [1]))")
        body.append(f"z = [fifo({flat}, depth={depth!r}, name='z_{{}}'.format(i)) "
                    f"for i in range({s.parts})]")
        body.append("zj = join(z, name='zj')")
        rt.append("rt.drain(zj, Z)")
    elif s.shape == "pipeline":  # core 0 computes, core 1 copies on: a core-to-core fifo
        for j, a in enumerate(ins):
            body.append(f"{a} = fifo({flat}, depth={depth!r}, name='{a}'{cd})")
            rt.append(f"rt.fill({a}, X{j}, (0, [{fill_n}], [1]))")
        body += [f"mid = fifo({flat}, depth={depth!r}, name='mid')",
                 f"z = fifo({flat}, depth={depth!r}, name='z')",
                 f"copy = __import__('aiedsl.kernels', fromlist=['x']).passthrough({flat})"]
        rt.append("rt.drain(z, Z)")
        core[:] = ["if i == 0:",
                   f"    with {', '.join(f'{a}.consume() as v{j}' for j, a in enumerate(ins))}"
                   ", mid.produce() as o:",
                   "        k(" + ", ".join(f"v{j}" for j in range(n_in)) + ", o)",
                   "else:",
                   "    with mid.consume() as v, z.produce() as o:",
                   "        copy(v, o)"]
    elif s.shape == "channel_bcast":  # one memtile fifo broadcast to every core by a channel
        for j, a in enumerate(ins):
            body.append(f"{a}_c = channel({flat}, shape=[1], via=memtile, broadcast={s.parts}, "
                        f"depth={depth!r}, name='{a}')")
            body.append(f"{a} = [{a}_c[0]] * {s.parts}")
            rt.append(f"rt.fill({a}_c[0], X{j}, (0, [{fill_n}], [1]))")
        body.append(f"z = channel({flat}, shape=[{s.parts}], via=memtile, join=0, "
                    f"depth={depth!r}, name='z')")
        rt.append("rt.drain(z[:], Z)")
    else:  # channel
        for j, a in enumerate(ins):
            body.append(f"{a} = channel({flat}, shape=[{s.parts}], via=memtile, split=0, "
                        f"depth={depth!r}, name='{a}'{rep})")
            rt.append(f"rt.fill({a}[:], X{j}, (0, [{fill_n * s.parts}], [1]))")
        body.append(f"z = channel({flat}, shape=[{s.parts}], via=memtile, join=0, "
                    f"depth={depth!r}, name='z')")
        rt.append("rt.drain(z[:], Z)")
    return body, core, rt


# -- expectations ---------------------------------------------------------------------------------

def expected(spec: Spec, inputs: list[np.ndarray]) -> np.ndarray:
    """What the design must compute, from the spec alone."""
    x = inputs[0]
    if spec.op == "passthrough":
        out = x.copy()
    elif spec.op == "relu":
        out = np.maximum(x, np.zeros((), dtype=x.dtype))
    elif spec.op == "threshold":
        assert spec.level is not None
        out = np.minimum(x, np.uint8(spec.level & 0xFF))
    else:
        wide = x.astype(np.int64), inputs[1].astype(np.int64)
        out = (wide[0] + wide[1] if spec.op == "add" else wide[0] * wide[1]).astype(x.dtype)
    if spec.shape in ("broadcast", "channel_bcast"):  # a joined element: every core's copy
        tiles = out.reshape(spec.iters, 1, spec.tile)
        out = np.broadcast_to(tiles, (spec.iters, spec.parts, spec.tile))
    if spec.repeat > 1:  # each memtile buffer (the larger element, the split's parent) again
        block = spec.tile * (spec.parts if spec.shape in ("split", "channel") else spec.regroup)
        out = np.repeat(out.reshape(-1, block), spec.repeat, axis=0)
    return out.reshape(-1)


# -- the property ---------------------------------------------------------------------------------

@dataclass
class Outcome:
    """What happened to one generated design."""

    seed: int
    verdict: str
    """``rejected`` (a DesignError), ``passed`` (simulated, right numbers), ``wrong``,
    ``crash`` (another exception), ``hang`` (over the time bound) or ``deadlock`` (the checks
    passed and the simulator found a hang)."""
    detail: str = ""
    rule: str = ""


def run_one(seed: int, folder: Path, time_bound: float = 20.0) -> Outcome:
    """Generate, load, check (the hang check too) and simulate design ``seed``; classify what
    happened."""
    import signal
    import traceback

    from aiedsl.checks import check_design
    from aiedsl.errors import DesignError
    from aiedsl.loader import load_design
    from aiedsl.sim import Deadlock, simulate
    from aiedsl.sim.compare import make_inputs
    from aiedsl.sim.hang_run import hang_run

    spec = make_spec(seed)
    path = folder / (f"fz_{seed}.py" if spec.shape != "gemm" else "gemm_bf16.py")
    path.write_text(render(spec))
    (folder / "copy.cc").write_text("void copy() {}\n")

    def alarm(*_: object) -> None:
        raise TimeoutError(f"over {time_bound} s")

    old = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, time_bound)
    start = time.perf_counter()
    try:
        handle = load_design(path, {k: str(v) for k, v in spec.gemm.items()},
                             spec.device if spec.shape == "gemm" else None)
        placed, _ = check_design(handle.ir)
        ins = make_inputs(placed, seed)
        try:  # build's hang check, then the run: both hang, or neither does
            ended = hang_run(handle.ir, placed, handle.kernels).ended
        except Deadlock as hung:
            try:
                simulate(handle, ins, placed=placed, check=False)
            except Deadlock:
                raise hung from None
            return Outcome(seed, "crash", f"{spec}: the hang check found a hang the "
                           f"simulator does not: {hung}")
        try:
            result = simulate(handle, ins, placed=placed, check=False)
        except Deadlock as e:
            if ended:
                return Outcome(seed, "crash", f"{spec}: the simulator hangs where the hang "
                               f"check's run ended: {e}")
            raise
        if spec.shape == "gemm":
            return _gemm_outcome(spec, ins, result.outputs["C"])
        want = expected(spec, [ins[f"X{j}"] for j in range(spec.inputs)])
        got = result.outputs["Z"].reshape(-1)
        if got.shape == want.shape and np.array_equal(got.view(np.uint8), want.view(np.uint8)):
            return Outcome(seed, "passed")
        bad = int(np.argmax(got.view(np.uint8) != want.view(np.uint8))) if got.shape == \
            want.shape else -1
        return Outcome(seed, "wrong", f"{spec}: first difference at byte {bad}")
    except TimeoutError:
        return Outcome(seed, "hang", f"{spec}: {time.perf_counter() - start:.1f} s")
    except Deadlock as e:
        return Outcome(seed, "deadlock", f"{spec}: {e}")
    except DesignError as e:
        if e.loc is not None and e.loc.file != path.name and not e.loc.file.endswith(
                path.name):
            return Outcome(seed, "crash", f"{spec}: reported at {e.loc} instead of the design "
                           f"file: {e}", e.rule)
        if e.rule == "python error" and _raised_inside_aiedsl(e.__cause__):
            return Outcome(seed, "crash", f"{spec}: aiedsl let bad input through to "
                           f"{''.join(traceback.format_exception(e.__cause__))}", e.rule)
        return Outcome(seed, "rejected", str(e).splitlines()[0], e.rule)
    except Exception:
        return Outcome(seed, "crash", f"{spec}:\n{traceback.format_exc()}")
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _gemm_outcome(spec: Spec, ins: dict[str, np.ndarray], got: np.ndarray) -> Outcome:
    """C = A @ B in f32: products of bf16 summed in another order, so within f32 rounding; on
    npu2, whose bf16 mmul runs on the bfp16 unit, the products of A and B as that unit
    quantizes them (aiedsl/kernels/bfp16.py, conv_even: the mode mm.cc sets)."""
    from aiedsl.kernels.bfp16 import bfp16_accumulate
    from aiedsl.targets import get_target

    target = get_target(spec.device)
    if target.runs_bfp16("bf16", target.mmul_shapes["bf16"]):
        acc = np.zeros((ins["A"].shape[0], ins["B"].shape[1]), np.float32)
        bfp16_accumulate(acc, ins["A"].astype(np.float32), ins["B"].astype(np.float32),
                         "conv_even")
        want = acc.astype(np.float64)
    else:
        want = ins["A"].astype(np.float64) @ ins["B"].astype(np.float64)
    err = np.abs(got.astype(np.float64) - want)
    bound = 1e-4 * np.abs(want) + 1e-4 * max(1.0, float(np.abs(want).max()))
    if np.all(err <= bound):
        return Outcome(spec.seed, "passed")
    i = np.unravel_index(int(np.argmax(err - bound)), err.shape)
    return Outcome(spec.seed, "wrong", f"{spec}: C{list(i)} got {got[i]} want {want[i]}")


def _raised_inside_aiedsl(e: BaseException | None) -> bool:
    """Did ``e`` come from aiedsl's own code (or a library it called), not the design's?"""
    import aiedsl

    if e is None or e.__traceback__ is None:
        return False
    tb = e.__traceback__
    while tb.tb_next is not None:
        tb = tb.tb_next
    package = str(Path(aiedsl.__file__).resolve().parent)
    inner = str(Path(tb.tb_frame.f_code.co_filename).resolve())
    return inner.startswith(package) or "site-packages" in inner or "pydantic" in inner


def describe(spec: Spec) -> str:
    """The design text, for a failure report."""
    return textwrap.indent(render(spec), "    ")
