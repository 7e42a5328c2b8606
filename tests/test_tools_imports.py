"""tools/ is the solving code: it imports no checks (unit_tests_lib/) and no setup stages (stages/), not even
inside a function."""
from __future__ import annotations

import ast

from conftest import ROOT

ABOVE_TOOLS = ("unit_tests_lib", "stages")  # layers that build on tools/


def imported_modules(source: str) -> set[str]:
    """Every module an `import` or `from ... import` names, at any depth of the file."""
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_imported_modules_sees_imports_inside_functions():
    source = "import os\ndef f():\n    from unit_tests_lib.meta import check_light_solve\n    import stages.fetch\n"
    assert imported_modules(source) == {"os", "unit_tests_lib.meta", "stages.fetch"}


def test_tools_import_nothing_from_unit_tests_lib_or_stages():
    files = sorted((ROOT / "tools").rglob("*.py"))
    assert files
    bad = {f"{path.relative_to(ROOT)}: {name}" for path in files for name in imported_modules(path.read_text())
           if name.split(".")[0] in ABOVE_TOOLS}
    assert not bad, sorted(bad)
