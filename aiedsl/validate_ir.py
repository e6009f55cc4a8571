"""A design IR that did not come from tracing, checked before anything reads it: :func:`validate`.

pydantic checks the IR's shape (every field there, of its type), not aiedsl's rules: a fifo
name that names no fifo, a loop of 0 iterations, a dtype aiedsl does not know, version 99 of
the schema. The checks, the placer and the simulator look names up and trust counts, so such an
IR ended in a KeyError deep in a check, or ran: a loop of count 0 simulated as passed, though
the ``scf.for`` it emits runs its body no times. :func:`validate` holds the IR to the rules
the front end keeps (what tracing cannot produce is refused here); :func:`~aiedsl.checks.
check_design` runs it first, ``simulate(placed=...)`` on the placed design it is given, and
:func:`~aiedsl.design_json.load_json` on what it reads (reading ``design.json`` and wording
what pydantic refuses are :mod:`aiedsl.design_json`'s).

Each mistake is a DesignError of rule ``design IR`` naming where the IR came from, the field
by its path (``cores[0].body[0].body[0].fifo``), the value found and the fix, at the design
line of the nearest node that has one.
"""
from __future__ import annotations

import json
import re
from typing import Any, NoReturn

from pydantic import BaseModel

from aiedsl.errors import DesignError
from aiedsl.ir.core_ops import (
    MAX_LOOP_COUNT, Acquire, BarrierWait, BufferArg, Call, LocalArg, Loop, Op, Release, RtpArg,
    ScalarArg,
)
from aiedsl.ir.design import IR_VERSION, Design
from aiedsl.ir.fifos import Endpoint
from aiedsl.ir.kernel import KernelArg
from aiedsl.ir.loc import Loc
from aiedsl.ir.runtime import RtpWrite, SetBarrier, Transfer, Wait
from aiedsl.ir.types import TensorType

RULE = "design IR"
"""The rule every error of this module and of :mod:`aiedsl.design_json` names."""

_SYMBOL = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
"""A name the MLIR takes as a symbol (a fifo's, a kernel's, a buffer's), as the front end
makes them."""

_REBUILD = "a design.json aiedsl wrote holds none: rebuild the design (aiedsl build) rather " \
    "than edit its design.json"


def validate(d: Design, source: str = "the design IR", *, placed: bool = False) -> Design:
    """``d`` itself when it keeps the rules every IR the front end makes keeps (its version,
    its device, its names unique and every name it refers to declared, its counts, depths,
    sizes and indices in range, its dtypes known, its lines not negative); with ``placed``,
    also placed, every tile it uses decided and of its kind. Otherwise a DesignError (rule
    ``design IR``) naming ``source`` (where ``d`` came from), the field and the value.

    What it leaves to :func:`~aiedsl.checks.check_design`: whether the design is right (its
    balance, hangs, DMA patterns, resources), which an IR the front end made may or may not
    be, and which the checks say in the design's terms."""
    _Validator(d, source).run(placed)
    return d


def _version_error(where: str, given: bool, version: object, loc: Loc | None) -> NoReturn:
    """Refuse an IR of another version of the schema (``given``: it names one) than this
    aiedsl reads."""
    if loc is not None and loc.line < 0:
        loc = None
    said = f"is {json.dumps(version)}" if given else "is missing"
    raise DesignError(
        RULE, f"{where}: ir_version {said}: this aiedsl reads version {IR_VERSION} of the "
        "design IR", loc=loc, limit=f"ir_version {IR_VERSION}",
        found=f"ir_version {json.dumps(version)}" if given else "no ir_version",
        fix="rebuild the design with this aiedsl (aiedsl build) for a design.json it reads")


def _shown(value: object) -> str:
    """A JSON value as a message quotes it."""
    try:
        text = json.dumps(value)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


