"""Setup generality, measured: does `agentk setup` recover random Kaggle-like layouts?

    uv run python benchmarks/layout_fuzz.py [--layouts 500] [--start 0] [--jobs 2] [--timeout 600] [--out DIR]
                                            [--policy expert] [--only-seed N ...] [--fresh]
    uv run python benchmarks/layout_fuzz.py --compare BEFORE AFTER

Layout k is seed --start + k of testing/layout_fuzz.py: a small learning problem written out through a
seeded draw of transformations (names, ids, labels files, side tables, formats, sample forms, decoys), with its
ground truth. Each runs `agentk setup <layout>/public --workspace <ws>` in a child process, then the judge checks
the workspace against the truth: the target map, every input reaching the input maps, a perfect prediction
formatted back to the answers. pass@1: the setup exits 0 and the judge finds nothing (a layout of a task agentk does
not do, refuse:<kind>: the setup exits 2 naming that kind). Each layout's setup gets a new, empty long-term memory
(benchmarks/hypothesis_memory.py measures what a shared one changes).

Results go to <out>/layout_fuzz.json as each layout ends (a second run with the same --out skips those done;
--fresh starts over); the table (pass rate overall, by kind, by transformation; failures by cause) to
<out>/layout_fuzz.md and the console. Exit 0 when the run finished, 2 on bad arguments.

--compare reads two finished runs' --out folders (the same seeds, two versions of agentk: a git worktree each) and
prints, per seed, a pass that differs and every output of the setup that is not byte for byte the same: the maps,
the submissions, the generated programs, the tables it wrote. A program that differs only in the order of a dict
literal's keys is told apart (a set's order varies with string hashing from one process to the next). The setup's
own record of the run (setup.json, its logs, the trajectory) and the copies of the layout's files (archives carry
the time they were written) are not compared.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks import run_diff  # noqa: E402
from testing.layout_fuzz import TRANSFORMS, build, draw, judge  # noqa: E402


def run_layout(seed: int, out: Path, timeout: float, policy: str, memory: Path | None = None) -> dict:
    """Build layout `seed`, set it up, judge it: its record. Long-term memory: `memory` (shared by the layouts
    that name it), else a new, empty one (as on a new user's machine: pass@1 does not depend on the order)."""
    dest, ws = out / "layouts" / str(seed), out / "workspaces" / str(seed)
    shutil.rmtree(dest, ignore_errors=True)
    shutil.rmtree(ws, ignore_errors=True)
    if memory is None:
        memory = out / "memory" / str(seed)
        shutil.rmtree(memory, ignore_errors=True)
    try:
        truth = build(seed, dest)
    except Exception as exc:  # noqa: BLE001 - the fuzzer's own fault: a record says so, the run goes on
        message = f"the fuzzer could not write this layout: {type(exc).__name__}: {str(exc)[:200]}"
        kind, transforms = draw(seed)
        return {"seed": seed, "kind": kind, "transforms": transforms, "rc": None, "seconds": 0.0, "problems": [],
                "message": message, "passed": False, "refusal": "", "revised": [], "attempts": 0}  # fmt: skip
    start = time.monotonic()
    cmd = [sys.executable, "-m", "agentk", "setup", str(dest / "public"), "--workspace", str(ws)]
    try:
        done = subprocess.run(
            [*cmd, "--policy", policy], cwd=ROOT, capture_output=True, text=True, stdin=subprocess.DEVNULL,
            timeout=timeout, env={**os.environ, "AGENTK_MEMORY": str(memory)},
        )  # fmt: skip
        rc, err = done.returncode, done.stderr
    except subprocess.TimeoutExpired:
        rc, err = None, f"timed out after {timeout:.0f} s"
    seconds = time.monotonic() - start
    problems = []
    if rc == 0 or truth.refusal:  # a task agentk does not do passes by its refusal (exit 2, naming its kind)
        try:
            problems = judge(ws, dest, rc, err)
        except Exception as exc:  # noqa: BLE001 - a workspace the judge cannot read is a finding too
            problems = [f"judge: {type(exc).__name__}: {str(exc)[:200]}"]
    last = next((line for line in reversed(err.strip().splitlines()) if line.startswith("agentk:")), "")
    state = json.loads((ws / "setup.json").read_text()) if (ws / "setup.json").exists() else {}
    return {
        "seed": seed,
        "kind": truth.kind,
        "transforms": truth.transforms,
        "rc": rc,
        "seconds": round(seconds, 1),
        "problems": problems,
        "message": last[:300] if rc != 0 else "",
        "passed": (rc == 0 or bool(truth.refusal)) and not problems,
        "refusal": truth.refusal,
        # the hypotheses the search dropped (agentk.policies.hypotheses), and how
        "revised": [f"{d['decision']} ({d.get('mode')})" for d in state.get("hypotheses", [])],
        "attempts": sum(st.get("attempts", 0) for st in state.get("stages", {}).values()),
    }


def cause(record: dict) -> str:
    """A failure's cause, in words that group alike failures."""
    if record["rc"] is None:
        return record["message"].split(":")[0] if record["message"] else "timed out"
    if record.get("refusal"):  # a task to refuse, set up or refused otherwise
        return f"not refused as {record['refusal']}: exit {record['rc']}"
    if record["rc"] != 0:
        text = record["message"] or f"exit {record['rc']}"
        for word in ("stage ", "meta-test "):
            if word in text:
                return f"exit {record['rc']}: {text.split(word, 1)[1].split(':')[0].split(' ')[0]} failed"
        return f"exit {record['rc']}: {text[:90]}"
    return record["problems"][0].split(":")[0][:90]


def table(records: list[dict]) -> str:
    n = len(records)
    passed = sum(r["passed"] for r in records)
    lines = [
        f"pass@1 {passed}/{n} = {passed / max(n, 1):.1%}",
        "",
        "| group | layouts | passed | rate |",
        "|---|---|---|---|",
    ]
    groups: dict[str, list[dict]] = defaultdict(list)
    for r in records:
        groups[f"kind {r['kind']}"].append(r)
        for t in r["transforms"] or ["(none)"]:
            groups[t].append(r)
    for name in [*(f"kind {k}" for k in ("binary", "multiclass", "regression", "refusal")), "(none)", *TRANSFORMS]:
        rs = groups.get(name, [])
        if rs:
            ok = sum(r["passed"] for r in rs)
            lines.append(f"| {name} | {len(rs)} | {ok} | {ok / len(rs):.0%} |")
    revised = [r for r in records if r.get("revised")]
    moves = Counter(m for r in revised for m in r["revised"])
    lines += [
        "",
        f"Setups that dropped a hypothesis: {len(revised)} ({sum(r['passed'] for r in revised)} passed); "
        + (", ".join(f"{m} x{k}" for m, k in moves.most_common()) or "none"),
    ]
    causes = Counter(cause(r) for r in records if not r["passed"])
    lines += ["", "| failure | layouts | seeds |", "|---|---|---|"]
    for c, k in causes.most_common():
        seeds = [str(r["seed"]) for r in records if not r["passed"] and cause(r) == c][:8]
        lines.append(f"| {c} | {k} | {' '.join(seeds)} |")
    return "\n".join(lines)


def compare(before: Path, after: Path) -> list[str]:
    """Two runs of the same seeds side by side: a line per difference, then the tally."""
    runs = [{r["seed"]: r for r in json.loads((d / "layout_fuzz.json").read_text())} for d in (before, after)]
    seeds = sorted(set(runs[0]) & set(runs[1]))
    lines, reordered = [], []
    for s in seeds:
        b, a = runs[0][s], runs[1][s]
        if b["passed"] != a["passed"]:
            lines.append(
                f"seed {s}: passes {'before' if b['passed'] else 'after'} only ({cause(a if b['passed'] else b)})"
            )
        elif not b["passed"]:
            lines.append(f"seed {s}: fails at both (before: {cause(b)}; after: {cause(a)})")
        public = [d / "layouts" / str(s) / "public" for d in (before, after)]
        found, order = run_diff.differences(
            f"seed {s}",
            run_diff.outputs(before / "workspaces" / str(s), {before: "<run>"}, public[0]),
            run_diff.outputs(after / "workspaces" / str(s), {after: "<run>"}, public[1]),
        )
        lines += found
        reordered += order
    passed = [sum(run[s]["passed"] for s in seeds) for run in runs]
    return [
        *lines,
        *reordered,
        f"{len(seeds)} seeds ({seeds[0] if seeds else '-'}-{seeds[-1] if seeds else '-'}): pass before {passed[0]}, "
        f"after {passed[1]}; {len(lines)} differences, {len(reordered)} programs differing in a dict's key order",
    ]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--layouts", type=int, default=500)
    p.add_argument("--start", type=int, default=0)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--timeout", type=float, default=600)
    p.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "out" / "layout_fuzz")
    p.add_argument("--policy", default="expert", choices=("expert", "llm", "hybrid"))
    p.add_argument("--only-seed", type=int, nargs="*", default=None)
    p.add_argument("--fresh", action="store_true")
    p.add_argument("--compare", type=Path, nargs=2, metavar=("BEFORE", "AFTER"), help="compare two runs' --out")
    args = p.parse_args(argv)
    if args.compare:
        return run_diff.command(p, args.compare, "layout_fuzz.json", compare)
    if args.layouts < 1 or args.jobs < 1:
        p.error("--layouts and --jobs must be at least 1")
    args.out.mkdir(parents=True, exist_ok=True)
    results = args.out / "layout_fuzz.json"
    records = {} if args.fresh or not results.exists() else {r["seed"]: r for r in json.loads(results.read_text())}
    seeds = args.only_seed if args.only_seed is not None else range(args.start, args.start + args.layouts)
    todo = [s for s in seeds if s not in records or args.only_seed is not None]
    lock = threading.Lock()
    with ThreadPoolExecutor(args.jobs) as pool:
        futures = [pool.submit(run_layout, s, args.out, args.timeout, args.policy) for s in todo]
        for i, f in enumerate(as_completed(futures), 1):
            r = f.result()
            with lock:
                records[r["seed"]] = r
                results.write_text(json.dumps(sorted(records.values(), key=lambda r: r["seed"]), indent=1))
            print(
                f"[{i}/{len(todo)}] seed {r['seed']} {'pass' if r['passed'] else 'FAIL: ' + cause(r)} ({r['seconds']} s)",
                flush=True,
            )
    chosen = [records[s] for s in seeds if s in records]
    text = table(chosen)
    (args.out / "layout_fuzz.md").write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
