"""The wheel holds the product only, and works installed: built with `uv build`, it carries agentk alone at the top
of site-packages (the other packages in agentk/_packages, no test doubles, HEBO vendored), and installed with its
dependencies into a fresh virtual environment it runs `agentk --help`, generated code in the sandbox imports tools/
and stages/, and (slow) a bundled example sets up. The install resolves the wheel's own declarations, with no
overrides (as `pip install .` does), constrained to the lock's versions so that uv's cache holds them all. Every
command runs outside the repository, so its folders are not on sys.path."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from conftest import EXAMPLES

ROOT = Path(__file__).resolve().parents[1]
HIDDEN = ("stages", "unit_tests_lib", "tools", "rag", "curriculum")  # the card's other top-level packages
UV = shutil.which("uv")
pytestmark = pytest.mark.skipif(UV is None, reason="uv builds the wheel (tests/run installs it)")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    subprocess.run([UV, "build", "--wheel", "--out-dir", out, ROOT], check=True, capture_output=True, timeout=300)
    (found,) = out.glob("agentk-*.whl")
    return found


@pytest.fixture(scope="module")
def venv(wheel, tmp_path_factory) -> Path:
    """A new virtual environment with the wheel and its dependencies installed."""
    root = tmp_path_factory.mktemp("venv")
    env, lock = root / "env", root / "lock.txt"
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", "--without-pip", env], check=True, timeout=120)
    exported = subprocess.run(
        [UV, "export", "--frozen", "--no-dev", "--no-emit-project", "--no-hashes", "--project", ROOT],
        check=True, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    lock.write_text(exported.stdout)
    installed = subprocess.run(
        [UV, "pip", "install", "--python", env / "bin" / "python", "--constraint", lock, wheel],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert installed.returncode == 0, installed.stderr[-3000:]
    return env


def run(venv: Path, *argv: str | Path, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return subprocess.run(
        [str(a) for a in argv],
        cwd=cwd,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=timeout,
        env={**env, "COLUMNS": "80", "PATH": f"{venv / 'bin'}:{env.get('PATH', '')}"},
    )


def test_the_wheel_holds_agentk_alone_without_test_doubles(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names}
    assert tops == {"agentk", f"{wheel.name.split('-py3')[0]}.dist-info"}, tops
    assert not [n for n in names if n.startswith("agentk/testing/")]
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]
    for package in HIDDEN:
        assert f"agentk/_packages/{package}/__init__.py" in names


def test_installed_wheel_runs_help_and_generated_code_imports_its_packages(venv, tmp_path):
    started = run(venv, "agentk", "--help", cwd=tmp_path)
    assert started.returncode == 0, started.stderr
    assert "setup" in started.stdout and "solve" in started.stdout
    # the packages are agentk's: a plain `import tools` finds nothing until agentk is imported
    bare = run(venv, "python", "-c", "import tools", cwd=tmp_path)
    assert bare.returncode == 1 and "No module named 'tools'" in bare.stderr
    # a stage's program runs sandboxed in `python -P -m agentk.core.checks` and imports the packages by name
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "program.py").write_text(
        f"import {', '.join(HIDDEN)}\nprint(*(m.__file__ for m in ({', '.join(HIDDEN)})), sep='\\n')\n"
    )
    script = (
        "import sys; from pathlib import Path; from agentk.core.checks import run_checks\n"
        "report = run_checks([], Path(sys.argv[1]), timeout=120, code='program.py')\n"
        "print(report.output); sys.exit(0 if report.passed else report.error)\n"
    )
    checked = run(venv, "python", "-c", script, ws, cwd=tmp_path)
    assert checked.returncode == 0, checked.stderr + checked.stdout
    files = [Path(line) for line in checked.stdout.splitlines() if line.endswith("__init__.py")]
    assert [f.parent.name for f in files] == list(HIDDEN)
    assert all(f.parent.parent.name == "_packages" and f.is_relative_to(venv.resolve()) for f in files)


@pytest.mark.slow
def test_installed_wheel_sets_up_a_bundled_example(venv, tmp_path):
    ws = tmp_path / "ws"
    done = run(venv, "agentk", "setup", EXAMPLES / "iris-species", "-w", ws, cwd=tmp_path, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    # the summary goes to stderr, as all of agentk's console output (stdout stays free for piping)
    assert "11/11 stages" in done.stderr and (ws / "submission.csv").exists(), done.stdout + done.stderr
