"""Read what mlir-aie's lowering decided (``physical.mlir``) back into aiedsl's physical IR.

mlir-aie's resource passes (objectfifo lowering, BD and lock ids, buffer addresses) and its
router turn aiedsl's ``aie.mlir`` into placed buffers, locks, DMA channels with their BD chains,
switchbox and shim-mux connections, and packet flows. :func:`parse_physical` reads them into a
:class:`~aiedsl.ir.Physical`, so the plan aiedsl makes can be compared fact by fact with the
real lowering (:func:`diff_physical`), and the map and report can be drawn from the real one.

A circuit-switched connection is an ``aie.connect``; a packet-switched one (``flows="packet"``,
and the control overlay's) is what mlir-aie's packet router writes in the switchbox instead:
``aie.amsel``s, ``aie.masterset``s naming them, and per slave port an ``aie.packet_rules`` of
``aie.rule(mask, value, %amsel)``s. Both become :class:`~aiedsl.ir.Connect`s, a packet one with
its rule (:attr:`~aiedsl.ir.Connect.rule`). :func:`unread` says what of the switches could not
be read.

Example
-------
>>> real = parse_physical(Path("physical.mlir").read_text())     # doctest: +SKIP
>>> diff_physical(placed.physical, real)                          # doctest: +SKIP
[]
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator
from typing import Any

from aiedsl.ir.physical import (Bd, BufferAlloc, Connect, DmaChannel, LockAlloc, PacketFlow,
                                Physical, Route)
from aiedsl.ir.lowered_names import SHIM_ALLOC_SUFFIX, fifo_of
from aiedsl.ir.types import Dim

Coord = tuple[int, int]

_TILE = re.compile(r"^\s*%([\w.$-]+) = aie\.tile\((\d+), (\d+)\)", re.M)
_BUFFER = re.compile(r"aie\.buffer\(%([\w.$-]+)\) \{([^}]*)\} : memref<([^>]*)>")
_LOCK = re.compile(r"aie\.lock\(%([\w.$-]+), (\d+)\) \{([^}]*)\}")
_ATTR = re.compile(r"(\w+) = (\"[^\"]*\"|-?\d+)")
_BLOCK = re.compile(r"^\s*%([\w.$-]+) = aie\.(mem|memtile_dma|shim_dma)\(%([\w.$-]+)\) \{",
                    re.M)
_SWITCH = re.compile(r"^\s*%[\w.$-]+ = aie\.(switchbox|shim_mux)\(%([\w.$-]+)\) \{", re.M)
_CONNECT = re.compile(r"aie\.connect<(\w+) : (\d+), (\w+) : (\d+)>")
_SHIM_ALLOC = re.compile(r"aie\.shim_dma_allocation @([\w.$-]+?)(?:" + SHIM_ALLOC_SUFFIX + r")?\("
                         r"%([\w.$-]+), (MM2S|S2MM), (\d+)")
_PACKET = re.compile(r"aie\.packet_flow\((\d+)\) \{(.*?)\n\s*\}( \{[^}]*\})?", re.S)
_ENDPOINT = re.compile(r"aie\.packet_(source|dest)<%([\w.$-]+), (\w+) : (\d+)>")
_ITEMSIZE = {"i8": 1, "ui8": 1, "i16": 2, "bf16": 2, "i32": 4, "f32": 4, "ui16": 2, "ui32": 4}


def _attrs(text: str) -> dict[str, Any]:
    return {k: (v.strip('"') if v.startswith('"') else int(v)) for k, v in _ATTR.findall(text)}


def _nbytes(memref: str) -> int:
    *dims, elem = memref.split("x")
    n = 1
    for d in dims:
        n *= int(d)
    return n * _ITEMSIZE[elem]


def parse_physical(text: str) -> Physical:
    """The buffers, locks, DMA channels (with BD chains), connections and packet flows of
    mlir-aie's ``physical.mlir``."""
    tiles = {name: (int(c), int(r)) for name, c, r in _TILE.findall(text)}
    buffers = []
    for tile, attrs, memref in _BUFFER.findall(text):
        a = _attrs(attrs)
        buffers.append(BufferAlloc(tile=tiles[tile], name=a["sym_name"], nbytes=_nbytes(memref),
                                   address=a.get("address", -1), bank=a.get("mem_bank", -1),
                                   fifo=fifo_of(a["sym_name"])))
    locks = []
    for tile, lid, attrs in _LOCK.findall(text):
        a = _attrs(attrs)
        locks.append(LockAlloc(tile=tiles[tile], id=int(lid), name=a["sym_name"],
                               init=a.get("init", 0), fifo=fifo_of(a["sym_name"])))
    channels = _dma_channels(text, tiles)
    for fifo, tile, direction, ch in _SHIM_ALLOC.findall(text):
        channels.append(DmaChannel(tile=tiles[tile], direction=direction,  # type: ignore[arg-type]
                                   channel=int(ch), fifo=fifo, bds=()))
    routes, _ = _switches(text, tiles)
    packets = []
    for pid, body, attrs in _PACKET.findall(text):
        ends = [(kind, (tiles[t], b, int(i))) for kind, t, b, i in _ENDPOINT.findall(body)]
        src = next(e for k, e in ends if k == "source")
        packets.append(PacketFlow(
            id=int(pid), src=src, dsts=tuple(e for k, e in ends if k == "dest"),  # type: ignore[arg-type]
            keep_pkt_header="keep_pkt_header = true" in (attrs or ""),
            priority_route="priority_route = true" in (attrs or "")))
    return Physical(channels=tuple(channels), buffers=tuple(buffers), locks=tuple(locks),
                    routes=routes, packet_flows=tuple(packets))



