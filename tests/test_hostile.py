"""Hostile programs, run as generated code is (through run_python and through a stage's run_checks): each
attack of issue 16 must fail to do harm. Real processes, real files, a real listening socket; no mocks.

Under bwrap (installed by tests/run, which .ci/run runs) every attack is blocked by the sandbox; without it the
attacks only bwrap blocks skip, or fail where the sandbox is required (CI set, or AGENTK_REQUIRE_SANDBOX=1). The
fallback tests at the end force AGENTK_SANDBOX=off (or hide bwrap from PATH) and check the warning and what still
holds there."""

from __future__ import annotations

import functools
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agentk.core import sandbox
from agentk.core.checks import Check, run_checks
from agentk.core.errors import BadInput
from agentk.core.sandbox import MAX_BOUND_FILES, run_python, sandbox_available
from agentk.workspace import METRIC, TARGET_TRANSFORM, Workspace, code_file
from unit_tests_lib.maps import check_id_map
from unit_tests_lib.metric import check_metric

SANDBOXED, WHY = sandbox_available()
# where the sandbox must run: CI (.ci/run, with CI=true, runs tests/run, which installs bubblewrap), or on request
REQUIRED_BY = [
    name
    for name, on in [
        ("CI", os.environ.get("CI", "").lower() not in ("", "0", "false", "no")),
        ("AGENTK_REQUIRE_SANDBOX=1", os.environ.get("AGENTK_REQUIRE_SANDBOX") == "1"),
    ]
    if on
]


def needs_bwrap(test):
    """These attacks are blocked by bubblewrap: without it they would do harm, so they do not run; they skip, saying
    why, except where the sandbox is required (REQUIRED_BY), where a missing bwrap fails them."""
    if SANDBOXED:
        return test
    if not REQUIRED_BY:
        return pytest.mark.skip(
            reason=f"bubblewrap cannot run here ({WHY}): `apt-get install bubblewrap` to run the sandbox tests"
        )(test)

    @functools.wraps(test)
    def fails(*args, **kwargs):
        pytest.fail(
            f"bubblewrap cannot run here ({WHY}), but {' and '.join(REQUIRED_BY)} requires the sandbox tests: "
            "tests/run should have installed bubblewrap (apt-get install bubblewrap)"
        )

    return fails


SECRETS = {
    "DATABASE_URL": "postgres://admin:hunter2@db/prod",
    "SLACK_WEBHOOK_URL": "https://hooks.slack.com/services/T0/B0/secret-hook",
    "MY_SERVICE_AUTH": "auth-secret-value",
    "OPENAIKEY": "sk-hostile-secret",
}


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    """A fake HOME holding the user's credentials, as a real one does."""
    home = tmp_path / "home"
    (home / ".kaggle").mkdir(parents=True)
    (home / ".kaggle" / "kaggle.json").write_text('{"username": "me", "key": "kaggle-secret"}')
    (home / ".config" / "agentk").mkdir(parents=True)
    (home / ".config" / "agentk" / "config.toml").write_text('api_key = "llm-secret"\n')
    monkeypatch.setenv("HOME", str(home))
    return home


@pytest.fixture
def ws(tmp_path) -> Path:
    """A workspace whose raw/ links to the user's competition folder, as fetch makes it."""
    user = tmp_path / "user-data"
    user.mkdir()
    (user / "train.csv").write_text("id,y\n1,0\n2,1\n")
    ws = tmp_path / "ws"
    raw = Workspace(ws).raw
    raw.mkdir(parents=True)
    (raw / "train.csv").symlink_to(user / "train.csv")
    return ws


def _run(code: str, ws: Path, timeout: float = 60, **kw):
    return run_python(["-c", code], cwd=ws, timeout=timeout, **kw)


def _checks(program: str, checks: list[Check], ws: Path, output: str, timeout: float = 60):
    """The program as a stage's code_x.py, then the stage's checks: what the engine does."""
    (ws / "code_x.py").write_text(program)
    return run_checks(checks, ws, timeout=timeout, code="code_x.py", output=output)


