"""A kernel's parameters as ``declare`` takes them: :func:`buffer` (a tensor the kernel reads or
writes, and the blocks it reads it in) and :func:`scalar` (a value passed by value, and the one
value or the narrower type it holds the kernel to)."""

from __future__ import annotations

from typing import Any, Literal

from aiedsl.dtypes import DType
from aiedsl.errors import DesignError
from aiedsl.ir.kernel import KernelArg
from aiedsl.ir.types import TensorType
from aiedsl.lang.names import check_name
from aiedsl.lang.tensor import lookup_dtype
from aiedsl.source_loc import caller_loc
from aiedsl.values import as_int, shown


def buffer(name: str, type: TensorType, access: Literal["in", "out", "inout"] = "in", *,
           blocks: tuple[int, int] | None = None) -> KernelArg:
    """A buffer parameter: ``access`` is ``"in"``, ``"out"`` or ``"inout"``.

    ``blocks=(br, bc)`` states that the kernel reads (or writes) the 2-D tile in ``br x bc``
    blocks, as :func:`~aiedsl.kernels.layout.block_dims` packs it; ``aiedsl check`` then
    verifies that the fifo's DMA layouts deliver exactly that order.

    Example: ``buffer("a", Tensor[64, 64, bf16], blocks=(4, 8))``
    """
    loc = caller_loc()
    check_name(name, "kernel argument", loc)
    if not isinstance(type, TensorType):
        raise DesignError("kernel signature", f"buffer '{name}' has the type {shown(type)}",
                          loc=loc, limit="a Tensor[...] type", found=shown(type),
                          fix=f'write e.g. buffer("{name}", Tensor[1024, i32])')
    if access not in ("in", "out", "inout"):
        raise DesignError("kernel signature", f"buffer '{name}' has access={access!r}", loc=loc,
                          limit="'in', 'out' or 'inout'", found=repr(access),
                          fix="say whether the kernel reads it, writes it, or both")
    if blocks is not None and not _divides_blocks(type, blocks):
        raise DesignError("kernel signature", f"buffer '{name}' ({type}) has blocks="
                          f"{shown(blocks)}", loc=loc,
                          limit="(block rows, block cols) dividing a 2-D tile",
                          found=shown(blocks), fix="give blocks that tile the buffer's 2-D shape")
    if blocks is not None:  # plain ints: numpy's given too
        blocks = (as_int(blocks[0]) or 0, as_int(blocks[1]) or 0)
    return KernelArg(name=name, kind="buffer", type=type, dtype=type.dtype, access=access,
                     blocks=blocks)


def _divides_blocks(t: TensorType, blocks: object) -> bool:
    if not (isinstance(blocks, tuple) and len(blocks) == 2 and len(t.shape) == 2):
        return False
    sizes = [as_int(b) for b in blocks]  # numpy's integers too
    return all(b is not None and b > 0 and s % b == 0 for b, s in zip(sizes, t.shape))


def scalar(name: str, dt: DType | str | Any, *, equals: int | None = None,
           narrows_to: DType | str | Any | None = None) -> KernelArg:
    """A scalar parameter passed by value: ``scalar("n", i32)`` (or ``np.int32``).

    ``equals=1024`` says 1024 is the one value the kernel is right for: its C++ is compiled for
    it and ignores the argument (an element count fixed by a template parameter), or reads it
    but its buffers are sized for it (a Riallto kernel's width): ``aiedsl check`` then refuses
    any other value.
    ``narrows_to=i16`` says the C++ converts the scalar to that narrower type before using it
    (``(int16_t)s``): ``aiedsl check`` then refuses a value outside its range, which would wrap
    on the NPU. It is narrower than the scalar's type, or an integer type of its width and the
    other signedness (``scalar("n", i32, narrows_to=u32)`` for ``uint32_t n``). Both hold
    for a value passed by a core and for every ``rt.rtp_write`` into an rtp slot a core
    passes.
    """
    loc = caller_loc()
    name = check_name(name, "kernel argument", loc)
    d = lookup_dtype(dt, loc)
    if equals is not None and d.is_float:
        raise DesignError("kernel signature", f"scalar '{name}' ({d.name}) has "
                          f"equals={equals!r}, which is for integer scalars", loc=loc,
                          limit="equals= on an integer scalar (an element count)",
                          found=d.name, fix="declare the scalar with an integer type, or leave "
                          "equals= out")
    if equals is not None and as_int(equals) is None:
        raise DesignError("kernel signature", f"scalar '{name}' has equals={shown(equals)}",
                          loc=loc, limit="an int", found=shown(equals),
                          fix="give the one value the C++ is compiled for")
    equals = None if equals is None else as_int(equals)  # numpy's integers as plain ints
    narrow = None if narrows_to is None else lookup_dtype(narrows_to, loc)
    if narrow is not None and narrow.is_float != d.is_float:
        raise DesignError("kernel signature", f"scalar '{name}' ({d.name}) has "
                          f"narrows_to={narrow.name}", loc=loc,
                          limit=f"{'a float' if d.is_float else 'an integer'} type, as "
                          f"{d.name} is", found=narrow.name,
                          fix="give the type the C++ converts the scalar to, or leave it out")
    if narrow is not None and (narrow.itemsize > d.itemsize or narrow == d or (
            narrow.itemsize == d.itemsize and d.is_float)):
        # a wider type bypasses the scalar-size rule: the core passes the scalar's bytes and
        # the C++ reads the wider type's. The same width of the other signedness is kept (an
        # rtp slot's i32 for a uint32_t: check holds the values to both ranges)
        same = narrow == d
        other = {"i": "u", "u": "i"}.get(d.name[0], "") + d.name[1:] if not d.is_float else ""
        raise DesignError(
            "kernel signature", f"scalar '{name}' ({d.name}) has narrows_to={narrow.name}, "
            + ("its own type" if same else "a wider type"), loc=loc,
            limit=f"a type narrower than {d.name}" + (f", or {other}" if other else "")
            + ": the type the C++ converts the scalar to", found=narrow.name + (
                "" if same else f" ({narrow.itemsize} bytes; {d.name} has {d.itemsize})"),
            fix="leave narrows_to= out: the C++ converts nothing" if same else
            f"declare the scalar with the type the C++ takes, scalar('{name}', {narrow.name}), "
            "without narrows_to=")
    return KernelArg(name=name, kind="scalar", dtype=d.name, equals=equals,
                     narrows_to=None if narrow is None else narrow.name)