def unread(text: str) -> list[str]:
    """What of ``physical.mlir`` :func:`parse_physical` cannot read, one phrase each (empty
    when it reads it all): an op of a switchbox or shim mux other than ``aie.connect``,
    ``aie.amsel``, ``aie.masterset``, ``aie.packet_rules`` and ``aie.rule``, or an amsel that a
    master set or a rule names and the switch does not define (a stream through such a switch
    may be drawn short or not at all); a BD's lock count given by an SSA value no
    ``arith.constant`` defines (its acquire or release is then left out)."""
    tiles = {name: (int(c), int(r)) for name, c, r in _TILE.findall(text)}
    gaps = _switches(text, tiles)[1]
    counts = {value for _, body, consts in _dma_blocks(text)
              for _, _, value in _USE_LOCK.findall(body) if _lock_count(value, consts) is None}
    if counts:
        gaps.append(f"lock counts given by {', '.join(sorted(counts))}, which no arith.constant "
                    "defines (those BDs' acquires and releases)")
    return gaps


def _dma_blocks(text: str) -> Iterator[tuple[re.Match[str], str, dict[str, int]]]:
    """Each DMA block of ``text`` (``aie.mem``, ``aie.memtile_dma``, ``aie.shim_dma``): its
    match, its body, and the i32 constants its lock counts may name (the block's own first)."""
    whole = _constants(text)
    for m in _BLOCK.finditer(text):
        body = _braced(text, m.end() - 1)
        yield m, body, {**whole, **_constants(body)}


def _dma_channels(text: str, tiles: dict[str, Coord]) -> list[DmaChannel]:
    out = []
    for m, body, consts in _dma_blocks(text):
        tile = tiles[m.group(3)]
        # blocks: ^bbN: ... ; each dma_start names its first block and the next start's block,
        # and since mlir-aie PR 3115 a repeated fifo's single buffer the times it is sent again
        blocks = _blocks(body)
        for start in re.finditer(r"aie\.dma_start\((MM2S|S2MM), (\d+), \^(\w+), \^(\w+)"
                                 r"(?:, repeat_count = \d+)?\)", body):
            chain: list[Bd] = []
            seen: set[str] = set()
            label = start.group(3)
            while label in blocks and label not in seen:
                seen.add(label)
                bd, nxt = _bd(blocks[label], consts)
                if bd is None:
                    break
                chain.append(bd)
                label = nxt or ""
            first = chain[0].buffer if chain else ""
            out.append(DmaChannel(tile=tile, direction=start.group(1),  # type: ignore[arg-type]
                                  channel=int(start.group(2)), fifo=fifo_of(first),
                                  bds=tuple(b.id for b in chain), chain=tuple(chain)))
    return out


def _braced(text: str, open_at: int) -> str:
    depth, i = 0, open_at
    while True:
        c = text[i]
        depth += (c == "{") - (c == "}")
        i += 1
        if depth == 0:
            return text[open_at + 1:i - 1]


def _blocks(body: str) -> dict[str, str]:
    parts = re.split(r"^\s*\^(\w+)(?:\([^)]*\))?:.*$", body, flags=re.M)
    return {parts[i]: parts[i + 1] for i in range(1, len(parts) - 1, 2)}


