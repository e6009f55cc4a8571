"""Inputs for a simulated run (the comparison of its outputs with the design's reference is
:mod:`aiedsl.compare`, re-exported here)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from aiedsl.compare import OutputCheck, compare  # noqa: F401 (re-exported)
from aiedsl.tolerances import TOLERANCE  # noqa: F401 (re-exported)
from aiedsl.dtypes import dtype as lookup_dtype
from aiedsl.errors import DesignError, counted
from aiedsl.ir.design import Design
from aiedsl.ir.loc import Loc
from aiedsl.ir.runtime import Transfer
from aiedsl.dtypes import drawn_range, unwritten
from aiedsl.values import by_type


def make_inputs(d: Design, seed: int = 0) -> dict[str, np.ndarray]:
    """Seeded random host tensors for every tensor the runtime fills.

    Integers are drawn uniformly over :func:`~aiedsl.dtypes.drawn_range`: 8-bit ones over their
    whole range (i8 -128..127: any sum of int8 products fits AIE2's 32-bit accumulator, and a
    kernel or reference keeping it in 16 bits must fail; u8 0..255: a threshold of 8 or more
    must change something), wider ones with |x| < 2^(bits/2 - 1), so products stay in range;
    floats are standard normal, rounded to the tensor's dtype. A tensor whose bytes every fifo
    it fills reads as another type (IRON's color_threshold fills u8 lines from an int8 tensor)
    is drawn as that type, so the cores see the values they are made for.
    """
    rng = np.random.default_rng(seed)
    filled = set(d.filled_tensors())
    out: dict[str, np.ndarray] = {}
    for t in d.tensors:
        if t.name not in filled:
            continue
        host = lookup_dtype(t.type.dtype)
        seen = {d.fifo(x.fifo).elem.dtype for x in d.runtime
                if isinstance(x, Transfer) and x.op == "fill" and x.tensor == t.name}
        dt = lookup_dtype(seen.pop()) if len(seen) == 1 else host
        count = t.type.numel * host.itemsize // dt.itemsize
        if count * dt.itemsize != t.type.numel * host.itemsize:
            dt, count = host, t.type.numel
        arr: np.ndarray
        if dt.is_float:
            arr = rng.standard_normal(count).astype(np.float32).astype(dt.numpy)
        else:
            lo, hi = drawn_range(dt)
            arr = rng.integers(lo, hi + 1, size=count).astype(dt.numpy)
        out[t.name] = arr.view(host.numpy).reshape(t.type.shape)
    return out


def check_inputs(d: Design, inputs: Mapping[str, object], loc: Loc | None) -> None:
    """Every array in ``inputs`` is for a tensor the runtime fills, with its element type and
    count (in any shape), and every such tensor has one; else a DesignError at ``loc`` (the
    caller's line). Nothing is converted: a float array for an integer tensor, or int64 for
    i32, would otherwise be cast (truncated, wrapped) without a word.

    >>> check_inputs(design, {"inp": np.zeros(100, np.float32)}, loc)     # doctest: +SKIP
    d.py:9: error [inputs]: input 'inp' of 'passthrough' is float32, not i32
    """
    tensors = {t.name: t for t in d.tensors}
    filled = d.filled_tensors()
    if not isinstance(inputs, Mapping):  # a list in argument order, as Artifacts.run takes
        given = by_type(inputs)
        raise DesignError(
            "inputs", f"the inputs of '{d.name}' are {given}, not a dict by tensor name",
            loc=loc, limit="a dict {name: array} of the tensors the runtime fills: "
            + ", ".join(filled), found=given,
            fix="pass {" + ", ".join(f"'{n}': ..." for n in filled) + "}, or give the arrays "
            "in argument order to build(...).run(...)")
    for name in inputs:  # a misspelt name first: it would also leave a tensor missing
        if not isinstance(name, str):  # a position, as a list would give it: keys are names
            raise DesignError(
                "inputs", f"the inputs of '{d.name}' are keyed by {by_type(name)}, not by "
                "tensor name", loc=loc, limit="a dict {name: array} of the tensors the runtime "
                "fills: " + ", ".join(filled), found=repr(name),
                fix="pass {" + ", ".join(f"'{n}': ..." for n in filled) + "}")
        if name not in tensors:
            raise DesignError(
                "inputs", f"'{name}' is not a tensor of '{d.name}'", loc=loc,
                limit=f"the design's tensors: {', '.join(tensors)}", found=repr(name),
                fix="name an input after its parameter of the @design function")
        if name not in filled:  # an output's start would hide what the run leaves unwritten
            raise DesignError(
                "inputs", f"'{name}' of '{d.name}' is not an input: the runtime never fills it",
                loc=loc, limit=f"the tensors the runtime fills: {', '.join(filled) or 'none'}",
                found=repr(name), fix=f"leave '{name}' out: the run starts it with values no "
                "correct run leaves behind, and returns it")
    for name in filled:
        if name not in inputs:
            raise DesignError(
                "inputs", f"input '{name}' of '{d.name}' is missing", loc=loc,
                limit=f"one array for each tensor the runtime fills: {', '.join(filled)}",
                found=", ".join(map(repr, inputs)) or "none",
                fix=f"pass '{name}' too")
    for name, value in inputs.items():
        t = tensors[name]
        dt = lookup_dtype(t.type.dtype)
        shape = ", ".join(map(str, t.type.shape))
        want = f"{counted(t.type.numel, 'element')} of {dt} (Tensor[{shape}, {dt}]), in any shape"
        if not isinstance(value, np.ndarray):
            raise DesignError(
                "inputs", f"input '{name}' of '{d.name}' is not a numpy array", loc=loc,
                limit=want, found=type(value).__name__,
                fix=f"pass np.asarray({name}, dtype={_spelling(dt.numpy)})")
        if value.dtype != np.dtype(dt.numpy):
            cast = (f"{name}.astype({_spelling(dt.numpy)}) (nothing is converted for you: a cast "
                    "may round, truncate or wrap values)")
            if value.dtype.type is np.void and value.dtype.itemsize == np.dtype(dt.numpy).itemsize:
                # raw records of the type's size (how np.save stores a type numpy lacks):
                # no cast takes them, a view does
                fix = f"if {name} holds {dt} values, pass {name}.view({_spelling(dt.numpy)})"
            elif dt.is_float and value.dtype.kind in "iu" and \
                    value.dtype.itemsize == np.dtype(dt.numpy).itemsize:
                # integers of the float's size may be its bits (how older mlir-aie and Riallto
                # code carries bf16, as uint16): a cast would convert them as numbers
                carried = " (as older mlir-aie and Riallto code carries bf16)" \
                    if dt.name == "bf16" else ""
                fix = (f"if {name} holds {dt} bit patterns{carried}, pass "
                       f"{name}.view({_spelling(dt.numpy)}); if it holds numbers, pass {cast}")
            else:
                fix = f"pass {cast}"
            raise DesignError(
                "inputs", f"input '{name}' of '{d.name}' is {value.dtype}, not {dt}", loc=loc,
                limit=want, found=f"{value.dtype}, shape {list(value.shape)}", fix=fix)
        if value.size != t.type.numel:
            raise DesignError(
                "inputs", f"input '{name}' of '{d.name}' has "
                f"{counted(value.size, 'element')}, not {t.type.numel}", loc=loc, limit=want,
                found=f"{counted(value.size, 'element')}, shape {list(value.shape)}",
                fix=f"pass the whole tensor (shape {list(t.type.shape)})")


def _spelling(scalar: type) -> str:
    """How a design file names a numpy scalar type: ``np.int32``, ``ml_dtypes.bfloat16``."""
    module = "np" if scalar.__module__ == "numpy" else scalar.__module__
    return f"{module}.{scalar.__name__}"


def poisoned(d: Design, name: str) -> np.ndarray:
    """An output buffer filled with a value no correct run writes everywhere
    (:func:`~aiedsl.dtypes.unwritten`)."""
    t = d.tensor(name)
    return unwritten(t.type.shape, np.dtype(lookup_dtype(t.type.dtype).numpy))
