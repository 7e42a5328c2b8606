"""Set up (and optionally solve) the kaggle-layouts corpus with agentk, graded by the corpus' own grader.

    uv run python benchmarks/kaggle_layouts.py [--set dev,zoo2 | all] [--only NAME ...] [--solve]
        [--out benchmarks/out/kaggle_layouts] [--corpus ../shared/kaggle-layouts] [--mlebench-git MIRROR]
        [--jobs 1] [--timeout 1800] [--solve-timeout 3600] [--force] [--rebuild]

The corpus (../shared/kaggle-layouts: 64 stand-ins of famous Kaggle competitions in the sets dev, heldout, zoo
and zoo2) is built into <out>/corpus with its build.py (`--set S --out DIR`; the mle-bench based sets dev,
heldout and zoo also need `--mlebench-git`, a git mirror of openai/mle-bench, a bare one is fine; zoo2 needs
nothing). Without a mirror (--mlebench-git, $MLEBENCH_GIT, or ../.mirror/openai+mle-bench/repo when present)
only zoo2 runs by default.

For every competition of the chosen sets, in order:
  1. `agentk setup <corpus>/<comp>/public --workspace <out>/ws/<comp> --policy expert` in a child process of its
     own (benchmarks/isolated.py, started over as --force, killed with everything it started after --timeout
     seconds, with a long-term memory of its own): exit code, seconds and the one-line reason. A competition
     meta.json marks "supported": false passes when it is refused: exit 2 and a line `unsupported task: ...`.
  2. The setup's (intermediate, light-solve) <ws>/submission.csv is kept as <out>/subs/<comp>/setup.csv and
     graded with the corpus' grade.py (`--arena <out>/corpus --comp C --submission F`), as are its constant
     (`--constant`: the sample submission) and its oracle (`--oracle`: the answers), once per competition.
     normalised = (score - constant) / (oracle - constant): 0 is the constant, 1 the answers, < 0 worse than
     the constant, whichever way the metric goes.
  3. With --solve, on a competition that set up: `agentk solve --workspace <ws> --budget quick` in a child
     process (killed after --solve-timeout seconds); while it runs <ws>/submission.csv is polled every
     --poll seconds and each new version copied to <out>/subs/<comp>/solve-NNN.csv. The final submission and
     every copy are graded, so the table says whether any submission the solve ever wrote scored below the
     constant (the worst normalised snapshot).

Prints a per-set table (pass@1: supported competitions that set up with a valid submission; refusals of the
unsupported ones; valid submissions; mean normalised score of the valid ones; how many scored below the
constant) and a per-competition table; writes them to <out>/kaggle_layouts.md and the records to
<out>/kaggle_layouts.json. Resumable: a competition with a record there is skipped (with --solve, one whose
record has no solve yet only runs the solve) unless --force. A set whose corpus is built is not rebuilt unless
--rebuild.

With zoo2 among the sets, a third table sets agentk beside the corpus' hand-written quick scikit-learn models
(zoo2_quick.py, the "competent user with scikit-learn" bar, ~20 s; run once, its JSON lines kept in
<out>/zoo2_quick.jsonl until --rebuild): per competition agentk's setup, final (the solve's when it ran) and
worst-snapshot normalised scores, the quick model's, and whether agentk's final is at or above it; per set how
many are, and the means.

Exit status 0 when every supported competition set up with a valid submission and every unsupported one was
refused; 1 otherwise; 2 on bad arguments.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.arena import _reason  # noqa: E402
from benchmarks.fault_injection import markdown_table, plain_table  # noqa: E402
from benchmarks.isolated import setup_isolated  # noqa: E402

SETS = ("dev", "heldout", "zoo", "zoo2")
MIRRORLESS = ("zoo2",)  # the sets build.py and grade.py make without an mle-bench mirror
DEFAULT_CORPUS = ROOT.parent / "shared" / "kaggle-layouts"
DEFAULT_MIRROR = ROOT.parent / ".mirror" / "openai+mle-bench" / "repo"
GRADE_TIMEOUT = 900.0
QUICK_TIMEOUT = 3600.0  # zoo2_quick.py takes ~20 s on idle cores, more than 15 min on loaded ones


# ----------------------------------------------------------------------------- pure helpers
def normalised(score: float | None, constant: float | None, oracle: float | None) -> float | None:
    """(score - constant) / (oracle - constant): 0 the constant, 1 the oracle, negative below the constant,
    whichever way the metric goes; None when a figure is missing or the oracle ties the constant."""
    if score is None or constant is None or oracle is None or oracle == constant:
        return None
    return (score - constant) / (oracle - constant)


def refused(rc: int | None, stderr: str) -> bool:
    """Refused as an unsupported task: exit 2 with the one-line reason `unsupported task: ...`."""
    return rc == 2 and _reason(stderr).startswith("unsupported task:")


def supported(rec: dict) -> bool:
    return rec.get("supported", True) is not False


def passed(rec: dict) -> bool:
    """pass@1: a supported competition set up (exit 0) with a valid submission; an unsupported one refused."""
    if not supported(rec):
        return bool(rec.get("refused"))
    return rec.get("setup_rc") == 0 and bool((rec.get("setup_grade") or {}).get("valid"))


def final_normalised(rec: dict) -> float | None:
    """agentk's last word: the solve's final submission normalised when the solve graded one, else the setup's."""
    if rec.get("setup_rc") != 0:
        return None
    final = rec.get("solve") or {}
    return final.get("normalised") if final.get("grade") else rec.get("setup_normalised")


