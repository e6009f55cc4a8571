"""Every rule a user can break: a small broken design each, and the whole message it gets.

Each test writes a design with the ``design_file`` fixture (so locations read ``d.py:LINE``),
loads and checks it, and compares the rendered :class:`~aiedsl.errors.DesignError` in full.
The CLI tests at the end run ``python -m aiedsl.cli`` on a broken design.
"""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
from pathlib import Path
from typing import Callable

import pytest

import numpy as np

from aiedsl.checks import check_design
from aiedsl.checks.resources import TileUsage, Use, _check_tile
from aiedsl.errors import DesignError, display_path
from aiedsl.ir.loc import Loc
from aiedsl.loader import load_design, load_from_command_line
from aiedsl.sim import simulate
from aiedsl.targets import get_target
from tests.command_line import run_command

DesignFile = Callable[..., Path]


def check_error(path: Path, defines: dict[str, str] | None = None) -> str:
    """Load and check ``path``; return the message of the DesignError it must raise."""
    with pytest.raises(DesignError) as excinfo:
        check_design(load_design(path, defines).ir)
    return str(excinfo.value)


def load_error(path: Path | str, defines: dict[str, str] | None = None) -> str:
    """Load ``path``; return the message of the DesignError that loading (tracing) raises."""
    with pytest.raises(DesignError) as excinfo:
        load_design(path, defines)
    return str(excinfo.value)


def cli_load_error(path: Path | str, defines: dict[str, str]) -> str:
    """:func:`load_error` for ``-D`` text, as the command line loads a design (its messages
    in -D words: from Python, in defines= words at the caller's line)."""
    with pytest.raises(DesignError) as excinfo:
        load_from_command_line(path, [f"{k}={v}" for k, v in defines.items()])
    return str(excinfo.value)


def test_l1_memory_three_double_buffered_f32_tiles(design_file: DesignFile) -> None:
    """Three 64x64 f32 fifos, double-buffered, plus the stack: 97 KB of a 64 KB core. Each
    buffer is listed where its fifo is declared (where its depth is), the error at the largest
    (the last of equals)."""
    path = design_file('''
        from aiedsl import Tensor, design, f32, fifo, herd, runtime

        @design(device="npu1_1col")
        def d(A: Tensor[4096, f32], B: Tensor[4096, f32], C: Tensor[4096, f32]):
            a = fifo(Tensor[64, 64, f32], name="a")
            b = fifo(Tensor[64, 64, f32], name="b")
            c = fifo(Tensor[64, 64, f32], name="c")

            @herd()
            def core():
                with a.consume(), b.consume(), c.produce():
                    pass

            with runtime() as rt:
                rt.fill(a, A)
                rt.fill(b, B)
                rt.drain(c, C)
        ''')
    assert check_error(path) == (
        "d.py:7: error [core data memory]: core tile (0, 2) (core[0,0]) needs more data memory "
        "than it has\n"
        "  limit: 65,536 bytes\n"
        "  found: 99,328 bytes\n"
        "  d.py:9: stack: 1024\n"
        "  d.py:5: a 2 x 16384 B: 32768\n"
        "  d.py:6: b 2 x 16384 B: 32768\n"
        "  d.py:7: c 2 x 16384 B: 32768\n"
        "  fix: free 33,792 bytes: lower a fifo's depth (depth=1 single-buffers it), use smaller "
        "tiles, or give the core a smaller stack"
    )


def test_a_core_end_given_more_buffers_than_its_depth_says_why(design_file: DesignFile) -> None:
    """depth=3 on a fifo a core acquires three at a time gets 4 buffers at the core, as
    mlir-aie sizes a core's end across a DMA: the breakdown said 'rows 4 x ...' under depth=3,
    and nothing why (a newcomer's tester)."""
    path = design_file('''
        from aiedsl import Tensor, design, f32, fifo, herd, runtime

        @design(device="npu1_1col")
        def d(A: Tensor[12288, f32], C: Tensor[4096, f32]):
            a = fifo(Tensor[64, 64, f32], depth=3, name="a")
            c = fifo(Tensor[64, 64, f32], name="c")

            @herd()
            def core():
                w = a.acquire("consume", 3)
                with c.produce():
                    pass
                a.release("consume", 3)

            with runtime() as rt:
                rt.fill(a, A)
                rt.drain(c, C)
        ''')
    assert check_error(path).splitlines()[4] == (
        "  d.py:5: a 4 x 16384 B (depth=3: across a DMA a core's end gets one more than the most "
        "it acquires at once): 65536")


def test_memtile_memory_deep_link(design_file: DesignFile) -> None:
    """A forward holding five 128 KB elements: 640 KB of a 512 KB memtile."""
    path = design_file('''
        from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime

        @design(device="npu1_1col")
        def d(A: Tensor[32768, i32], C: Tensor[32768, i32]):
            a_l3 = fifo(Tensor[32768, i32], depth=5, name="a_l3")
            a = a_l3.forward(Tensor[1024, i32], depth=2, name="a")
            c = fifo(Tensor[1024, i32], name="c")

            @herd()
            def core():
                for _ in loop(32):
                    with a.consume(), c.produce():
                        pass

            with runtime() as rt:
                rt.fill(a_l3, A)
                rt.drain(c, C)
        ''')
    assert check_error(path) == (
        "d.py:6: error [memtile data memory]: memtile (0, 1) needs more data memory than it has\n"
        "  limit: 524,288 bytes\n"
        "  found: 655,360 bytes\n"
        "  d.py:6: a_l3 5 x 131072 B: 655360\n"
        "  fix: free 131,072 bytes: lower the depth of 'a_l3' (depth=4) or give its memtile end "
        "consumer_depth={\"memtile\": 4}, use smaller tiles, or split the data over more "
        "memtiles"
    )


def test_dma_channels_core_three_inputs(design_file: DesignFile) -> None:
    """A core has 2 input channels; three consumed fifos need 3."""
    path = design_file('''
        from aiedsl import Tensor, design, fifo, herd, i32, runtime

        @design(device="npu1")
        def d(A: Tensor[1024, i32], B: Tensor[1024, i32], C: Tensor[1024, i32],
              D: Tensor[1024, i32]):
            a = fifo(Tensor[1024, i32], name="a")
            b = fifo(Tensor[1024, i32], name="b")
            c = fifo(Tensor[1024, i32], name="c")
            out = fifo(Tensor[1024, i32], name="out")

            @herd()
            def core():
                with a.consume(), b.consume(), c.consume(), out.produce():
                    pass

            with runtime() as rt:
                rt.fill(a, A)
                rt.fill(b, B)
                rt.fill(c, C)
                rt.drain(out, D)
        ''')
    assert check_error(path) == (
        "d.py:13: error [core DMA input (S2MM) channels]: core tile (0, 2) (core[0,0]) needs "
        "more DMA input (S2MM) channels than it has\n"
        "  limit: 2\n"
        "  found: 3\n"
        "  d.py:13: a: 1\n"
        "  d.py:13: b: 1\n"
        "  d.py:13: c: 1\n"
        "  fix: use fewer fifos in this core (pack two inputs or two outputs into one fifo "
        "element), or move some work to another core"
    )


def test_dma_channels_memtile_seven_inputs(design_file: DesignFile) -> None:
    """A join of 7 parts needs 7 memtile input channels; a memtile has 6, whatever the device
    (a link's channels are all on its memtile), so the fix is a link over fewer parts."""
    path = design_file('''
        from aiedsl import Tensor, design, fifo, herd, i32, join, runtime

        @design(device="npu1_1col")
        def d(C: Tensor[7, 256, i32]):
            parts = [fifo(Tensor[256, i32], name=f"p{i}") for i in range(7)]
            out = join(parts, name="out")

            @herd(cols=1, rows=4)
            def core(x, y):
                for i in range(7):
                    if i % 4 == y:
                        with parts[i].produce():
                            pass

            with runtime() as rt:
                rt.drain(out, C)
        ''')
    assert check_error(path) == (
        "d.py:6: error [memtile DMA input (S2MM) channels]: the join of 7 parts into 'out' needs 7 "
        "DMA input (S2MM) channels on one memtile, and a memtile has 6\n"
        "  limit: 6 per memtile (a link's channels are all on its memtile)\n"
        "  found: 7\n"
        "  fix: join at most 6 parts per link: share them out over two joins (each drained into "
        "its own part of the host tensor), or make fewer, larger parts"
    )


def test_dma_channels_shim_three_outputs_pinned(design_file: DesignFile) -> None:
    """Three fills pinned to shim column 0: a shim tile has 2 output channels."""
    path = design_file('''
        from aiedsl import Tensor, design, fifo, herd, i32, runtime, shim

        @design(device="npu1")
        def d(A: Tensor[1024, i32], B: Tensor[1024, i32], C: Tensor[1024, i32]):
            a = fifo(Tensor[1024, i32], name="a", shim=shim(0))
            b = fifo(Tensor[1024, i32], name="b", shim=shim(0))
            c = fifo(Tensor[1024, i32], name="c", shim=shim(0))

            @herd(cols=3)
            def core(x, y):
                with [a, b, c][x].consume():
                    pass

            with runtime() as rt:
                rt.fill(a, A)
                rt.fill(b, B)
                rt.fill(c, C)
        ''')
    assert check_error(path) == (
        "d.py:17: error [shim DMA output (MM2S) channels]: shim tile (0, 0) needs more DMA "
        "output (MM2S) channels than it has\n"
        "  limit: 2\n"
        "  found: 3\n"
        "  d.py:15: a: 1\n"
        "  d.py:16: b: 1\n"
        "  d.py:17: c: 1\n"
        "  fix: pin a fifo's host end to another column with shim=shim(col) (fifo() and "
        "channel() take it)"
    )


def test_dma_channels_shim_device_wide(design_file: DesignFile) -> None:
    """Nine fills on npu1's four shim tiles (two output channels each): no pin can fit them,
    and the message says so for the whole device."""
    path = design_file('''
        from aiedsl import Tensor, design, fifo, herd, i32, runtime

        @design(device="npu1")
        def d(A: Tensor[9 * 256, i32]):
            fs = [fifo(Tensor[256, i32], name=f"f{i}") for i in range(9)]

            @herd(cols=3, rows=3)
            def core(x, y):
                with fs[3 * x + y].consume():
                    pass

            with runtime() as rt:
                for i, f in enumerate(fs):
                    rt.fill(f, A, (i * 256, [256], [1]))
        ''')
    assert check_error(path) == (
        "d.py:14: error [shim DMA output (MM2S) channels]: the design's host ends need 9 "
        "shim DMA output (MM2S) channels, and the 4 shim tiles of npu1 have 8\n"
        "  limit: 8 (2 per shim tile, 4 shim tiles): no choice of columns can fit them\n"
        "  found: 9 (the first 7 below, and 2 more)\n"
        # all on one line: in their names' order, numbers as numbers (the shim tiles' order
        # listed f8 before f6 under "the first 7": a tester)
        + "".join(f"  d.py:14: f{i}\n" for i in range(7)) +
        "  fix: fill fewer fifos from the host: one fifo filled once can feed several cores, "
        "split at a memtile (f.split(...)) or consumed by each (a broadcast), or a device with "
        "more columns (--device npu2_5col)"
    )


def test_dma_channels_shim_device_wide_lists_every_fifo(design_file: DesignFile) -> None:
    """A tester's four fills on npu1_1col's one shim tile (two output channels): the error
    said "found: 4" under three of the four fifos."""
    path = design_file('''
        from aiedsl import Tensor, design, fifo, herd, i32, runtime

        @design(device="npu1_1col")
        def d(A: Tensor[4 * 256, i32]):
            fs = [fifo(Tensor[256, i32], name=f"f{i}") for i in range(4)]

            @herd()
            def core():
                with fs[0].consume(), fs[1].consume(), fs[2].consume(), fs[3].consume():
                    pass

            with runtime() as rt:
                rt.fill(fs[0], A, (0, [256], [1]))
                rt.fill(fs[1], A, (256, [256], [1]))
                rt.fill(fs[2], A, (512, [256], [1]))
                rt.fill(fs[3], A, (768, [256], [1]))
        ''')
    assert check_error(path) == (
        "d.py:15: error [shim DMA output (MM2S) channels]: the design's host ends need 4 "
        "shim DMA output (MM2S) channels, and the 1 shim tile of npu1_1col has 2\n"
        "  limit: 2 (2 per shim tile, 1 shim tile): no choice of columns can fit them\n"
        "  found: 4\n"
        "  d.py:13: f0\n"
        "  d.py:14: f1\n"
        "  d.py:15: f2\n"
        "  d.py:16: f3\n"
        "  fix: fill fewer fifos from the host: one fifo filled once can feed several cores, "
        "split at a memtile (f.split(...)) or consumed by each (a broadcast); a device with "
        "more columns would not do: the core at (0, 2) also needs 4 DMA input channels, and "
        "every core has 2"
    )


def test_dma_channels_shim_three_inputs_pinned(design_file: DesignFile) -> None:
    """Three drains pinned to shim column 0: a shim tile has 2 input channels."""
    path = design_file('''
        from aiedsl import Tensor, design, fifo, herd, i32, runtime, shim

        @design(device="npu1")
        def d(A: Tensor[1024, i32], B: Tensor[1024, i32], C: Tensor[1024, i32]):
            a = fifo(Tensor[1024, i32], name="a", shim=shim(0))
            b = fifo(Tensor[1024, i32], name="b", shim=shim(0))
            c = fifo(Tensor[1024, i32], name="c", shim=shim(0))

            @herd(cols=3)
            def core(x, y):
                with [a, b, c][x].produce():
                    pass

            with runtime() as rt:
                rt.drain(a, A)
                rt.drain(b, B)
                rt.drain(c, C)
        ''')
    assert check_error(path) == (
        "d.py:17: error [shim DMA input (S2MM) channels]: shim tile (0, 0) needs more DMA input "
        "(S2MM) channels than it has\n"
        "  limit: 2\n"
        "  found: 3\n"
        "  d.py:15: a: 1\n"
        "  d.py:16: b: 1\n"
        "  d.py:17: c: 1\n"
        "  fix: pin a fifo's host end to another column with shim=shim(col) (fifo() and "
        "channel() take it)"
    )


def test_bds_core_deep_fifos(design_file: DesignFile) -> None:
    """Two fifos whose core ends hold 9 buffers each: 18 BDs of 16. (A single depth gives a
    core end only one more buffer than its largest acquire, as mlir-aie sizes it; the per-end
    depths give the core ends their 9.)"""
    path = design_file('''
        from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime

        @design(device="npu1_1col")
        def d(A: Tensor[1024, i32], C: Tensor[1024, i32]):
            a = fifo(Tensor[64, i32], depth=2, consumer_depth=9, name="a")
            c = fifo(Tensor[64, i32], depth=9, consumer_depth=2, name="c")

            @herd()
            def core():
                for _ in loop(16):
                    with a.consume(), c.produce():
                        pass

            with runtime() as rt:
                rt.fill(a, A)
                rt.drain(c, C)
        ''')
    assert check_error(path) == (
        "d.py:11: error [core buffer descriptors]: core tile (0, 2) (core[0,0]) needs more "
        "buffer descriptors than it has\n"
        "  limit: 16\n"
        "  found: 18\n"
        "  d.py:11: a: 9\n"
        "  d.py:11: c: 9\n"
        "  fix: lower the buffers of this core's fifo ends, one BD each ('a' 9 (consumer_depth=9, "
        "line 5), 'c' 9 (depth=9, line 6)), acquire fewer elements at once (given one depth, a "
        "core's end of a fifo it consumes takes one buffer, and BD, more than its largest "
        "acquire), or move a fifo to another core"
    )


def test_bds_memtile_channel_parity(design_file: DesignFile) -> None:
    """A depth-13 forward uses 13 BDs on each side, both on even channels (BDs 0-23)."""
    path = design_file('''
        from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime

        @design(device="npu1_1col")
        def d(A: Tensor[1024, i32], C: Tensor[1024, i32]):
            a_l3 = fifo(Tensor[64, i32], depth=13, name="a_l3")
            a = a_l3.forward(depth=2, name="a")
            c = fifo(Tensor[64, i32], name="c")

            @herd()
            def core():
                for _ in loop(16):
                    with a.consume(), c.produce():
                        pass

            with runtime() as rt:
                rt.fill(a_l3, A)
                rt.drain(c, C)
        ''')
    assert check_error(path) == (
        "d.py:6: error [memtile buffer descriptors of even channels]: memtile (0, 1) needs more "
        "buffer descriptors of even channels than it has\n"
        "  limit: 24 (BDs 0-23)\n"
        "  found: 26\n"
        "  d.py:6: a_l3: 13\n"
        "  d.py:6: a: 13\n"
        "  fix: one link takes them all ('a_l3' and 'a'), so another memtile would not help: "
        "lower the depth of 'a_l3' (depth=12) or give its memtile end consumer_depth="
        "{\"memtile\": 12} (d.py:5; 13 buffers now, each taking 2 of the 24 BDs)"
    )
    # the number it gives fits (it gave none: a tester); the core, which writes nothing into
    # 'c', is refused next
    fixed = design_file(path.read_text().replace("depth=13", "depth=12"), "fixed.py")
    assert "error [unwritten element]" in check_error(fixed)


def test_bds_shim_transfers_in_flight(design_file: DesignFile) -> None:
    """18 runtime transfers before the first wait, on one shim tile of 16 BDs."""
    path = design_file('''
        from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime

        @design(device="npu1_1col")
        def d(A: Tensor[17, 64, i32], C: Tensor[17, 64, i32]):
            a = fifo(Tensor[64, i32], name="a")
            c = fifo(Tensor[64, i32], name="c")

            @herd()
            def core():
                for _ in loop(17):
                    with a.consume(), c.produce():
                        pass

            with runtime() as rt:
                for i in range(17):
                    rt.fill(a, A, (i * 64, [64], [1]))
                rt.drain(c, C)
        ''')
    assert check_error(path) == (
        "d.py:17: error [shim buffer descriptors]: shim tile (0, 0) needs more buffer "
        "descriptors than it has\n"
        "  limit: 16\n"
        "  found: 18\n"
        "  d.py:17: runtime transfers in flight: 18\n"
        "  fix: move a tiled tensor in one transfer (rt.fill(f, t, tiles(t, (th, tw))) is one BD "
        "for all its tiles), wait (rt.sync()) between batches of runtime transfers, or spread "
        "the fifos' host ends over more columns (shim=shim(col))"
    )


def test_dma_pattern_size_over_1023(design_file: DesignFile) -> None:
    """A non-linear runtime pattern with a dimension of 1100."""
    path = design_file('''
        from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime

        @design(device="npu1_1col")
        def d(A: Tensor[4400, i32], C: Tensor[2200, i32]):
            a = fifo(Tensor[200, i32], name="a")
            c = fifo(Tensor[200, i32], name="c")

            @herd()
            def core():
                for _ in loop(11):
                    with a.consume(), c.produce():
                        pass

            with runtime() as rt:
                rt.fill(a, A, (0, [1100, 2], [4, 1]))
                rt.drain(c, C)
        ''')
    assert check_error(path) == (
        "d.py:15: error [dma pattern]: rt.fill of 'a' from 'A' breaks a DMA rule\n"
        "  limit: the second innermost size <= 1023 (mlir-aie's verifyStridesWraps: the "
        "shim's 10-bit wrap fields)\n"
        "  found: 1100 (offset 0, sizes [1, 1, 1100, 2], strides [0, 0, 4, 1])\n"
        "  fix: split that dimension in two, or make it the third innermost (a shim has no "
        "wrap field there)"
    )
    # the third innermost has no wrap field on a shim (verifyStridesWraps checks sizes 0 and 1;
    # the lowering leaves d2's size to the buffer length): a tester's 1024 there was refused
    path.write_text(path.read_text().replace("(0, [1100, 2], [4, 1])",
                                             "(0, [1100, 1, 2], [4, 0, 1])"))
    assert "[dma pattern]" not in check_error(path)  # (its core writes nothing: another rule)


def test_dma_pattern_innermost_words_over_1023(design_file: DesignFile) -> None:
    """A non-linear pattern whose contiguous run is 1100 words."""
    path = design_file('''
        from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime

        @design(device="npu1_1col")
        def d(A: Tensor[2, 2048, i32], C: Tensor[2200, i32]):
            a = fifo(Tensor[1100, i32], name="a")
            c = fifo(Tensor[1100, i32], name="c")

            @herd()
            def core():
                for _ in loop(2):
                    with a.consume(), c.produce():
                        pass

            with runtime() as rt:
                rt.fill(a, A, (0, [2, 1100], [2048, 1]))
                rt.drain(c, C)
        ''')
    assert check_error(path) == (
        "d.py:15: error [dma pattern]: rt.fill of 'a' from 'A' breaks a DMA rule\n"
        "  limit: innermost size <= 1023 words of 4 bytes\n"
        "  found: 1100 words (offset 0, sizes [1, 1, 2, 1100], strides [0, 0, 2048, 1])\n"
        "  fix: split the innermost dimension in two, 2 x 550: sizes [..., 2, 550] strides "
        "[..., 550, 1] (550 elements are 550 words; a size-1 dimension outside it makes room)"
    )
    # the fix, applied, passes the rule (halving 2,048 words left 1,024: an IRON porter's find)
    path.write_text(path.read_text().replace("(0, [2, 1100], [2048, 1])",
                                             "(0, [2, 2, 550], [2048, 550, 1])"))
    assert "[dma pattern]" not in check_error(path)  # (what is left: the design's empty core)


SPELT = '''
    from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
    from aiedsl.kernels import passthrough
    @design(device="npu1_1col")
    def d(A: Tensor[4096, i32], C: Tensor[4096, i32]):
        a = fifo(Tensor[1024, i32], name="a")
        c = fifo(Tensor[1024, i32], name="c")

        @herd()
        def core():
            for _ in loop(4):
                with a.consume() as x, c.produce() as y:
                    passthrough(Tensor[1024, i32])(x, y)

        with runtime() as rt:
            rt.fill(a, A, {pattern})
            rt.drain(c, C)
    '''
"""A fill whose pattern the tests choose (line 15)."""


