"""Set the arena competitions up with agentk.api and tabulate how far each got.

    uv run python benchmarks/arena.py --arena ../shared/arena-dev [--out benchmarks/out] [--only NAME ...] [--jobs 2]

For every competition folder of the arena (meta.json + public/) this sets <arena>/<name>/public up in
<out>/<name> (starting over) in a child process (benchmarks/isolated.py), reads the workspace's setup state,
compares the metric the agent picked (its metric code) with the competition's,
grades the light-solve submission against the hidden answers, and prints a table (also written to
<out>/arena_setup.md), with the competition's input modalities (meta.json).

Exit status 0 when every competition set up (exit 0, setup state "done"), or, where meta.json says "supported":
false, was refused with exit 2 and "unsupported task"; 1 otherwise; 2 on bad arguments.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from agentk.competition.class_names import class_columns  # noqa: E402
from agentk.workspace import METRIC, Workspace  # noqa: E402
from benchmarks.isolated import setup_isolated  # noqa: E402
from tools.metrics import METRICS  # noqa: E402

# meta.json "metric" -> our catalogue name (tools.metrics.METRICS); unknown names stand for themselves.
ARENA_METRICS = {
    "accuracy": "accuracy",
    "auc-roc": "roc_auc",
    "log-loss": "log_loss",
    "multi-class-log-loss": "multi_log_loss",
    "column-wise ROC AUC": "mean_columnwise_auc",
    "mean-column-wise-rmsle": "mean_columnwise_rmsle",
}
COLUMNS = (
    "competition",
    "family",
    "quirk",
    "inputs",
    "task",
    "exit",
    "stages",
    "unit tests",
    "meta-tests",
    "backtracks",
    "metric picked",
    "comp. metric",
    "match",
    "val score",
    "test score",
    "secs",
    "reason",
)


@dataclass
class Result:
    name: str
    meta: dict
    rc: int | None = None  # None: timed out
    seconds: float = 0.0
    stderr: str = ""
    state: dict | None = None  # the setup state, as in its file
    picked: str = "-"
    val_score: float | None = None
    test_score: float | str | None = None  # str: why grading failed
    source: str = ""  # <arena>/<name>/public, shortened to "public" in reasons
    workspace: str = ""  # <out>/<name>, shortened to "ws" in reasons

    @property
    def comp_metric(self) -> str:
        m = self.meta.get("metric", "-")
        return ARENA_METRICS.get(m, m)

    @property
    def ok(self) -> bool:
        """Set up; or, for a task meta.json marks unsupported, refused as such (exit 2, "unsupported task")."""
        if self.meta.get("supported", True) is False:
            return self.rc == 2 and "unsupported task" in _reason(self.stderr)
        return self.rc == 0 and bool(self.state) and self.state.get("status") == "done"


# ----------------------------------------------------------------------------- running
def _reason(stderr: str) -> str:
    """The CLI's one-line failure reason: its last 'agentk: ...' line, else the last non-empty line."""
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    for ln in reversed(lines):
        if ln.startswith("agentk:"):
            return ln[len("agentk:") :].strip()
    return lines[-1] if lines else ""


def run_one(arena: Path, out: Path, name: str, timeout: float) -> Result:
    meta = json.loads((arena / name / "meta.json").read_text())
    ws = Workspace(out / name)
    res = Result(name, meta, source=str(arena / name / "public"), workspace=str(ws.root))
    # a child process per setup: it is timed, killed at the time limit with its sandboxes, and --jobs run at once
    # its own long-term memory too: the user's stays untouched, and no result depends on which ran first
    env = {**os.environ, "COLUMNS": "1000", "NO_COLOR": "1", "AGENTK_MEMORY": str(out / "memory" / name)}
    run = setup_isolated(res.source, ws.root, timeout, env=env)
    res.rc, res.seconds = run.rc, run.seconds
    res.stderr = run.stderr + (f"\nagentk: timed out after {timeout:.0f} s" if run.rc is None else "")
    if res.rc == 2:  # bad input / unsupported: the setup wrote nothing, so anything in ws is stale
        return res
    if ws.setup_state.is_file() and ws.setup_state.stat().st_mtime >= time.time() - res.seconds - 1:
        res.state = json.loads(ws.setup_state.read_text())
    code_metric = ws.code(METRIC)
    if code_metric.is_file() and (m := re.search(r"^METRIC\s*=\s*['\"]([^'\"]+)['\"]", code_metric.read_text(), re.M)):
        res.picked = m.group(1)
    if ws.light.score.is_file():
        res.val_score = json.loads(ws.light.score.read_text()).get("score")
    if ws.submission.is_file():
        try:
            res.test_score = grade(
                ws.submission,
                arena / name / meta["answers"],
                res.comp_metric,
                targets=meta.get("targets"),
                by_position=meta.get("by_position", False),
            )
        except Exception as e:  # noqa: BLE001 - any grading failure is reported in the table
            res.test_score = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:120]
    return res


