"""How much of a core's program memory its ELF fills, read as the loader reads it.

aie-rt's ELF loader (``_XAie_WriteProgramSection`` in ``driver/src/core/xaie_elfloader.c``)
writes every loadable segment whose physical address lies below the core's program memory size
into program memory, and refuses the ELF with ``Overflow of program memory`` when such a
segment ends past it. The file's size says nothing of this (it holds symbols, debug data and
the data-memory segments too), so :func:`program_end` reads the program headers.

Example
-------
>>> program_end("aie.mlir.prj/main_core_0_2.elf", 16384)   # doctest: +SKIP
5120
"""

from __future__ import annotations

import struct
from pathlib import Path

PT_LOAD = 1


class ElfError(ValueError):
    """The file is not an ELF aiedsl can read."""


def load_segments(path: str | Path) -> list[tuple[int, int]]:
    """(physical address, bytes in memory) of each loadable segment of the ELF at ``path``
    (32- or 64-bit, either byte order)."""
    data = Path(path).read_bytes()
    if data[:4] != b"\x7fELF":
        raise ElfError(f"{path} is not an ELF file")
    try:
        return _segments(data, path)
    except struct.error:
        raise ElfError(f"{path}: the ELF is cut short") from None


def _segments(data: bytes, path: str | Path) -> list[tuple[int, int]]:
    wide, order = data[4] == 2, {1: "<", 2: ">"}.get(data[5])
    if data[4] not in (1, 2) or order is None:
        raise ElfError(f"{path}: unknown ELF class or byte order")
    if wide:
        phoff, = struct.unpack_from(order + "Q", data, 0x20)
        phentsize, phnum = struct.unpack_from(order + "HH", data, 0x36)
        fields, at = order + "IIQQQQQQ", (4, 6)  # p_type p_flags p_offset p_vaddr p_paddr ...
    else:
        phoff, = struct.unpack_from(order + "I", data, 0x1C)
        phentsize, phnum = struct.unpack_from(order + "HH", data, 0x2A)
        fields, at = order + "IIIIIIII", (3, 5)  # p_type p_offset p_vaddr p_paddr ...
    if phnum == 0:
        return []
    if phoff + phnum * phentsize > len(data) or phentsize < struct.calcsize(fields):
        raise ElfError(f"{path}: program headers past the end of the file")
    out = []
    for i in range(phnum):
        h = struct.unpack_from(fields, data, phoff + i * phentsize)
        if h[0] == PT_LOAD:
            out.append((h[at[0]], h[at[1]]))
    return out


def program_end(path: str | Path, program_memory: int) -> int:
    """Where the program of the core ELF at ``path`` ends: the highest end of a loadable
    segment that starts in program memory (``program_memory`` bytes from address 0), which
    aie-rt's loader requires to be at most ``program_memory``. 0 for an ELF with none."""
    return max((addr + size for addr, size in load_segments(path) if addr < program_memory),
               default=0)
