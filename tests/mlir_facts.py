"""Semantic facts of an mlir-aie design, for golden tests that must ignore names and syntax era.

`parse_facts(text)` reads the 2026 spelling (`aie.runtime_sequence`, `aiex.npu.dma_memcpy_nd`,
`aiex.npu.dma_wait`, `link_with` on `func.func`) and the early-2025 IRON spelling
(`aiex.runtime_sequence`, `aiex.dma_configure_task_for` + `aie.dma_bd`, `link_with` on `aie.core`)
and returns a frozen `Facts` whose `==` compares meaning. Anything that looks like a fifo or DMA op
but does not parse, and any construct whose meaning the facts cannot hold, raises `ValueError`.

Normalizations (each one keeps meaning):
- device `npu1_4col` -> `npu1` (mlir-aie's renaming, `aiedsl.targets.devices.RENAMED`); memref
  types lose `memref<...>`: `memref<64x64xi16>` -> `64x64xi16`.
- fifo consumers are sorted; per-endpoint depths and `dims_from_stream` move with them; a depth list
  whose entries are all equal becomes that int.
- a 1 -> 1 link with all-zero offsets has no offsets (IRON `([] [0])` == 2026 `([] [])`); join and
  distribute links with offsets are sorted by offset together with their fifos.
- `fifos`, `links` and `kernels` are tuples sorted on their compared fields, not frozensets: two
  fifos can have identical facts (VVOp_Add's `in1`/`in2`) and a set would count them once.
- DMA access patterns are 4-D, outermost first; a size-1 dimension gets stride 0. `dma_memcpy_nd`
  offset = sum(offset[i] * stride[i]) over the outer three dims plus the innermost offset times its
  stride, where an innermost stride of 0 or 1 counts as 1. (mlir-aie's getOffsetInBytes uses the
  plain sum, older releases used the memref shape; all agree when only the innermost offset is
  non-zero, as in every reference file.)
- `waited`: the DMA issues a token and a wait consumes it. 2026: a token is issued when
  `issue_token = true` or the fifo flows into the shim (S2MM; mlir-aie always sets the token there),
  and each `dma_wait {symbol = @f}` consumes the oldest unconsumed token of `@f`. 2025:
  `dma_await_task(%t)`, which mlir-aie rejects unless the task has `issue_token = true`.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field, fields, replace
from typing import Any

from aiedsl.targets.devices import RENAMED

Tile = tuple[int, int]
Dims = tuple[tuple[int, int], ...]
Pattern4 = tuple[int, int, int, int]


@dataclass(frozen=True)
class FifoFact:
    """One `aie.objectfifo`, without its name."""

    producer: Tile
    consumers: tuple[Tile, ...]
    depth: int | tuple[int, ...]
    elem_type: str
    dims_to_stream: Dims = ()
    dims_from_stream: tuple[Dims, ...] = ()
    attrs: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        if not self.dims_from_stream:  # lets tests write FifoFact(p, cs, depth, type)
            object.__setattr__(self, "dims_from_stream", ((),) * len(self.consumers))

    def __str__(self) -> str:
        s = f"{self.producer}->{list(self.consumers)} depth={self.depth} {self.elem_type}"
        if self.dims_to_stream:
            s += f" to={list(self.dims_to_stream)}"
        if any(self.dims_from_stream):
            s += f" from={list(self.dims_from_stream)}"
        return s + (f" attrs={dict(self.attrs)}" if self.attrs else "")


@dataclass(frozen=True)
class LinkFact:
    """One `aie.objectfifo.link`, its fifos given by their facts."""

    srcs: tuple[FifoFact, ...]
    dsts: tuple[FifoFact, ...]
    src_offsets: tuple[int, ...] = ()
    dst_offsets: tuple[int, ...] = ()

    def __str__(self) -> str:
        srcs, dsts = ", ".join(map(str, self.srcs)), ", ".join(map(str, self.dsts))
        return f"[{srcs}] -> [{dsts}] ({list(self.src_offsets)} {list(self.dst_offsets)})"


@dataclass(frozen=True)
class KernelFact:
    """One external kernel declaration (`func.func private`); `name` is not compared."""

    arg_types: tuple[str, ...]
    results: tuple[str, ...] = ()
    link_with: str | None = None
    name: str = field(default="", compare=False)


@dataclass(frozen=True)
class DmaFact:
    """One runtime DMA between a runtime argument and a shim fifo."""

    fifo: FifoFact
    arg: int
    offset: int
    sizes: Pattern4
    strides: Pattern4
    repeat_count: int = 0
    waited: bool = False

    def __str__(self) -> str:
        return (f"arg{self.arg} off={self.offset} sizes={self.sizes} strides={self.strides} "
                f"repeat={self.repeat_count} waited={self.waited} fifo=<{self.fifo}>")


@dataclass(frozen=True)
class Facts:
    """Everything a golden test compares; see the module docstring for the normalizations."""

    device: str
    tiles: frozenset[Tile]
    fifos: tuple[FifoFact, ...]
    links: tuple[LinkFact, ...]
    kernels: tuple[KernelFact, ...]
    runtime_args: tuple[str, ...]
    dmas: tuple[DmaFact, ...]


_ID = r"[\w$.-]+"
_SSA = rf"%{_ID}"
_TILE = re.compile(rf"^({_SSA})\s*=\s*aie\.tile\s*\(\s*(\d+)\s*,\s*(\d+)\s*\)\s*(?:\{{.*\}})?$")
_FIFO = re.compile(
    rf"^aie\.objectfifo\s+@({_ID})\s*\(\s*({_SSA})\s*(?:dimensionsToStream\s*\[([^\]]*)\]\s*)?,"
    rf"\s*\{{(.*)\}}\s*,\s*(\[[\d\s,]*\]|\d+(?:\s*:\s*i\d+)?)\s*\)\s*(\{{.*\}})?\s*:\s*"
    r"!aie\.objectfifo<\s*(memref<[^>]*>)\s*>$")
_CONSUMER = re.compile(rf"^({_SSA})(?:\s+dimensionsFromStream\s*\[([^\]]*)\])?$")
_DIM = re.compile(r"<\s*size\s*=\s*(\d+)\s*,\s*stride\s*=\s*(\d+)\s*>")
_LINK = re.compile(r"^aie\.objectfifo\.link\s*\[([^\]]*)\]\s*->\s*\[([^\]]*)\]\s*"
                   r"(?:\(\s*(?:\[([^\]]*)\]\s*\[([^\]]*)\]\s*)?\))?$")
_FUNC = re.compile(rf"^func\.func\s+private\s+@({_ID})\s*\((.*?)\)\s*(?:->\s*(.*?))?\s*"
                   r"(?:attributes\s*(\{.*\}))?$")
_CALL = re.compile(rf"\bfunc\.call\s+@({_ID})")
_DEVICE = re.compile(rf"^aie\.device\s*\(\s*(\w+)\s*\)\s*(?:@{_ID}\s*)?\{{$")
_CORE = re.compile(rf"^(?:{_SSA}\s*=\s*)?aie\.core\s*\(\s*({_SSA})\s*\)\s*\{{$")
_RUNTIME = re.compile(rf"^aiex?\.runtime_sequence\s*(?:@{_ID}\s*)?\((.*)\)\s*\{{$")
_CONST = re.compile(rf"^({_SSA})\s*=\s*arith\.constant\s+(-?\d+)\s*(?::\s*\w+)?$")
_MEMCPY = re.compile(
    rf"^aiex\.npu\.dma_memcpy_nd\s*\(\s*(?:\d+\s*,\s*\d+\s*,\s*)?({_SSA})\s*\[([^\]]*)\]\s*"
    r"\[([^\]]*)\]\s*\[([^\]]*)\]\s*\)\s*(\{.*\})\s*(?::\s*memref<[^>]*>)?$")
_WAIT = re.compile(r"^aiex\.npu\.dma_wait\s*(\{.*\})$")
_TASK = re.compile(rf"^({_SSA})\s*=\s*aiex\.dma_configure_task_for\s+@({_ID})\s*\{{$")
_TASK_OP = re.compile(rf"^aiex\.dma_(start|await|free)_task\s*\(\s*({_SSA})\s*\)$")
_BD = re.compile(rf"^aie\.dma_bd\s*\(\s*({_SSA})\s*:\s*(memref<[^>]*>)\s*(?:,\s*(\d+)\s*,\s*(\d+)"
                 r"\s*(?:,\s*\[(.*)\])?)?\s*\)\s*(?:\{.*\})?$")
# Ops that look like fifo/DMA ops: if one reaches no handler, fail instead of dropping it.
_FIFO_OR_DMA = re.compile(r"objectfifo\s*@|objectfifo\.link|dma_memcpy_nd|dma_bd\s*\(|"
                          r"\"aie\.objectfifo|aie\.objectfifo\.(?!acquire|release|subview)")
# Hand-written data movement: real semantics these facts cannot represent.
_UNSUPPORTED = re.compile(r"\baie\.(mem|memtile_dma|shim_dma|flow|packet_flow|dma|"
                          r"shim_dma_allocation|cascade_flow)\b\s*[(@]")
_ATTR_START = re.compile(r"^[A-Za-z_][\w$.]*\s*=")
_LOC = re.compile(r'(?<![\w.$])loc\((?:[^()"]|"[^"]*"|\([^()]*\))*\)')


def _scan(s: str, start: int, opens: str, closes: str) -> int:
    """Bracket balance of s[start:], skipping string literals and the '>' of '->'."""
    depth, in_str = 0, False
    for i in range(start, len(s)):
        ch = s[i]
        if ch == '"' and (i == 0 or s[i - 1] != "\\"):
            in_str = not in_str
        elif not in_str and ch in opens:
            depth += 1
        elif not in_str and ch in closes and not (ch == ">" and i > 0 and s[i - 1] == "-"):
            depth -= 1
    return depth


def _strip_line(line: str) -> str:
    in_str = False
    for i, ch in enumerate(line):
        if ch == '"' and (i == 0 or line[i - 1] != "\\"):
            in_str = not in_str
        elif not in_str and line.startswith("//", i):
            line = line[:i]
            break
    while (stripped := _LOC.sub("", line)) != line:  # innermost first: loc(callsite(loc(..)))
        line = stripped
    return line.strip()


def _statements(text: str) -> list[str]:
    """Logical statements: lines joined while ( or [ is open, or while a trailing attr-dict is."""
    lines = [s for s in map(_strip_line, text.splitlines()) if s and not s.startswith("#")]
    out: list[str] = []
    i = 0
    while i < len(lines):
        buf = lines[i]
        i += 1
        while i < len(lines):
            nxt = lines[i]
            if _scan(buf, 0, "([", ")]") > 0 or nxt.startswith(("{", ":", "->", "attributes")):
                buf, i = f"{buf} {nxt}", i + 1
            elif buf.endswith("{") and _ATTR_START.match(nxt):
                # '{' then 'key = ...' opens an attr-dict (a region body never starts that way).
                start = len(buf) - 1
                while i < len(lines) and _scan(buf, start, "{", "}") > 0:
                    buf, i = f"{buf} {lines[i]}", i + 1
            else:
                break
        out.append(buf)
    return out


def _split(s: str) -> list[str]:
    """Split on commas outside brackets and strings."""
    parts, start = [], 0
    for i, ch in enumerate(s):
        if ch == "," and _scan(s[:i], start, "([{<", ")]}>") == 0:
            parts.append(s[start:i].strip())
            start = i + 1
    parts.append(s[start:].strip())
    return [p for p in parts if p]


def _attrs(s: str | None) -> dict[str, str]:
    if not s:
        return {}
    out: dict[str, str] = {}
    for part in _split(s.strip()[1:-1]):
        key, _, value = part.partition("=")
        value = re.sub(r"^(-?\d+)\s*:\s*i\d+$", r"\1", value.strip()) or "unit"
        out[key.strip()] = value.strip('"')
    return out


def _canon_type(t: str) -> str:
    t = re.sub(r"\s+", "", t)
    return t[len("memref<"):-1] if t.startswith("memref<") and t.endswith(">") else t


def _dims(s: str | None, stmt: str) -> Dims:
    if not s or not s.strip():
        return ()
    if _DIM.sub("", s).replace(",", "").strip():
        raise ValueError(f"cannot parse dimension list in: {stmt}")
    return tuple((int(a), int(b)) for a, b in _DIM.findall(s))


def _ints(s: str | None) -> tuple[int, ...]:
    return tuple(int(x) for x in _split(s or ""))


def _syms(s: str, stmt: str) -> list[str]:
    names = _split(s)
    if not all(re.fullmatch(rf"@{_ID}", n) for n in names):
        raise ValueError(f"cannot parse symbol list in: {stmt}")
    return [n[1:] for n in names]


def _canon_key(obj: Any) -> str:
    return repr([getattr(obj, f.name) for f in fields(obj) if f.compare])


def _pattern(offsets: list[int], sizes: list[int], strides: list[int],
             stmt: str) -> tuple[int, Pattern4, Pattern4]:
    if not (len(offsets) == len(sizes) == len(strides)) or not 1 <= len(sizes) <= 4:
        raise ValueError(f"need 1-4 dims with matching offsets/sizes/strides: {stmt}")
    pad = 4 - len(sizes)
    offsets, sizes, strides = [0] * pad + offsets, [1] * pad + sizes, [0] * pad + strides
    offset = sum(o * s for o, s in zip(offsets[:3], strides[:3]))
    offset += offsets[3] * (strides[3] if strides[3] > 1 else 1)
    strides = [0 if n == 1 else s for n, s in zip(sizes, strides)]
    return offset, tuple(sizes), tuple(strides)  # type: ignore[return-value]


def parse_facts(text: str) -> Facts:
    """Parse one mlir-aie design (2026 or early-2025 IRON syntax) into its `Facts`.

    Raises ValueError naming the statement it cannot parse or represent."""
    try:
        return _parse(text)
    except ValueError as e:  # an unbalanced '(' can swallow the rest of the file into one statement
        msg = str(e)
        raise ValueError(msg if len(msg) <= 400 else msg[:400] + " ...") from None


def _parse(text: str) -> Facts:
    device: str | None = None
    tiles: dict[str, Tile] = {}
    raw_fifos: dict[str, tuple[Any, ...]] = {}  # name -> unresolved fields + statement
    raw_links: list[tuple[Any, ...]] = []
    funcs: dict[str, tuple[tuple[str, ...], tuple[str, ...], str | None]] = {}
    core_links: dict[str, set[str]] = {}  # callee -> link_with of the cores that call it
    runtime_args: list[tuple[str, str]] | None = None
    consts: dict[str, int] = {}
    events: list[tuple[str, Any]] = []  # ("nd", dma dict) / ("wait", symbol) / ("task", dma dict)
    tasks: dict[str, dict[str, Any]] = {}
    stack: list[tuple[str, Any]] = []  # (region kind, payload)

    def value(tok: str, stmt: str) -> int:
        tok = tok.strip()
        if re.fullmatch(r"-?\d+", tok):
            return int(tok)
        if tok in consts:
            return consts[tok]
        raise ValueError(f"unresolved value {tok} in: {stmt}")

    def arg_index(ssa: str, stmt: str) -> int:
        names = [n for n, _ in runtime_args or []]
        if ssa not in names:
            raise ValueError(f"{ssa} is not a runtime_sequence argument: {stmt}")
        return names.index(ssa)

    for stmt in _statements(text):
        kinds = [k for k, _ in stack]
        if stmt.startswith("}"):
            if not stack:
                raise ValueError(f"unbalanced '}}': {stmt}")
            kind, payload = stack.pop()
            attrs = _attrs(stmt[1:].strip().removesuffix("{").strip() or None)
            if kind == "core" and "link_with" in attrs:
                for callee in payload["calls"]:
                    core_links.setdefault(callee, set()).add(attrs["link_with"])
            elif kind == "task":
                payload["token"] = attrs.get("issue_token") == "true"
                payload["repeat"] = int(attrs.get("repeat_count", "0"))
            if stmt.endswith("{"):
                stack.append(("other", None))
            continue
        if _UNSUPPORTED.search(stmt):
            raise ValueError(f"hand-written data movement is not supported by mlir_facts: {stmt}")
        in_runtime = "runtime" in kinds
        if m := _DEVICE.match(stmt):
            if device is not None:
                raise ValueError("more than one aie.device is not supported")
            device = RENAMED[m[1]][0] if m[1] in RENAMED else m[1]  # 2025's npu1_4col
            stack.append(("device", None))
        elif m := _TILE.match(stmt):
            tiles[m[1]] = (int(m[2]), int(m[3]))
        elif m := _FIFO.match(stmt):
            name, prod, to_s, cons_s, depth_s, attr_s, elem = m.groups()
            if name in raw_fifos:
                raise ValueError(f"duplicate objectfifo @{name}")
            cons = []
            for c in _split(cons_s):
                cm = _CONSUMER.match(c)
                if not cm:
                    raise ValueError(f"cannot parse consumer {c!r} in: {stmt}")
                cons.append((cm[1], _dims(cm[2], stmt)))
            depth = _ints(depth_s.strip("[]")) if depth_s.startswith("[") else int(
                depth_s.split(":")[0])
            fattrs = tuple(sorted(_attrs(attr_s).items()))
            raw_fifos[name] = (prod, cons, depth, _canon_type(elem), _dims(to_s, stmt), fattrs,
                               stmt)
        elif m := _LINK.match(stmt):
            raw_links.append((_syms(m[1], stmt), _syms(m[2], stmt), _ints(m[3]), _ints(m[4])))
        elif m := _FUNC.match(stmt):
            args = tuple(_canon_type(t) for t in _split(m[2]))
            results = tuple(_canon_type(t) for t in _split((m[3] or "").strip("()")))
            funcs[m[1]] = (args, results, _attrs(m[4]).get("link_with"))
        elif m := _CORE.match(stmt):
            stack.append(("core", {"calls": set()}))
        elif m := _RUNTIME.match(stmt):
            if runtime_args is not None:
                raise ValueError("more than one runtime_sequence is not supported")
            runtime_args = []
            for a in _split(m[1]):
                am = re.fullmatch(rf"({_SSA})\s*:\s*(.+)", a)
                if not am:
                    raise ValueError(f"cannot parse runtime argument {a!r} in: {stmt}")
                runtime_args.append((am[1], _canon_type(am[2])))
            stack.append(("runtime", None))
        elif in_runtime:
            if kinds[-1] == "task":
                task = stack[-1][1]
                if stmt == "aie.end":
                    continue
                bm = _BD.match(stmt)
                if not bm or "bd" in task:
                    raise ValueError(f"only a single aie.dma_bd is supported in a task: {stmt}")
                numel = math.prod(int(x) for x in re.findall(r"(\d+)x", bm[2]))
                off, length = int(bm[3] or 0), int(bm[4] or numel)
                dims = _dims(bm[5], stmt) or ((length, 1),)
                _, sizes, strides = _pattern([0] * len(dims), [d[0] for d in dims],
                                             [d[1] for d in dims], stmt)
                if sizes[1] * sizes[2] * sizes[3] != length:
                    # the outermost dim is the BD's iteration dim; len covers the inner three
                    raise ValueError(f"dma_bd length {length} != inner sizes {sizes[1:]}: {stmt}")
                task.update(bd=True, arg=arg_index(bm[1], stmt), offset=off, sizes=sizes,
                            strides=strides)
            elif kinds[-1] != "runtime":
                raise ValueError(f"control flow in runtime_sequence is not supported: {stmt}")
            elif m := _CONST.match(stmt):
                consts[m[1]] = int(m[2])
            elif m := _MEMCPY.match(stmt):
                attrs = _attrs(m[5])
                if not attrs.get("metadata", "").startswith("@"):
                    raise ValueError(f"dma_memcpy_nd without metadata: {stmt}")
                vals = [[value(t, stmt) for t in _split(m[i])] for i in (2, 3, 4)]
                off, sizes, strides = _pattern(*vals, stmt=stmt)
                events.append(("nd", {
                    "fifo": attrs["metadata"][1:], "arg": arg_index(m[1], stmt), "offset": off,
                    "sizes": sizes, "strides": strides, "repeat": 0,
                    "token": attrs.get("issue_token") == "true", "waited": False, "stmt": stmt}))
            elif m := _WAIT.match(stmt):
                events.append(("wait", _attrs(m[1]).get("symbol", "").lstrip("@")))
            elif m := _TASK.match(stmt):
                task = {"fifo": m[2], "token": False, "repeat": 0, "waited": False,
                        "started": False, "stmt": stmt}
                tasks[m[1]] = task
                stack.append(("task", task))
            elif m := _TASK_OP.match(stmt):
                task = tasks.get(m[2])
                if task is None:
                    raise ValueError(f"unknown task {m[2]}: {stmt}")
                if m[1] == "start":
                    if "bd" not in task:
                        raise ValueError(f"task without aie.dma_bd: {task['stmt']}")
                    task["started"] = True
                    events.append(("task", task))
                elif m[1] == "await":
                    if not task["started"] or not task["token"]:
                        raise ValueError(f"await of an unstarted or token-less task: {stmt}")
                    task["waited"] = True
            else:
                raise ValueError(f"unsupported op in runtime_sequence: {stmt}")
        elif _FIFO_OR_DMA.search(stmt):
            raise ValueError(f"cannot parse fifo/DMA op: {stmt}")
        else:
            if "core" in kinds and (cm := _CALL.search(stmt)):
                next(p for k, p in reversed(stack) if k == "core")["calls"].add(cm[1])
            if stmt.endswith("{"):
                stack.append(("other", None))
    if stack:
        raise ValueError(f"unclosed region(s): {[k for k, _ in stack]}")
    if device is None:
        raise ValueError("no aie.device found")
    kernels = []
    for name, (args, results, link) in funcs.items():
        links = core_links.get(name, set()) | ({link} if link else set())
        if len(links) > 1:
            raise ValueError(f"@{name} is linked with several objects: {sorted(links)}")
        kernels.append(KernelFact(args, results, next(iter(links), None), name))
    unstarted = [t["stmt"] for t in tasks.values() if not t["started"]]
    if unstarted:
        raise ValueError(f"configured but never started: {unstarted}")
    return _resolve(device, tiles, raw_fifos, raw_links, kernels, runtime_args or [], events)


def _by_offset(fifos: list[FifoFact], offsets: tuple[int, ...],
               stmt: str) -> tuple[tuple[FifoFact, ...], tuple[int, ...]]:
    if not offsets:
        return tuple(fifos), ()
    if len(offsets) != len(fifos):
        raise ValueError(f"link offsets {offsets} do not match {len(fifos)} fifos: {stmt}")
    pairs = sorted(zip(offsets, fifos), key=lambda p: (p[0], _canon_key(p[1])))
    return tuple(f for _, f in pairs), tuple(o for o, _ in pairs)


def _resolve(device: str, tiles: dict[str, Tile], raw_fifos: dict[str, Any],
             raw_links: list[Any], kernels: list[KernelFact],
             runtime_args: list[tuple[str, str]], events: list[tuple[str, Any]]) -> Facts:
    def tile(ssa: str, stmt: str) -> Tile:
        if ssa not in tiles:
            raise ValueError(f"unknown tile {ssa} in: {stmt}")
        return tiles[ssa]

    fifos: dict[str, FifoFact] = {}
    for name, (prod, cons, depth, elem, to_dims, fattrs, stmt) in raw_fifos.items():
        ends = [(tile(c, stmt), dims) for c, dims in cons]
        order = sorted(range(len(ends)), key=lambda k: ends[k])
        if isinstance(depth, tuple):
            if len(depth) != 1 + len(ends):
                raise ValueError(f"depth list needs producer + {len(ends)} consumers: {stmt}")
            depth = (depth[0],) + tuple(depth[1 + k] for k in order)
            depth = depth[0] if len(set(depth)) == 1 else depth
        fifos[name] = FifoFact(tile(prod, stmt), tuple(ends[k][0] for k in order), depth, elem,
                               to_dims, tuple(ends[k][1] for k in order), fattrs)

    def fifo(name: str) -> FifoFact:
        if name not in fifos:
            raise ValueError(f"@{name} is not an objectfifo")
        return fifos[name]

    links = []
    for srcs, dsts, soff, doff in raw_links:
        s, d = [fifo(n) for n in srcs], [fifo(n) for n in dsts]
        if len(s) == len(d) == 1 and not any(soff + doff):
            soff = doff = ()
        stmt = f"link {srcs} -> {dsts}"
        (s_t, soff), (d_t, doff) = _by_offset(s, soff, stmt), _by_offset(d, doff, stmt)
        links.append(LinkFact(s_t, d_t, soff, doff))

    pending: dict[str, list[dict[str, Any]]] = {}
    raw_dmas: list[dict[str, Any]] = []
    for kind, ev in events:
        if kind == "wait":
            if not pending.get(ev):
                raise ValueError(f"dma_wait on @{ev} has no outstanding token-issuing DMA")
            pending[ev].pop(0)["waited"] = True
            continue
        f = fifo(ev["fifo"])
        into_shim = any(row == 0 for _, row in f.consumers)
        if f.producer[1] != 0 and not into_shim:
            raise ValueError(f"runtime DMA on a fifo with no shim endpoint: {ev['stmt']}")
        if kind == "nd" and (ev["token"] or into_shim):
            pending.setdefault(ev["fifo"], []).append(ev)
        raw_dmas.append(ev)
    dmas = tuple(DmaFact(fifo(e["fifo"]), e["arg"], e["offset"], e["sizes"], e["strides"],
                         e["repeat"], e["waited"]) for e in raw_dmas)
    return Facts(
        device=device,
        tiles=frozenset(tiles.values()),
        fifos=tuple(sorted(fifos.values(), key=_canon_key)),
        links=tuple(sorted(links, key=_canon_key)),
        kernels=tuple(sorted(kernels, key=_canon_key)),
        runtime_args=tuple(t for _, t in runtime_args),
        dmas=dmas,
    )


def dma_multiset(facts: Facts) -> Counter[tuple[Any, ...]]:
    """Order-insensitive DMA view: (fifo, arg, offset, sizes, strides, repeat_count) -> count."""
    return Counter((d.fifo, d.arg, d.offset, d.sizes, d.strides, d.repeat_count)
                   for d in facts.dmas)


def _counter_diff(label: str, a: Counter[Any], b: Counter[Any]) -> list[str]:
    lines = []
    for side, c in (("a", a - b), ("b", b - a)):
        for item, n in sorted(c.items(), key=lambda kv: _canon_key(kv[0])):
            lines.append(f"{label} only in {side}{f' (x{n})' if n > 1 else ''}: {item}")
    return lines


def describe_diff(a: Facts, b: Facts) -> str:
    """Readable multi-line account of how `a` and `b` differ (for assertion messages)."""
    out = []
    for name in ("device", "runtime_args"):
        if getattr(a, name) != getattr(b, name):
            out.append(f"{name}: a={getattr(a, name)!r} b={getattr(b, name)!r}")
    if a.tiles != b.tiles:
        out.append(f"tiles only in a: {sorted(a.tiles - b.tiles)}; "
                   f"only in b: {sorted(b.tiles - a.tiles)}")
    for name in ("fifos", "links", "kernels"):
        out += _counter_diff(name, Counter(getattr(a, name)), Counter(getattr(b, name)))
    if a.dmas != b.dmas:
        if len(a.dmas) != len(b.dmas):
            out.append(f"dmas: a has {len(a.dmas)}, b has {len(b.dmas)}")
        if dma_multiset(a) != dma_multiset(b):
            strip = [Counter(replace(d, waited=False) for d in f.dmas) for f in (a, b)]
            out += _counter_diff("dmas (waited ignored)", *strip)
        diffs = [i for i, (x, y) in enumerate(zip(a.dmas, b.dmas)) if x != y]
        if diffs:
            i = diffs[0]
            out.append(f"dmas: {len(diffs)} position(s) differ, first #{i}:\n"
                       f"  a: {a.dmas[i]}\n  b: {b.dmas[i]}")
    return "\n".join(out) or "no differences"
