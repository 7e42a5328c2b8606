"""Setup + solve (agentk.api) on the bundled examples and the arena competitions, graded on hidden answers.

    uv run python benchmarks/solve.py [--arena ../shared/arena-dev] [--examples] [--fixtures NAME ...]
                                      [--budget quick] [--only NAME ...]
                                      [--fresh] [--ablate features refit cv] [--before OUT]
    uv run python benchmarks/solve.py --compare BEFORE AFTER

Per competition it prints the grader's score of the workspace's submission, the score of the best constant
prediction (training prior / mean, formatted by the setup's own formatter), the perfect-answer score (the
metric's optimum: what the hidden answers themselves score), and the normalised score
(s - constant) / (perfect - constant): 0 is no better than a constant, 1 is perfect. The mean normalised
score over the arena is the issue's target (>= 0.85 with --budget quick on a 2-core CPU).
For the arena and the fixtures (graded by benchmarks/arena.py) it also prints the central 90 % of the normalised
score over bootstrap resamples of the test rows, and of the mean: on a test set of a few hundred rows, which rows
it holds moves the figure by more than most changes to the solver do.
A setup that is already done in <out>/<name> is reused (delete it to redo); solve resumes finished solutions
unless --fresh is given. The table also goes to <out>/solve.md.
--ablate switches parts of the solver off (the solver's --no-features / --no-refit / --no-cv), for the ablation table:
run it with --fresh into the same --out, once with and once without.
--before OUT adds a before -> after table against an earlier run's <OUT>/solve.json (e.g. made on an older commit).
--compare reads two finished runs' --out folders (the same competitions, two versions of agentk: a git worktree
each, run side by side so that both see the same load: AutoGluon stops at its time limit) and prints every
output of a setup or a solve that differs (benchmarks/run_diff.py: the maps, the generated programs, each solution's
plan, scores, predictions and submission, the final pick), for a change meant to keep behaviour.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "examples"))

from agentk import api  # noqa: E402
from agentk.core.errors import AgentFailed, BadInput  # noqa: E402
from agentk.core.state import load_state  # noqa: E402
from agentk.modalities import TABULAR  # noqa: E402
from agentk.workspace import Workspace  # noqa: E402
from benchmarks import run_diff  # noqa: E402
from benchmarks.arena import ARENA_METRICS, grader  # noqa: E402
from rag.memory import Memory  # noqa: E402
from tools.metrics import METRICS  # noqa: E402

COLUMNS = (
    "competition",
    "inputs",
    "metric",
    "best solution",
    "val",
    "cv",
    "test score",
    "constant",
    "perfect",
    "normalised",
    "normalised 90%",
    "setup s",
    "solve s",
)
ABLATIONS = ("features", "refit", "cv")


@dataclass
class Competition:
    name: str
    source: Path
    metric: str
    inputs: str
    grade: callable  # submission path -> score
    rows: callable | None = None  # submission path -> benchmarks.arena.RowScore, for the bootstrap of the test rows


def competitions(arena: Path | None, examples: bool, fixtures: list[str] = (), out_dir: Path | None = None):
    """The arena's competitions, the bundled examples, and generated fixtures (testing.competitions, written
    in the arena layout into <out_dir>/fixtures)."""
    out = []
    folders = [arena] if arena else []
    if fixtures:
        from testing.competitions import build

        built = out_dir / "fixtures"
        for name in fixtures:
            if not (built / name / "meta.json").exists():  # a fixture is deterministic: built once
                build(name, built)
        folders.append(built)
    for folder in folders:
        for meta_path in sorted(folder.glob("*/meta.json")):
            if folder != arena and meta_path.parent.name not in fixtures:
                continue
            meta = json.loads(meta_path.read_text())
            comp = meta_path.parent.resolve()
            metric = ARENA_METRICS.get(meta["metric"], meta["metric"])
            # the scored columns and row alignment as meta.json says (samples that repeat test inputs, samples
            # without ids)
            rows = lambda p, f=comp, m=metric, meta=meta: grader(  # noqa: E731
                p, f / meta["answers"], m, meta.get("targets"), meta.get("by_position", False)
            )
            out.append(
                Competition(
                    comp.name,
                    comp / "public",
                    metric,
                    "+".join(meta["modalities"]["inputs"]),
                    lambda p, rows=rows: rows(p)(None),
                    rows,
                )
            )
    if examples:
        from grade import grade as grade_example

        for meta_path in sorted((ROOT / "examples" / "_private").glob("*/meta.json")):
            meta = json.loads(meta_path.read_text())
            name = meta_path.parent.name
            out.append(
                Competition(
                    name,
                    ROOT / "examples" / name,
                    meta["metric"],
                    "+".join(meta.get("modalities", {}).get("inputs", [TABULAR.name])),
                    lambda p, n=name: grade_example(n, p),
                )
            )
    return out


def check_fixtures(parser: argparse.ArgumentParser, names: list[str]) -> None:
    """Exit 2 with one line when a --fixtures name is not a generated fixture."""
    from testing.competitions import registry

    if unknown := [n for n in names if n not in registry()]:
        parser.error(f"unknown fixture {unknown[0]!r}: `python -m testing.competitions --list` lists them")


def constant_submission(ws: Path, out: Path) -> Path:
    """The training targets' mean in model space (class priors, mean value) for every test row, through the
    setup's formatter: the best prediction that ignores the inputs."""
    from tools.submission import format_with_fallback
    from tools.task_data import TaskData

    cwd = os.getcwd()
    os.chdir(ws)  # generated code reads workspace-relative paths
    try:
        task = TaskData(ws)
        cols = []
        for j, o in enumerate(task.outputs):
            y = task.y[:, j]
            if o["kind"] == "multiclass":
                cols.append(np.bincount(y.astype(int), minlength=int(o["n_classes"])) / len(y))
            else:
                cols.append(np.array([y.mean()]))
        row = np.concatenate(cols)
        pred = np.tile(row, (len(task.test), 1))
        _, sub = format_with_fallback(ws, task.test.ids, task.transform.inverse_transform(pred))
    finally:
        os.chdir(cwd)
    sub.to_csv(out, index=False)
    return out