# ----------------------------------------------------------------------------- grading
def grade(
    submission: Path, answers: Path, metric_name: str, targets: list[str] | None = None, by_position: bool = False
) -> float:
    """Score a submission against the answers, rows aligned on the submission's first column (by_position: row by
    row, for samples without an id column). targets: the scored columns (default: all but the first); meta.json
    names them when the sample repeats test inputs."""
    return grader(submission, answers, metric_name, targets, by_position)(None)


class RowScore:
    """rows -> the submission's score on the answers' scored rows at those positions (None: every one): what a
    bootstrap of the test rows draws. `n`: how many scored rows there are."""

    def __init__(self, fn, y_true: np.ndarray, y_pred: np.ndarray):
        self.fn, self.y_true, self.y_pred, self.n = fn, y_true, y_pred, len(y_true)

    def __call__(self, rows: np.ndarray | None) -> float:
        return self.fn(self.y_true, self.y_pred) if rows is None else self.fn(self.y_true[rows], self.y_pred[rows])


def grader(
    submission: Path, answers: Path, metric_name: str, targets: list[str] | None = None, by_position: bool = False
) -> RowScore:
    """grade's alignment and checks, as a RowScore."""
    if metric_name not in METRICS:
        raise ValueError(f"metric {metric_name!r} is not in tools.metrics.METRICS")
    metric = METRICS[metric_name]
    sub = pd.read_csv(submission, dtype=str, keep_default_na=False)
    truth = pd.read_csv(answers, dtype=str, keep_default_na=False)
    if by_position:
        if len(sub) != len(truth):
            raise ValueError(f"{len(sub)} submission rows for {len(truth)} answers")
        sub.insert(0, "_row", [str(i) for i in range(len(sub))])
        truth.insert(0, "_row", [str(i) for i in range(len(truth))])
    id_col = sub.columns[0]
    targets = list(targets or sub.columns[1:])
    truth_id = id_col if id_col in truth.columns else truth.columns[0]
    if sub[id_col].duplicated().any():
        raise ValueError(f"duplicate {id_col} {sub[id_col][sub[id_col].duplicated()].iloc[0]!r} in submission")
    if missing := sorted(set(truth[truth_id]) - set(sub[id_col])):
        raise ValueError(f"{len(missing)} answer ids missing from submission, e.g. {missing[0]!r}")
    pred = sub.set_index(id_col).loc[truth[truth_id].to_numpy(), targets]
    truth = truth.set_index(truth_id)

    if metric.name in ("multi_log_loss", "balanced_log_loss"):  # probability columns -> class codes in their order
        y_pred = pred.to_numpy(float)
        if set(targets) <= set(truth.columns):  # one-hot answers
            onehot = truth[targets].to_numpy(float)
            if not np.all(onehot.sum(axis=1) == 1):
                raise ValueError("answers are not one-hot over the submission's columns")
            return RowScore(metric.fn, onehot.argmax(axis=1), y_pred)
        labels = [c for c in truth.columns if c not in targets]
        if len(labels) != 1:
            raise ValueError(f"cannot find the class column of the answers among {list(truth.columns)[:5]}")
        code = {c: i for i, c in enumerate(targets)}
        if named := class_columns(set(truth[labels[0]]) - set(code), targets):  # "class_0" for a class 0
            code |= {value: code[column] for value, column in named.items()}
        if unknown := sorted(set(truth[labels[0]]) - set(code)):
            raise ValueError(f"answer class {unknown[0]!r} is not a submission column")
        return RowScore(metric.fn, truth[labels[0]].map(code).to_numpy(int), y_pred)

    if metric.name == "bias_auc":  # the target, then the identity sub-group columns of the answers
        truth = truth[[c for c in truth.columns if c not in targets]]
        return RowScore(metric.fn, truth.to_numpy(float), pred.to_numpy(float)[:, 0])
    if absent := [c for c in targets if c not in truth.columns]:
        raise ValueError(f"answers lack the submission column(s) {absent}")
    if metric.prediction == "proba":  # -1 in every target: a row Kaggle did not score (jigsaw's test labels)
        scored = ~(truth[targets] == "-1").all(axis=1).to_numpy()
        truth, pred = truth[scored], pred[scored]
    if metric.prediction in ("label", "ranking"):  # compare labels (and ranked label lists) as strings
        y_true, y_pred = truth[targets].to_numpy(str), pred.to_numpy(str)
    else:
        y_true, y_pred = truth[targets].to_numpy(float), pred.to_numpy(float)
    if not metric.multi_target:
        if len(targets) != 1:
            raise ValueError(f"{metric.name} scores one column, the submission has {len(targets)}")
        y_true, y_pred = y_true[:, 0], y_pred[:, 0]
    return RowScore(metric.fn, y_true, y_pred)


# ----------------------------------------------------------------------------- table
def _frac(done: int, total: int) -> str:
    return f"{done}/{total}"


def _num(x) -> str:
    return "-" if x is None else (x if isinstance(x, str) else f"{x:.5g}")


