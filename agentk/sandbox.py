"""`agentk.sandbox.run_python(args, cwd, timeout)`: the name external checks import; the sandbox itself lives in
agentk.core.sandbox."""

from agentk.core.sandbox import RunResult, require_sandbox, run_python, run_python_live, sandbox_available
from agentk.core.text import truncate

__all__ = ["RunResult", "require_sandbox", "run_python", "run_python_live", "sandbox_available", "truncate"]
