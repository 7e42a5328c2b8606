"""Fault-injection benchmark: does credit assignment earn its keep?

    uv run python benchmarks/fault_injection.py [--quick] [--seeds 2] [--jobs 2] [--q 0.7] [--p 0.2 0.5]
                                                [--only NAME ...] [--arena ../shared/arena-dev] [--out benchmarks/out]
    uv run python benchmarks/fault_injection.py --check-operators [--only NAME ...]

A simulated LLM (a handler behind testing.scripted_llm.ScriptedLLM, one server per run) answers the LLM
policy's requests with the built-in expert's correct answer, except that a program it writes is, with
probability p, the expert's code corrupted by one fault operator (wrong path, wrong column, dropped rows,
wrong id type, flipped metric direction, reversed rows, typo'd column name); shown the error (a retry, or
credit assignment after a meta-test failed) it repairs the fault with probability q. Each
(competition, p, regime, seed) is one setup with the LLM policy, in a child process of its own
(benchmarks/isolated.py: the run's LLM endpoint is in its environment, and a long-term memory of its own next
to its workspace), under three regimes:
    (a) no retries                                --stage-attempts 1 --backtracks 0
    (b) unit-test retries                         --stage-attempts 4 --backtracks 0
    (c) retries + meta-test credit assignment     --stage-attempts 4 --backtracks 3
The paper's claim is (c) > (b) > (a) in setup success; the tables say whether ours shows it.

Common random numbers: every random draw of the simulated LLM is keyed by (competition, seed, stage,
which answer for that stage, purpose), not by p or the regime, so the three regimes see the same faults
in the same places, and the faults at p=0.2 are a subset of those at p=0.5 (a fault is injected when
u < p for the same u).

Fault attribution, from the workspace's trajectory: the k-th program the simulated LLM wrote for a stage is the
k-th "code" step of that stage. A corrupted program whose step failed was caught by a unit test; one that
passed stays live in the workspace until it is replaced, and is caught by a meta-test if a meta-test
covering its stage fails while it is live; a live fault when the setup is done escaped; one that no test
saw before the run stopped (it failed elsewhere first) is "unseen".

Output: a table per (p, regime) and a per-competition table, printed and written to
<out>/fault_injection.md (raw per-run records in <out>/fault_injection.json). Exit 0 when every run
finished (whatever its status), 1 if a run crashed or timed out, 2 on bad arguments.

--check-operators sets each competition up with the expert, then, on copies of that workspace, applies
every operator that applies to each stage and runs the real unit tests (agentk.core.checks.run_checks) and
meta-tests, verifying that each fault changes the code and is caught by the test it is meant for.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import sys
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from agentk.modalities import NAMES  # noqa: E402
from agentk.parsing import to_numeric  # noqa: E402
from agentk.workspace import SPLITS, SUBMISSION_FORMAT, SUBMISSION_FORMAT_ALT, Workspace, input_map_stage  # noqa: E402
from benchmarks.isolated import setup_isolated  # noqa: E402

EXAMPLES = ["breast-cancer", "diabetes", "digits-multilabel", "iris-species", "wine"]
ARENA_TABULAR = ["spaceship-titanic", "nomad2018-predict-transparent-conductors"]
QUICK = ["iris-species", "breast-cancer", "spaceship-titanic"]
REGIMES = {  # name -> (label, flags of benchmarks/isolated.py)
    "a": ("no retries", ["--stage-attempts", "1", "--backtracks", "0"]),
    "b": ("unit-test retries", ["--stage-attempts", "4", "--backtracks", "0"]),
    "c": ("retries + credit assignment", ["--stage-attempts", "4", "--backtracks", "3"]),
}
MODEL = "scripted-model"
HEADER = re.compile(r"^\s*\[agentk:(\w+)\]\s*stage=(\S+)", re.M)
EXAMPLE_MARK = "An example of a similar error being fixed"  # agentk.policies.intrinsics.fix_example's heading


# ---- fault operators ------------------------------------------------------------------------------
# Each is a string edit of the expert's program for one stage: op(code, stage, ws) -> corrupted code, or
# None where its anchor text is absent. `caught_by` says which test is meant to see it.


@dataclass(frozen=True)
class Operator:
    name: str
    caught_by: str  # "unit" or the meta-test's name
    apply: Callable[[str, str, Path], str | None]
    doc: str


RAW_CSV = re.compile(r"""(['"])(raw/[^'"]*?)([^/'"]+)\.csv(['"])""")


def _wrong_path(code: str, stage: str, ws: Path) -> str | None:
    """raw/train.csv -> raw/train_data.csv (every literal naming that file): the program crashes."""
    m = RAW_CSV.search(code)
    if not m:
        return None
    old = f"{m.group(2)}{m.group(3)}.csv"
    return code.replace(old, f"{m.group(2)}{m.group(3)}_data.csv")


def input_map_stages(*splits: str) -> set[str]:
    return {input_map_stage(split, m) for split in splits for m in NAMES}


def _list_literal(code: str, var: str) -> re.Match | None:
    return re.search(rf"^(\s*{var} = )(\[[^\]\n]*\])", code, re.M)


def _wrong_column(code: str, stage: str, ws: Path) -> str | None:
    """Drop the last entry of `features = [...]` in a test input map: its unit tests pass, test_maps_match fails."""
    if stage not in input_map_stages("test"):
        return None
    m = _list_literal(code, "features")
    if not m:
        return None
    items = eval(m.group(2), {})  # a literal the expert wrote
    if len(items) < 2:
        return None
    return code[: m.start(2)] + repr(items[:-1]) + code[m.end(2) :]


def _dropped_rows(code: str, stage: str, ws: Path) -> str | None:
    """`out = out.iloc[:-7]` before `return out` in the train input map: the unit tests allow dropping
    (unlabelled) rows, map_dataset_train sees the ids of the input and target maps disagree."""
    if stage not in input_map_stages("train"):
        return None
    m = re.search(r"^(\s*)return out\s*$", code, re.M)
    if not m:
        return None
    return code[: m.start()] + f"{m.group(1)}out = out.iloc[:-7]  # drop the tail\n" + code[m.start() :]


IDS_AS_STR = re.compile(r"""^(\s*ids = .*?)(\.astype\(str\))""", re.M)


def _numeric_ids(code: str, ws: Path) -> bool:
    """True when the id column the program reads holds numbers (so float ids print as "12.0", not "12")."""
    m = re.search(r"""^\s*ids = (?:df|pd\.read_\w+\((['"])([^'"]+)\1[^\n]*?\))\[(['"])([^'"]+)\3\]""", code, re.M)
    if not m:
        return False
    path = m.group(2)
    if path is None:  # ids = df['col']: the table is df = pd.read_...('path'...)
        p = re.search(r"""^\s*df = pd\.read_\w+\((['"])([^'"]+)\1""", code, re.M)
        if not p:
            return False
        path = p.group(2)
    try:
        values = pd.read_csv(ws / path, usecols=[m.group(4)], dtype=str)[m.group(4)].dropna()
    except Exception:  # noqa: BLE001 - not a readable CSV: the operator does not apply
        return False
    return len(values) > 0 and bool(to_numeric(values, errors="coerce").notna().all())


def _wrong_id_type(code: str, stage: str, ws: Path) -> str | None:
    """ids parsed as float: `.astype(str)` -> `.astype(float).astype(str)` ("12" becomes "12.0") in an input
    map; it still passes its unit tests, the meta-tests see ids that match neither the target map
    (map_dataset_train) nor the sample submission (test_maps_match). Not applied to the target map: the same
    fault in both train maps would cancel out (consistent ids) and pass every test, harmlessly."""
    if stage not in input_map_stages(*SPLITS):
        return None
    m = IDS_AS_STR.search(code)
    if not m or not _numeric_ids(code, ws):
        return None
    return code[: m.start(2)] + ".astype(float).astype(str)" + code[m.end(2) :]


def _flipped_direction(code: str, stage: str, ws: Path) -> str | None:
    """HIGHER_IS_BETTER = True <-> False in the metric's code: the metric's unit test ranks truth below noise."""
    m = re.search(r"^HIGHER_IS_BETTER = (True|False)\s*$", code, re.M)
    if not m:
        return None
    flipped = "False" if m.group(1) == "True" else "True"
    return code[: m.start(1)] + flipped + code[m.end(1) :]


# Formatters only: reversing the transform's rows (`return np.column_stack(cols)[::-1]`) is caught for label
# and value targets but not for per-class probability targets (wine: check_transform compares only columns
# that the target map and the submission share), so it is left out.
REVERSIBLE = re.compile(r"^(\s*(?:sub|out)\[c\] = .*\.to_numpy\(\))(\s*)$", re.M)


def _reversed_rows(code: str, stage: str, ws: Path) -> str | None:
    """Reverse the rows of a formatter's prediction column: the predictions no longer belong to their ids;
    the formatter's unit test compares by id and sees it."""
    if stage not in (SUBMISSION_FORMAT, SUBMISSION_FORMAT_ALT):
        return None
    m = REVERSIBLE.search(code)
    return code[: m.end(1)] + "[::-1]" + code[m.end(1) :] if m else None


def _typo(name: str) -> str:
    typo = name.lower() if name != name.lower() else name.capitalize()
    return typo if typo != name else name + "s"


COLUMN_ANCHORS = [  # (pattern whose group 2 is the first column name in a list/dict literal)
    re.compile(r"""^(\s*features = \[)'([^']+)'""", re.M),  # input maps
    re.compile(r"""^(\s*keep = df\[\[)'([^']+)'""", re.M),  # target map
    re.compile(r"""^(COLUMNS = \[)'([^']+)'""", re.M),  # formatters
    re.compile(r"""^((?:SPEC|TARGETS) = \[\{'column': )'([^']+)'""", re.M),  # transform, metric
]


def _typo_column(code: str, stage: str, ws: Path) -> str | None:
    """A column name with a typo ('SepalLengthCm' -> 'sepallengthcm'): KeyError, the unit test fails."""
    for pattern in COLUMN_ANCHORS:
        m = pattern.search(code)
        if m:
            return code[: m.start(2)] + _typo(m.group(2)) + code[m.end(2) :]
    return None


OPERATORS: dict[str, Operator] = {
    op.name: op
    for op in [
        Operator("wrong_path", "unit", _wrong_path, _wrong_path.__doc__),
        Operator("typo_column", "unit", _typo_column, _typo_column.__doc__),
        Operator("flipped_direction", "unit", _flipped_direction, _flipped_direction.__doc__),
        Operator("reversed_rows", "unit", _reversed_rows, _reversed_rows.__doc__),
        Operator("wrong_column", "test_maps_match", _wrong_column, _wrong_column.__doc__),
        Operator("dropped_rows", "map_dataset_train", _dropped_rows, _dropped_rows.__doc__),
        Operator("wrong_id_type", "meta", _wrong_id_type, _wrong_id_type.__doc__),
    ]
}


def applicable(code: str, stage: str, ws: Path) -> dict[str, str]:
    """operator name -> the corrupted program, for every operator whose anchor is in `code`."""
    out = {}
    for name, op in OPERATORS.items():
        bad = op.apply(code, stage, ws)
        if bad is not None and bad != code:
            out[name] = bad
    return out


# ---- the simulated LLM ----------------------------------------------------------------------------


def _user_text(messages: list[dict]) -> str:
    for m in reversed(messages or []):
        if m.get("role") == "user":
            c = m.get("content")
            return (
                "\n".join(str(p.get("text", "")) for p in c if isinstance(p, dict))
                if isinstance(c, list)
                else str(c or "")
            )
    return ""


class SimulatedLLM:
    """handler(messages) -> answer, for one run (one workspace, one source folder)."""

    def __init__(self, source: Path, ws: Path, key: str, p: float, q: float, q_example: float | None = None):
        """q_example: the repair probability when the prompt shows a retrieved fix of a similar error (None: q)."""
        from agentk.policies.expert import ExpertPolicy
        from agentk.setup_pipeline import setup_pipeline

        self.source, self.ws, self.key, self.p, self.q = Path(source), Path(ws), key, p, q
        self.q_example = q if q_example is None else q_example
        self.pipeline = setup_pipeline(self.source)
        self.expert = ExpertPolicy()
        self.lock = threading.Lock()
        self.code_answers: dict[str, list[dict]] = defaultdict(list)  # stage -> programs written, in order
        self.ca_count: dict[str, int] = defaultdict(int)
        self.log: list[dict] = []  # one entry per request: intrinsic, stage, what was answered
        self.errors: list[str] = []

    def rng(self, *parts) -> random.Random:
        return random.Random("|".join(map(str, (self.key, *parts))))  # str seeds are stable across processes

    def expert_action(self, stage_name: str):
        from agentk.core.engine import Context
        from agentk.core.memory import WorkingMemory

        stages, _ = self.pipeline(self.ws)
        stage = next((s for s in stages if s.name == stage_name), None)
        if stage is None:
            raise KeyError(f"no stage {stage_name!r} in the pipeline of {self.ws}")
        return stage, self.expert.act(stage, Context(self.ws, "first", 0, WorkingMemory(), None, None))

    def __call__(self, messages: list[dict]) -> str:
        prompt = _user_text(messages)
        m = HEADER.search(prompt)
        if not m:
            self.errors.append(f"request without an [agentk:...] header: {prompt[:120]!r}")
            return "I cannot tell what is asked."
        intrinsic, stage = m.group(1), m.group(2)
        with self.lock:  # one request at a time per run: the draws and counters stay in order
            try:
                answer, entry = self._answer(intrinsic, stage, prompt)
            except Exception as exc:  # noqa: BLE001 - the run records it; the policy sees a plain answer
                self.errors.append(f"{intrinsic} {stage}: {type(exc).__name__}: {exc}")
                answer, entry = f"(the simulated LLM failed: {exc})", {"error": str(exc)}
            self.log.append({"intrinsic": intrinsic, "stage": stage, **entry})
            return answer

    def _answer(self, intrinsic: str, stage: str, prompt: str) -> tuple[str, dict]:
        if intrinsic in ("summarise", "modalities", "plan_stage"):
            _, action = self.expert_action(stage)
            return action.text or "", {}
        if intrinsic == "plan":
            return (
                "1. Read the raw tables named in the task files, keeping ids as text.\n"
                f"2. Build what the stage asks for ({stage}) with the columns the summary lists.\n"
                "3. Return or write it exactly as the template expects."
            ), {}
        if intrinsic == "code":
            return self._code(stage, self._repair_odds(prompt))
        if intrinsic == "reflect":
            return (
                "The program failed its unit test, so I will re-read the error and rewrite it, checking the "
                "file paths, the column names and that each row stays with its id."
            ), {}
        if intrinsic == "meta_error_thought":
            return (
                "The meta-test checks several stages together, so the fault is in one of the stages it covers. "
                "Each passed its own unit tests, so the mistake is one that only shows when the outputs are "
                "joined: ids of a different type, rows that were dropped, or columns that differ between the "
                "train and test maps. I will re-read each covered stage's code for such a mismatch."
            ), {}
        if intrinsic == "ca_thought":
            return self._ca(stage, self._repair_odds(prompt))
        return f"(no simulated answer for intrinsic {intrinsic!r})", {"unknown": True}

    def _repair_odds(self, prompt: str) -> float:
        return self.q_example if EXAMPLE_MARK in prompt else self.q

    def _code(self, stage: str, q: float) -> tuple[str, dict]:
        _, action = self.expert_action(stage)
        correct = action.code or ""
        k = len(self.code_answers[stage])
        retry = k > 0
        rng = self.rng(stage, "code", k)
        u, pick = rng.random(), rng.random()
        corrupt = u >= q if retry else u < self.p
        op, code = None, correct
        if corrupt:
            ops = applicable(correct, stage, self.ws)
            if ops:
                op = sorted(ops)[int(pick * len(ops))]
                code = ops[op]
        entry = {"k": k, "retry": retry, "op": op, "via": "code"}
        self.code_answers[stage].append(entry)
        return f"```python\n{code.rstrip()}\n```", dict(entry)

    def _ca(self, stage: str, q: float) -> tuple[str, dict]:
        k = self.ca_count[stage]
        self.ca_count[stage] += 1
        last = self.code_answers[stage][-1] if self.code_answers[stage] else None
        if last is None or last["op"] is None:
            return (
                "CA-THOUGHT: this stage's output is consistent with what the meta-test checks, so the fault "
                "lies elsewhere.\nDECISION: KEEP"
            ), {"decision": "KEEP", "faulty": False}
        if self.rng(stage, "ca", k).random() < q:
            _, action = self.expert_action(stage)
            entry = {"k": len(self.code_answers[stage]), "retry": True, "op": None, "via": "ca"}
            self.code_answers[stage].append(entry)
            return (
                f"CA-THOUGHT: this stage's program is the likely cause of the meta-test failure; I rewrite it.\n"
                f"DECISION: REWRITE\n```python\n{(action.code or '').rstrip()}\n```"
            ), {"decision": "REWRITE", "faulty": True, "k": entry["k"]}
        return ("CA-THOUGHT: this stage passed its unit tests and looks right, so I keep it.\nDECISION: KEEP"), {
            "decision": "KEEP",
            "faulty": True,
        }


# ---- one run ----------------------------------------------------------------------------------------


@dataclass
class Run:
    competition: str
    source: str
    p: float
    regime: str
    seed: int
    rc: int | None = None
    seconds: float = 0.0
    status: str = "crashed"
    llm_calls: int | None = None
    requests: int = 0
    backtracks: int = 0
    failed_stage: str | None = None
    reason: str = ""
    faults: list[dict] = field(default_factory=list)  # stage, op, caught (unit|meta|escaped|unseen), by
    sim_errors: list[str] = field(default_factory=list)
    mismatch: str = ""  # attribution could not pair answers with steps


def _meta_covers(source: Path, ws: Path) -> dict[str, list[str]]:
    from agentk.setup_pipeline import setup_pipeline

    try:
        _, metas = setup_pipeline(source)(ws)
    except Exception:  # noqa: BLE001 - no modalities.json (the run stopped early): no meta-tests ran
        return {}
    return {m.name: m.covers for m in metas}


def attribute(
    rows: list[dict], answers: dict[str, list[dict]], covers: dict[str, list[str]], done: bool
) -> tuple[list[dict], str]:
    """Pair the k-th program written for a stage with its k-th "code" step; say which test caught each fault."""
    queue = {s: list(a) for s, a in answers.items()}
    faults: list[dict] = []
    live: dict[str, dict] = {}
    problems = []
    for row in rows:
        stage = row.get("stage")
        if row.get("mode") == "meta":
            if not row.get("passed"):
                for s in covers.get(stage, []):
                    f = live.get(s)
                    if f is not None and f["caught"] is None:
                        f.update(caught="meta", by=stage)
            continue
        if row.get("action") != "code":
            continue
        if not queue.get(stage):
            problems.append(f"{stage}: a code step with no simulated answer")
            continue
        answer = queue[stage].pop(0)
        live.pop(stage, None)
        if answer["op"] is None:
            continue
        f = {"stage": stage, "op": answer["op"], "retry": answer["retry"], "caught": None, "by": None}
        faults.append(f)
        if not row.get("passed"):
            f.update(caught="unit", by=row.get("failed_test"))
        else:
            live[stage] = f
    for s, left in queue.items():
        if left:
            problems.append(f"{s}: {len(left)} simulated answers with no code step")
    for f in faults:
        if f["caught"] is None:
            f["caught"] = "escaped" if done and live.get(f["stage"]) is f else "unseen"
    return faults, "; ".join(problems)


def run_one(comp: str, source: Path, p: float, regime: str, seed: int, q: float, workdir: Path, timeout: float) -> Run:
    from agentk.core.fileio import read_json, read_jsonl
    from testing.scripted_llm import ScriptedLLM

    run = Run(comp, str(source), p, regime, seed)
    ws = workdir / f"{comp}-p{p}-{regime}-s{seed}"
    sim = SimulatedLLM(source, ws, key=f"{comp}|{seed}", p=p, q=q)
    with ScriptedLLM(handler=sim, model=MODEL) as llm:
        env = {
            **os.environ,
            "COLUMNS": "1000",
            "NO_COLOR": "1",
            "AGENTK_LLM_BASE_URL": llm.url,
            "AGENTK_LLM_MODEL": MODEL,
            "AGENTK_LLM_API_KEY": "x",
            "AGENTK_LLM_CACHE": "off",
            # a long-term memory of the run's own: its simulated fixes stay out of the user's, and no run's retry
            # prompts show another run's fixes (the regimes' comparison would depend on the runs' order)
            "AGENTK_MEMORY": str(ws.with_name(f"{ws.name}-memory")),
            "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep),
        }
        env.pop("AGENTK_CONFIG", None)
        child = setup_isolated(source, ws, timeout, env, ["--policy", "llm", *REGIMES[regime][1]])
        run.rc, run.seconds, run.requests = child.rc, child.seconds, len(llm.requests)
        stderr = child.stderr + (f"\ntimed out after {timeout:.0f} s" if child.rc is None else "")
    state = read_json(Workspace(ws).setup_state) or {}
    run.status = state.get("status") or ("timeout" if run.rc is None else "crashed")
    run.llm_calls = state.get("llm_calls")
    run.backtracks = int(state.get("backtracks") or 0)
    run.failed_stage = state.get("failed_stage")
    if run.status != "done":
        lines = [ln for ln in (stderr or "").splitlines() if ln.strip()]
        why = state.get("reason") or (lines[-1] if lines else "")
        run.reason = " ".join((why.strip().splitlines() or [""])[-1].split())[:200]
    run.sim_errors = sim.errors
    rows = read_jsonl(Workspace(ws).trajectory) or []
    run.faults, run.mismatch = attribute(rows, sim.code_answers, _meta_covers(source, ws), run.status == "done")
    return run


# ---- tables -----------------------------------------------------------------------------------------


def _mean(xs) -> float | None:
    xs = [x for x in xs if x is not None]
    return sum(xs) / len(xs) if xs else None


def _fmt(x, digits=1) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def summary_rows(runs: list[Run], ps: list[float]) -> list[dict]:
    out = []
    for p in ps:
        for r in REGIMES:
            rs = [x for x in runs if x.p == p and x.regime == r]
            if not rs:
                continue
            faults = [f for x in rs for f in x.faults]
            count = lambda c, faults=faults: sum(f["caught"] == c for f in faults)  # noqa: E731
            out.append(
                {
                    "p": p,
                    "regime": f"({r}) {REGIMES[r][0]}",
                    "key": r,
                    "runs": len(rs),
                    "done": sum(x.status == "done" for x in rs),
                    "success": sum(x.status == "done" for x in rs) / len(rs),
                    "calls": _mean([x.llm_calls for x in rs]),
                    "calls_done": _mean([x.llm_calls for x in rs if x.status == "done"]),
                    "backtracks": _mean([x.backtracks for x in rs]),
                    "injected": len(faults),
                    "unit": count("unit"),
                    "meta": count("meta"),
                    "escaped": count("escaped"),
                    "unseen": count("unseen"),
                }
            )
    return out


def markdown_table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join("---" for _ in header) + " |"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def plain_table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
    fmt = lambda row: "  ".join(str(c).ljust(w) for c, w in zip(row, widths)).rstrip()  # noqa: E731
    return "\n".join([fmt(header), fmt(["-" * w for w in widths]), *map(fmt, rows)])


def paired(runs: list[Run], p: float, better: str, worse: str) -> tuple[int, int, int]:
    """Over (competition, seed) pairs that saw the same faults: (better done & worse not, the reverse, pairs)."""
    by = {(x.competition, x.seed, x.regime): x.status == "done" for x in runs if x.p == p}
    keys = {(c, s) for c, s, r in by if (c, s, better) in by and (c, s, worse) in by}
    won = sum(by[(c, s, better)] and not by[(c, s, worse)] for c, s in keys)
    lost = sum(by[(c, s, worse)] and not by[(c, s, better)] for c, s in keys)
    return won, lost, len(keys)


def verdicts(summary: list[dict], runs: list[Run], ps: list[float]) -> list[str]:
    lines = []
    for p in ps:
        s = {row["key"]: row for row in summary if row["p"] == p}
        if not all(k in s for k in REGIMES):
            continue
        a, b, c = (s[k]["success"] for k in "abc")
        strict = c > b > a
        weak = c >= b >= a
        per_success = {
            k: (s[k]["calls"] * s[k]["runs"] / s[k]["done"]) if s[k]["done"] and s[k]["calls"] else None for k in "abc"
        }
        cb, bc, n = paired(runs, p, "c", "b")
        ba, ab, _ = paired(runs, p, "b", "a")
        lines.append(
            f"p={p}: success (a) {a:.0%}, (b) {b:.0%}, (c) {c:.0%} -> (c) > (b) > (a) "
            f"{'HOLDS' if strict else 'does NOT hold strictly' + (' (but (c) >= (b) >= (a))' if weak else '')}. "
            f"Paired over {n} (competition, seed) fault draws: (c) set up {cb} that (b) did not "
            f"(the reverse: {bc}); (b) set up {ba} that (a) did not (the reverse: {ab}). "
            f"LLM calls per run (a) {_fmt(s['a']['calls'])}, (b) {_fmt(s['b']['calls'])}, "
            f"(c) {_fmt(s['c']['calls'])}; per successful setup (a) {_fmt(per_success['a'])}, "
            f"(b) {_fmt(per_success['b'])}, (c) {_fmt(per_success['c'])}."
        )
    return lines


def op_rows(runs: list[Run]) -> list[list[str]]:
    by = defaultdict(lambda: defaultdict(int))
    for x in runs:
        for f in x.faults:
            by[f["op"]][f["caught"]] += 1
            by[f["op"]]["injected"] += 1
    return [
        [
            op,
            OPERATORS[op].caught_by,
            by[op]["injected"],
            by[op]["unit"],
            by[op]["meta"],
            by[op]["escaped"],
            by[op]["unseen"],
        ]
        for op in OPERATORS
        if by[op]["injected"]
    ]


def report(
    runs: list[Run], ps: list[float], q: float, seeds: int, comps: list[str], elapsed: float | None
) -> tuple[str, str]:
    summary = summary_rows(runs, ps)
    head = [
        "p",
        "regime",
        "runs",
        "success",
        "LLM calls / comp.",
        "calls (done runs)",
        "backtracks",
        "faults injected",
        "caught by unit tests",
        "caught by meta-tests",
        "escaped",
        "unseen",
    ]
    rows = [
        [
            r["p"],
            r["regime"],
            r["runs"],
            f"{r['done']}/{r['runs']} ({r['success']:.0%})",
            _fmt(r["calls"]),
            _fmt(r["calls_done"]),
            _fmt(r["backtracks"], 2),
            r["injected"],
            r["unit"],
            r["meta"],
            r["escaped"],
            r["unseen"],
        ]
        for r in summary
    ]
    cols = [(p, r) for p in ps for r in REGIMES]
    comp_head = ["competition"] + [f"p={p} ({r})" for p, r in cols]
    comp_rows = []
    for comp in comps:
        row = [comp]
        for p, r in cols:
            rs = [x for x in runs if x.competition == comp and x.p == p and x.regime == r]
            row.append(
                f"{sum(x.status == 'done' for x in rs)}/{len(rs)}, {_fmt(_mean([x.llm_calls for x in rs]))} calls"
                if rs
                else "-"
            )
        comp_rows.append(row)
    op_head = ["operator", "meant for", "injected", "caught by unit tests", "caught by meta-tests", "escaped", "unseen"]
    ops = op_rows(runs)
    verdict = verdicts(summary, runs, ps)
    problems = [
        f"{x.competition} p={x.p} ({x.regime}) seed {x.seed}: "
        + "; ".join(filter(None, [x.mismatch, *x.sim_errors[:3]]))
        for x in runs
        if x.mismatch or x.sim_errors
    ]
    failures = [
        f"{x.competition} p={x.p} ({x.regime}) seed {x.seed}: {x.status} at {x.failed_stage}: {x.reason}"
        for x in runs
        if x.status != "done"
    ]
    intro = f"{len(runs)} runs: {len(comps)} competitions x p in {ps} x 3 regimes x {seeds} seed(s); q={q}" + (
        f"; {elapsed / 60:.1f} min." if elapsed else "."
    )
    legend = (
        "Success: the setup state's status is done. LLM calls / comp.: mean of its llm_calls over runs. "
        "Faults: corrupted programs the simulated LLM wrote; unit = its stage's unit tests failed; meta = a "
        "meta-test covering its stage failed while it was live; escaped = still live when the setup was done; "
        "unseen = the run stopped before any test saw it."
    )
    md = (
        "\n\n".join(
            filter(
                None,
                [
                    "# Fault-injection benchmark",
                    intro,
                    legend,
                    markdown_table(head, rows),
                    "## Verdict",
                    "\n".join(f"- {v}" for v in verdict),
                    "## Per competition (setups done / runs, mean LLM calls)",
                    markdown_table(comp_head, comp_rows),
                    "## Faults by operator (all runs)",
                    markdown_table(op_head, ops),
                    "## Failed runs" if failures else "",
                    "\n".join(f"- {f}" for f in failures),
                    "## Attribution problems" if problems else "",
                    "\n".join(f"- {x}" for x in problems),
                ],
            )
        )
        + "\n"
    )
    text = "\n\n".join(
        filter(
            None,
            [
                intro,
                plain_table(head, rows),
                "\n".join(verdict),
                plain_table(comp_head, comp_rows),
                plain_table(op_head, ops),
                ("attribution problems:\n" + "\n".join(problems)) if problems else "",
            ],
        )
    )
    return text, md


# ---- operator self-check ---------------------------------------------------------------------------


def check_operators(comps: dict[str, Path], workdir: Path) -> int:
    """On an expert workspace per competition: each applicable operator changes the code and is caught by
    the test it is meant for (a unit test, or a meta-test after the unit tests pass)."""
    from agentk.core.checks import run_checks
    from agentk.core.engine import Context, Engine
    from agentk.core.memory import WorkingMemory
    from agentk.policies.expert import ExpertPolicy
    from agentk.setup_pipeline import setup_pipeline

    bad = 0
    for comp, source in comps.items():
        base = workdir / f"expert-{comp}"
        shutil.rmtree(base, ignore_errors=True)
        base.mkdir(parents=True)
        try:  # in process, like the CLI's expert policy: the operators are checked on the expert's own setup
            state = Engine(base, setup_pipeline(source), ExpertPolicy()).run()
            status, reason = state.status, state.reason
        except Exception as exc:  # noqa: BLE001
            status, reason = f"{type(exc).__name__}: {exc}", None
        if status != "done":
            print(f"{comp}: the expert setup failed: {status} {reason or ''}"[:300])
            bad += 1
            continue
        stages, metas = setup_pipeline(source)(base)
        expert = ExpertPolicy()
        for stage in stages:
            if stage.kind != "code":
                continue
            correct = expert.act(stage, Context(base, "first", 0, WorkingMemory(), None, None)).code
            for name, code in applicable(correct, stage.name, base).items():
                op = OPERATORS[name]
                ws = workdir / f"{comp}-{stage.name}-{name}"
                shutil.rmtree(ws, ignore_errors=True)
                shutil.copytree(base, ws, symlinks=True)
                (ws / stage.code_file).write_text(code)
                unit = run_checks(stage.checks, ws, timeout=stage.timeout, code=stage.code_file, output=stage.output)
                caught, by = ("unit", unit.failed) if not unit.passed else (None, None)
                if caught is None:
                    for meta in metas:
                        if stage.name in meta.covers:
                            rep = run_checks(meta.checks, ws)
                            if not rep.passed:
                                caught, by = "meta", meta.name
                                break
                want = op.caught_by
                ok = caught == want if want == "unit" else (caught == "meta" and (want == "meta" or by == want))
                bad += not ok
                print(
                    f"{'ok  ' if ok else 'FAIL'} {comp:42s} {stage.name:28s} {name:18s} caught by "
                    f"{caught or 'nothing'}{f' ({by})' if by else ''}; meant for {want}"
                )
                shutil.rmtree(ws, ignore_errors=True)
    print("all operators caught as intended" if not bad else f"{bad} operator checks failed")
    return 0 if not bad else 1


# ---- main -------------------------------------------------------------------------------------------


def competitions(args) -> dict[str, Path]:
    found: dict[str, Path] = {}
    for name in EXAMPLES:
        found[name] = ROOT / "examples" / name
    for name in ARENA_TABULAR:
        d = Path(args.arena) / name
        found[name] = d / "public" if (d / "public").is_dir() else d
    names = args.only or (QUICK if args.quick else list(found))
    unknown = [n for n in names if n not in found]
    if unknown:
        raise SystemExit(f"fault_injection.py: unknown competitions {unknown}; known: {sorted(found)}")
    missing = [n for n in names if not found[n].is_dir()]
    if missing:
        raise SystemExit(f"fault_injection.py: no folder for {missing} (--arena {args.arena})")
    return {n: found[n] for n in names}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--p", type=float, nargs="+", default=[0.2, 0.5], help="probabilities of a corrupted program")
    ap.add_argument("--q", type=float, default=0.7, help="probability of a repair once the error is shown")
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--jobs", type=int, default=2, help="runs at a time")
    ap.add_argument("--only", nargs="+", help="competition names")
    ap.add_argument("--arena", default=str(ROOT.parent / "shared" / "arena-dev"))
    ap.add_argument("--regimes", nargs="+", choices=sorted(REGIMES), default=sorted(REGIMES))
    ap.add_argument("--quick", action="store_true", help=f"a smoke run: 1 seed, {', '.join(QUICK)}")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "out")
    ap.add_argument("--workdir", type=Path, help="where the workspaces go [default: a temporary folder, removed]")
    ap.add_argument("--timeout", type=float, default=900, help="seconds per run")
    ap.add_argument("--check-operators", action="store_true", help="verify the operators on expert workspaces")
    ap.add_argument("--from-json", type=Path, help="re-render the tables of an earlier fault_injection.json")
    try:
        args = ap.parse_args(argv)
    except SystemExit as e:
        return 2 if e.code else 0
    if args.quick:
        args.seeds = 1
    if args.from_json:
        data = json.loads(args.from_json.read_text())
        runs = [Run(**r) for r in data["runs"]]
        comps = list(dict.fromkeys(r.competition for r in runs))
        text, md = report(runs, data["p"], data["q"], data["seeds"], comps, data.get("seconds"))
        print(text)
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "fault_injection.md").write_text(md)
        return 0
    try:
        comps = competitions(args)
    except SystemExit as e:
        print(e, file=sys.stderr)
        return 2
    tmp = None
    workdir = args.workdir
    if workdir is None:
        tmp = tempfile.TemporaryDirectory(prefix="agentk-fault-")
        workdir = Path(tmp.name)
    workdir.mkdir(parents=True, exist_ok=True)
    try:
        if args.check_operators:
            return check_operators(comps, workdir)
        jobs = [
            (c, src, p, r, s)
            for s in range(args.seeds)
            for c, src in comps.items()
            for p in args.p
            for r in args.regimes
        ]
        print(f"{len(jobs)} runs, {args.jobs} at a time; workspaces in {workdir}", flush=True)
        runs: list[Run] = []
        t0 = time.monotonic()
        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            futures = {
                pool.submit(run_one, c, src, p, r, s, args.q, workdir, args.timeout): (c, p, r, s)
                for c, src, p, r, s in jobs
            }
            for fut in as_completed(futures):
                c, p, r, s = futures[fut]
                try:
                    run = fut.result()
                except Exception as exc:  # noqa: BLE001 - a benchmark bug in one run must not lose the others
                    run = Run(c, str(comps[c]), p, r, s, reason=f"{type(exc).__name__}: {exc}")
                runs.append(run)
                caught = ", ".join(f"{f['op']}@{f['stage']}->{f['caught']}" for f in run.faults) or "no faults"
                print(
                    f"[{len(runs)}/{len(jobs)}] {c} p={p} ({r}) seed {s}: {run.status} "
                    f"({run.llm_calls} calls, {run.backtracks} backtracks, {run.seconds:.0f}s) {caught}"
                    + (f" | {run.reason[:120]}" if run.status != "done" else ""),
                    flush=True,
                )
        runs.sort(key=lambda x: (list(comps).index(x.competition), x.p, x.regime, x.seed))
        text, md = report(runs, args.p, args.q, args.seeds, list(comps), time.monotonic() - t0)
        print()
        print(text)
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "fault_injection.md").write_text(md)
        (args.out / "fault_injection.json").write_text(
            json.dumps(
                {
                    "p": args.p,
                    "q": args.q,
                    "seeds": args.seeds,
                    "seconds": time.monotonic() - t0,
                    "runs": [r.__dict__ for r in runs],
                },
                indent=1,
            )
        )
        print(f"\nwritten: {args.out / 'fault_injection.md'}, {args.out / 'fault_injection.json'}")
        return 0 if all(r.status in ("done", "failed") for r in runs) else 1
    finally:
        if tmp is not None:
            tmp.cleanup()


if __name__ == "__main__":
    sys.exit(main())