def cells(r: Result) -> dict:
    st = r.state or {}
    stages = st.get("stages", {})
    tests = [v for s in stages.values() for v in s.get("tests", {}).values()]
    metas = st.get("meta_tests", {})
    status = "timeout" if r.rc is None else str(r.rc)
    have = bool(st)
    return {
        "competition": r.name,
        "family": r.meta.get("family", "-"),
        "quirk": r.meta.get("quirk", "-"),
        "inputs": "+".join(r.meta.get("modalities", {}).get("inputs", [])) or "-",
        "task": r.meta.get("task_type", "-"),
        "exit": status,
        "stages": _frac(sum(s.get("status") == "passed" for s in stages.values()), len(stages)) if have else "-",
        "unit tests": _frac(sum(v == "passed" for v in tests), len(tests)) if have else "-",
        "meta-tests": _frac(sum(m.get("status") == "passed" for m in metas.values()), len(metas)) if have else "-",
        "backtracks": str(st.get("backtracks", "-")) if have else "-",
        "metric picked": r.picked,
        "comp. metric": r.comp_metric,
        "match": "✓" if r.picked == r.comp_metric else "✗",
        "val score": _num(r.val_score),
        "test score": _num(r.test_score),
        "secs": f"{r.seconds:.0f}",
        "reason": "" if r.rc == 0 else _reason(r.stderr).replace(r.source, "public").replace(r.workspace, "ws")[:140],
    }


def plain_table(rows: list[dict]) -> str:
    widths = {c: max(len(c), *(len(r[c]) for r in rows)) for c in COLUMNS}
    line = lambda r: "  ".join(r[c].ljust(widths[c]) for c in COLUMNS).rstrip()  # noqa: E731
    return "\n".join(
        [line({c: c for c in COLUMNS}), "  ".join("-" * widths[c] for c in COLUMNS)] + [line(r) for r in rows]
    )


def markdown_table(rows: list[dict]) -> str:
    esc = lambda s: s.replace("|", "\\|") or " "  # noqa: E731
    out = ["| " + " | ".join(COLUMNS) + " |", "|" + "|".join(" --- " for _ in COLUMNS) + "|"]
    return "\n".join(out + ["| " + " | ".join(esc(r[c]) for c in COLUMNS) + " |" for r in rows])


def summary(results: list[Result]) -> str:
    done = [r for r in results if r.ok]
    supported = [r for r in results if r.meta.get("supported", True) is not False]
    match = [r for r in supported if r.picked == r.comp_metric]
    refused = len(results) - len(supported)
    return (
        f"{len(done)}/{len(results)} as expected ({refused} of them unsupported tasks that must be refused), "
        f"{len(match)}/{len(supported)} metrics matching"
    )


# ----------------------------------------------------------------------------- main
def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Set the arena competitions up with agentk and tabulate the results.")
    p.add_argument("--arena", type=Path, required=True, help="folder of competitions, each with meta.json and public/")
    p.add_argument("--out", type=Path, default=Path("benchmarks/out"), help="workspaces go to <out>/<name>")
    p.add_argument("--only", nargs="+", metavar="NAME", help="run only these competitions")
    p.add_argument("--jobs", type=int, default=2, help="competitions set up in parallel")
    p.add_argument("--timeout", type=float, default=900, help="seconds per competition")
    args = p.parse_args(argv)

    arena, out = args.arena.resolve(), args.out.resolve()
    names = (
        sorted(d.name for d in arena.iterdir() if (d / "meta.json").is_file() and (d / "public").is_dir())
        if arena.is_dir()
        else []
    )
    if not names:
        print(f"arena.py: no competitions (meta.json + public/) in {arena}", file=sys.stderr)
        return 2
    if args.only:
        if unknown := sorted(set(args.only) - set(names)):
            print(f"arena.py: unknown competition(s) {', '.join(unknown)}; known: {', '.join(names)}", file=sys.stderr)
            return 2
        names = [n for n in names if n in args.only]
    out.mkdir(parents=True, exist_ok=True)

    print(f"setting up {len(names)} competition(s) from {arena} into {out} ({args.jobs} at a time)", flush=True)
    results: dict[str, Result] = {}
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = {pool.submit(run_one, arena, out, n, args.timeout): n for n in names}
        for fut in as_completed(futures):
            r = results[futures[fut]] = fut.result()
            print(
                f"  {'ok  ' if r.ok else 'FAIL'} {r.name}: exit {'timeout' if r.rc is None else r.rc} "
                f"in {r.seconds:.0f} s",
                flush=True,
            )

    ordered = [results[n] for n in names]
    rows = [cells(r) for r in ordered]
    line = summary(ordered)
    print()
    print(plain_table(rows))
    print()
    print(line)
    (out / "arena_setup.md").write_text(f"# agentk setup on {arena.name}\n\n{markdown_table(rows)}\n\n{line}\n")
    print(f"table written to {out / 'arena_setup.md'}")
    return 0 if all(r.ok for r in ordered) else 1


if __name__ == "__main__":
    sys.exit(main())