def test_a_contiguous_run_spelt_over_two_dimensions_is_held_to_the_wraps(
        design_file: DesignFile) -> None:
    """mlir-aie moves only [*, 1, 1, n][*, 0, 0, 1] as a plain linear transfer; aiedsl took
    any contiguous spelling for one and passed [1, 1, 2, 2048], which aiecc refuses (2,048
    words in a 1,023-word wrap). The fix names the spelling that is linear."""
    path = design_file(SPELT.format(pattern="(0, [2, 2048], [2048, 1])"))
    assert check_error(path) == (
        "d.py:15: error [dma pattern]: rt.fill of 'a' from 'A' breaks a DMA rule\n"
        "  limit: innermost size <= 1023 words of 4 bytes\n"
        "  found: 2048 words (offset 0, sizes [1, 1, 2, 2048], strides [0, 0, 2048, 1])\n"
        "  fix: this is one contiguous run: write it as (0, [4096], [1]), which mlir-aie moves "
        "as a plain linear transfer, free of these limits")
    check_design(load_design(design_file(SPELT.format(pattern="(0, [4096], [1])"), "one.py")).ir)


def test_a_contiguous_run_past_its_tensor_is_said_out_of_bounds(
        design_file: DesignFile) -> None:
    """The one-run fix suggested (4096, [4096], [1]), as far past A's end as the pattern it
    rewrote (a tester): the bounds are said first."""
    path = design_file(SPELT.format(pattern="(4096, [4, 1024], [1024, 1])"))
    assert check_error(path) == (
        "d.py:15: error [dma pattern]: rt.fill of 'a' from 'A' breaks a DMA rule\n"
        "  limit: every index inside 'A' (4096 elements)\n"
        "  found: index 8191 (offset 4096, sizes [1, 1, 4, 1024], strides [0, 0, 1024, 1])\n"
        "  fix: shrink the sizes, the strides or the offset")


def test_a_linear_transfer_spelt_with_strides_on_size_one_dimensions_is_linear(
        design_file: DesignFile) -> None:
    """[1, 1, 1, 4096] is one run whatever its size-1 dimensions' strides say: it is emitted
    as [0, 0, 0, 1] there, mlir-aie's linear transfer, free of the 1,023-word wrap."""
    check_design(load_design(design_file(SPELT.format(
        pattern="(0, [1, 1, 1, 4096], [0, 3, 7, 1])"))).ir)


def test_only_the_outermost_dimension_may_repeat(design_file: DesignFile) -> None:
    """verifyStridesWraps: 'Stride must be a positive integer' for the three inner dimensions;
    a repeat (stride 0) goes in the iteration dimension."""
    path = design_file(SPELT.format(pattern="(0, [1, 2, 2, 512], [0, 0, 512, 1])"))
    assert check_error(path) == (
        "d.py:15: error [dma pattern]: rt.fill of 'a' from 'A' breaks a DMA rule\n"
        "  limit: a stride >= 1 on every dimension but the outermost (mlir-aie's "
        "verifyStridesWraps: 'Stride must be a positive integer'; only the iteration dimension "
        "may repeat with stride 0)\n"
        "  found: size 2 with stride 0 (offset 0, sizes [1, 2, 2, 512], strides [0, 0, 512, 1])\n"
        "  fix: put the repeat in the outermost of the four dimensions: (0, [2, 1, 2, 512], "
        "[0, 0, 512, 1]) (a pattern of fewer is padded with size-1 dimensions on the left, "
        "outermost; tiles(..., repeat=n) repeats this way)")
    # IRON's three-dimension repeat, padded on the left, gets the pattern it meant (an IRON
    # porter was told to put the repeat outermost, where it was)
    path.write_text(path.read_text().replace("(0, [1, 2, 2, 512], [0, 0, 512, 1])",
                                             "(0, [2, 2, 512], [0, 512, 1])"))
    assert check_error(path).splitlines()[-1] == (
        "  fix: put the repeat in the outermost of the four dimensions: (0, [2, 1, 2, 512], "
        "[0, 0, 512, 1]) (a pattern of fewer is padded with size-1 dimensions on the left, "
        "outermost; tiles(..., repeat=n) repeats this way)")
    fixed = path.read_text().replace("(0, [2, 2, 512], [0, 512, 1])",
                                     "(0, [2, 1, 2, 512], [0, 0, 512, 1])")
    path.write_text(fixed)
    assert "stride >= 1" not in (check_error(path) or "")


def test_a_drain_that_repeats_is_told_its_stride_is_likely_wrong(design_file: DesignFile) -> None:
    """A drain's stride-0 dimension got the fill's fix, to move the repeat outermost, which
    led to an output-coverage error: a drain has nothing to repeat (an IRON porter's find)."""
    path = design_file(SPELT.format(pattern="(0, [4096], [1])").replace(
        "rt.drain(c, C)", "rt.drain(c, C, (0, [1, 2, 2, 1024], [0, 0, 0, 1]))"))
    assert check_error(path).splitlines()[-1] == (
        "  fix: give that dimension the stride that moves it on through 'C': a drain has "
        "nothing to repeat (it would write the same host elements again, and leave others "
        "unwritten)")


def test_a_repeated_linear_transfer_is_free_of_the_wraps(design_file: DesignFile) -> None:
    """[2, 1, 1, 2048][0, 0, 0, 1]: linear with a repeat (isLinearTransfer leaves the
    iteration dimension out), so its 2,048 words need no split; it was refused."""
    from aiedsl.sim import simulate

    src = SPELT.replace("Tensor[4096, i32], C", "Tensor[2048, i32], C").format(
        pattern="(0, [2, 1, 1, 2048], [0, 0, 0, 1])")
    handle = load_design(design_file(src))
    check_design(handle.ir)
    result = simulate(handle, check=False)
    a = result.inputs["A"]
    assert (result.outputs["C"] == np.concatenate([a, a])).all()


SIZE_ONE = '''
    from aiedsl import Tensor, bf16, design, fifo, herd, runtime
    from aiedsl.kernels import passthrough

    @design(device="npu1_1col")
    def d(inp: Tensor[64, bf16], out: Tensor[64, bf16]):
        a = fifo(Tensor[64, bf16], name="a")
        b = fifo(Tensor[64, bf16], name="b")
        copy = passthrough(Tensor[64, bf16])

        @herd()
        def core():
            with a.consume() as s, b.produce() as t:
                copy(s, t)

        with runtime() as rt:
            rt.fill(a, inp, {pattern})
            rt.drain(b, out, wait=True)

    @d.reference
    def reference(inp):
        return inp.copy()
    '''
"""A bf16 copy whose fill pattern the tests choose."""


@pytest.mark.parametrize("pattern, emitted", [
    # a reviewer's: stride 5 of a size-1 dimension is 10 bytes, which verifyStridesWraps
    # refuses ("Stride 2 is 5 elements * 2 bytes = 10 bytes, which is not divisible by 4")
    ("(0, [1, 1, 8, 8], [0, 5, 8, 1])", "[0, 0, 0, 0][1, 1, 8, 8][0, 0, 8, 1]"),
    # the iteration dimension's too, and one spelt with odd strides is a linear transfer
    ("(0, [1, 1, 1, 64], [3, 7, 9, 1])", "[0, 0, 0, 0][1, 1, 1, 64][0, 0, 0, 1]"),
    ("(0, [1, 2, 1, 32], [1, 32, 3, 1])", "[0, 0, 0, 0][1, 2, 1, 32][0, 32, 0, 1]"),
])
def test_a_size_one_dimensions_stride_is_emitted_as_0(design_file: DesignFile, pattern: str,
                                                     emitted: str) -> None:
    """A size-1 dimension never steps: aiedsl emits its stride as 0 (the innermost's as 1), so
    mlir-aie's check of every stride for whole words holds, and the run moves what it did."""
    from aiedsl.codegen.mlir import render_mlir

    handle = load_design(design_file(SIZE_ONE.format(pattern=pattern)))
    placed, _ = check_design(handle.ir)
    mlir = render_mlir(placed, get_target(placed.device))
    assert f"aiex.npu.dma_memcpy_nd(%inp{emitted})" in mlir
    assert simulate(handle).passed


def test_a_size_one_innermost_dimension_keeps_stride_1(design_file: DesignFile) -> None:
    """An i32 column read one element at a time, written with innermost stride 0: emitted with
    stride 1 there (what verifyStridesWraps exempts), the offset on it."""
    from aiedsl.ir.types import Pattern

    p = Pattern(offset=4, sizes=(1, 1, 64, 1), strides=(2, 9, 64, 0))
    assert p.per_dimension_offsets() == ((0, 0, 0, 4), (0, 0, 64, 1))


TWO_DRAINS = '''
    import numpy as np
    from aiedsl import Tensor, design, fifo, herd, i32, runtime
    from aiedsl.kernels import vector_scalar
    @design(device="npu1_1col")
    def d(a: Tensor[1024, i32], b: Tensor[1024, i32]):
        i0 = fifo(Tensor[1024, i32], name="i0"); i1 = fifo(Tensor[1024, i32], name="i1")
        o0 = fifo(Tensor[1024, i32], name="o0"); o1 = fifo(Tensor[1024, i32], name="o1")
        add = vector_scalar("add", Tensor[1024, i32])
        @herd(name="h0")
        def c0():
            with i0.consume() as x, o0.produce() as y:
                add(x, y, 1)
        @herd(name="h1")
        def c1():
            with i1.consume() as x, o1.produce() as y:
                add(x, y, 2)
        with runtime() as rt:
            rt.fill(i0, a)
            rt.fill(i1, a)
            rt.drain(o0, b){between}
            rt.drain(o1, b)
    @d.reference
    def ref(a):
        return a + 2
    '''
"""Two cores' results drained by two channels into the same elements of b (a tester's port of
MLIR-AIR's channel examples): the second drain at line 21."""


def test_two_drains_racing_for_an_element_are_refused(design_file: DesignFile) -> None:
    """The simulator said PASS or FAIL by the order the drains were issued; on the NPU the two
    channels run at once."""
    assert check_error(design_file(TWO_DRAINS.format(between=""))) == (
        "d.py:21: error [output race]: rt.drain of 'o1' writes elements of 'b' that the drain "
        "of 'o0' also writes, and nothing orders the two\n"
        "  limit: two drains of different fifos run on different channels at once: they write "
        "the same element only when a wait retired the first before the second was issued (else "
        "the element keeps whichever lands last)\n"
        "  found: element 0\n"
        "  d.py:20: the drain of 'o0'\n"
        "  fix: drain disjoint parts of the tensor, or wait for the first drain (rt.wait or "
        "rt.sync()) before issuing the second")


def test_a_wait_between_two_drains_orders_them(design_file: DesignFile) -> None:
    from aiedsl.sim import simulate

    handle = load_design(design_file(TWO_DRAINS.format(between="\n            rt.wait(o0)")))
    check_design(handle.ir)
    result = simulate(handle)
    assert result.passed  # the later drain's a + 2 is what b keeps


BYTES = SPELT.replace("i32", "u8").replace("Tensor[1024, u8]", "Tensor[1024, u8]")
"""SPELT with u8 elements."""


def test_a_linear_transfer_still_moves_whole_words_and_keeps_its_step_limit(
        design_file: DesignFile) -> None:
    """isLinearTransfer spares a linear transfer only the wrap limit: 'Transfer sizes must be
    multiples of 4 bytes' and the iteration stride's range and alignment still hold (a
    reviewer found all three passed once a repeat made the transfer linear)."""
    lines = [check_error(design_file(BYTES.format(pattern=pattern), f"d{i}.py")).splitlines()[1]
             for i, pattern in enumerate(["(0, [32, 1, 1, 2], [0, 0, 0, 1])",
                                          "(0, [2, 1, 1, 1024], [513, 0, 0, 1])"])]
    assert lines == [
        "  limit: the innermost run is a multiple of 4 bytes (mlir-aie's verifyStridesWraps: "
        "'Transfer sizes must be multiples of 4 bytes', linear transfers too)",
        "  limit: strides are multiples of 4 bytes (the iteration stride too: mlir-aie's "
        "verifyStridesWraps)"]
    big = SPELT.replace("Tensor[4096, i32], C", "Tensor[2100000, i32], C").format(
        pattern="(0, [2, 1, 1, 1024], [1048584, 0, 0, 1])")
    assert check_error(design_file(big, "big.py")).splitlines()[1] == (
        "  limit: each stride <= 1048576 words of 4 bytes (the shim BD's 20-bit step fields "
        "hold the stride less one; aiedsl's bound: mlir-aie's verifyStridesWraps lets one more "
        "through, which the field cannot hold)")


def test_dma_pattern_innermost_run_3_bytes(design_file: DesignFile) -> None:
    """3 i8 elements innermost: a run of 3 bytes, not whole 4-byte words."""
    path = design_file('''
        from aiedsl import Tensor, design, fifo, herd, i8, loop, runtime

        @design(device="npu1_1col")
        def d(A: Tensor[64, 4, i8], C: Tensor[192, i8]):
            a = fifo(Tensor[48, i8], name="a")
            c = fifo(Tensor[48, i8], name="c")

            @herd()
            def core():
                for _ in loop(4):
                    with a.consume(), c.produce():
                        pass

            with runtime() as rt:
                rt.fill(a, A, (0, [64, 3], [4, 1]))
                rt.drain(c, C)
        ''')
    assert check_error(path) == (
        "d.py:15: error [dma pattern]: rt.fill of 'a' from 'A' breaks a DMA rule\n"
        "  limit: the innermost run is a multiple of 4 bytes\n"
        "  found: 3 x 1 B = 3 B (offset 0, sizes [1, 1, 64, 3], strides [0, 0, 4, 1])\n"
        "  fix: make the innermost size a multiple of 4 elements"
    )


def test_dma_pattern_innermost_run_bf16_size_1(design_file: DesignFile) -> None:
    """A bf16 transpose spelled with innermost size 1 (stride 64): 2-byte runs."""
    path = design_file('''
        from aiedsl import Tensor, bf16, design, fifo, herd, loop, runtime

        @design(device="npu1_1col")
        def d(A: Tensor[64, 64, bf16], C: Tensor[4096, bf16]):
            a = fifo(Tensor[64, bf16], name="a")
            c = fifo(Tensor[64, bf16], name="c")

            @herd()
            def core():
                for _ in loop(64):
                    with a.consume(), c.produce():
                        pass

            with runtime() as rt:
                rt.fill(a, A, (0, [64, 64, 1], [1, 64, 64]))
                rt.drain(c, C)
        ''')
    assert check_error(path) == (
        "d.py:15: error [dma pattern]: rt.fill of 'a' from 'A' breaks a DMA rule\n"
        "  limit: the innermost run is a multiple of 4 bytes\n"
        "  found: 1 x 2 B = 2 B (offset 0, sizes [1, 64, 64, 1], strides [0, 1, 64, 64])\n"
        "  fix: make the innermost size a multiple of 2 elements"
    )


def test_dma_pattern_innermost_stride(design_file: DesignFile) -> None:
    """A bf16 transpose with the stride on the innermost dimension: the DMA moves 4-byte words,
    so a 2-byte element cannot be stepped over (mlir-aie's getHardwareStridesWraps would move
    the words in order, not the elements the pattern names)."""
    path = design_file('''
        from aiedsl import Tensor, bf16, design, fifo, herd, loop, runtime

        @design(device="npu1_1col")
        def d(A: Tensor[64, 64, bf16], C: Tensor[4096, bf16]):
            a = fifo(Tensor[64, bf16], name="a")
            c = fifo(Tensor[64, bf16], name="c")

            @herd()
            def core():
                for _ in loop(64):
                    with a.consume(), c.produce():
                        pass

            with runtime() as rt:
                rt.fill(a, A, (0, [64, 64], [1, 64]))
                rt.drain(c, C)
        ''')
    assert check_error(path) == (
        "d.py:15: error [dma pattern]: rt.fill of 'a' from 'A' breaks a DMA rule\n"
        "  limit: the innermost dimension is contiguous (stride 1) for 2-byte elements (the DMA "
        "moves whole 4-byte words: verifyStridesWraps passes a stride of whole words, and "
        "getHardwareStridesWraps steps the innermost dimension in words, so it would move runs "
        "of 2 elements 64 apart)\n"
        "  found: offset 0, sizes [1, 1, 64, 64], strides [0, 0, 1, 64]\n"
        "  fix: make the innermost dimension a contiguous run; move the stride outward (no DMA "
        "steps 2-byte elements one by one: to transpose or gather them, use 4-byte elements or "
        "a kernel)"
    )


def test_dma_pattern_shim_iterations(design_file: DesignFile) -> None:
    """100 rows in the outermost (iteration) dimension of a shim pattern."""
    path = design_file('''
        from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime

        @design(device="npu1_1col")
        def d(A: Tensor[100, 32, i32], C: Tensor[1600, i32]):
            a = fifo(Tensor[16, i32], name="a")
            c = fifo(Tensor[16, i32], name="c")

            @herd()
            def core():
                for _ in loop(100):
                    with a.consume(), c.produce():
                        pass

            with runtime() as rt:
                rt.fill(a, A, (0, [100, 1, 1, 16], [32, 0, 0, 1]))
                rt.drain(c, C)
        ''')
    assert check_error(path) == (
        "d.py:15: error [dma pattern]: rt.fill of 'a' from 'A' breaks a DMA rule\n"
        "  limit: outermost (iteration) size <= 64 on a shim DMA (its 6-bit iteration wrap "
        "holds the count less one: mlir-aie's NpuWriteBdOp::verify)\n"
        "  found: 100 (offset 0, sizes [100, 1, 1, 16], strides [32, 0, 0, 1])\n"
        "  fix: split the transfer into several fills or drains"
    )


def test_dma_pattern_past_end_of_tensor(design_file: DesignFile) -> None:
    """4096 elements from offset 64 of a 4096-element tensor."""
    path = design_file('''
        from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime

        @design(device="npu1_1col")
        def d(A: Tensor[4096, i32], C: Tensor[4096, i32]):
            a = fifo(Tensor[1024, i32], name="a")
            c = fifo(Tensor[1024, i32], name="c")

            @herd()
            def core():
                for _ in loop(4):
                    with a.consume(), c.produce():
                        pass

            with runtime() as rt:
                rt.fill(a, A, (64, [4096], [1]))
                rt.drain(c, C)
        ''')
    assert check_error(path) == (
        "d.py:15: error [dma pattern]: rt.fill of 'a' from 'A' breaks a DMA rule\n"
        "  limit: every index inside 'A' (4096 elements)\n"
        "  found: index 4159 (offset 64, sizes [1, 1, 1, 4096], strides [0, 0, 0, 1])\n"
        "  fix: shrink the sizes, the strides or the offset"
    )


def test_dma_pattern_strides_in_bytes(design_file: DesignFile) -> None:
    """A tester's slip (strides written in bytes, as XRT offsets are): the fix blamed the sizes,
    and shrinking them only leads to a count mismatch. Every stride above 1 is 4 times one that
    fits, so the fix says what they count and gives them."""
    path = design_file('''
        from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime

        @design(device="npu1_1col")
        def d(A: Tensor[64, 64, i32], C: Tensor[4096, i32]):
            a = fifo(Tensor[32, 32, i32], name="a")
            c = fifo(Tensor[1024, i32], name="c")

            @herd()
            def core():
                for _ in loop(4):
                    with a.consume(), c.produce():
                        pass

            with runtime() as rt:
                rt.fill(a, A, (0, [2, 2, 32, 32], [32 * 4, 2048 * 4, 64 * 4, 1]))
                rt.drain(c, C)
        ''')
    assert check_error(path) == (
        "d.py:15: error [dma pattern]: rt.fill of 'a' from 'A' breaks a DMA rule\n"
        "  limit: every index inside 'A' (4096 elements)\n"
        "  found: index 16287 (offset 0, sizes [2, 2, 32, 32], strides [128, 8192, 256, 1])\n"
        "  fix: strides count elements of 'A' (4 bytes each), not bytes: strides [32, 2048, "
        "64, 1] (for sizes [2, 2, 32, 32]) stay inside it"
    )
    fixed = path.read_text().replace("[32 * 4, 2048 * 4, 64 * 4, 1]", "[32, 2048, 64, 1]")
    path.write_text(fixed)
    assert "[dma pattern]" not in check_error(path)  # (the empty core's own error follows)
    # right strides on swapped sizes: divided, they would walk elements twice, so no such fix
    # (a reviewer's case; [16, 1] passed check and gave wrong data)
    swapped = fixed.replace("(0, [2, 2, 32, 32], [32, 2048, 64, 1])", "(2048, [64, 32], [64, 1])")
    assert swapped != fixed
    path.write_text(swapped)
    assert check_error(path).splitlines()[-1] == (
        "  fix: shrink the sizes, the strides or the offset")


def test_dma_pattern_negative_stride(design_file: DesignFile) -> None:
    """A reversed read (stride -1)."""
    path = design_file('''
        from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime

        @design(device="npu1_1col")
        def d(A: Tensor[4096, i32], C: Tensor[4096, i32]):
            a = fifo(Tensor[1024, i32], name="a")
            c = fifo(Tensor[1024, i32], name="c")

            @herd()
            def core():
                for _ in loop(4):
                    with a.consume(), c.produce():
                        pass

            with runtime() as rt:
                rt.fill(a, A, (4095, [4096], [-1]))
                rt.drain(c, C)
        ''')
    assert check_error(path) == (
        "d.py:15: error [dma pattern]: rt.fill of 'a' from 'A' breaks a DMA rule\n"
        "  limit: sizes >= 1, strides and offset >= 0\n"
        "  found: offset 4095, sizes [1, 1, 1, 4096], strides [0, 0, 0, -1]\n"
        "  fix: use positive sizes and non-negative strides and offset"
    )


def test_dma_pattern_unaligned_offset(design_file: DesignFile) -> None:
    """An i8 pattern starting 2 bytes in."""
    path = design_file('''
        from aiedsl import Tensor, design, fifo, herd, i8, loop, runtime

        @design(device="npu1_1col")
        def d(A: Tensor[4096, i8], C: Tensor[4096, i8]):
            a = fifo(Tensor[1024, i8], name="a")
            c = fifo(Tensor[1024, i8], name="c")

            @herd()
            def core():
                for _ in loop(3):
                    with a.consume(), c.produce():
                        pass

            with runtime() as rt:
                rt.fill(a, A, (2, [3072], [1]))
                rt.drain(c, C, (0, [3072], [1]))
        ''')
    assert check_error(path) == (
        "d.py:15: error [dma pattern]: rt.fill of 'a' from 'A' breaks a DMA rule\n"
        "  limit: offset a multiple of 4 bytes (mlir-aie's NpuDmaMemcpyNdOp::verify: 'Offset "
        "must be 4-byte-aligned')\n"
        "  found: 2 bytes (offset 2, sizes [1, 1, 1, 3072], strides [0, 0, 0, 1])\n"
        "  fix: start at element 0, the nearest 4-byte boundary below, and let the kernel skip "
        "the 2 element(s) before the ones it wants; or lay out the host tensor so that each "
        "transfer starts on one (rows padded to a multiple of 4 bytes)"
    )


