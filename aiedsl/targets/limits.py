"""What each kind of tile has (memory, DMA channels, BDs, locks, switch ports) and the shim's
stream multiplexer: the limit tables of a :class:`~aiedsl.targets.model.TargetModel`, one per
tile kind, each field citing where its figure comes from."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = ["ShimMux", "TileLimits"]


class TileLimits(BaseModel):
    """Per-tile resources of one tile kind."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    memory: int
    """Data memory in bytes (0 for shim tiles)."""
    banks: int
    """Memory banks (mlir-aie's model)."""
    dma_in: int
    """S2MM DMA channels (stream to memory)."""
    dma_out: int
    """MM2S DMA channels (memory to stream)."""
    bds: int
    """Buffer descriptors."""
    bds_per_channel_parity: int | None = None
    """Memtile only: channels 0,2,4 use BDs 0-23, channels 1,3,5 use BDs 24-47."""
    neighbour_channels: int | None = None
    """Memtile only: a DMA channel whose fifo has buffers in a neighbouring memtile's memory
    must be one of channels ``0 .. neighbour_channels - 1`` (mlir-aie
    ``AIETargetModel::getMaxChannelNumForAdjacentMemTile``, 4 on AIE2; the objectfifo
    lowering's ``DMAChannelAnalysis::getDMAChannelIndex`` caps such a fifo's channels there).
    A memtile DMA addresses the west memtile's memory at 0, its own at one memtile size and the
    east one's at two (``AIETargetModel::getMemLocalBaseAddress``, which ``AIERT.cpp``'s BD
    configuration adds to the buffer's address)."""
    locks: int
    """Hardware locks."""
    lock_values: int
    """Offset of lock 0's value register in the tile's address space, lock ``n``'s
    :attr:`TargetModel.lock_value_stride` times ``n`` after it: mlir-aie
    ``AIE2TargetModel::getLocalLockAddress`` (0x1F000 on a core, 0xC0000 on a memtile, 0x14000
    on a shim), the register ``aiex.set_lock`` lowers to a ``write32`` of
    (``SetLockToWrite32Pattern``)."""
    dma_dims: int
    """n-d address generator dimensions of this tile's DMAs."""
    bd_wrap: int
    """Largest value of a BD's wrap (size) fields: 10 bits on a shim and a memtile, 8 on a
    core (XAIEMLGBL_*_DMA_BD0_3_D0_WRAP_WIDTH; mlir-aie's verifyStridesWraps, and
    DMABDOp::verify since PR 3548). The innermost field counts 4-byte words (the lowering
    scales an innermost size by the element's width in words: AIERT.cpp configureBdInBlock,
    getHardwareStridesWraps), the others count steps. A shim's third dimension has no wrap
    field (its extent is the buffer length's: verifyStridesWraps checks sizes 0 and 1 only)."""
    bd_max_elements: int | None = None
    """Memtile and core: the largest size of any dimension of a BD in elements, as mlir-aie
    1e400306's DMABDOp::verify counts it (``size >= (1 << 9) + 1`` is refused; its message says
    1023). aiedsl holds a layout to this and :attr:`bd_wrap` both, so it lowers on either
    version."""
    bd_step_words: int
    """Largest stride of one dimension of this tile's BDs, in 4-byte words: the step fields are
    20 bits on a shim (verifyStridesWraps; they hold ``stride - 1``), 17 on a memtile and 13 on a
    core (XAIEMLGBL_MEM_TILE_MODULE_DMA_BD0_2_D0_STEPSIZE_WIDTH, checked since PR 3548)."""
    bd_len_words: int
    """Most 4-byte words one BD moves: its buffer-length field is 32 bits on a shim, 17 on a
    memtile and 14 on a core (mlir-aie's AIEDmaToNpu writes ``length & 0x1ffff`` and
    ``length & 0x3fff`` into those tiles' BDs; aie-rt XAIEMLGBL_MEM_TILE_MODULE_DMA_BD0_0_
    BUFFER_LENGTH_WIDTH). Until mlir-aie PR 3398 (July 2026, ``DMABDOp::verify`` with
    ``getDmaBdMaxLen``, the same figures) neither its verifier nor aie-rt checked it: a longer
    buffer was cut to its low bits (a 512 KB memtile element to 0 words)."""
    switch_out: dict[str, int]
    """Stream switch master (outgoing) ports per bundle, by mlir-aie's ``WireBundle`` names
    (``Core``, ``DMA``, ``FIFO``, ``South``, ``West``, ``North``, ``East``, ``Trace``,
    ``TileControl``; a bundle left out has none), of a tile on no edge of the array (mlir-aie
    ``AIE2TargetModel::getNumDestSwitchboxConnections``). On an edge the ports toward it go:
    no ``West`` in column 0, no ``East`` in the last column, no ``North`` on the top row
    (mlir-aie checks a shim's and a core's ``West`` and ``East`` and a core's ``North``, the
    only ones an edge can take: a memtile has no ``West`` or ``East`` ports, and only cores
    are on the top row; :mod:`aiedsl.place.switchbox` applies it). ``North``, ``South``,
    ``East`` and ``West`` are also the wires to a neighbour
    (:meth:`TargetModel.link_capacity`)."""
    switch_in: dict[str, int]
    """Stream switch slave (incoming) ports per bundle, the same way (mlir-aie
    ``AIE2TargetModel::getNumSourceSwitchboxConnections``)."""


class ShimMux(BaseModel):
    """The shim mux of a shim tile: between the shim's DMA, NOC and PLIO ports and the South
    ports of its stream switch (mlir-aie's ``aie.shim_mux``). Every shim tile of a device has
    the same one."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    masters: dict[str, int]
    """Master ports per bundle, by ``WireBundle`` name (mlir-aie
    ``AIE2TargetModel::getNumDestShimMuxConnections``). mlir-aie's router lists them among the
    shim switch's ports where the switch has none of the bundle (:mod:`aiedsl.place.switchbox`)."""
    slaves: dict[str, int]
    """Slave ports per bundle (mlir-aie ``AIE2TargetModel::getNumSourceShimMuxConnections``)."""
    to_switch: dict[str, tuple[int, ...]]
    """Per channel of a bundle sending into the array, the mux's North port its stream leaves
    the mux by, and so the switch's South slave port it enters the switch by: shim DMA (MM2S)
    channels 0 and 1 by 3 and 7, NOC channels 0-3 by 2, 3, 6 and 7; a bundle left out (PLIO)
    keeps its channel's number. mlir-aie ``ConvertFlowsToInterconnect``
    (``AIECreatePathFindFlows.cpp``): "must be either DMA0 -> N3 or DMA1 -> N7", "must be
    NOC0/NOC1 -> N2/N3 or NOC2/NOC3 -> N6/N7"."""
    from_switch: dict[str, tuple[int, ...]]
    """Per channel of a bundle receiving from the array, the switch's South master port that
    feeds it through the mux's North port of that number: shim DMA (S2MM) channels 0 and 1
    from 2 and 3, NOC channels 0-3 from 2-5; a bundle left out (PLIO) keeps its channel's
    number. The same function: "must be either N2 -> DMA0 or N3 -> DMA1", "must be either
    N2/3/4/5 -> NOC0/1/2/3"."""
