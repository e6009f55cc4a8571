"""The numbers a design gives aiedsl (sizes, counts, depths, indices, offsets), as aiedsl takes
them and as its messages show them.

A design computes its sizes with numpy as often as with Python (``np.prod((32, 32))``,
``arr.shape[0] // 4``, ``np.int64(define(...))``), and numpy's integers are not Python's
``int``: every place that takes an integer takes it through :func:`as_int`, which accepts
what Python itself accepts as an index and hands on a plain ``int``, so the IR, the MLIR and the
messages read ``1024``, never ``np.int64(1024)``. A refused value is shown by :func:`shown`,
numpy's scalars as the plain numbers they hold.

Nothing here imports numpy: a design that does not use it does not load it.
"""

from __future__ import annotations

import inspect
import operator
import sys
from typing import Any


def as_int(value: object) -> int | None:
    """``value`` as a plain Python ``int`` when it is an integer, else None.

    An integer is what Python takes as a list index (``operator.index``): ``int``, numpy's
    integer scalars (``np.int64(1024)``, ``np.prod((32, 32))``, a 0-d integer array), or any
    type that says it is one with ``__index__``. Never a bool (``True`` would read as 1, a
    mistake such as ``depth=flag``; numpy's ``np.True_`` neither) and never a float, even a
    whole one (``4.0`` is what ``/`` gives where ``//`` was meant: the caller says so).

    >>> as_int(7), as_int(True), as_int(4.0), as_int("3")
    (7, None, None, None)
    """
    if isinstance(value, bool) or numpy_bool(value):
        return None
    try:
        return int(operator.index(value))  # type: ignore[arg-type]  # anything may have it
    except TypeError:
        return None


def as_bool(value: object) -> bool | None:
    """``value`` as a plain Python ``bool`` when it is one (numpy's ``np.True_`` too), else
    None: never a truth value (``"no"`` is true to Python and ``None`` false, so an option
    given either would quietly run what was not asked), nor an int.

    >>> as_bool(True), as_bool("no"), as_bool(None), as_bool(1)
    (True, None, None, None)
    """
    if isinstance(value, bool) or numpy_bool(value):
        return bool(value)  # type: ignore[arg-type]  # np.bool_ converts as a bool does
    return None


def numpy_bool(value: object) -> bool:
    """Is ``value`` numpy's bool (``np.True_``; not a subclass of ``bool``)? Told without
    loading numpy: a design that uses none has none."""
    np = sys.modules.get("numpy")
    return np is not None and isinstance(value, np.bool_)


def masked(value: Any) -> tuple[Any, Any]:
    """A ``numpy.ma`` masked array's mask (None when nothing is masked) and data; for anything
    else ``(None, value)``. Told without loading ``numpy.ma`` (14 ms, paid by every run that
    checks its outputs): a process that has not loaded it holds no masked array.

    >>> import numpy as np
    >>> masked(np.ma.masked_array([1, 2], mask=[0, 1]))
    (array([False,  True]), array([1, 2]))
    >>> masked([1, 2])
    (None, [1, 2])
    """
    ma = sys.modules.get("numpy.ma")
    if ma is None or not isinstance(value, ma.MaskedArray):
        return None, value
    mask = ma.getmask(value)
    return (None if mask is ma.nomask else mask), ma.getdata(value)


def plain(value: Any) -> Any:
    """``value`` with numpy's scalars (also inside lists, tuples and dicts) replaced by the
    Python numbers they hold: ``(np.int64(0), [np.int64(8)])`` -> ``(0, [8])``; anything else
    as it is (arrays too)."""
    if isinstance(value, (list, tuple)):
        items = [plain(v) for v in value]
        return items if isinstance(value, list) else tuple(items)
    if isinstance(value, dict):
        return {plain(k): plain(v) for k, v in value.items()}
    module = type(value).__module__.split(".")[0]
    if module in ("numpy", "ml_dtypes") and getattr(value, "ndim", None) == 0 and \
            hasattr(value, "item"):
        return value.item()
    return value


def shown(value: object) -> str:
    """``value`` as a message shows a value it found: its ``repr``, numpy's scalars as the
    plain numbers they hold (numpy 2 writes ``np.int64(5)``, which reads as if it were the
    problem), and a numpy array, also one inside a list or tuple, by its shape and type (its
    repr printed every element: a screenful of zeros for ``np.zeros(256)``).

    >>> shown(2.5), shown([1, "a"])
    ('2.5', "[1, 'a']")
    """
    return repr(_briefly(plain(value)))


def array_text(value: object) -> str | None:
    """How a message names a numpy array: ``an ndarray of shape (256,) int32``; None for
    anything else (a 0-d array is the number it holds: :func:`plain`)."""
    np = sys.modules.get("numpy")  # a design that uses none has none
    if np is None or not isinstance(value, np.ndarray) or value.ndim == 0:
        return None
    return f"an ndarray of shape {tuple(int(n) for n in value.shape)} {value.dtype}"


def by_type(value: object) -> str:
    """How a message names a value whose repr shows an object's address (``<Foo object at
    0x7f...>`` differs from run to run and tells the user nothing): by its type, ``a Foo``,
    ``an ObjectFifo``."""
    name = type(value).__name__
    return f"{'an' if name[:1].lower() in 'aeiou' else 'a'} {name}"


MAX_SHOWN = 120
"""The longest repr a message shows of an object; a longer one (a kernel's dozens of fields) is
named by its type."""


class _Named:
    """A value a message names in words: its repr is the words, with no quotes."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


def _briefly(value: Any) -> Any:
    """``value`` with every numpy array in it (in lists, tuples and dicts too) replaced by
    its :func:`array_text`, for :func:`shown`."""
    if isinstance(value, (list, tuple)):
        items = [_briefly(v) for v in value]
        return items if isinstance(value, list) else tuple(items)
    if isinstance(value, dict):
        return {k: _briefly(v) for k, v in value.items()}
    text = array_text(value)
    if text is not None:
        return _Named(text)
    if isinstance(value, (int, float, complex, str, bytes, bool, range)) or value is None:
        return value
    if inspect.isroutine(value) or inspect.isclass(value):  # <function tiles at 0x7f...>
        kind = "class" if inspect.isclass(value) else "function"
        return _Named(f"the {kind} {getattr(value, '__qualname__', by_type(value))}")
    shows = repr(value)
    # an address differs from run to run, a whole object's fields bury the point, and an
    # object's own <...> description (a kernel's call) is not the value a message quotes
    return (_Named(by_type(value)) if " at 0x" in shows or len(shows) > MAX_SHOWN
            or shows.startswith("<") else value)