def test_an_element_of_part_of_a_word_is_offered_several_in_one_or_padded_rows(
        design_file: DesignFile) -> None:
    path = design_file('''
        from aiedsl import Tensor, design, fifo, herd, i8, runtime

        @design(device="npu1_1col")
        def d(A: Tensor[3, 5, i8], C: Tensor[3, 5, i8]):
            a = fifo(Tensor[3, 5, i8], name="a")
            c = fifo(Tensor[3, 5, i8], name="c")

            @herd()
            def core():
                with a.consume(), c.produce():
                    pass

            with runtime() as rt:
                rt.fill(a, A)
                rt.drain(c, C)
        ''')
    assert check_error(path) == (
        "d.py:5: error [dma pattern]: fifo 'a' has 15-byte elements (3x5xi8)\n"
        "  limit: whole 4-byte words (a DMA buffer descriptor counts its length in words)\n"
        "  found: 15 bytes\n"
        "  fix: make each element a multiple of 4 bytes: 4 of these in one (Tensor[4, 3, 5, i8], "
        "60 bytes), or each row padded to 8 elements (Tensor[3, 8, i8])"
    )


def test_an_unaligned_run_over_rows_is_refused_for_its_offset_not_rewritten(
        design_file: DesignFile) -> None:
    """Rows of 1918 u8 from the second row on: one contiguous run, whose linear rewrite the fix
    offered, though it starts off a word as well (a vision tester)."""
    path = design_file('''
        from aiedsl import Tensor, design, fifo, herd, loop, runtime, u8

        @design(device="npu1_1col")
        def d(A: Tensor[9 * 1918, u8], C: Tensor[8 * 1918, u8]):
            a = fifo(Tensor[2 * 1918, u8], name="a")
            c = fifo(Tensor[2 * 1918, u8], name="c")

            @herd()
            def core():
                for _ in loop(4):
                    with a.consume(), c.produce():
                        pass

            with runtime() as rt:
                rt.fill(a, A, (1918, [8, 1918], [1918, 1]))
                rt.drain(c, C)
        ''')
    assert check_error(path) == (
        "d.py:15: error [dma pattern]: rt.fill of 'a' from 'A' breaks a DMA rule\n"
        "  limit: offset a multiple of 4 bytes (mlir-aie's NpuDmaMemcpyNdOp::verify: 'Offset "
        "must be 4-byte-aligned')\n"
        "  found: 1918 bytes (offset 1918, sizes [1, 1, 8, 1918], strides [0, 0, 1918, 1])\n"
        "  fix: start at element 1916, the nearest 4-byte boundary below, and let the kernel "
        "skip the 2 element(s) before the ones it wants; or lay out the host tensor so that each "
        "transfer starts on one (rows padded to a multiple of 4 bytes)"
    )


def test_dma_pattern_offset_past_4_gib(design_file: DesignFile) -> None:
    """A fill starting 4 GiB + 4 KiB into an 8 GiB host tensor: the address patch's 32-bit
    arg_plus would wrap it to byte 4096, so check refuses it (a tester's reproducer)."""
    path = design_file('''
        from aiedsl import Tensor, design, fifo, i32, runtime

        @design(device="npu2")
        def d(A: Tensor[2147483584, i32], C: Tensor[32, i32]):
            a = fifo(Tensor[32, i32], name="a")
            b = a.forward(name="b")
            with runtime() as rt:
                rt.fill(a, A, (1073742848, [1, 1, 2, 16], [0, 0, 64, 1]))
                rt.drain(b, C)
        ''')
    assert check_error(path) == (
        "d.py:8: error [dma pattern]: rt.fill of 'a' from 'A' breaks a DMA rule\n"
        "  limit: a start below 4,294,967,296 bytes (4 GiB) into the host buffer: the offset is "
        "written as the address patch's 32-bit arg_plus (mlir-aie's AIETargetNPU.cpp "
        "appendAddressPatch), so a larger one wraps\n"
        "  found: 4,294,971,392 bytes (offset 1073742848, sizes [1, 1, 2, 16], "
        "strides [0, 0, 64, 1])\n"
        "  fix: pass the part of 'A' beyond 4 GiB as a host tensor of its own"
    )


def test_dma_pattern_unaligned_stride(design_file: DesignFile) -> None:
    """An i8 pattern whose rows are 6 bytes apart."""
    path = design_file('''
        from aiedsl import Tensor, design, fifo, herd, i8, runtime

        @design(device="npu1_1col")
        def d(A: Tensor[24, i8], C: Tensor[16, i8]):
            a = fifo(Tensor[16, i8], name="a")
            c = fifo(Tensor[16, i8], name="c")

            @herd()
            def core():
                with a.consume(), c.produce():
                    pass

            with runtime() as rt:
                rt.fill(a, A, (0, [4, 4], [6, 1]))
                rt.drain(c, C)
        ''')
    assert check_error(path) == (
        "d.py:14: error [dma pattern]: rt.fill of 'a' from 'A' breaks a DMA rule\n"
        "  limit: strides are multiples of 4 bytes\n"
        "  found: stride 6 x 1 B = 6 B (offset 0, sizes [1, 1, 4, 4], strides [0, 0, 6, 1])\n"
        "  fix: make the stride a multiple of 4 elements (4 or 8): a stride is usually a row "
        "of the tensor it walks; pad its rows to 8 elements (a tensor of 8-element rows), or "
        "move the rows with a transfer each"
    )


def test_dma_dims_core_producer_four_dims(design_file: DesignFile) -> None:
    """A core's DMA has 3 dimensions; dims_to_stream gives 4."""
    path = design_file('''
        from aiedsl import Tensor, design, fifo, herd, i32, runtime

        @design(device="npu1_1col")
        def d(A: Tensor[256, i32], C: Tensor[256, i32]):
            a = fifo(Tensor[256, i32], name="a")
            c = fifo(Tensor[256, i32], name="c",
                     dims_to_stream=[(2, 128), (2, 64), (4, 16), (16, 1)])

            @herd()
            def core():
                with a.consume(), c.produce():
                    pass

            with runtime() as rt:
                rt.fill(a, A)
                rt.drain(c, C)
        ''')
    assert check_error(path) == (
        "d.py:6: error [dma pattern]: dims_to_stream of 'c' on core[0,0] breaks a DMA rule\n"
        "  limit: at most 3 dimensions on a core DMA\n"
        "  found: 4 ([(2, 128), (2, 64), (4, 16), (16, 1)])\n"
        "  d.py:11: core[0,0] produces it here\n"
        "  fix: merge contiguous dimensions, or move the transform to the memtile (4 dimensions)"
    )


def test_dma_dims_memtile_five_dims(design_file: DesignFile) -> None:
    """A memtile's DMA has 4 dimensions; the forward gives 5."""
    path = design_file('''
        from aiedsl import Tensor, design, fifo, herd, i32, runtime

        @design(device="npu1_1col")
        def d(A: Tensor[256, i32], C: Tensor[256, i32]):
            a_l3 = fifo(Tensor[256, i32], name="a_l3")
            a = a_l3.forward(name="a",
                             dims_to_stream=[(2, 128), (2, 64), (2, 32), (2, 16), (16, 1)])
            c = fifo(Tensor[256, i32], name="c")

            @herd()
            def core():
                with a.consume(), c.produce():
                    pass

            with runtime() as rt:
                rt.fill(a_l3, A)
                rt.drain(c, C)
        ''')
    assert check_error(path) == (
        "d.py:6: error [dma pattern]: dims_to_stream of 'a' on memtile breaks a DMA rule\n"
        "  limit: at most 4 dimensions on a memtile DMA\n"
        "  found: 5 ([(2, 128), (2, 64), (2, 32), (2, 16), (16, 1)])\n"
        "  fix: merge contiguous dimensions, or share the transform between the memtile's "
        "dims_to_stream and the core's dims_from_stream"
    )


def test_dma_dims_on_shim_endpoint(design_file: DesignFile) -> None:
    """dims_to_stream on a fifo the runtime fills: the shim takes no layout."""
    path = design_file('''
        from aiedsl import Tensor, design, fifo, herd, i32, runtime

        @design(device="npu1_1col")
        def d(A: Tensor[256, i32], C: Tensor[256, i32]):
            a = fifo(Tensor[256, i32], name="a", dims_to_stream=[(16, 16), (16, 1)])
            c = fifo(Tensor[256, i32], name="c")

            @herd()
            def core():
                with a.consume(), c.produce():
                    pass

            with runtime() as rt:
                rt.fill(a, A)
                rt.drain(c, C)
        ''')
    assert check_error(path) == (
        "d.py:5: error [dma pattern]: dims_to_stream of 'a' on shim breaks a DMA rule\n"
        "  limit: no layout transform on a shim endpoint (mlir-aie refuses dimensionsToStream on "
        "a shim producer, and ignores a shim consumer's layout)\n"
        "  found: [(16, 16), (16, 1)]\n"
        "  d.py:14: the runtime fills it here\n"
        "  fix: apply the layout in the runtime pattern instead, or on the memtile"
    )


def test_dma_dims_on_shim_consumer(design_file: DesignFile) -> None:
    """dims_from_stream on a fifo the runtime drains: the shim takes no layout."""
    path = design_file('''
        from aiedsl import Tensor, design, fifo, herd, i32, runtime

        @design(device="npu1_1col")
        def d(A: Tensor[256, i32], C: Tensor[256, i32]):
            a = fifo(Tensor[256, i32], name="a")
            c = fifo(Tensor[256, i32], name="c", dims_from_stream=[(16, 16), (16, 1)])

            @herd()
            def core():
                with a.consume(), c.produce():
                    pass

            with runtime() as rt:
                rt.fill(a, A)
                rt.drain(c, C)
        ''')
    assert check_error(path) == (
        "d.py:6: error [dma pattern]: dims_from_stream of 'c' on shim breaks a DMA rule\n"
        "  limit: no layout transform on a shim endpoint (mlir-aie refuses dimensionsToStream on "
        "a shim producer, and ignores a shim consumer's layout)\n"
        "  found: [(16, 16), (16, 1)]\n"
        "  d.py:15: the runtime drains it here\n"
        "  fix: apply the layout in the runtime pattern instead, or on the memtile"
    )


def test_dma_dims_from_stream_on_memtile(design_file: DesignFile) -> None:
    """dims_from_stream on a join's part at the memtile: refused (aiedsl applies a join's
    layout as it sends); the fix, the inverse at the producing core, checks. A forward's or
    split's memtile input takes one (test_link_layouts.py)."""
    src = '''
        from aiedsl import Tensor, design, fifo, herd, i32, join, runtime
        from aiedsl.kernels import passthrough

        @design(device="npu1_1col")
        def d(A: Tensor[256, i32], C: Tensor[512, i32]):
            a = fifo(Tensor[256, i32], name="a")
            p = [fifo(Tensor[256, i32], name=f"p{i}", DIMS) for i in range(2)]
            c = join(p, offsets=[0, 256], name="c")
            k = passthrough(Tensor[256, i32])

            @herd(rows=2)
            def core(x, y):
                with a.consume() as s, p[y].produce() as t:
                    k(s, t)

            with runtime() as rt:
                rt.fill(a, A)
                rt.drain(c, C)
        '''
    path = design_file(src.replace("DIMS", "dims_from_stream=[(16, 16), (16, 1)]"))
    assert check_error(path) == (
        "d.py:7: error [dma pattern]: dims_from_stream of 'p0' on memtile breaks a DMA rule\n"
        "  limit: no dims_from_stream on a join's part at the memtile (aiedsl models a memtile's "
        "receiving layout on a split's or a forward's input only; a join applies its layout as "
        "it sends)\n"
        "  found: [(16, 16), (16, 1)]\n"
        "  d.py:8: the memtile consumes it here\n"
        "  fix: let core[0,0] send the part in the inverse order: give 'p0' "
        "dims_to_stream=[(16, 16), (16, 1)]"
    )
    fixed = design_file(src.replace("DIMS", "dims_to_stream=[(16, 16), (16, 1)]"), "fixed.py")
    check_design(load_design(fixed).ir)


def test_dma_dims_inner_sizes_do_not_tile_element(design_file: DesignFile) -> None:
    """Inner dims of 3 elements do not tile a 256-element buffer."""
    path = design_file('''
        from aiedsl import Tensor, design, fifo, herd, i32, runtime

        @design(device="npu1_1col")
        def d(A: Tensor[256, i32], C: Tensor[256, i32]):
            a = fifo(Tensor[256, i32], name="a", dims_from_stream=[(4, 64), (3, 1)])
            c = fifo(Tensor[256, i32], name="c")

            @herd()
            def core():
                with a.consume(), c.produce():
                    pass

            with runtime() as rt:
                rt.fill(a, A)
                rt.drain(c, C)
        ''')
    assert check_error(path) == (
        "d.py:5: error [dma pattern]: dims_from_stream of 'a' on core[0,0] breaks a DMA rule\n"
        "  limit: the inner dimensions tile the 256-element buffer\n"
        "  found: 3 elements per outer step ([(4, 64), (3, 1)])\n"
        "  d.py:10: core[0,0] consumes it here\n"
        "  fix: choose dims whose inner sizes divide the element"
    )


def test_dma_dims_address_past_element(design_file: DesignFile) -> None:
    """16 rows 32 apart read past the end of a 256-element buffer."""
    path = design_file('''
        from aiedsl import Tensor, design, fifo, herd, i32, runtime

        @design(device="npu1_1col")
        def d(A: Tensor[256, i32], C: Tensor[256, i32]):
            a = fifo(Tensor[256, i32], name="a", dims_from_stream=[(16, 32), (16, 1)])
            c = fifo(Tensor[256, i32], name="c")

            @herd()
            def core():
                with a.consume(), c.produce():
                    pass

            with runtime() as rt:
                rt.fill(a, A)
                rt.drain(c, C)
        ''')
    assert check_error(path) == (
        "d.py:5: error [dma pattern]: dims_from_stream of 'a' on core[0,0] breaks a DMA rule\n"
        "  limit: every address inside the 256-element buffer\n"
        "  found: address 495 ([(16, 32), (16, 1)])\n"
        "  d.py:10: core[0,0] consumes it here\n"
        "  fix: fix the strides so they stay inside the element"
    )


def test_herd_placement_5x4_on_npu1(design_file: DesignFile) -> None:
    """npu1 has 4 columns."""
    path = design_file('''
        from aiedsl import Tensor, design, fifo, herd, i32, runtime

        @design(device="npu1")
        def d(A: Tensor[256, i32]):
            a = fifo(Tensor[256, i32], name="a")

            @herd(cols=5, rows=4)
            def core(x, y):
                if (x, y) == (0, 0):
                    with a.produce():
                        pass

            with runtime() as rt:
                rt.drain(a, A)
        ''')
    assert check_error(path) == (
        "d.py:7: error [herd placement]: herd 'core' (5x4) does not fit on npu1\n"
        "  limit: 4 columns x 4 core rows\n"
        "  found: 5 columns x 4 rows\n"
        "  fix: use a larger device (--device npu2_5col) or a smaller herd"
    )


def test_herd_placement_2_cols_on_npu1_1col(design_file: DesignFile) -> None:
    """npu1_1col has 1 column."""
    path = design_file('''
        from aiedsl import Tensor, design, fifo, herd, i32, runtime

        @design(device="npu1_1col")
        def d(A: Tensor[256, i32]):
            a = fifo(Tensor[256, i32], name="a")

            @herd(cols=2)
            def core(x, y):
                if (x, y) == (0, 0):
                    with a.produce():
                        pass

            with runtime() as rt:
                rt.drain(a, A)
        ''')
    assert check_error(path) == (
        "d.py:7: error [herd placement]: herd 'core' (2x1) does not fit on npu1_1col\n"
        "  limit: 1 column x 4 core rows\n"
        "  found: 2 columns x 1 row\n"
        "  fix: use a larger device (--device npu1_2col) or a smaller herd"
    )


def test_herd_placement_anchor_off_array(design_file: DesignFile) -> None:
    """A 2x2 herd anchored at column 3 needs column 4."""
    path = design_file('''
        from aiedsl import Tensor, design, fifo, herd, i32, runtime

        @design(device="npu1")
        def d(A: Tensor[256, i32]):
            a = fifo(Tensor[256, i32], name="a")

            @herd(cols=2, rows=2, anchor=(3, 2))
            def core(x, y):
                if (x, y) == (0, 0):
                    with a.produce():
                        pass

            with runtime() as rt:
                rt.drain(a, A)
        ''')
    assert check_error(path) == (
        "d.py:7: error [herd placement]: herd 'core' (2x2) anchored at (3, 2) leaves the compute "
        "tiles of npu1\n"
        "  limit: columns 0..3, rows 2..5\n"
        "  found: tile (4, 2)\n"
        "  fix: move the anchor or shrink the herd"
    )


def test_herd_placement_overlap(design_file: DesignFile) -> None:
    """Two anchored herds share tile (1, 3)."""
    path = design_file('''
        from aiedsl import Tensor, design, fifo, herd, i32, runtime

        @design(device="npu1")
        def d(A: Tensor[256, i32], B: Tensor[256, i32]):
            a = fifo(Tensor[256, i32], name="a")
            b = fifo(Tensor[256, i32], name="b")

            @herd(cols=2, rows=2, anchor=(0, 2))
            def first(x, y):
                if (x, y) == (0, 0):
                    with a.produce():
                        pass

            @herd(cols=2, rows=2, anchor=(1, 3))
            def second(x, y):
                if (x, y) == (0, 0):
                    with b.produce():
                        pass

            with runtime() as rt:
                rt.drain(a, A)
                rt.drain(b, B)
        ''')
    assert check_error(path) == (
        "d.py:14: error [herd placement]: herd 'second' (2x2 at (1, 3)) overlaps herd 'first' "
        "(2x2 at (0, 2)) at tile (1, 3)\n"
        "  d.py:8: herd 'first'\n"
        "  fix: anchor the herds on disjoint tiles"
    )


def test_placement_shim_pin_off_device(design_file: DesignFile) -> None:
    """shim(9) on a 4-column device."""
    path = design_file('''
        from aiedsl import Tensor, design, fifo, herd, i32, runtime, shim

        @design(device="npu1")
        def d(A: Tensor[1024, i32], B: Tensor[1024, i32], C: Tensor[1024, i32]):
            a = fifo(Tensor[1024, i32], name="a", shim=shim(9))
            b = fifo(Tensor[1024, i32], name="b", shim=shim(9))
            c = fifo(Tensor[1024, i32], name="c", shim=shim(9))

            @herd(cols=3)
            def core(x, y):
                with [a, b, c][x].produce():
                    pass

            with runtime() as rt:
                rt.drain(a, A)
                rt.drain(b, B)
                rt.drain(c, C)
        ''')
    assert check_error(path) == (
        "d.py:5: error [placement]: the host end of fifo 'a' is pinned to tile (9, 0), which is "
        "not a shim tile of npu1\n"
        "  limit: shim tiles in columns 0..3, row 0\n"
        "  found: tile (9, 0)\n"
        "  fix: pin a column from 0 to 3"
    )


@pytest.mark.parametrize("stream, filled, line, name", [
    ('a = fifo(Tensor[1024, i32], name="a", shim=shim(8))\n            b = a.forward()', "a", 6,
     "a"),
    ('b = channel(Tensor[1024, i32], name="b", via=memtile, shim=shim(8))\n'
     '            b = b[0]', "b", 6, "b_l3_0"),
])
def test_placement_shim_pin_off_device_behind_a_memtile(
        stream: str, filled: str, line: int, name: str, design_file: DesignFile) -> None:
    """shim(8) on npu2 (8 columns: an off-by-one from a 4-column design) on a fifo a memtile
    forwards: the link's placement looked its column up and crashed (IndexError)."""
    path = design_file('''
        from aiedsl import Tensor, channel, design, fifo, herd, i32, memtile, runtime, shim
        from aiedsl.kernels import passthrough

        @design(device="npu2")
        def d(A: Tensor[1024, i32], C: Tensor[1024, i32]):
            STREAM
            c = fifo(Tensor[1024, i32], name="c")
            cp = passthrough(Tensor[1024, i32])

            @herd()
            def core():
                with b.consume() as ta, c.produce() as tc:
                    cp(ta, tc)

            with runtime() as rt:
                rt.fill(FILLED, A)
                rt.drain(c, C)
        '''.replace("STREAM", stream).replace("FILLED", filled))
    assert check_error(path) == (
        f"d.py:{line}: error [placement]: the host end of fifo '{name}' is pinned to tile "
        "(8, 0), which is not a shim tile of npu2\n"
        "  limit: shim tiles in columns 0..7, row 0\n"
        "  found: tile (8, 0)\n"
        "  fix: pin a column from 0 to 7"
    )


def test_placement_memtile_pin_off_device(design_file: DesignFile) -> None:
    """via=memtile(7) on a 1-column device."""
    path = design_file('''
        from aiedsl import memtile, Tensor, design, fifo, herd, i32, loop, runtime

        @design(device="npu1_1col")
        def d(A: Tensor[32768, i32], C: Tensor[32768, i32]):
            a_l3 = fifo(Tensor[32768, i32], depth=1, name="a_l3")
            a = a_l3.forward(Tensor[1024, i32], depth=2, name="a", via=memtile(7))
            c = fifo(Tensor[1024, i32], name="c")

            @herd()
            def core():
                for _ in loop(32):
                    with a.consume(), c.produce():
                        pass

            with runtime() as rt:
                rt.fill(a_l3, A)
                rt.drain(c, C)
        ''')
    assert check_error(path) == (
        "d.py:6: error [placement]: forward of 'a_l3', 'a' is pinned to tile (7, 1), which is "
        "not a memtile of npu1_1col\n"
        "  limit: memtiles in column 0, row 1\n"
        "  found: tile (7, 1)\n"
        "  fix: pin column 0"
    )


def test_split_offsets_gap(design_file: DesignFile) -> None:
    """The second part starts at 300, leaving [256, 300) unsent."""
    path = design_file('''
        from aiedsl import Tensor, design, fifo, herd, i32, runtime

        @design(device="npu1")
        def d(A: Tensor[512, i32], C: Tensor[512, i32]):
            a = fifo(Tensor[512, i32], name="a")
            a0, a1 = a.split(2, offsets=[0, 300], names=["a0", "a1"])
            c0 = fifo(Tensor[256, i32], name="c0")
            c1 = fifo(Tensor[256, i32], name="c1")

            @herd(cols=2)
            def core(x, y):
                with [a0, a1][x].consume(), [c0, c1][x].produce():
                    pass

            with runtime() as rt:
                rt.fill(a, A)
                rt.drain(c0, C, (0, [256], [1]))
                rt.drain(c1, C, (256, [256], [1]))
        ''')
    assert check_error(path) == (
        "d.py:6: error [split offsets]: split of 'a' (512 elements): part 'a1' at offset 300 "
        "leaves a gap before it\n"
        "  limit: parts back to back in the order listed, covering the parent exactly "
        "(mlir-aie moves each part up to the next listed offset)\n"
        "  found: a0 [0, 256), a1 [300, 556)\n"
        "  fix: put 'a1' at offset 256"
    )


