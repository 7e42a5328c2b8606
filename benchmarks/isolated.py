"""A setup through agentk.api in a child process of its own, for the benchmarks that need one: a setup with a
time limit is killed with everything it started (its own process group), setups run side by side without
sharing a process, and each can have its own environment (e.g. its own LLM endpoint).

    python benchmarks/isolated.py SOURCE WORKSPACE [--policy P] [--stage-attempts N] [--backtracks N]

starts the setup over in WORKSPACE (as --force); exit code 0, 1 or 2 and, on failure, the last stderr line
`agentk: <why>`, as `agentk setup` would.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from agentk import api  # noqa: E402
from agentk.core.errors import AgentFailed, BadInput  # noqa: E402


@dataclass
class Isolated:
    rc: int | None  # None: killed at the time limit
    stderr: str
    seconds: float


def setup_isolated(
    source: Path | str, ws: Path, timeout: float, env: dict[str, str] | None = None, flags: list[str] | None = None
) -> Isolated:
    """Runs the setup of `source` in `ws` in a child process, killed after `timeout` seconds; flags: this
    script's options (--policy, --stage-attempts, --backtracks)."""
    cmd = [sys.executable, str(Path(__file__).resolve()), str(source), str(ws), *(flags or [])]
    t0 = time.monotonic()
    proc = subprocess.Popen(
        cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True
    )  # own process group, so a timeout ends its sandboxes too
    try:
        _, stderr = proc.communicate(timeout=timeout)
        rc = proc.returncode
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        _, stderr = proc.communicate()
        rc = None
    return Isolated(rc, stderr, time.monotonic() - t0)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("source")
    p.add_argument("workspace", type=Path)
    p.add_argument("--policy")
    p.add_argument("--stage-attempts", type=int, default=4)
    p.add_argument("--backtracks", type=int, default=3)
    args = p.parse_args(argv)

    try:
        api.run_setup(
            args.source,
            args.workspace,
            args.policy,
            force=True,
            stage_attempts=args.stage_attempts,
            backtracks=args.backtracks,
        )
    except (BadInput, AgentFailed) as exc:
        print(api.one_line(exc), file=sys.stderr)
        return exc.exit_code
    return 0


if __name__ == "__main__":
    sys.exit(main())
