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

This module holds :func:`validate` and the order its checks run in (of several mistakes, the
first met is the one named), with the few checks of each part's counts and references that
need nothing more; the rest are in sibling modules, which import
:mod:`aiedsl.validate.fields` (the shared :class:`~aiedsl.validate.fields.Validator`
and the checks of one field) and not each other:

- :mod:`aiedsl.validate.walk`: every location, tensor type and dtype, wherever it is;
- :mod:`aiedsl.validate.names`: names, a fifo's ends, links and cascades;
- :mod:`aiedsl.validate.programs`: the cores' programs and the runtime sequence;
- :mod:`aiedsl.validate.kernels`: the kernels and the design's defines;
- :mod:`aiedsl.validate.device`: the device, and a placed design's tiles.
"""
from __future__ import annotations

import json
from typing import NoReturn

from aiedsl.errors import DesignError
from aiedsl.ir.design import IR_VERSION, Design
from aiedsl.ir.loc import Loc
from aiedsl.validate.device import check_device, check_placed
from aiedsl.validate.fields import _REBUILD, RULE, Validator
# re-exported: aiedsl.design_json imports _shown from here (with RULE and _REBUILD), and
# MAX_LINE is one of this module's public names
from aiedsl.validate.fields import _shown as _shown
from aiedsl.validate.kernels import check_design_defines, check_kernel
from aiedsl.validate.names import check_cascades, check_endpoint, check_links, check_names
from aiedsl.validate.programs import check_ops, check_results, check_runtime
from aiedsl.validate.walk import MAX_LINE as MAX_LINE
from aiedsl.validate.walk import walk_design


def validate(d: Design, source: str = "the design IR", *, placed: bool = False) -> Design:
    """``d`` itself when it keeps the rules every IR the front end makes keeps (its version,
    its device, its names unique and every name it refers to declared, its counts, depths,
    sizes and indices in range, its dtypes known, its lines not negative); with ``placed``,
    also placed, every tile it uses decided and of its kind. Otherwise a DesignError (rule
    ``design IR``) naming ``source`` (where ``d`` came from), the field and the value.

    What it leaves to :func:`~aiedsl.checks.check_design`: whether the design is right (its
    balance, hangs, DMA patterns, resources), which an IR the front end made may or may not
    be, and which the checks say in the design's terms."""
    _run(Validator(d, source), placed)
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
        fix="upgrade aiedsl to one that reads it (a newer aiedsl wrote it)"
        if isinstance(version, int) and not isinstance(version, bool) and version > IR_VERSION
        else "rebuild the design with this aiedsl (aiedsl build) for a design.json it reads")


def _run(v: Validator, placed: bool) -> None:
    """One walk over ``v``'s design IR, refusing the first field that breaks a rule. The
    order counts (which mistake of several is named): the version and device first (the rest
    reads the device's target), names before anything looks one up, the tiles of a placed
    design last."""
    d = v.d
    if d.ir_version != IR_VERSION:
        _version_error(v.source, True, d.ir_version, d.loc)
    check_device(v, d)
    from aiedsl.targets import get_target

    v.target = get_target(d.device)
    walk_design(v)
    check_names(v)
    check_design_defines(v)
    for i, t in enumerate(d.tensors):
        if t.index != i:
            v.fail(f"tensors[{i}].index", f"is {t.index}, not its position {i}",
                   t.index, f"give it {i}: the runtime sequence takes its tensors in "
                   "this order", t.loc)
    top = v.target.max_lock_value
    for i, f in enumerate(d.fifos):
        at = f"fifos[{i}]"
        # a repeat multiplies the memtile's producer lock (checks/repeat.py): as
        # trace.check_repeat, 1 to the largest lock value
        v.within(f"{at}.repeat", f.repeat, 1, top, f.loc, "a lock's value")
        check_endpoint(v, f"{at}.producer", f.producer)
        if not f.consumers:
            v.fail(f"{at}.consumers", "is empty: a fifo has one consumer or more", [],
                   f"give the fifo's consumers; {_REBUILD}", f.loc,
                   limit="1 consumer or more")
        for j, c in enumerate(f.consumers):
            check_endpoint(v, f"{at}.consumers[{j}]", c)
    check_links(v)
    for i, h in enumerate(d.herds):
        v.at_least(f"herds[{i}].cols", h.cols, 1, h.loc)
        v.at_least(f"herds[{i}].rows", h.rows, 1, h.loc)
        v.herd_size(f"herds[{i}]", h.cols, h.rows, h.loc)
    herds = {h.name: h for h in d.herds}
    memory = v.target.core.memory
    for i, core in enumerate(d.cores):
        at = f"cores[{i}]"
        v.refers(f"{at}.herd", core.herd, "herd", list(herds), core.loc)
        h = herds[core.herd]
        x, y = core.index
        if not (0 <= x < h.cols and 0 <= y < h.rows):
            v.fail(f"{at}.index", f"is {list(core.index)}, outside herd '{h.name}' of "
                   f"{h.cols}x{h.rows}", list(core.index), "give the core's (x, y) in "
                   f"its herd; {_REBUILD}", core.loc,
                   limit=f"0 <= x < {h.cols}, 0 <= y < {h.rows}")
        # as @herd's stack=: bytes from 0 to the core's data memory
        v.within(f"{at}.stack", core.stack, 0, memory, core.loc,
                 "bytes of the core's data memory")
        results = check_results(v, f"{at}.body", core.body, {})
        check_ops(v, f"{at}.body", core.body, results)
    for i, k in enumerate(d.kernels):
        v.at_least(f"kernels[{i}].cycles", k.cycles, 0, k.loc)
        v.at_least(f"kernels[{i}].ops", k.ops, 0, k.loc)
        for j, count in enumerate(k.op_counts):
            v.at_least(f"kernels[{i}].op_counts[{j}].ops", count.ops, 0, k.loc)
        check_kernel(v, f"kernels[{i}]", k)
    check_runtime(v)
    cores = [c.name for c in d.cores]
    for i, r in enumerate(d.rtps):
        v.refers(f"rtps[{i}].core", r.core, "core", cores, r.loc)
    users: list[tuple[str, tuple[str, ...], Loc]] = [
        *((f"locals[{i}]", b.cores, b.loc) for i, b in enumerate(d.locals)),
        *((f"barriers[{i}]", b.cores, b.loc) for i, b in enumerate(d.barriers))]
    for at, names, loc in users:
        for j, name in enumerate(names):
            v.refers(f"{at}.cores[{j}]", name, "core", cores, loc)
    for i, b in enumerate(d.barriers):
        v.within(f"barriers[{i}].init", b.init, 0, top, b.loc, "a lock's value")
    for i, buf in enumerate(d.locals):
        v.local_init(f"locals[{i}].init", buf.init, buf.type, buf.loc)
    for i, cascade in enumerate(d.cascades):
        v.refers(f"cascades[{i}].src", cascade.src, "core", cores, cascade.loc)
        v.refers(f"cascades[{i}].dst", cascade.dst, "core", cores, cascade.loc)
    check_cascades(v)
    if placed:
        check_placed(v)