# ---- secrets ----------------------------------------------------------------------------------
@needs_bwrap
def test_credential_files_in_home_cannot_be_read(home, ws):
    code = (
        "import os, pathlib\n"
        "for p in ['~/.kaggle/kaggle.json', '~/.config/agentk/config.toml', {!r}, {!r}]:\n"
        "    try:\n"
        "        print('READ', pathlib.Path(os.path.expanduser(p)).read_text())\n"
        "    except OSError as e:\n"
        "        print('blocked', type(e).__name__)\n"
    ).format(str(home / ".kaggle/kaggle.json"), str(home / ".config/agentk/config.toml"))
    for res in (_run(code, ws), _run(code, ws, memory_gb=2)):
        assert res.ok, res.error()
        assert "READ" not in res.stdout and "secret" not in res.stdout, res.stdout
        assert res.stdout.count("blocked FileNotFoundError") == 4
    # through a stage's checks: the program's output shows what it read
    report = _checks(code + "open('out.txt', 'w').write('x')\n", [], ws, "out.txt")
    assert report.passed and "secret" not in report.output


def test_secrets_in_the_environment_are_not_visible_whatever_their_names(ws, monkeypatch):
    for k, v in SECRETS.items():
        monkeypatch.setenv(k, v)
    res = _run("import json, os; print(json.dumps(dict(os.environ)))", ws)
    assert res.ok, res.error()
    env = json.loads(res.stdout)
    assert not set(SECRETS) & set(env)
    assert not any(v in res.stdout for v in SECRETS.values())
    report = _checks("import os, json; open('out.txt', 'w').write(json.dumps(dict(os.environ)))\n", [], ws, "out.txt")
    assert report.passed and not any(v in (ws / "out.txt").read_text() for v in SECRETS.values())


# ---- files ------------------------------------------------------------------------------------
@needs_bwrap
def test_home_cannot_be_written(home, ws):
    code = "import os; open(os.path.expanduser('~/planted.txt'), 'w').write('x'); print(os.path.expanduser('~'))"
    res = _run(code, ws)
    assert res.ok, res.error()  # it wrote into its own empty HOME, a tmpfs gone with the run
    assert not (home / "planted.txt").exists()
    res = _run(f"open({str(home / 'planted.txt')!r}, 'w').write('x')", ws)
    assert not (home / "planted.txt").exists()


@needs_bwrap
def test_the_users_data_cannot_be_changed_through_raw(ws):
    original = (Workspace(ws).raw / "train.csv").resolve()
    before = original.read_text()
    attacks = [
        "open('raw/train.csv', 'a').write('3,1\\n')",
        f"open({str(original)!r}, 'a').write('3,1\\n')",
        "import os; os.remove('raw/train.csv')",
        "open('raw/new.csv', 'w').write('x')",
    ]
    for code in attacks:
        res = _run(code, ws)
        assert not res.ok, code
        assert "Read-only file system" in res.stderr, res.stderr
    report = _checks(attacks[0] + "\nopen('out.txt', 'w').write('x')\n", [], ws, "out.txt")
    assert not report.passed and "Read-only file system" in report.error
    assert original.read_text() == before
    assert (Workspace(ws).raw / "train.csv").is_symlink()
    res = _run("open('written.txt', 'w').write('ok')", ws)  # the rest of the workspace stays writable
    assert res.ok and (ws / "written.txt").read_text() == "ok"


