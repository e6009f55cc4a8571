"""Read the instruction stream the NPU runs (``insts.bin``) back into plain data.

``aie-translate --aie-npu-to-binary`` turns a lowered runtime sequence (``npu.mlir``) into the
words the NPU's command processor runs before and while the array computes: register writes that
program the shim tiles' DMA buffer descriptors (BDs), the host-address patches XRT applies, the
pushes onto the DMAs' task queues, and the syncs that wait for them. :func:`decode` turns those
words into a :class:`Program`: the header, one :class:`Instruction` per operation with its fields
named, and on top of them the shim DMA tasks the stream programs (:class:`ShimTask`: column,
direction, channel, BD, runtime argument, byte offset, length, n-d pattern, repeat, token) and the
syncs (:class:`Sync`), in stream order. It reads any IRON / mlir-aie build's ``insts.bin``, not
only aiedsl's.

The format is described in :mod:`aiedsl.toolchain.insts_format`, the records in
:mod:`aiedsl.toolchain.insts_records`.

Example
-------
>>> program = read_insts(Path("build/passthrough/insts.bin"))       # doctest: +SKIP
>>> [(t.direction, t.channel, t.arg, t.length_bytes) for t in program.tasks]  # doctest: +SKIP
[('MM2S', 0, 0, 16384), ('S2MM', 0, 1, 16384)]
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from aiedsl.errors import DesignError
from aiedsl.targets import DEFAULT_DEVICE, TargetModel, get_target
from aiedsl.toolchain.insts_format import (
    FIXED_WORDS, OPCODES, canonical_dims, hex_word, queue_register, register_name, shim_bd,
    signed, split_address, stream_target, to_elements, word_at,
)
from aiedsl.toolchain.insts_records import (
    Event, Header, Instruction, Program, ShimBd, ShimTask, Sync, TileWrite,
)

__all__ = [
    "Header", "Instruction", "InstsError", "Program", "ShimBd", "ShimTask", "Sync", "TileWrite",
    "as_dict", "canonical_dims", "decode", "listing", "read_insts", "register_name", "to_elements",
]


ELF_MAGIC = b"\x7fELF"
"""The first bytes of an ELF file (a core's object code, or a program such as /bin/ls)."""


class InstsError(DesignError):
    """An instruction stream that cannot be read."""


FIX = "give an insts.bin written by aie-translate --aie-npu-to-binary (aiedsl build writes one " \
      "when mlir-aie is here)"


def _error(message: str, found: str, fix: str = FIX) -> InstsError:
    return InstsError("instruction stream", message, found=found, fix=fix)


def read_insts(path: Path | str, target: TargetModel | None = None) -> Program:
    """Decode the ``insts.bin`` at ``path`` (a DesignError when it is not one), its registers
    those of ``target`` (by default, of the device its header names: :func:`decode`)."""
    p = Path(path)
    if not p.exists():
        raise _error(f"{p} does not exist", "no such file", fix="give the path of an insts.bin")
    if not p.is_file():
        raise _error(f"{p} is not a file", "a directory" if p.is_dir() else "not a regular file",
                     fix="give the path of an insts.bin file")
    try:
        data = p.read_bytes()
    except OSError as e:
        raise _error(f"cannot read {p}", e.strerror or str(e), fix="check its permissions")
    return decode(data, name=str(p), target=target)


def decode(data: bytes, name: str = "the stream", target: TargetModel | None = None) -> Program:
    """Decode an instruction stream: its header, its operations, and the shim DMA tasks and syncs
    they program (a DesignError when it is truncated, inconsistent or has an unknown opcode).
    Its registers are ``target``'s; by default those of the device generation its header
    names (:func:`~aiedsl.toolchain.insts_format.stream_target`), or, for one aiedsl does not
    know, :data:`~aiedsl.targets.DEFAULT_DEVICE`'s, which a note says."""
    header = read_header(data, name)
    nwords = len(data) // 4
    guessed = []
    if target is None:
        target = stream_target(header.generation)
        if target is None:
            target = get_target(DEFAULT_DEVICE)
            guessed.append(f"the header's device generation {header.generation} is none aiedsl "
                           f"knows: its registers are read as {target.name}'s")
    words = struct.unpack(f"<{nwords}I", data)
    instructions: list[Instruction] = []
    at = 4
    while at < nwords:
        ins = _decode_one(words, at, len(instructions), name, target)
        instructions.append(ins)
        at += len(ins.words)
    if len(instructions) != header.count:
        raise _error(f"{name} holds {len(instructions)} operations, its header says "
                     f"{header.count}", f"{len(instructions)} operations")
    events, notes = _tasks(instructions, target)
    return Program(header, tuple(instructions), tuple(events), tuple(guessed + notes),
                   target=target)


def read_header(data: bytes, name: str = "the stream") -> Header:
    """The header of an instruction stream (a DesignError when ``data`` is no stream: an ELF,
    text, not whole words, shorter than a header, or not the length its header gives)."""
    if data.startswith(ELF_MAGIC):  # a core ELF or a program: the likeliest wrong file, and
        # named as such whatever its size
        raise _error(f"{name} is an ELF file (a program or a core's object code), not an NPU "
                     "instruction stream", "the ELF signature (7f 45 4c 46) at byte 0")
    if data[:64] and all(32 <= b < 127 or b in (9, 10, 13) for b in data[:64]):
        # text (a design file, a listing) whose first bytes read as a header of any size
        raise _error(f"{name} is a text file, not an NPU instruction stream",
                     f"text at byte 0: {data[:24].decode('ascii')!r}")
    if len(data) % 4:
        raise _error(f"{name} is {len(data)} bytes, not a whole number of 32-bit words",
                     f"{len(data)} bytes")
    nwords = len(data) // 4
    if nwords < 4:
        raise _error(f"{name} is truncated: {len(data)} bytes, shorter than the 16-byte header",
                     f"{len(data)} bytes")
    w0, w1 = word_at(data, 0), word_at(data, 1)
    header = Header(major=w0 & 0xFF, minor=(w0 >> 8) & 0xFF, generation=(w0 >> 16) & 0xFF,
                    rows=w0 >> 24, columns=w1 & 0xFF, memtile_rows=(w1 >> 8) & 0xFF,
                    count=word_at(data, 2), size=word_at(data, 3))
    if header.size != len(data):
        what = "truncated" if header.size > len(data) else "longer than its header says"
        raise InstsError(
            "instruction stream", f"{name} is {what}: the header gives {header.size} bytes, the "
            f"file has {len(data)}", limit=f"{header.size:,} bytes, the stream size its header "
            "gives (word 3)", found=f"{len(data):,} bytes in the file",
            fix=FIX)
    room = len(data) - 16
    if header.count * 4 > room:  # every operation is one 32-bit word at least
        raise _error(f"{name}'s header says it holds {header.count:,} operations, more than the "
                     f"{room:,} bytes after the header can hold (4 bytes each at least)",
                     f"{header.count:,} operations (word 2)")
    return header


def _decode_one(words: Sequence[int], at: int, index: int, name: str,
                target: TargetModel) -> Instruction:
    opcode = words[at] & 0xFF
    op = OPCODES.get(opcode)
    offset = at * 4
    said = op or (f"custom op {opcode:#04x}" if opcode >= 0x80 else f"opcode {opcode:#04x}")

    def take(n: int) -> tuple[int, ...]:
        if at + n > len(words):
            raise _error(f"{name} is truncated: {said} at byte {offset} needs {4 * n} bytes, "
                         f"{4 * (len(words) - at)} are left", f"{4 * (len(words) - at)} bytes")
        return tuple(words[at:at + n])

    def check_size(got: int, want: int) -> None:
        if got != want:
            raise _error(f"{name}: {op} at byte {offset} gives its size as {got} bytes, not "
                         f"{want}", f"size field {got}")

    if opcode == 0x01:  # blockwrite: size in word 3
        head = take(4)
        size = head[3]
        if size < 16 or size % 4:
            raise _error(f"{name}: blockwrite at byte {offset} has size {size}", f"size {size}")
        w = take(size // 4)
        return Instruction(index, offset, opcode, "blockwrite",
                           {"address": w[2], "column": w[1] & 0xFF, "row": (w[1] >> 8) & 0xFF},
                           data=w[4:], words=w, target=target)
    if opcode in FIXED_WORDS:
        n = FIXED_WORDS[opcode]
        w = take(n)
        assert op is not None
        if opcode == 0x00:
            check_size(w[5], 24)
            fields = {"address": w[2] | w[3] << 32, "value": w[4]}
        elif opcode in (0x03, 0x04):
            check_size(w[6], 28)
            fields = {"address": w[2] | w[3] << 32, "value": w[4], "mask": w[5]}
        elif opcode == 0x80:
            check_size(w[1], 16)
            fields = {"column": (w[2] >> 16) & 0xFF, "row": (w[2] >> 8) & 0xFF,
                      "direction": w[2] & 0xFF, "channel": (w[3] >> 24) & 0xFF,
                      "columns": (w[3] >> 16) & 0xFF, "rows": (w[3] >> 8) & 0xFF}
        elif opcode == 0x81:
            check_size(w[1], 48)
            fields = {"address": w[6] | w[7] << 32, "arg": w[8] | w[9] << 32,
                      "arg_plus": signed(w[10] | w[11] << 32, 64), "action": w[5]}
        elif opcode == 0x06:
            fields = {"level": (w[0] >> 8) & 0xFF}
        elif opcode == 0x08:
            fields = {"id": w[0] >> 16, "size": w[1], "address": w[2] | w[3] << 32}
        elif opcode == 0x0A:
            fields = {"usage": (w[0] >> 8) & 0xFF, "size": w[1], "ddr_address": w[2] | w[3] << 32}
        else:  # 0x0C update_reg
            fields = {"table_index": (w[0] >> 8) & 0xFF, "function": (w[0] >> 16) & 0xFF,
                      "argument": w[1], "address": w[2]}
        return Instruction(index, offset, opcode, op, fields, words=w, target=target)
    if opcode >= 0x80:  # another custom op: its size is in word 1 (aie-rt XAie_CustomOpHdr)
        head = take(2)
        size = head[1]
        if size < 8 or size % 4:
            raise _error(f"{name}: custom op {opcode:#04x} at byte {offset} has size {size}",
                         f"size {size}")
        w = take(size // 4)
        return Instruction(index, offset, opcode, op or f"custom_{opcode:#04x}", {},
                           data=w[2:], words=w, target=target)
    known = f" ({op}: its layout is not known to aiedsl)" if op else ""
    raise _error(f"{name}: unknown opcode {opcode:#04x}{known} at byte {offset} "
                 f"(operation {index})", f"word {words[at]:#010x}",
                 fix="the stream is corrupt or from a newer mlir-aie: aiedsl reads write32, "
                 "blockwrite, maskwrite32, maskpoll32, preempt, load_pdi, create_scratchpad, "
                 "update_reg, sync, address_patch and custom ops that carry their size")


def _tasks(instructions: Sequence[Instruction], target: TargetModel
           ) -> tuple[list[Event], list[str]]:
    """Replay the register writes on ``target``'s shim tiles: BD words, address patches,
    controller ids; each ``Task_Queue`` write becomes a task with the BD as it then stood. A
    ``write32`` into an array tile's data memory (an rtp write) or a core's lock value register
    (a barrier set) becomes a :class:`TileWrite`."""
    locks = target.core.lock_values
    locks_end = target.lock_value_address("core", target.core.locks)
    bds: dict[tuple[int, int], list[int]] = {}
    patches: dict[tuple[int, int], tuple[int, int]] = {}
    controllers: dict[tuple[int, str, int], int] = {}
    regs: dict[int, int] = {}
    events: list[Event] = []
    notes: list[str] = []

    def write(address: int, value: int) -> None:
        regs[address] = value
        col, row, off = split_address(address)
        at = shim_bd(off, row, target)
        if at is not None:
            bd, word = at
            bds.setdefault((col, bd), [0] * 8)[word // 4] = value
            if word == 4:  # the BD's address words are written again: an old patch is gone
                patches.pop((col, bd), None)

    def snapshot(col: int, bd: int) -> tuple[ShimBd, int | None, int]:
        arg, plus = patches.get((col, bd), (None, 0))
        return ShimBd(tuple(bds.get((col, bd), [0] * 8))), arg, plus

    for ins in instructions:
        f = ins.fields
        if ins.op == "blockwrite":
            for i, value in enumerate(ins.data):
                write(f["address"] + 4 * i, value)
        elif ins.op == "write32" or ins.op == "maskwrite32":
            address, value = f["address"], f["value"]
            if ins.op == "maskwrite32":
                value = (regs.get(address, 0) & ~f["mask"]) | (value & f["mask"])
            write(address, value)
            col, row, off = split_address(address)
            if ins.op == "write32" and row != target.shim_row and (
                    off < target.core.memory or locks <= off < locks_end):
                events.append(TileWrite(order=len(events), instruction=ins.index, column=col,
                                        row=row, address=off, value=value, target=target))
                continue
            queue = queue_register(off) if row == target.shim_row else None
            if queue is None:
                continue
            direction, ch, reg = queue
            if reg == "Ctrl":
                controllers[(col, direction, ch)] = (value >> 8) & 0xFF
                continue
            bd_id = value & 0xF
            if (col, bd_id) not in bds:
                notes.append(f"operation {ins.index}: {direction} channel {ch} of column {col} "
                             f"starts BD {bd_id}, which the stream never wrote")
            bd, arg, plus = snapshot(col, bd_id)
            chain = []
            seen = {bd_id}
            cur = bd
            while cur.use_next_bd and cur.next_bd not in seen:
                seen.add(cur.next_bd)
                nxt, narg, nplus = snapshot(col, cur.next_bd)
                chain.append((cur.next_bd, nxt, narg, nplus))
                cur = nxt
            events.append(ShimTask(
                order=len(events), instruction=ins.index, column=col, row=row,
                direction=direction, channel=ch, bd_id=bd_id, bd=bd, arg=arg, arg_plus=plus,
                repeat=(value >> 16) & 0xFF, token=bool(value >> 31),
                controller_id=controllers.get((col, direction, ch)), chain=tuple(chain),
                target=target))
        elif ins.op == "address_patch":
            col, row, off = split_address(f["address"])
            at = shim_bd(off, row, target)
            if at is not None and at[1] == 4:
                patches[(col, at[0])] = (f["arg"], f["arg_plus"])
                continue
            notes.append(f"operation {ins.index}: address patch of "
                         f"{register_name(f['address'], target)}, not a shim BD's address word")
        elif ins.op == "sync":
            events.append(Sync(order=len(events), instruction=ins.index, column=f["column"],
                               row=f["row"], direction="S2MM" if f["direction"] == 0 else "MM2S",
                               channel=f["channel"], columns=f["columns"], rows=f["rows"]))
    return events, notes


def listing(program: Program, name: str = "insts.bin") -> list[str]:
    """The lines ``aiedsl inspect`` prints: header, operations, shim DMA tasks and syncs."""
    h = program.header
    title = (f"{name}: {h.size} bytes, {h.count} operations, version {h.major}.{h.minor}, "
             f"{h.device}, {h.columns} column(s) x {h.rows} rows ({h.memtile_rows} memtile "
             "row(s))")
    lines = [title, "", "operations:"]
    width = len(str(max(len(program.instructions) - 1, 0)))
    for ins in program.instructions:
        lines.append(f"  {ins.index:{width}d} @{ins.offset:<5d} {ins.describe()}")
        if ins.op == "blockwrite":
            _, row, off = split_address(ins.fields["address"])
            at = shim_bd(off, row, program.target)
            if at is not None and at[1] == 0 and len(ins.data) == 8:
                lines.append(" " * (width + 10) + "BD: " + _bd_text(ShimBd(ins.data)))
    tasks, syncs = program.tasks, program.syncs
    writes = len(program.events) - len(tasks) - len(syncs)
    lines += ["", (f"shim DMA tasks and syncs, in order ({len(tasks)} task(s), "
                   f"{len(syncs)} sync(s)" + (f", {writes} tile write(s)" if writes else "")
                   + "):")]
    lines += ["  " + e.describe() for e in program.events]
    lines += [f"note: {n}" for n in program.notes]
    return lines


def _bd_text(bd: ShimBd) -> str:
    parts = [f"length {bd.buffer_length} words"]
    if bd.linear:
        parts.append("linear")
    else:
        parts.append(f"d0 {bd.d0_wrap}x{bd.d0_step + 1} d1 {bd.d1_wrap}x{bd.d1_step + 1} "
                     f"d2 step {bd.d2_step + 1}")
    if bd.iteration_wrap or bd.iteration_step or bd.iteration_current:
        parts.append(f"iteration {bd.iteration_wrap + 1}x{bd.iteration_step + 1}"
                     + (f" from {bd.iteration_current}" if bd.iteration_current else ""))
    if bd.base_address:
        parts.append(f"address {hex_word(bd.base_address)}")
    if bd.enable_packet:
        parts.append(f"packet id {bd.packet_id} type {bd.packet_type}")
    if bd.use_next_bd:
        parts.append(f"next BD {bd.next_bd}")
    if bd.lock_acq_enable:
        parts.append(f"acquire lock {bd.lock_acq_id} >= {bd.lock_acq_value}")
    if bd.lock_rel_value:
        parts.append(f"release lock {bd.lock_rel_id} {bd.lock_rel_value:+d}")
    parts.append(f"burst {64 << bd.burst_length} B, AxCache {bd.axcache}"
                 + (", valid" if bd.valid else ", NOT valid"))
    return ", ".join(parts)


def as_dict(program: Program) -> dict[str, Any]:
    """The program as JSON-ready plain data."""
    return {
        "header": vars(program.header) | {"device": program.header.device},
        "instructions": [{"index": i.index, "offset": i.offset, "op": i.op, **i.fields,
                          **({"data": list(i.data)} if i.data else {})}
                         for i in program.instructions],
        "events": [
            {"kind": "task", "order": e.order, "column": e.column, "direction": e.direction,
             "channel": e.channel, "bd": e.bd_id, "arg": e.arg, "offset_bytes": e.offset_bytes,
             "length_bytes": e.length_bytes, "runs": e.runs, "token": e.token,
             "words": _dims_or_none(e), "bd_fields": e.bd.fields()}
            if isinstance(e, ShimTask) else
            {"kind": "write", "order": e.order, "column": e.column, "row": e.row,
             "address": e.address, "value": e.value}
            if isinstance(e, TileWrite) else
            {"kind": "sync", "order": e.order, "column": e.column, "direction": e.direction,
             "channel": e.channel}
            for e in program.events],
        "notes": list(program.notes),
    }


def _dims_or_none(task: ShimTask) -> list[list[int]] | None:
    try:
        return [list(d) for d in task.word_dims()]
    except ValueError:  # irregular: see word_addresses()
        return None
