"""What a design function's traced values (a fifo's acquired buffer, a core-local buffer) do
with Python and numpy: refuse, with the value's own DesignError rather than Python's
"unsupported operand type". A core function is traced once, not run, so they hold no value."""

from __future__ import annotations

import sys
from typing import NoReturn

from aiedsl.library_code import is_users

SHAPE_QUERIES = frozenset({"shape", "dtype", "size", "ndim", "nbytes", "itemsize"})
"""What numpy asks an array for its type: a traced value has none, but its ``.type`` (a
``Tensor[...]``) is known."""


class NoValue:
    """Operators, comparisons, ``len()``, attributes it lacks (``.shape``, ``.sum()``) and numpy
    conversion that refuse through :meth:`_refuse`, which each traced value defines (its name
    and rule in the message; a ``fix`` to say instead of its own)."""

    def _refuse(self, how: str, fix: str | None = None) -> NoReturn:
        raise NotImplementedError

    def _type_instead(self) -> str:
        """The fix for asking a traced value for its length or shape: its type is known."""
        t = getattr(self, "type", None)  # a TensorType: every traced value has one
        sizes = ", ".join(map(str, getattr(t, "shape", ())))
        return (f"read its type, known when the core function is traced: .type is "
                f"Tensor[{sizes}, {getattr(t, 'dtype', '?')}] (.type.shape, .type.dtype, "
                ".type.numel)")

    def __len__(self) -> NoReturn:
        self._refuse("is asked for its length", self._type_instead())

    def __getattr__(self, name: str) -> NoReturn:
        # Python calls it only for an attribute the value lacks (x.shape, x.sum()), never for
        # its own (a Buffer's fifo, value, count, index, type). Private names, and what code
        # of aiedsl, Python or a library asks (getattr(x, "ndim", None), copy's __deepcopy__,
        # numpy's np.max(x) trying x.max), get Python's AttributeError as they always did.
        if name.startswith("_") or not is_users(sys._getframe(1).f_code.co_filename):
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        self._refuse(f"is asked for .{name}",
                     self._type_instead() if name in SHAPE_QUERIES else None)

    def __add__(self, other: object) -> NoReturn:
        self._refuse("is used in arithmetic")

    __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __rtruediv__ = __add__
    __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = __pow__ = __rpow__ = __add__
    __matmul__ = __rmatmul__ = __lshift__ = __rlshift__ = __rshift__ = __rrshift__ = __add__
    __and__ = __rand__ = __or__ = __ror__ = __xor__ = __rxor__ = __divmod__ = __add__
    __rdivmod__ = __add__

    def __neg__(self) -> NoReturn:
        self._refuse("is used in arithmetic")

    __pos__ = __abs__ = __invert__ = __neg__

    def __lt__(self, other: object) -> NoReturn:
        self._refuse("is used in a comparison")

    __le__ = __gt__ = __ge__ = __lt__

    def __eq__(self, other: object) -> bool:
        # against a value (x == 0) it would pick one branch of an if at trace time, silently;
        # against another traced value it asks which one it is, as Python's own `in` does
        if isinstance(other, NoValue):
            return self is other
        self._refuse("is used in a comparison")

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    __hash__ = object.__hash__

    def __array__(self, *args: object, **kwargs: object) -> NoReturn:
        self._refuse("is used as a numpy array")
