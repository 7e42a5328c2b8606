"""The curriculum loop (paper 3.3): pick a task, set it up, solve it, maybe submit it, remember how it went.

Each step is a call of agentk.api (run_setup, run_solve, run_submit) in this process, whose progress, and on
failure its one-line reason, go to <out>/logs/. The state lives in <out>/curriculum.json, rewritten atomically
after every step, so a killed run resumes at the step it was in: a round's step is one of picked → setup →
solve → submit → memory → done, and setup and solve resume their own half-finished work (a setup's resume,
kept solutions). A task leaves the pool once solved; a failed one stays and competes again, held back by the
recency penalty and by its RAG⁻ entry.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TextIO

import numpy as np
from rich.text import Text

from agentk import api, ray_backend
from agentk.core.errors import AgentFailed, BadInput
from agentk.core.fileio import read_json, write_json
from agentk.core.lock import hold
from agentk.core.state import load_state
from agentk.workspace import Workspace
from curriculum import selection
from curriculum.pool import Task, describe, ease, read_pool

EMPTY = np.zeros((0, 384))


SELECTIONS = ("eq7", "recency", "random")


class Curriculum:
    def __init__(
        self,
        pool_file: Path,
        out_dir: Path,
        rounds: int,
        submit: bool = False,
        alpha: float = 1.0,
        beta: float = 1.0,
        r: int = 3,
        memory=None,
        budget: str = "quick",
        policy: str | None = None,
        setup_only: bool = False,
        selection: str = "eq7",
        seed: int = 0,
        ray: str | None = None,
        unsafe_sandbox: bool = False,
        first_pick: Callable[[list[tuple[str, str]]], str] | None = None,
        on_round: Callable[[dict], None] | None = None,
        log: Callable[[str], None] = lambda m: None,
    ):
        """memory: a rag.memory.Memory (None: no RAG, every similarity is 0, so picks follow the recency penalty
        and the easiest-tree order); the rounds' setups store their fixes there too. policy: the setups' policy
        (None: run_setup's default). setup_only: a round is a setup, success is a finished setup (no solve, no submit).
        selection: "eq7" (the paper's rule), or for ablations "recency" (β·e^(−λ) alone, ties at random) and
        "random" (uniform over the pool). ray: a Ray address ("local", "auto", "ray://…"): each step runs in a
        Ray task (agentk.ray_backend), on a cluster node with a GPU for solve when the cluster has one.
        first_pick: optional hook (e.g. an LLM) given [(task name, data tree)] that names the first task while
        the memory is empty; otherwise the easiest-looking tree goes first."""
        if selection not in SELECTIONS:
            raise ValueError(f"selection must be one of {SELECTIONS}")
        self.pool_file, self.out = Path(pool_file), Path(out_dir).resolve()
        self.rounds, self.submit, self.budget = rounds, submit, budget
        self.policy, self.setup_only, self.selection, self.ray = policy, setup_only, selection, ray
        self.unsafe_sandbox = unsafe_sandbox
        self.alpha, self.beta, self.r = alpha, beta, r
        self.memory, self.first_pick, self.on_round, self.log = memory, first_pick, on_round, log
        self.state_path = Workspace(self.out).curriculum_state
        self.tasks = read_pool(self.pool_file)  # bad pool: BadInput before anything is written
        self.state = read_json(self.state_path) or {
            "run_id": uuid.uuid4().hex[:12],
            "pool": str(self.pool_file.resolve()),
            "solved": [],
            "last_tried": {},
            "rounds": [],
        }
        self.state.update(alpha=alpha, beta=beta, r=r, submit=submit, selection=selection, setup_only=setup_only)
        self.seed = seed

    # ---- the loop ------------------------------------------------------------------------------------
    def run(self) -> dict:
        self.out.mkdir(parents=True, exist_ok=True)
        with hold(Workspace(self.out).lock):  # one curriculum per out folder: another one exits 2 naming this one
            rounds = self.state["rounds"]
            while True:
                if rounds and rounds[-1]["step"] != "done":
                    self._play(rounds[-1])  # a round a killed run left unfinished
                    continue
                pool = [t for t in self.tasks if t.name not in self.state["solved"]]
                if len(rounds) >= self.rounds or not pool:
                    break
                rounds.append(self._pick(pool, len(rounds)))
                self._save()
        return self.state

    def _save(self) -> None:
        write_json(self.state_path, self.state)

    # ---- selection -----------------------------------------------------------------------------------
    def _pick(self, pool: list[Task], n: int) -> dict:
        texts = [describe(t, self.out / t.name) for t in pool]
        pos = self.memory.experiences(True) if self.memory else []
        neg = self.memory.experiences(False) if self.memory else []
        order = sorted(range(len(pool)), key=lambda i: ease(pool[i], self.out / pool[i].name))
        rank = [order.index(i) for i in range(len(pool))]
        last = [self.state["last_tried"].get(t.name) for t in pool]
        if self.memory:
            desc = self.memory.embed([d for d, _ in texts])
            tree = self.memory.embed([t for _, t in texts])
        else:
            desc = tree = np.zeros((len(pool), 384))
        score = selection.scores(
            desc,
            tree,
            self._emb(pos, "embedding"),
            self._emb(pos, "tree"),
            self._emb(neg, "embedding"),
            self._emb(neg, "tree"),
            last,
            n,
            self.alpha,
            self.beta,
            self.r,
        )
        rng = np.random.default_rng([self.seed, n])  # per round: a resumed run draws what an unbroken one would
        if self.selection == "random":
            i, why = int(rng.integers(len(pool))), "random (ablation)"
        elif self.selection == "recency":
            score = -selection.recency_penalty(last, n, self.beta)
            i, why = selection.pick(score, rng.permutation(len(pool))), "recency penalty alone (ablation)"
        elif not pos and not neg and self.first_pick and n == 0:
            try:
                name = self.first_pick([(t.name, tr) for t, (_, tr) in zip(pool, texts)])
            except Exception as exc:  # noqa: BLE001 - an unanswered question costs the advice, not the run
                self.log(f"first pick: no answer ({exc}); the easiest tree goes first")
                name = None
            i = next((i for i, t in enumerate(pool) if t.name == name), None)
            i, why = (i, "first pick (LLM)") if i is not None else (order[0], "easiest tree (empty memory)")
        else:
            i = selection.pick(score, rank)
            why = "easiest tree (empty memory)" if not pos and not neg and n == 0 else "highest score"
        task = pool[i]
        self.state["last_tried"][task.name] = n  # set now: a round killed mid-way was still a try
        self.log(f"round {n + 1}: {task.name} ({why})")
        return {
            "round": n,
            "task": task.name,
            "source": task.source,
            "why": why,
            "step": "picked",
            "scores": {t.name: round(float(s), 6) for t, s in zip(pool, score)},
            "runs": {},
            "setup_rc": None,
            "setup_passed": None,
            "llm_calls": None,
            "tokens": None,
            "solve_rc": None,
            "metric": None,
            "val_score": None,
            "submit_rc": None,
            "public_score": None,
            "outcome": None,
        }

    def _emb(self, experiences: list[dict], key: str) -> np.ndarray:
        if not experiences:
            return EMPTY
        if key == "embedding":
            return np.stack([e["embedding"] for e in experiences])
        return self.memory.embed([e["tree"] for e in experiences])

    # ---- one round, step by step ---------------------------------------------------------------------
    def _play(self, rec: dict) -> None:
        ws = Workspace(self.out / rec["task"])
        step = rec["step"]
        if step == "picked":
            if ws.root.exists():  # an earlier, failed attempt: this round starts over
                with hold(ws.lock) as lock:  # not under a run someone started in it by hand
                    lock.empty_folder()
            rec["step"] = "setup"
        elif step == "setup":
            rec["setup_rc"] = self._step(rec, "setup")
            rec["setup_passed"] = rec["setup_rc"] == 0
            setup = load_state(ws.setup_state)
            rec["llm_calls"], rec["tokens"] = (setup.llm_calls, setup.tokens) if setup else (None, None)
            rec["step"] = "solve" if rec["setup_passed"] and not self.setup_only else "memory"
        elif step == "solve":
            rec["solve_rc"] = self._step(rec, "solve")
            solved = read_json(ws.solve_summary) or {}
            best = next((s for s in solved.get("solutions", []) if s["id"] == solved.get("best")), None)
            rec["metric"], rec["val_score"] = solved.get("metric"), best and best["val_score"]
            rec["step"] = "submit" if self.submit and rec["solve_rc"] == 0 else "memory"
        elif step == "submit":
            rec["submit_rc"] = self._step(rec, "submit")
            done = [s for s in read_json(ws.submissions, []) if s.get("public_score") is not None]
            rec["public_score"] = done[-1]["public_score"] if done else None
            rec["step"] = "memory"
        elif step == "memory":
            self._remember(rec, ws.root)
            rec["step"] = "done"
            if self.on_round:
                self.on_round(rec)
        self._save()

    def _step(self, rec: dict, step: str) -> int:
        """Runs one step of the round (setup, solve or submit) and returns its exit code; a subclass may wrap
        it to watch the step (benchmarks/learning_curve.py)."""
        rec["runs"][step] = rec["runs"].get(step, 0) + 1
        self._save()  # the run count is on disk before the run: a resume shows it was retried
        logs = Workspace(self.out).logs
        logs.mkdir(exist_ok=True)
        self.log(f"  {step} {rec['task']}…")
        path = logs / f"round-{rec['round'] + 1}-{rec['task']}-{step}.log"
        ws = Workspace(self.out / rec["task"])
        job = Step(
            step, rec["source"], str(ws.root), ws.setup_state.exists(), self.policy, self.unsafe_sandbox, self.budget
        )
        if self.ray:
            # a Ray task runs the step in a child process of its own: the driver's settings (LLM endpoint, the
            # curriculum's memory) go with it in its environment, all its output goes to the log, and the
            # long-lived Ray worker keeps nothing of it (generated modules, torch state)

            ray_backend.connect(self.ray)
            env = dict(os.environ)
            if self.memory is not None:  # the setup's fixes go to the curriculum's memory
                env["AGENTK_MEMORY"] = str(self.memory.path)
            gpus = 1 if step == "solve" and ray_backend.cluster_gpus() else 0  # training wants a GPU node
            rc = ray_backend.run_command(
                [sys.executable, "-c", STEP_MAIN, json.dumps(asdict(job))], path, env=env, cwd=Path.cwd(), num_gpus=gpus
            )
        else:
            with open(path, "a") as log:
                rc = run_step(job, log, self.memory)
        if rc != 0:  # the step's last line says why (one line for exit 2): it goes into the RAG⁻ outcome
            lines = [ln for ln in path.read_text(errors="replace").splitlines() if ln.strip()]
            rec["error"] = lines[-1].strip()[:300] if lines else f"exit code {rc}"
        return rc

    def _remember(self, rec: dict, ws: Path) -> None:
        """Success (setup and solve passed, and the submission was scored when asked for) goes to RAG⁺ and
        wipes the task's RAG⁻ entries; anything else goes to RAG⁻ and the task stays in the pool."""
        ok = rec["setup_passed"] and (
            self.setup_only or rec["solve_rc"] == 0 and (not self.submit or rec["submit_rc"] == 0)
        )
        if not rec["setup_passed"]:
            outcome = f"setup failed (exit {rec['setup_rc']})"
        elif self.setup_only:
            outcome = "set up"
        elif rec["solve_rc"] != 0:
            outcome = f"solve failed (exit {rec['solve_rc']})"
        elif not ok:
            outcome = f"submission failed (exit {rec['submit_rc']})"
        else:
            outcome = f"solved: validation {rec['metric']} {rec['val_score']:.5g}"
        rec["outcome"] = outcome + (f": {rec['error']}" if not ok and rec.get("error") else "")
        if ok and rec["task"] not in self.state["solved"]:
            self.state["solved"].append(rec["task"])
        if self.memory is None:
            return
        tag = {"curriculum": self.state["run_id"], "round": rec["round"]}
        stored = self.memory.experiences(bool(ok))
        if any(e["task"] == rec["task"] and all(e["scores"].get(k) == v for k, v in tag.items()) for e in stored):
            return  # this round was remembered before a kill: once is enough
        task = next(
            (t for t in self.tasks if t.name == rec["task"]), Task(rec["task"], rec["source"], "://" in rec["source"])
        )
        description, tree = describe(task, ws)
        scores = {**tag, "val_score": rec["val_score"], "public_score": rec["public_score"], "metric": rec["metric"]}
        if ok:
            self.memory.remove_negatives(rec["task"])
        self.memory.add_experience(bool(ok), rec["task"], description, tree, outcome, scores)


@dataclass(frozen=True)
class Step:
    """One step of a round as plain data, so that it can run in another process."""

    name: str  # setup, solve or submit
    source: str  # the task's folder or URL
    workspace: str
    resume: bool = False  # setup: continue the workspace's half-finished setup
    policy: str | None = None  # setup: None is run_setup's default
    unsafe_sandbox: bool = False  # setup: LLM-written code may run without the sandbox
    budget: str = "quick"  # solve


def run_step(step: Step, out: TextIO, memory=None) -> int:
    """Runs a step through agentk.api, its progress written to `out`, and returns its exit code as `agentk
    <step>` would: 0 done, 1 the agent failed (or crashed), 2 bad input; on failure the last line says why.
    memory: the long-term memory for the setup's fixes (None: $AGENTK_MEMORY or ~/.agentk/memory)."""

    def progress(kind: str, info: dict) -> None:
        line = api.describe_event(kind, info)
        if line:
            print(Text.from_markup(line).plain, file=out, flush=True)

    ws = Path(step.workspace)
    try:
        if step.name == "setup":
            api.run_setup(
                step.source,
                ws,
                step.policy,
                resume=step.resume,
                memory=memory,
                unsafe_sandbox=step.unsafe_sandbox,
                on_event=progress,
            )
        elif step.name == "solve":
            api.run_solve(ws, step.budget, output=out)
            print(f"report {api.run_report(ws)}", file=out, flush=True)
        else:
            api.run_submit(ws)
    except (BadInput, AgentFailed) as exc:
        print(api.one_line(exc), file=out, flush=True)
        return exc.exit_code
    except Exception:  # noqa: BLE001 - a crash fails the step (exit 1, the traceback in the log), not the run
        traceback.print_exc(file=out)
        return 1
    print(f"{step.name} done", file=out, flush=True)
    return 0


# one step in a process of its own: python -c STEP_MAIN '<Step as JSON>', this module as __main__ after agentk is
# imported (an installed wheel keeps curriculum/ in agentk/_packages/, which importing agentk puts on sys.path)
STEP_MAIN = "import runpy, agentk; runpy.run_module('curriculum.runner', run_name='__main__', alter_sys=True)"

if __name__ == "__main__":
    sys.exit(run_step(Step(**json.loads(sys.argv[1])), sys.stdout))
