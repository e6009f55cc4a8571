"""Packet-switched fifo streams (``@design(..., flows="packet")``, aiecc's
``--packet-sw-objFifos``): packet ids as the objectFifo lowering numbers them, the build and
lowering commands that ask for them, the id limit, the links mlir-aie's packet lowering does not
support (through a memtile), and routing as mlir-aie's router does it."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Callable

import pytest

from aiedsl.checks import check_design, draft
from aiedsl.emit import generate
from aiedsl.errors import DesignError
from aiedsl.loader import load_design
from aiedsl.place.route import control_overlay, flows_of, occupied_columns, route_flows
from aiedsl.sim import simulate
from aiedsl.targets import get_target
from aiedsl.toolchain.commands import lower_argvs, shell_line

DesignFile = Callable[..., Path]

PASSTHROUGH = (Path(__file__).resolve().parents[1] / "designs" / "passthrough.py").read_text()
PACKET = PASSTHROUGH.replace('@design(device="npu1_1col")',
                             '@design(device="npu1_1col", flows="packet")')
DIRECT = '''
    """Passthrough with its fifos between the shim and the core directly (no memtile link), the
    form mlir-aie's packet-switched objectfifo lowering supports."""
    from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
    from aiedsl.kernels import passthrough as copy_kernel

    @design(device="npu1_1col", flows="packet")
    def passthrough(inp: Tensor[4096, i32], out: Tensor[4096, i32]):
        to_core = fifo(Tensor[1024, i32], name="in")
        from_core = fifo(Tensor[1024, i32], name="out")
        copy = copy_kernel(Tensor[1024, i32])

        @herd()
        def core():
            for _ in loop(4):
                with to_core.consume() as src, from_core.produce() as dst:
                    copy(src, dst)

        with runtime() as rt:
            rt.fill(to_core, inp)
            rt.drain(from_core, out, wait=True)

    @passthrough.reference
    def reference(inp):
        return inp.copy()
    '''


def test_packet_flows_number_every_stream_and_ask_aiecc(design_file: DesignFile) -> None:
    handle = load_design(design_file(DIRECT, "passthrough.py"))
    gen = generate(handle)
    assert gen.design.flows == "packet"
    assert [(r.fifo, r.packet_id) for r in gen.design.physical.routes] == [("in", 0), ("out", 1)]
    assert "in: (0,0) MM2S 0 -> (0,2) S2MM 0; 2 wires; packet id 0" in gen.files["report.txt"]
    last = gen.files["build.sh"].strip().splitlines()[-1]
    assert last == ('"$aiecc" ${backend[@]+"${backend[@]}"} ${outputs[@]+"${outputs[@]}"} '
                    "--packet-sw-objFifos aie.mlir")
    assert simulate(handle).passed


def test_circuit_flows_stay_the_default(in_root: Path) -> None:
    gen = generate(load_design("designs/passthrough.py"))
    assert {r.packet_id for r in gen.design.physical.routes} == {None}
    assert "--packet-sw-objFifos" not in gen.files["build.sh"]


def test_the_lowering_asks_for_packet_flows_too() -> None:
    physical = shell_line(lower_argvs(packet=True)[0][1])
    assert "aie-objectFifo-stateful-transform{packet-sw-objFifos=true}" in physical
    assert "packet-sw-objFifos" not in shell_line(lower_argvs()[0][1])


MANY = '''
    from aiedsl import Tensor, channel, design, herd, i32, runtime

    @design(device="npu2", flows="packet")
    def many(X: Tensor[16, 256, i32], Z: Tensor[16, 256, i32]):
        a = channel(Tensor[256, i32], shape=[8, 2], name="a")
        m = channel(Tensor[256, i32], shape=[8, 2], name="m")
        z = channel(Tensor[256, i32], shape=[8, 2], name="z")

        @herd(cols=8, rows=4)
        def core(x, y):
            if y < 2:
                with a[x, y].consume(), m[x, y].produce():
                    pass
            else:
                with m[x, y - 2].consume(), z[x, y - 2].produce():
                    pass

        with runtime() as rt:
            for i in range(16):
                rt.fill(a[i // 2, i % 2], X, (i * 256, [256], [1]))
                rt.drain(z[i // 2, i % 2], Z, (i * 256, [256], [1]))
    '''


def test_more_streams_than_packet_ids_are_refused(design_file: DesignFile) -> None:
    """16 fills, 16 drains and 16 streams from the cores of rows 2-3 to those of rows 4-5 (two
    rows apart: no shared memory), all between cores and the shim or between cores."""
    with pytest.raises(DesignError) as e:
        check_design(load_design(design_file(MANY)).ir)
    assert str(e.value).splitlines()[:4] == [
        "d.py:7: error [packet ids]: 48 fifo streams need a packet id each, and there are 32",
        "  limit: packet ids 0-31 (mlir-aie's objectFifo lowering with packet-sw-objFifos: "
        "\"max number of packet IDs reached\")",
        "  found: 48 streams; 'z_0_0' would take id 32",
        "  fix: merge fifos that travel together, or use circuit-switched flows (leave flows= "
        "out) where the wires suffice"]


LIMIT = ("  limit: packet-switched fifos between cores, and between cores and the host, only: "
         "mlir-aie's packet-sw-objFifos \"currently only supports Object FIFOs between Workers, "
         "and between Workers and external memory\" (programming guide, section 2a, Object FIFO "
         "Compiler Flags; mem tiles are mlir-aie issue 2591, open)")
FIX = ("  fix: use circuit-switched flows for this design (leave flows= out), or route without "
       "the memtile: fifos between the shim and the cores, or between cores, directly")


def test_packet_flows_through_a_memtile_are_refused_at_the_link(design_file: DesignFile) -> None:
    """mlir-aie's programming guide says packet-switched object fifos are for fifos between
    Workers, and between Workers and external memory, only (issue 2591, extending them to mem
    tiles, is open): aiedsl accepted a passthrough through a memtile as packet flows."""
    with pytest.raises(DesignError) as e:
        check_design(load_design(design_file(PACKET, "passthrough.py")).ir)
    assert str(e.value) == "\n".join([
        "passthrough.py:19: error [packet flows]: flows=\"packet\" with a link through a "
        "memtile: the forward of 'in_l3' to 'in_l1' through a memtile",
        LIMIT,
        "  found: forward 'in_l3' -> 'in_l1' via a memtile (and 1 more link through memtiles)",
        FIX])


def test_a_channel_through_a_memtile_is_refused_as_packet_flows(design_file: DesignFile) -> None:
    with pytest.raises(DesignError) as e:
        check_design(load_design(design_file(UNROUTABLE.format(flows="packet"))).ir)
    assert str(e.value) == "\n".join([
        "d.py:5: error [packet flows]: flows=\"packet\" with a link through a memtile: the join "
        "of 'lo_0', 'lo_1', 'lo_2' to 'lo_l3' through memtile (0, 1)",
        LIMIT,
        "  found: join 'lo_0', 'lo_1', 'lo_2' -> 'lo_l3' via memtile (0, 1) (and 1 more link "
        "through memtiles)",
        FIX])


def test_an_unknown_flows_value_is_refused(design_file: DesignFile) -> None:
    path = design_file(PASSTHROUGH.replace('@design(device="npu1_1col")',
                                           '@design(device="npu1_1col", flows="packets")'),
                       "passthrough.py")
    with pytest.raises(DesignError) as e:
        load_design(path)
    assert str(e.value) == (
        "passthrough.py:16: error [design]: flows='packets'\n"
        "  limit: 'circuit' (a wire per stream) or 'packet' (streams share wires by packet id)\n"
        "  found: 'packets'\n"
        "  fix: leave flows out, or write flows='packet'")


UNROUTABLE = '''
    from aiedsl import Tensor, channel, design, herd, i32, memtile, runtime

    @design(device="npu1_1col", flows="{flows}")
    def d(X: Tensor[3, 1024, i32], Y: Tensor[3, 1024, i32]):
        lo = channel(Tensor[1024, i32], shape=[3], via=memtile(0), join=0, name="lo")
        hi = channel(Tensor[1024, i32], shape=[3], via=memtile(0), join=0, name="hi")

        @herd(rows=3, anchor=(0, 3))
        def core(x, y):
            with lo[y].produce(), hi[y].produce():
                pass

        with runtime() as rt:
            rt.drain(lo[:], X)
            rt.drain(hi[:], Y)
    '''


def test_no_packet_hint_for_a_design_with_memtile_links(design_file: DesignFile) -> None:
    """Packet flows through a memtile are refused, so a design with memtile links that does
    not route is given no hint to try them."""
    with pytest.raises(DesignError) as e:
        check_design(load_design(design_file(UNROUTABLE.format(flows="circuit"))).ir)
    text = str(e.value)
    assert text.splitlines()[0].startswith("d.py:5: error [stream routing]: no legal routing")
    assert "flows=" not in text


@pytest.mark.parametrize("packet", [False, True])
def test_packet_flows_with_ports_of_their_own_take_wires_as_circuits_do(
        design_file: DesignFile, packet: bool) -> None:
    """mlir-aie's router lets packet flows share a wire only when they share a port; six
    streams, each with DMA channels of its own, need six wires either way. The router alone
    (aiedsl refuses this design as packet flows, its joins going through a memtile)."""
    routed, _, _ = draft(load_design(design_file(UNROUTABLE.format(flows="circuit"))).ir)
    assert routed.physical is not None
    target = get_target(routed.device)
    flows = flows_of(routed, routed.physical)
    if packet:
        flows = [replace(f, packet_id=i) for i, f in enumerate(flows)]
    result = route_flows(flows, target, control_overlay(occupied_columns(routed), target))
    # all six streams must leave core (0, 2) southward for the memtile: 4 wires
    assert (((0, 2), "south"), 6) in [(c.wire, len(c.flows)) for c in result.congested]
