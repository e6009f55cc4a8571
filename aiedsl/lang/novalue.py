"""What a design function's traced values (a fifo's acquired buffer, a core-local buffer) do
with Python and numpy: refuse, with the value's own DesignError rather than Python's
"unsupported operand type". A core function is traced once, not run, so they hold no value."""

from __future__ import annotations

from typing import NoReturn


class NoValue:
    """Operators, comparisons and numpy conversion that refuse through :meth:`_refuse`, which
    each traced value defines (its name and rule in the message)."""

    def _refuse(self, how: str) -> NoReturn:
        raise NotImplementedError

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
