"""The storage layer stands below what uses it: read from the source, without importing it.

Every import statement counts, at the top of a module or inside a function (a function's import
runs too, only later), except those under ``if TYPE_CHECKING:``. Importing ``a.b.c`` also runs
``a/__init__.py`` and ``a/b/__init__.py``, so a package's ``__init__`` counts as imported. The
one exception: ``litecrawl/__init__.py``'s own functions, which load the public API on first
use of a name (``__getattr__``), not when a submodule is imported.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"
STORE = "litecrawl.store"


def _modules() -> dict[str, Path]:
    found = {}
    for path in (SRC / "litecrawl").rglob("*.py"):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imported_names(name: str) -> set[str]:
    """Every dotted name an import statement of module ``name`` brings in."""
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    names: set[str] = set()

    def visit(node: ast.AST) -> None:
        if name == "litecrawl" and isinstance(node, ast.FunctionDef):
            return
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            names.add(module)
            names.update(f"{module}.{alias.name}" for alias in node.names)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    return names


@cache
def imports(name: str) -> frozenset[str]:
    """The litecrawl modules importing ``name`` runs directly (with their packages), and the
    top-level names of other distributions it imports."""
    found: set[str] = set()
    for dotted in _imported_names(name):
        parts = dotted.split(".")
        if parts[0] != "litecrawl":
            found.add(parts[0])
            continue
        for i in range(1, len(parts) + 1):
            prefix = ".".join(parts[:i])
            if prefix in MODULES:
                found.add(prefix)
    found.discard(name)
    return frozenset(found)


@cache
def closure(name: str) -> frozenset[str]:
    """The litecrawl modules importing ``name`` (and its packages) may run, transitively."""
    seen: set[str] = set()
    todo = [name, *_packages(name)]
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        todo.extend(m for m in imports(current) if m in MODULES)
    return frozenset(seen - {name})


def _packages(name: str) -> list[str]:
    parts = name.split(".")
    return [p for i in range(1, len(parts)) if (p := ".".join(parts[:i])) in MODULES]


def _in_store(name: str) -> bool:
    return name == STORE or name.startswith(STORE + ".")


STORE_MODULES = sorted(m for m in MODULES if _in_store(m))


def test_the_walk_sees_the_store() -> None:
    """The checks below look at something: the store's modules are found and read."""
    assert {f"{STORE}.backends", f"{STORE}.sqlite.frontier", f"{STORE}.postgres.frontier"} <= set(
        STORE_MODULES
    )
    assert f"{STORE}.queue" in closure(f"{STORE}.sqlite.frontier")
    assert "psycopg" in imports(f"{STORE}.postgres.connection")


def _leaf(name: str) -> bool:
    """A store module that imports no other litecrawl module (``states.py``: the page states
    Frontera's API in ``strategy.base`` shares): used from anywhere, it cannot close a cycle."""
    return not {m for m in imports(name) if m in MODULES} - {"litecrawl", STORE}


def test_the_store_imports_nothing_that_uses_it() -> None:
    """No module the store imports uses the store (but for its leaves): no cycle through it."""
    assert _leaf(f"{STORE}.states")
    above: dict[str, list[str]] = {}
    for module in STORE_MODULES:
        for other in closure(module):
            if other in MODULES and not _in_store(other):
                back = sorted(m for m in closure(other) if _in_store(m) and not _leaf(m))
                if back:
                    above.setdefault(f"{module} -> {other}", back)
    assert above == {}


def test_no_store_module_is_in_an_import_cycle() -> None:
    cycles = [m for m in STORE_MODULES if m in closure(m)]
    assert cycles == []


def test_no_module_of_the_package_is_in_an_import_cycle() -> None:
    """Not only the store's: a cycle anywhere makes a module's import depend on which module
    was imported first."""
    assert len(MODULES) > 100  # the walk found the package
    cycles = sorted(m for m in MODULES if m in closure(m))
    assert cycles == []


def test_backends_import_neither_each_other_nor_the_openers() -> None:
    for module in STORE_MODULES:
        reached = closure(module)
        assert f"{STORE}.backends" not in reached or module == f"{STORE}.backends"
        if module.startswith(f"{STORE}.sqlite"):
            assert not any(m.startswith(f"{STORE}.postgres") for m in reached), module
            assert "psycopg" not in {i for m in reached | {module} for i in _all(m)}, module
        if module.startswith(f"{STORE}.postgres"):
            assert not any(m.startswith(f"{STORE}.sqlite") for m in reached), module


def _all(name: str) -> frozenset[str]:
    return imports(name) if name in MODULES else frozenset()


def test_the_dashboard_reads_need_no_web_stack() -> None:
    """Reading a database for the dashboard loads neither aiohttp nor Jinja2 (the web app's
    modules are the dashboard's, not the store's)."""
    for module in (f"{STORE}.sqlite.dashboard", f"{STORE}.postgres.dashboard"):
        reached = closure(module) | {module}
        foreign = {i for m in reached for i in _all(m)} - set(MODULES)
        assert not any(m.startswith("litecrawl.serve") for m in reached), module
        assert not foreign & {"aiohttp", "jinja2"}, module