_DMA_BD = re.compile(r"aie\.dma_bd\(%([\w.$-]+) : memref<[^>]*>, (\d+), (\d+)(?:, \[(.*?)\])?"
                     r"(?:, [^)]*)?\) \{([^}]*)\}")
# the count: a literal (mlir-aie as of 2026-03), or an i32 SSA value (since PR 3308, July 2026:
# aiedsl.toolchain.mlir_syntax), read through the arith.constant that defines it
_USE_LOCK = re.compile(r"aie\.use_lock\(%([\w.$-]+), (AcquireGreaterEqual|Acquire|Release), "
                       r"(\d+|%[\w.$-]+)\)")
_CONSTANT = re.compile(r"%([\w.$-]+) = arith\.constant (-?\d+) : i32\b")


def _constants(text: str) -> dict[str, int]:
    """The i32 constants ``text`` defines, by SSA name (with its ``%``); a name defined twice
    with two values is left out (each region may number its values afresh)."""
    seen: dict[str, set[int]] = defaultdict(set)
    for name, value in _CONSTANT.findall(text):
        seen["%" + name].add(int(value))
    return {name: next(iter(values)) for name, values in seen.items() if len(values) == 1}


def _lock_count(value: str, consts: dict[str, int]) -> int | None:
    """A use_lock's count, a literal or a constant's SSA name (None: no constant defines it)."""
    return int(value) if value[0] != "%" else consts.get(value)


def _bd(block: str, consts: dict[str, int]) -> tuple[Bd | None, str | None]:
    m = _DMA_BD.search(block)
    if m is None:
        return None, None
    dims = tuple(Dim(size=int(s), stride=int(t)) for s, t in
                 re.findall(r"<size = (\d+), stride = (\d+)>", m.group(4) or ""))
    attrs = _attrs(m.group(5))
    acquire = release = None
    for lock, action, value in _USE_LOCK.findall(block):
        count = _lock_count(value, consts)
        if count is None:
            continue  # said by unread()
        if action.startswith("Acquire"):
            acquire = (lock, count)
        else:
            release = (lock, count)
    nxt = re.search(r"aie\.next_bd \^(\w+)", block)
    return Bd(id=attrs["bd_id"], buffer=m.group(1), offset=int(m.group(2)),
              length=int(m.group(3)), dims=dims, next=attrs.get("next_bd_id"),
              acquire=acquire, release=release), nxt.group(1) if nxt else None


def _switches(text: str, tiles: dict[str, Coord]) -> tuple[tuple[Route, ...], list[str]]:
    """All switch connections, as one route per switch (mlir-aie does not say which flow a
    connection carries), and what of the switches could not be read (:func:`unread`)."""
    by_tile: dict[tuple[Coord, str], list[Connect]] = defaultdict(list)
    gaps: list[str] = []
    for m in _SWITCH.finditer(text):
        tile, kind = tiles[m.group(2)], m.group(1)
        body = _braced(text, m.end() - 1)
        where = f"{kind} {tile}"
        for sb, si, db, di in _CONNECT.findall(body):
            by_tile[(tile, kind)].append(Connect(
                tile=tile, src=(sb, int(si)), dst=(db, int(di)),  # type: ignore[arg-type]
                switch=kind))  # type: ignore[arg-type]
        by_tile[(tile, kind)] += _packet_connects(body, tile, kind, where, gaps)
        ops = sorted(set(_OP.findall(body)) - _READ)
        if ops:
            gaps.append(f"{where}: {', '.join('aie.' + op for op in ops)} not read")
    routes = tuple(Route(fifo=f"{kind}@{tile[0]},{tile[1]}", src=tile, dsts=(), wires=(),
                         connects=tuple(cs)) for (tile, kind), cs in sorted(by_tile.items()))
    return routes, gaps


_OP = re.compile(r"^\s*(?:%[\w.$-]+ = )?aie\.(\w+)", re.M)
_READ = {"connect", "amsel", "masterset", "packet_rules", "rule", "end"}
"""The ops of a switchbox or shim mux that :func:`_switches` reads."""
_NUM = r"(0x[0-9a-fA-F]+|\d+)"
_AMSEL = re.compile(r"%([\w.$-]+) = aie\.amsel<(\d+)> ?\((\d+)\)")
_MASTERSET = re.compile(r"aie\.masterset\((\w+) : (\d+)((?:, %[\w.$-]+)*)\)")
_RULES = re.compile(r"aie\.packet_rules\((\w+) : (\d+)\) \{")
_RULE = re.compile(rf"aie\.rule\({_NUM}, {_NUM}, %([\w.$-]+)\)")


