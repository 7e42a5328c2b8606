"""`agentk.sandbox.run_python(args, cwd, timeout)`: the name external checks import; the sandbox itself lives in
agentk.core.sandbox."""

from agentk.core.sandbox import RunResult, run_python, run_python_live, truncate

__all__ = ["RunResult", "run_python", "run_python_live", "truncate"]
