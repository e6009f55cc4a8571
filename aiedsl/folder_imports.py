"""The import statement of one load of a design file: a module or package in the design's
folder is that folder's, for this load alone, whatever ``sys.modules`` holds of that name.

A design file imports the modules beside it as ``python design.py`` would (its folder first on
the import path). Done through ``sys.path`` and the one ``sys.modules`` of the process, two
designs in two folders with a ``helpers.py`` each shared the first one imported: loaded from
two threads, a load got the other folder's helpers (its reference too, so a wrong result read
as PASS); a notebook that had imported a ``helpers`` of its own gave both designs that one; and
a design file that imported its helpers, then loaded a design of another folder, gave the inner
design its own. A lock around the loads with ``sys.modules`` set aside for each would hang a
design file that loads designs on other threads and waits for them (which it may), and would
show another thread of the process (a notebook's) the design's modules meanwhile.

So each load has an :class:`FolderImports`: the design module's ``__builtins__`` is a copy of
Python's whose ``__import__`` looks a name's top-level module up in the design's folder first;
found there, it is loaded for this load alone (once, then taken from the load's own table),
with the same ``__builtins__``, so its own imports from the folder are the load's as well.
Nothing global changes but ``sys.modules`` entries under names no one else uses
(``__aiedsl_design_<n>__.helpers``, registered while the load runs: ``dataclasses`` and
``pickle`` look a class's module up there), and every other name is imported as Python imports
it. Functions of the design and of those modules keep the load's ``__builtins__``: one that
imports at call time (a reference's ``import helpers`` in its body) gets the module its load
imported, or loads it from the folder then, for that load.
"""

from __future__ import annotations

import builtins
import importlib.util
import os
import sys
import threading
import types
from importlib.machinery import ModuleSpec
from typing import Any, Mapping, Sequence

from aiedsl.library_code import is_library