def _packet_connects(body: str, tile: Coord, kind: str, where: str, gaps: list[str]
                     ) -> list[Connect]:
    """The packet-switched connections of a switchbox, as mlir-aie's packet router writes them
    (``AIEPathfinderPass::runOnPacketFlow``; the ops are AIEOps.td's ``aie.amsel``,
    ``aie.masterset``, ``aie.packet_rules`` and ``aie.rule``): each rule of a slave port's
    ``packet_rules``, in order, sends the packets it matches to its amsel, and every master port
    whose ``masterset`` names that amsel sends them on, one :class:`Connect` per (rule, master
    port). A rule repeating an earlier rule of its port never matches first and is left out."""
    amsels = {name: (int(a), int(msel)) for name, a, msel in _AMSEL.findall(body)}
    masters: list[tuple[tuple[str, int], list[str]]] = []
    for bundle, ch, names in _MASTERSET.findall(body):
        used = re.findall(r"%([\w.$-]+)", names)
        for name in used:
            if name not in amsels:
                gaps.append(f"{where}: masterset({bundle} : {ch}) names %{name}, which is no "
                            "aie.amsel of the switch")
        masters.append(((bundle, int(ch)), used))
    out: list[Connect] = []
    for m in _RULES.finditer(body):
        src = (m.group(1), int(m.group(2)))
        seen: set[tuple[int, int]] = set()
        for mask, value, name in _RULE.findall(_braced(body, m.end() - 1)):
            rule = (int(mask, 0), int(value, 0))
            if name not in amsels:
                gaps.append(f"{where}: rule({rule[0]}, {rule[1]}) of packet_rules({src[0]} : "
                            f"{src[1]}) names %{name}, which is no aie.amsel of the switch")
            if rule in seen:
                continue
            seen.add(rule)
            out += [Connect(tile=tile, src=src, dst=dst, switch=kind,  # type: ignore[arg-type]
                            rule=rule) for dst, used in masters if name in used]
    return out


# -- comparing a plan with a lowering --------------------------------------------------------------

def facts(p: Physical) -> dict[str, set[Any]]:
    """The comparable facts of a physical plan, by kind (names as mlir-aie spells them)."""
    return {
        # a core's stack is reserved at address 0, not an aie.buffer
        "buffer": {(b.tile, b.name, b.nbytes, b.address, b.bank) for b in p.buffers
                   if b.fifo is not None},
        "lock": {(lk.tile, lk.id, lk.name, lk.init) for lk in p.locks},
        # a memtile or core channel is known by the buffers its BDs move (mlir-aie names a
        # link's channels after the fifo whose buffers they are); a shim channel by its fifo
        "channel": {(c.tile, c.direction, c.channel, c.fifo if not c.chain else "")
                    for c in p.channels},
        "bd": {(c.tile, c.direction, c.channel, b.id, b.buffer, b.offset, b.length,
                tuple((d.size, d.stride) for d in b.dims), b.next, b.acquire, b.release)
               for c in p.channels for b in c.chain},
        # circuit connections only: a packet rule is the lowering's choice of arbiter and mask
        # (and the control overlay's rules are in no route of a plan)
        "connect": {(c.tile, c.switch, c.src, c.dst) for r in p.routes for c in r.connects
                    if c.rule is None},
        "packet flow": {(f.id, f.src, f.dsts, f.keep_pkt_header, f.priority_route)
                        for f in p.packet_flows},
    }


def diff_physical(ours: Physical, real: Physical, kinds: tuple[str, ...] | None = None
                  ) -> list[str]:
    """Every fact that differs between aiedsl's plan and mlir-aie's lowering, one line each
    (``- real only`` / ``+ aiedsl only``), sorted by kind."""
    a, b = facts(ours), facts(real)
    lines = []
    for kind in kinds or tuple(a):
        for f in sorted(b[kind] - a[kind], key=repr):
            lines.append(f"{kind}: - mlir-aie only: {f}")
        for f in sorted(a[kind] - b[kind], key=repr):
            lines.append(f"{kind}: + aiedsl only:   {f}")
    return lines