def handled(rec: dict) -> bool:
    """The issue's goal: set up with a valid submission that beats the constant (the solve's final one when it
    ran), or refused by kind. An unsupported kind agentk takes on on purpose counts only above the constant."""
    if not supported(rec) and rec.get("refused"):
        return True
    norm = final_normalised(rec)
    return norm is not None and norm > 0


def grade_line(stdout: str) -> dict:
    """The last JSON line grade.py printed: {"competition", "valid", "score", "error"}."""
    for line in reversed(stdout.splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                return json.loads(line)
            except ValueError:
                continue
    return {"valid": False, "score": None, "error": (stdout.strip().splitlines() or ["no output"])[-1][:300]}


def score_of(grade: dict | None) -> float | None:
    return grade["score"] if grade and grade.get("valid") and grade.get("score") is not None else None


def add_normalised(rec: dict) -> dict:
    """Fills the normalised scores of a record from its grades (setup, solve, each snapshot)."""
    c, o = score_of(rec.get("constant")), score_of(rec.get("oracle"))
    rec["setup_normalised"] = normalised(score_of(rec.get("setup_grade")), c, o)
    solve = rec.get("solve")
    if solve:
        solve["normalised"] = normalised(score_of(solve.get("grade")), c, o)
        for snap in solve.get("snapshots", []):
            snap["normalised"] = normalised(score_of(snap.get("grade")), c, o)
        norms = [s["normalised"] for s in solve.get("snapshots", []) if s.get("normalised") is not None]
        solve["worst_snapshot_normalised"] = min(norms) if norms else None
        solve["invalid_snapshots"] = sum(not (s.get("grade") or {}).get("valid") for s in solve.get("snapshots", []))
    return rec


def _mean(xs: list[float]) -> float | None:
    return sum(xs) / len(xs) if xs else None


def _fmt(x, digits: int = 4) -> str:
    if x is None:
        return "-"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, float):
        return f"{x:.{digits}g}"
    return str(x)


SET_HEADER = ["set", "comps", "pass@1", "refused", "handled", "valid", "mean norm.", "below const."]
SOLVE_SET_HEADER = ["solved", "solve valid", "solve mean norm.", "solve below const.", "worst snapshot", "snaps below"]


