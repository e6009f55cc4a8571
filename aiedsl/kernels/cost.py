"""``aiedsl kernel cost``: a library kernel's declared cost model, against the core's peak and,
where one exists, a published measurement."""

from __future__ import annotations

from aiedsl.errors import DesignError
from aiedsl.ir import TensorType
from aiedsl.kernels import library
from aiedsl.targets import get_target

DISAGREE = 0.15
"""Model and publication further apart than this are called out."""


def estimate(name: str, shape: str, dt: str, device: str) -> list[str]:
    """Lines describing kernel ``name`` at ``shape`` (``64x104x64``, ``8x256``, ``4096``)."""
    target = get_target(device)
    dims = tuple(int(x) for x in shape.lower().split("x"))
    if name == "matmul":
        if len(dims) != 3:
            raise DesignError("kernel cost", f"matmul needs MxKxN, got {shape}",
                              fix="--shape 64x64x64")
        k = library.matmul(*dims, dt, device=device).ir
    elif name in ("reduce_sum", "reduce_max"):
        k = getattr(library, name)(*dims, dt).ir
    elif name == "scale":
        k = library.scale(dims[0]).ir
    elif name in ("zero", "passthrough", "add", "mul", "relu"):
        k = getattr(library, name)(TensorType(shape=dims, dtype=dt)).ir
    else:
        raise DesignError("kernel cost", f"no library kernel called {name!r}",
                          fix="one of matmul, zero, passthrough, scale, add, mul, relu, "
                              "reduce_sum, reduce_max")
    lines = [f"{k.symbol} on {device}: {k.cycles:,} cycles per call "
             f"({k.cycles / target.clock_hz * 1e6:.2f} us at {target.clock_hz / 1e9:g} GHz)",
             f"  model: {k.cost}"]
    if name == "matmul":
        macs = dims[0] * dims[1] * dims[2]
        out_dt = library.MATMUL_OUT[dt]
        peak = target.macs_per_cycle[f"{dt}_{out_dt}"]
        per_cycle = macs / k.cycles
        lines.append(f"  {per_cycle:.1f} MACs per cycle of the core's peak {peak}: "
                     f"{per_cycle / peak:.0%}")
        published = library.PUBLISHED.get((target.family, dt, dims))
        if target.family != "npu1":
            lines.append("  not calibrated for this device: the per-patch constant is npu1's "
                         "and loads are taken at 64 bytes per cycle")
        if published:
            value, source = published
            off = per_cycle / value - 1
            lines.append(f"  published: {value:g} MACs per cycle ({source}); the model is "
                         f"{abs(off):.1%} {'above' if off > 0 else 'below'} it"
                         + (f": MORE THAN {DISAGREE:.0%} APART, trust the measurement"
                            if abs(off) > DISAGREE else ""))
    elif k.ops:
        lines.append(f"  {k.ops / k.cycles:.1f} operations per cycle")
    return lines
