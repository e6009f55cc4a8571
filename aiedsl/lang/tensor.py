"""``Tensor[...]`` type expressions and the host-tensor handles a design function receives."""

from __future__ import annotations

from dataclasses import dataclass

from aiedsl.dtypes import DType, dtype
from aiedsl.errors import DesignError, caller_loc
from aiedsl.ir import Loc, TensorType


class Tensor:
    """Spell a tensor type: ``Tensor[64, 64, bf16]`` is a 64x64 block of bf16.

    Example
    -------
    >>> from aiedsl import Tensor, bf16
    >>> Tensor[64, 64, bf16]
    TensorType(shape=(64, 64), dtype='bf16')
    """

    def __class_getitem__(cls, item: object) -> TensorType:
        items = item if isinstance(item, tuple) else (item,)
        *shape, dt = items
        if not isinstance(dt, (DType, str)) or not shape:
            raise DesignError(
                "tensor type", f"Tensor[{', '.join(map(str, items))}] needs sizes then a dtype",
                loc=caller_loc(), fix="write e.g. Tensor[64, 64, bf16]",
            )
        for s in shape:
            if not isinstance(s, int) or isinstance(s, bool) or s <= 0:
                raise DesignError(
                    "tensor type", f"Tensor size {s!r} is not a positive integer",
                    loc=caller_loc(), found=repr(s),
                    fix="sizes are positive ints; use // for integer division",
                )
        return TensorType(shape=tuple(shape), dtype=dtype(dt).name)


@dataclass(frozen=True)
class HostTensorRef:
    """A runtime argument of a design (a host tensor), as the design function sees it."""

    name: str
    index: int
    type: TensorType
    loc: Loc

    @property
    def shape(self) -> tuple[int, ...]:
        """Shape of the host tensor."""
        return self.type.shape

    @property
    def dtype(self) -> str:
        """dtype name of the host tensor."""
        return self.type.dtype
