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
    "mcp": 5,
    "prompt": 6,
    "tools": 6,
    "runtime": 7,
    "ops": 8,
    "console": 9,
    "cli": 10,
}
# providers stand beside the stack: they use model, store and base; runtime, ops and cli use them.
PROVIDERS_MAY_IMPORT = {"providers", "model", "store", "base"}
MAY_IMPORT_PROVIDERS = {"providers", "runtime", "ops", "cli"}
MODEL_MAY_IMPORT = {"model"}  # the records are plain data: no other holon package, and of base
MODEL_MAY_IMPORT_BASE = {"holon.vocab"}  # only the vocabulary (which imports nothing)


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
        return b in MODEL_MAY_IMPORT or dst in MODEL_MAY_IMPORT_BASE
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
    assert allowed("holon.model.records", "holon.vocab")
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


def test_the_vocabulary_imports_nothing():
    """holon.vocab is what every layer spells its words with, the records included: it imports
    nothing, not even the standard library, so the lightest path can take it."""
    tree = ast.parse(MODULES["holon.vocab"].read_text(encoding="utf-8"))
    assert [n.lineno for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))] == []


# -- the shape holds: function size, where agents are built, READMEs ----------------------------

MAX_FUNCTION_LINES = 60
# functions longer than MAX_FUNCTION_LINES today, each with why; this list only shrinks (an entry
# that no longer applies fails the check too, so that it is removed with the split)
LONG_FUNCTIONS = {
    "holon.providers.runner:run_round": "retries and fallbacks over the model chain, recording "
    "each attempt, in one loop",
    "holon.agent.admission:admit": "admission's checks and writes in order (body, profile, "
    "seal, queue, ledger, event), read top to bottom",
    "holon.tasks.ops:send_input": "TaskInput: every refusal, the write, and following the "
    "output until its expectation or timeout",
    "holon.providers.errors:from_exception": "one table of SDK exceptions to failure kinds, "
    "statuses and retryability",
    "holon.context.compaction:fold": "folds dropped turns into episodes and moves the window "
    "in one crash-safe sequence",
    "holon.agent.workspaces:use": "binding a workspace: argument checks, the worktree, the "
    "state write",
    "holon.agent.envelope:record": "mirrors MessageEnvelope field by field, in the model's order",
    "holon.tasks.command.command:run": "a command run, yielded or promoted, tty or not; to split "
    "within tasks/command/",
    "holon.providers.openai_responses:input_items": "lowers every conversation item kind to "
    "Responses input in one pass",
}
# the modules that build an `Agent` from a home; the list only shrinks as the handle is passed
# down instead (issue 31, item 2)
AGENT_BUILDERS = {
    "holon.agent.admission",
    "holon.agent.budget",
    "holon.agent.control",
    "holon.agent.triggers",
    "holon.agent.wakehints",
    "holon.cli.model",
    "holon.cli.skills",
    "holon.cli.task",  # `holon task stop`: the command's one handle
    "holon.feed.notify",  # the detached delivery process: its own entry point
    "holon.memory.ranking",
    "holon.ops.commit",
    "holon.ops.debug",
    "holon.ops.doctor",
    "holon.ops.gc",
    "holon.ops.mcp",  # `holon mcp tools AGENT`: its entry point
    "holon.ops.prompt",
    "holon.ops.queue",
    "holon.ops.repair",
    "holon.ops.status",
    "holon.ops.timers",
    "holon.ops.tools",
    "holon.ops.work",
    "holon.ops.workspace",
    "holon.runtime.tick",
    # a parent opens its child's handle (and a child its parent's): another agent, not its own
    "holon.tasks.child.childend",
    "holon.tasks.child.children",
    "holon.tasks.child.childview",
    "holon.tasks.command.supervisor",  # the detached supervisor process: its own entry point
    "holon.tools.agents",
}