def test_split_offsets_overlap(design_file: DesignFile) -> None:
    """The second part starts at 200, inside the first."""
    path = design_file('''
        from aiedsl import Tensor, design, fifo, herd, i32, runtime

        @design(device="npu1")
        def d(A: Tensor[512, i32], C: Tensor[512, i32]):
            a = fifo(Tensor[512, i32], name="a")
            a0, a1 = a.split(2, offsets=[0, 200], names=["a0", "a1"])
            c0 = fifo(Tensor[256, i32], name="c0")
            c1 = fifo(Tensor[256, i32], name="c1")

            @herd(cols=2)
            def core(x, y):
                with [a0, a1][x].consume(), [c0, c1][x].produce():
                    pass

            with runtime() as rt:
                rt.fill(a, A)
                rt.drain(c0, C, (0, [256], [1]))
                rt.drain(c1, C, (256, [256], [1]))
        ''')
    assert check_error(path) == (
        "d.py:6: error [split offsets]: split of 'a' (512 elements): part 'a1' at offset 200 "
        "overlaps the part before it\n"
        "  limit: parts back to back in the order listed, covering the parent exactly "
        "(mlir-aie moves each part up to the next listed offset)\n"
        "  found: a0 [0, 256), a1 [200, 456)\n"
        "  fix: put 'a1' at offset 256"
    )


def test_split_offsets_count(design_file: DesignFile) -> None:
    """Two parts, one offset."""
    path = design_file('''
        from aiedsl import Tensor, design, fifo, herd, i32, runtime

        @design(device="npu1")
        def d(A: Tensor[512, i32], C: Tensor[512, i32]):
            a = fifo(Tensor[512, i32], name="a")
            a0, a1 = a.split(2, offsets=[0], names=["a0", "a1"])
            c0 = fifo(Tensor[256, i32], name="c0")
            c1 = fifo(Tensor[256, i32], name="c1")

            @herd(cols=2)
            def core(x, y):
                with [a0, a1][x].consume(), [c0, c1][x].produce():
                    pass

            with runtime() as rt:
                rt.fill(a, A)
                rt.drain(c0, C, (0, [256], [1]))
                rt.drain(c1, C, (256, [256], [1]))
        ''')
    assert check_error(path) == (
        "d.py:6: error [split offsets]: split of 'a' has 2 parts but 1 offset\n"
        "  fix: give one offset per part"
    )


def test_join_offsets_do_not_cover_parent(design_file: DesignFile) -> None:
    """Two 256-element parts joined into a 1024-element fifo."""
    path = design_file('''
        from aiedsl import Tensor, design, fifo, herd, i32, join, runtime

        @design(device="npu1")
        def d(A: Tensor[512, i32], C: Tensor[1024, i32]):
            a0 = fifo(Tensor[256, i32], name="a0")
            a1 = fifo(Tensor[256, i32], name="a1")
            c0 = fifo(Tensor[256, i32], name="c0")
            c1 = fifo(Tensor[256, i32], name="c1")
            c = join([c0, c1], Tensor[1024, i32], name="c")

            @herd(cols=2)
            def core(x, y):
                with [a0, a1][x].consume(), [c0, c1][x].produce():
                    pass

            with runtime() as rt:
                rt.fill(a0, A, (0, [256], [1]))
                rt.fill(a1, A, (256, [256], [1]))
                rt.drain(c, C)
        ''')
    assert check_error(path) == (
        "d.py:9: error [join offsets]: join parts of 'c' cover 512 of its 1024 elements\n"
        "  limit: exactly 1024 elements\n"
        "  found: c0 [0, 256), c1 [256, 512)\n"
        "  fix: make the parts add up to the parent element"
    )


def test_element_type_forward_bf16_to_i16(design_file: DesignFile) -> None:
    """A memtile copies bytes; it cannot convert bf16 to i16."""
    path = design_file('''
        from aiedsl import Tensor, bf16, design, fifo, herd, i16, runtime

        @design(device="npu1_1col")
        def d(A: Tensor[256, bf16], C: Tensor[256, i16]):
            a_l3 = fifo(Tensor[256, bf16], name="a_l3")
            a = a_l3.forward(Tensor[256, i16], name="a")
            c = fifo(Tensor[256, i16], name="c")

            @herd()
            def core():
                with a.consume(), c.produce():
                    pass

            with runtime() as rt:
                rt.fill(a_l3, A)
                rt.drain(c, C)
        ''')
    assert check_error(path) == (
        "d.py:6: error [element type]: forward 'a_l3' -> 'a' mixes element types bf16, i16\n"
        "  found: a_l3: 256xbf16, a: 256xi16\n"
        "  fix: a memtile moves bytes unchanged: use one dtype on both sides"
    )


def test_element_type_forward_sizes_do_not_divide(design_file: DesignFile) -> None:
    """96-element elements regrouped into 64-element ones."""
    path = design_file('''
        from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime

        @design(device="npu1_1col")
        def d(A: Tensor[192, i32], C: Tensor[192, i32]):
            a_l3 = fifo(Tensor[96, i32], name="a_l3")
            a = a_l3.forward(Tensor[64, i32], name="a")
            c = fifo(Tensor[64, i32], name="c")

            @herd()
            def core():
                for _ in loop(3):
                    with a.consume(), c.produce():
                        pass

            with runtime() as rt:
                rt.fill(a_l3, A)
                rt.drain(c, C)
        ''')
    assert check_error(path) == (
        "d.py:6: error [element type]: forward 'a_l3' (96xi32) -> 'a' (64xi32) regroups elements "
        "by a size that does not divide\n"
        "  found: 96 vs 64 elements\n"
        "  fix: keep the element size, or make one size a multiple of the other (the memtile "
        "resends each element in equal pieces)"
    )


def test_kernel_signature_argument_count(design_file: DesignFile) -> None:
    """passthrough takes (src, dst)."""
    path = design_file('''
        from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
        from aiedsl.kernels import passthrough

        @design(device="npu1_1col")
        def d(inp: Tensor[4096, i32], out: Tensor[4096, i32]):
            a = fifo(Tensor[1024, i32], name="a")
            b = fifo(Tensor[1024, i32], name="b")
            copy = passthrough(Tensor[1024, i32])

            @herd()
            def core():
                for _ in loop(4):
                    with a.consume() as x, b.produce() as y:
                        copy(x)

            with runtime() as rt:
                rt.fill(a, inp)
                rt.drain(b, out)
        ''')
    assert check_error(path) == (
        "d.py:14: error [kernel signature]: core[0,0] calls 'passthrough_i32_1024' with 1 "
        "argument; it takes 2\n"
        "  limit: passthrough_i32_1024(src: 1024xi32, dst: 1024xi32)\n"
        "  found: 1 argument\n"
        "  fix: call it as passthrough_i32_1024(src, dst)"
    )


def test_kernel_signature_buffer_type(design_file: DesignFile) -> None:
    """An i16 element passed where the kernel reads 1024xi32."""
    path = design_file('''
        from aiedsl import Tensor, design, fifo, herd, i16, i32, loop, runtime
        from aiedsl.kernels import passthrough

        @design(device="npu1_1col")
        def d(inp: Tensor[4096, i16], out: Tensor[4096, i32]):
            a = fifo(Tensor[1024, i16], name="a")
            b = fifo(Tensor[1024, i32], name="b")
            copy = passthrough(Tensor[1024, i32])

            @herd()
            def core():
                for _ in loop(4):
                    with a.consume() as x, b.produce() as y:
                        copy(x, y)

            with runtime() as rt:
                rt.fill(a, inp)
                rt.drain(b, out)
        ''')
    assert check_error(path) == (
        "d.py:14: error [kernel signature]: argument 0 ('src') of 'passthrough_i32_1024' expects "
        "1024xi32, but core[0,0] passes an element of 'a' (1024xi16)\n"
        "  limit: passthrough_i32_1024(src: 1024xi32, dst: 1024xi32)\n"
        "  found: 1024xi16\n"
        "  fix: pass a fifo of the kernel's element type, i32, or declare the kernel for "
        "1024xi16"
    )


@pytest.mark.parametrize("fifo_type, found, fix", [
    ("Tensor[256, i32]", "256xi32", "pass a fifo of the kernel's 512 elements (512xi32), or "
     "declare the kernel for 256 (256xi32)"),
    ("Tensor[256, i16]", "256xi16", "pass a fifo of the kernel's type, 512xi32, or declare "
     "the kernel for 256xi16")])
def test_kernel_signature_buffer_size(design_file: DesignFile, fifo_type: str, found: str,
                                      fix: str) -> None:
    """(a tester) A fifo of 256xi32 passed to a kernel buffer of 512xi32 was told to "pass a
    fifo of the kernel's element type", which it was: the fix now says what differs."""
    path = design_file('''
        from aiedsl import Tensor, design, fifo, herd, i16, i32, loop, runtime
        from aiedsl.kernels import passthrough

        @design(device="npu1_1col")
        def d(inp: Tensor[4096, i32], out: Tensor[4096, i32]):
            a = fifo(FIFO_TYPE, name="a")
            b = fifo(Tensor[512, i32], name="b")
            copy = passthrough(Tensor[512, i32])

            @herd()
            def core():
                for _ in loop(4):
                    with a.consume() as x, b.produce() as y:
                        copy(x, y)

            with runtime() as rt:
                rt.fill(a, inp)
                rt.drain(b, out)
        '''.replace("FIFO_TYPE", fifo_type))
    assert check_error(path).splitlines()[2:] == [f"  found: {found}", f"  fix: {fix}"]


def test_kernel_signature_scalar_for_buffer(design_file: DesignFile) -> None:
    """5 passed where the kernel writes a buffer."""
    path = design_file('''
        from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
        from aiedsl.kernels import passthrough

        @design(device="npu1_1col")
        def d(inp: Tensor[4096, i32], out: Tensor[4096, i32]):
            a = fifo(Tensor[1024, i32], name="a")
            b = fifo(Tensor[1024, i32], name="b")
            copy = passthrough(Tensor[1024, i32])

            @herd()
            def core():
                for _ in loop(4):
                    with a.consume() as x, b.produce() as y:
                        copy(x, 5)

            with runtime() as rt:
                rt.fill(a, inp)
                rt.drain(b, out)
        ''')
    assert check_error(path) == (
        "d.py:14: error [kernel signature]: argument 1 ('dst') of 'passthrough_i32_1024' is a "
        "buffer, but core[0,0] passes the scalar 5\n"
        "  limit: passthrough_i32_1024(src: 1024xi32, dst: 1024xi32)\n"
        "  found: the scalar 5\n"
        "  fix: pass an acquired fifo element or a local"
    )


def test_kernel_signature_buffer_for_scalar(design_file: DesignFile) -> None:
    """A buffer passed for scale's element count n."""
    path = design_file('''
        from aiedsl import Tensor, design, fifo, herd, i16, i32, runtime
        from aiedsl.kernels import scale

        @design(device="npu1_1col")
        def d(inp: Tensor[1024, i16], f: Tensor[1, i32], out: Tensor[1024, i16]):
            a = fifo(Tensor[1024, i16], name="a")
            fac = fifo(Tensor[1, i32], name="fac")
            b = fifo(Tensor[1024, i16], name="b")
            k = scale(1024)

            @herd()
            def core():
                with a.consume() as x, fac.consume() as s, b.produce() as y:
                    k(x, y, s, s)

            with runtime() as rt:
                rt.fill(a, inp)
                rt.fill(fac, f)
                rt.drain(b, out)
        ''')
    assert check_error(path) == (
        "d.py:14: error [kernel signature]: argument 3 ('n') of 'scale_i16_1024' is a scalar "
        "i32, but core[0,0] passes a buffer\n"
        "  limit: scale_i16_1024(src: 1024xi16, dst: 1024xi16, factor: 1xi32, n: i32)\n"
        "  fix: pass a Python int or float, or an rtp slot (thr[0]) for a value the host sets "
        "at run time (a core cannot read an element's value into a scalar argument: a kernel "
        "taking it as a buffer can)"
    )


def test_kernel_signature_float_for_int(design_file: DesignFile) -> None:
    """2.5 passed for an i32 scalar."""
    path = design_file('''
        from aiedsl import Tensor, design, fifo, herd, i16, i32, runtime
        from aiedsl.kernels import scale

        @design(device="npu1_1col")
        def d(inp: Tensor[1024, i16], f: Tensor[1, i32], out: Tensor[1024, i16]):
            a = fifo(Tensor[1024, i16], name="a")
            fac = fifo(Tensor[1, i32], name="fac")
            b = fifo(Tensor[1024, i16], name="b")
            k = scale(1024)

            @herd()
            def core():
                with a.consume() as x, fac.consume() as s, b.produce() as y:
                    k(x, y, s, 2.5)

            with runtime() as rt:
                rt.fill(a, inp)
                rt.fill(fac, f)
                rt.drain(b, out)
        ''')
    assert check_error(path) == (
        "d.py:14: error [kernel signature]: argument 3 ('n') of 'scale_i16_1024' is i32, but "
        "core[0,0] passes 2.5\n"
        "  limit: scale_i16_1024(src: 1024xi16, dst: 1024xi16, factor: 1xi32, n: i32)\n"
        "  found: 2.5\n"
        "  fix: pass an int"
    )


def test_balance_runtime_fills_more(design_file: DesignFile) -> None:
    """The runtime sends 4 elements, the core takes 3: the fill never completes."""
    path = design_file('''
        from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
        from aiedsl.kernels import passthrough

        @design(device="npu1_1col")
        def d(inp: Tensor[4096, i32], out: Tensor[4096, i32]):
            a = fifo(Tensor[1024, i32], name="a")
            b = fifo(Tensor[1024, i32], name="b")
            copy = passthrough(Tensor[1024, i32])

            @herd()
            def core():
                for _ in loop(3):
                    with a.consume() as x, b.produce() as y:
                        copy(x, y)

            with runtime() as rt:
                rt.fill(a, inp)
                rt.drain(b, out)
        ''')
    assert check_error(path) == (
        "d.py:13: error [balance]: fifo 'a': the runtime fills 4 element(s) per run, but "
        "core[0,0] takes 3\n"
        "  limit: every consumer takes exactly 4\n"
        "  found: 3\n"
        "  d.py:17: produced here\n"
        "  fix: make loop counts and fill/drain sizes agree (each element 1024xi32); a mismatch "
        "hangs on the NPU"
    )


def test_balance_names_a_fill_line_once_with_its_count(design_file: DesignFile) -> None:
    """Four fills from one line of a Python loop in the runtime, through a memtile, and a core
    taking 3: the fill's line is named once, with how many fills it makes (it was listed three
    times, word for word: a tester)."""
    path = design_file('''
        from aiedsl import Tensor, channel, design, fifo, herd, i32, loop, memtile, runtime, tiles
        from aiedsl.kernels import passthrough

        @design(device="npu1_1col")
        def d(inp: Tensor[4, 1024, i32], out: Tensor[3, 1024, i32]):
            a = channel(Tensor[1, 1024, i32], via=memtile, name="a")
            b = fifo(Tensor[1, 1024, i32], name="b")
            copy = passthrough(Tensor[1, 1024, i32])

            @herd()
            def core():
                for _ in loop(3):
                    with a[0].consume() as x, b.produce() as y:
                        copy(x, y)

            with runtime() as rt:
                for i in range(4):
                    rt.fill(a[0], inp, tiles(inp, (1, 1024), rows=i))
                rt.drain(b, out)
        ''')
    assert check_error(path).splitlines()[:6] == [
        "d.py:13: error [balance]: fifo 'a_0': the memtile forwards 4 element(s) per run, but "
        "core[0,0] takes 3",
        "  limit: every consumer takes exactly 4",
        "  found: 3",
        "  d.py:6: produced here",
        "  d.py:18: rt.fill of 'a_l3_0' from 'inp' (4 fills)",
        "  fix: make loop counts and fill/drain sizes agree (each element 1x1024xi32); a mismatch "
        "hangs on the NPU"]


def test_balance_runtime_fills_fewer(design_file: DesignFile) -> None:
    """The runtime sends 4 elements, the core waits for a 5th."""
    path = design_file('''
        from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
        from aiedsl.kernels import passthrough

        @design(device="npu1_1col")
        def d(inp: Tensor[4096, i32], out: Tensor[4096, i32]):
            a = fifo(Tensor[1024, i32], name="a")
            b = fifo(Tensor[1024, i32], name="b")
            copy = passthrough(Tensor[1024, i32])

            @herd()
            def core():
                for _ in loop(5):
                    with a.consume() as x, b.produce() as y:
                        copy(x, y)

            with runtime() as rt:
                rt.fill(a, inp)
                rt.drain(b, out)
        ''')
    assert check_error(path) == (
        "d.py:13: error [balance]: fifo 'a': the runtime fills 4 element(s) per run, but "
        "core[0,0] takes 5\n"
        "  limit: every consumer takes exactly 4\n"
        "  found: 5\n"
        "  d.py:17: produced here\n"
        "  fix: make loop counts and fill/drain sizes agree (each element 1024xi32); a mismatch "
        "hangs on the NPU"
    )


def test_balance_names_a_tensor_of_another_element_type(design_file: DesignFile) -> None:
    """A newcomer's i16 host tensor filled an i32 fifo: the balance error spoke of element
    counts only, and its fix (change the loop) led to the next balance error."""
    path = design_file('''
        from aiedsl import Tensor, design, fifo, herd, i16, i32, loop, runtime

        @design(device="npu1_1col")
        def d(inp: Tensor[1024, i16], out: Tensor[1024, i32]):
            fin = fifo(Tensor[256, i32], name="fin")
            fout = fifo(Tensor[256, i32], name="fout")

            @herd()
            def core():
                for _ in loop(4):
                    with fin.consume(), fout.produce():
                        pass

            with runtime() as rt:
                rt.fill(fin, inp)
                rt.drain(fout, out)
        ''')
    assert check_error(path).splitlines()[-1] == (
        "  fix: make loop counts and fill/drain sizes agree (each element 256xi32); a mismatch "
        "hangs on the NPU. rt.fill of 'inp' (1024xi16) moves 2048 bytes, 2 element(s) of "
        "256xi32: is i16 the tensor's type you meant?")


def test_balance_of_a_loopless_core_says_it_runs_once(design_file: DesignFile) -> None:
    """An IRON Worker body ported as it is (IRON repeats it forever): one element per run. The
    i8 host tensor of the u8 fifo is the same bytes, so the error does not blame its type."""
    path = design_file('''
        from aiedsl import Tensor, design, fifo, herd, i8, runtime, u8
        from aiedsl.kernels import passthrough

        @design(device="npu1_1col")
        def d(inp: Tensor[8 * 64, i8], out: Tensor[8 * 64, i8]):
            fin = fifo(Tensor[64, u8], name="fin")
            fout = fifo(Tensor[64, u8], name="fout")
            k = passthrough(Tensor[64, u8])

            @herd()
            def core():
                with fout.produce() as o, fin.consume() as i:
                    k(i, o)

            with runtime() as rt:
                rt.fill(fin, inp)
                rt.drain(fout, out)
        ''')
    assert check_error(path).splitlines()[-1] == (
        "  fix: make loop counts and fill/drain sizes agree (each element 64xu8); a mismatch "
        "hangs on the NPU. core[0,0]'s function has no loop: it is the work of one run (an IRON "
        "Worker's body repeats forever; aiedsl's runs once per run): wrap it in "
        "`for _ in loop(8):`")


def test_balance_of_a_placed_designs_forever_loop_says_aiedsl_adds_it(
        design_file: DesignFile) -> None:
    """mlir-aie's placed designs loop a core's body `range_(sys.maxsize)` times; aiedsl adds that
    loop itself, so the ported loop takes what eight runs would: the fix names one run's
    count."""
    path = design_file('''
        import sys

        from aiedsl import Tensor, design, fifo, herd, i8, loop, runtime
        from aiedsl.kernels import passthrough

        @design(device="npu1_1col")
        def d(inp: Tensor[8 * 64, i8], out: Tensor[8 * 64, i8]):
            fin = fifo(Tensor[64, i8], name="fin")
            fout = fifo(Tensor[64, i8], name="fout")
            k = passthrough(Tensor[64, i8])

            @herd()
            def core():
                for _ in loop(sys.maxsize):
                    with fout.produce() as o, fin.consume() as i:
                        k(i, o)

            with runtime() as rt:
                rt.fill(fin, inp)
                rt.drain(fout, out)
        ''')
    assert check_error(path).splitlines()[-1] == (
        "  fix: make loop counts and fill/drain sizes agree (each element 64xi8); a mismatch "
        "hangs on the NPU. core[0,0] takes them in a loop of 9,223,372,036,854,775,807 "
        "iterations (line 14), the forever loop of mlir-aie's placed designs "
        "(`range_(sys.maxsize)`)? aiedsl puts a forever loop around a core's function itself, "
        "as IRON's Worker does: the function is one run's work; write `for _ in loop(8):`")


def test_balance_of_a_forever_loop_that_produces_names_the_drains_count(
        design_file: DesignFile) -> None:
    """The same loop around a produce, in a core that runs once: the drain's count, and the
    knob that leaves aiedsl's forever loop out."""
    path = design_file('''
        from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
        from aiedsl.kernels import zero

        @design(device="npu1_1col")
        def d(out: Tensor[3 * 64, i32]):
            fout = fifo(Tensor[64, i32], name="fout")
            z = zero(Tensor[64, i32])

            @herd(forever=False)
            def core():
                for _ in loop(0xFFFFFFFF):
                    with fout.produce() as o:
                        z(o)

            with runtime() as rt:
                rt.drain(fout, out)
        ''')
    assert check_error(path).splitlines()[-1] == (
        "  fix: make loop counts and fill/drain sizes agree (each element 64xi32); a mismatch "
        "hangs on the NPU. core[0,0] makes them in a loop of 4,294,967,295 iterations (line "
        "11), the forever loop of mlir-aie's placed designs (`range_(sys.maxsize)`)? aiedsl "
        "puts a forever loop around a core's function itself, as IRON's Worker does (leave out "
        "forever=False, which drops it): the function is one run's work; write "
        "`for _ in loop(3):`")


