"""What a design passed where aiedsl takes something else, as a message names it.

A module of its own because the fifos, the channels, ``tiles()`` and the GEMM helpers all name
what they were given, and the channels import the fifos: a channel is known here by the
``described()`` it has, so nothing here imports either.

Example
-------
::

    described(a[0])              # "the fifo 'a_0'"
    described(np.zeros((64, 64)))  # "an ndarray of shape (64, 64) float64"
"""

from __future__ import annotations

from aiedsl.dtypes import dtype as lookup_dtype
from aiedsl.ir.types import TensorType
from aiedsl.lang.records import FifoRecord
from aiedsl.lang.tensor import HostTensorRef
from aiedsl.values import as_int, by_type, shown


def described(value: object) -> str:
    """``value`` as a message names it: a fifo or a channel by name (``the fifo 'a_0'``), a
    host tensor by name and shape, a numpy array by its shape and type, anything else by its
    repr, but never by an address (``<... object at 0x7f...>`` differs from run to run: ``a
    Foo`` instead)."""
    if isinstance(value, FifoRecord):  # an ObjectFifo: the only kind
        return f"the fifo '{value.name}'"
    if callable(getattr(type(value), "described", None)):  # a Channel
        return f"the {value.described()}"  # type: ignore[attr-defined]
    if isinstance(value, HostTensorRef):
        return f"host tensor '{value.name}' {list(value.shape)}"
    if isinstance(value, TensorType):
        return f"the type {value.written}"
    text = shown(value)
    return by_type(value) if " at 0x" in text else text


def array_type(array: object) -> str:
    """The Tensor type of a numpy array's shape and element type, as a design writes it (the
    element type i32 if aiedsl has none of it)."""
    shape = tuple(int(n) for n in getattr(array, "shape", ()) or (1024,))
    try:
        name = lookup_dtype(getattr(array, "dtype", None)).name
    except (KeyError, ValueError, TypeError):
        name = "i32"
    return TensorType(shape=shape, dtype=name).written


def iron_type(value: object) -> str | None:
    """IRON's element type ``np.ndarray[(16,), np.dtype[np.int32]]`` as aiedsl writes it
    (``Tensor[16, i32]``); None for anything else, or a type aiedsl has no name for.

    >>> import numpy as np
    >>> iron_type(np.ndarray[(16, 8), np.dtype[np.int16]]), iron_type(int)
    ('Tensor[16, 8, i16]', None)
    """
    args = getattr(value, "__args__", None)
    origin = getattr(value, "__origin__", None)
    if not isinstance(origin, type) or origin.__name__ != "ndarray" \
            or not isinstance(args, tuple) or len(args) != 2:
        return None
    shape, element = args
    scalar = getattr(element, "__args__", (element,))[0]
    try:
        if isinstance(shape, int):
            shape = (shape,)
        dims = tuple(as_int(n) or 0 for n in shape)  # 16.5 or 0 is no size: no fix of it
        if not dims or min(dims) <= 0:
            return None
        import numpy as np  # a design that names np.ndarray has it loaded

        name = lookup_dtype(np.dtype(scalar)).name
    except (TypeError, ValueError, KeyError):
        return None
    return TensorType(shape=dims, dtype=name).written


def call_text(args: tuple[object, ...], kwargs: dict[str, object], *,
              iron: bool = False) -> str:
    """A call's arguments as a design writes them (``Tensor[1024, i32], depth=2``); ``iron``:
    aiedsl's spelling of IRON's (``obj_type=`` given first, positionally).

    >>> from aiedsl.ir.types import TensorType
    >>> call_text((TensorType(shape=(64,), dtype="i32"),), {"name": "a", "depth": 2})
    "Tensor[64, i32], name='a', depth=2"
    """
    kwargs = dict(kwargs)
    first = list(args)
    if iron and not first and "obj_type" in kwargs:
        first = [kwargs.pop("obj_type")]
    def text(v: object) -> str:
        if isinstance(v, TensorType):
            return v.written
        return (iron_type(v) if iron else None) or shown(v)
    return ", ".join([*(text(a) for a in first), *(f"{k}={text(v)}" for k, v in kwargs.items())])
