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
for _layer, _below in ALLOWED.items():
    if _layer != "agentk.parsing":
        _below.add("agentk.parsing")
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
