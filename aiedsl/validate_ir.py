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
import math
import re
from typing import Any, Callable, NoReturn

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
from aiedsl.targets import TargetModel

RULE = "design IR"
"""The rule every error of this module and of :mod:`aiedsl.design_json` names."""

MAX_LINE = 2 ** 32 - 1
"""Largest line a location may give: ``aie.mlir`` writes each as a ``loc("file":line:col)``,
and MLIR's ``FileLineColLoc`` holds its line as an ``unsigned`` (32 bits: mlir's
BuiltinLocationAttributes.td, ``FileLineColLoc::get``)."""

_REFERENCE = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*:[A-Za-z0-9_.<>]+\Z")
"""A reference as the front end writes it, ``module:qualname`` (``helpers:ref``,
``__aiedsl_design__:<lambda>``, ``f.<locals>.g``): a name, never imported."""

_PLAIN = frozenset({str, int, float, bool, type(None)})
"""The types of values :meth:`_Validator.walk` has nothing to check in (exactly these types:
a subclass, an enum's member, is walked)."""

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
        self.target: TargetModel  # the device's, once run() has checked the device is known
        self.models: dict[type[BaseModel], tuple[tuple[str, ...], bool]] = {}
        """What :meth:`_model` found of each model class the walk met."""

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
        from aiedsl.targets import get_target

        self.target = get_target(d.device)
        self.walk(d, "", d.loc)
        self.names()
        self.defines()
        for i, t in enumerate(d.tensors):
            if t.index != i:
                self.fail(f"tensors[{i}].index", f"is {t.index}, not its position {i}",
                          t.index, f"give it {i}: the runtime sequence takes its tensors in "
                          "this order", t.loc)
        top = self.target.max_lock_value
        for i, f in enumerate(d.fifos):
            at = f"fifos[{i}]"
            # a repeat multiplies the memtile's producer lock (checks/repeat.py): as
            # trace.check_repeat, 1 to the largest lock value
            self.within(f"{at}.repeat", f.repeat, 1, top, f.loc, "a lock's value")
            self.endpoint(f"{at}.producer", f.producer)
            if not f.consumers:
                self.fail(f"{at}.consumers", "is empty: a fifo has one consumer or more", [],
                          f"give the fifo's consumers; {_REBUILD}", f.loc,
                          limit="1 consumer or more")
            for j, c in enumerate(f.consumers):
                self.endpoint(f"{at}.consumers[{j}]", c)
        self.links()
        for i, h in enumerate(d.herds):
            self.at_least(f"herds[{i}].cols", h.cols, 1, h.loc)
            self.at_least(f"herds[{i}].rows", h.rows, 1, h.loc)
            self.herd_size(f"herds[{i}]", h.cols, h.rows, h.loc)
        herds = {h.name: h for h in d.herds}
        memory = self.target.core.memory
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
            # as @herd's stack=: bytes from 0 to the core's data memory
            self.within(f"{at}.stack", core.stack, 0, memory, core.loc,
                        "bytes of the core's data memory")
            results = self.results(f"{at}.body", core.body, {})
            self.ops(f"{at}.body", core.body, results)
        for i, k in enumerate(d.kernels):
            self.at_least(f"kernels[{i}].cycles", k.cycles, 0, k.loc)
            self.at_least(f"kernels[{i}].ops", k.ops, 0, k.loc)
            for j, count in enumerate(k.op_counts):
                self.at_least(f"kernels[{i}].op_counts[{j}].ops", count.ops, 0, k.loc)
            self.kernel(f"kernels[{i}]", k)
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
        for i, b in enumerate(d.barriers):
            self.within(f"barriers[{i}].init", b.init, 0, top, b.loc, "a lock's value")
        for i, buf in enumerate(d.locals):
            self.local_init(f"locals[{i}].init", buf.init, buf.type, buf.loc)
        for i, cascade in enumerate(d.cascades):
            self.refers(f"cascades[{i}].src", cascade.src, "core", cores, cascade.loc)
            self.refers(f"cascades[{i}].dst", cascade.dst, "core", cores, cascade.loc)
        self.cascades()
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
        # a plain value holds nothing to check: it is passed by, not walked (most of an IR's
        # fields are plain, and naming each one's path cost validate() half its time)
        if type(node) is tuple or type(node) is list:  # the commonest: nothing else to ask
            for i, v in enumerate(node):
                if type(v) not in _PLAIN:
                    self.walk(v, f"{path}[{i}]", near)
            return
        if isinstance(node, Loc):
            if node.line < 0:
                self.fail(f"{path}.line", "is negative", node.line, "give the 1-based line, or "
                          f"0 for none; {_REBUILD}", near, limit="0 or more")
            if node.line > MAX_LINE:
                self.fail(f"{path}.line", f"is {node.line}, past the lines MLIR locations hold",
                          node.line, f"give the 1-based line, or 0 for none; {_REBUILD}", None,
                          limit=f"0 to {MAX_LINE} (MLIR's FileLineColLoc: an unsigned line)")
            return
        if isinstance(node, TensorType):
            from aiedsl.lang.tensor import MAX_ELEMENTS

            self.dtype(f"{path}.dtype", node.dtype, near)
            for j, n in enumerate(node.shape):
                self.at_least(f"{path}.shape[{j}]", n, 1, near)
            numel = math.prod(node.shape)
            if numel >= MAX_ELEMENTS:  # Tensor[...]'s own rule (lang/tensor.py)
                self.fail(f"{path}.shape", f"has {numel:,} elements", list(node.shape),
                          f"give a shape of fewer elements; {_REBUILD}", near,
                          limit=f"fewer than 2^31 = {MAX_ELEMENTS:,} elements")
            return
        if isinstance(node, (ScalarArg, RtpArg, KernelArg)):
            self.dtype(f"{path}.dtype", node.dtype, near)
        if isinstance(node, BaseModel):
            fields, has_loc = self._model(type(node))
            if has_loc:
                here = getattr(node, "loc", None)
                near = here if isinstance(here, Loc) and here.line >= 0 else near
            for name in fields:
                v = getattr(node, name)
                if type(v) not in _PLAIN:
                    self.walk(v, f"{path}.{name}" if path else name, near)
        elif isinstance(node, (list, tuple)):
            for i, v in enumerate(node):
                if type(v) not in _PLAIN:
                    self.walk(v, f"{path}[{i}]", near)
        elif isinstance(node, dict):
            for k, v in node.items():
                if type(v) not in _PLAIN:
                    self.walk(v, f"{path}.{k}", near)

    def _model(self, cls: type[BaseModel]) -> tuple[tuple[str, ...], bool]:
        """A model class's fields, and whether its instances may have a ``loc`` (a field, a
        class attribute, or an extra field where the class allows them); kept per class."""
        known = self.models.get(cls)
        if known is None:
            fields = tuple(cls.model_fields)
            known = self.models[cls] = (fields, "loc" in fields or hasattr(cls, "loc")
                                        or cls.model_config.get("extra") == "allow")
        return known

    def dtype(self, path: str, name: str, near: Loc | None) -> None:
        from aiedsl.dtypes import DTYPES

        if name not in DTYPES:
            self.fail(path, f"is '{name}', which aiedsl does not know", name,
                      f"use one of {', '.join(DTYPES)}", near,
                      limit="one of " + ", ".join(DTYPES))

    def names(self) -> None:
        """Names are unique where they are looked up, and symbols where the MLIR takes them."""
        from aiedsl.lang.names import check_name, check_symbol, check_tensor_name

        d = self.d
        self.front("name", d.loc, check_name, d.name, "design name", None)
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
                at = f"{field}[{i}].{key}"
                if field == "tensors":
                    self.front(at, loc, check_tensor_name, name, None)
                elif field == "kernels":
                    self.front(at, loc, check_symbol, name, None)
                else:
                    self.front(at, loc, check_name, name, f"{field[:-1]} name", None)
                if name in seen:
                    self.fail(f"{field}[{i}].{key}", f"'{name}' is {field}[{seen[name]}]'s "
                              "too", name, f"give each of the {field} a name of its own", loc,
                              limit=f"one of the {field} per name")
                seen[name] = i
        for i, f in enumerate(d.fifos):
            if f.channel is not None:
                self.front(f"fifos[{i}].channel", f.loc, check_name, f.channel, "channel name",
                           None)
        seen = {}
        for i, core in enumerate(d.cores):
            # as the front end names its cores (lang/core.py), before anything looks one up
            self.refers(f"cores[{i}].herd", core.herd, "herd", [h.name for h in d.herds],
                        core.loc)
            named = f"{core.herd}[{core.index[0]},{core.index[1]}]"
            if core.name != named:
                self.fail(f"cores[{i}].name", f"is not '{named}', the name of core "
                          f"{list(core.index)} of herd '{core.herd}'", core.name,
                          f"name it '{named}' (and every reference to it); {_REBUILD}",
                          core.loc, limit="<herd>[x,y] of the core's herd and index")
            if core.name in seen:
                self.fail(f"cores[{i}].name", f"'{core.name}' is cores[{seen[core.name]}]'s "
                          "too", core.name, f"one core per name; {_REBUILD}", core.loc)
            seen[core.name] = i

    def endpoint(self, path: str, e: Endpoint) -> None:
        # as trace.check_depth: a lock starts at the depth and counts to the largest value
        self.within(f"{path}.depth", e.depth, 1, self.target.max_lock_value, e.loc,
                    "a lock's value")
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
                from aiedsl.lang.names import check_name

                self.front(f"{path}[{i}].result", op.loc, check_name, op.result,
                           "acquire result", None)
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
                # a lock counts to its largest value: no end holds more elements
                self.within(f"{at}.count", op.count, 1, self.target.max_lock_value, op.loc,
                            "a lock's value")
            elif isinstance(op, Call):
                self.refers(f"{at}.kernel", op.kernel, "kernel",
                            [k.symbol for k in d.kernels], op.loc)
                for j, a in enumerate(op.args):
                    self.argument(f"{at}.args[{j}]", a, results, op)
            elif isinstance(op, BarrierWait):
                self.refers(f"{at}.barrier", op.barrier, "barrier",
                            [b.name for b in d.barriers], op.loc)
                # as wait_for_value (lang/rtp.py): 1 to the largest lock value
                self.within(f"{at}.value", op.value, 1, self.target.max_lock_value, op.loc,
                            "a lock's value")


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
                # as rt.set_barrier (lang/runtime.py): 0 to the largest lock value
                self.within(f"{at}.value", op.value, 0, self.target.max_lock_value, op.loc,
                            "a lock's value")

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


    def within(self, path: str, value: int, low: int, high: int, loc: Loc | None,
               what: str) -> None:
        """``value`` (field ``path``) is from ``low`` to ``high``, ``what`` says of what."""
        if not low <= value <= high:
            self.fail(path, f"is {value}", value, f"give {low} to {high}; {_REBUILD}", loc,
                      limit=f"{low} to {high} ({what})")

    def front(self, path: str, loc: Loc | None, check: Callable[..., object], *args: Any,
              **kwargs: Any) -> None:
        """Run one of the front end's own checks on field ``path`` (one rule, one function:
        the JSON cannot drift from what a design file may write); its DesignError comes back
        as this module's, naming the field, with the front end's limit and fix."""
        try:
            check(*args, **kwargs)
        except DesignError as e:
            if loc is not None and loc.line < 0:
                loc = None
            raise DesignError(RULE, f"{self.source}: {path}: {e.message}", loc=loc,
                              limit=e.limit, found=e.found, fix=e.fix) from None

    def herd_size(self, path: str, cols: int, rows: int, loc: Loc) -> None:
        """A herd the front end would trace (before its cells are laid out one by one)."""
        from aiedsl.lang.core import herd_traceable

        t = self.target
        if not herd_traceable(cols, rows, t):
            self.fail(f"{path}.cols", f"and rows make a {cols}x{rows} herd, which does not fit "
                      f"on {t.name}", [cols, rows], f"give a herd that fits; {_REBUILD}", loc,
                      limit=f"{t.cols} column(s) x {t.rows} core row(s)")

    def local_init(self, path: str, init: str | None, t: TensorType, loc: Loc) -> None:
        """A local's initial value is the bytes of its type, in hexadecimal, as local() writes
        them (``ndarray.tobytes().hex()``: lowercase, two digits a byte)."""
        if init is None:
            return
        if len(init) != 2 * t.nbytes or re.fullmatch(r"[0-9a-f]*", init) is None:
            self.fail(path, f"is not the {t.nbytes} bytes of a {t} buffer in hexadecimal",
                      init, f"give {2 * t.nbytes} lowercase hexadecimal digits, or null for "
                      f"none; {_REBUILD}", loc,
                      limit=f"{2 * t.nbytes} hexadecimal digits (0-9, a-f)")

    def links(self) -> None:
        """Each link's fifos are declared, as many as its kind takes, and no fifo is in two
        links: mlir-aie refuses that (``ObjectFifoLinkOp::verify``, "objectfifo cannot be in
        more than one ObjectFifoLinkOp"; the front end's :func:`~aiedsl.lang.link_chains.
        check_links_once`), and the placer finds a fifo's one link."""
        d = self.d
        fifos = [f.name for f in d.fifos]
        first: dict[str, str] = {}
        for i, link in enumerate(d.links):
            for side in ("srcs", "dsts"):
                names = getattr(link, side)
                one = (side == "srcs") != (link.kind == "join") or link.kind == "forward"
                if one and len(names) != 1 or not names:
                    self.fail(f"links[{i}].{side}", f"has {len(names)} fifo(s): a {link.kind} "
                              f"takes {'one' if one else 'one or more'}", list(names),
                              f"give the link its fifos; {_REBUILD}", link.loc,
                              limit="1 fifo" if one else "1 fifo or more")
                for j, name in enumerate(names):
                    at = f"links[{i}].{side}[{j}]"
                    self.refers(at, name, "fifo", fifos, link.loc)
                    if name in first:
                        self.fail(at, f"names fifo '{name}', which {first[name]} names too",
                                  name, f"one link per fifo (mlir-aie refuses a fifo in two "
                                  f"links); {_REBUILD}", link.loc, limit="one link per fifo")
                    first[name] = at
            for j, off in enumerate(link.offsets):
                self.at_least(f"links[{i}].offsets[{j}]", off, 0, link.loc)

    def cascades(self) -> None:
        """The cascades are those the herds' ``cascade=`` make, each core to its neighbour
        (:func:`~aiedsl.lang.to_ir.herd_cascades`): mlir-aie's ``CascadeFlowOp::verify``
        (AIEDialect.cpp) takes only adjacent core tiles."""
        from aiedsl.lang.to_ir import herd_cascades

        want = [(c.src, c.dst) for h in self.d.herds for c in herd_cascades(h)]
        have = [(c.src, c.dst) for c in self.d.cascades]
        shown = ", ".join(f"{s} -> {t}" for s, t in want) or "none"
        for i, (c, pair) in enumerate(zip(self.d.cascades, have)):
            if pair not in want or pair in have[:i]:
                self.fail(f"cascades[{i}]", f"is {pair[0]} -> {pair[1]}, which no herd's "
                          "cascade= makes" if pair not in want else
                          f"is {pair[0]} -> {pair[1]} again", {"src": pair[0], "dst": pair[1]},
                          f"give each herd its cascade direction and the cascades it makes; "
                          f"{_REBUILD}", c.loc, limit="each core to its neighbour in its herd's "
                          f"cascade direction (mlir-aie's cascade_flow joins adjacent tiles "
                          f"only): {shown}")
        missing = [p for p in want if p not in have]
        if missing:
            self.fail("cascades", f"lacks {missing[0][0]} -> {missing[0][1]}, which herd "
                      "cascade= makes", len(have), f"list every cascade the herds make; "
                      f"{_REBUILD}", self.d.loc, limit=f"the herds' cascades: {shown}")

    def defines(self) -> None:
        """The design's ``define(...)`` names and values, as ``define`` takes them: a plain
        name, and an int, a bool, a finite float or one line of text."""
        from aiedsl.lang.names import check_line, check_name

        for name, value in self.d.defines.items():
            at = _key("defines", name)
            self.front(at, self.d.loc, check_name, name, "define", None)
            if isinstance(value, float) and not math.isfinite(value):
                self.fail(at, "is not a finite number", value, "give an int, a finite float, "
                          f"a bool or a str; {_REBUILD}", self.d.loc,
                          limit="an int, a finite float, a bool or a str")
            if isinstance(value, str):
                self.front(at, self.d.loc, check_line, value, f"define '{name}' =", None)

    def kernel(self, at: str, k: Any) -> None:
        """Kernel ``k`` (field ``at``) as ``declare`` takes one, by ``declare``'s own checks:
        its source, entry, defines, cost, arguments, parameters and cascade words; and a
        reference aiedsl may import when it is aiedsl's (:mod:`aiedsl.kernels.
        library_refs`)."""
        from aiedsl.kernels.declare_checks import (
            _cascade_step, _check_cascade_words, _checked_args, _checked_params,
        )
        from aiedsl.lang.names import (
            check_argument, check_defines, check_entry, check_line, check_name, check_source,
        )

        loc, symbol = k.loc, k.symbol
        self.front(f"{at}.source", loc, check_source, k.source, symbol, None,
                   template=k.source_kind == "template")
        if k.entry is not None or k.source_kind == "template":
            self.front(f"{at}.entry", loc, check_entry, k.entry, symbol, None)
        for name, value in k.defines.items():
            self.front(_key(f"{at}.defines", name), loc, check_defines, {name: value}, symbol,
                       None)
        self.front(f"{at}.cost", loc, check_line, k.cost, f"cost of kernel '{symbol}'", None)
        for j, a in enumerate(k.args):
            self.front(f"{at}.args[{j}].name", loc, check_name, a.name, "kernel argument", None)
            self.front(f"{at}.args[{j}].name", loc, check_argument, a.name, symbol, k.entry,
                       None)
            if (a.kind == "buffer") != (a.type is not None) or \
                    a.type is not None and a.type.dtype != a.dtype:
                self.fail(f"{at}.args[{j}].type", "does not match the argument: a buffer has "
                          "the type of its dtype, a scalar none", None if a.type is None
                          else a.type.model_dump(), f"as buffer(...) and scalar(...) make "
                          f"them; {_REBUILD}", loc)
        self.front(f"{at}.args", loc, _checked_args, symbol, k.entry, k.args, None)
        for name, value in k.params.items():
            self.front(_key(f"{at}.params", name), loc, _checked_params, symbol, {name: value},
                       k.args, None)
        self.front(f"{at}.cascade_in", loc, _check_cascade_words, symbol, k.cascade_in,
                   k.cascade_out, None)
        self.front(f"{at}.cascade_step", loc, _cascade_step, symbol, k.cascade_step,
                   k.cascade_in, k.cascade_out, None)
        # the front end writes any function's module:qualname (a library kernel's bound
        # run_reference too); which of them the simulator may import is call_refs's rule
        # (aiedsl.kernels.library_refs), applied where a kernel's reference is looked up
        if _REFERENCE.match(k.reference) is None:
            self.fail(f"{at}.reference", "is no module:function the front end writes",
                      k.reference, f"give the reference's module and name; {_REBUILD}", loc,
                      limit="module:qualname of the reference's function")


def _key(path: str, key: str) -> str:
    """The JSON path of ``key`` of the object at ``path``: ``defines.N``, or
    ``defines["odd key"]`` for a key that is no plain name."""
    return f"{path}.{key}" if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key) else \
        f"{path}[{json.dumps(key)}]"
