"""`agentk curriculum`: run the curriculum over a pool file, printing a table after every round.

`curriculum_command` is what `agentk curriculum` (agentk/cli.py) runs.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from agentk import ray_backend
from agentk.api import POLICIES
from agentk.core.errors import BadInput
from agentk.core.sandbox import require_sandbox
from agentk.policies.llm import LLMClient, LLMConfig
from agentk.solve.budgets import PRESETS
from agentk.workspace import Workspace

console = Console(stderr=True)


def _fmt(x) -> str:
    return "–" if x is None else (f"{x:.5g}" if isinstance(x, float) else str(x))


def round_table(rec: dict) -> Table:
    table = Table(title=f"round {rec['round'] + 1}: {rec['task']} ({rec['why']})")
    for col in ("setup", "LLM calls", "tokens", "validation", "public", "outcome"):
        table.add_column(col)
    setup = "passed" if rec["setup_passed"] else f"failed (exit {rec['setup_rc']})"
    val = f"{rec['metric']} {_fmt(rec['val_score'])}" if rec["val_score"] is not None else "–"
    table.add_row(
        setup,
        _fmt(rec["llm_calls"]),
        _fmt(rec["tokens"]),
        escape(val),
        _fmt(rec["public_score"]),
        escape(rec["outcome"] or ""),
    )
    return table


def _llm_first_pick(policy: str | None, out: Path):
    """With an LLM configured (and a policy that uses it), the LLM names the first task (paper 3.3)."""

    config = LLMConfig.load()
    if policy == "expert" or not config.configured:
        return None

    def pick(trees: list[tuple[str, str]]) -> str | None:
        from agentk.policies import intrinsics as fn

        out.mkdir(parents=True, exist_ok=True)
        return fn.first_task(fn.Calls(LLMClient(config, log_path=out / Workspace.LLM_LOG)), trees)

    return pick


def curriculum_command(pool: Path, out: Path, memory: Path | None, **options) -> dict:
    """Run (or resume, when <out>/curriculum.json exists) the rounds over the pool. `options` are Curriculum's
    (rounds, submit, alpha, beta, r, budget, policy, setup_only, selection, seed, ray, unsafe_sandbox), each
    given: `agentk curriculum` passes its parsed options, checked here before any round."""
    from curriculum.runner import SELECTIONS, Curriculum
    from rag.memory import Memory

    o = SimpleNamespace(**options)
    if o.rounds < 1 or o.r < 1:
        raise BadInput("--rounds and -r must be at least 1")
    if o.budget not in PRESETS:
        raise BadInput(f"unknown budget {o.budget!r}: use {', '.join(PRESETS)}")
    if o.policy is not None and o.policy not in POLICIES:
        raise BadInput(f"unknown policy {o.policy!r}: use expert, llm or hybrid")
    if o.selection not in SELECTIONS:
        raise BadInput(f"unknown selection {o.selection!r}: use {', '.join(SELECTIONS)}")
    if o.submit and o.setup_only:
        raise BadInput("--submit needs a solve: drop --setup-only")
    if o.policy != "expert" and (o.policy is not None or LLMConfig.load().configured):
        require_sandbox(o.unsafe_sandbox)  # before any round, not once per round
    if o.ray:
        ray_backend.connect(o.ray)  # no Ray installed, or no cluster at that address: exit 2 before any round
    cur = Curriculum(
        pool,
        out,
        **options,
        first_pick=_llm_first_pick(o.policy, out),
        memory=None,  # opened below, once the pool file is known to be good
        on_round=lambda rec: console.print(round_table(rec)),
        log=lambda m: console.print(f"[dim]…[/dim] {escape(m)}", highlight=False),
    )
    cur.memory = Memory(memory)  # None: AGENTK_MEMORY or ~/.agentk/memory, shared with setup's fixes
    state = cur.run()
    done = [r_ for r_ in state["rounds"] if r_["step"] == "done"]
    from curriculum.report import write_curriculum_report

    console.print(
        f"[green]curriculum[/green]: {len(done)} rounds, solved {len(state['solved'])}/{len(cur.tasks)}"
        f" ({', '.join(state['solved']) or 'none'}); state in {cur.state_path}; report {write_curriculum_report(cur.out)}",
        highlight=False,
        soft_wrap=True,
    )
    return state
