"""Render a placed design as mlir-aie MLIR (``aie.mlir``).

This module only arranges the IR into what ``templates/aie.mlir.j2`` needs (SSA names, tiles,
depth lists); every MLIR spelling is in ``templates/mlir_ops.j2``.
"""

from __future__ import annotations

import math
from typing import Any

from aiedsl.ir.core_ops import (Acquire, BarrierWait, BufferArg, Call, IndexArg, LocalArg, Loop, Op,
                                Release, RtpArg)
from aiedsl.ir.design import Design
from aiedsl.ir.fifos import Fifo
from aiedsl.ir.runtime import RtpWrite, SetBarrier, Transfer
from aiedsl.version import __version__
from aiedsl.render import environment, render
from aiedsl.ir.sequence import shim_bd_ids
from aiedsl.ir.types import TensorType
from aiedsl.kernels.units import object_names
from aiedsl.place.alloc import barrier_lock_name, local_buffer_name
from aiedsl.targets import TargetModel
from aiedsl.codegen.syntax import DEFAULT, MlirSyntax, spelled_line

_PORT = {"produce": "Produce", "consume": "Consume"}


def render_mlir(d: Design, target: TargetModel, syntax: MlirSyntax = DEFAULT) -> str:
    """The ``aie.mlir`` text of placed design ``d`` on ``target`` (deterministic), in mlir-aie
    ``syntax``'s spelling (:mod:`aiedsl.codegen.syntax`)."""
    assert d.placed, "render_mlir() needs a placed design"
    fifos = {f.name: f for f in d.fifos}
    tiles: set[tuple[int, int]] = set()
    for f in d.fifos:
        for e in (f.producer, *f.consumers):
            assert e.tile is not None
            tiles.add(e.tile)
    for c in d.cores:
        assert c.tile is not None
        tiles.add(c.tile)
    fifo_views = [{
        "name": f.name, "producer": f.producer, "consumers": f.consumers, "loc": f.loc,
        "memref": memref(f.elem), "depths": _depths(f), "repeat": f.repeat,
    } for f in d.fifos]
    links = [{
        "srcs": l.srcs, "dsts": l.dsts, "loc": l.loc,
        "src_offsets": l.offsets if l.kind == "join" else (),
        "dst_offsets": l.offsets if l.kind == "split" else (),
    } for l in d.links]
    objects = object_names(d)  # kernels of one source share its object (kernels/units.py)
    kernels = [{
        "symbol": k.symbol, "object": objects[k.symbol],
        "types": [memref(a.type) if a.type else _scalar_type(a.dtype) for a in k.args],
    } for k in d.kernels]
    tile_of = {c.name: c.tile for c in d.cores if c.tile is not None}  # all: d is placed
    rtps = {r.name: {"name": r.name, "tile": tile_of[r.core], "memref": memref(r.type),
                     "loc": r.loc} for r in d.rtps}
    local_bufs = {}  # (local, core) -> its copy in that core, in IR order: local by local
    for b in d.locals:
        init = None if b.init is None else dense_value(b.type, b.init)
        for core in b.cores:
            sym = local_buffer_name(b, tile_of[core])
            local_bufs[(b.name, core)] = {"ssa": f"local_{sym}", "name": sym,
                                          "tile": tile_of[core], "memref": memref(b.type),
                                          "init": init, "loc": b.loc}
    locks = {(b.name, core): {"name": barrier_lock_name(b.name, tile_of[core]),
                              "tile": tile_of[core], "init": b.init, "loc": b.loc}
             for b in d.barriers for core in b.cores}
    cores = []
    for c in d.cores:
        namer = _Namer()
        cores.append({
            "name": c.name, "tile": c.tile, "loc": c.loc, "stack": c.stack, "forever": c.forever,
            "stack_attr": c.stack != target.default_stack,
            "body": _body(c.body, d, fifos, namer, {}, rtps, locks, c.name, local_bufs),
        })
    tensors = {t.name: t for t in d.tensors}
    args = [{"name": t.name, "memref": _flat(t.type)} for t in d.tensors]
    runtime = []
    bd_ids = shim_bd_ids(d)
    for i, op in enumerate(d.runtime):
        if isinstance(op, Transfer):
            bd = bd_ids[i]
            t = tensors[op.tensor]
            spelled = op.pattern.per_dimension_offsets()
            assert spelled is not None, "check_dma refuses an offset no dimension can carry"
            offsets, strides = spelled
            runtime.append({
                "op": op.op, "tensor": op.tensor, "fifo": op.fifo, "id": bd, "wait": op.wait,
                "offsets": offsets, "sizes": op.pattern.sizes,
                "strides": strides, "loc": op.loc,
                "memref": _flat(t.type)})
        elif isinstance(op, RtpWrite):
            runtime.append({"op": "rtp_write", "rtp": op.rtp, "index": op.index,
                            "value": op.value, "loc": op.loc, "ssa": f"rtp_value{i}"})
        elif isinstance(op, SetBarrier):
            for core in d.barrier(op.barrier).cores:  # one lock per waiting core
                runtime.append({"op": "set_lock", "lock": locks[(op.barrier, core)]["name"],
                                "value": op.value, "loc": op.loc})
        else:
            runtime.append({"op": "wait", "fifo": op.fifo, "loc": op.loc})
    return render(
        "aie.mlir.j2", version=__version__,
        design={"name": d.name, "device": d.device, "file": d.loc.file, "defines": d.defines},
        tiles=sorted(tiles), rtps=list(rtps.values()), local_bufs=list(local_bufs.values()),
        locks=list(locks.values()),
        fifos=fifo_views, links=links,
        cascades=[{"src": tile_of[c.src], "dst": tile_of[c.dst], "loc": c.loc}
                  for c in d.cascades],
        kernels=kernels, cores=cores, args=args, runtime=runtime, syntax=syntax,
        spelled=spelled_line(syntax))


