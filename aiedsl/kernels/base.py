"""A kernel is one declaration: C symbol, C++ source, signature, numpy reference and cost.

Example
-------
::

    from aiedsl.kernels import declare, buffer, scalar

    add_one = declare(
        "add_one_i32_8", source="add_one.cc", entry="add_one<8>",
        args=[buffer("a", Tensor[8, i32]), buffer("b", Tensor[8, i32], "out"), scalar("n", i32)],
        reference=lambda a, b, n: b.__setitem__(..., a + 1),
        cycles=40, cost="8 elements, one vector op plus call overhead")

Calling the kernel object inside a core function records a call: ``add_one(ta, tb, 8)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from aiedsl.dtypes import DType, dtype
from aiedsl.errors import caller_loc
from aiedsl.ir import Kernel as KernelIR
from aiedsl.ir import KernelArg, TensorType
from aiedsl.lang.context import current_design
from aiedsl.lang.core import call_kernel

def _kernels_cpp() -> Path:
    package = Path(__file__).resolve().parent.parent
    installed = package / "kernels_cpp"  # a wheel carries kernels_cpp/ inside the package
    return installed if installed.is_dir() else package.parent / "kernels_cpp"


KERNELS_CPP = _kernels_cpp()
"""The hand-written C++ kernels shipped with aiedsl: ``kernels_cpp/`` at the project root in a
source checkout, ``aiedsl/kernels_cpp/`` in an installed wheel."""
KERNEL_TEMPLATES = Path(__file__).resolve().parent / "templates"
"""jinja2 templates of kernels whose parameters are rendered into the C++."""


def buffer(name: str, type: TensorType, access: str = "in", *,
           blocks: tuple[int, int] | None = None) -> KernelArg:
    """A buffer parameter: ``access`` is ``"in"``, ``"out"`` or ``"inout"``.

    ``blocks=(br, bc)`` states that the kernel reads (or writes) the 2-D tile in ``br x bc``
    blocks, as :func:`~aiedsl.kernels.layout.block_dims` packs it; ``aiedsl check`` then
    verifies that the fifo's DMA layouts deliver exactly that order.

    Example: ``buffer("a", Tensor[64, 64, bf16], blocks=(4, 8))``
    """
    return KernelArg(name=name, kind="buffer", type=type, dtype=type.dtype, access=access,
                     blocks=blocks)


def scalar(name: str, dt: DType | str) -> KernelArg:
    """A scalar parameter passed by value."""
    return KernelArg(name=name, kind="scalar", dtype=dtype(dt).name)


@dataclass(frozen=True)
class Kernel:
    """A declared kernel; call it inside a core function to record a call."""

    ir: KernelIR
    reference: Callable[..., Any]
    """numpy reference: ``reference(*args, **ir.params)`` updates its output arrays in place."""

    @property
    def symbol(self) -> str:
        """The C symbol."""
        return self.ir.symbol

    def __call__(self, *args: Any) -> None:
        loc = caller_loc()
        current_design(f"calling kernel '{self.symbol}'").add_kernel(self.ir, self)
        call_kernel(self.symbol, args, loc)

    def run_reference(self, *args: Any) -> None:
        """Run the numpy reference on buffers (numpy arrays) and scalars."""
        self.reference(*args, **self.ir.params)


def declare(symbol: str, *, source: str, entry: str, args: Sequence[KernelArg],
            reference: Callable[..., Any], cycles: int, cost: str, ops: int = 0,
            params: dict[str, int | str] | None = None, source_kind: str = "file") -> Kernel:
    """Declare a kernel (see the module docstring).

    ``source`` names a file in ``kernels_cpp/`` (``source_kind="file"``) or a template in
    ``aiedsl/kernels/templates/``; ``entry`` is the C++ call the generated ``extern "C"``
    function makes, e.g. ``"matmul_bf16_f32<64, 64, 64>"``.
    """
    ref = f"{reference.__module__}:{reference.__qualname__}"
    ir = KernelIR(symbol=symbol, source=source, source_kind=source_kind, entry=entry,
                  args=tuple(args), params=dict(params or {}), reference=ref,
                  cycles=int(cycles), ops=int(ops), cost=cost, loc=caller_loc())
    return Kernel(ir, reference)