def set_rows(records: list[dict], with_solve: bool) -> tuple[list[str], list[list[str]]]:
    """The per-set table (and an "all" row): pass@1 over the supported competitions, refusals over the
    unsupported ones, handled (set up above the constant, or refused by kind) over all, valid setup submissions over all, the mean normalised score of the valid ones and how many
    of them scored below the constant; with_solve: the same for the solve's final submission, the worst
    normalised snapshot and how many competitions had a snapshot below the constant."""
    groups: dict[str, list[dict]] = {}
    for r in records:
        groups.setdefault(r.get("set", "-"), []).append(r)
    order = [s for s in SETS if s in groups] + sorted(set(groups) - set(SETS))
    if len(order) > 1:
        groups["all"] = records
        order.append("all")
    rows = []
    for s in order:
        rs = groups[s]
        sup = [r for r in rs if supported(r)]
        uns = [r for r in rs if not supported(r)]
        norms = [r["setup_normalised"] for r in rs if r.get("setup_normalised") is not None]
        row = [
            s,
            str(len(rs)),
            f"{sum(passed(r) for r in sup)}/{len(sup)}",
            f"{sum(bool(r.get('refused')) for r in uns)}/{len(uns)}",
            f"{sum(handled(r) for r in rs)}/{len(rs)}",
            f"{sum(bool((r.get('setup_grade') or {}).get('valid')) for r in rs)}/{len(rs)}",
            _fmt(_mean(norms), 3),
            str(sum(n < 0 for n in norms)),
        ]
        if with_solve:
            solves = [r["solve"] for r in rs if r.get("solve")]
            snorms = [x["normalised"] for x in solves if x.get("normalised") is not None]
            worst = [x["worst_snapshot_normalised"] for x in solves if x.get("worst_snapshot_normalised") is not None]
            row += [
                f"{sum(x.get('rc') == 0 for x in solves)}/{len(solves)}",
                f"{sum(bool((x.get('grade') or {}).get('valid')) for x in solves)}/{len(solves)}",
                _fmt(_mean(snorms), 3),
                str(sum(n < 0 for n in snorms)),
                _fmt(min(worst) if worst else None, 3),
                str(sum(n < 0 for n in worst)),
            ]
        rows.append(row)
    return SET_HEADER + (SOLVE_SET_HEADER if with_solve else []), rows


COMP_HEADER = ["competition", "set", "sup.", "setup exit", "setup s", "score", "constant", "oracle", "norm."]
SOLVE_COMP_HEADER = ["solve exit", "solve s", "solve score", "solve norm.", "snaps", "worst snap"]


def comp_rows(records: list[dict], with_solve: bool) -> tuple[list[str], list[list[str]]]:
    """One row per competition: the setup's exit and seconds, its submission's score beside the constant and the
    oracle, normalised (or why it has no score); with_solve: the solve's, and its worst snapshot."""
    rows = []
    for r in records:
        g = r.get("setup_grade") or {}
        exit_ = "timeout" if r.get("setup_timed_out") else _fmt(r.get("setup_rc"))
        if not supported(r):
            exit_ += " (refused)" if r.get("refused") else " (NOT refused)"
        score = _fmt(score_of(g)) if g.get("valid") else ("invalid" if g else "-")
        row = [
            r["competition"],
            r.get("set", "-"),
            "yes" if supported(r) else "no",
            exit_,
            f"{r['setup_seconds']:.0f}" if r.get("setup_seconds") is not None else "-",
            score,
            _fmt(score_of(r.get("constant"))),
            _fmt(score_of(r.get("oracle"))),
            _fmt(r.get("setup_normalised"), 3),
        ]
        if with_solve:
            x = r.get("solve") or {}
            sg = x.get("grade") or {}
            row += [
                ("timeout" if x.get("timed_out") else _fmt(x.get("rc"))) if x else "-",
                f"{x['seconds']:.0f}" if x.get("seconds") is not None else "-",
                (_fmt(score_of(sg)) if sg.get("valid") else "invalid") if sg else "-",
                _fmt(x.get("normalised"), 3),
                str(len(x.get("snapshots", []))) if x else "-",
                _fmt(x.get("worst_snapshot_normalised"), 3),
            ]
        rows.append(row)
    return COMP_HEADER + (SOLVE_COMP_HEADER if with_solve else []), rows


