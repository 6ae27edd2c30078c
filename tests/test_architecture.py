"""The shape of the package holds: layers import downward only, no import cycle, one place for
paths, and every module has a test of its own package (or a documented end-to-end test)."""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "holon"

# Lower number = lower layer. A package may import itself and any lower layer, never a higher one
# nor a sibling of the same rank. `base` is the top-level modules (holon/clock.py, errors.py, ...).
RANK = {
    "base": 0,
    "store": 1,
    "model": 2,
    "home": 3,
    "agent": 4,
    "sandbox": 4,
    "tasks": 5,
    "context": 5,
    "patch": 5,
    "memory": 5,
    "feed": 5,
    "prompt": 6,
    "tools": 6,
    "runtime": 7,
    "ops": 8,
    "cli": 9,
}
# providers stand beside the stack: they use model, store and base; runtime, ops and cli use them.
PROVIDERS_MAY_IMPORT = {"providers", "model", "store", "base"}
MAY_IMPORT_PROVIDERS = {"providers", "runtime", "ops", "cli"}
MODEL_MAY_IMPORT = {"model"}  # the records are plain data: no other holon package, not even base


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(REPO).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


MODULES = _modules()


def layer(module: str) -> str:
    parts = module.split(".")
    if module == "holon.__main__":
        return "cli"  # the entry point
    if (
        len(parts) == 1
        or f"holon.{parts[1]}" not in MODULES
        or not MODULES[f"holon.{parts[1]}"].name == "__init__.py"
    ):
        return "base"
    return parts[1]


def imports_of(module: str, path: Path) -> set[str]:
    """Every holon module `module` imports, at module level or inside functions."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([node.module] if node.module else []))
            names = [base] + [f"{base}.{a.name}" for a in node.names]
        else:
            continue
        for name in names:
            while name and name not in MODULES:
                name = name.rpartition(".")[0]
            if name and name != module and name != "holon":
                found.add(name)
            elif name == "holon" and isinstance(node, ast.Import):
                found.add("holon")
    return found


GRAPH = {m: imports_of(m, p) for m, p in MODULES.items()}


def allowed(src: str, dst: str) -> bool:
    a, b = layer(src), layer(dst)
    if a == b:
        return True
    if a == "model":
        return b in MODEL_MAY_IMPORT
    if a == "providers":
        return b in PROVIDERS_MAY_IMPORT
    if b == "providers":
        return a in MAY_IMPORT_PROVIDERS
    return RANK[b] < RANK[a]


def violations(graph: dict[str, set[str]]) -> list[str]:
    return sorted(
        f"{src} ({layer(src)}) imports {dst} ({layer(dst)})"
        for src, targets in graph.items()
        for dst in targets
        if not allowed(src, dst)
    )


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_every_package_has_a_layer():
    packages = {layer(m) for m in MODULES} - {"providers"}
    assert packages <= set(RANK), f"add a rank for {sorted(packages - set(RANK))}"


def test_layers_import_downward_only():
    assert violations(GRAPH) == []


def test_no_import_cycle():
    assert cycles(GRAPH) == []


def test_the_checks_catch_an_upward_import_and_a_cycle():
    """The two checks above can fail: an agent module importing the runtime,
    and a two-module loop."""
    graph = {**GRAPH, "holon.agent.handle": GRAPH["holon.agent.handle"] | {"holon.runtime.tick"}}
    assert "holon.agent.handle (agent) imports holon.runtime.tick (runtime)" in violations(graph)
    graph = {
        **GRAPH,
        "holon.store.queue": GRAPH["holon.store.queue"] | {"holon.store.atomic"},
        "holon.store.atomic": GRAPH["holon.store.atomic"] | {"holon.store.queue"},
    }
    assert ["holon.store.atomic", "holon.store.queue"] in cycles(graph)
    assert not allowed("holon.model.records", "holon.clock")
    assert not allowed("holon.tasks.results", "holon.tools.envelope")
    assert not allowed("holon.tools.base", "holon.providers.runner")


def _strings(tree: ast.AST) -> list[ast.Constant]:
    docstrings = {
        id(n.body[0].value)
        for n in ast.walk(tree)
        if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and n.body
        and isinstance(n.body[0], ast.Expr)
        and isinstance(n.body[0].value, ast.Constant)
    }
    return [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docstrings
    ]


def test_home_paths_are_decided_in_one_module():
    """`.holon` is spelled, and a home is found from a path by climbing parents,
    only in home/layout.py."""
    offenders = []
    for module, path in MODULES.items():
        if module == "holon.home.layout":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in _strings(tree):
            if re.search(r"(^|/)\.holon(/|$)", node.value):
                offenders.append(f"{module}:{node.lineno} {node.value[:40]!r}")
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Subscript)
                and isinstance(node.value, ast.Attribute)
                and node.value.attr == "parents"
            ):
                offenders.append(f"{module}:{node.lineno} .parents[...]")
    assert offenders == []


# -- every module has a test --------------------------------------------------------------------

E2E_README = REPO / "tests" / "e2e" / "README.md"


def _test_dir(module: str) -> Path:
    return REPO / "tests" / layer(module)


def _tested_modules() -> dict[str, set[str]]:
    """module -> test files of its own package that import it."""
    out: dict[str, set[str]] = defaultdict(set)
    for path in (REPO / "tests").rglob("test_*.py"):
        for module in imports_of("tests", path):
            if path.parent == _test_dir(module):
                out[module].add(path.name)
    return out


def _documented_e2e() -> dict[str, str]:
    """`holon.x.y` -> `test_file.py::test_name` from the table in tests/e2e/README.md."""
    rows = re.findall(
        r"^\|\s*`(holon[\w.]*)`\s*\|\s*`([\w/]+\.py::\w+)`", E2E_README.read_text(), re.M
    )
    return dict(rows)


def test_every_module_is_exercised_by_a_test():
    tested = _tested_modules()
    documented = _documented_e2e()
    missing = [
        m
        for m, path in MODULES.items()
        if path.name != "__init__.py" and not tested.get(m) and m not in documented
    ]
    assert missing == [], (
        "each needs a test in its package's test directory or a row in tests/e2e/README.md"
    )


@pytest.mark.parametrize("module, test", sorted(_documented_e2e().items()))
def test_documented_end_to_end_tests_exist(module, test):
    assert module in MODULES, f"{module} is not a module"
    file, _, name = test.partition("::")
    path = REPO / "tests" / file
    assert path.is_file() and re.search(rf"^def {name}\(", path.read_text(), re.M), f"no {test}"