IRON_SPELLINGS = '''
    from aiedsl import Tensor, design, fifo, herd, i32, runtime

    @design(device="npu1_1col")
    def d(A: Tensor[256, i32], C: Tensor[256, i32]):
        a = fifo(Tensor[256, i32], name="a")
        c = fifo(Tensor[256, i32], name="c")

        @herd()
        def core():
            with a.consume(), c.produce():
                pass
            CORE

        with runtime() as rt:
            rt.fill(FILL, A)
            rt.drain(c, C)
    '''


def test_irons_rtp_buffer_says_it_is_rtp_here(design_file: DesignFile) -> None:
    path = design_file(IRON_SPELLINGS.replace("CORE", "pass").replace("FILL", "a").replace(
        '        c = fifo(Tensor[256, i32], name="c")\n',
        '        c = fifo(Tensor[256, i32], name="c")\n'
        '        thr = Buffer(Tensor[16, i32], name="thr", use_write_rtp=True)\n').replace(
        "herd, i32, runtime", "herd, i32, runtime, Buffer"))
    assert load_error(path) == (
        "d.py:7: error [rtp]: Buffer(..., use_write_rtp=True) here is rtp(...): aiedsl's Buffer "
        "is an element a core acquired from a fifo\n"
        "  found: Buffer(..., name=..., use_write_rtp=...)\n"
        "  fix: write rtp(Tensor[...], name=...) in the design function, rt.rtp_write(buf, "
        "index, value) in the runtime sequence, and pass buf[i] to kernels (from aiedsl import "
        "rtp)")


def test_irons_buffer_says_it_is_local_here(design_file: DesignFile) -> None:
    """IRON's Buffer(type, initial_value=...) met aiedsl's Buffer (an acquired element): a
    TypeError about an unexpected keyword, or an AttributeError at a later line."""
    path = design_file(IRON_SPELLINGS.replace("CORE", "pass").replace("FILL", "a").replace(
        '        c = fifo(Tensor[256, i32], name="c")\n',
        '        c = fifo(Tensor[256, i32], name="c")\n'
        '        acc = Buffer(Tensor[1, i32], initial_value=0, name="acc")\n').replace(
        "herd, i32, runtime", "herd, i32, runtime, Buffer"))
    assert load_error(path) == (
        "d.py:7: error [local]: Buffer(...) here is an element a core acquired from a fifo, "
        "which acquire(), consume() and produce() make; IRON's Buffer, a core's own memory, is "
        "local(...)\n"
        "  found: Buffer(..., initial_value=..., name=...)\n"
        "  fix: write local(Tensor[...], initial=..., name=...) in the design function and pass "
        "it to kernels in the core function (from aiedsl import local)")


@pytest.mark.parametrize("core, fill, error", [
    ("pass", "a.prod()",
     "d.py:15: error [fifo]: fifo 'a' has no prod(): aiedsl uses a fifo itself where IRON takes "
     "a handle of it\n"
     "  fix: pass 'a' itself (rt.fill(a, ...), rt.drain(a, ...), a.forward(), a.split(...), "
     "a.join(...)); in a core function, `with a.produce() as e:`"),
    ("pass", "a.set_repeat_count(2)",
     "d.py:15: error [fifo]: fifo 'a' has no set_repeat_count(): aiedsl repeats what a memtile "
     "sends with repeat= on the link that makes the fifo\n"
     "  fix: write e.g. f.forward(repeat=2) or f.split(4, repeat=2) where the fifo is made (a "
     "fifo the runtime fills or a core produces takes no repeat)"),
    ("pass", "a.set_via_shared_mem()",
     "d.py:15: error [fifo]: fifo 'a' has no set_via_shared_mem(): aiedsl places a fifo's "
     "buffers as mlir-aie's lowering does, in the shared memory of neighbouring cores (one "
     "consumer, no layout change) and through DMAs otherwise\n"
     "  fix: leave the call out; a build's report.txt lists the fifos in shared memory"),
    ("a.acquire(1)", "a",
     "d.py:12: error [acquire]: port 1 is neither 'produce' nor 'consume'\n"
     "  found: 1\n"
     "  fix: name the port before the count: a.acquire('consume', 1) or a.acquire('produce', 1) "
     "(IRON's count-only form is on a handle, which aiedsl does not have)"),
])
def test_iron_spellings_say_what_aiedsl_writes(core: str, fill: str, error: str,
                                               design_file: DesignFile) -> None:
    """What an IRON user writes first: of.prod() in the runtime, of.acquire(1) in a core. They
    were an AttributeError and 'use produce or consume'."""
    path = design_file(IRON_SPELLINGS.replace("CORE", core).replace("FILL", fill))
    assert load_error(path) == error


def test_balance_join_parts_differ(design_file: DesignFile) -> None:
    """One core of a join produces 4 elements per run, the other 3."""
    path = design_file('''
        from aiedsl import Tensor, design, fifo, herd, i32, join, loop, runtime

        @design(device="npu1")
        def d(C: Tensor[2048, i32]):
            c0 = fifo(Tensor[256, i32], name="c0")
            c1 = fifo(Tensor[256, i32], name="c1")
            c = join([c0, c1], name="c")

            @herd(cols=2)
            def core(x, y):
                for _ in loop(4 if x == 0 else 3):
                    with [c0, c1][x].produce():
                        pass

            with runtime() as rt:
                rt.drain(c, C)
        ''')
    assert check_error(path) == (
        "d.py:7: error [balance]: join into 'c' gets different counts from its parts per run\n"
        "  found: c0: 4 (core[0,0]), c1: 3 (core[1,0])\n"
        "  d.py:12: core[0,0] makes 4 element(s) of 'c0' per run\n"
        "  d.py:12: core[1,0] makes 3 element(s) of 'c1' per run\n"
        "  fix: make every core of a join produce the same number of elements"
    )
    # a herd whose one core runs an extra iteration: that core, at its loop's acquire
    path.write_text(path.read_text().replace("cols=2", "cols=3").replace(
        "Tensor[2048, i32]", "Tensor[2304, i32]").replace(
        "[c0, c1]", "[c0, c1, c2]").replace('4 if x == 0 else 3', '4 if x == 2 else 3').replace(
        'c = join([c0, c1, c2]',
        'c2 = fifo(Tensor[256, i32], name="c2")\n    c = join([c0, c1, c2]'))
    assert check_error(path).splitlines()[1:3] == [
        "  found: c0: 3 (core[0,0]), c1: 3 (core[1,0]), c2: 4 (core[2,0])",
        "  d.py:13: core[2,0] makes 4 element(s) of 'c2' per run, the other parts 3"]


def test_balance_fill_not_whole_elements(design_file: DesignFile) -> None:
    """1000 elements into a fifo of 1024-element buffers."""
    path = design_file('''
        from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
        from aiedsl.kernels import passthrough

        @design(device="npu1_1col")
        def d(inp: Tensor[4096, i32], out: Tensor[4096, i32]):
            a = fifo(Tensor[1024, i32], name="a")
            b = fifo(Tensor[1024, i32], name="b")
            copy = passthrough(Tensor[1024, i32])

            @herd()
            def core():
                for _ in loop(4):
                    with a.consume() as x, b.produce() as y:
                        copy(x, y)

            with runtime() as rt:
                rt.fill(a, inp, (0, [1000], [1]))
                rt.drain(b, out)
        ''')
    assert check_error(path) == (
        "d.py:17: error [fill/drain size]: rt.fill of 'a' moves 1000 elements, not a whole "
        "number of its 1024-element buffers\n"
        "  limit: whole fifo elements per transfer: aiedsl checks and simulates each rt.fill and "
        "rt.drain as whole elements (on the NPU the stream would run on into the element the next "
        "transfer finishes, which aiedsl does not model)\n"
        "  found: 1000 / 1024 = 0.976562\n"
        "  fix: move a multiple of 1024 elements in each transfer of 'a' (here 1024 rather than "
        "1000)"
    )


def test_a_fill_of_part_of_a_linked_element_is_told_of_a_smaller_element(
        design_file: DesignFile) -> None:
    """48 then 16 values into 32-value elements a memtile forwards as 16 (as an IRON user's
    port did 40 and 24): the fix names element boundaries, and an element of 16, which applied
    checks."""
    source = '''
        from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
        from aiedsl.kernels import passthrough

        @design(device="npu1_1col")
        def d(inp: Tensor[64, i32], out: Tensor[64, i32]):
            a = fifo(Tensor[32, i32], name="a")
            a1 = a.forward(Tensor[16, i32], name="a1")
            b = fifo(Tensor[16, i32], name="b")
            copy = passthrough(Tensor[16, i32])

            @herd()
            def core():
                for _ in loop(4):
                    with a1.consume() as x, b.produce() as y:
                        copy(x, y)

            with runtime() as rt:
                rt.fill(a, inp, (0, [48], [1]))
                rt.fill(a, inp, (48, [16], [1]))
                rt.drain(b, out)
        '''
    assert check_error(design_file(source)) == (
        "d.py:18: error [fill/drain size]: rt.fill of 'a' moves 48 elements, not a whole "
        "number of its 32-element buffers\n"
        "  limit: whole fifo elements per transfer: aiedsl checks and simulates each rt.fill and "
        "rt.drain as whole elements (on the NPU the stream would run on into the element the next "
        "transfer finishes, which aiedsl does not model)\n"
        "  found: 48 / 32 = 1.5\n"
        "  fix: move a multiple of 32 elements in each transfer of 'a' (here 32 or 64 rather "
        "than 48), or give 'a' elements of 16 (16 x i32 divides every transfer of it, and a "
        "memtile link, not a kernel, takes its elements)")
    fixed = design_file(source.replace('fifo(Tensor[32, i32], name="a")',
                                       'fifo(Tensor[16, i32], name="a")'), "fixed.py")
    check_design(load_design(fixed).ir)


def test_fifo_consumer_missing(design_file: DesignFile) -> None:
    """Filled but never consumed."""
    path = design_file('''
        from aiedsl import Tensor, design, fifo, herd, i32, runtime

        @design(device="npu1_1col")
        def d(A: Tensor[256, i32]):
            a = fifo(Tensor[256, i32], name="a")
            unused = fifo(Tensor[256, i32], name="unused")

            @herd()
            def core():
                with a.consume():
                    pass

            with runtime() as rt:
                rt.fill(a, A)
                rt.fill(unused, A)
        ''')
    assert load_error(path) == (
        "d.py:6: error [fifo consumer]: fifo 'unused' has no consumer\n"
        "  fix: drain it in the runtime sequence (rt.drain), or consume it in a core; remove it "
        "if it is not needed"
    )


def test_fifo_producer_missing(design_file: DesignFile) -> None:
    """Consumed but never filled or produced."""
    path = design_file('''
        from aiedsl import Tensor, design, fifo, herd, i32, runtime

        @design(device="npu1_1col")
        def d(A: Tensor[256, i32]):
            a = fifo(Tensor[256, i32], name="a")

            @herd()
            def core():
                with a.consume():
                    pass
        ''')
    assert load_error(path) == (
        "d.py:5: error [fifo producer]: fifo 'a' has no producer: core[0,0] consumes it, and "
        "nothing fills it\n"
        "  limit: a fifo a core consumes is filled by the runtime (rt.fill) or produced by a "
        "core\n"
        "  found: no rt.fill and no produce()\n"
        "  d.py:9: core[0,0] consumes it\n"
        "  fix: fill it in the runtime sequence, rt.fill(a, <host tensor>), or produce it in a "
        "core"
    )


def test_a_fifo_consumed_at_both_ends_is_told_at_the_core(design_file: DesignFile) -> None:
    """consume() written where produce() was meant, the runtime draining the fifo: said at the
    core's acquire, with both ends, not as a fifo with no producer at its declaration (a
    newcomer's tester)."""
    path = design_file('''
        from aiedsl import Tensor, design, fifo, herd, i32, runtime

        @design(device="npu1_1col")
        def d(C: Tensor[256, i32]):
            c = fifo(Tensor[256, i32], name="c")

            @herd()
            def core():
                with c.consume():
                    pass

            with runtime() as rt:
                rt.drain(c, C)
        ''')
    assert load_error(path) == (
        "d.py:9: error [fifo producer]: fifo 'c' is consumed at both ends and produced by none: "
        "core[0,0] consumes it and the runtime drains it\n"
        "  limit: a fifo has one producer: a core (produce) or the runtime (rt.fill)\n"
        "  found: core[0,0]: c.consume(); the runtime: rt.drain\n"
        "  d.py:13: the drain\n"
        "  d.py:5: fifo 'c'\n"
        "  fix: produce it in core[0,0], `with c.produce() as e:`, for the runtime to drain what "
        "the core writes"
    )


def test_fifo_unused(design_file: DesignFile) -> None:
    """Declared, never filled, produced, drained or consumed."""
    path = design_file('''
        from aiedsl import Tensor, design, fifo, herd, i32, runtime

        @design(device="npu1_1col")
        def d(A: Tensor[256, i32]):
            a = fifo(Tensor[256, i32], name="a")
            unused = fifo(Tensor[256, i32], name="unused")

            @herd()
            def core():
                with a.consume():
                    pass

            with runtime() as rt:
                rt.fill(a, A)
        ''')
    assert load_error(path) == (
        "d.py:6: error [fifo unused]: fifo 'unused' is never used: it has no producer and no "
        "consumer\n"
        "  fix: remove it, or fill it (rt.fill) or produce it in a core, and drain it (rt.drain) "
        "or consume it in a core"
    )


def test_fifo_producer_two_cores(design_file: DesignFile) -> None:
    """Both cores of a 2x1 herd produce the same fifo."""
    path = design_file('''
        from aiedsl import Tensor, design, fifo, herd, i32, runtime

        @design(device="npu1")
        def d(A: Tensor[256, i32]):
            a = fifo(Tensor[256, i32], name="a")

            @herd(cols=2)
            def core(x, y):
                with a.produce():
                    pass

            with runtime() as rt:
                rt.drain(a, A)
        ''')
    assert load_error(path) == (
        "d.py:9: error [fifo producer]: fifo 'a' has two producers: core[0,0] and core[1,0]\n"
        "  limit: a fifo has exactly one producer\n"
        "  found: core[0,0] (line 9) and core[1,0] (line 9)\n"
        "  d.py:9: core[0,0] produces it here\n"
        "  fix: give each producer its own fifo (a channel index per core), or join them at a "
        "memtile"
    )


@pytest.mark.parametrize("rows, want", [
    # two cores of a column produce the broadcast fifo the memtile fills
    (2, "d.py:13: error [fifo producer]: fifo 'b_0' has two producers: core[0,0] and "
        "core[0,1]\n"
        "  limit: a fifo has exactly one producer\n"
        "  found: core[0,0] (line 13) and core[0,1] (line 13)\n"
        "  d.py:13: core[0,0] produces it here\n"
        "  fix: give each producer its own fifo (a channel index per core), or join them at a "
        "memtile; if the cores read b[0] (the host or another core fills it), they consume it: "
        "`with b[0].consume() as ...`"),
    # one core: the runtime's fill finds it produced
    (1, "d.py:18: error [fifo producer]: core[0,0] produces fifo 'b_0', which the runtime "
        "fills\n"
        "  limit: a fifo has exactly one producer: a core's produce(), or the host's rt.fill\n"
        "  found: b[0].produce() by core[0,0] (line 13) and rt.fill (line 18)\n"
        "  d.py:13: core[0,0] produces it here\n"
        "  fix: if core[0,0] reads what the host sends, consume it: `with b[0].consume() as "
        "...` (line 13); if it makes what the host reads back, give that a fifo of its own and "
        "rt.drain it"),
])
def test_producing_a_channel_the_host_fills_says_consume(rows: int, want: str,
                                                         design_file: DesignFile) -> None:
    """An MLIR-AIR user's slip: b[x].produce() for b[x].consume() on a channel the runtime
    fills through a memtile. The error named 'two producers' (or the shim, which does not
    produce 'b_0': the memtile does) and gave no limit, no found and no consume()."""
    path = design_file('''
        from aiedsl import Tensor, channel, design, fifo, herd, i32, memtile, runtime
        from aiedsl.kernels import add

        @design(device="npu1")
        def d(A: Tensor[ROWS * 256, i32], B: Tensor[256, i32], C: Tensor[ROWS * 256, i32]):
            a = channel(Tensor[256, i32], name="a", shape=[1, ROWS], via=memtile, split=1)
            b = channel(Tensor[256, i32], name="b", shape=[1], via=memtile, broadcast=ROWS)
            c = channel(Tensor[256, i32], name="c", shape=[1, ROWS], via=memtile, join=1)
            k = add(Tensor[256, i32])

            @herd(rows=ROWS)
            def core(x, y):
                with a[x, y].consume() as ta, b[x].produce() as tb, c[x, y].produce() as tc:
                    k(ta, tb, tc)

            with runtime() as rt:
                rt.fill(a[0, :], A)
                rt.fill(b[0], B)
                rt.drain(c[0, :], C)
        '''.replace("ROWS", str(rows)))
    assert load_error(path) == want


def test_acquire_more_than_depth_consume(design_file: DesignFile) -> None:
    """consume(3) of a depth-2 fifo."""
    path = design_file('''
        from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime

        @design(device="npu1_1col")
        def d(A: Tensor[768, i32], C: Tensor[768, i32]):
            a = fifo(Tensor[256, i32], name="a")
            c = fifo(Tensor[256, i32], name="c", depth=3)

            @herd()
            def core():
                with a.consume(3), c.produce(3):
                    pass

            with runtime() as rt:
                rt.fill(a, A)
                rt.drain(c, C)
        ''')
    assert check_error(path) == (
        "d.py:10: error [acquire]: core[0,0] acquires 3 elements of 'a' at once, but its consume "
        "end holds 2\n"
        "  limit: at most depth = 2\n"
        "  found: 3\n"
        "  d.py:5: 'a' is declared here, with its depth\n"
        "  fix: raise the fifo's depth to 3 (line 5) or acquire fewer at once"
    )


def test_acquire_more_than_depth_produce(design_file: DesignFile) -> None:
    """produce(3) of a depth-2 fifo."""
    path = design_file('''
        from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime

        @design(device="npu1_1col")
        def d(A: Tensor[512, i32], C: Tensor[768, i32]):
            a = fifo(Tensor[256, i32], name="a")
            c = fifo(Tensor[256, i32], name="c")

            @herd()
            def core():
                with a.consume(2), c.produce(3):
                    pass

            with runtime() as rt:
                rt.fill(a, A)
                rt.drain(c, C)
        ''')
    assert check_error(path) == (
        "d.py:10: error [acquire]: core[0,0] acquires 3 elements of 'c' at once, but its produce "
        "end holds 2\n"
        "  limit: at most depth = 2\n"
        "  found: 3\n"
        "  d.py:6: 'c' is declared here, with its depth\n"
        "  fix: raise the fifo's depth to 3 (line 6) or acquire fewer at once"
    )


def test_acquire_more_than_a_shared_memory_fifo_holds(design_file: DesignFile) -> None:
    """Neighbouring cores share one ring of the producer's depth (mlir-aie's
    createObjectFifoElements makes size(0) buffers): consume(3) of it waits forever, though the
    consumer's own depth is 3."""
    path = design_file('''
        from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
        from aiedsl.kernels import passthrough

        @design(device="npu1_1col")
        def d(A: Tensor[768, i32], C: Tensor[768, i32]):
            a = fifo(Tensor[256, i32], name="a")
            f = fifo(Tensor[256, i32], name="f", depth=1, consumer_depth=3)
            o = fifo(Tensor[256, i32], name="o")
            copy = passthrough(Tensor[256, i32])

            @herd(rows=2)
            def core(x, y):
                if y == 0:
                    for _ in loop(3):
                        with a.consume() as s, f.produce() as t:
                            copy(s, t)
                else:
                    with f.consume(3) as w:
                        for i in range(3):
                            with o.produce() as t:
                                copy(w[i], t)

            with runtime() as rt:
                rt.fill(a, A)
                rt.drain(o, C)
        ''')
    assert check_error(path) == (
        "d.py:18: error [acquire]: core[0,1] acquires 3 elements of 'f' at once, but 'f' lives "
        "in the memory its neighbouring cores share (core[0,0] (0, 2) -> core[0,1] (0, 3)), "
        "where both ends use the producer's 1 buffer\n"
        "  limit: at most the producer's depth = 1 (a consumer_depth counts only for a fifo "
        "crossing a DMA)\n"
        "  found: 3\n"
        "  d.py:7: 'f' is declared here, with its depth\n"
        "  fix: raise the fifo's depth to 3 (line 7) or acquire fewer at once"
    )


# A fifo from one herd to another whose consumer holds two elements at once (MLIR-AIR's
# herd-to-herd channel of depth [3, 1], the tester's lim_depth2.py), the herds neighbours
# (shared memory) or two rows apart (a DMA between them).
DEPTHS = '''
    import numpy as np
    from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
    from aiedsl.kernels import passthrough

    @design(device="npu1_1col")
    def d(A: Tensor[1024, i32], C: Tensor[1024, i32]):
        a = fifo(Tensor[256, i32], name="a")
        f = fifo(Tensor[256, i32], name="f", depth=%d, consumer_depth=%d)
        o = fifo(Tensor[256, i32], name="o")
        copy = passthrough(Tensor[256, i32])

        @herd(name="p", anchor=(0, 2))
        def p():
            for _ in loop(4):
                with a.consume() as s, f.produce() as t:
                    copy(s, t)

        @herd(name="q", anchor=(0, %d))
        def q():
            for _ in loop(2):
                with f.consume(2) as w:
                    for i in range(2):
                        with o.produce() as t:
                            copy(w[i], t)

        with runtime() as rt:
            rt.fill(a, A)
            rt.drain(o, C)

    @d.reference
    def reference(A):
        return A.copy()
    '''


def test_shared_memory_ring_has_the_producers_depth(design_file: DesignFile) -> None:
    """depth=3, consumer_depth=1 between neighbours: the one ring both cores use has the
    producer's 3 buffers (mlir-aie's createObjectFifoElements makes size(0) of them for a fifo
    it does not split), so acquiring 2 is fine; it was refused before placement for the
    consumer's 1."""
    d = load_design(design_file(DEPTHS % (3, 1, 3))).ir
    placed, _ = check_design(d)
    assert placed.physical is not None and "f" in placed.physical.shared
    assert simulate(load_design(design_file(DEPTHS % (3, 1, 3), "again.py"))).passed


def test_consumer_depth_across_a_dma(design_file: DesignFile) -> None:
    """The same fifo between cores two rows apart crosses a DMA: the consumer's end holds its
    own consumer_depth, and the fix raises that (depth= is the producer's)."""
    assert check_error(design_file(DEPTHS % (3, 1, 4))) == (
        "d.py:21: error [acquire]: q[0,0] acquires 2 elements of 'f' at once, but its consume "
        "end holds 1\n"
        "  limit: at most depth = 1\n"
        "  found: 2\n"
        "  d.py:8: 'f' is declared here, with its depth\n"
        "  fix: raise q[0,0]'s consumer_depth to 2 (line 8) or acquire fewer at once"
    )
    assert simulate(load_design(design_file(DEPTHS % (3, 2, 4), "fixed.py"))).passed


