"""Learning-curve benchmark (paper Figure 14): setups that succeed versus LLM calls spent, over a pool, when the
curriculum picks tasks at random, by the recency penalty alone, or by the full eq. 7.

    uv run python benchmarks/learning_curve.py [--seeds 2] [--rounds 16] [--jobs 2] [--p 0.5] [--q 0.6]
                                               [--q-example 0.9] [--only NAME ...] [--selections RULE ...]
                                               [--simulated] [--out benchmarks/out]

Each (selection, seed) is one `agentk curriculum --setup-only --policy llm` run (curriculum.runner.Curriculum,
in a child process of this script) with its own empty long-term memory (chromadb, on disk). With an LLM endpoint
configured (AGENTK_LLM_BASE_URL and AGENTK_LLM_MODEL, or the config file, as for `agentk setup`) the setups
talk to it, with the answer cache off so that every rule pays for its calls. Otherwise, or with --simulated,
the LLM is the fault-injection simulated LLM (benchmarks/fault_injection.py) behind a ScriptedLLM server on 127.0.0.1: it
answers like the built-in expert, but a program it writes is corrupted with probability p; shown the error,
it repairs the fault with probability q, or q_example when the prompt holds a stored fix of a similar error
retrieved from long-term memory (Appendix D.2). That last number is this simulation's assumption of what a
retrieved example is worth; what the runs measure is whether the selection rules turn the fixes and
experiences that real setups store into more successes per LLM call.

Common random numbers: the faults of the j-th attempt of a task are keyed by (task, seed, j), so all three
rules meet the same faults in a task's first attempt, its second, and so on; they differ in order, in which
fixes are in memory when a task comes up, and in how they spend rounds on failed tasks.

A task leaves the pool once set up; a failed one stays (RAG⁻ and the recency penalty hold it back under eq. 7).
Output: per rule, successes within each budget of LLM calls (mean over seeds; budgets up to what the thriftiest
run spent), and per-run summaries, printed and written to <out>/learning_curve.md (raw rounds in
<out>/learning_curve.json). A killed benchmark resumes with --work <its folder>."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

from fault_injection import EXAMPLE_MARK, MODEL, SimulatedLLM, markdown_table  # noqa: E402

from agentk.competition.dataview import competition_name  # noqa: E402
from agentk.workspace import Workspace  # noqa: E402

SELECTIONS = {"random": "random order", "recency": "β-penalty alone", "eq7": "full eq. 7"}


def default_pool(arena: Path) -> list[Path]:
    examples = sorted(p for p in (ROOT / "examples").iterdir() if p.is_dir() and not p.name.startswith("_"))
    # an arena competition is <name>/public (what the agent sees) beside <name>/private (the answers)
    return examples + (
        sorted(p / "public" for p in arena.iterdir() if (p / "public").is_dir()) if arena.is_dir() else []
    )


# ---- one curriculum (run in a child process: the setups need their own LLM endpoint in the environment) ----


class Dispatcher:
    """The ScriptedLLM handler: the simulated LLM of the setup under way (one at a time in a curriculum)."""

    def __init__(self):
        self.current: SimulatedLLM | None = None

    def __call__(self, messages: list[dict]) -> str:
        return self.current(messages)


def run_on_endpoint(pool_file: Path, out: Path, selection: str, seed: int, rounds: int) -> None:
    """The rounds' setups call the configured LLM endpoint; the calls are the setups' own count."""
    from curriculum.runner import Curriculum

    class EndpointCurriculum(Curriculum):
        def _step(self, rec, step):
            log = Workspace(self.out / rec["task"]).llm_log
            before = _example_prompts(log)
            rc = super()._step(rec, step)
            rec["examples_shown"] = _example_prompts(log) - before
            return rc

    os.environ.update({"AGENTK_LLM_CACHE": "off", "COLUMNS": "200", "NO_COLOR": "1"})
    _setup_only_run(EndpointCurriculum, pool_file, out, selection, seed, rounds)


def _setup_only_run(cls, pool_file: Path, out: Path, selection: str, seed: int, rounds: int) -> None:
    """A curriculum of LLM-policy setups (no solve), with its own long-term memory under `out`."""
    from rag.memory import Memory

    cls(
        pool_file,
        out,
        rounds,
        memory=Memory(out / "memory"),
        policy="llm",
        setup_only=True,
        selection=selection,
        seed=seed,
        log=lambda m: print(f"[{selection} s{seed}] {m}", flush=True),
    ).run()


def _example_prompts(log: Path) -> int:
    """Prompts in a workspace's LLM log that showed a fix retrieved from long-term memory."""
    if not log.exists():
        return 0
    return sum(EXAMPLE_MARK in line for line in log.read_text().splitlines())