class FolderImports:
    """The imports of one load of the design file in ``folder`` (its resolved path), whose
    module is named ``module`` (``__aiedsl_design_<n>__``)."""

    def __init__(self, folder: str, module: str, design: str = "") -> None:
        self.folder = folder
        self.module = module
        self.design = design
        """The design file's own path: never one of its folder's modules (a design named
        ``aiedsl.py`` imports aiedsl, not itself)."""
        self.prefix = module + "."
        """The folder's modules are named under the design's module (``helpers`` as
        ``__aiedsl_design_7__.helpers``): a name no other load, nor the process, uses."""
        self.modules: dict[str, types.ModuleType] = {}
        """The folder's modules this load imported, by the name the design wrote
        (``helpers``, ``pkg.sub``)."""
        self._ours: dict[str, bool] = {}
        """Each top-level name imported so far: is it the folder's (loaded here)? Decided once
        per load, so every import of a name in one load gets the same module."""
        self._lock = threading.RLock()
        """Held while a module of the folder is created and run: two threads of this load
        (a reference importing at call time from a thread pool) run it once. Reentrant for a
        module that imports another of the folder."""
        self._held: list[str] | None = []
        """The ``sys.modules`` names registered while the load runs (taken out at its end by
        :meth:`close`); None once it ended: a module loaded later is registered while it runs
        only."""
        self.builtins: dict[str, Any] = {**vars(builtins), "__import__": self.import_}
        """The ``__builtins__`` of the design module and of the folder's modules."""

    def import_(self, name: str, globals: Mapping[str, Any] | None = None,
                locals: Mapping[str, Any] | None = None, fromlist: Sequence[str] = (),
                level: int = 0) -> types.ModuleType:
        """``__import__`` for code of this load: the folder's modules from the folder, for
        this load; any other name as Python imports it."""
        absolute = self._relative(name, globals, level) if level else name
        if absolute is None or not self._is_ours(absolute.partition(".")[0]):
            return builtins.__import__(name, globals, locals, fromlist, level)
        module = self._load(absolute)
        if fromlist:
            if hasattr(module, "__path__"):  # `from pkg import sub`: sub may be a module
                self._from(module, absolute, fromlist)
            return module
        if level == 0:  # `import a.b` binds a
            return self.modules[absolute.partition(".")[0]]
        cut = len(name) - len(name.partition(".")[0])  # as importlib's __import__ does
        return self.modules[absolute[:len(absolute) - cut]] if name else module

    def close(self) -> None:
        """The load ended: its modules leave ``sys.modules`` (the design keeps what it holds
        of them; a function of it that imports later still gets them from :attr:`modules`)."""
        with self._lock:
            held, self._held = self._held or [], None
        for name in held:
            sys.modules.pop(name, None)

    # -- helpers ------------------------------------------------------------------------------

    def _relative(self, name: str, globals: Mapping[str, Any] | None,
                  level: int) -> str | None:
        """The module ``from .name import ...`` names in a module of this load's folder,
        without the load's prefix (``pkg.sub``); None for code that is not (Python then
        answers as it does, a design file having no package)."""
        package = (globals or {}).get("__package__")
        if not isinstance(package, str) or not (
                package == self.module or package.startswith(self.prefix)):
            return None
        package = package[len(self.prefix):]
        if not package:  # a plain module beside the design, as `python design.py` runs it
            raise ImportError("attempted relative import with no known parent package")
        bits = package.rsplit(".", level - 1)
        if len(bits) < level:
            raise ImportError("attempted relative import beyond top-level package")
        return f"{bits[0]}.{name}" if name else bits[0]

    def _is_ours(self, top: str) -> bool:
        """Is top-level module ``top`` the design folder's: a module or package there (a
        namespace package only when no module of that name is found elsewhere, as Python's
        import path ranks them), other than the design file itself, a name the process
        already runs from aiedsl, Python or an installed package, and the one the process
        already imported from that very file (the design then shares it: aiedsl's own
        package when a design sits at aiedsl's project root, a notebook's module of that
        folder)."""
        ours = self._ours.get(top)
        if ours is None:
            ours = self._ours[top] = self._decide(top)
        return ours

    def _decide(self, top: str) -> bool:
        spec = find_spec(self.prefix + top, [self.folder])
        if spec is None:
            return False
        if spec.loader is None:  # a folder without __init__.py: a namespace package's part
            try:
                elsewhere = importlib.util.find_spec(top)
            except (ImportError, ValueError):
                elsewhere = None
            if elsewhere is not None and elsewhere.loader is not None:
                return False
        if spec.origin and self.design and os.path.exists(spec.origin) and \
                os.path.samefile(spec.origin, self.design):
            return False
        loaded = sys.modules.get(top)
        file = getattr(loaded, "__file__", None)
        origin = getattr(getattr(loaded, "__spec__", None), "origin", None)
        if loaded is not None and ((isinstance(file, str) and is_library(file))
                                   or origin in ("built-in", "frozen")):
            # aiedsl itself, Python's or an installed package's module, which the process
            # already runs: an aiedsl/ or numpy.py beside the design (a clone's root, with
            # aiedsl installed from another) would make a second aiedsl, whose types the
            # first refuses; as before loads had their own imports, the process's wins
            return False
        if isinstance(file, str) and spec.origin and os.path.exists(file) and \
                os.path.samefile(file, spec.origin):
            return False
        return True

    def _load(self, name: str) -> types.ModuleType:
        """The folder's module ``name`` (``helpers``, ``pkg.sub``) for this load: taken from
        :attr:`modules`, or found (a submodule on its package's path), created and run."""
        with self._lock:
            module = self.modules.get(name)
            if module is not None:
                return module
            parent, _, child = name.rpartition(".")
            above = self._load(parent) if parent else None
            where: list[str] = [self.folder]
            if above is not None:
                path = getattr(above, "__path__", None)
                if path is None:
                    raise ModuleNotFoundError(
                        f"No module named '{name}'; '{parent}' is not a package", name=name)
                where = list(path)
            spec = find_spec(self.prefix + name, where)
            if spec is None:
                raise ModuleNotFoundError(f"No module named '{name}'", name=name)
            if spec.loader is None and above is None:
                # a namespace package spans every folder of the import path that has a part
                # of it, as Python joins them (a reviewer: one on PYTHONPATH was left out)
                parts = list(spec.submodule_search_locations or [])
                spec.submodule_search_locations = parts + [
                    p for p in _namespace_parts(name) if p not in parts]
            module = importlib.util.module_from_spec(spec)
            module.__dict__["__builtins__"] = self.builtins  # its own imports: this load's
            self.modules[name] = module  # before it runs: a cycle of imports meets it, as
            sys.modules[spec.name] = module  # Python's does
            try:
                if spec.loader is not None:
                    spec.loader.exec_module(module)
            except BaseException:
                del self.modules[name]
                sys.modules.pop(spec.name, None)
                raise
            if self._held is not None:
                self._held.append(spec.name)
            else:
                sys.modules.pop(spec.name, None)
            if above is not None:
                setattr(above, child, module)  # `import pkg.sub` then reads pkg.sub
            return module

    def _from(self, module: types.ModuleType, name: str, fromlist: Sequence[str]) -> None:
        """``from name import a, b``: each of ``fromlist`` that ``module`` (a package) does
        not hold is its submodule, when there is one (else the import statement says the
        name cannot be imported, as Python's does)."""
        for item in fromlist:
            if item == "*":
                self._from(module, name, [n for n in getattr(module, "__all__", ())
                                          if isinstance(n, str) and n != "*"])
            elif not hasattr(module, item):
                try:
                    self._load(f"{name}.{item}")
                except ModuleNotFoundError as e:
                    if e.name != f"{name}.{item}":
                        raise


def find_spec(name: str, where: Sequence[str]) -> ModuleSpec | None:
    """The spec of module ``name`` (its last part looked up) in the folders ``where``, as
    ``PathFinder.find_spec`` finds it, except that a namespace package (a folder without
    ``__init__.py``) gets its parts as a plain list: importlib's own kind reads its parent's
    ``__path__`` from ``sys.modules``, and the parent of a folder's module is the design module
    (no package: a design's ``helpers/`` without ``__init__.py`` failed to import, where
    ``python design.py`` imports it) or a package that leaves ``sys.modules`` after the load."""
    parts: list[str] = []
    for entry in where:
        finder = _finder(entry)
        spec = finder.find_spec(name) if finder is not None else None
        if spec is None:
            continue
        if spec.loader is not None:
            return spec
        parts += list(spec.submodule_search_locations or [])
    if not parts:
        return None
    spec = ModuleSpec(name, None, is_package=True)
    spec.submodule_search_locations = parts
    return spec


def _finder(entry: str) -> Any:
    """The path-entry finder of folder ``entry``, as the import system makes and keeps it
    (``sys.path_importer_cache``, else the first of ``sys.path_hooks`` that takes it)."""
    finder = sys.path_importer_cache.get(entry)
    if finder is not None:
        return finder
    for hook in sys.path_hooks:
        try:
            return hook(entry)
        except ImportError:
            continue
    return None


def _namespace_parts(name: str) -> list[str]:
    """The folders of top-level namespace package ``name`` on the import path
    (``sys.path``); none when ``name`` is a module or a package there."""
    found = find_spec(name, [p or os.getcwd() for p in sys.path])
    if found is None or found.loader is not None:
        return []
    return list(found.submodule_search_locations or [])