def test_shared_memory_ignores_a_larger_consumer_depth(design_file: DesignFile) -> None:
    """depth=1, consumer_depth=3 between neighbours: the ring has the producer's 1 buffer, so
    acquiring 2 waits forever (the consumer_depth would count across a DMA)."""
    assert check_error(design_file(DEPTHS % (1, 3, 3))) == (
        "d.py:21: error [acquire]: q[0,0] acquires 2 elements of 'f' at once, but 'f' lives in "
        "the memory its neighbouring cores share (p[0,0] (0, 2) -> q[0,0] (0, 3)), where both "
        "ends use the producer's 1 buffer\n"
        "  limit: at most the producer's depth = 1 (a consumer_depth counts only for a fifo "
        "crossing a DMA)\n"
        "  found: 2\n"
        "  d.py:8: 'f' is declared here, with its depth\n"
        "  fix: raise the fifo's depth to 2 (line 8) or acquire fewer at once"
    )
    assert simulate(load_design(design_file(DEPTHS % (2, 3, 3), "fixed.py"))).passed
    check_design(load_design(design_file(DEPTHS % (1, 3, 4), "apart.py")).ir)


def test_depth_list_says_consumer_depth(design_file: DesignFile) -> None:
    """IRON's and mlir-aie's per-end list, depth=[1, 3]: the fix spells it in aiedsl."""
    path = design_file(DEPTHS.replace("depth=%d, consumer_depth=%d", "depth=[%d, %d]")
                       % (1, 3, 4))
    assert load_error(path) == (
        "d.py:8: error [fifo depth]: fifo 'f' has depth=[1, 3]\n"
        "  limit: an integer from 1 to 63 (a lock starts at the depth and counts to 63)\n"
        "  found: [1, 3]\n"
        "  fix: give the producer's depth as depth= and the consumers' as consumer_depth=: "
        "depth=1, consumer_depth=3 (aiedsl writes mlir-aie's per-end list from them)"
    )


def test_channel_index_wrong_count(design_file: DesignFile) -> None:
    """A 2-d channel indexed with one index."""
    path = design_file('''
        from aiedsl import Tensor, channel, design, fifo, herd, i32, memtile, runtime

        @design(device="npu1")
        def d(A: Tensor[256, i32], C: Tensor[512, i32]):
            a = channel(Tensor[256, i32], shape=[1], via=memtile, broadcast=2, name="a")
            c = channel(Tensor[256, i32], shape=[2, 1], name="c")

            @herd(cols=2)
            def core(x, y):
                with a[y].consume(), c[x].produce():
                    pass

            with runtime() as rt:
                rt.fill(a[0], A)
                rt.drain(c[0, 0], C, (0, [256], [1]))
                rt.drain(c[1, 0], C, (256, [256], [1]))
        ''')
    assert load_error(path) == (
        "d.py:10: error [channel index]: channel 'c' has 2 dimension(s) [2, 1] but was indexed "
        "with 1\n"
        "  found: c[0]\n"
        "  fix: index it as c[i, j]"
    )


def test_channel_index_out_of_range(design_file: DesignFile) -> None:
    """a has one fifo, a[0]."""
    path = design_file('''
        from aiedsl import Tensor, channel, design, fifo, herd, i32, memtile, runtime

        @design(device="npu1")
        def d(A: Tensor[256, i32], C: Tensor[512, i32]):
            a = channel(Tensor[256, i32], shape=[1], via=memtile, broadcast=2, name="a")
            c = channel(Tensor[256, i32], shape=[2, 1], name="c")

            @herd(cols=2)
            def core(x, y):
                with a[y].consume(), c[x, y].produce():
                    pass

            with runtime() as rt:
                rt.fill(a[1], A)
                rt.drain(c[0, 0], C, (0, [256], [1]))
                rt.drain(c[1, 0], C, (256, [256], [1]))
        ''')
    assert load_error(path) == (
        "d.py:14: error [channel index]: a[1] is outside channel 'a' of shape [1]\n"
        "  fix: index each dimension from 0 to its size - 1 (0..0); every core a broadcast fifo "
        "reaches consumes the one index (broadcast=2: its consumers share it, not each its own)"
    )


def test_channel_index_slice_without_split_or_join(design_file: DesignFile) -> None:
    """c[:, 0] names a joined host fifo, but c has no join."""
    path = design_file('''
        from aiedsl import Tensor, channel, design, fifo, herd, i32, memtile, runtime

        @design(device="npu1")
        def d(A: Tensor[256, i32], C: Tensor[512, i32]):
            a = channel(Tensor[256, i32], shape=[1], via=memtile, broadcast=2, name="a")
            c = channel(Tensor[256, i32], shape=[2, 1], name="c")

            @herd(cols=2)
            def core(x, y):
                with a[y].consume(), c[x, y].produce():
                    pass

            with runtime() as rt:
                rt.fill(a[0], A)
                rt.drain(c[0, 0], C, (0, [256], [1]))
                rt.drain(c[:, 0], C, (256, [256], [1]))
        ''')
    assert load_error(path) == (
        "d.py:16: error [channel index]: channel 'c' has no split or join, so it cannot be "
        "sliced\n"
        "  found: c[:, 0]\n"
        "  fix: index every dimension, e.g. c[i, j]; to gather a group of its fifos into one "
        "host fifo, declare it with join= (outputs) or split= (inputs) and via=memtile"
    )


def test_channel_index_slice_wrong_axis(design_file: DesignFile) -> None:
    """c joins along axis 1, so c[0, :] is its host fifo, not c[:, 0]."""
    path = design_file('''
        from aiedsl import Tensor, channel, design, fifo, herd, i32, memtile, runtime

        @design(device="npu1")
        def d(A: Tensor[256, i32], C: Tensor[512, i32]):
            a = channel(Tensor[256, i32], shape=[1], via=memtile, broadcast=2, name="a")
            c = channel(Tensor[256, i32], shape=[2, 1], via=memtile, join=1, name="c")

            @herd(cols=2)
            def core(x, y):
                with a[y].consume(), c[x, y].produce():
                    pass

            with runtime() as rt:
                rt.fill(a[0], A)
                rt.drain(c[0, 0], C, (0, [256], [1]))
                rt.drain(c[:, 0], C, (256, [256], [1]))
        ''')
    assert load_error(path) == (
        "d.py:16: error [channel index]: 'c[...]' may take ':' only on its join axis (join=1)\n"
        "  found: c[:, 0]\n"
        "  fix: slice only the join axis, with a plain ':', e.g. c[i, :]"
    )


def test_channel_broadcast_count(design_file: DesignFile) -> None:
    """broadcast=4, but only the 2 cores of the herd consume a[0]."""
    path = design_file('''
        from aiedsl import Tensor, channel, design, fifo, herd, i32, memtile, runtime

        @design(device="npu1")
        def d(A: Tensor[256, i32], C: Tensor[512, i32]):
            a = channel(Tensor[256, i32], shape=[1], via=memtile, broadcast=4, name="a")
            c = channel(Tensor[256, i32], shape=[2, 1], name="c")

            @herd(cols=2)
            def core(x, y):
                with a[y].consume(), c[x, y].produce():
                    pass

            with runtime() as rt:
                rt.fill(a[0], A)
                rt.drain(c[0, 0], C, (0, [256], [1]))
                rt.drain(c[1, 0], C, (256, [256], [1]))
        ''')
    assert load_error(path) == (
        "d.py:5: error [broadcast]: a_0 (channel 'a' index [0]) is consumed by 2 core(s), but "
        "the channel declares broadcast=4\n"
        "  limit: 4 consumers\n"
        "  found: 2: core[0,0], core[1,0]\n"
        "  fix: make every core that should receive it consume it, or correct broadcast="
    )


def test_runtime_buffers_over_5(design_file: DesignFile) -> None:
    """Six host tensors; XRT passes at most five."""
    path = design_file('''
        from aiedsl import Tensor, design, fifo, herd, i32, runtime

        @design(device="npu1")
        def d(A: Tensor[64, i32], B: Tensor[64, i32], C: Tensor[64, i32], D: Tensor[64, i32],
              E: Tensor[64, i32], F: Tensor[64, i32]):
            ins = [fifo(Tensor[64, i32], name=f"in{i}") for i in range(3)]
            outs = [fifo(Tensor[64, i32], name=f"out{i}") for i in range(3)]

            @herd(cols=3)
            def core(x, y):
                with ins[x].consume(), outs[x].produce():
                    pass

            with runtime() as rt:
                for f, t in zip(ins, (A, B, C)):
                    rt.fill(f, t)
                for f, t in zip(outs, (D, E, F)):
                    rt.drain(f, t)
        ''')
    assert check_error(path) == (
        "d.py:3: error [runtime buffers]: design 'd' takes 6 host tensors\n"
        "  limit: 5, the host buffers every aiecc builds a kernel for (XRT groups 3..7: aiecc's "
        "kernels.json declared bo0..bo4 until mlir-aie PR 3252, and XRT crashes on a sixth "
        "there; the firmware translates only those five addresses)\n"
        "  found: 6\n"
        "  fix: pack tensors together into fewer host buffers (one tensor holding several, each "
        "fill or drain at its own offset)"
    )


def test_locks_core_over_16() -> None:
    """The lock check, on a core with 9 fifo endpoints (2 locks each).

    No design reaches it today: every core endpoint also takes a DMA channel, and the 2 + 2
    channels of a core (checked first) cap it at 8 locks. The check stays as a guard for
    endpoints that will not need a channel (shared-memory fifos), so its message is tested here
    on a hand-made usage table.
    """
    u = TileUsage((0, 2), "core", runs="core[0,0]",
                  locks=[Use(f"f{i}", 2, Loc(file="d.py", line=10 + i)) for i in range(9)])
    with pytest.raises(DesignError) as excinfo:
        _check_tile(u, get_target("npu1"), {}, {})
    assert str(excinfo.value) == (
        "d.py:18: error [core locks]: core tile (0, 2) (core[0,0]) needs more locks than it has\n"
        "  limit: 16\n"
        "  found: 18\n"
        + "".join(f"  d.py:{10 + i}: f{i}: 2\n" for i in range(9)) +
        "  fix: use fewer fifos on this tile or move one elsewhere"
    )


# -- the loader ----------------------------------------------------------------------------------

DEFINES = '''
    from aiedsl import Tensor, define, design, fifo, herd, i32, kernels, loop, runtime

    N = define("N", 4096)

    @design(device="npu1_1col")
    def d(inp: Tensor[N, i32], out: Tensor[N, i32]):
        a = fifo(Tensor[1024, i32], name="a")
        b = fifo(Tensor[1024, i32], name="b")

        @herd()
        def core():
            for _ in loop(N // 1024):
                with a.consume(), b.produce() as o:
                    kernels.zero(Tensor[1024, i32])(o)

        with runtime() as rt:
            rt.fill(a, inp)
            rt.drain(b, out)
    '''


def test_define_unknown_name(design_file: DesignFile) -> None:
    """-D M=3 for a design that only defines N: said at the design's first define(), where
    the names it takes are (it said d.py:1; a CLI tester's find)."""
    path = design_file(DEFINES)
    with pytest.raises(DesignError) as excinfo:
        load_from_command_line(path, ["M=3"])
    assert str(excinfo.value) == (
        "d.py:3: error [define]: -D M matches no define() in d.py\n"
        "  found: M\n"
        "  fix: the design defines: N"
    )


def test_define_unknown_name_from_python(design_file: DesignFile) -> None:
    """load_design(p, {"M": 3}) was told of -D M, at the design's first line (a tester): it is
    said in defines= words at the Python line that gave it."""
    path = design_file(DEFINES)
    with pytest.raises(DesignError) as excinfo:
        load_design(path, {"M": 3, "K": 1})
    line = inspect.currentframe().f_lineno - 1  # type: ignore[union-attr]
    assert str(excinfo.value) == (
        f"{display_path(__file__)}:{line}: error [define]: defines= names 'K', 'M', which match no "
        "define() in d.py\n"
        "  found: K, M\n"
        "  fix: the design defines: N"
    )


def test_define_not_an_int(design_file: DesignFile) -> None:
    """-D N=abc for an int define: the error points at the define() line."""
    path = design_file(DEFINES)
    assert cli_load_error(path, {"N": "abc"}) == (
        "d.py:3: error [define]: -D N=abc is not a valid int\n"
        "  found: abc\n"
        "  fix: give an int, e.g. -D N=4096 (from Python: defines={'N': 4096})"
    )


@pytest.mark.parametrize("text", ["\u0664\u0660\u0669\u0666", " 4096", "4096\n", "4096\x00"])
def test_define_int_in_other_digits_or_with_spaces_is_refused(design_file: DesignFile,
                                                               text: str) -> None:
    """Python's int() reads Arabic-Indic digits and spaces around a number, so -D N=<those>
    was taken as 4096 (a tester)."""
    path = design_file(DEFINES)
    assert cli_load_error(path, {"N": text}) == (
        f"d.py:3: error [define]: -D N={repr(text)[1:-1]} is not a valid int\n"
        "  limit: a number in the digits 0-9, with no spaces\n"
        f"  found: {text!r}\n"
        "  fix: give an int, e.g. -D N=4096 (from Python: defines={'N': 4096})"
    )


@pytest.mark.parametrize("text", ["1e-999", "-2.5E-400", "0.000001e-330"])
def test_a_float_define_too_small_for_a_float_is_refused(design_file: DesignFile,
                                                         text: str) -> None:
    """float() reads -D F=1e-999 as 0.0: a value written nonzero became zero (a tester)."""
    path = design_file(DEFINES.replace('N = define("N", 4096)',
                                       'N = define("N", 4096)\n    F = define("F", 0.5)'))
    assert load_error(path, {"F": text}) == (
        f"d.py:4: error [define]: -D F={text} is too small for a float: it reads as 0.0\n"
        "  limit: 0, or a magnitude of at least 5e-324 (the least nonzero float)\n"
        f"  found: {text}\n"
        "  fix: give -D F=0 if zero is meant, else a value of 5e-324 or more")
    for zero in ("0", "0.0", "-0e-999", "0e5"):
        assert load_design(path, {"F": zero}).ir.defines["F"] == 0.0


def test_a_huge_int_is_said_by_its_ends_and_length(design_file: DesignFile) -> None:
    """loop(10**5000) was a bare "ValueError: Exceeds the limit (4300 digits) for integer
    string conversion" instead of the loop's rule, and a -D of 5000 nines was printed uncut
    (a tester)."""
    path = design_file(DEFINES.replace("loop(N // 1024)", "loop(10**5000)"))
    limit = getattr(sys, "get_int_max_str_digits", lambda: None)
    before = limit()
    assert load_error(path) == (
        "d.py:12: error [loop]: loop(100000...000000 (5001 digits)) has more iterations than "
        "an MLIR index constant holds\n"
        "  limit: 1 to 9223372036854775807 (2^63 - 1)\n"
        "  found: 100000...000000 (5001 digits)\n"
        "  fix: use a count of at most sys.maxsize (2^63 - 1)"
    )
    assert "found: 999999...999999 (5000 digits)\n" in load_error(path, {"N": "9" * 5000})
    assert limit() == before  # Python's limit is back after the load


def test_define_override_is_used(design_file: DesignFile) -> None:
    """The same design checks clean with a valid override (so the two tests above are fair)."""
    path = design_file(DEFINES)
    handle = load_design(path, {"N": "8192"})
    check_design(handle.ir)
    assert handle.ir.defines == {"N": 8192}


BOOL_DEFINE = DEFINES.replace('N = define("N", 4096)', 'N = define("N", 4096)\n    FLAG = define("FLAG", False)')


@pytest.mark.parametrize("text, value", [("1", True), ("true", True), ("True", True),
                                         ("yes", True), ("ON", True), ("0", False),
                                         ("false", False), ("off", False)])
def test_a_bool_define_reads_as_people_write_it(design_file: DesignFile, text: str,
                                                value: bool) -> None:
    """-D FLAG=true read as False: only "1" was true, and any other word false."""
    path = design_file(BOOL_DEFINE)
    assert load_design(path, {"FLAG": text}).ir.defines["FLAG"] is value


def test_a_bool_define_refuses_a_word_it_does_not_know(design_file: DesignFile) -> None:
    path = design_file(BOOL_DEFINE)
    assert cli_load_error(path, {"FLAG": "banana"}) == (
        "d.py:4: error [define]: -D FLAG=banana is not a valid bool\n"
        "  limit: true or false (or 1, 0, yes, no, on, off)\n"
        "  found: banana\n"
        "  fix: give a bool, e.g. -D FLAG=true (from Python: defines={'FLAG': True})"
    )


def test_design_file_missing(design_file: DesignFile) -> None:
    design_file(DEFINES)  # chdir into the temp dir
    assert cli_load_error("missing.py", {}) == (
        "error [design file]: no design file at missing.py\n"
        "  found: missing.py\n"
        "  fix: give the path of a .py file that defines a @design"
    )


def test_design_file_that_is_a_directory(design_file: DesignFile) -> None:
    """A folder named adir.py was "no design file at adir.py" (a tester)."""
    design_file(DEFINES)  # chdir into the temp dir
    Path("adir.py").mkdir()
    assert cli_load_error("adir.py", {}) == (
        "error [design file]: adir.py is a directory, not a design file\n"
        "  found: adir.py\n"
        "  fix: give the path of a .py file that defines a @design"
    )


def test_the_working_directory_given_as_a_design_is_named_as_typed(
        design_file: DesignFile) -> None:
    """`aiedsl check /abs/folder` from inside that folder said ". is a directory" (a tester):
    the working directory keeps the name it was given."""
    design_file(DEFINES)  # chdir into the temp dir
    here = os.getcwd()
    assert cli_load_error(here, {}) == (
        f"error [design file]: {here} is a directory, not a design file\n"
        f"  found: {here}\n"
        "  fix: give the path of a .py file that defines a @design"
    )


def test_an_empty_design_path_is_said_to_be_empty(design_file: DesignFile) -> None:
    """`aiedsl check ""` said ". is a directory" (a tester): Path("") is the working
    directory. The command line hands the path on as typed."""
    design_file(DEFINES)  # chdir into the temp dir
    message = ("error [design file]: the design file's path is empty\n"
               "  found: ''\n"
               "  fix: give the path of a .py file that defines a @design, e.g. "
               "designs/passthrough.py")
    assert cli_load_error("", {}) == message
    r = aiedsl("check", "", cwd=Path.cwd())
    assert (r.returncode, r.stderr.strip()) == (2, message)


def test_defines_unknown_to_a_design_without_any(design_file: DesignFile) -> None:
    path = design_file(DEFINES.replace('N = define("N", 4096)', "N = 4096"))
    with pytest.raises(DesignError) as excinfo:
        load_from_command_line(path, ["M=3", "K=1"])
    assert str(excinfo.value) == (
        "d.py:1: error [define]: -D K, M match no define() in d.py\n"
        "  found: K, M\n"
        "  fix: the design has no define(): remove -D K and -D M"
    )


def test_design_file_that_is_not_python(design_file: DesignFile) -> None:
    design_file(DEFINES)  # chdir into the temp dir
    Path("notes.md").write_text("# notes\n")
    assert cli_load_error("notes.md", {}) == (
        "error [design file]: notes.md is not a Python file\n"
        "  limit: a design file ends in .py\n"
        "  found: notes.md\n"
        "  fix: give the .py file that defines the @design (a kernel's C++ is tested with "
        "`aiedsl kernel test FILE.cc`)"
    )
    Path("design.json").write_text("{}")
    assert cli_load_error("design.json", {}).splitlines()[-1] == (
        "  fix: give the .py file that defines the @design (a build's design.json is read from "
        "Python: aiedsl.build(aiedsl.DesignHandle(aiedsl.load_json(PATH))))")


# -- the command line ----------------------------------------------------------------------------

BROKEN = '''
    from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime

    @design(device="npu1_1col")
    def d(inp: Tensor[4096, i32], out: Tensor[4096, i32]):
        a = fifo(Tensor[1024, i32], name="a")
        b = fifo(Tensor[1024, i32], name="b")

        @herd()
        def core():
            for _ in loop(3):
                with a.consume(), b.produce():
                    pass

        with runtime() as rt:
            rt.fill(a, inp)
            rt.drain(b, out)
    '''

BROKEN_MESSAGE = (
    "d.py:11: error [balance]: fifo 'a': the runtime fills 4 element(s) per run, but core[0,0] "
    "takes 3\n"
    "  limit: every consumer takes exactly 4\n"
    "  found: 3\n"
    "  d.py:15: produced here\n"
    "  fix: make loop counts and fill/drain sizes agree (each element 1024xi32); a mismatch hangs "
    "on the NPU"
)


def aiedsl(*args: str, cwd: Path, traceback: bool = False) -> subprocess.CompletedProcess[str]:
    """Run ``python -m aiedsl.cli ARGS`` in ``cwd``."""
    env = {k: v for k, v in os.environ.items() if k != "AIEDSL_TRACEBACK"}
    if traceback:
        env["AIEDSL_TRACEBACK"] = "1"
    return run_command(*args, cwd=cwd, env=env)


def test_cli_check_prints_the_message_and_exits_2(design_file: DesignFile) -> None:
    path = design_file(BROKEN)
    r = aiedsl("check", "d.py", cwd=path.parent)
    assert r.returncode == 2
    assert r.stderr == BROKEN_MESSAGE + "\n"
    assert "Traceback" not in r.stderr


def test_cli_check_loader_error_exits_2(design_file: DesignFile) -> None:
    path = design_file(BROKEN)
    r = aiedsl("check", "d.py", "-D", "N=1", cwd=path.parent)
    assert r.returncode == 2
    assert r.stderr == (
        "d.py:1: error [define]: -D N matches no define() in d.py\n"
        "  found: N\n"
        "  fix: the design has no define(): remove -D N\n"  # it said "defines: nothing"
    )


def test_cli_check_missing_file_exits_2(tmp_path: Path) -> None:
    r = aiedsl("check", "missing.py", cwd=tmp_path)
    assert r.returncode == 2
    assert r.stderr == (
        "error [design file]: no design file at missing.py\n"
        "  found: missing.py\n"
        "  fix: give the path of a .py file that defines a @design\n"
    )