def run_curriculum(
    pool_file: Path, out: Path, selection: str, seed: int, rounds: int, p: float, q: float, q_example: float
) -> None:
    from curriculum.runner import Curriculum
    from testing.scripted_llm import ScriptedLLM

    dispatcher = Dispatcher()

    class SimulatedCurriculum(Curriculum):
        def _step(self, rec, step):  # each setup gets a fresh simulated LLM, keyed by the task's attempt
            attempt = sum(r["task"] == rec["task"] for r in self.state["rounds"][: rec["round"]])
            ws = self.out / rec["task"]
            dispatcher.current = SimulatedLLM(
                Path(rec["source"]), ws, key=f"{rec['task']}|{seed}|{attempt}", p=p, q=q, q_example=q_example
            )
            before = len(llm.requests)
            rc = super()._step(rec, step)
            sim = dispatcher.current
            rec["requests"] = len(llm.requests) - before
            rec["examples_shown"] = sum(1 for r in llm.requests[before:] if EXAMPLE_MARK in json.dumps(r))
            rec["faults"] = sum(1 for e in sim.log if e.get("op"))
            return rc

    with ScriptedLLM(handler=dispatcher, model=MODEL) as llm:
        os.environ.update(
            {
                "AGENTK_LLM_BASE_URL": llm.url,
                "AGENTK_LLM_MODEL": MODEL,
                "AGENTK_LLM_API_KEY": "x",
                "AGENTK_LLM_CACHE": "off",
                "COLUMNS": "200",
                "NO_COLOR": "1",
            }
        )
        os.environ.pop("AGENTK_CONFIG", None)
        _setup_only_run(SimulatedCurriculum, pool_file, out, selection, seed, rounds)


# ---- the driver ----------------------------------------------------------------------------------------


def finished(out: Path, selection: str, seed: int, rc: int, seconds: float) -> dict:
    """A run's record from its curriculum.json: the rounds it finished."""
    state = json.loads((out / "curriculum.json").read_text()) if (out / "curriculum.json").exists() else {"rounds": []}
    return {
        "selection": selection,
        "seed": seed,
        "rc": rc,
        "seconds": seconds,
        "rounds": [
            {
                **{
                    k: r.get(k)
                    for k in ("round", "task", "why", "setup_passed", "llm_calls", "examples_shown", "faults")
                },
                "requests": r.get("requests", r.get("llm_calls")),
            }  # an endpoint's: the setup's own count
            for r in state["rounds"]
            if r["step"] == "done"
        ],
    }


