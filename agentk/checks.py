"""Unit tests as data: a `Check` names a plain function `fn(ws, **kwargs)` that raises with an
actionable message. Checks run in the sandbox (they import generated code), all of a stage's
checks in one subprocess; the first failure is reported."""
from __future__ import annotations

import importlib
import importlib.util
import json
import sys
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from agentk.sandbox import RunResult, run_python


@dataclass(frozen=True)
class Check:
    fn: Callable[..., None]
    kwargs: dict[str, Any] = field(default_factory=dict)
    label: str = ""            # tells apart two uses of one function (e.g. train and test maps)

    @property
    def name(self) -> str:
        return f"{self.fn.__name__}[{self.label}]" if self.label else self.fn.__name__

    def spec(self) -> dict:
        return {"module": self.fn.__module__, "file": sys.modules[self.fn.__module__].__file__,
                "name": self.fn.__qualname__, "kwargs": self.kwargs}


@dataclass
class CheckReport:
    passed: bool
    index: int = -1             # position of the first failing check
    failed: str | None = None   # its name
    error: str = ""


def run_checks(checks: list[Check], ws: Path, timeout: float = 600, memory_gb: float = 16) -> CheckReport:
    if not checks:
        return CheckReport(True)
    payload = json.dumps([c.spec() for c in checks])
    res: RunResult = run_python(["-m", "agentk.checks", payload], cwd=ws, timeout=timeout, memory_gb=memory_gb)
    lines = [l for l in res.stdout.splitlines() if l.startswith("{\"passed\"")]
    if res.ok and lines:
        report = CheckReport(**json.loads(lines[-1]))
        if not report.passed:
            report.failed = checks[report.index].name
        return report
    return CheckReport(False, 0, checks[0].name, "The unit test itself could not finish: " + (res.error() or res.stdout[-2000:]))


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


def _main(payload: str) -> None:
    sys.path.insert(0, ".")  # generated modules live in the workspace (the cwd)
    ws = Path(".").resolve()
    for i, spec in enumerate(json.loads(payload)):
        try:
            _load(spec)(ws, **spec["kwargs"])
        except BaseException as exc:  # noqa: BLE001 - everything is an observation
            print(json.dumps({"passed": False, "index": i, "failed": spec["name"], "error": _describe(exc)[:6000]}))
            return
    print(json.dumps({"passed": True}))


if __name__ == "__main__":
    _main(sys.argv[1])