class _Validator:
    """One walk over a design IR, refusing the first field that breaks a rule."""

    def __init__(self, d: Design, source: str) -> None:
        self.d, self.source = d, source

    def fail(self, path: str, message: str, found: object, fix: str, loc: Loc | None = None,
             limit: str | None = None) -> NoReturn:
        """A DesignError about field ``path``: ``message`` says what is wrong with it,
        ``found`` is its value (quoted as JSON: ``"nope"``, ``0``, ``null``)."""
        if loc is not None and loc.line < 0:  # the broken line itself: no place to point at
            loc = None
        raise DesignError(RULE, f"{self.source}: {path} {message}", loc=loc, limit=limit,
                          found=_shown(found), fix=fix)

    # -- the walk -------------------------------------------------------------------------------

    def run(self, placed: bool) -> None:
        d = self.d
        if d.ir_version != IR_VERSION:
            _version_error(self.source, True, d.ir_version, d.loc)
        self.device(d)
        self.walk(d, "", d.loc)
        self.names()
        for i, t in enumerate(d.tensors):
            if t.index != i:
                self.fail(f"tensors[{i}].index", f"is {t.index}, not its position {i}",
                          t.index, f"give it {i}: the runtime sequence takes its tensors in "
                          "this order", t.loc)
        for i, f in enumerate(d.fifos):
            at = f"fifos[{i}]"
            self.at_least(f"{at}.repeat", f.repeat, 1, f.loc)
            self.endpoint(f"{at}.producer", f.producer)
            for j, c in enumerate(f.consumers):
                self.endpoint(f"{at}.consumers[{j}]", c)
        for i, link in enumerate(d.links):
            for side in ("srcs", "dsts"):
                for j, name in enumerate(getattr(link, side)):
                    self.refers(f"links[{i}].{side}[{j}]", name, "fifo",
                                [f.name for f in d.fifos], link.loc)
            for j, off in enumerate(link.offsets):
                self.at_least(f"links[{i}].offsets[{j}]", off, 0, link.loc)
        for i, h in enumerate(d.herds):
            self.at_least(f"herds[{i}].cols", h.cols, 1, h.loc)
            self.at_least(f"herds[{i}].rows", h.rows, 1, h.loc)
        herds = {h.name: h for h in d.herds}
        for i, core in enumerate(d.cores):
            at = f"cores[{i}]"
            self.refers(f"{at}.herd", core.herd, "herd", list(herds), core.loc)
            h = herds[core.herd]
            x, y = core.index
            if not (0 <= x < h.cols and 0 <= y < h.rows):
                self.fail(f"{at}.index", f"is {list(core.index)}, outside herd '{h.name}' of "
                          f"{h.cols}x{h.rows}", list(core.index), "give the core's (x, y) in "
                          f"its herd; {_REBUILD}", core.loc,
                          limit=f"0 <= x < {h.cols}, 0 <= y < {h.rows}")
            self.at_least(f"{at}.stack", core.stack, 0, core.loc)
            results = self.results(f"{at}.body", core.body, {})
            self.ops(f"{at}.body", core.body, results)
        for i, k in enumerate(d.kernels):
            self.at_least(f"kernels[{i}].cycles", k.cycles, 0, k.loc)
            self.at_least(f"kernels[{i}].ops", k.ops, 0, k.loc)
            for j, count in enumerate(k.op_counts):
                self.at_least(f"kernels[{i}].op_counts[{j}].ops", count.ops, 0, k.loc)
        self.runtime()
        cores = [c.name for c in d.cores]
        for i, r in enumerate(d.rtps):
            self.refers(f"rtps[{i}].core", r.core, "core", cores, r.loc)
        users: list[tuple[str, tuple[str, ...], Loc]] = [
            *((f"locals[{i}]", b.cores, b.loc) for i, b in enumerate(d.locals)),
            *((f"barriers[{i}]", b.cores, b.loc) for i, b in enumerate(d.barriers))]
        for at, names, loc in users:
            for j, name in enumerate(names):
                self.refers(f"{at}.cores[{j}]", name, "core", cores, loc)
        for i, cascade in enumerate(d.cascades):
            self.refers(f"cascades[{i}].src", cascade.src, "core", cores, cascade.loc)
            self.refers(f"cascades[{i}].dst", cascade.dst, "core", cores, cascade.loc)
        if placed:
            self.placed()

    def device(self, d: Design) -> None:
        from aiedsl.targets import DEVICES, device_hint

        if d.device not in DEVICES:
            hint = device_hint(d.device)
            self.fail("device", f"is '{d.device}', which aiedsl does not know",
                      d.device, f"use {hint}" if hint else "use one of them (the device the "
                      "design was built for)", d.loc, limit="one of " + ", ".join(DEVICES))

    def walk(self, node: Any, path: str, near: Loc | None) -> None:
        """Every location's line is 0 (none known) or more; every tensor type has a known
        dtype and dimensions of 1 or more; every scalar's dtype is known. ``near``: the
        location of the innermost node around ``node`` that has one, for the message."""
        if isinstance(node, Loc):
            if node.line < 0:
                self.fail(f"{path}.line", "is negative", node.line, "give the 1-based line, or "
                          f"0 for none; {_REBUILD}", near, limit="0 or more")
            return
        if isinstance(node, TensorType):
            self.dtype(f"{path}.dtype", node.dtype, near)
            for j, n in enumerate(node.shape):
                self.at_least(f"{path}.shape[{j}]", n, 1, near)
            return
        if isinstance(node, (ScalarArg, RtpArg, KernelArg)):
            self.dtype(f"{path}.dtype", node.dtype, near)
        if isinstance(node, BaseModel):
            here = getattr(node, "loc", None)
            near = here if isinstance(here, Loc) and here.line >= 0 else near
            for name in type(node).model_fields:
                self.walk(getattr(node, name), f"{path}.{name}" if path else name, near)
        elif isinstance(node, (list, tuple)):
            for i, v in enumerate(node):
                self.walk(v, f"{path}[{i}]", near)
        elif isinstance(node, dict):
            for k, v in node.items():
                self.walk(v, f"{path}.{k}", near)

    def dtype(self, path: str, name: str, near: Loc | None) -> None:
        from aiedsl.dtypes import DTYPES

        if name not in DTYPES:
            self.fail(path, f"is '{name}', which aiedsl does not know", name,
                      f"use one of {', '.join(DTYPES)}", near,
                      limit="one of " + ", ".join(DTYPES))

    def names(self) -> None:
        """Names are unique where they are looked up, and symbols where the MLIR takes them."""
        d = self.d
        if not _SYMBOL.match(d.name):
            self.fail("name", f"'{d.name}' is no symbol the MLIR takes", d.name,
                      "name the design with letters, digits and _", d.loc)
        groups: list[tuple[str, str, list[tuple[str, Loc]]]] = [
            ("tensors", "name", [(t.name, t.loc) for t in d.tensors]),
            ("fifos", "name", [(f.name, f.loc) for f in d.fifos]),
            ("herds", "name", [(h.name, h.loc) for h in d.herds]),
            ("kernels", "symbol", [(k.symbol, k.loc) for k in d.kernels]),
            ("rtps", "name", [(r.name, r.loc) for r in d.rtps]),
            ("locals", "name", [(b.name, b.loc) for b in d.locals]),
            ("barriers", "name", [(b.name, b.loc) for b in d.barriers]),
        ]
        for field, key, items in groups:
            seen: dict[str, int] = {}
            for i, (name, loc) in enumerate(items):
                if not _SYMBOL.match(name):
                    self.fail(f"{field}[{i}].{key}", f"'{name}' is no symbol the MLIR takes",
                              name, "use letters, digits and _ (not starting with a digit)",
                              loc)
                if name in seen:
                    self.fail(f"{field}[{i}].{key}", f"'{name}' is {field}[{seen[name]}]'s "
                              "too", name, f"give each of the {field} a name of its own", loc,
                              limit=f"one of the {field} per name")
                seen[name] = i
        seen = {}
        for i, core in enumerate(d.cores):
            if core.name in seen:
                self.fail(f"cores[{i}].name", f"'{core.name}' is cores[{seen[core.name]}]'s "
                          "too", core.name, f"one core per name; {_REBUILD}", core.loc)
            seen[core.name] = i

    def endpoint(self, path: str, e: Endpoint) -> None:
        self.at_least(f"{path}.depth", e.depth, 1, e.loc)
        for j, dim in enumerate(e.dims):
            self.at_least(f"{path}.dims[{j}].size", dim.size, 1, e.loc)
        if e.kind == "core":
            self.refers(f"{path}.core", e.core, "core", [c.name for c in self.d.cores], e.loc)

    def results(self, path: str, ops: tuple[Op, ...], seen: dict[str, Acquire]
                ) -> dict[str, Acquire]:
        """The acquires of a core's program (``path``: its ops) by result name, each name
        once: a kernel call's buffer names its acquire by it."""
        for i, op in enumerate(ops):
            if isinstance(op, Loop):
                self.results(f"{path}[{i}].body", op.body, seen)
            elif isinstance(op, Acquire):
                if op.result in seen:
                    self.fail(f"{path}[{i}].result", f"'{op.result}' names another acquire's "
                              "result in the core's program too", op.result,
                              f"one acquire per result name in a core's program; {_REBUILD}",
                              op.loc)
                seen[op.result] = op
        return seen

    def ops(self, path: str, ops: tuple[Op, ...], results: dict[str, Acquire]) -> None:
        d = self.d
        fifos = [f.name for f in d.fifos]
        for i, op in enumerate(ops):
            at = f"{path}[{i}]"
            if isinstance(op, Loop):
                if not 1 <= op.count <= MAX_LOOP_COUNT:
                    self.fail(f"{at}.count", f"is {op.count}", op.count,
                              "give a loop 1 iteration or more (loop() refuses fewer: the "
                              "simulator would run its body once, the scf.for no times)",
                              op.loc, limit=f"1 to {MAX_LOOP_COUNT}")
                self.ops(f"{at}.body", op.body, results)
            elif isinstance(op, (Acquire, Release)):
                self.refers(f"{at}.fifo", op.fifo, "fifo", fifos, op.loc)
                self.at_least(f"{at}.count", op.count, 1, op.loc)
            elif isinstance(op, Call):
                self.refers(f"{at}.kernel", op.kernel, "kernel",
                            [k.symbol for k in d.kernels], op.loc)
                for j, a in enumerate(op.args):
                    self.argument(f"{at}.args[{j}]", a, results, op)
            elif isinstance(op, BarrierWait):
                self.refers(f"{at}.barrier", op.barrier, "barrier",
                            [b.name for b in d.barriers], op.loc)

    def argument(self, at: str, a: Any, results: dict[str, Acquire], call: Call) -> None:
        d = self.d
        if isinstance(a, BufferArg):
            self.refers(f"{at}.value", a.value, "acquire result", list(results), call.loc)
            n = results[a.value].count
            self.index(f"{at}.index", a.index, n, f"the {n} element(s) acquired", call.loc)
        elif isinstance(a, RtpArg):
            self.refers(f"{at}.rtp", a.rtp, "rtp", [r.name for r in d.rtps], call.loc)
            n = d.rtp(a.rtp).type.numel
            self.index(f"{at}.index", a.index, n, f"the rtp's {n} slot(s)", call.loc)
        elif isinstance(a, LocalArg):
            self.refers(f"{at}.local", a.local, "local", [b.name for b in d.locals], call.loc)

    def runtime(self) -> None:
        d = self.d
        fifos = [f.name for f in d.fifos]
        for i, op in enumerate(d.runtime):
            at = f"runtime[{i}]"
            if isinstance(op, Transfer):
                self.refers(f"{at}.tensor", op.tensor, "tensor", [t.name for t in d.tensors],
                            op.loc)
                # its pattern is the DMA check's: the front end makes any (a negative offset,
                # a size 0), which [dma pattern] refuses in the design's terms
                self.refers(f"{at}.fifo", op.fifo, "fifo", fifos, op.loc)
            elif isinstance(op, Wait):
                self.refers(f"{at}.fifo", op.fifo, "fifo", fifos, op.loc)
            elif isinstance(op, RtpWrite):
                self.refers(f"{at}.rtp", op.rtp, "rtp", [r.name for r in d.rtps], op.loc)
                n = d.rtp(op.rtp).type.numel
                self.index(f"{at}.index", op.index, n, f"the rtp's {n} slot(s)", op.loc)
            elif isinstance(op, SetBarrier):
                self.refers(f"{at}.barrier", op.barrier, "barrier",
                            [b.name for b in d.barriers], op.loc)

    def placed(self) -> None:
        """Placed: every core, fifo end and link on a tile of its kind."""
        from aiedsl.targets import get_target

        d = self.d
        if not d.placed:
            self.fail("placed", "is false: this design is not placed", False,
                      "give the placed design check_design returns (a build's design.json "
                      "holds one), or leave placed= out to check and place this one", d.loc)
        target = get_target(d.device)

        def on(path: str, tile: tuple[int, int] | None, kind: str, loc: Loc) -> None:
            if tile is None:
                self.fail(path, "is not decided in a placed design", None,
                          f"give the {kind} tile it is on; {_REBUILD}", loc)
            if target.kind_of(tile) != kind:
                self.fail(path, f"is {list(tile)}, not a {kind} tile of {d.device}", list(tile),
                          f"give the {kind} tile it is on; {_REBUILD}", loc)

        for i, core in enumerate(d.cores):
            on(f"cores[{i}].tile", core.tile, "core", core.loc)
        for i, f in enumerate(d.fifos):
            ends = [("producer", f.producer)] + [(f"consumers[{j}]", c)
                                                 for j, c in enumerate(f.consumers)]
            for name, e in ends:
                on(f"fifos[{i}].{name}.tile", e.tile, e.tile_kind, e.loc)
        for i, link in enumerate(d.links):
            on(f"links[{i}].tile", link.tile, "memtile" if link.via == "memtile" else "core",
               link.loc)

    # -- one field ------------------------------------------------------------------------------

    def refers(self, path: str, name: str | None, what: str, names: list[str],
               loc: Loc | None) -> None:
        """``name`` (field ``path``) is one of ``names``, the design's ``what``s."""
        if name in names:
            return
        listed = ", ".join(names[:8]) + (f" and {len(names) - 8} more" if len(names) > 8
                                         else "")
        named = "nothing" if name is None else f"'{name}'"
        self.fail(path, f"names {what} {named}, which the design does not declare",
                  name, f"name one of them; {_REBUILD}", loc,
                  limit=f"one of the design's {what}s: {listed or 'none'}")

    def at_least(self, path: str, value: int, low: int, loc: Loc | None) -> None:
        if value < low:
            self.fail(path, f"is {value}", value, f"give {low} or more; {_REBUILD}", loc,
                      limit=f"{low} or more")

    def index(self, path: str, value: int, n: int, of: str, loc: Loc | None) -> None:
        if not 0 <= value < n:
            self.fail(path, f"is {value}, outside {of}", value, f"give 0 to {n - 1}; {_REBUILD}",
                      loc, limit=f"0 to {n - 1}")

