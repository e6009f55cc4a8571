"""The parts of a memtile link a fifo method makes (``f.split``, ``f.join``): their types, the
layouts each takes, and where they sit in the parent's element. Plain checks of what the design
wrote, apart from the fifo handles (:mod:`aiedsl.lang.fifo`) that call them."""

from __future__ import annotations

import itertools
from typing import Sequence

from aiedsl.errors import DesignError
from aiedsl.ir.loc import Loc
from aiedsl.ir.types import TensorType
from aiedsl.lang.records import FifoRecord
from aiedsl.targets import TargetModel
from aiedsl.values import as_int, shown

DimsSpec = Sequence[tuple[int, int]] | None
"""A layout as a design writes it: ``[(size, stride), ...]``, outermost first, or None."""


def per_part(spec: DimsSpec | Sequence[DimsSpec], n: int, link: str, what: str,
              loc: Loc) -> list[DimsSpec]:
    """A split's layout for each of its ``n`` parts: ``spec`` for all of them, or ``spec``'s own
    entries when it lists one layout (a list of pairs, or None) per part. A layout's entries are
    (size, stride) tuples, so a list of lists cannot be one layout; a list of lists of numbers
    (one layout with its pairs written as lists) is refused saying how it was read."""
    if not isinstance(spec, (list, tuple)) or not spec or \
            not all(d is None or isinstance(d, list) for d in spec):
        return [spec] * n  # type: ignore[list-item]
    if all(isinstance(d, list) and d and all(_is_int(v) for v in d) for d in spec):
        # Lists of numbers: one layout with its (size, stride) pairs written as lists, or per-part
        # layouts whose entries are not pairs. A list of lists is read as per-part layouts (their
        # entries are tuples), so say so and show both forms rather than report an entry.
        one = "[" + ", ".join("(" + ", ".join(str(v) for v in d) + ")" for d in spec) + "]"
        per = "[" + ", ".join(["[(size, stride), ...]"] + ["None"] * (n - 1)) + "]"
        raise DesignError(
            "dma dims", f"{link}: its {what} is a list of lists, "
            f"so it was read as {len(spec)} per-part layout{'' if len(spec) == 1 else 's'}, "
            "but their entries are numbers, not (size, stride) pairs", loc=loc,
            limit="one layout for every part, a list of (size, stride) tuples; or one layout "
            f"(or None) per part, a list of {n} such lists", found=repr(spec),
            fix=f"for one layout for every part write {what}={one} (tuples, not lists); for one "
            f"per part, e.g. {what}={per}")
    if len(spec) != n:
        raise DesignError("dma dims", f"{link} has {len(spec)} "
                          f"per-part {what} layout{'' if len(spec) == 1 else 's'}", loc=loc,
                          limit=f"one layout (or None) per part: {n}", found=str(len(spec)),
                          fix=f"give {n} layouts, or one layout [(size, stride), ...] for all")
    return list(spec)  # type: ignore[arg-type]


def _is_int(v: object) -> bool:
    return as_int(v) is not None


def back_to_back(types: Sequence[TensorType]) -> list[int]:
    """Element offsets of parts laid one after another, in order."""
    return [0, *itertools.accumulate(t.numel for t in types)][:-1]


def part_types(parent: FifoRecord, parts: Sequence[TensorType] | int, target: TargetModel,
               loc: Loc, verb: str = "split") -> list[TensorType]:
    """The types of the parts fifo ``parent`` is split into (or joined from: ``verb``), equal
    parts of its element for a count."""
    count = as_int(parts)  # numpy's integers too, as a plain int
    past = "split" if verb == "split" else "joined"
    if count is not None:
        parts = count
    elif not isinstance(parts, (list, tuple)):
        raise DesignError(verb, f"fifo '{parent.name}' {past} {_from(verb)} {shown(parts)}",
                          loc=loc, limit="a number of equal parts, or a list of part types",
                          found=shown(parts), fix=f"write e.g. f.{verb}(2)")
    if isinstance(parts, int):
        if parts < 1 or parent.elem.numel % parts:
            raise DesignError(
                verb, f"fifo '{parent.name}' ({parent.elem}) does not {verb} "
                f"{_from(verb)} {parts} equal parts", loc=loc,
                found=f"{parent.elem.numel} elements / {parts}",
                fix="give the part types explicitly, or a count that divides the element")
        n = parts
    else:
        n = len(parts)
        if n == 0:  # it made a link of no parts, refused later with an empty found:
            raise DesignError(verb, f"fifo '{parent.name}' {past} {_from(verb)} no parts",
                              loc=loc, limit="a number of equal parts, or a list of part types: "
                              "one or more", found=shown(parts), fix=f"write e.g. f.{verb}(2), "
                              f"or list the parts' types: f.{verb}([Tensor["
                              f"{parent.elem.numel // 2}, {parent.elem.dtype}]] * 2)")
    most = target.max_fifos
    if n > most:  # before one fifo per part is made
        raise DesignError(verb, f"fifo '{parent.name}' {past} {_from(verb)} {n} parts", loc=loc,
                          limit=f"at most {most} parts: more fifos than "
                          f"{target.name} has DMA channels", found=str(n),
                          fix=f"{verb} {_from(verb)} as many parts as there are cores "
                          f"{'reading' if verb == 'split' else 'writing'} them")
    if isinstance(parts, int):
        return [TensorType(shape=(parent.elem.numel // parts,), dtype=parent.elem.dtype)] * parts
    return list(parts)


def _from(verb: str) -> str:
    return "into" if verb == "split" else "from"
