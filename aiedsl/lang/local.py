"""Core-local buffers: state a core keeps in its own memory from call to call.

IRON's ``Buffer(type, initial_value=..., name=...)`` handed to a ``Worker`` (mlir-aie's
``vector_reduce_max`` keeps its running maximum in one): an ``aie.buffer`` in the core's tile
with an initial value, which no DMA and no other core touches. Declared in the design function,
as IRON declares it at the top level and as :func:`rtp` and :func:`barrier` are; each core whose
function passes it to a kernel gets a copy of its own (a herd's sixteen cores, sixteen copies).

Example
-------
::

    best = local(Tensor[1, bf16], initial=-np.inf)       # named 'best' (the line's variable)

    @herd(cols=4)
    def core(x, y):
        for _ in loop(TILES):
            with a[x].consume() as t:
                row_max(t, tmp)                            # tmp: another local
                max2(best, tmp, best)                      # best = max(best, tmp)
        with out[x].produce() as o:
            copy(best, o)

The initial value is written when the design is loaded (mlir-aie's configuration writes a
buffer's ``initial_value`` into the core's memory; the core's ELF carries it too), not at each
run: on the NPU a second run starts from what the first left. The simulator runs one invocation
from load, so the first call that reads a local reads its initial value, as the NPU's first run
does.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, NoReturn

import numpy as np

from aiedsl.dtypes import DTYPES, DType, numpy_kind
from aiedsl.errors import DesignError
from aiedsl.ir.loc import Loc
from aiedsl.ir.types import TensorType
from aiedsl.lang.context import _CORE, current_design
from aiedsl.lang.names import check_name
from aiedsl.lang.novalue import NoValue
from aiedsl.lang.tensor import lookup_dtype
from aiedsl.library_vectors import library_lanes, takes_vectors
from aiedsl.source_loc import assigned_name, caller_loc
from aiedsl.text import short_numbers
from aiedsl.values import as_int, shown


@dataclass(eq=False)
class LocalRef(NoValue):
    """A core-local buffer as a design function sees it: pass it to a kernel inside a core
    function (``k(best, tmp, best)``); each core that does so holds a copy of its own."""

    name: str
    type: TensorType
    init: str | None
    """The initial value's bytes in hexadecimal (see :attr:`aiedsl.ir.Local.init`)."""
    loc: Loc
    cores: list[str] = field(default_factory=list)
    """The cores that pass it to a kernel, in the order they first did."""

    def __getitem__(self, index: object) -> Any:
        raise DesignError(
            "local", f"local '{self.name}' is indexed ({self.name}[{index!r}])", loc=caller_loc(),
            limit="a core function only calls kernels: the core program does no arithmetic "
            "of its own, so a local is passed whole to a kernel",
            found=f"{self.name}[{index!r}]",
            fix=f"pass {self.name} to a kernel that reads or writes the element (IRON's "
            f"elem_out[0] = buf[0] is a copy kernel: {copy_kernel(self.type)})")

    def __setitem__(self, index: object, value: object) -> None:
        self.__getitem__(index)

    def __bool__(self) -> bool:
        raise DesignError(
            "local", f"local '{self.name}' is used as a Python value", loc=caller_loc(),
            fix="its contents exist only on the core while the design runs: pass it to a "
            "kernel call")

    def _refuse(self, how: str, fix: str | None = None) -> NoReturn:
        raise DesignError(
            "local", f"local '{self.name}' {how}", loc=caller_loc(),
            limit="a core function is traced once, not run: a local holds no value then, so "
            "Python and numpy cannot compute with it",
            fix=fix or "compute in a kernel: pass the local to one")

    def __repr__(self) -> str:
        return f"local({self.name!r}, {self.type})"

    def use(self, core: str, loc: Loc) -> None:
        """Record that ``core`` passes this buffer to a kernel (it then holds a copy)."""
        b = current_design("passing a local to a kernel", loc)
        if b.locals.get(self.name) is not self:
            raise DesignError(
                "local", f"local '{self.name}' is passed to a kernel in design '{b.name}', but "
                "it was declared by another design", loc=loc,
                related=[("it was declared here", self.loc)],
                fix="declare it with local(...) in this design's function")
        if core not in self.cores:
            self.cores.append(core)


def copy_kernel(t: TensorType) -> str:
    """The copy kernel a fix suggests for a buffer of type ``t``: the library's passthrough
    when it takes the size (whole vectors of the type), else one of the user's own, as the
    README shows one; a fix that names passthrough for one i32 would end in passthrough's own
    refusal of the size."""
    shape = f"Tensor[{', '.join(map(str, t.shape))}, {t.dtype}]"
    if takes_vectors(t):
        return f"passthrough({shape}) from aiedsl.kernels, or your own"
    return (f"a scalar copy of your own, declared with declare(...) as README's \"Core-local "
            f"buffers\" shows (library passthrough copies whole vectors of "
            f"{library_lanes(t.dtype)} {t.dtype}, and {shape} holds {t.numel})")


