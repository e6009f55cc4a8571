"""What a core holds when it calls a kernel: only elements it has acquired and not released.

A kernel given an element after its release (used after its ``with`` block, or a window element
a loop iteration already gave back) reads or writes a buffer its DMA may be refilling: on the
NPU a race, in the simulator stale data that may well compare equal.
"""

from __future__ import annotations

from itertools import count

from aiedsl.errors import DesignError
from aiedsl.ir.core_ops import Acquire, BufferArg, Call, Loop, Op, Release
from aiedsl.ir.cores import Core
from aiedsl.ir.design import Design
from aiedsl.ir.loc import Loc


def check_held_buffers(d: Design) -> None:
    """A kernel call reads and writes only elements its core holds: acquired and not yet
    released. Run after :func:`~aiedsl.checks.hangs.check_hangs`: every loop body is balanced,
    so walking each body twice follows the window from one iteration into the next."""
    for core in d.cores:
        _held(core, core.body, {}, {}, {}, count())


Window = dict[tuple[str, str], list[int]]
"""Per (fifo, port): the elements a core holds, oldest first, each a number of its own."""


def _held(core: Core, ops: tuple[Op, ...], held: Window,
          views: dict[str, tuple[tuple[str, str], list[int], Acquire]],
          released: dict[int, Loc], ids: count) -> None:
    for op in ops:
        if isinstance(op, Acquire):  # holds the first `count`, taking only what is missing
            key = (op.fifo, op.port)
            window = held.setdefault(key, [])
            window.extend(next(ids) for _ in range(op.count - len(window)))
            views[op.result] = (key, window[:op.count], op)
        elif isinstance(op, Release):  # the oldest go first
            window = held.get((op.fifo, op.port), [])
            for element in window[:op.count]:
                released[element] = op.loc
            del window[:op.count]
        elif isinstance(op, Call):
            for arg in op.args:
                if not isinstance(arg, BufferArg):
                    continue
                which, elements, acq = views[arg.value]
                element = elements[arg.index]
                if element in held.get(which, []):
                    continue
                gone = released[element]
                raise DesignError(
                    "released buffer", f"{core.name} passes element {arg.index} of its "
                    f"acquire of '{acq.fifo}' ({acq.port}) to '{op.kernel}' after releasing it",
                    loc=op.loc, limit="a kernel reads and writes only what its core holds: "
                    "acquired and not yet released", found=f"released at line {gone.line}",
                    related=[("the acquire", acq.loc), ("the release", gone)],
                    fix="call the kernel before the release (inside the `with` block), or "
                    "acquire the element again")
        elif isinstance(op, Loop):
            for _ in range(min(op.count, 2)):  # the second pass meets the first one's window
                _held(core, op.body, held, views, released, ids)