@needs_bwrap
def test_links_inside_a_real_folder_of_raw_are_readable_and_their_siblings_are_not(ws, tmp_path):
    """raw/data/ is a real folder where fetch recoded one table and linked the others (layout-fuzz seed 5008, held
    out: its link to the user's file, under a hidden folder, was missing in the sandbox). Each linked file is
    readable there, read-only, and a file beside it that no link names stays hidden; a folder of many links
    (per-sample files) binds the folders they point into."""
    user = tmp_path / "user-data"
    (user / "data").mkdir()
    (user / "data" / "links.csv").write_text("a,b\n1,2\n")
    (user / "data" / "private.csv").write_text("secret\n")
    data = Workspace(ws).raw / "data"
    data.mkdir()
    (data / "links.csv").symlink_to(user / "data" / "links.csv")
    (data / "recoded.csv").write_text("a,b\n3,4\n")
    code = (
        "import pathlib\n"
        "print(pathlib.Path('raw/data/links.csv').read_text().splitlines()[1])\n"
        f"print(pathlib.Path({str(user / 'data' / 'private.csv')!r}).exists())\n"
    )
    res = _run(code, ws)
    assert res.ok, res.error()
    assert res.stdout.split() == ["1,2", "False"]
    res = _run("open('raw/data/links.csv', 'a').write('5,6')", ws)
    assert not res.ok and "Read-only file system" in res.stderr
    many = Workspace(ws).raw / "by_id"
    many.mkdir()
    for k in range(MAX_BOUND_FILES + 1):
        (user / "data" / f"{k}.txt").write_text(str(k))
        (many / f"{k}.txt").symlink_to(user / "data" / f"{k}.txt")
    res = _run(f"print(open('raw/by_id/{MAX_BOUND_FILES}.txt').read())", ws)
    assert res.ok and res.stdout.strip() == str(MAX_BOUND_FILES), res.error()


# ---- network, processes -----------------------------------------------------------------------
@needs_bwrap
def test_the_network_cannot_be_reached(ws):
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        code = (
            "import socket\n"
            f"try:\n    socket.create_connection(('127.0.0.1', {port}), timeout=3); print('CONNECTED')\n"
            "except OSError as e:\n    print('blocked', e)\n"
        )
        res = _run(code, ws)
        assert res.ok, res.error()
        assert "CONNECTED" not in res.stdout and "blocked" in res.stdout
        report = _checks(code + "open('out.txt', 'w').write('x')\n", [], ws, "out.txt")
        assert "CONNECTED" not in report.output
        server.settimeout(0.5)
        with pytest.raises(TimeoutError):
            server.accept()


