"""The simulator's fast paths against their plain definitions: host pieces as strided views
against index gathers, the blocked matmul reference against unblock-multiply-reblock, and the
step-function DMAs against the schedule a generator would follow."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest

from aiedsl.ir.types import Pattern
from aiedsl.kernels.layout import block, unblock
from aiedsl.kernels.library import matmul_ref, srs
from aiedsl.kernels.matmul import matmul_prepared
from aiedsl.loader import load_design
from aiedsl.sim import simulate
from aiedsl.sim.dma import Receive, Send
from aiedsl.sim.processes import Chunk, Proc
from aiedsl.sim.patterns import _piece_views, pattern_reader, pattern_steps, pattern_writer

PATTERNS = [
    Pattern(offset=64, sizes=(2, 3, 4, 8), strides=(0, 256, 32, 1)),   # a repeat (stride 0)
    Pattern(offset=0, sizes=(1, 4, 64, 64), strides=(0, 64, 1024, 1)),
    Pattern(offset=5, sizes=(3, 2, 8, 16), strides=(512, 16, 64, 1)),
    Pattern(offset=0, sizes=(1, 1, 1, 96), strides=(0, 0, 0, 1)),
    Pattern(offset=0, sizes=(2, 3, 5, 7), strides=(300, 70, 9, 1)),
    Pattern(offset=3, sizes=(1, 2, 4, 4), strides=(0, 2, 8, 1)),       # overlapping rows
]


@pytest.mark.parametrize("pattern", PATTERNS)
def test_host_pieces_are_the_pattern_steps(pattern: Pattern) -> None:
    host = np.arange(pattern.indices().max() + 7, dtype=np.int32)
    for numel in sorted({n for n in (1, 4, 8, 12, 16, 32, 48, 64, 96, 192, 4096, pattern.numel)
                         if pattern.numel % n == 0}):
        want = [host[idx] for idx in pattern_steps(pattern, numel)]
        got = list(pattern_reader(host, pattern, numel))
        assert [g.tolist() for g in got] == [w.tolist() for w in want], numel
        assert all(g.base is None or not np.shares_memory(g, host) for g in got)
        a, b = np.zeros_like(host), np.zeros_like(host)
        for i, (idx, store) in enumerate(zip(pattern_steps(pattern, numel),
                                             pattern_writer(b, pattern, numel))):
            piece = np.arange(idx.size, dtype=np.int32) + 1000 * i
            a[idx] = piece
            store(piece)
        assert a.tolist() == b.tolist(), numel


def test_host_pieces_take_views_where_they_can_and_refuse_overlaps() -> None:
    host = np.zeros(64 * 1024, dtype=np.int16)
    tile = Pattern(offset=0, sizes=(1, 4, 64, 64), strides=(0, 64, 1024, 1))
    assert _piece_views(host, tile, 4096, write=False) is not None
    assert _piece_views(host, tile, 4096, write=True) is not None
    rows = Pattern(offset=3, sizes=(1, 2, 4, 4), strides=(0, 2, 8, 1))
    assert _piece_views(host, rows, 32, write=False) is not None
    assert _piece_views(host, rows, 32, write=True) is None  # elements written twice
    assert _piece_views(host, tile, 3 * 64, write=False) is None  # not one regular block


def _matmul_plain(a: np.ndarray, b: np.ndarray, c: np.ndarray, *, m: int, k: int, n: int,
                  r: int, s: int, t: int, shift: int = 0) -> None:
    """The definition: unblock, widen, C + A @ B, reblock."""
    flt = c.dtype.kind not in "iu"
    wide = np.float32 if flt else np.int64
    A = unblock(a.reshape(-1), m, k, r, s).astype(wide)
    B = unblock(b.reshape(-1), k, n, s, t).astype(wide)
    C = unblock(c.reshape(-1), m, n, r, t).astype(wide)
    if flt or c.dtype.itemsize >= 4:
        c.reshape(-1)[...] = block(C + A @ B, r, t).astype(c.dtype)
    else:
        c.reshape(-1)[...] = block(srs((C << shift) + A @ B, shift, c.dtype), r, t)


@pytest.mark.parametrize("din,dout,mmul,shift", [
    ("bf16", "f32", (4, 8, 4), 0), ("bf16", "bf16", (4, 8, 4), 0), ("bf16", "f32", (4, 8, 8), 0),
    ("i8", "i32", (4, 8, 8), 0), ("i8", "i8", (4, 8, 8), 5), ("i16", "i32", (4, 4, 4), 0)])
def test_matmul_reference_is_bit_identical_to_its_definition(
        din: str, dout: str, mmul: tuple[int, int, int], shift: int) -> None:
    from aiedsl.dtypes import dtype as lookup

    rng = np.random.default_rng(7)
    r, s, t = mmul
    m, k, n = 2 * r * 3, s * 5, 2 * t * 2

    def arr(name: str, size: int) -> np.ndarray:
        dt = np.dtype(lookup(name).numpy)
        if dt.kind in "iu":
            info = np.iinfo(dt)
            return rng.integers(info.min, info.max, size, endpoint=True).astype(dt)
        return (rng.standard_normal(size) * 4).astype(np.float32).astype(dt)

    a, b = arr(din, m * k).reshape(m, k), arr(din, k * n).reshape(k, n)
    c = arr(dout, m * n).reshape(m, n)
    want, got, split = c.copy(), c.copy(), c.copy()
    prepared = matmul_prepared(m, k, n, r, s, t, c.dtype, shift)
    for _ in range(3):  # accumulating calls
        _matmul_plain(a, b, want, m=m, k=k, n=n, r=r, s=s, t=t, shift=shift)
        matmul_ref(a, b, got, m=m, k=k, n=n, r=r, s=s, t=t, shift=shift)
        prepared.finish(prepared.operands[0](a), prepared.operands[1](b), split)
    assert got.dtype == want.dtype
    assert got.tobytes() == want.tobytes()
    assert split.tobytes() == want.tobytes()  # the simulator's shared-operand path


def test_step_dmas_keep_requests_for_explanations() -> None:
    """A DMA driven by a step function leaves the request it waits on, as a generator would."""
    handle = load_design("designs/passthrough.py", {"N": "4096", "TILE": "1024"})
    m = simulate(handle).machine
    steps = [p for p in m.engine.procs if p.step is not None]
    assert steps and all(p.kind in ("mm2s", "s2mm") and not p.info.get("shim") for p in steps)
    # After the run every on-chip channel waits for its next part: a lock or its stream.
    assert all(p.request is not None and p.request[0] in ("acq", "get") for p in steps)
    owners = {type(p.step.__self__) for p in steps}  # type: ignore[union-attr]
    assert owners == {Receive, Send}


def test_identical_runs_give_identical_timing() -> None:
    handle = load_design("designs/gemm_bf16.py", {"M": "256", "K": "256", "N": "256"})
    runs = [simulate(handle, seed=1) for _ in range(2)]
    a, b = (r.timing for r in runs)
    assert (a.cycles, a.core_busy, a.channel_busy) == (b.cycles, b.core_busy, b.channel_busy)
    assert all(np.array_equal(x, y) for x, y in itertools.zip_longest(
        runs[0].outputs.values(), runs[1].outputs.values()))
    assert runs[0].passed


def test_dram_serves_requests_in_ready_order_not_arrival_order() -> None:
    from aiedsl.sim.state import DramPort

    port = DramPort(bytes_per_cycle=1.0)
    assert port.reserve(100.0, 50) == 150.0  # ready at 100: served 100..150
    # asked for later but ready at 10: host memory was idle before 100, it does not wait
    assert port.reserve(10.0, 40) == 50.0
    # ready at 0, 70 cycles: 0..10, the idle 50..100 takes 50, and the last 10 after 150
    assert port.reserve(0.0, 70) == 160.0
    assert port.reserve(0.0, 5) == 165.0  # nothing idle is left before 160
    assert port.moved == 165
    assert (port.gap_start, port.gap_end) == ([], [])
    # a request ready inside a gap leaves the gap's head idle
    port.reserve(200.0, 10)
    assert port.reserve(180.0, 5) == 185.0
    assert (port.gap_start, port.gap_end) == ([165.0, 185.0], [180.0, 200.0])


def _gemm(size: int) -> tuple[Any, dict[str, np.ndarray]]:
    from aiedsl.sim.compare import make_inputs

    design = Path(__file__).resolve().parent.parent / "designs" / "gemm_bf16.py"
    handle = load_design(design, {"M": str(size), "K": str(size), "N": str(size)})
    return handle, make_inputs(handle.ir, 0)


def test_broadcast_cores_share_the_matmul_operands_and_get_the_same_run(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import dataclasses
    import importlib

    mm = importlib.import_module("aiedsl.kernels.matmul")  # the package's matmul is a function
    core = importlib.import_module("aiedsl.sim.operands")  # where shared operands are made

    made, unblocked = [], []
    real_make, real_operand = core.make_shared, mm._operand

    def counted_make(*args: Any) -> np.ndarray:
        made.append(1)
        return real_make(*args)

    def counted_operand(*args: Any, **kw: Any) -> np.ndarray:
        unblocked.append(1)
        return real_operand(*args, **kw)

    monkeypatch.setattr(core, "make_shared", counted_make)
    monkeypatch.setattr(mm, "_operand", counted_operand)
    handle, inputs = _gemm(256)  # a 4x4 herd of 64x64x64 tiles: 64 calls, A and B to 4 cores each
    shared = simulate(handle, inputs)
    assert shared.passed and len(made) == 2 * 64 // 4
    # every one from what the memtile received, in one step: the memtile's blocking and the
    # kernel's unblocking compose to nothing, so no operand is unblocked
    assert unblocked == []
    for name in list(handle.kernels):
        handle.kernels[name] = dataclasses.replace(handle.kernels[name], prepared=None)
    plain = simulate(handle, inputs)
    assert shared.outputs["C"].tobytes() == plain.outputs["C"].tobytes()
    assert shared.timing.cycles == plain.timing.cycles


def test_an_operand_from_a_shared_memory_fifo_is_made_at_each_call(
        design_file: Callable[[str], Path]) -> None:
    # B comes by DMA (its ring records fills: the prepared operand is kept on its chunk), A
    # from the core below through shared memory (no fills): A must still be unblocked and
    # widened, not handed to the product as the raw blocked bf16 buffer.
    path = design_file('''
        import numpy as np
        from aiedsl import Tensor, bf16, design, f32, fifo, herd, runtime
        from aiedsl.kernels import matmul, passthrough, zero

        @design(device="npu1_1col")
        def d(A: Tensor[64, 64, bf16], B: Tensor[64, 64, bf16], C: Tensor[64, 64, f32]):
            a_in = fifo(Tensor[64, 64, bf16], name="a_in")
            a_sh = fifo(Tensor[64, 64, bf16], name="a_sh")
            b = fifo(Tensor[64, 64, bf16], name="b")
            c = fifo(Tensor[64, 64, f32], name="c")
            copy, mm, zc = passthrough(Tensor[64, 64, bf16]), matmul(64, 64, 64), zero(
                Tensor[64, 64, f32])

            @herd(cols=1, rows=2)
            def core(x, y):
                if y == 0:
                    with a_in.consume() as s, a_sh.produce() as t:
                        copy(s, t)
                else:
                    with a_sh.consume() as ta, b.consume() as tb, c.produce() as tc:
                        zc(tc)
                        mm(ta, tb, tc)

            with runtime() as rt:  # A and B in mmul blocks, C back to rows
                rt.fill(a_in, A, (0, [16, 8, 4, 8], [256, 8, 64, 1]))
                rt.fill(b, B, (0, [8, 16, 8, 4], [512, 4, 64, 1]))
                rt.drain(c, C, (0, [16, 16, 4, 4], [256, 4, 64, 1]))

        @d.reference
        def reference(A, B):
            return A.astype(np.float32) @ B.astype(np.float32)
        ''')
    result = simulate(load_design(path))
    assert result.passed, [c.line() for c in result.checks]
    # the same f32 sums as numpy's: every element equal, no worst one
    assert result.checks[0].line() == (
        "PASS C: exact, every element equal (allowed: tolerance 0.0001 relative + 0.0029 "
        "absolute)")


NEGATING = '''
import numpy as np
from aiedsl import Tensor, bf16, channel, design, f32, gemm_runtime, herd, loop, memtile
from aiedsl import runtime
from aiedsl.kernels import block_dims, buffer, declare, matmul, unblock_dims, zero

def negate(x):
    x[...] = -x

@design(device="npu1")
def d(A: Tensor[64, 64, bf16], B: Tensor[64, 64, bf16], C: Tensor[64, 64, f32]):
    mm = matmul(32, 32, 32)
    neg = declare("negate_{dt}_32x32", source="zero.cc", entry="zero<{cpp}, 1024>",
                  reference=negate,
                  args=[buffer("x", Tensor[32, 32, {dt}], "inout", blocks={blocks})],
                  cycles=128, cost="test")
    a = channel(Tensor[32, 32, bf16], shape=[2], via=memtile, broadcast=2,
                dims_to_stream=block_dims(32, 32, 4, 8), name="a")
    b = channel(Tensor[32, 32, bf16], shape=[2], via=memtile, broadcast=2,
                dims_to_stream=block_dims(32, 32, 8, 4), name="b")
    c = channel(Tensor[32, 32, f32], shape=[2, 2], via=memtile, join=1, depth=1,
                dims_to_stream=unblock_dims(32, 32, 4, 4), name="c")
    zero_c = zero(Tensor[32, 32, f32])
    @herd(cols=2, rows=2)
    def core(x, y):
        with c[x, y].produce() as acc:
            zero_c(acc)
            for _ in loop(2):
                with a[y].consume() as ta, b[x].consume() as tb:
                    mm(ta, tb, acc)
                    neg({negated})
                    mm(ta, tb, acc)
    with runtime() as rt:
        gemm_runtime(rt, a, b, c, A, B, C, tile=(32, 32, 32), herd=(2, 2))

@d.reference
def reference(A, B):
    return np.zeros((64, 64), np.float32)
'''
"""A 2x2 GEMM whose cores negate a buffer between the two products of each K step: C ends at 0
only if the second product sees the negation."""


def test_a_buffer_a_kernel_wrote_is_not_read_through_another_cores_operand(
        design_file: Callable[[str], Path]) -> None:
    # Every core adds A @ B, negates its own copy of A, adds (-A) @ B: C is zero only if the
    # second product reads the negated buffer, not the operand made from the broadcast fill.
    path = design_file(NEGATING.format(dt="bf16", cpp="bfloat16", blocks=(4, 8), negated="ta"))
    result = simulate(load_design(path))
    assert result.passed
    assert not result.outputs["C"].any()


def test_a_kept_output_is_written_back_before_another_kernel_takes_its_buffer(
        design_file: Callable[[str], Path]) -> None:
    # matmul keeps an f32 C row-major between its calls; a kernel negating C between two
    # products must see (and change) what the products added: AB, -AB, 0, twice over.
    path = design_file(NEGATING.format(dt="f32", cpp="float", blocks=(4, 4), negated="acc"))
    result = simulate(load_design(path))
    assert result.passed
    assert not result.outputs["C"].any()


def test_an_operand_made_through_two_orders_equals_the_one_made_from_the_buffer() -> None:
    # a chunk gathered from source in some order: the operand made from source with the two
    # orders composed is the operand made from the chunk's data, element for element, and
    # the composition is cached per gather order
    import importlib

    import ml_dtypes

    core = importlib.import_module("aiedsl.sim.operands")  # where shared operands are made
    prepared = matmul_prepared(64, 64, 64, 4, 8, 4, np.dtype(np.float32))
    rng = np.random.default_rng(5)
    source = rng.standard_normal(4096).astype(ml_dtypes.bfloat16)
    for order in (rng.permutation(4096), prepared.reorders[0].order.argsort()):
        chunk = Chunk(source[order], 0.0, 1, Proc("p", "mm2s"))
        chunk.origin = (source, order)
        cache: dict[int, Any] = {}
        fn = prepared.operands[0]
        value = core.make_shared(fn, prepared.reorders[0], cache, chunk, [chunk.data], 0)
        assert np.array_equal(value, fn(chunk.data)) and value.dtype == np.float32
        assert not value.flags.writeable and chunk.prepared == {fn: value}
        assert list(cache) == [id(order)]
    assert cache[id(order)] is None  # the memtile packs what the kernel unpacks: no move left


def test_a_kernel_missing_from_the_handle_never_imports_the_users_module(
        design_file: Callable[..., Path]) -> None:
    """The IR names a kernel's reference as ``module:function`` only: a kernel not in the
    handle simulated (an IR read back from JSON, or another design's given as placed=) made the
    simulator import that module, running the user's code again. It is now refused; a
    reference in aiedsl's own library is still imported."""
    from aiedsl.errors import DesignError
    from aiedsl.ir.design import Design

    design_file('''
        from pathlib import Path

        with open(Path(__file__).with_name("runs.txt"), "a") as f:
            f.write("ran\\n")

        def copy_ref(src, dst):
            dst[...] = src
        ''', "mykernels.py")
    path = design_file('''
        from aiedsl import Tensor, design, fifo, herd, i32, runtime
        from aiedsl.kernels import buffer, declare
        from mykernels import copy_ref

        @design(device="npu1_1col")
        def d(X: Tensor[64, i32], Y: Tensor[64, i32]):
            k = declare("copy_i32_64", source="copy.cc", entry="copy",
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

        @d.reference
        def reference(X):
            return X
        ''')
    (path.parent / "copy.cc").write_text(
        "#include <stdint.h>\nvoid copy(const int32_t *s, int32_t *d) {\n"
        "  for (int i = 0; i < 64; ++i) d[i] = s[i];\n}\n")
    handle = load_design(path)
    assert simulate(handle).passed
    runs = (path.parent / "runs.txt").read_text()
    again = Design.model_validate_json(handle.ir.model_dump_json())
    handle.kernels.clear()  # as a handle made around an IR read back from JSON
    handle.ir = again
    with pytest.raises(DesignError) as e:
        simulate(handle)
    assert str(e.value) == (
        "d.py:7: error [kernel reference]: kernel 'copy_i32_64' is not among the kernels of "
        "the design handle simulated, and its reference mykernels:copy_ref is the user's code, "
        "which the simulator does not import (that would run the user's module again)\n"
        "  limit: a kernel's reference comes from the handle its design was traced into (the "
        "design IR names it only), or is one of aiedsl's library references\n"
        "  found: reference mykernels:copy_ref, not in handle.kernels\n"
        "  fix: simulate the handle @design returned (or load_design gives) with the IR made "
        "from it: an IR read back from JSON, or another design's, has no references")
    assert (path.parent / "runs.txt").read_text() == runs  # the module did not run again


def test_a_library_kernel_missing_from_the_handle_is_imported_from_aiedsl() -> None:
    """aiedsl's own library references run no user code: they are still imported."""
    handle = load_design(Path(__file__).parent.parent / "designs" / "passthrough.py")
    assert all(k.reference.startswith("aiedsl.") for k in handle.ir.kernels)
    handle.kernels.clear()
    assert simulate(handle).passed