def long_functions(module: str, source: str, limit: int = MAX_FUNCTION_LINES) -> dict[str, int]:
    """`module:qualname` -> lines, for every function (nested ones too) longer than `limit`."""
    out: dict[str, int] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    lines = child.end_lineno - child.lineno + 1  # type: ignore[operator]
                    if lines > limit:
                        out[f"{module}:{name}"] = lines
                visit(child, name + ".")
            else:
                visit(child, prefix)

    visit(ast.parse(source), "")
    return out


def builds_agent(source: str) -> bool:
    """Whether the code calls `Agent(...)` (by that name or as `handle.Agent(...)`)."""
    return any(
        isinstance(n, ast.Call)
        and (
            (isinstance(n.func, ast.Name) and n.func.id == "Agent")
            or (isinstance(n.func, ast.Attribute) and n.func.attr == "Agent")
        )
        for n in ast.walk(ast.parse(source))
    )


def unlisted(readme: str, files: list[str]) -> list[str]:
    """The files a package README does not name in backquotes (`name.py`)."""
    return [f for f in files if f"`{f}`" not in readme]


def _package_files(directory: Path) -> list[str]:
    """The modules a package README must name: every .py file, but an `__init__.py` only when it
    holds more than a docstring."""
    out = []
    for path in sorted(directory.glob("*.py")):
        if path.name == "__init__.py":
            body = ast.parse(path.read_text(encoding="utf-8")).body
            if len(body) <= 1 and all(isinstance(n, ast.Expr) for n in body):
                continue
        out.append(path.name)
    return out


def _sources() -> dict[str, str]:
    return {m: p.read_text(encoding="utf-8") for m, p in MODULES.items()}


def test_no_function_is_longer_than_the_limit_outside_the_allow_list():
    found: dict[str, int] = {}
    for module, source in _sources().items():
        found.update(long_functions(module, source))
    assert sorted(set(found) - set(LONG_FUNCTIONS)) == [], "split them (or say why in the list)"
    assert sorted(set(LONG_FUNCTIONS) - set(found)) == [], "shorter now: drop them from the list"


def test_agents_are_built_only_in_the_allow_listed_modules():
    builders = {m for m, source in _sources().items() if builds_agent(source)}
    assert sorted(builders - AGENT_BUILDERS) == [], "pass the Agent down instead of building one"
    assert sorted(AGENT_BUILDERS - builders) == [], "no longer builds one: drop it from the list"


def test_every_module_is_named_in_its_package_readme():
    missing = []
    for init in sorted(PACKAGE.rglob("__init__.py")):
        readme = init.parent / "README.md"
        text = readme.read_text(encoding="utf-8") if readme.is_file() else ""
        files = _package_files(init.parent)
        missing += [f"{init.parent.relative_to(REPO)}/{f}" for f in unlisted(text, files)]
    assert missing == [], "add a line for each to its package's README.md"


def test_the_shape_checks_can_fail():
    """Each check above catches its violation: a long function (nested too), an `Agent(` call,
    a module its README does not name."""

    def body(indent: int) -> str:
        return "\n".join(" " * indent + f"x{i} = {i}" for i in range(60))

    source = f"def short():\n    pass\n\nclass C:\n    def long(self):\n{body(8)}\n"
    assert long_functions("m", source) == {"m:C.long": 61}
    assert long_functions("m", f"def outer():\n    def inner():\n{body(8)}\n") == {
        "m:outer": 62,
        "m:outer.inner": 61,
    }
    assert builds_agent("from holon.agent.handle import Agent\nAgent(home).state()")
    assert builds_agent("from holon.agent import handle\nhandle.Agent(home)")
    assert not builds_agent("def f(agent: Agent) -> Agent:\n    return agent")
    assert unlisted("- `a.py`: one\n- `c.py`: three", ["a.py", "b.py", "c.py"]) == ["b.py"]
    assert unlisted("see b.py", ["b.py"]) == ["b.py"]