def launch(pool_file: Path, work: Path, selection: str, seed: int, args) -> dict:
    out = work / f"{selection}-s{seed}"
    cmd = [
        sys.executable,
        __file__,
        "--one",
        selection,
        str(seed),
        "--pool-file",
        str(pool_file),
        "--run-dir",
        str(out),
        "--rounds",
        str(args.rounds),
        "--p",
        str(args.p),
        "--q",
        str(args.q),
        "--q-example",
        str(args.q_example),
        "--llm",
        args.llm,
    ]
    t0 = time.monotonic()
    proc = subprocess.run(cmd, cwd=ROOT, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    run = finished(out, selection, seed, proc.returncode, time.monotonic() - t0)
    print(
        f"{selection} seed {seed}: exit {proc.returncode}, {len(run['rounds'])} rounds, "
        f"{sum(bool(r['setup_passed']) for r in run['rounds'])} set up, {run['seconds']:.0f} s",
        flush=True,
    )
    if proc.returncode != 0:
        print(proc.stderr[-3000:], file=sys.stderr)
    return run


def curve(run: dict) -> list[tuple[int, int]]:
    """(cumulative LLM calls, cumulative successes) after each round."""
    calls = wins = 0
    points = []
    for r in run["rounds"]:
        calls += r["requests"] or 0
        wins += bool(r["setup_passed"])
        points.append((calls, wins))
    return points


def successes_within(run: dict, budget: int) -> int:
    return max([w for c, w in curve(run) if c <= budget] or [0])


def report(runs: list[dict], budgets: list[int], args, n_tasks: int) -> str:
    done = max((len(r["rounds"]) for r in runs), default=0)
    llm = (
        f"simulated LLM p={args.p}, q={args.q}, q_example={args.q_example}"
        if args.llm == "simulated"
        else f"LLM endpoint {args.endpoint}"
    )
    lines = [f"pool: {n_tasks} competitions; {args.seeds} seeds; {done} rounds at most; {llm}", ""]
    header = ["LLM calls"] + [SELECTIONS[s] for s in args.selections]
    rows = []
    for b in budgets:
        row = [str(b)]
        for s in args.selections:
            mine = [r for r in runs if r["selection"] == s]
            row.append(f"{sum(successes_within(r, b) for r in mine) / max(1, len(mine)):.1f}")
        rows.append(row)
    lines += ["Setups succeeded within a budget of LLM calls (mean over seeds):", "", markdown_table(header, rows), ""]
    header = [
        "rule",
        "seed",
        "rounds",
        "set up",
        "failed rounds",
        "LLM calls",
        "calls per success",
        "rounds with a retrieved fix",
        "order (✓ set up, ✗ failed)",
    ]
    rows = []
    for r in sorted(runs, key=lambda r: (list(SELECTIONS).index(r["selection"]), r["seed"])):
        wins = sum(bool(x["setup_passed"]) for x in r["rounds"])
        calls = sum(x["requests"] or 0 for x in r["rounds"])
        order = " ".join(f"{x['task'][:14]}{'✓' if x['setup_passed'] else '✗'}" for x in r["rounds"])
        rows.append(
            [
                SELECTIONS[r["selection"]],
                str(r["seed"]),
                str(len(r["rounds"])),
                str(wins),
                str(len(r["rounds"]) - wins),
                str(calls),
                f"{calls / wins:.0f}" if wins else "-",
                str(sum(1 for x in r["rounds"] if x["examples_shown"])),
                order,
            ]
        )
    lines += ["Per run:", "", markdown_table(header, rows)]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--arena", type=Path, default=ROOT.parent / "shared" / "arena-dev")
    ap.add_argument("--only", nargs="*", help="competition folder names to keep in the pool")
    ap.add_argument(
        "--selections",
        nargs="+",
        choices=list(SELECTIONS),
        default=list(SELECTIONS),
        help="the rules to compare [default: all three]",
    )
    ap.add_argument(
        "--simulated", action="store_true", help="use the simulated LLM even when an endpoint is configured"
    )
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=16)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--p", type=float, default=0.5)
    ap.add_argument("--q", type=float, default=0.6)
    ap.add_argument("--q-example", type=float, default=0.9)
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "out")
    ap.add_argument(
        "--work",
        type=Path,
        help="where the runs go; an earlier --work resumes (finished runs only "
        "report) [default: a new temporary folder]",
    )
    ap.add_argument("--report", action="store_true", help="with --work: tables of the rounds finished so far")
    ap.add_argument("--one", nargs=2, metavar=("SELECTION", "SEED"), help=argparse.SUPPRESS)
    ap.add_argument("--pool-file", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--run-dir", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--llm", choices=("simulated", "endpoint"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.one:
        if args.llm == "endpoint":
            run_on_endpoint(args.pool_file, args.run_dir, args.one[0], int(args.one[1]), args.rounds)
        else:
            run_curriculum(
                args.pool_file, args.run_dir, args.one[0], int(args.one[1]), args.rounds, args.p, args.q, args.q_example
            )
        return 0
    from agentk.core.errors import BadInput
    from agentk.policies.llm import LLMConfig

    try:
        config = None if args.simulated else LLMConfig.load()
    except BadInput as e:
        print(f"learning_curve: {e}", file=sys.stderr)
        return 2
    args.llm = "endpoint" if config and config.configured else "simulated"
    args.endpoint = f"{config.model} at {config.base_url or 'the OpenAI API'}" if args.llm == "endpoint" else None
    print(f"LLM: {args.endpoint or 'the fault-injection simulated LLM (no endpoint configured)'}", flush=True)
    pool = [p for p in default_pool(args.arena) if not args.only or competition_name(p) in args.only]
    if not pool:
        print("learning_curve: no competitions in the pool (check --only and --arena)", file=sys.stderr)
        return 2
    if args.report and not (args.work and (args.work / "pool.txt").exists()):
        print("learning_curve: --report needs the --work folder of an earlier run", file=sys.stderr)
        return 2
    work = args.work or Path(tempfile.mkdtemp(prefix="agentk-curve-"))
    work.mkdir(parents=True, exist_ok=True)
    pool_file = work / "pool.txt"
    if not pool_file.exists():  # a resumed --work keeps its pool
        pool_file.write_text("".join(f"{p}\n" for p in pool))
    jobs = [(s, seed) for seed in range(args.seeds) for s in args.selections]
    if args.report:  # the rounds the runs in --work finished so far, nothing run
        runs = [finished(work / f"{s}-s{seed}", s, seed, 0, 0.0) for s, seed in jobs]
    else:
        with ThreadPoolExecutor(args.jobs) as ex:
            runs = list(ex.map(lambda j: launch(pool_file, work, j[0], j[1], args), jobs))
    # budgets up to what the thriftiest run spent: every rule had at least that many calls
    spent = min((curve(r)[-1][0] if r["rounds"] else 0) for r in runs)
    step = max(25, -(-spent // 8 // 25) * 25)
    budgets = list(range(step, spent, step)) + [spent]
    text = report(runs, budgets, args, len(pool_file.read_text().split()))
    print(text)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "learning_curve.md").write_text(text + "\n")
    (args.out / "learning_curve.json").write_text(json.dumps(runs, indent=1))
    print(f"\nworkspaces and memories in {work}")
    return 0 if all(r["rc"] == 0 for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
