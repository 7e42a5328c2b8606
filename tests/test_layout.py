"""The architecture's rules, checked on the source (docs/architecture.md, "Layers"): which packages may import
which, and the workspace contract's names written in one place."""

from __future__ import annotations

import ast

import pytest

from agentk import workspace
from testing.layers import (
    ALLOWED,
    DOC,
    KNOWN_CYCLES,
    PRODUCT,
    ROOT,
    TEST_CODE,
    cycles,
    doc_picture,
    imports,
    layer,
    loaded_libraries,
    needless_deferrals,
    picture,
    product_modules,
)


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


def test_the_layers_picture_in_the_docs_is_the_one_the_rules_draw():
    assert doc_picture(DOC.read_text()) == picture(), "run: python -m testing.layers --write"


def test_the_rule_catches_an_upward_import(tmp_path):
    """The checker itself: a tools module importing a check is reported."""
    bad = tmp_path / "bad.py"
    bad.write_text("def f():\n    from unit_tests_lib.meta import check_light_solve\n")
    assert "unit_tests_lib.meta" in imports(bad)
    assert layer("unit_tests_lib.meta") not in ALLOWED["tools"]


def test_imports_sit_at_the_top_unless_they_keep_a_heavy_library_out():
    """An import inside a function hides an edge from readers; it is kept only where it keeps a DEFERRED library
    (torch, AutoGluon, pandas for `agentk --help`...) out of its module."""
    found = needless_deferrals()
    assert not found, "move these imports to the top of their module:\n" + "\n".join(found)


def test_the_deferral_rule_tells_a_needed_deferral_from_a_needless_one(tmp_path):
    """The checker itself: a light module deferring pandas keeps it out (kept); deferring a module it loads at its
    top anyway, or a light project module, keeps nothing out (reported), and so does one that loads pandas already."""
    (tmp_path / "light.py").write_text("import json\n\n\ndef f():\n    import pandas\n    import json\n")
    (tmp_path / "heavy.py").write_text("import pandas\n\n\ndef f():\n    import numpy\n    import pandas\n")
    (tmp_path / "user.py").write_text("import pandas\n\n\ndef f():\n    import light\n    import heavy\n")
    (tmp_path / "entry.py").write_text("def main():\n    import heavy\n    import light\n")
    (tmp_path / "script.py").write_text('if __name__ == "__main__":\n    import heavy\n')
    modules = {p.stem: p for p in tmp_path.glob("*.py")}
    assert loaded_libraries(modules) == {
        "light": set(), "heavy": {"pandas"}, "user": {"pandas"}, "entry": set(), "script": set()
    }  # fmt: skip
    found = sorted(f.split(str(tmp_path) + "/")[1] for f in needless_deferrals(modules))
    # heavy defers numpy, which pandas loads: the closure here counts only the project's own files, so it is kept
    assert found == [
        "entry.py:3: light",
        "heavy.py:6: pandas",
        "light.py:6: json",
        "user.py:5: light",
        "user.py:6: heavy",
    ]


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