def quick_scores(lines: str) -> dict[str, float | None]:
    """zoo2_quick.py's output: competition -> the quick model's normalised score (None when its submission was
    invalid)."""
    scores = {}
    for line in lines.splitlines():
        if line.strip().startswith("{"):
            res = json.loads(line)
            scores[res["competition"]] = res.get("normalised") if res.get("valid") else None
    return scores


QUICK_HEADER = ["competition", "set", "setup norm.", "final norm.", "worst snapshot", "quick model", "at or above"]


def quick_rows(records: list[dict], quick: dict[str, float | None]) -> tuple[list[str], list[list[str]], list[str]]:
    """agentk beside the quick model, on the competitions that have one: per competition the setup's, the final
    (final_normalised) and the worst snapshot's normalised score, the quick model's, and whether the final is at
    or above it (no when agentk has no score; yes when the quick model has none); per set one line, how many are
    at or above and the mean of each column over the competitions with that figure."""
    rows, lines, groups = [], [], {}
    for r in records:
        if r["competition"] not in quick:
            continue
        final, bar = final_normalised(r), quick[r["competition"]]
        at = final is not None and (bar is None or final >= bar)
        worst = (r.get("solve") or {}).get("worst_snapshot_normalised")
        figures = {"setup": r.get("setup_normalised"), "final": final, "worst snapshot": worst, "quick model": bar}
        groups.setdefault(r.get("set", "-"), []).append((at, figures))
        rows.append([r["competition"], r.get("set", "-"), *(_fmt(x, 3) for x in figures.values()), _fmt(at)])
    for name, group in groups.items():
        means = []
        for key in group[0][1]:
            xs = [f[key] for _, f in group if f[key] is not None]
            means.append(f"{key} {_fmt(_mean(xs), 3)}" + (f" ({len(xs)})" if len(xs) < len(group) else ""))
        lines.append(
            f"{name}: at or above the quick model: {sum(at for at, _ in group)} of {len(group)}; "
            f"mean normalised: {', '.join(means)}"
        )
    return QUICK_HEADER, rows, lines


def failures(records: list[dict]) -> list[str]:
    """One line per competition that did not do what it should, or whose submission scored below the constant."""
    out = []
    for r in records:
        name, why = r["competition"], r.get("setup_reason") or ""
        g = r.get("setup_grade") or {}
        if not supported(r):
            if not r.get("refused"):
                out.append(f"{name}: unsupported but not refused (exit {r.get('setup_rc')}) {why}".rstrip())
            continue
        if r.get("setup_rc") != 0:
            out.append(f"{name}: setup exit {'timeout' if r.get('setup_timed_out') else r.get('setup_rc')}: {why}")
        elif not g.get("valid"):
            out.append(f"{name}: setup submission invalid: {g.get('error') or 'no submission'}")
        elif r.get("setup_normalised") is not None and r["setup_normalised"] < 0:
            out.append(f"{name}: setup submission below the constant (normalised {r['setup_normalised']:.3f})")
        x = r.get("solve") or {}
        if x and x.get("rc") != 0:
            out.append(f"{name}: solve exit {'timeout' if x.get('timed_out') else x.get('rc')}: {x.get('reason')}")
        if x.get("worst_snapshot_normalised") is not None and x["worst_snapshot_normalised"] < 0:
            out.append(f"{name}: a solve snapshot below the constant (worst {x['worst_snapshot_normalised']:.3f})")
    return out


