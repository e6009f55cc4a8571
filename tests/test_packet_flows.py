"""Packet-switched fifo streams (``@design(..., flows="packet")``, aiecc's
``--packet-sw-objFifos``): packet ids as the objectFifo lowering numbers them, the build and
lowering commands that ask for them, the id limit, and routing as mlir-aie's router does it."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest

from aiedsl.checks import check_design
from aiedsl.emit import generate
from aiedsl.errors import DesignError
from aiedsl.loader import load_design
from aiedsl.sim import simulate
from aiedsl.toolchain.commands import lower_argvs, shell_line

DesignFile = Callable[..., Path]

PASSTHROUGH = (Path(__file__).resolve().parents[1] / "designs" / "passthrough.py").read_text()
PACKET = PASSTHROUGH.replace('@design(device="npu1_1col")',
                             '@design(device="npu1_1col", flows="packet")')


def test_packet_flows_number_every_stream_and_ask_aiecc(design_file: DesignFile) -> None:
    handle = load_design(design_file(PACKET, "passthrough.py"))
    gen = generate(handle)
    assert gen.design.flows == "packet"
    assert [(r.fifo, r.packet_id) for r in gen.design.physical.routes] == [
        ("in_l3", 0), ("in_l1", 1), ("out_l1", 2), ("out_l3", 3)]
    assert "in_l3: (0,0) MM2S 0 -> (0,1) S2MM 0; 1 wire; packet id 0" in gen.files["report.txt"]
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


def test_more_streams_than_packet_ids_are_refused(in_root: Path) -> None:
    ir = load_design("designs/gemm_bf16.py").ir.model_copy(update={"flows": "packet"})
    with pytest.raises(DesignError) as e:
        check_design(ir)
    assert str(e.value).splitlines()[:4] == [
        "designs/gemm_bf16.py:45: error [packet ids]: 36 fifo streams need a packet id each, and "
        "there are 32",
        "  limit: packet ids 0-31 (mlir-aie's objectFifo lowering with packet-sw-objFifos: "
        "\"max number of packet IDs reached\")",
        "  found: 36 streams; 'c_l3_0' would take id 32",
        "  fix: merge fifos that travel together, or use circuit-switched flows (leave flows= "
        "out) where the wires suffice"]


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


@pytest.mark.parametrize("flows", ["circuit", "packet"])
def test_packet_flows_with_ports_of_their_own_take_wires_as_circuits_do(
        design_file: DesignFile, flows: str) -> None:
    """mlir-aie's router lets packet flows share a wire only when they share a port; six
    fifos, each with DMA channels of its own, need six wires either way: no hint to try packet
    flows, since they would not route."""
    path = design_file(UNROUTABLE.format(flows=flows))
    with pytest.raises(DesignError) as e:
        check_design(load_design(path).ir)
    text = str(e.value)
    assert text.splitlines()[0].startswith("d.py:5: error [stream routing]: no legal routing")
    assert "flows=" not in text
