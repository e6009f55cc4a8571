"""Which NPU generation the machine's NPU is, from the name XRT gives it, and whether a design
built for one generation may be loaded on it.

An xclbin is built for one generation (npu1: Phoenix and Hawk Point, AIE2; npu2: Strix, Strix
Halo, Krackan, Gorgon Point, AIE2P): loaded on the other, it fails in XRT or runs wrong.
mlir-aie's own host runtime reads the device's name (``device.get_info(pyxrt.xrt_info_device.name)``
in ``XRTHostRuntime.__init__``, ``python/utils/hostruntime/xrtruntime/hostruntime.py``), maps it to
a generation with ``NPU_MODELS`` and refuses a kernel built for another device
(``HostRuntime.check_device_consistency``, ``python/utils/hostruntime/hostruntime.py``). aiedsl
reads the same name with the same table, before it loads anything. A name it does not know, or
one it cannot read, is said, and the run goes on: refusing would stop a new NPU that works.

Example
-------
>>> npu_generation("RyzenAI-npu1"), npu_generation("NPU Strix Halo")
('npu1', 'npu2')
>>> npu_generation("RyzenAI-npu10") is None   # the driver's npu10 is neither
True
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from aiedsl.errors import ToolchainError
from aiedsl.targets import get_target

NPU_MODELS: dict[str, tuple[str, ...]] = {
    "npu1": ("npu1", "Phoenix"),
    "npu2": ("npu4", "Strix", "npu5", "Strix Halo", "npu6", "Krackan", "Gorgon Point"),
}
"""The words of a device name that mean each generation: mlir-aie's ``XRTHostRuntime.NPU_MODELS``
(hostruntime.py, as of mlir-aie 032d8b2c), tried in its order. The names are the amdxdna driver's:
``RyzenAI-npu1`` (xdna-driver ``npu1_regs.c``), ``RyzenAI-npu4`` to ``RyzenAI-npu6``, and by
revision ``NPU Strix``, ``NPU Krackan 1``, ``NPU Strix Halo``, ``NPU Gorgon Point 1``
(``npu4_regs.c``). The driver's ``RyzenAI-npu2`` (an early Strix, ``npu2_regs.c``) is in neither
list, as in mlir-aie: it is not known."""


def npu_generation(name: str) -> str | None:
    """The generation (``npu1``, ``npu2``) a device ``name`` means, None when no word of
    :data:`NPU_MODELS` is in it. mlir-aie tests each word as a substring; a word ending in a
    digit here must not be followed by another digit, since the driver also names an
    ``RyzenAI-npu10`` (``npu10_regs.c``, of a later family), which holds ``npu1``."""
    for generation, words in NPU_MODELS.items():
        for word in words:
            tail = r"(?!\d)" if word[-1].isdigit() else ""
            if re.search(re.escape(word) + tail, name):
                return generation
    return None


@dataclass(frozen=True)
class NpuName:
    """What XRT calls the machine's NPU, and the generation that means."""

    name: str | None
    """The device's name (None when it could not be read)."""
    generation: str | None
    """``npu1`` or ``npu2``; None when the name is unknown or unread."""
    unread: str = ""
    """Why the name could not be read (pyxrt's words)."""

    def describe(self) -> str:
        """The name and what it means, as ``doctor`` and a run say it."""
        if self.name is None:
            return f"XRT did not give its name ({self.unread})"
        if self.generation is None:
            return f"'{self.name}': a name aiedsl does not know as npu1 or npu2"
        return f"'{self.name}': an {self.generation}"


def read_npu_name(pyxrt: Any, device: Any) -> NpuName:
    """The name of ``device`` as mlir-aie reads it (``get_info(xrt_info_device.name)``) and its
    generation; a pyxrt that cannot say (an older one without ``xrt_info_device``, a driver
    error) gives an unread name, never an exception."""
    try:
        name = str(device.get_info(pyxrt.xrt_info_device.name)).strip()
    except Exception as e:  # pyxrt raises RuntimeError subclasses with the driver's text
        return NpuName(None, None, f"{type(e).__name__}: {e}" if str(e) else type(e).__name__)
    return NpuName(name, npu_generation(name))


def unchecked(npu: NpuName, design: str, device: str) -> str:
    """What a run on an NPU whose generation is not known says (empty when it is known)."""
    if npu.generation is not None:
        return ""
    return (f"; not checked against the {get_target(device).family} {design} was built for "
            f"({device})")


def wrong_generation(npu: NpuName, design: str, device: str) -> ToolchainError | None:
    """The error for design ``design``, built for ``device``, on an NPU of another generation
    (None when it is the same one, or not known: a run then goes on and says so)."""
    built = get_target(device).family
    if npu.generation is None or npu.generation == built:
        return None
    return ToolchainError(
        "npu", f"{design} is built for {device}, an {built} device, but this machine's NPU is "
        f"an {npu.generation} (XRT names it '{npu.name}')", exit_code=4,
        limit="an xclbin runs on the NPU generation it was built for",
        fix=f"build it for this NPU with --device {npu.generation} (device='{npu.generation}' "
            f"from Python), or run it on an {built} machine; --target sim runs it on the "
            "simulator")