def report(records: list[dict], with_solve: bool, quick: dict[str, float | None] | None = None) -> tuple[str, str]:
    """(plain text, markdown) of the per-set table, the per-competition table, agentk beside the quick models
    (where `quick` has any of these competitions) and the failures."""
    sh, sr = set_rows(records, with_solve)
    ch, cr = comp_rows(records, with_solve)
    qh, qr, ql = quick_rows(records, quick or {})
    fails = failures(records)
    plain = [plain_table(sh, sr), plain_table(ch, cr)]
    md = ["# agentk on kaggle-layouts", "## Per set", markdown_table(sh, sr), "## Per competition"]
    md.append(markdown_table(ch, cr))
    if qr:
        plain.append(plain_table(qh, qr) + "\n" + "\n".join(ql))
        md += ["## Beside the quick scikit-learn models", markdown_table(qh, qr), "\n".join(f"- {x}" for x in ql)]
    plain.append("\n".join(fails) or "no failures")
    md += ["## Failures and scores below the constant", "\n".join(f"- {f}" for f in fails) or "none"]
    return "\n\n".join(plain), "\n\n".join(md) + "\n"


# ----------------------------------------------------------------------------- corpus
def build_set(corpus: Path, set_name: str, dest: Path, mirror: Path | None, rebuild: bool) -> None:
    """Builds one set of the corpus into dest (build.py --set S --out dest), unless built before."""
    stamp = dest / f".built-{set_name}"
    if stamp.is_file() and not rebuild:
        return
    dest.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, str(corpus / "build.py"), "--set", set_name, "--out", str(dest)]
    if set_name not in MIRRORLESS:
        cmd += ["--mlebench-git", str(mirror)]
    print(f"building {set_name} into {dest}", flush=True)
    t0 = time.monotonic()
    run = subprocess.run(cmd, cwd=corpus, env=_env(), capture_output=True, text=True)
    if run.returncode != 0:
        raise SystemExit(f"kaggle_layouts.py: building {set_name} failed: {(run.stderr or run.stdout).strip()[-800:]}")
    stamp.write_text(run.stdout)
    print(f"  built in {time.monotonic() - t0:.0f} s", flush=True)


def competitions(dest: Path, sets: list[str]) -> list[tuple[str, dict]]:
    """(name, meta) of the built competitions of these sets, by set then name."""
    found = []
    for meta_path in sorted(dest.glob("*/meta.json")):
        meta = json.loads(meta_path.read_text())
        if meta.get("set") in sets and (meta_path.parent / "public").is_dir():
            found.append((meta_path.parent.name, meta))
    return sorted(found, key=lambda nm: (sets.index(nm[1]["set"]), nm[0]))


