"""The architecture's rules, checked on the source (docs/architecture.md, "Layers"): which packages may import
which, and the workspace contract's names written in one place."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from agentk import workspace

ROOT = Path(__file__).resolve().parents[1]
PRODUCT = ("agentk", "stages", "unit_tests_lib", "tools", "rag", "curriculum")

# layer -> the layers it may import (besides itself); a module's layer is its longest matching prefix
ALLOWED = {
    "agentk.parsing": set(),  # below every layer: numbers read out of text without crashing pandas
    "agentk._vendor": set(),  # third-party code kept inside agentk (HEBO), importing only itself
    "agentk.workspace": set(),
    "agentk.modalities": set(),
    "agentk.core": {"agentk.workspace"},
    "agentk.competition": {"agentk.core", "agentk.workspace", "agentk.modalities"},
    "tools": {"agentk.core", "agentk.competition", "agentk.workspace", "agentk.modalities", "agentk._vendor"},
    "unit_tests_lib": {"agentk.core", "agentk.competition", "agentk.workspace", "agentk.modalities", "tools"},
    "rag": {"agentk.core", "agentk.workspace"},
    "agentk.policies": {"agentk.core", "agentk.competition", "agentk.workspace", "agentk.modalities", "tools", "rag"},
    "stages": {
        "agentk.core",
        "agentk.competition",
        "agentk.workspace",
        "agentk.modalities",
        "agentk.policies",
        "unit_tests_lib",
        "tools",
    },
}
# the runs (the setup's stage list, the solver, submitting, the report, Ray) may use one another, then the API
# over them, then the commands
_BELOW_RUNS = set(ALLOWED) - {"agentk.parsing"}
RUNS = ("agentk.setup_pipeline", "agentk.solve", "agentk.submit", "agentk.report", "agentk.ray_backend")
COMMANDS = ("agentk.cli", "agentk.__main__", "curriculum", "rag.cli")
ALLOWED |= {run: _BELOW_RUNS | set(RUNS) for run in RUNS}
ALLOWED["agentk.api"] = _BELOW_RUNS | set(RUNS)
ALLOWED |= {command: _BELOW_RUNS | set(RUNS) | {"agentk.api"} | set(COMMANDS) for command in COMMANDS}
ALLOWED["agentk.sandbox"] = {"agentk.core"}  # the public name of the sandbox for external checks
ALLOWED["agentk"] = set()  # the package: it puts the installed wheel's folder on sys.path, importing nothing
for _layer, _below in ALLOWED.items():
    if _layer != "agentk.parsing":
        _below.add("agentk.parsing")
# import cycles not yet taken apart: each must only shrink (issue 61 restructures agentk/competition/)
KNOWN_CYCLES = [
    {
        "agentk.competition.archives",
        "agentk.competition.class_tables",
        "agentk.competition.dataview",
        "agentk.competition.file_inputs",
        "agentk.competition.long_format",
        "agentk.competition.partitions",
        "agentk.competition.series",
        "agentk.competition.support",
        "agentk.competition.tables",
    }
]
# the test doubles (testing/), the tests and the benchmarks: the product never imports them, and the wheel holds
# none of them (tests/test_wheel.py)
TEST_CODE = ("testing", "tests", "benchmarks")


def layer(module: str) -> str:
    found = [name for name in ALLOWED if module == name or module.startswith(name + ".")]
    return max(found, key=len) if found else module.split(".")[0] if module.split(".")[0] != "agentk" else module


def product_modules() -> dict[str, Path]:
    found = {}
    for package in PRODUCT:
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def imports(path: Path, modules: dict[str, Path] | None = None) -> set[str]:
    """Every project module a file imports, at the top or inside functions (`from package import module` names
    the module, `from module import function` the module)."""
    modules = product_modules() if modules is None else modules
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for a in node.names:
                full = f"{node.module}.{a.name}"
                names.add(full if full in modules else node.module)
    return {n for n in names if n.split(".")[0] in PRODUCT}


def test_layers_import_only_what_they_may():
    modules = product_modules()
    wrong = set()
    for module, path in modules.items():
        mine = layer(module)
        for name in imports(path, modules):
            other = layer(name)
            if mine in ALLOWED and other != mine and other not in ALLOWED[mine]:
                wrong.add(f"{module} ({mine}) imports {name} ({other})")
    assert not wrong, "\n".join(sorted(wrong))


def test_every_module_is_in_a_layer():
    outside = sorted(m for m in product_modules() if not m.startswith("agentk._vendor") and layer(m) not in ALLOWED)
    assert not outside, f"modules in no layer of ALLOWED (add them, and to docs/architecture.md): {outside}"


def cycles(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm, without recursion)."""
    index, low, stack, on, found, counter = {}, {}, [], set(), [], 0
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = set()
                while True:
                    member = stack.pop()
                    on.discard(member)
                    group.add(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.append(group)
    return found


def test_no_import_cycle_inside_a_layer_but_the_known_ones_shrinking():
    modules = product_modules()
    graph = {m: {n for n in imports(p, modules) if n in modules and n != m} for m, p in modules.items()}
    new = [c for c in cycles(graph) if not any(c <= known for known in KNOWN_CYCLES)]
    assert not new, "import cycles: " + "; ".join(" <-> ".join(sorted(c)) for c in new)


def test_the_cycle_finder_finds_a_cycle_and_no_chain():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [{"a", "b", "c"}]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []


def test_the_product_imports_no_test_code():
    wrong = set()
    for module, path in product_modules().items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            else:
                continue
            wrong |= {f"{module} imports {n}" for n in names if n.split(".")[0] in TEST_CODE}
    assert not wrong, "\n".join(sorted(wrong))


def test_the_rule_catches_an_upward_import(tmp_path):
    """The checker itself: a tools module importing a check is reported."""
    bad = tmp_path / "bad.py"
    bad.write_text("def f():\n    from unit_tests_lib.meta import check_light_solve\n")
    assert "unit_tests_lib.meta" in imports(bad)
    assert layer("unit_tests_lib.meta") not in ALLOWED["tools"]


def contract_names() -> set[str]:
    """The file names and stage names agentk.workspace defines; one-word stage names ("metric", "plan") are
    also plain words (a JSON key, a log line), so only names with a dot or an underscore are looked for."""
    names = {v for k, v in vars(workspace).items() if k.isupper() and isinstance(v, str)}
    names |= {v for k, v in vars(workspace.Workspace).items() if k.isupper() and isinstance(v, str)}
    return {n for n in names if "." in n or "_" in n}


@pytest.mark.parametrize("package", PRODUCT)
def test_workspace_names_are_written_once(package):
    """No file of the product spells a workspace file or a setup stage as a string: agentk.workspace names them."""
    names = contract_names()
    found = []
    for path in (ROOT / package).rglob("*.py"):
        if path == ROOT / "agentk" / "workspace.py":
            continue  # the contract itself
        tree = ast.parse(path.read_text())
        docstrings = {
            id(n.body[0].value)
            for n in ast.walk(tree)
            if isinstance(n, (ast.Module, ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef))
            and n.body
            and isinstance(n.body[0], ast.Expr)
            and isinstance(n.body[0].value, ast.Constant)
        }
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and id(node) not in docstrings
                and node.value in names
            ):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.value!r}")
    assert not found, "\n".join(found)