def test_cli_traceback_env_shows_the_traceback(design_file: DesignFile) -> None:
    path = design_file(BROKEN)
    r = aiedsl("check", "d.py", cwd=path.parent, traceback=True)
    assert r.returncode == 2  # the traceback is added; the exit code stays
    assert "Traceback (most recent call last)" in r.stderr
    assert r.stderr.endswith("aiedsl.errors.DesignError:\n" + BROKEN_MESSAGE + "\n")


def test_cli_build_of_a_broken_design_writes_nothing(design_file: DesignFile) -> None:
    path = design_file(BROKEN)
    out = path.parent / "out"
    r = aiedsl("build", "d.py", "-o", str(out), cwd=path.parent)
    assert r.returncode == 2
    assert r.stderr == BROKEN_MESSAGE + "\n"
    assert not out.exists()
    assert sorted(p.name for p in path.parent.iterdir()) == ["d.py"]


# -- DMA rules taken from mlir-aie's verifiers (checks/dma/ cites each) --------------------------

SHIM_TRANSPOSE = '''
    from aiedsl import Tensor, design, fifo, herd, kernels, loop, runtime, {dt}

    @design(device="npu1_1col")
    def d(A: Tensor[{n}, {dt}], C: Tensor[{total}, {dt}]):
        a = fifo(Tensor[{elem}, {dt}], name="a")
        c = fifo(Tensor[{elem}, {dt}], name="c")

        @herd()
        def core():
            for _ in loop({steps}):
                with a.consume(), c.produce() as o:
                    kernels.zero(Tensor[{elem}, {dt}])(o)

        with runtime() as rt:
            rt.fill(a, A, {pattern})
            rt.drain(c, C)
    '''


def _shim(design_file: DesignFile, pattern: str, *, dt: str = "i32", n: int = 2048,
          elem: int = 64, steps: int = 32) -> Path:
    return design_file(SHIM_TRANSPOSE.format(dt=dt, n=n, total=elem * steps, elem=elem,
                                             steps=steps, pattern=pattern))


def _passes(path: Path) -> None:
    check_design(load_design(path).ir)


@pytest.mark.parametrize("pattern", ["(0, [32, 64], [1, 32])", "(0, [32, 64, 1], [1, 32, 1])"])
def test_dma_pattern_i32_transpose_on_the_shim_is_legal(design_file: DesignFile,
                                                         pattern: str) -> None:
    """The DMA-only transpose of a 64x32 i32 matrix, with or without a trailing size-1
    dimension: verifyStridesWraps accepts a non-unit innermost stride for 4-byte elements
    (getHardwareStridesWraps encodes it as stride - 1)."""
    _passes(_shim(design_file, pattern))


@pytest.mark.parametrize("pattern, found", [
    ("(0, [32, 64], [1, 32])",
     "the innermost dimension is contiguous (stride 1) for 2-byte elements"),
    ("(0, [32, 64, 1], [1, 32, 1])", "the innermost run is a multiple of 4 bytes")])
def test_dma_pattern_bf16_transpose_on_the_shim_is_not(design_file: DesignFile, pattern: str,
                                                        found: str) -> None:
    """The same walk of 2-byte elements: the DMA moves whole words, so either spelling is
    rejected (the trailing size-1 one for its 2-byte runs)."""
    assert f"limit: {found}" in check_error(_shim(design_file, pattern, dt="bf16"))


def test_dma_pattern_i32_innermost_stride_must_be_whole_words(design_file: DesignFile) -> None:
    """An i32 innermost stride is any number of elements, each a word: 3 passes."""
    _passes(_shim(design_file, "(0, [3, 64], [1, 3])", n=192, elem=64, steps=3))


@pytest.mark.parametrize("stride, ok", [(1 << 20, True), ((1 << 20) + 1, False)])
def test_dma_pattern_shim_stride_limit(design_file: DesignFile, stride: int, ok: bool) -> None:
    """verifyStridesWraps: a shim BD's step fields hold 20 bits (stride - 1), so a stride of
    2^20 words passes and 2^20 + 1 does not."""
    path = _shim(design_file, f"(0, [2, 64], [{stride}, 1])", n=stride + 64, elem=64, steps=2)
    if ok:
        _passes(path)
    else:
        assert check_error(path) == (
            "d.py:15: error [dma pattern]: rt.fill of 'a' from 'A' breaks a DMA rule\n"
            "  limit: each stride <= 1048576 words of 4 bytes (the shim BD's 20-bit step fields "
            "hold the stride less one; aiedsl's bound: mlir-aie's verifyStridesWraps lets one "
            "more through, which the field cannot hold)\n"
            f"  found: stride {stride} = {stride} words (offset 0, sizes [1, 1, 2, 64], "
            f"strides [0, 0, {stride}, 1])\n"
            "  fix: split the transfer into several fills or drains nearer each other"
        )


TILE_DIMS = '''
    from aiedsl import Tensor, bf16, design, fifo, herd, i8, i32, kernels, runtime

    @design(device="npu1_1col")
    def d(A: Tensor[{n}, {dt}], C: Tensor[64, i32]):
        {decl}
        c = fifo(Tensor[64, i32], name="c")

        @herd()
        def core():
            with a.consume(), c.produce() as o:
                kernels.zero(Tensor[64, i32])(o)

        with runtime() as rt:
            rt.fill({filled}, A)
            rt.drain(c, C)
    '''


def _tile(design_file: DesignFile, dims: list[tuple[int, int]], *, on: str, n: int,
          dt: str = "i32") -> Path:
    if on == "memtile":
        decl = (f'a_l3 = fifo(Tensor[{n}, {dt}], name="a_l3")\n'
                f'        a = a_l3.forward(name="a", dims_to_stream={dims!r})')
        filled = "a_l3"
    else:
        decl = f'a = fifo(Tensor[{n}, {dt}], name="a", depth=1, dims_from_stream={dims!r})'
        filled = "a"
    return design_file(TILE_DIMS.format(n=n, dt=dt, decl=decl, filled=filled))


@pytest.mark.parametrize("on, dims, n, dt, limit", [
    ("memtile", [(512, 2), (2, 1)], 1024, "i32", None),
    ("memtile", [(513, 2), (2, 1)], 1026, "i32", "each size <= 512 on a memtile BD"),
    ("memtile", [(600, 2), (2, 1)], 1200, "i32", "each size <= 512 on a memtile BD"),
    ("memtile", [(8, 513), (513, 1)], 4104, "i32",  # the innermost counts too
     "innermost size <= 512 elements on a memtile BD"),
    ("core", [(255, 4), (4, 1)], 1020, "i32", None),
    ("core", [(256, 4), (4, 1)], 1024, "i32", "each size <= 255 on a core BD"),
    ("core", [(4, 255), (255, 1)], 1020, "i32", None),
    ("core", [(4, 256), (256, 1)], 1024, "i32", "innermost size <= 255 words of 4 bytes on a "
     "core BD"),
    # the innermost wrap counts words: 256 bf16 and 512 i8 are 128 words (a tester's find)
    ("core", [(4, 256), (256, 1)], 1024, "bf16", None),
    ("core", [(2, 510), (510, 1)], 1020, "bf16", None),
    ("core", [(2, 512), (512, 1)], 1024, "bf16", "innermost size <= 255 words of 4 bytes on a "
     "core BD"),
    ("core", [(2, 512), (512, 1)], 1024, "i8", None),
    ("core", [(2, 516), (516, 1)], 1032, "i8", "innermost size <= 512 elements on a core BD"),
])
def test_dma_dims_tile_size_limit(design_file: DesignFile, on: str, dims: list[tuple[int, int]],
                                  n: int, dt: str, limit: str | None) -> None:
    """A memtile or core BD's every size, the outermost too: at most 512 elements (1e400306's
    DMABDOp::verify) and within its wrap fields (10 bits on a memtile, 8 on a core, checked
    since PR 3548), the innermost of which counts 4-byte words."""
    path = _tile(design_file, dims, on=on, n=n, dt=dt)
    if limit is None:
        _passes(path)
        return
    message = check_error(path)
    assert f"  limit: {limit} (" in message
    assert message.startswith("d.py:5: error [dma pattern]: " if on == "core" else
                              "d.py:6: error [dma pattern]: ")


def test_dma_dims_600_on_a_memtile_reads_as_the_verifier_says(design_file: DesignFile) -> None:
    assert check_error(_tile(design_file, [(600, 2), (2, 1)], on="memtile", n=1200)) == (
        "d.py:6: error [dma pattern]: dims_to_stream of 'a' on memtile breaks a DMA rule\n"
        "  limit: each size <= 512 on a memtile BD (mlir-aie's DMABDOp::verify: at most 512 at "
        "1e400306; the 10-bit wrap fields since PR 3548)\n"
        "  found: 600 ([(600, 2), (2, 1)])\n"
        "  fix: split that dimension in two, or move the layout to the runtime pattern"
    )


@pytest.mark.parametrize("on", ["memtile", "core"])
@pytest.mark.parametrize("dims, ok", [
    ([(2, 128), (128, 1)], True),
    ([(2, 0), (128, 1)], False),
    ([(1, 0), (2, 128), (128, 1)], False),  # a size-1 dimension's stride is checked too
])
def test_dma_dims_tile_stride_zero(design_file: DesignFile, on: str,
                                   dims: list[tuple[int, int]], ok: bool) -> None:
    """DMABDOp::verify: 'Invalid step size; must be a positive integer.' on every dimension."""
    path = _tile(design_file, dims, on=on, n=256)
    if ok:
        _passes(path)
    else:
        assert f"  limit: every stride >= 1 on a {on} BD (mlir-aie's DMABDOp::verify: a step " \
               "size of 0 is invalid)\n" in check_error(path)


def test_dma_dims_stride_zero_message(design_file: DesignFile) -> None:
    """An outer stride of 0 where a memtile sends (MLIR-AIR's L2 reuse tried as a layout) is
    what the forward's repeat= does: the fix says so, and what is left of the layout."""
    assert check_error(_tile(design_file, [(2, 0), (512, 1)], on="memtile", n=512)) == (
        "d.py:6: error [dma pattern]: dims_to_stream of 'a' on memtile breaks a DMA rule\n"
        "  limit: every stride >= 1 on a memtile BD (mlir-aie's DMABDOp::verify: a step size of "
        "0 is invalid)\n"
        "  found: (2, 0) in [(2, 0), (512, 1)]\n"
        "  fix: to send each element 2 times, forward with repeat=2: a_l3.forward(..., repeat=2) "
        "(mlir-aie's repeat_count: the memtile sends each element 2 times without receiving it "
        "again), and drop (2, 0); what is left, [(512, 1)], is a plain copy: leave "
        "dims_to_stream out"
    )


def test_dma_dims_stride_zero_message_elsewhere(design_file: DesignFile) -> None:
    """A stride of 0 no repeat= replaces (a core's dims_from_stream) names the option too."""
    assert check_error(_tile(design_file, [(2, 0), (128, 1)], on="core", n=256)) == (
        "d.py:5: error [dma pattern]: dims_from_stream of 'a' on core[0,0] breaks a DMA rule\n"
        "  limit: every stride >= 1 on a core BD (mlir-aie's DMABDOp::verify: a step size of 0 "
        "is invalid)\n"
        "  found: (2, 0) in [(2, 0), (128, 1)]\n"
        "  d.py:10: core[0,0] consumes it here\n"
        "  fix: give each dimension a positive stride; to send each element n times, repeat the "
        "fifo a memtile sends (forward(..., repeat=n), split(..., repeat=n), channel(..., "
        "via=memtile, repeat=n): mlir-aie's repeat_count), or use a consumer with a deeper fifo "
        "or a second fill"
    )


@pytest.mark.parametrize("on, dims, n, ok", [
    ("memtile", [(1, 512), (512, 1)], 512, True),
    ("memtile", [(1, 513), (512, 1)], 512, False),  # past the buffer (DMABDOp::verify)
    ("core", [(1, 8192), (72, 128), (128, 1)], 9216, True),
    ("core", [(1, 8193), (72, 128), (128, 1)], 9216, False),  # a core's 13-bit step field
])
def test_dma_dims_tile_stride_limit(design_file: DesignFile, on: str,
                                    dims: list[tuple[int, int]], n: int, ok: bool) -> None:
    """A tile BD's strides (a size-1 dimension's too): within the buffer, below 2^19 elements
    and within the step field (2^13 words on a core, 2^17 on a memtile)."""
    path = _tile(design_file, dims, on=on, n=n)
    if ok:
        _passes(path)
    else:
        assert "  limit: each stride <= the" in check_error(path)


@pytest.mark.parametrize("on, dims, n, fix", [
    # a tester's 4x16 band transpose with the outermost size written 1: the memtile BD wraps
    # there, and the hardware's next dimension steps one word on (it read 1, 17, 33, ...)
    ("memtile", [(1, 64), (16, 1), (4, 16)], 256, "make the outermost size 4, or write all 4 "
     "dimensions, the outermost stepping over whole 64-element blocks of this layout: "
     "[(1, 64), (1, 64), (16, 1), (4, 16)] (the last dimension's size is not encoded: it steps "
     "until the BD is done)"),
    ("core", [(4, 1), (8, 16)], 128, "make the outermost size 16, or write all 3 dimensions "
     "(the last one's size is not encoded: it steps until the BD is done)"),
    # (an outermost size of 128 would read to 254: DMABDOp::verify refuses it, so not offered)
    ("memtile", [(64, 2)], 128, "write all 4 dimensions (the last one's size is not encoded: "
     "it steps until the BD is done)"),
    ("core", [(1, 64), (16, 1), (4, 16)], 256, None),  # all of a core BD's 3: not encoded
    ("memtile", [(2, 8), (8, 1)], 16, None),  # the product: the walk as written
])
def test_dma_dims_a_shorter_layouts_outermost_size_wraps(
        design_file: DesignFile, on: str, dims: list[tuple[int, int]], n: int,
        fix: str | None) -> None:
    """Only the last of a BD's dimensions has no wrap (D2 on a core, D3 on a memtile): a layout
    with fewer keeps its outermost size, which aiedsl walked past as if it were not encoded."""
    path = _tile(design_file, dims, on=on, n=n)
    if fix is None:
        _passes(path)
        return
    most = {"core": 3, "memtile": 4}[on]
    total = int(np.prod([s for s, _ in dims]))
    lines = check_error(path).splitlines()
    assert lines[1:3] == [
        f"  limit: a BD walks at most the product of a layout's sizes when the layout has fewer "
        f"than {most} dimensions on a {on} (this BD moves {n} elements): its outermost size is "
        "then a wrap the hardware keeps, and past it the BD's next dimension steps one word on "
        "(only the last of a BD's dimensions has no wrap: mlir-aie's configureBdInBlock, "
        "aie-rt's DMA BD fields)",
        f"  found: sizes multiplying to {total} ({', '.join(map(str, dims)).join('[]')})"]
    assert lines[-1] == f"  fix: {fix}"
    if "[(1, 64), (1, 64)" in fix:  # the offered layout checks
        _passes(_tile(design_file, [(1, 64), (1, 64), (16, 1), (4, 16)], on=on, n=n))


UNEVEN_JOIN = '''
from aiedsl import Tensor, design, fifo, herd, i32, join, loop, runtime
from aiedsl.kernels import buffer, declare

def ref(a, b):
    b[...] = a

@design(device="npu1_1col")
def d(A: Tensor[384, i32], B: Tensor[384, i32]):
    l1 = fifo(Tensor[48, i32], name="l1")
    parts = l1.split([Tensor[12, i32], Tensor[24, i32], Tensor[12, i32]], offsets=[0, 12, 36])
    outs = [fifo(Tensor[n, i32], name=f"o{i}") for i, n in enumerate([12, 24, 12])]
    l4 = join(outs, offsets=[0, 12, 36], name="l4", dims_to_stream=DIMS)
    ks = [declare(f"copy_{n}", source="copy.cc", entry=f"copy<{n}>",
                  args=[buffer("a", Tensor[n, i32]), buffer("b", Tensor[n, i32], "out")],
                  reference=ref, cycles=n + 20, cost="est", exact=True) for n in [12, 24, 12]]

    @herd(rows=3)
    def core(x, y):
        for _ in loop(8):
            with parts[y].consume() as a, outs[y].produce() as b:
                ks[y](a, b)

    with runtime() as rt:
        rt.fill(l1, A)
        rt.drain(l4, B)

@d.reference
def reference(A):
    return A.reshape(-1, 3, 4).transpose(0, 2, 1).reshape(-1)
'''


def test_an_uneven_joins_wrapped_layout_is_fixed_by_a_layout_the_join_takes(
        design_file: DesignFile) -> None:
    """A join of 12-, 24- and 12-element parts with a 4x3 transpose in 2 dimensions: the fix
    said "make the outermost size 8", which the join's own rule refuses (index 15 past a
    12-element part). It offers the 4-dimension layout that repeats the transpose per 12
    elements, which checks and simulates exactly."""
    path = design_file(UNEVEN_JOIN.replace("DIMS", "[(4, 1), (3, 4)]"))
    (path.parent / "copy.cc").write_text(
        "#include <stdint.h>\ntemplate <int N> void copy(const int32_t *a, int32_t *b) {\n"
        "  for (int i = 0; i < N; i++) b[i] = a[i];\n}\n")
    assert check_error(path) == (
        "d.py:12: error [dma pattern]: dims_to_stream of 'l4' on memtile breaks a DMA rule\n"
        "  limit: a BD walks at most the product of a layout's sizes when the layout has fewer "
        "than 4 dimensions on a memtile (this BD moves 24 elements): its outermost size is then "
        "a wrap the hardware keeps, and past it the BD's next dimension steps one word on (only "
        "the last of a BD's dimensions has no wrap: mlir-aie's configureBdInBlock, aie-rt's DMA "
        "BD fields)\n"
        "  found: sizes multiplying to 12 ([(4, 1), (3, 4)])\n"
        "  fix: write all 4 dimensions, the outermost stepping over whole 12-element blocks of "
        "this layout: [(1, 12), (1, 1), (4, 1), (3, 4)] (the last dimension's size is not "
        "encoded: it steps until the BD is done)")
    fixed = design_file(UNEVEN_JOIN.replace("DIMS", "[(1, 12), (1, 1), (4, 1), (3, 4)]"),
                        "fixed.py")
    from aiedsl.sim import simulate

    result = simulate(load_design(fixed))
    assert result.passed, [c.line() for c in result.checks]


@pytest.mark.parametrize("dims, ok", [
    ([(4, 256), (256, 1)], True), ([(5, 256), (1, 256), (1, 256), (256, 1)], False)])
def test_dma_dims_sizes_as_written_stay_inside(design_file: DesignFile,
                                               dims: list[tuple[int, int]], ok: bool) -> None:
    """DMABDOp::verify sums every size as written: an outermost size of 5 reads past a
    1024-element buffer even though 4 steps cover it (in all of a memtile BD's 4 dimensions,
    where the outermost size is not encoded)."""
    path = _tile(design_file, dims, on="memtile", n=1024)
    if ok:
        _passes(path)
    else:
        assert check_error(path) == (
            "d.py:6: error [dma pattern]: dims_to_stream of 'a' on memtile breaks a DMA rule\n"
            "  limit: every address inside the 1024-element buffer, with every size as written "
            "(mlir-aie's DMABDOp::verify)\n"
            "  found: address 1279 ([(5, 256), (1, 256), (1, 256), (256, 1)])\n"
            "  fix: make the outermost size 4 (the element's outer steps)"
        )


def test_a_walk_out_of_bounds_whose_smaller_size_reads_twice_says_so(
        design_file: DesignFile) -> None:
    """(an IRON user's tester) "make the outermost size 8" gave a walk inside the buffer that
    reads elements twice, which the kernel-layout check refused next: the fix says so, and
    that the strides are wrong unless a sliding window is meant (a reviewer: one is legal)."""
    path = _tile(design_file, [(16, 256), (16, 4), (4, 64), (8, 1)], on="memtile", n=4096)
    assert check_error(path).splitlines()[-1] == (
        "  fix: make the outermost size 8 (the element's outer steps); that walk reads some "
        "elements twice ([(8, 256), (16, 4), (4, 64), (8, 1)]), as a sliding window means to: "
        "for a layout of each element once, fix the strides")


def test_a_sliding_window_reads_only_what_it_holds(design_file: DesignFile) -> None:
    """The design of tests/bad_inputs/released_buffer_next_iteration.py, reading the window it
    holds instead of the element the first iteration released: accepted, and it simulates."""
    bad = (Path(__file__).parent / "bad_inputs" / "released_buffer_next_iteration.py").read_text()
    good = bad.replace("a.acquire(\"consume\", 2)\n", "w = a.acquire(\"consume\", 2)\n")
    good = good.replace("copy(first[0], y)", "copy(w[1], y)")
    good = good.replace("return inp[:3072].copy()", "return inp[1024:].copy()")
    assert good.count("w[1]") == 1 and good.count("w = ") == 1
    from aiedsl.sim import simulate

    assert simulate(load_design(design_file(good))).passed