def local(type: TensorType | None = None, *, name: str | None = None, initial: Any = None,
          **other: Any) -> LocalRef:
    """Declare a core-local buffer of ``type`` (``Tensor[1, bf16]``) named ``name`` (the
    variable the line assigns it to when not given), holding ``initial`` from when the design
    is loaded: a number for every element (``initial=0``, ``initial=-np.inf``) or a numpy array
    of the type's shape and element type. With ``initial`` an array, ``type`` may be left out
    (IRON's ``Buffer(initial_value=arr)``). With no ``initial`` the memory holds whatever was
    there before, and a core must write it before reading it.
    """
    loc = caller_loc()
    b = current_design("local(...)")
    if other:
        word = next(iter(other))
        hint = (" (IRON's Buffer spells it initial_value=; aiedsl's local, like its barrier, "
                "says initial=)" if word in ("initial_value", "init") else "")
        raise DesignError(
            "local", f"local() takes no argument {word}=", loc=loc, found=f"{word}=",
            limit="local(type, name=..., initial=...)",
            fix=f"write initial=... for the initial value{hint}" if hint else
            "write local(Tensor[...], name=..., initial=...)")
    if _CORE.get() is not None:
        raise DesignError(
            "local", "local() is called inside a core function", loc=loc,
            limit="a local is declared in the design function (as IRON declares a Buffer at "
            "the top level): its initial value is written once, when the design is loaded, "
            "not each time the core function's code is reached",
            fix="move the local(...) line into the @design function, before the @herd; each "
            "core that passes it to a kernel gets its own copy")
    if name is None:  # named as the design calls it (acc = local(...)), else buf, buf1, ...
        name = _fresh(b, assigned_name("local") or "buf")
    name = check_name(name, "local name", loc)
    if type is None and isinstance(initial, np.ndarray):
        type = _type_of(initial, name, loc)
    if not isinstance(type, TensorType):
        raise DesignError(
            "local", f"local '{name}' has type {shown(type)}, not a Tensor[...] type", loc=loc,
            found=shown(type), fix=(
                f"pass the array as its initial value, which gives the type: "
                f"local(initial=arr, name=\"{name}\")" if isinstance(type, np.ndarray) else
                f"write e.g. local(Tensor[16, i32], name=\"{name}\")"))
    for what, table in (("local", b.locals), ("rtp", b.rtps), ("barrier", b.barriers)):
        if name in table:
            raise DesignError(
                "local", f"local '{name}' has the name of a {what} declared before", loc=loc,
                related=[("the first", table[name].loc)],
                limit="locals, rtps, barriers, fifos and kernels share one MLIR symbol table",
                found=name, fix="give each its own name")
    ref = LocalRef(name, type, None if initial is None else initial_bytes(
        initial, type, name, loc), loc)
    b.locals[name] = ref
    return ref


def _fresh(b: Any, stem: str) -> str:
    taken = {*b.locals, *b.rtps, *b.barriers, *b.fifos}
    n, name = 0, stem
    while name in taken:
        n += 1
        name = f"{stem}{n}"
    return name


def _type_of(arr: np.ndarray, name: str, loc: Loc) -> TensorType:
    """The type of a local declared by its initial array alone."""
    dt = _dtype_of(arr, name, loc)
    if arr.ndim == 0 or arr.size == 0:
        raise DesignError(
            "local", f"local '{name}' is declared by an initial array of shape "
            f"{list(arr.shape)}", loc=loc, limit="an array of one or more dimensions and "
            "elements", found=str(list(arr.shape)),
            fix=f"give the type: local(Tensor[1, {dt.name}], initial=...)")
    return TensorType(shape=tuple(int(s) for s in arr.shape), dtype=dt.name)


def _dtype_of(arr: np.ndarray, name: str, loc: Loc) -> DType:
    try:
        return lookup_dtype(arr.dtype, None)
    except DesignError:
        raise DesignError(
            "local", f"local '{name}' is declared by an initial array of {arr.dtype}", loc=loc,
            limit="an aiedsl element type: " + ", ".join(
                d.numpy_name.partition(":")[2] for d in DTYPES.values()),
            found=str(arr.dtype), fix="build the array with one of them, e.g. "
            "np.array([0], dtype=np.int32)") from None


def _spelled(dt: DType) -> str:
    """How a design spells ``dt``'s numpy type: ``np.int32``, ``ml_dtypes.bfloat16``."""
    module, _, attr = dt.numpy_name.partition(":")
    return f"{'np' if module == 'numpy' else module}.{attr}"