def memref(t: TensorType) -> dict[str, Any]:
    """What ``mlir_ops.j2``'s ``ty`` macro spells as ``t``'s memref (``memref<64x64xbf16>``)."""
    return {"shape": list(t.shape), "elt": t.dt.mlir}


def _flat(t: TensorType) -> dict[str, Any]:
    """A host tensor as the runtime sequence takes it: one dimension of all its elements."""
    return {"shape": [t.numel], "elt": t.dt.mlir}


def initial_literal(t: TensorType, init: str) -> str:
    """The ``initial_value`` of an ``aie.buffer`` of type ``t`` holding bytes ``init`` (hex), as
    ``aie.mlir`` spells it (``mlir_ops.j2``'s ``dense`` macro): ``dense<[0, 1, 2, 3]>``, nested
    by the shape, or ``dense<v>`` when every element is the same.

    >>> initial_literal(TensorType(shape=(2,), dtype="i8"), "01ff")
    'dense<[1, -1]>'
    """
    return str(environment().get_template("mlir_ops.j2").module.dense(  # type: ignore[attr-defined]
        dense_value(t, init)))


def dense_value(t: TensorType, init: str) -> dict[str, Any]:
    """The elements of bytes ``init`` (hex) of type ``t`` for the ``dense`` macro: ``splat``,
    the one value every element has (else None), or ``nested``, the values in lists nested by
    the shape (as mlir-aie's tests spell them; the parser requires the nesting).

    Integers as written (a u8 200 is ``200`` for ``ui8``); finite floats in the shortest
    decimal that gives the same value back; infinities and NaNs as the element's bits in
    hexadecimal (``0xFF80``: bf16's -inf), which MLIR's dense-literal parser takes for a float
    element (it has no spelling for them otherwise).
    """
    import numpy as np

    dt = t.dt
    values = np.frombuffer(bytes.fromhex(init), dtype=np.dtype(dt.numpy).newbyteorder("<"))
    width = 2 * dt.itemsize
    raw = np.frombuffer(bytes.fromhex(init), dtype=f"<u{dt.itemsize}")

    def one(i: int) -> str:
        if not dt.is_float:
            return str(int(values[i]))
        v = float(values[i])
        if v != v or v in (float("inf"), float("-inf")):
            return f"0x{int(raw[i]):0{width}X}"
        return scalar_literal(v, "f32")

    if (raw == raw[0]).all():
        return {"splat": one(0), "nested": None}

    def nested(dims: tuple[int, ...], start: int) -> list[Any]:
        if len(dims) == 1:
            return [one(start + i) for i in range(dims[0])]
        step = math.prod(dims[1:])
        return [nested(dims[1:], start + i * step) for i in range(dims[0])]

    return {"splat": None, "nested": nested(tuple(t.shape), 0)}


def _depths(f: Fifo) -> list[int]:
    """One depth when every endpoint agrees and none was given its own, else mlir-aie's
    per-endpoint list (:attr:`~aiedsl.ir.fifos.Fifo.depth_per_end`)."""
    depths = [f.producer.depth, *(c.depth for c in f.consumers)]
    return depths if f.depth_per_end else depths[:1]


class _Namer:
    """Fresh SSA names within one core."""

    def __init__(self) -> None:
        self.n = 0
        self.counts = 0

    def __call__(self, stem: str) -> str:
        self.n += 1
        return f"{stem}{self.n}"

    def lock_count(self) -> str:
        """A name for a lock count's constant (2026-11's use_lock takes an SSA value), counted
        apart so that the other names are those of the 2026-03 spelling."""
        self.counts += 1
        return f"lock_count{self.counts}"