def _alive_with(marker: str) -> list[int]:
    pids = []
    for d in Path("/proc").iterdir():
        try:
            cmd = (d / "cmdline").read_bytes().decode(errors="replace")
            state = (d / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if d.name.isdigit() and marker in cmd and state != "Z":
            pids.append(int(d.name))
    return pids


@needs_bwrap
def test_a_forked_daemon_does_not_outlive_the_run(ws):
    marker = f"hostile-daemon-{os.getpid()}-{time.monotonic_ns()}"
    code = (
        "import subprocess, sys\n"
        f"subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)  # {marker}'],"
        " start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
        "print('forked')\n"
    )
    res = _run(code, ws)
    assert res.ok and "forked" in res.stdout
    deadline = time.monotonic() + 3
    while _alive_with(marker) and time.monotonic() < deadline:
        time.sleep(0.1)
    alive = _alive_with(marker)
    for pid in alive:
        os.kill(pid, 9)
    assert not alive, "the daemon outlived the run"


@needs_bwrap
def test_a_fork_bomb_ends_without_harming_the_machine(ws):
    bomb = "import os, time\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        time.sleep(0.2)\n"
    t0 = time.monotonic()
    res = _run(bomb, ws, timeout=5)
    assert res.timed_out and time.monotonic() - t0 < 30
    time.sleep(1)
    # the machine still forks, and the bomb's processes are gone
    assert subprocess.run([sys.executable, "-c", "pass"], timeout=30).returncode == 0
    assert _run("print('after')", ws).stdout.strip() == "after"


def test_a_30_gb_allocation_fails_cleanly(ws):
    res = _run("import numpy as np; a = np.ones(30 * 2**30 // 8); print(a.sum())", ws)
    assert not res.ok and res.out_of_memory and not res.timed_out
    assert "memory" in res.error().lower()


# ---- checks apart from the program ------------------------------------------------------------
GARBAGE_MAP = "open('map.csv', 'w').write('id\\n1\\n1\\n')\n"  # only an id column, and a repeated id


def test_a_program_that_replaces_a_check_cannot_pass_it(ws):
    check = [Check(check_id_map, {"name": "map.csv"})]
    honest = _checks(GARBAGE_MAP, check, ws, "map.csv")
    assert not honest.passed and honest.failed == "check_id_map"
    patch = (
        "import unit_tests_lib.maps, unit_tests_lib.common\n"
        "unit_tests_lib.maps.check_id_map = lambda *a, **k: None\n"
        "unit_tests_lib.common.fail = lambda *a, **k: None\n"
    )
    report = _checks(patch + GARBAGE_MAP, check, ws, "map.csv")
    assert not report.passed and report.failed == "check_id_map", report
    assert report.error == honest.error


def test_a_program_cannot_shadow_the_checks_modules_with_workspace_files(ws):
    fake = "def check_id_map(*a, **k):\n    pass\n"
    plant = (
        "import os\nos.makedirs('unit_tests_lib', exist_ok=True)\n"
        "open('unit_tests_lib/__init__.py', 'w').write('')\n"
        f"open('unit_tests_lib/maps.py', 'w').write({fake!r})\n"
        "open('sitecustomize.py', 'w').write('import unit_tests_lib')\n"
    )
    report = _checks(plant + GARBAGE_MAP, [Check(check_id_map, {"name": "map.csv"})], ws, "map.csv")
    assert (ws / "unit_tests_lib" / "maps.py").exists()
    assert not report.passed and report.failed == "check_id_map", report


# A metric stage's modules, by hand: the metric scores accuracy but says lower is better, which check_metric fails.
TRANSFORM = (
    "import numpy as np\nimport pandas as pd\n"
    "OUTPUTS = [{'name': 'y', 'kind': 'binary'}]\n"
    "def transform(y):\n    return y['y'].to_numpy(float)[:, None]\n"
    "def inverse_transform(t):\n    return pd.DataFrame({'y': np.asarray(t)[:, 0]})\n"
)
WRONG_METRIC = (
    "import numpy as np\nHIGHER_IS_BETTER = False\n"
    "def metric(y_true, y_pred):\n    return float(np.mean(y_true['y'].to_numpy() == np.round(y_pred['y'].to_numpy())))\n"
)
# import-time code that would make the failing check pass, were the module imported where the check runs
IMPORT_TIME_ATTACKS = {
    "patches the check": (
        "import sys\n"
        "for name, mod in list(sys.modules.items()):\n"
        "    if name.startswith('unit_tests_lib'):\n"
        "        for attr in ('fail', 'check_metric'):\n"
        "            if hasattr(mod, attr):\n"
        "                setattr(mod, attr, lambda *a, **k: None)\n"
    ),
    "patches the result line": (
        "import sys\n"
        "for checks in (sys.modules['__main__'], sys.modules.get('agentk.core.checks')):  # python -m agentk.core.checks\n"
        "    if hasattr(checks, '_report'):\n"
        "        checks._report = lambda report=checks._report, **result: report(passed=True)\n"
    ),
    "forges a result and exits": (
        "import json, os, sys\nif __name__ != '__main__':\n"
        "    print('@@agentk-check@@ ' + json.dumps({'passed': True}), flush=True)\n    os._exit(0)\n"
    ),
}


@pytest.mark.parametrize("attack", list(IMPORT_TIME_ATTACKS))
def test_a_generated_module_cannot_patch_the_check_that_imports_it(ws, attack):
    """check_metric calls the metric: the module's import-time code runs in a child of the check, which only reads
    the scores back, so patching the check, the result line or the process's exit changes nothing."""
    (ws / "train_tab_target_map.csv").write_text("id,y\n" + "".join(f"{i},{i % 3 % 2}\n" for i in range(60)))
    (ws / code_file(TARGET_TRANSFORM)).write_text(TRANSFORM)
    metric = ws / code_file(METRIC)
    metric.write_text(WRONG_METRIC)
    honest = run_checks([Check(check_metric)], ws, timeout=120, code=metric.name)
    assert not honest.passed and honest.failed == "check_metric" and "fix the direction" in honest.error, honest
    metric.write_text(IMPORT_TIME_ATTACKS[attack] + WRONG_METRIC)
    report = run_checks([Check(check_metric)], ws, timeout=120, code=metric.name)
    assert not report.passed and report.failed == "check_metric", report
    if attack == "forges a result and exits":
        assert "did not finish" in report.error and "@@agentk" not in report.output, report
    else:
        assert report.error == honest.error


# ---- without bwrap ----------------------------------------------------------------------------
FALLBACK = (
    "import sys\nfrom pathlib import Path\nfrom agentk.core.sandbox import run_python, sandbox_available\n"
    "print(sandbox_available())\n"
    "for _ in range(2):\n"
    "    r = run_python(['-c', 'import os; print(os.environ.get(\"DATABASE_URL\"))'], cwd=Path(sys.argv[1]))\n"
    "    print(r.ok, r.stdout.strip())\n"
)


@pytest.mark.parametrize("how", ["env", "path"])
def test_without_bwrap_one_warning_then_unsandboxed_runs(ws, how):
    env = {**os.environ, "DATABASE_URL": SECRETS["DATABASE_URL"]}
    if how == "env":
        env["AGENTK_SANDBOX"] = "off"
    else:  # a PATH with python but no bwrap
        env["PATH"] = str(Path(sys.executable).parent)
    res = subprocess.run(
        [sys.executable, "-c", FALLBACK, str(ws)], capture_output=True, text=True, env=env, timeout=120
    )
    assert res.returncode == 0, res.stderr
    warnings = [ln for ln in res.stderr.splitlines() if "without a sandbox" in ln]
    assert len(warnings) == 1, res.stderr  # once per process, not once per run
    assert warnings[0].startswith("agentk: warning: generated code runs without a sandbox (")
    assert ("AGENTK_SANDBOX=off" if how == "env" else "bwrap") in warnings[0]
    assert res.stdout.splitlines()[0].startswith("(False, ")
    assert res.stdout.splitlines()[1:] == ["True None", "True None"]  # runs go on; the allow-list still holds


@pytest.mark.parametrize("required", ["CI=true", "AGENTK_REQUIRE_SANDBOX=1", ""])
def test_without_bwrap_the_sandbox_tests_fail_where_required_else_skip(tmp_path, required):
    """needs_bwrap itself: pytest on one of this file's sandbox tests, with a PATH that has python but no bwrap."""
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "AGENTK_REQUIRE_SANDBOX", "AGENTK_SANDBOX")}
    env = {k: v for k, v in env.items() if not k.startswith("PYTEST_")}  # not an xdist worker's
    env["PATH"] = str(Path(sys.executable).parent)
    if required:
        key, value = required.split("=")
        env[key] = value
    args = [sys.executable, "-m", "pytest", __file__, "-k", "test_home_cannot_be_written", "-n", "0", "-rfs"]
    args += ["-p", "no:cacheprovider", f"--basetemp={tmp_path / 'inner'}"]
    res = subprocess.run(args, capture_output=True, text=True, env=env, timeout=300, cwd=Path(__file__).parent.parent)
    out = res.stdout + res.stderr
    assert "bwrap (Debian/Ubuntu package bubblewrap) is not on PATH" in out, out[-3000:]
    if required:
        assert res.returncode == 1 and "1 failed" in out, out[-3000:]
        assert f"but {required if required != 'CI=true' else 'CI'} requires" in out, out[-3000:]
        assert "tests/run should have installed bubblewrap" in out, out[-3000:]
    else:
        assert res.returncode == 0 and "1 skipped" in out and "apt-get install bubblewrap" in out, out[-3000:]


def test_require_sandbox_refuses_unread_code_without_one_unless_unsafe(monkeypatch):
    monkeypatch.setenv("AGENTK_SANDBOX", "off")
    with pytest.raises(BadInput, match="--unsafe-sandbox"):
        sandbox.require_sandbox()
    sandbox.require_sandbox(unsafe=True)
    monkeypatch.delenv("AGENTK_SANDBOX")
    if SANDBOXED:
        sandbox.require_sandbox()
