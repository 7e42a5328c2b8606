"""A curriculum's report: <out>/report.html, from curriculum.json. Its rounds (task, why it was picked, outcome),
pass@k over the tasks tried, successes over rounds (and over LLM calls when an LLM was used), the scores per task,
and the eq. 7 selection scores round by round. Each round's workspace keeps its own report, linked from the table.

pass@k here: the share of the tasks tried at least once whose first success came within their first k tries
(a task solved in its second round counts for k >= 2; a task never solved counts against every k)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from agentk.core.errors import BadInput
from agentk.core.fileio import read_json, write_text
from agentk.report import Raw, esc, figure, link, number, page, pyplot, table
from agentk.workspace import Workspace


def write_curriculum_report(out: Path) -> Path:
    """Writes <out>/report.html and returns its path; BadInput when out holds no curriculum."""
    folder = Workspace(out)
    state = read_json(folder.curriculum_state)
    if state is None:
        raise BadInput(f"{out} holds no curriculum ({folder.curriculum_state.name}): run `agentk curriculum` first")
    rounds = [r for r in state.get("rounds", []) if r.get("step") == "done"]
    sections = [
        ("rounds", "Rounds", _rounds(out, state, rounds)),
        ("passk", "pass@k", _pass_at_k(rounds)),
        ("successes", "Successes over time", _successes(rounds)),
        ("scores", "Scores per competition", _scores(out, rounds)),
        ("selection", "Selection scores (eq. 7)", _selection(rounds)),
    ]
    settings = ", ".join(f"{k} {state.get(k)}" for k in ("selection", "alpha", "beta", "r", "setup_only", "submit"))
    doc = page(f"agentk curriculum report: {out.name}", f"pool {state.get('pool')} · {settings}", sections)
    write_text(folder.report, doc)
    return folder.report


def success(rec: dict) -> bool:
    return rec.get("outcome", "").startswith(("solved", "set up"))


def pass_at_k(rounds: list[dict]) -> dict[int, float]:
    """k -> share of the tried tasks whose first success came within their first k tries (see the module)."""
    tries: dict[str, list[bool]] = {}
    for rec in rounds:
        tries.setdefault(rec["task"], []).append(success(rec))
    if not tries:
        return {}
    most = max(len(t) for t in tries.values())
    return {k: sum(any(t[:k]) for t in tries.values()) / len(tries) for k in range(1, most + 1)}


def _rounds(out: Path, state: dict, rounds: list[dict]) -> str:
    solved = state.get("solved", [])
    head = (
        f"<p>{len(rounds)} rounds done; {len(solved)} tasks solved ({esc(', '.join(solved) or 'none')}). "
        f"Each step's output: {link(Workspace(out).logs, out, 'logs/')}.</p>"
    )
    rows = []
    for rec in rounds:
        ws = Workspace(out / rec["task"])
        cls = "ok" if success(rec) else "bad"
        rows.append(
            [
                rec["round"] + 1,
                Raw(link(ws.report, out, rec["task"])),
                rec.get("why", ""),
                "passed" if rec.get("setup_passed") else f"failed (exit {rec.get('setup_rc')})",
                number(rec.get("llm_calls")),
                number(rec.get("tokens")),
                f"{rec.get('metric')} {number(rec.get('val_score'))}" if rec.get("val_score") is not None else "–",
                number(rec.get("public_score")),
                Raw(f"<span class={cls}>{esc(rec.get('outcome') or '')}</span>"),
            ]
        )
    return head + table(
        ["round", "task", "picked because", "setup", "LLM calls", "tokens", "validation", "public", "outcome"],
        rows,
        numeric={0, 4, 5, 7},
    )


def _pass_at_k(rounds: list[dict]) -> str:
    shares = pass_at_k(rounds)
    if not shares:
        return "<p>No round finished yet.</p>"
    n = len({r["task"] for r in rounds})
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5, 3))
    ax.bar([str(k) for k in shares], list(shares.values()), color="#26a69a")
    ax.set_ylim(0, 1)
    ax.set_xlabel("k (tries of a task)")
    ax.set_ylabel("share of tasks solved")
    ax.set_title(f"pass@k over the {n} tasks tried")
    return (
        f"<p>The share of the {n} tasks tried whose first success came within their first k tries.</p>"
        + table(["k", "pass@k"], [[k, f"{v:.0%}"] for k, v in shares.items()], numeric={0, 1})
        + figure(fig, "pass@k")
    )


def _successes(rounds: list[dict]) -> str:
    if not rounds:
        return "<p>No round finished yet.</p>"
    plt = pyplot()
    solved, seen, calls, total = [], set(), [], 0
    for rec in rounds:
        if success(rec):
            seen.add(rec["task"])
        solved.append(len(seen))
        total += rec.get("llm_calls") or 0
        calls.append(total)
    with_llm = total > 0
    fig, axes = plt.subplots(1, 2 if with_llm else 1, figsize=(10 if with_llm else 5, 3), squeeze=False)
    axes[0][0].step(range(1, len(rounds) + 1), solved, where="post", color="#ef6c00", marker="o")
    axes[0][0].set_xticks(range(1, len(rounds) + 1))
    axes[0][0].set_xlabel("round")
    axes[0][0].set_ylabel("tasks solved so far")
    axes[0][0].set_title("successes over rounds")
    if with_llm:  # the paper's Figure 14: what the successes cost
        axes[0][1].step(calls, solved, where="post", color="#6a1b9a", marker="o")
        axes[0][1].set_xlabel("LLM calls so far")
        axes[0][1].set_title("successes over LLM calls")
    axes[0][0].yaxis.get_major_locator().set_params(integer=True)
    return figure(fig, "successes over time")


def _scores(out: Path, rounds: list[dict]) -> str:
    tasks: dict[str, list[dict]] = {}
    for rec in rounds:
        tasks.setdefault(rec["task"], []).append(rec)
    rows = []
    for task, recs in tasks.items():
        scored = [r for r in recs if r.get("val_score") is not None and math.isfinite(r["val_score"])]
        metric = next((r["metric"] for r in scored), None)
        higher = _higher(out / task)
        best = None
        if scored:
            pick = max if higher is not False else min
            best = pick(r["val_score"] for r in scored)
        public = [r["public_score"] for r in recs if r.get("public_score") is not None]
        rows.append(
            [
                task,
                metric or "–",
                "" if higher is None else "higher" if higher else "lower",
                number(best),
                number(public[-1]) if public else "–",
                len(recs),
                "yes" if any(success(r) for r in recs) else "no",
            ]
        )
    if not rows:
        return "<p>No round finished yet.</p>"
    return (
        "<p>Validation scores are each competition's own metric on its own validation rows: compare a task with "
        "itself across rounds, not tasks with each other.</p>"
        + table(
            ["task", "metric", "better", "best validation", "last public score", "tries", "solved"], rows, {3, 4, 5}
        )
    )


def _higher(ws_root: Path) -> bool | None:
    summary = read_json(Workspace(ws_root).solve_summary) or {}
    return summary.get("higher_is_better")


def _selection(rounds: list[dict]) -> str:
    """The eq. 7 score of every task still in the pool at each round (the picked one is the highest, ties broken
    by the easiest tree), as a heat map."""
    scored = [r for r in rounds if r.get("scores")]
    if not scored:
        return "<p>No selection scores recorded.</p>"
    names = list(dict.fromkeys(n for r in scored for n in r["scores"]))

    grid = np.full((len(names), len(scored)), np.nan)
    for j, rec in enumerate(scored):
        for name, value in rec["scores"].items():
            grid[names.index(name), j] = value
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(min(2 + 0.6 * len(scored), 12), 0.4 * len(names) + 1.5))
    image = ax.imshow(grid, aspect="auto", cmap="viridis")
    for j, rec in enumerate(scored):
        ax.plot(j, names.index(rec["task"]), "o", markerfacecolor="none", markeredgecolor="red", markersize=12)
    ax.set_yticks(range(len(names)), names)
    ax.set_xticks(range(len(scored)), [str(r["round"] + 1) for r in scored])
    ax.set_xlabel("round (red circle: the task picked; blank: not in the pool)")
    fig.colorbar(image, ax=ax, label="eq. 7 score")
    return f"<p>Why each task was picked: {esc(scored[0].get('why', ''))} first, then by score.</p>" + figure(
        fig, "selection scores"
    )
