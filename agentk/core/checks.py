"""Unit tests as data: a `Check` names a plain function `fn(ws, **kwargs)` that raises with an
actionable message. Checks run in the sandbox (they import generated code), all of a stage's
checks in one subprocess; the first failure is reported."""

from __future__ import annotations

import importlib
import importlib.util
import json
import runpy
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentk.core.sandbox import RunResult, run_python, truncate

MARK = "@@agentk-check@@ "  # the result line, told apart from what the code prints
STARTED = "@@agentk-started@@ "  # "code" or a check's index: names what hung or died


@dataclass(frozen=True)
class Check:
    fn: Callable[..., None]
    kwargs: dict[str, Any] = field(default_factory=dict)
    label: str = ""  # tells apart two uses of one function (e.g. train and test maps)

    @property
    def name(self) -> str:
        return f"{self.fn.__name__}[{self.label}]" if self.label else self.fn.__name__

    def spec(self) -> dict:
        return {
            "module": self.fn.__module__,
            "file": sys.modules[self.fn.__module__].__file__,
            "name": self.fn.__qualname__,
            "kwargs": self.kwargs,
        }


@dataclass
class CheckReport:
    passed: bool
    index: int = -1  # position of the first failing check (-1: the code itself failed)
    failed: str | None = None  # its name
    error: str = ""
    output: str = ""  # what the stage's code printed


def run_checks(
    checks: list[Check],
    ws: Path,
    timeout: float = 600,
    memory_gb: float = 16,
    code: str | None = None,
    output: str | None = None,
) -> CheckReport:
    """Run the stage's code (if any) and then its checks, in one sandboxed subprocess."""
    if not checks and code is None:
        return CheckReport(True)
    payload = json.dumps({"code": code, "output": output, "checks": [c.spec() for c in checks]})
    res: RunResult = run_python(["-m", "agentk.core.checks", payload], cwd=ws, timeout=timeout, memory_gb=memory_gb)
    printed = [ln for ln in res.stdout.splitlines() if not ln.startswith((MARK, STARTED))]
    results = [ln[len(MARK) :] for ln in res.stdout.splitlines() if ln.startswith(MARK)]
    shown = truncate("\n".join(printed), 2000)
    if res.ok and results:
        report = CheckReport(**json.loads(results[-1]), output=shown)
        if not report.passed and report.index >= 0:
            report.failed = checks[report.index].name
        return report
    started = [ln[len(STARTED) :] for ln in res.stdout.splitlines() if ln.startswith(STARTED)]
    if started and started[-1] != "code":
        i = int(started[-1])
        return CheckReport(
            False, i, checks[i].name, f"The unit test {checks[i].name} did not finish: {res.error()}", shown
        )
    return CheckReport(False, -1, "execution", f"Running {code} did not finish: {res.error() or shown[-2000:]}", shown)


def _load(spec: dict) -> Callable:
    try:
        module = importlib.import_module(spec["module"])
    except ImportError:  # a module outside the installed packages (e.g. a test's own checks)
        s = importlib.util.spec_from_file_location(spec["module"], spec["file"])
        module = importlib.util.module_from_spec(s)
        sys.modules[spec["module"]] = module
        s.loader.exec_module(module)
    obj = module
    for part in spec["name"].split("."):
        obj = getattr(obj, part)
    return obj


def _describe(exc: BaseException) -> str:
    """Assertion-style failures speak for themselves; crashes inside generated code need their traceback."""
    if isinstance(exc, AssertionError):
        return str(exc)
    tb = traceback.format_exception(exc)
    return "".join(tb[-6:]).strip()


def _report(**result) -> None:
    print(MARK + json.dumps(result), flush=True)


def _run_code(code: str, output: str | None) -> str | None:
    """Run the stage's program as __main__; the error a policy needs, or None."""
    try:
        runpy.run_path(code, run_name="__main__")
    except SystemExit as exc:
        if exc.code not in (None, 0):
            return f"Running {code} failed: exit {exc.code}"
    except BaseException as exc:  # noqa: BLE001 - generated code may raise anything
        frames = traceback.format_exception(exc)
        return f"Running {code} failed:\n" + "".join(frames[-8:]).strip()[-6000:]
    if output and not Path(output).exists():
        return f"{code} ran but did not write {output}."
    return None


def _main(payload: str) -> None:
    sys.path.insert(0, ".")  # generated modules live in the workspace (the cwd)
    ws = Path(".").resolve()
    job = json.loads(payload)
    if job["code"]:
        print(STARTED + "code", flush=True)
        error = _run_code(job["code"], job["output"])
        if error:
            return _report(passed=False, index=-1, failed="execution", error=error)
    for i, spec in enumerate(job["checks"]):
        print(STARTED + str(i), flush=True)
        try:
            _load(spec)(ws, **spec["kwargs"])
        except BaseException as exc:  # noqa: BLE001 - everything is an observation
            return _report(passed=False, index=i, failed=spec["name"], error=_describe(exc)[:6000])
    _report(passed=True)


if __name__ == "__main__":
    _main(sys.argv[1])
