"""Unit tests as data: a `Check` names a plain function `fn(ws, **kwargs)` that raises with an
actionable message. The stage's program runs in one sandboxed subprocess, then all of the stage's checks
in another (they read what the program wrote; nothing the program did to its own interpreter reaches
them); the first failure is reported. No generated module is ever imported into the checks' process: a check
that calls one does so in a child of its own (`agentk.core.isolated.call_isolated`) and asserts on the data it
returns, so import-time code cannot patch the checks or the result line."""

from __future__ import annotations

import json
import runpy
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentk.core import isolated
from agentk.core.isolated import describe, function_spec, import_function
from agentk.core.sandbox import RunResult, run_python
from agentk.core.text import truncate

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
        return {**function_spec(self.fn), "kwargs": self.kwargs}


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
    """Run the stage's code (if any) in one sandboxed subprocess, then its checks in another."""
    if not checks and code is None:
        return CheckReport(True)
    start = time.monotonic()
    printed = ""
    if code is not None:
        report, printed = _run_job({"code": code, "output": output, "checks": []}, checks, ws, timeout, memory_gb)
        if not report.passed or not checks:
            return report
    left = max(1.0, timeout - (time.monotonic() - start))
    report, _ = _run_job(
        {"code": None, "output": None, "checks": [c.spec() for c in checks]}, checks, ws, left, memory_gb
    )
    report.output = truncate("\n".join(filter(None, [printed, report.output])), 2000)
    return report


def _run_job(job: dict, checks: list[Check], ws: Path, timeout: float, memory_gb: float) -> tuple[CheckReport, str]:
    """One subprocess: the program, or the checks. -P: the workspace (the cwd) is not put first on sys.path, so a
    file the program wrote (unit_tests_lib/, agentk/) cannot stand in for the checks' own modules."""
    args = ["-P", "-m", "agentk.core.checks", json.dumps({**job, "timeout": timeout, "memory_gb": memory_gb})]
    res: RunResult = run_python(args, cwd=ws, timeout=timeout, memory_gb=memory_gb)
    if _native_crash(res) and timeout - res.seconds > 1:
        # once more: a library's threads aborted the interpreter at random ("terminate called without an active
        # exception", 1 of 30 fuzzed setups under load), and a stage's only hypothesis was dropped for it
        res = run_python(args, cwd=ws, timeout=timeout - res.seconds, memory_gb=memory_gb)
    printed = [ln for ln in res.stdout.splitlines() if not ln.startswith((MARK, STARTED))]
    results = [ln[len(MARK) :] for ln in res.stdout.splitlines() if ln.startswith(MARK)]
    shown = truncate("\n".join(printed), 2000)
    if res.ok and results:
        report = CheckReport(**json.loads(results[-1]), output=shown)
        if not report.passed and report.index >= 0:
            report.failed = checks[report.index].name
        return report, shown
    started = [ln[len(STARTED) :] for ln in res.stdout.splitlines() if ln.startswith(STARTED)]
    if started and started[-1] != "code":
        i = int(started[-1])
        error = f"The unit test {checks[i].name} did not finish: {res.error()}"
        return CheckReport(False, i, checks[i].name, error, shown), shown
    what = f"Running {job['code']}" if job["code"] else "The unit tests"
    error = f"{what} did not finish: {res.error() or shown[-2000:]}"
    return CheckReport(False, -1, "execution", error, shown), shown


def _native_crash(res: RunResult) -> bool:
    """The interpreter died of a signal (an abort, a segfault), not of a Python error, a timeout or the memory cap."""
    if res.ok or res.timed_out or res.out_of_memory or res.returncode is None:
        return False
    return res.returncode in (-6, -11, 134, 139) or "Fatal Python error" in res.stderr


def _report(**result) -> None:
    print(MARK + json.dumps(result), flush=True)


def _run_code(code: str, output: str | None) -> str | None:
    """Run the stage's program as __main__; the error a policy needs, or None."""
    from agentk.parsing import guard_pandas

    guard_pandas()  # generated code (an LLM's too) reads text as numbers through pandas: not the crashing strings
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
    ws = Path(".").resolve()
    job = json.loads(payload)
    # a check's child (call_isolated) gets what is left of the checks' time, less a margin to report it timed out
    isolated.limits.update(deadline=time.monotonic() + 0.95 * job["timeout"] - 1, memory_gb=job["memory_gb"])
    if job["code"]:
        sys.path.insert(0, ".")  # generated modules live in the workspace (the cwd) and import each other
        print(STARTED + "code", flush=True)
        error = _run_code(job["code"], job["output"])
        return _report(passed=False, index=-1, failed="execution", error=error) if error else _report(passed=True)
    fns = []  # the workspace is never on the path here: no file the program wrote is imported
    for spec in job["checks"]:
        try:
            fns.append(import_function(spec))
        except BaseException as exc:  # noqa: BLE001 - reported as that check's failure
            fns.append(exc)
    for i, (fn, spec) in enumerate(zip(fns, job["checks"], strict=True)):
        print(STARTED + str(i), flush=True)
        try:
            if isinstance(fn, BaseException):
                raise fn
            fn(ws, **spec["kwargs"])
        except BaseException as exc:  # noqa: BLE001 - everything is an observation
            return _report(passed=False, index=i, failed=spec["name"], error=describe(exc)[:6000])
    _report(passed=True)


if __name__ == "__main__":
    import faulthandler

    faulthandler.enable()  # a native crash of the generated code says where, on the stderr the parent reads
    _main(sys.argv[1])
