"""The one rule for a flag of the Python API (``check=``, ``compute=``, ``write=``,
``nonfinite=``, ``exact=`` ...): a bool, numpy's too, never a truth value.

Read as a truth value, ``check="no"`` compared (a str is true), ``check=None`` did not (None is
false) and ``compute="no"`` computed, each without a word, where ``Artifacts.run`` refused
``check="no"``. A module of its own, below :mod:`aiedsl.sim` and :mod:`aiedsl.lang`, so that
the run options (:mod:`aiedsl.sim.options`), ``build`` and the design language all share it.
"""

from __future__ import annotations

from aiedsl.errors import DesignError
from aiedsl.ir.loc import Loc
from aiedsl.values import as_bool, shown


def check_flag(value: object, option: str, loc: Loc, fix: str,
               rule: str = "run options") -> bool:
    """``value``, given as option ``option``, as a bool when it is one (numpy's too); else a
    DesignError (``rule``) at ``loc``, with ``fix``.

    >>> check_flag(True, "check", Loc(file="d.py", line=3), "give check=True")
    True
    """
    flag = as_bool(value)
    if flag is None:
        raise DesignError(rule, f"{option}={shown(value)}", loc=loc, limit="True or False",
                          found=shown(value), fix=fix)
    return flag
