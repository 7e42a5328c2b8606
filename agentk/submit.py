"""Submitting a workspace to Kaggle: validate the file against the sample, submit, wait for the score,
record it in the workspace's submissions record and pick the final submission by public score (paper A.4)."""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime
from pathlib import Path

from agentk.core.errors import BadInput
from agentk.core.fileio import read_json, write_json
from agentk.workspace import METRIC, Workspace
from tools.kaggle import KaggleTool, parse_competition_url


def higher_is_better(ws: Path) -> bool:
    """The metric's direction, read from its source (submitting runs no generated code)."""
    code = Workspace(ws).code(METRIC)
    m = re.search(r"^HIGHER_IS_BETTER\s*=\s*(True|False)", code.read_text(), re.M) if code.exists() else None
    return m is None or m.group(1) == "True"


def solve_status(ws: Path) -> str:
    """The state of the workspace's solve in words: never run, running or killed, failed (why), done."""
    summary = read_json(Workspace(ws).solve_summary)
    if summary is None:
        return "no solve was run"
    held = (
        f"; submission.csv holds {summary['submission']}, the best solution it finished"
        if summary.get("submission") and summary.get("status") != "done"
        else ""
    )
    if summary.get("status") == "running":
        return f"a solve is running or was killed{held}"
    if summary.get("status") == "failed":
        return f"the solve failed: {summary.get('error')}{held}"
    return str(summary.get("status"))


def final_pick(records: list[dict], higher: bool) -> dict | None:
    scored = [r for r in records if r.get("status") == "complete" and r.get("public_score") is not None]
    if not scored:
        return None
    return (max if higher else min)(scored, key=lambda r: float(r["public_score"]))


def submit_workspace(ws: Path, message: str, solution: str | None, timeout: float) -> tuple[dict, dict | None]:
    from tools.submission import SubmissionMismatch, compare_with_sample

    paths = Workspace(ws)
    state = read_json(paths.setup_state)
    if state is None:
        raise BadInput(f"{ws} is not an agentk workspace: run `agentk setup <competition>` first")
    slug = parse_competition_url(str(state.get("source", "")))
    if not slug:
        raise BadInput(
            f"{ws} was set up from a local folder, not a Kaggle URL: there is nowhere to submit "
            "(grade it locally, e.g. examples/grade.py)"
        )
    file = paths.solution(solution).submission if solution else paths.submission
    if solution and read_json(paths.solution(solution).score) is None:
        raise BadInput(f"solution {solution!r} of {ws} is not finished (no {paths.solution(solution).score.name})")
    if not solution and (read_json(paths.solve_summary) or {}).get("status") != "done":
        raise BadInput(
            f"the solve in {ws} did not finish ({solve_status(ws)}), so {paths.submission.name} may be the setup's "
            f"light solution or a stale one: run `agentk solve --workspace {ws}`, or pass --light to submit the light "
            "solution"
        )
    if not file.exists():
        raise BadInput(f"{file} does not exist: run `agentk setup` (and `agentk solve`) first")
    from agentk.parsing import read_csv  # here: pandas only once there is a file to read

    try:
        compare_with_sample(ws, read_csv(file), file.name)
    except SubmissionMismatch as exc:
        raise BadInput(f"{file} does not match the sample submission: {exc}") from None
    tool = KaggleTool()
    t0 = time.time()
    records = read_json(paths.submissions, [])
    rel = str(file.relative_to(ws))
    record = _unscored(tool, slug, records, rel)
    if record is None:  # recorded as pending the moment Kaggle takes it: a killed run waits, never submits twice
        ref = tool.submit(slug, file, message)
        record = {
            "time": datetime.now(UTC).isoformat(),
            "file": rel,
            "message": message,
            "ref": str(ref),
            "status": "pending",
            "public_score": None,
            "private_score": None,
        }
        records.append(record)
        write_json(paths.submissions, records)
    result = tool.wait_for_score(slug, record["ref"], timeout=timeout)
    record.update({k: v for k, v in result.items() if k not in ("file", "message", "ref")})  # ours: the workspace's
    record["seconds"] = round(record.get("seconds", 0) + time.time() - t0, 1)
    write_json(paths.submissions, records)
    pick = final_pick(records, higher_is_better(ws))
    write_json(paths.final_pick, pick or {})
    return record, pick


def _unscored(tool, slug: str, records: list[dict], file: str) -> dict | None:
    """The last submission of this file still pending (an earlier run was killed or timed out waiting for its
    score) when Kaggle still lists it; one Kaggle no longer knows is marked lost, so the file is submitted again."""
    pending = [r for r in records if r.get("status") == "pending" and r.get("file") == file and r.get("ref")]
    if not pending:
        return None
    if any(s["ref"] == pending[-1]["ref"] for s in tool.submissions(slug)):
        return pending[-1]
    pending[-1]["status"] = "lost"
    return None
