"""The checks of :func:`~aiedsl.validate.validate` on what ties a design IR's parts
together by name: each name unique and of its form, the cores named as the front end names
them, a fifo's ends, the links between fifos and the cascades between cores.

The checks and the placer look fifos, cores and herds up by name: a name that names nothing
is refused here rather than met as a KeyError deep in a check.
"""
from __future__ import annotations

from aiedsl.ir.fifos import Endpoint
from aiedsl.ir.loc import Loc
from aiedsl.validate.fields import _REBUILD, Validator


def check_names(v: Validator) -> None:
    """Names are unique where they are looked up, and symbols where the MLIR takes them."""
    from aiedsl.lang.names import check_name, check_symbol, check_tensor_name

    d = v.d
    v.front("name", d.loc, check_name, d.name, "design name", None)
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
                v.front(at, loc, check_tensor_name, name, None)
            elif field == "kernels":
                v.front(at, loc, check_symbol, name, None)
            else:
                v.front(at, loc, check_name, name, f"{field[:-1]} name", None)
            if name in seen:
                v.fail(f"{field}[{i}].{key}", f"'{name}' is {field}[{seen[name]}]'s "
                       "too", name, f"give each of the {field} a name of its own", loc,
                       limit=f"one of the {field} per name")
            seen[name] = i
    for i, f in enumerate(d.fifos):
        if f.channel is not None:
            v.front(f"fifos[{i}].channel", f.loc, check_name, f.channel, "channel name", None)
    seen = {}
    for i, core in enumerate(d.cores):
        # as the front end names its cores (lang/core.py), before anything looks one up
        v.refers(f"cores[{i}].herd", core.herd, "herd", [h.name for h in d.herds], core.loc)
        named = f"{core.herd}[{core.index[0]},{core.index[1]}]"
        if core.name != named:
            v.fail(f"cores[{i}].name", f"is not '{named}', the name of core "
                   f"{list(core.index)} of herd '{core.herd}'", core.name,
                   f"name it '{named}' (and every reference to it); {_REBUILD}",
                   core.loc, limit="<herd>[x,y] of the core's herd and index")
        if core.name in seen:
            v.fail(f"cores[{i}].name", f"'{core.name}' is cores[{seen[core.name]}]'s "
                   "too", core.name, f"one core per name; {_REBUILD}", core.loc)
        seen[core.name] = i


def check_endpoint(v: Validator, path: str, e: Endpoint) -> None:
    """A fifo's end (field ``path``): its depth, its dimensions, and the core it is on."""
    # as trace.check_depth: a lock starts at the depth and counts to the largest value
    v.within(f"{path}.depth", e.depth, 1, v.target.max_lock_value, e.loc, "a lock's value")
    for j, dim in enumerate(e.dims):
        v.at_least(f"{path}.dims[{j}].size", dim.size, 1, e.loc)
    if e.kind == "core":
        v.refers(f"{path}.core", e.core, "core", [c.name for c in v.d.cores], e.loc)


def check_links(v: Validator) -> None:
    """Each link's fifos are declared, as many as its kind takes, and no fifo is in two
    links: mlir-aie refuses that (``ObjectFifoLinkOp::verify``, "objectfifo cannot be in
    more than one ObjectFifoLinkOp"; the front end's :func:`~aiedsl.lang.link_chains.
    check_links_once`), and the placer finds a fifo's one link."""
    d = v.d
    fifos = [f.name for f in d.fifos]
    first: dict[str, str] = {}
    for i, link in enumerate(d.links):
        for side in ("srcs", "dsts"):
            names = getattr(link, side)
            one = (side == "srcs") != (link.kind == "join") or link.kind == "forward"
            if one and len(names) != 1 or not names:
                v.fail(f"links[{i}].{side}", f"has {len(names)} fifo(s): a {link.kind} "
                       f"takes {'one' if one else 'one or more'}", list(names),
                       f"give the link its fifos; {_REBUILD}", link.loc,
                       limit="1 fifo" if one else "1 fifo or more")
            for j, name in enumerate(names):
                at = f"links[{i}].{side}[{j}]"
                v.refers(at, name, "fifo", fifos, link.loc)
                if name in first:
                    v.fail(at, f"names fifo '{name}', which {first[name]} names too",
                           name, f"one link per fifo (mlir-aie refuses a fifo in two "
                           f"links); {_REBUILD}", link.loc, limit="one link per fifo")
                first[name] = at
        for j, off in enumerate(link.offsets):
            v.at_least(f"links[{i}].offsets[{j}]", off, 0, link.loc)


def check_cascades(v: Validator) -> None:
    """The cascades are those the herds' ``cascade=`` make, each core to its neighbour
    (:func:`~aiedsl.lang.to_ir.herd_cascades`): mlir-aie's ``CascadeFlowOp::verify``
    (AIEDialect.cpp) takes only adjacent core tiles."""
    from aiedsl.lang.to_ir import herd_cascades

    want = [(c.src, c.dst) for h in v.d.herds for c in herd_cascades(h)]
    have = [(c.src, c.dst) for c in v.d.cascades]
    shown = ", ".join(f"{s} -> {t}" for s, t in want) or "none"
    for i, (c, pair) in enumerate(zip(v.d.cascades, have)):
        if pair not in want or pair in have[:i]:
            v.fail(f"cascades[{i}]", f"is {pair[0]} -> {pair[1]}, which no herd's "
                   "cascade= makes" if pair not in want else
                   f"is {pair[0]} -> {pair[1]} again", {"src": pair[0], "dst": pair[1]},
                   f"give each herd its cascade direction and the cascades it makes; "
                   f"{_REBUILD}", c.loc, limit="each core to its neighbour in its herd's "
                   f"cascade direction (mlir-aie's cascade_flow joins adjacent tiles "
                   f"only): {shown}")
    missing = [p for p in want if p not in have]
    if missing:
        v.fail("cascades", f"lacks {missing[0][0]} -> {missing[0][1]}, which herd "
               "cascade= makes", len(have), f"list every cascade the herds make; "
               f"{_REBUILD}", v.d.loc, limit=f"the herds' cascades: {shown}")