def _env(**extra: str) -> dict[str, str]:
    return {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", **extra}


def grade(corpus: Path, dest: Path, comp: str, mirror: Path | None, what: str | Path) -> dict:
    """grade.py's verdict on a submission file, or on "constant" / "oracle"."""
    cmd = [sys.executable, str(corpus / "grade.py"), "--arena", str(dest), "--comp", comp]
    cmd += [f"--{what}"] if what in ("constant", "oracle") else ["--submission", str(what)]
    if mirror is not None:
        cmd += ["--mlebench-git", str(mirror)]
    try:
        run = subprocess.run(cmd, cwd=corpus, env=_env(), capture_output=True, text=True, timeout=GRADE_TIMEOUT)
    except subprocess.TimeoutExpired:
        return {"competition": comp, "valid": False, "score": None, "error": f"grading timed out ({GRADE_TIMEOUT} s)"}
    res = grade_line(run.stdout)
    if res.get("error") is None and not res.get("valid") and run.stderr.strip():
        res["error"] = run.stderr.strip().splitlines()[-1][:300]
    return res


def run_quick(corpus: Path, dest: Path, out: Path, rerun: bool) -> dict[str, float | None]:
    """The zoo2 quick models' normalised scores: zoo2_quick.py on the built corpus with this Python, once (its
    lines kept in <out>/zoo2_quick.jsonl, its submissions in <out>/quick); {} with a line when it cannot run."""
    cache = out / "zoo2_quick.jsonl"
    if rerun or not cache.is_file():
        script = corpus / "zoo2_quick.py"
        if not script.is_file():
            print(f"no quick models: {script} is missing", flush=True)
            return {}
        cmd = [sys.executable, str(script), "--arena", str(dest), "--comp", "all"]
        cmd += ["--write-submission", str(out / "quick")]
        print("running the zoo2 quick models (zoo2_quick.py)", flush=True)
        try:
            run = subprocess.run(cmd, cwd=corpus, env=_env(), capture_output=True, text=True, timeout=QUICK_TIMEOUT)
        except subprocess.TimeoutExpired:
            print(f"no quick models: zoo2_quick.py timed out ({QUICK_TIMEOUT:.0f} s)", flush=True)
            return {}
        if not quick_scores(run.stdout):
            print(f"no quick models: {(run.stderr or run.stdout).strip()[-300:]}", flush=True)
            return {}
        cache.write_text(run.stdout)
    return quick_scores(cache.read_text())


# ----------------------------------------------------------------------------- runs
def _stat(path: Path) -> tuple[float, int] | None:
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return st.st_mtime_ns, st.st_size


def solve_watched(
    ws: Path, budget: str, timeout: float, env: dict[str, str], keep: Path, poll: float
) -> tuple[int | None, float, str, list[dict]]:
    """`agentk solve --workspace ws --budget B` in a child process (its own process group, killed after timeout
    seconds); <ws>/submission.csv is polled every `poll` seconds and each version it takes while the solve runs is
    copied to keep/solve-NNN.csv once it stays still for a moment. Returns (rc or None on timeout, seconds,
    stderr, snapshots [{file, seconds}])."""
    sub = ws / "submission.csv"
    cmd = [sys.executable, "-m", "agentk", "solve", "--workspace", str(ws), "--budget", budget]
    snaps: list[dict] = []
    seen = _stat(sub)  # the setup's submission: not a snapshot of the solve
    t0 = time.monotonic()
    proc = subprocess.Popen(
        cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    err: list[str] = []
    reader = threading.Thread(target=lambda: err.append(proc.stderr.read()), daemon=True)
    reader.start()

    def snapshot() -> None:
        nonlocal seen
        now = _stat(sub)
        if now is None or now == seen:
            return
        time.sleep(0.5)  # let a write finish: copy a version that held still
        if _stat(sub) != now:
            return
        target = keep / f"solve-{len(snaps) + 1:03d}.csv"
        try:
            shutil.copy2(sub, target)
        except FileNotFoundError:
            return
        seen = now
        snaps.append({"file": str(target), "seconds": round(time.monotonic() - t0, 1)})

    rc: int | None = None
    while True:
        try:
            rc = proc.wait(timeout=poll)
            break
        except subprocess.TimeoutExpired:
            snapshot()
            if time.monotonic() - t0 > timeout:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                rc = None
                break
    seconds = time.monotonic() - t0
    snapshot()  # the last version, written just before the solve ended
    reader.join(timeout=10)
    return rc, seconds, "".join(err), snaps


def run_one(name: str, meta: dict, args, dest: Path, out: Path, previous: dict | None, log) -> dict:
    """The record of one competition: its setup (unless the previous record has it) and, with --solve, its solve."""
    mirror = None if meta.get("set") in MIRRORLESS else args.mlebench_git
    ws = out / "ws" / name
    keep = out / "subs" / name
    env = _env(COLUMNS="1000", NO_COLOR="1", AGENTK_MEMORY=str(out / "memory" / name))
    rec = previous
    if rec is None:
        rec = {
            "competition": name,
            "set": meta.get("set"),
            "metric": meta.get("metric"),
            "lower_is_better": meta.get("lower_is_better"),
            "supported": meta.get("supported", True),
            "task_type": meta.get("task_type"),
            "inputs": meta.get("modalities", {}).get("inputs"),
            "workspace": str(ws),
        }
        if keep.exists():
            shutil.rmtree(keep)
        keep.mkdir(parents=True)
        started = time.time()
        run = setup_isolated(dest / name / "public", ws, args.timeout, env=env, flags=["--policy", "expert"])
        rec.update(
            setup_rc=run.rc,
            setup_timed_out=run.rc is None,
            setup_seconds=round(run.seconds, 1),
            setup_reason=_reason(run.stderr) if run.rc != 0 else "",
            refused=refused(run.rc, run.stderr),
        )
        if run.rc is None:
            rec["setup_reason"] = f"timed out after {args.timeout:.0f} s"
        state = ws / "setup.json"
        if run.rc != 2 and state.is_file() and state.stat().st_mtime >= started:
            rec["setup_status"] = json.loads(state.read_text()).get("status")
        sub = ws / "submission.csv"
        # a refused setup writes nothing: a submission older than this run is stale
        if run.rc != 2 and sub.is_file() and sub.stat().st_mtime >= started:
            shutil.copy2(sub, keep / "setup.csv")
            rec["setup_grade"] = grade(args.corpus, dest, name, mirror, keep / "setup.csv")
        rec["constant"] = grade(args.corpus, dest, name, mirror, "constant")
        rec["oracle"] = grade(args.corpus, dest, name, mirror, "oracle")
        add_normalised(rec)
        log(
            f"  {'ok  ' if passed(rec) else 'FAIL'} {name}: setup exit "
            f"{'timeout' if run.rc is None else run.rc} in {run.seconds:.0f} s, "
            f"normalised {_fmt(rec.get('setup_normalised'), 3)}"
            + (f" ({rec['setup_reason'][:120]})" if rec["setup_reason"] else "")
        )
    if args.solve and "solve" not in rec and rec.get("setup_rc") == 0:
        keep.mkdir(parents=True, exist_ok=True)
        for old in keep.glob("solve-*.csv"):
            old.unlink()
        rc, seconds, stderr, snaps = solve_watched(ws, args.budget, args.solve_timeout, env, keep, args.poll)
        solve = {
            "rc": rc,
            "timed_out": rc is None,
            "seconds": round(seconds, 1),
            "reason": _reason(stderr) if rc != 0 else "",
            "snapshots": snaps,
        }
        for snap in snaps:
            snap["grade"] = grade(args.corpus, dest, name, mirror, snap["file"])
        if snaps:  # the final submission is the last version the solve wrote
            solve["grade"] = snaps[-1]["grade"]
        rec["solve"] = solve
        add_normalised(rec)
        log(
            f"  solve {name}: exit {'timeout' if rc is None else rc} in {seconds:.0f} s, "
            f"normalised {_fmt(solve.get('normalised'), 3)}, {len(snaps)} snapshot(s), worst "
            f"{_fmt(solve.get('worst_snapshot_normalised'), 3)}"
        )
    return rec


# ----------------------------------------------------------------------------- main
def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__
    )
    p.add_argument("--set", default=None, help=f"comma list of {', '.join(SETS)}, or all [default: all with a "
                   "mirror, else zoo2]")  # fmt: skip
    p.add_argument("--only", nargs="+", metavar="NAME", help="run only these competitions (of the chosen sets)")
    p.add_argument("--solve", action="store_true", help="also solve each competition that set up (--budget)")
    p.add_argument("--budget", default="quick", help="the solve's budget [default: quick]")
    p.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "out" / "kaggle_layouts")
    p.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help="the kaggle-layouts folder (build.py, grade.py)")
    p.add_argument("--mlebench-git", type=Path, default=None, help="git mirror of openai/mle-bench (bare is fine) "
                   f"[default: $MLEBENCH_GIT, else {DEFAULT_MIRROR} if present]")  # fmt: skip
    p.add_argument("--jobs", type=int, default=1, help="competitions run at once [default: 1]")
    p.add_argument("--timeout", type=float, default=1800, help="seconds per setup [default: 1800]")
    p.add_argument("--solve-timeout", type=float, default=3600, help="seconds per solve [default: 3600]")
    p.add_argument("--poll", type=float, default=3, help="seconds between looks at the solve's submission")
    p.add_argument("--force", action="store_true", help="run competitions that have a record again")
    p.add_argument("--rebuild", action="store_true", help="build the corpus again")
    args = p.parse_args(argv)

    corpus = args.corpus.resolve()
    if not (corpus / "build.py").is_file() or not (corpus / "grade.py").is_file():
        p.error(f"--corpus {corpus}: no build.py and grade.py there")
    if args.mlebench_git is None:
        env_mirror = os.environ.get("MLEBENCH_GIT")
        args.mlebench_git = Path(env_mirror) if env_mirror else DEFAULT_MIRROR if DEFAULT_MIRROR.is_dir() else None
    elif not args.mlebench_git.exists():
        p.error(f"--mlebench-git {args.mlebench_git}: no such folder")
    if args.mlebench_git is not None:
        args.mlebench_git = args.mlebench_git.resolve()
    if args.set is None:
        sets = list(SETS) if args.mlebench_git else list(MIRRORLESS)
    else:
        sets = list(SETS) if args.set == "all" else [s.strip() for s in args.set.split(",") if s.strip()]
    if unknown := [s for s in sets if s not in SETS]:
        p.error(f"--set: unknown set(s) {', '.join(unknown)}; known: {', '.join(SETS)}, all")
    if args.mlebench_git is None and (need := [s for s in sets if s not in MIRRORLESS]):
        p.error(f"--set {','.join(need)} needs --mlebench-git (a mirror of openai/mle-bench)")
    if args.jobs < 1:
        p.error("--jobs must be at least 1")
    args.corpus = corpus
    out = args.out.resolve()
    dest = out / "corpus"

    for s in sets:
        build_set(corpus, s, dest, args.mlebench_git, args.rebuild)
    comps = competitions(dest, sets)
    if args.only:
        names = {n for n, _ in comps}
        if unknown := sorted(set(args.only) - names):
            p.error(f"--only: unknown competition(s) {', '.join(unknown)} in set(s) {','.join(sets)}")
        comps = [(n, m) for n, m in comps if n in args.only]
    if not comps:
        p.error(f"no competitions built in {dest} for set(s) {','.join(sets)}")

    records_path = out / "kaggle_layouts.json"
    records: dict[str, dict] = json.loads(records_path.read_text()) if records_path.is_file() else {}
    lock = threading.Lock()

    def log(line: str) -> None:
        with lock:
            print(line, flush=True)

    def save(rec: dict) -> None:
        with lock:
            records[rec["competition"]] = rec
            tmp = records_path.with_suffix(".json.tmp")
            tmp.write_text(json.dumps(records, indent=2, default=str) + "\n")
            tmp.replace(records_path)

    todo = []
    for name, meta in comps:
        prev = None if args.force else records.get(name)
        if prev is not None and not (args.solve and "solve" not in prev and prev.get("setup_rc") == 0):
            continue
        todo.append((name, meta, prev))
    print(
        f"{len(comps)} competition(s) of {','.join(sets)} in {dest}: {len(comps) - len(todo)} with a record, "
        f"{len(todo)} to run ({args.jobs} at a time{', with --solve' if args.solve else ''}); mle-bench mirror: "
        f"{args.mlebench_git or 'none'}",
        flush=True,
    )
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = {pool.submit(run_one, n, m, args, dest, out, prev, log): n for n, m, prev in todo}
        for fut in as_completed(futures):
            try:
                save(fut.result())
            except Exception as exc:  # noqa: BLE001 - one competition's crash must not lose the others' records
                log(f"  ERROR {futures[fut]}: {type(exc).__name__}: {exc}")

    chosen = [records[n] for n, _ in comps if n in records]
    with_solve = args.solve or any("solve" in r for r in chosen)
    quick = run_quick(args.corpus, dest, out, args.rebuild) if "zoo2" in sets else {}
    plain, md = report(chosen, with_solve, quick)
    print()
    print(plain)
    (out / "kaggle_layouts.md").write_text(md)
    print(f"\ntables written to {out / 'kaggle_layouts.md'}, records to {records_path}")
    return 0 if len(chosen) == len(comps) and all(passed(r) for r in chosen) else 1


if __name__ == "__main__":
    sys.exit(main())