def test_a_buffer_of_the_kernels_size_in_another_shape_is_refused(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """mlir-aie's func.call verifier compares operand and parameter types exactly: a 16x16 element
    passed where the kernel declares 256 values would be refused by aiecc, after the build."""
    monkeypatch.chdir(Path(__file__).parent / "bad_inputs")
    assert check_error(Path("ksig_call_buffer_other_shape.py")) == (
        "ksig_call_buffer_other_shape.py:17: error [kernel signature]: argument 0 ('src') of 'passthrough_i32_256' "
        "expects 256xi32, but core[0,0] passes an element of 'a' (16x16xi32): the same 256 "
        "elements in another shape, and func.call takes only the declared memref type\n"
        "  limit: passthrough_i32_256(src: 256xi32, dst: 256xi32)\n"
        "  found: 16x16xi32\n"
        "  ksig_call_buffer_other_shape.py:11: 'a' is declared 16x16xi32\n"
        "  fix: declare 'a' with the kernel's shape, Tensor[256, i32] (the same bytes), or "
        "declare the kernel for 16x16xi32")


def test_a_forwarded_buffer_in_another_shape_names_the_declaration(
        design_file: DesignFile) -> None:
    """The fix named the forward, whose shape is its input's: the line to change is the
    input's declaration (a tester)."""
    src = (Path(__file__).parent.parent / "designs" / "passthrough.py").read_text()
    src = src.replace("to_mem = fifo(Tensor[TILE, i32]", "to_mem = fifo(Tensor[TILE // 4, 4, i32]")
    message = check_error(design_file(src, "p.py"))
    assert message.splitlines()[-3:] == [
        "  p.py:19: 'in_l1' is made by a forward",
        "  p.py:18: 'in_l3' is declared 256x4xi32",
        "  fix: pass the kernel's shape to the forward that makes 'in_l1', .forward(Tensor[1024, "
        "i32], ...) (the same bytes), or declare 'in_l3' with it if no forward between them "
        "gives a shape of its own; or declare the kernel for 256x4xi32"]
    # both ways pass; the forward's own is the one that works when it was given a shape (a
    # reviewer's: the fix named only the declaration, which such a forward ignores)
    for old, new in (("to_mem = fifo(Tensor[TILE // 4, 4, i32]", "to_mem = fifo(Tensor[TILE, i32]"),
                     ('forward(name="in_l1")', 'forward(Tensor[TILE, i32], name="in_l1")')):
        fixed = src.replace(old, new)
        check_design(load_design(design_file(fixed, "fixed.py")).ir)


@pytest.mark.parametrize(("name", "message"), [
    ("reference_names_unfilled_tensor.py",
     "reference_names_unfilled_tensor.py:25: error [reference]: the reference of 'e1' names "
     "argument 0 'A', but is handed 'C' there (the runtime never fills 'A')\n"
     "  limit: the tensors the runtime fills, in argument order: C\n"
     "  found: reference(A)\n"
     "  fix: fill 'A' where the runtime should (rt.fill(fifo, A)), or name the parameter after "
     "the tensor it gets"),
    ("reference_names_swapped.py",
     "reference_names_swapped.py:40: error [reference]: the reference of 'vector_scalar_mul' "
     "names argument 0 'factor', but is handed 'inp' there ('factor' is argument 1)\n"
     "  limit: the tensors the runtime fills, in argument order: inp, factor\n"
     "  found: reference(factor, inp)\n"
     "  fix: take them in argument order: reference(inp, factor)"),
])
def test_a_reference_parameter_named_after_another_tensor_is_refused(
        monkeypatch: pytest.MonkeyPatch, name: str, message: str) -> None:
    """The reference gets the filled tensors by position: ``def reference(A)`` handed C's
    array (a fill that named C where A was meant) agreed with the run and said PASS."""
    monkeypatch.chdir(Path(__file__).parent / "bad_inputs")
    assert load_error(name) == message


def test_reference_parameters_not_named_after_tensors_take_them_by_position(
        design_file: DesignFile) -> None:
    src = (Path(__file__).parent.parent / "designs" / "vector_scalar_mul.py").read_text()
    src = src.replace("def reference(inp: np.ndarray, factor: np.ndarray)",
                      "def reference(x: np.ndarray, f: np.ndarray)")
    src = src.replace("return (inp.astype(np.int64) * int(factor[0]))",
                      "return (x.astype(np.int64) * int(f[0]))")
    from aiedsl.sim import simulate
    assert simulate(load_design(design_file(src))).passed


def test_a_fifo_from_the_shim_to_the_shim_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """rt.fill and rt.drain of one fifo: nothing on the NPU between, one shim DMA allocation
    for two directions; the simulator passed it as a copy."""
    monkeypatch.chdir(Path(__file__).parent / "bad_inputs")
    assert load_error("fifo_shim_to_shim.py") == (
        "fifo_shim_to_shim.py:13: error [fifo ends]: fifo 'a' is filled and drained by the "
        "runtime with nothing between: both of its ends are the shim\n"
        "  limit: a fifo runs between a shim and a core, memtile or core tile, or between "
        "those\n"
        "  found: shim -> shim\n"
        "  fifo_shim_to_shim.py:12: the fill\n"
        "  fix: to copy host data through the NPU, forward it through a memtile: "
        "b = a.forward(name=\"b\"), and drain b")


def test_draining_a_fifo_a_core_consumes_names_the_fifo_meant(design_file: DesignFile) -> None:
    """rt.drain(xin, y) typed for rt.drain(yout, y): the error said 'xin' had nothing between
    its fill and its drain, though a core consumed it, and offered a memtile forward (an IRON
    user's tester). It names the core now, and the fifo a core produces that nothing takes."""
    path = design_file('''
        from aiedsl import Tensor, design, fifo, herd, i32, runtime
        from aiedsl.kernels import passthrough
        @design(device="npu1_1col")
        def d(x: Tensor[1024, i32], y: Tensor[1024, i32]):
            xin = fifo(Tensor[256, i32], name="xin")
            yout = fifo(Tensor[256, i32], name="yout")
            copy = passthrough(Tensor[256, i32])
            @herd()
            def core():
                with xin.consume() as s, yout.produce() as t:
                    copy(s, t)
            with runtime() as rt:
                rt.fill(xin, x)
                rt.drain(xin, y)
        ''')
    assert load_error(path) == (
        "d.py:14: error [fifo ends]: fifo 'xin' is filled by the runtime and consumed by "
        "core[0,0], and the runtime drains it too: a fifo the runtime fills cannot also be "
        "drained by it\n"
        "  limit: one host end per fifo: the runtime fills it or drains it\n"
        "  found: shim -> core[0,0] and shim\n"
        "  d.py:13: the fill\n"
        "  fix: drain the fifo that carries the result: 'yout', which a core produces and "
        "nothing takes, not 'xin'")


def test_a_shared_fifo_short_by_its_core_count_says_it_broadcasts(design_file: DesignFile) -> None:
    """MLIR-AIR's multi_core_channel puts four tiles into one channel and each core gets one;
    here each core receives every element, and the fix (make counts agree) led a tester to give
    every core all four tiles."""
    path = design_file('''
        from aiedsl import Tensor, channel, design, herd, i32, runtime
        from aiedsl.kernels import passthrough
        @design(device="npu1")
        def shared(a: Tensor[16, 32, i32], b: Tensor[16, 32, i32]):
            cin = channel(Tensor[8, 16, i32], name="ChanIn")
            cout = channel(Tensor[8, 16, i32], shape=[2, 2], name="ChanOut")
            copy = passthrough(Tensor[8, 16, i32])
            @herd(cols=2, rows=2)
            def h(x, y):
                with cin[0].consume() as s, cout[y, x].produce() as d:
                    copy(s, d)
            with runtime() as rt:
                for r in range(2):
                    for c in range(2):
                        rt.fill(cin[0], a, (r * 256 + c * 16, [8, 16], [32, 1]))
                        rt.drain(cout[r, c], b, (r * 256 + c * 16, [8, 16], [32, 1]))
        ''')
    assert check_error(path).splitlines()[-1] == (
        "  fix: make loop counts and fill/drain sizes agree (each element 8x16xi32); a mismatch "
        "hangs on the NPU. 'ChanIn_0' has 4 consuming cores, and a fifo broadcasts: each "
        "receives every element; to give each core its own, use a fifo per core "
        "(channel(..., shape=[n]) indexed by the core) or split one at a memtile")


# -- BD lengths ---------------------------------------------------------------------------------

BD_LENGTH = '''
    from aiedsl import Tensor, coretile, design, fifo, i32, memtile, runtime

    @design(device="npu1_1col")
    def big(a: Tensor[N, i32], b: Tensor[N, i32]):
        fin = fifo(Tensor[N, i32], depth=1)
        fmid = fin.forward(via=VIA)
        with runtime() as rt:
            rt.fill(fin, a)
            rt.drain(fmid, b)

    @big.reference
    def reference(a):
        return a.copy()
    '''


@pytest.mark.parametrize("n, via, message", [
    (131072, "memtile",
     "d.py:6: error [BD length]: fifo 'fin' moves 524,288 bytes in one buffer descriptor of "
     "memtile (0, 1) (S2MM of buffer fin_cons_buff_0)\n"
     "  limit: 131,071 4-byte words (524,284 bytes) per BD on a memtile: the BD's length field "
     "is 17 bits, and mlir-aie writes only its low bits (the transfer would move the wrong "
     "amount and the run hang)\n"
     "  found: 131,072 words\n"
     "  fix: use smaller elements (the same data in more, smaller pieces: e.g. half the rows "
     "per acquire, the runtime moving the tensor in tiles)"),
    (16384, "coretile(0, 2)",
     "d.py:6: error [BD length]: fifo 'fin' moves 65,536 bytes in one buffer descriptor of core "
     "(0, 2) (S2MM of buffer fin_cons_buff_0)\n"
     "  limit: 16,383 4-byte words (65,532 bytes) per BD on a core: the BD's length field is 14 "
     "bits, and mlir-aie writes only its low bits (the transfer would move the wrong amount and "
     "the run hang)\n"
     "  found: 16,384 words\n"
     "  fix: use smaller elements (the same data in more, smaller pieces: e.g. half the rows "
     "per acquire, the runtime moving the tensor in tiles)"),
])
def test_a_buffer_longer_than_a_bd_can_move_is_refused(
        design_file: DesignFile, n: int, via: str, message: str) -> None:
    """An AIR port: a 512 KB memtile element filled the memtile exactly and passed; its BD's
    17-bit length field (mlir-aie writes length & 0x1ffff) would have moved nothing. One word
    less fits."""
    src = BD_LENGTH.replace("VIA", via)
    with pytest.raises(DesignError) as e:
        check_design(load_design(design_file(src.replace("N", str(n)))).ir)
    assert str(e.value) == message
    check_design(load_design(design_file(src.replace("N", str(n - 1)))).ir)


def test_balance_names_what_a_core_makes(design_file: DesignFile) -> None:
    """The sentence had no verb for a core producer: "s1[0,0] 4 element(s) per run"."""
    path = design_file("""
        from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
        from aiedsl.kernels import passthrough

        @design(device="npu1_1col")
        def d(inp: Tensor[4096, i32], out: Tensor[4096, i32]):
            a = fifo(Tensor[1024, i32], name="a")
            mid = fifo(Tensor[1024, i32], name="mid")
            b = fifo(Tensor[1024, i32], name="b")
            copy = passthrough(Tensor[1024, i32])

            @herd(anchor=(0, 2))
            def s1():
                for _ in loop(4):
                    with a.consume() as x, mid.produce() as y:
                        copy(x, y)

            @herd(anchor=(0, 3))
            def s2():
                for _ in loop(3):
                    with mid.consume() as x, b.produce() as y:
                        copy(x, y)

            with runtime() as rt:
                rt.fill(a, inp)
                rt.drain(b, out)
    """)
    assert check_error(path).splitlines()[0].endswith(
        "fifo 'mid': s1[0,0] makes 4 element(s) per run, but s2[0,0] takes 3")


@pytest.mark.parametrize("used, limit, shown", [
    (524_256, 524_288, "511.9 / 512 KB"),   # 32 bytes under: it read 512.0, as if full
    (524_288, 524_288, "512.0 / 512 KB"),
    (524_296, 524_288, "512.1 / 512 KB"),   # 8 bytes over: it read 512.0, as if it fitted
    (17_460, 65_536, "17.1 / 64 KB"),       # elsewhere rounded as before
])
def test_memory_is_never_shown_at_its_limit_unless_it_is(used: int, limit: int,
                                                         shown: str) -> None:
    assert TileUsage.memory_text(used, limit) == shown


def test_an_offset_no_dimension_can_carry_is_refused_where_it_is_written(
        design_file: DesignFile) -> None:
    """A tester's offset 3 over strides 64, 32, 16, 2 passed check and crashed build with a
    Python traceback (dma_memcpy_nd spells an offset per dimension, times its stride)."""
    path = design_file('''
        from aiedsl import Tensor, design, fifo, runtime, i32

        @design(device="npu1_1col")
        def o1(inp: Tensor[256, i32], out: Tensor[16, i32]):
            a = fifo(Tensor[16, i32], name="a", depth=2)
            b = a.forward(name="b")

            with runtime() as rt:
                rt.fill(a, inp, (3, [2, 2, 2, 2], [64, 32, 16, 2]))
                rt.drain(b, out, wait=True)
        ''')
    assert check_error(path) == (
        "d.py:9: error [dma pattern]: rt.fill of 'a' from 'inp' breaks a DMA rule\n"
        "  limit: an offset dma_memcpy_nd can spell: it starts at the sum of each dimension's "
        "offset times its stride (mlir-aie's NpuDmaMemcpyNdOp::getOffsetInBytes), so the offset "
        "sits on a dimension of stride 1 or size 1, or is a sum of multiples of the strides\n"
        "  found: offset 3 with every dimension stepping by 2, 16, 32, 64 (offset 3, sizes "
        "[2, 2, 2, 2], strides [64, 32, 16, 2])\n"
        "  fix: start at a sum of multiples of those strides, or give the pattern a size-1 "
        "dimension to carry the offset")
    path.write_text(path.read_text().replace("(3, [2, 2, 2, 2]", "(4, [2, 2, 2, 2]"))
    _passes(path)


def test_an_offset_several_dimensions_carry_together_is_spelled_and_runs(
        design_file: DesignFile) -> None:
    """A tester's offset 10 over strides 64, 32, 6, 4 (10 = 6 + 4) was refused: no one
    stride divides it, and only one dimension was tried."""
    path = design_file('''
        import numpy as np
        from aiedsl import Tensor, design, fifo, runtime, i32

        @design(device="npu1_1col")
        def g(inp: Tensor[128, i32], out: Tensor[16, i32]):
            a = fifo(Tensor[16, i32])
            b = a.forward()
            with runtime() as rt:
                rt.fill(a, inp, (10, [2, 2, 2, 2], [64, 32, 6, 4]))
                rt.drain(b, out)

        @g.reference
        def reference(inp):
            i = np.arange(2)
            idx = 10 + (i[:, None, None, None] * 64 + i[None, :, None, None] * 32
                        + i[None, None, :, None] * 6 + i[None, None, None, :] * 4)
            return inp[idx.reshape(-1)]
        ''')
    from aiedsl.codegen.mlir import render_mlir

    handle = load_design(path)
    placed, _ = check_design(handle.ir)
    assert "aiex.npu.dma_memcpy_nd(%inp[0, 0, 1, 1][2, 2, 2, 2][64, 32, 6, 4]" in render_mlir(
        placed, get_target(placed.device))
    assert simulate(handle).passed


DEEP = '''
    from aiedsl import Tensor, design, fifo, herd, i32, runtime
    from aiedsl.kernels import passthrough
    @design(device="npu1_1col")
    def d(x: Tensor[256, i32], y: Tensor[256, i32]):
        xin = fifo(Tensor[256, i32], name="xin", depth=4)
        yout = fifo(Tensor[256, i32], name="yout")
        copy = passthrough(Tensor[256, i32])
        @herd()
        def core():
            with xin.consume() as s, yout.produce() as t:
                copy(s, t)
        with runtime() as rt:
            rt.fill(xin, x)
            rt.drain(yout, y)
    '''


def _check_notes(path: Path) -> list[str]:
    """The note lines `aiedsl check` prints for the design at ``path``, which passes."""
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-m", "aiedsl.cli", "check", str(path)],
                       capture_output=True, text=True, cwd=path.parent,
                       env={**os.environ, "COLUMNS": "300"})
    assert r.returncode == 0, r.stderr
    return [line for line in r.stdout.splitlines() if ": note: " in line]


def test_check_says_when_a_core_end_gets_fewer_buffers_than_its_depth(
        design_file: DesignFile) -> None:
    """depth=4 on a fifo from the shim: mlir-aie gives the core's end 2 buffers (one acquired
    at a time, plus one), which only report.txt said (an IRON user's tester); check says it
    now, and consumer_depth= gives the end its 4."""
    path = design_file(DEEP)

    assert _check_notes(path) == [
        "d.py:5: note: fifo 'xin' gives core[0,0]'s end 2 buffers, not the 4 of its depth: "
        "across a DMA, mlir-aie sizes a core's end of a fifo of one depth at the most the core "
        "acquires at once plus one; consumer_depth={\"core[0,0]\": 4} gives it 4"]
    path.write_text(path.read_text().replace(
        'depth=4)', 'depth=4, consumer_depth={"core[0,0]": 4})'))
    assert _check_notes(path) == []


def test_a_forward_takes_the_consumer_depth_its_note_asks_for(design_file: DesignFile) -> None:
    """The note's fix for a forwarded fifo's core end said consumer_depth=, which forward()
    refused as an unexpected keyword (a tester); it takes it now, as fifo() does, and the
    memtile keeps its depth."""
    path = design_file(DEEP.replace(
        'xin = fifo(Tensor[256, i32], name="xin", depth=4)',
        'xl2 = fifo(Tensor[256, i32], name="xl2")\n'
        '        xin = xl2.forward(name="xin", depth=4)').replace("rt.fill(xin", "rt.fill(xl2"))
    memtile = ("d.py:6: note: forward 'xin' depth=4 gives the memtile no buffers: it moves "
               "'xin' through the 2 buffers of 'xl2' there (a forward's buffers are its larger "
               "side's, its input's on a tie: mlir-aie's createObjectFifoElements); "
               "consumer_depth={\"memtile\": 4} on 'xl2' gives the memtile 4")

    assert _check_notes(path) == [
        memtile,
        "d.py:6: note: fifo 'xin' gives core[0,0]'s end 2 buffers, not the 4 of its depth: "
        "across a DMA, mlir-aie sizes a core's end of a fifo of one depth at the most the core "
        "acquires at once plus one; consumer_depth={\"core[0,0]\": 4} gives it 4"]
    import aiedsl  # (a CI integrator's tester: the notes were the command line's text alone)

    assert aiedsl.build(path, write=False).notes == _check_notes(path)
    path.write_text(path.read_text().replace(
        'depth=4)', 'depth=4, consumer_depth={"core[0,0]": 4})'))
    assert _check_notes(path) == [memtile]
    from aiedsl.codegen.mlir import render_mlir

    placed, _ = check_design(load_design(path).ir)
    assert "aie.objectfifo @xin(%tile_0_1, {%tile_0_2}, [4, 4])" in render_mlir(
        placed, get_target(placed.device))
    # (an IRON user's tester) the memtile's buffers are xl2's: its note's fix gives it 4
    path.write_text(path.read_text().replace(
        'name="xl2")', 'name="xl2", consumer_depth={"memtile": 4})'))
    assert _check_notes(path) == []
    placed, _ = check_design(load_design(path).ir)
    assert "aie.objectfifo @xl2(%tile_0_0, {%tile_0_1}, [2, 4])" in render_mlir(
        placed, get_target(placed.device))


def test_an_index_past_an_acquire_names_the_acquire_and_a_bigger_one(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """`x[2]` of consume(2) said only "index 0..1" (an IRON user's tester found it terse): the
    acquire's line, the limit, and acquiring one more at once."""
    monkeypatch.chdir(Path(__file__).parent / "bad_inputs")
    assert load_error("acquire_index_out_of_range.py") == (
        "acquire_index_out_of_range.py:19: error [acquire]: element 2 of a 2-element acquire of "
        "'a'\n"
        "  limit: indices 0 to 1: the acquire holds 2 elements\n"
        "  found: 2\n"
        "  acquire_index_out_of_range.py:18: the acquire\n"
        "  fix: index 0..1, or acquire 3 at once (consume(3) or produce(3))")


def test_a_reference_taking_an_input_the_runtime_never_fills_blames_the_runtime(
        design_file: DesignFile) -> None:
    """rt.fill(fb, a) where b was meant: the reference's b is what the runtime left out, not
    an argument to drop (a newcomer's tester: the fix said "make it take 1 argument(s)")."""
    path = design_file('''
        from aiedsl import Tensor, design, fifo, herd, i32, runtime
        from aiedsl.kernels import add

        @design(device="npu1_1col")
        def d(a: Tensor[256, i32], b: Tensor[256, i32], c: Tensor[256, i32]):
            fa = fifo(Tensor[256, i32])
            fb = fifo(Tensor[256, i32])
            fc = fifo(Tensor[256, i32])
            k = add(Tensor[256, i32])

            @herd()
            def core():
                with fa.consume() as x, fb.consume() as y, fc.produce() as z:
                    k(x, y, z)

            with runtime() as rt:
                rt.fill(fa, a)
                rt.fill(fb, a)
                rt.drain(fc, c)

        @d.reference
        def reference(a, b):
            return a + b
        ''')
    assert load_error(path) == (
        "d.py:21: error [reference]: the reference of 'd' takes 'b', a host tensor the runtime "
        "never fills: it is handed the tensors the runtime fills (a)\n"
        "  limit: the tensors the runtime fills, in argument order: a\n"
        "  found: reference(a, b)\n"
        "  d.py:4: host tensor 'b'\n"
        "  fix: fill 'b' in the runtime sequence (rt.fill(<fifo>, b)); 'a' fills 'fa' and 'fb' "
        "(lines 17, 18): is one of them to be filled from 'b'?")


def test_a_channel_part_no_core_consumes_names_the_channel(design_file: DesignFile) -> None:
    """A channel of shape [2, 2] split to a herd of 2x1: part [0, 1] went nowhere, reported as
    "fifo 'cin_0_1' has no consumer; drain it or remove it", neither of which the user can do to
    one part of a channel (an MLIR-AIR user's tester)."""
    path = design_file('''
        from aiedsl import Tensor, channel, design, herd, i32, memtile, runtime

        @design(device="npu1_2col")
        def d(A: Tensor[1024, i32]):
            cin = channel(Tensor[256, i32], shape=[2, 2], via=memtile, split=1)

            @herd(cols=2, rows=1)
            def core(x, y):
                with cin[x, y].consume():
                    pass

            with runtime() as rt:
                for c in range(2):
                    rt.fill(cin[c, :], A, (c * 512, [512], [1]))
        ''')
    assert load_error(path).splitlines()[0] == (
        "d.py:5: error [fifo consumer]: cin[0, 1] of channel 'cin' (fifo 'cin_0_1') has no "
        "consumer: no core consumes it and the runtime does not drain it")


def test_a_memtile_fix_says_when_its_element_is_longer_than_a_bd_too(
        design_file: DesignFile) -> None:
    """Two 512 KB elements on a 512 KB memtile: the fix said depth=1, which then met the
    BD-length check, one word over (an MLIR-AIR user's tester). It says the element must
    shrink too."""
    path = design_file('''
        from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
        from aiedsl.kernels import passthrough

        @design(device="npu1_1col")
        def d(inp: Tensor[131072, i32], out: Tensor[131072, i32]):
            l3 = fifo(Tensor[131072, i32], name="l3")
            l1 = l3.forward(Tensor[1024, i32], name="l1")
            o = fifo(Tensor[1024, i32], name="o")
            cp = passthrough(Tensor[1024, i32])

            @herd()
            def core():
                for _ in loop(128):
                    with l1.consume() as s, o.produce() as t:
                        cp(s, t)

            with runtime() as rt:
                rt.fill(l3, inp)
                rt.drain(o, out)
        ''')
    assert check_error(path).splitlines()[-1].endswith(
        "; each 'l3' buffer (524,288 bytes) is also more than one buffer descriptor moves "
        "(524,284 bytes), so its elements must shrink too")
