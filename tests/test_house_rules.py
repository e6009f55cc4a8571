"""House rules a reader relies on: aiedsl's modules import one way (no module reaches itself
through imports), and every public name, and every field of the IR, says what it is.

Every import counts, also one only type checkers run (``if TYPE_CHECKING:``) and one inside a
function: each ties the two modules as much as a reader is concerned.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "aiedsl"


def import_graph(package: Path) -> dict[str, set[str]]:
    """Per module of ``package`` (dotted name), the modules of it that it imports."""
    root = package.parent
    modules: dict[str, Path] = {}
    for path in sorted(package.rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        here = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                found.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = here[:len(here) - (node.level - 1)]
                    base = ".".join(up + ([base] if base else []))
                found.add(base)
                found.update(f"{base}.{a.name}" for a in node.names)
        graph[name] = {m for m in found if m in modules and m != name}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of ``graph`` (its modules in order, the first repeated at the end), or
    None."""
    done: set[str] = set()
    path: list[str] = []
    on_path: set[str] = set()

    def visit(m: str) -> list[str] | None:
        path.append(m)
        on_path.add(m)
        for n in sorted(graph[m]):
            if n in on_path:
                return path[path.index(n):] + [n]
            if n not in done:
                cycle = visit(n)
                if cycle:
                    return cycle
        on_path.discard(path.pop())
        done.add(m)
        return None

    for m in sorted(graph):
        if m not in done:
            cycle = visit(m)
            if cycle:
                return cycle
    return None


def test_no_module_of_aiedsl_imports_itself_back() -> None:
    cycle = find_cycle(import_graph(PACKAGE))
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_no_package_of_aiedsl_imports_itself_back() -> None:
    """Imports run one way between aiedsl's packages and top modules too (aiedsl.ir, aiedsl.sim,
    aiedsl.errors, ...): ir/validate.py imported aiedsl.errors, which imports aiedsl.ir.loc, a
    cycle no module-level edge showed (type-only imports count, as above). The package root
    (aiedsl/__init__.py, which names everything lazily) is left out."""
    def unit(module: str) -> str:
        return ".".join(module.split(".")[:2])

    packages: dict[str, set[str]] = {}
    for module, imported in import_graph(PACKAGE).items():
        if module == "aiedsl":
            continue
        packages.setdefault(unit(module), set()).update(
            unit(m) for m in imported if m != "aiedsl" and unit(m) != unit(module))
    cycle = find_cycle(packages)
    assert cycle is None, "import cycle between packages: " + " -> ".join(cycle or [])


def test_the_front_end_records_below_what_writes_them() -> None:
    """The trace and its records (what tracing records) import no module that writes into
    them."""
    graph = import_graph(PACKAGE)
    front = {m for m in graph if m.startswith("aiedsl.lang.")}
    assert graph["aiedsl.lang.trace"] & front == {
        "aiedsl.lang.placement", "aiedsl.lang.records", "aiedsl.lang.tensor"}
    assert graph["aiedsl.lang.records"] & front == {"aiedsl.lang.tensor"}


def test_a_cycle_through_a_type_only_import_is_found(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from pkg.b import B\n")
    (pkg / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.c import C\nB = 1\n")
    (pkg / "c.py").write_text("def f():\n    from . import a\n")
    assert find_cycle(import_graph(pkg)) == ["pkg.a", "pkg.b", "pkg.c", "pkg.a"]


def test_every_public_name_has_a_docstring() -> None:
    """Module-level functions and classes, and their public methods and properties."""
    missing = []
    for path in sorted(PACKAGE.rglob("*.py")):
        def visit(node: ast.AST, prefix: str) -> None:
            for child in getattr(node, "body", []):
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) \
                        and not child.name.startswith("_"):
                    if ast.get_docstring(child) is None:
                        missing.append(f"{path.relative_to(PACKAGE.parent)}:{child.lineno} "
                                       f"{prefix}{child.name}")
                    if isinstance(child, ast.ClassDef):
                        visit(child, f"{prefix}{child.name}.")
        visit(ast.parse(path.read_text(), str(path)), "")
    assert not missing, "no docstring: " + ", ".join(missing)


def test_every_field_of_the_ir_has_a_docstring() -> None:
    """``design.json`` is read by other tools: each field of the IR's models says what it holds
    (the string right after the field, as pydantic and Sphinx read attribute docstrings)."""
    missing = []
    for path in sorted((PACKAGE / "ir").glob("*.py")):
        for cls in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(cls, ast.ClassDef):
                continue
            for field, after in zip(cls.body, cls.body[1:] + [None]):
                if isinstance(field, ast.AnnAssign) and isinstance(field.target, ast.Name) \
                        and not (isinstance(after, ast.Expr)
                                 and isinstance(after.value, ast.Constant)
                                 and isinstance(after.value.value, str)):
                    missing.append(f"{path.name}:{field.lineno} {cls.name}.{field.target.id}")
    assert not missing, "no docstring: " + ", ".join(missing)


def test_every_design_error_says_a_fix() -> None:
    """Each DesignError aiedsl raises carries a fix= (a user's mistake says what to do about
    it); one built from a variable is read where the variable is set."""
    missing = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
            if name != "DesignError":
                continue
            fix = next((k.value for k in node.keywords if k.arg == "fix"), None)
            spread = any(k.arg is None for k in node.keywords)  # DesignError(**fields)
            if not spread and (fix is None or isinstance(fix, ast.Constant) and not fix.value):
                missing.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}")
    assert missing == []


def test_prompt_code_is_the_users_and_numpys_pseudo_files_are_not() -> None:
    """numpy 1.x runs np.max through '<__array_function__ internals>', which was taken for the
    user's line (the minimum-versions run caught it); code typed at a prompt is the user's."""
    from aiedsl.library_code import is_users

    assert is_users("<stdin>") and is_users("<string>") and is_users("<ipython-input-3-ab>")
    assert is_users("<doctest mydesigns.make[0]>")  # a docstring's example builds a design
    assert not is_users("<__array_function__ internals>")
    assert not is_users("<frozen importlib._bootstrap>")
    assert not is_users(__import__("numpy").__file__)
    assert is_users(__file__)