def perfect(metric: str) -> float:
    return 1.0 if METRICS[metric].higher_is_better else 0.0


BOOTSTRAP = 200  # resamples of the test rows for a score's interval


def normalised_resamples(ours, constant, top: float) -> np.ndarray:
    """The normalised score on BOOTSTRAP resamples of the test rows (the same rows for the submission and the
    constant; NaN where the metric cannot score a resample, e.g. an AUC column without positives): how much of a
    competition's figure is which few rows its test set happens to hold."""
    rng = np.random.default_rng(0)
    out = np.full(BOOTSTRAP, np.nan)
    for i in range(BOOTSTRAP):
        rows = rng.integers(0, ours.n, ours.n)
        try:
            s, k = ours(rows), constant(rows)
        except Exception:  # noqa: BLE001, S112 - a resample the metric cannot score
            continue
        if np.isfinite(s) and np.isfinite(k) and k != top:
            out[i] = (s - k) / (top - k)
    return out


def interval(draws: np.ndarray) -> tuple[float, float] | None:
    """The central 90 % of the finite resampled scores."""
    draws = np.asarray(draws, float)
    finite = draws[np.isfinite(draws)]
    return tuple(np.percentile(finite, [5, 95]).tolist()) if len(finite) else None


def mean_interval(per_competition: list) -> tuple[float, float] | None:
    """The 90 % interval of a mean normalised score: competitions' test sets are independent, so the b-th finite
    resample of each makes one joint draw (a competition with fewer finite ones reuses them in turn). None when
    one has none."""
    finite = [d[np.isfinite(d)] for d in (np.asarray(x, float) for x in per_competition)]
    if not finite or not all(len(d) for d in finite):
        return None
    return interval(np.mean([np.resize(d, BOOTSTRAP) for d in finite], axis=0))


def set_up(c: Competition, out: Path) -> Workspace:
    """The competition's finished setup in out/<name>, set up now unless it is there (BadInput or AgentFailed when
    it fails)."""
    ws = Workspace(out / c.name)
    state = load_state(ws.setup_state)
    if not (state and state.status == "done"):
        # a long-term memory of its own, never the user's
        api.run_setup(c.source, ws.root, force=True, memory=Memory(out / "memory" / c.name))
    return ws