def initial_bytes(initial: Any, t: TensorType, name: str, loc: Loc) -> str:
    """``initial`` as the bytes of a ``t`` buffer (row-major, little-endian), in hexadecimal;
    a DesignError at ``loc`` when it is not a value of ``t`` (nothing is converted but a
    number into the element type, as MLIR converts a literal)."""
    dt = t.dt
    np_dtype = np.dtype(dt.numpy).newbyteorder("<")
    what = f"the initial value of local '{name}' ({t})"
    if isinstance(initial, np.ndarray):
        if initial.dtype.name != np.dtype(dt.numpy).name:
            raise DesignError(
                "local", f"{what} is an array of {initial.dtype}", loc=loc,
                limit=f"an array of {dt.name} ({_spelled(dt)}): nothing is converted for you "
                "(a float array for an integer buffer would be truncated, int64 wrapped)",
                found=str(initial.dtype),
                fix=f"build it as one: np.array(..., dtype={_spelled(dt)}), or .astype("
                    f"{_spelled(dt)}) once you know no value changes")
        if tuple(initial.shape) != tuple(t.shape):
            shape = ", ".join(map(str, t.shape))
            raise DesignError(
                "local", f"{what} has shape {list(initial.shape)}", loc=loc,
                limit=f"the local's shape {list(t.shape)}", found=str(list(initial.shape)),
                fix=(f"reshape it: .reshape({shape})" if initial.size == t.numel else
                     f"give {t.numel} values in shape {list(t.shape)}")
                + ", or one number for every element")
        return np.ascontiguousarray(initial).astype(np_dtype).tobytes().hex()
    if _is_bool(initial):
        raise DesignError(
            "local", f"{what} is the bool {initial!r}", loc=loc,
            limit=f"a number {dt.name} holds, or an array", found=repr(initial),
            fix=f"write {int(initial)}")
    if isinstance(initial, (list, tuple)):
        raise DesignError(
            "local", f"{what} is a {type(initial).__name__}", loc=loc,
            limit=f"a number, or a numpy array of {dt.name}", found=_short(initial),
            fix=f"write np.array({_short(initial)}, dtype={_spelled(dt)})")
    value = _number(initial)
    if value is None:
        raise DesignError(
            "local", f"{what} is {type(initial).__name__} {_short(initial)}", loc=loc,
            limit=f"a number, or a numpy array of {dt.name}", found=_short(initial),
            fix="give one number for every element, or an array of the local's shape")
    if not dt.is_float:
        if not isinstance(value, int):
            raise DesignError(
                "local", f"{what} is {value!r}", loc=loc,
                limit=f"an int: {dt.name} holds integers", found=repr(value),
                fix="write an int" + (f", e.g. {math.trunc(value)}" if math.isfinite(value)
                                      else ""))
        info = np.iinfo(np_dtype.type)  # type: ignore[type-var]
        if not info.min <= value <= info.max:
            raise DesignError(
                "local", f"{what} is {_short(value)}", loc=loc,
                limit=f"{dt.name} values from {info.min} to {info.max}", found=_short(value),
                fix="give a value the element type holds, or declare a wider type")
        return np.full(t.shape, value, dtype=np_dtype).tobytes().hex()
    too_large = DesignError(
        "local", f"{what} is {_short(value)}", loc=loc,
        limit=f"a finite {dt.name} (its largest is {str(_largest(np_dtype))})",
        found=_short(value), fix="give a smaller value, or -np.inf / np.inf for an infinity")
    try:
        as_float = float(value)
    except OverflowError:  # an int past a double's range (10**400)
        raise too_large from None
    with np.errstate(over="ignore"):
        cell = np.array(as_float, dtype=np.float64).astype(np_dtype)
    if math.isfinite(as_float) and not np.isfinite(cell.astype(np.float64)):
        raise too_large
    return np.full(t.shape, cell, dtype=np_dtype).tobytes().hex()


def _largest(np_dtype: np.dtype) -> Any:
    """The largest finite value of float type ``np_dtype`` (bfloat16's from ml_dtypes)."""
    if np_dtype.name == "bfloat16":
        import ml_dtypes

        return ml_dtypes.finfo(np_dtype).max
    return np.finfo(np_dtype).max


def _short(value: object) -> str:
    text = short_numbers(repr(value))  # a huge int by its ends and length before any cut
    return text if len(text) <= 60 else text[:57] + "..."


def _is_bool(a: Any) -> bool:
    return isinstance(a, (bool, np.bool_))


def _number(a: Any) -> int | float | None:
    """A Python or numpy number as a Python int or float; None for anything else."""
    integer = as_int(a)  # numpy's integers too (bools are refused before)
    if integer is not None:
        return integer
    if isinstance(a, float):
        return float(a)
    if isinstance(a, np.generic) and a.ndim == 0 and numpy_kind(a.dtype) == "f":
        return float(a)
    return None