def _scalar_type(dtype: str) -> dict[str, Any]:
    """The type of a scalar kernel argument, for the ``ty`` macro: signless for integers
    (``u8`` -> ``i8``), as ``arith.constant`` requires ("integer return type must be
    signless"); the kernel's C++ ``uint8_t`` reads the same bits."""
    from aiedsl.dtypes import dtype as lookup

    ty = lookup(dtype).mlir
    return {"shape": None, "elt": ty[1:] if ty.startswith("ui") else ty}


def scalar_literal(value: float, dtype: str) -> str:
    """``value`` as an MLIR literal of scalar type ``dtype``.

    Integers as written (a ``u8`` 200 is ``200 : i8``, which MLIR's parser takes as the bit
    pattern the kernel reads as 200). Floats always with a dot: MLIR refuses a decimal integer
    for a float type ("unexpected decimal integer literal for a floating point value") and its
    float literal is ``[0-9]+[.][0-9]*([eE][-+]?[0-9]+)?``, so Python's ``1e-05`` becomes
    ``1.0e-05``. The shortest repr that round-trips the double: the same value, the same text.
    """
    from aiedsl.dtypes import dtype as lookup

    if not lookup(dtype).is_float:
        return str(int(value))
    mantissa, e, exponent = repr(float(value)).partition("e")
    if "." not in mantissa:
        mantissa += ".0"
    return mantissa + (f"e{exponent}" if e else "")


def _body(ops: tuple[Op, ...], d: Design, fifos: dict[str, Any], namer: _Namer,
          acquired: dict[str, dict[str, Any]], rtps: dict[str, dict[str, Any]],
          locks: dict[tuple[str, str], dict[str, Any]], core: str,
          local_bufs: dict[tuple[str, str], dict[str, Any]], ivs: tuple[str, ...] = ()
          ) -> list[dict[str, Any]]:
    """The template's ops of a core's program ``ops``, inside loops whose induction variables
    are ``ivs`` (outermost first)."""
    out: list[dict[str, Any]] = []
    for op in ops:
        if isinstance(op, BarrierWait):
            out.append({"op": "barrier_wait", "lock": locks[(op.barrier, core)]["name"],
                        "value": op.value, "loc": op.loc, "ssa": namer.lock_count()})
        elif isinstance(op, Acquire):
            view = {"op": "acquire", "ssa": namer("view"), "fifo": op.fifo,
                    "port": _PORT[op.port], "count": op.count,
                    "memref": memref(fifos[op.fifo].elem), "loc": op.loc}
            acquired[op.result] = view
            out.append(view)
        elif isinstance(op, Release):
            out.append({"op": "release", "fifo": op.fifo, "port": _PORT[op.port],
                        "count": op.count, "loc": op.loc})
        elif isinstance(op, Call):
            k = d.kernel(op.kernel)
            operands, types, scalars, loads, casts = [], [], [], [], []
            for a, param in zip(op.args, k.args):
                if isinstance(a, BufferArg):
                    view = acquired[a.value]
                    operands.append(f"{view['ssa']}_{a.index}")
                    types.append(view["memref"])
                elif isinstance(a, LocalArg):  # this core's copy, defined in the device
                    buf = local_bufs[(a.local, core)]
                    operands.append(buf["ssa"])
                    types.append(buf["memref"])
                elif isinstance(a, RtpArg):
                    # loaded right before the call: each call sees the host's latest write
                    r = rtps[a.rtp]
                    ssa = namer("rtp")
                    loads.append({"ssa": ssa, "index_ssa": namer("idx"), "rtp": a.rtp,
                                  "index": a.index, "memref": r["memref"], "loc": a.loc})
                    operands.append(ssa)
                    types.append(_scalar_type(param.dtype))
                elif isinstance(a, IndexArg):  # the loop's induction variable, as the integer
                    ty = _scalar_type(param.dtype)
                    ssa = namer("arg")
                    casts.append({"ssa": ssa, "iv": ivs[a.loop], "type": ty})
                    operands.append(ssa)
                    types.append(ty)
                else:
                    ty = _scalar_type(param.dtype)
                    ssa = namer("arg")
                    scalars.append({"ssa": ssa, "value": scalar_literal(a.value, param.dtype),
                                    "type": ty})
                    operands.append(ssa)
                    types.append(ty)
            out.append({"op": "call", "kernel": op.kernel, "operands": operands, "types": types,
                        "scalars": scalars, "loads": loads, "casts": casts, "loc": op.loc})
        elif isinstance(op, Loop):
            bound, iv = namer("n"), namer("i")
            out.append({"op": "loop", "count": op.count, "bound": bound, "iv": iv,
                        "loc": op.loc,
                        "body": _body(op.body, d, fifos, namer, acquired, rtps, locks, core,
                                      local_bufs, ivs + (iv,))})
    return out