def run(c: Competition, out: Path, budget: str, fresh: bool, ablate: tuple[str, ...] = ()) -> dict:
    try:
        ws = set_up(c, out)
    except (BadInput, AgentFailed) as exc:
        return {"competition": c.name, "error": f"setup exit {exc.exit_code}: {api.one_line(exc)}"}
    if fresh:
        for d in ws.solutions.glob("*"):
            if d.name not in (Workspace.LIGHT, Workspace.SPLIT):
                shutil.rmtree(d) if d.is_dir() else d.unlink()
    t0 = time.monotonic()
    try:
        if ablate:  # the solver itself, with parts switched off (what `agentk solve` runs, in the same child form)
            flags = [f"--no-{a}" for a in ablate]
            cmd = [sys.executable, "-m", "agentk.solve.solver", str(ws.root), "--budget", budget, *flags]
            subprocess.run(cmd, cwd=ws.root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
            summary = json.loads(ws.solve_summary.read_text())
            if summary.get("status") != "done":
                return {"competition": c.name, "error": f"solve {summary.get('status')}: {summary.get('error')}"}
        else:
            with open(os.devnull, "w") as quiet:  # the solver's progress; the table is what this reports
                summary = api.run_solve(ws.root, budget, output=quiet).summary
    except (BadInput, AgentFailed) as exc:
        return {"competition": c.name, "error": f"solve exit {exc.exit_code}: {api.one_line(exc)}"}
    seconds = time.monotonic() - t0
    best = next(s for s in summary["solutions"] if s["id"] == summary["best"])
    try:  # a submission that cannot be graded is one competition's row, not the end of the run
        score = c.grade(ws.submission)
    except ValueError as exc:
        return {"competition": c.name, "error": f"grading: {exc}"}
    try:
        constant = c.grade(constant_submission(ws.root, ws.root / "constant_submission.csv"))
    except ValueError as exc:  # the formatter's SubmissionMismatch among them
        return {"competition": c.name, "error": f"constant submission: {exc}"}
    top = perfect(c.metric)
    draws = (
        normalised_resamples(c.rows(ws.submission), c.rows(ws.root / "constant_submission.csv"), top)
        if c.rows
        else None
    )
    return {
        "competition": c.name,
        "inputs": c.inputs,
        "metric": c.metric,
        "best solution": best["id"],
        "val": best["val_score"],
        "cv": best.get("cv_score"),  # a small table's solutions are chosen by their cross-validated score
        "test score": score,
        "constant": constant,
        "perfect": top,
        "normalised": (score - constant) / (top - constant) if top != constant else float("nan"),
        "normalised 90%": interval(draws) if draws is not None else None,
        "normalised resamples": draws.tolist() if draws is not None else None,
        "setup s": float(load_state(ws.setup_state).seconds),
        "solve s": seconds,
        "solutions": summary["solutions"],
    }


def compared(before: list[dict], after: list[dict]) -> list[str]:
    """Markdown lines: per competition of `after`, each column as 'before -> after'; then the mean normalised
    score of each side over the competitions both scored."""
    old = {r["competition"]: r for r in before}
    keys = ("best solution", "val", "test score", "normalised", "solve s")
    lines = ["| competition | " + " | ".join(f"{k}: before -> after" for k in keys) + " |", "|" + "---|" * 6]
    for r in after:
        b = old.get(r["competition"], {})
        cells = [f"{fmt(b.get(k, b.get('error', '-')))} -> {fmt(r.get(k, r.get('error', '-')))}" for k in keys]
        lines.append(f"| {r['competition']} | " + " | ".join(cells) + " |")
    both = [
        (old[r["competition"]]["normalised"], r["normalised"])
        for r in after
        if "normalised" in r and "normalised" in old.get(r["competition"], {})
    ]
    if both:
        b, a = np.array(both).T
        lines.append(f"\nmean normalised over {len(both)} competitions: before {b.mean():.3f} -> after {a.mean():.3f}")
    return lines


def _places(run: Path, name: str) -> dict[Path, str]:
    """The folders a workspace's files may name that differ from one version's run to the other's: the run's, and the
    competition's source (a version's own checkout of examples/)."""
    meta = run / name / "task" / "meta.json"
    source = json.loads(meta.read_text()).get("source") if meta.is_file() else None
    return {run: "<run>", **({Path(source): "<source>"} if source else {})}


def compare(before: Path, after: Path) -> list[str]:
    """Two runs of the same competitions side by side: a line per difference, then the tally."""
    runs = [{r["competition"]: r for r in json.loads((d / "solve.json").read_text())} for d in (before, after)]
    names = sorted(set(runs[0]) & set(runs[1]))
    lines, reordered = [], []
    for name in names:
        failed = ["error" in run[name] for run in runs]
        if failed[0] != failed[1]:
            lines.append(f"{name}: fails {'before' if failed[0] else 'after'} only")
        found, order = run_diff.differences(
            name, *(run_diff.outputs(d / name, _places(d, name)) for d in (before, after))
        )
        lines += found
        reordered += order
    return [
        *lines,
        *reordered,
        f"{len(names)} competitions: {len(lines)} differences, {len(reordered)} programs differing in a dict's key order",
    ]


def fmt(v) -> str:
    if isinstance(v, (list, tuple)):  # an interval
        return " to ".join(f"{x:.3f}" for x in v)
    return "-" if v is None else f"{v:.4g}" if isinstance(v, float) else str(v)


def markdown(rows: list[dict], columns=COLUMNS) -> str:
    """The rows as a markdown table of these columns (a failed row's error in its best-solution cell)."""
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for r in rows:
        cells = (fmt(r.get(k, r.get("error", "-") if k == "best solution" else "-")) for k in columns)
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def beside_baselines(
    doc: str, table: str, fixtures: tuple[str, ...], baselines, names: tuple[str, ...], argv=None
) -> int:
    """The command of a benchmark that runs setup + solve on generated fixtures and grades what a user would run
    instead beside agentk: `baselines(competition, workspace)` writes their submissions and returns {column: path};
    `names` are those columns, placed after the test score. The table goes to <out>/<table>.md."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--only", nargs="+", metavar="NAME", choices=fixtures)
    parser.add_argument("--out", type=Path, default=Path(f"bench-{table.replace('_', '-')}"))
    parser.add_argument("--budget", default="quick")
    parser.add_argument("--fresh", action="store_true", help="rebuild every solution (keeps the setups)")
    args = parser.parse_args(argv)
    rows = []
    for c in competitions(None, False, list(args.only or fixtures), args.out):
        print(f"… {c.name}", flush=True)
        row = run(c, args.out, args.budget, args.fresh)
        if "error" not in row:
            row.update({name: c.grade(path) for name, path in baselines(c, args.out / c.name).items()})
        rows.append(row)
    text = markdown(rows, (*COLUMNS[:7], *names, *COLUMNS[7:]))
    print(text)
    (args.out / f"{table}.md").write_text(text + "\n")
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--arena", type=Path, help="folder of competitions with meta.json, public/ and private/")
    p.add_argument("--examples", action="store_true", help="also the bundled examples/")
    p.add_argument("--fixtures", nargs="+", default=[], metavar="NAME", help="also these generated fixtures")
    p.add_argument("--budget", default="quick")
    p.add_argument("--only", nargs="+", metavar="NAME")
    p.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "out" / "solve")
    p.add_argument("--fresh", action="store_true", help="rebuild every solution (keeps the setups)")
    p.add_argument("--ablate", nargs="+", choices=ABLATIONS, default=(), help="solve without these parts")
    p.add_argument("--before", type=Path, metavar="OUT", help="an earlier run's --out: print before -> after too")
    p.add_argument("--compare", type=Path, nargs=2, metavar=("BEFORE", "AFTER"), help="compare two runs' --out")
    args = p.parse_args(argv)
    if args.compare:
        return run_diff.command(p, args.compare, "solve.json", compare)
    if not args.arena and not args.examples and not args.fixtures:
        p.error("give --arena, --examples and/or --fixtures")
    check_fixtures(p, args.fixtures)
    if args.before and not (args.before / "solve.json").is_file():
        p.error(f"--before {args.before}: no solve.json there; give the --out folder of a finished run")
    comps = competitions(args.arena, args.examples, args.fixtures, args.out.resolve())
    comps = [c for c in comps if not args.only or c.name in args.only]
    args.out.mkdir(parents=True, exist_ok=True)
    rows = []
    for c in comps:
        print(f"… {c.name}", file=sys.stderr, flush=True)
        r = run(c, args.out.resolve(), args.budget, args.fresh, tuple(args.ablate))
        rows.append(r)
        print(f"  {r.get('error') or 'normalised ' + fmt(r['normalised'])}", file=sys.stderr, flush=True)
    lines = [markdown(rows)]
    arena_names = {c.name for c in comps if args.arena and c.source.parent.parent == args.arena.resolve()}
    for label, names in (("arena", arena_names), ("all", {r["competition"] for r in rows})):
        scored = [r for r in rows if r["competition"] in names and "normalised" in r]
        if scored:
            draws = [r.get("normalised resamples") for r in scored]
            spread = mean_interval(draws) if all(d is not None for d in draws) else None  # examples have none
            lines.append(
                f"\nmean normalised score ({label}, {len(scored)} of {len(names)} competitions): "
                f"{np.mean([r['normalised'] for r in scored]):.3f}"
                + (f" (90 % of bootstrap resamples of the test rows: {fmt(spread)})" if spread else "")
            )
    (args.out / "solve.json").write_text(json.dumps(rows, indent=2, default=str))
    if args.before:
        lines += ["", *compared(json.loads((args.before / "solve.json").read_text()), rows)]
    table = "\n".join(lines)
    print(table)
    (args.out / "solve.md").write_text(table + "\n")
    return 0 if all("error" not in r for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
