"""Summarise the task: goal, evaluation, files, targets and submission format, in a page."""

from __future__ import annotations

import re
from pathlib import Path

from agentk.competition.dataview import cut, data_view, file_tree, task_view
from agentk.core.checks import Check
from agentk.core.engine import Action, Context, Stage
from agentk.policies.analysis import Analysis
from agentk.workspace import ROLE_TASK, SUMMARISE, Workspace
from unit_tests_lib.task import check_summary

GOAL = f"Write {Workspace.SUMMARY}: the goal, the evaluation metric, the data files, the targets and the submission format."


def _first_paragraph(markdown: str, limit: int = 700) -> str:
    for block in re.split(r"\n\s*\n", markdown):
        text = block.strip()
        if text and not text.startswith("#") and len(text) > 60:
            return text[:limit]
    return markdown.strip()[:limit]


def expert(a: Analysis, ctx: Context) -> Action:
    w = Workspace(ctx.ws)
    description = w.description.read_text()
    evaluation = w.evaluation.read_text().strip()
    lines = [
        "# Task summary",
        "",
        "## Goal",
        _first_paragraph(description),
        "",
        "## Evaluation",
        _metric_line(a),
        _first_paragraph(evaluation, 500) if evaluation else "",
        "",
        "## Data",
        f"- train: {a.train} ({a.n_train} rows), test: {a.test} ({a.n_test} rows)",
        f"- {len(a.features)} input features: {', '.join(a.features[:30])}{' ...' if len(a.features) > 30 else ''}",
        "",
        "## Targets",
    ]
    for t in a.targets:
        classes = f" classes {t.classes[:10]}" if t.classes else ""
        lines.append(f"- {t.column}: {t.kind}{classes}; submitted as {t.submit} in {len(t.columns)} column(s)")
    lines += [
        "",
        "## Submission",
        f"Id column `{a.id_col}`; prediction columns: {', '.join(a.submission_columns[:20])}"
        f"{' ...' if len(a.submission_columns) > 20 else ''}; one row per test id ({a.n_test}).",
        "",
        "## Files",
        "```",
        file_tree(w.raw, max_lines=25),
        "```",
    ]
    return Action(text="\n".join(lines))


def prompt(ws: Path) -> str:
    evaluation = Workspace(ws).evaluation
    return f"""
Summarise this Kaggle competition in at most one page of markdown with the sections: Goal, Evaluation
(name the metric exactly), Data, Targets, Submission (name the id column and every prediction column).

{task_view(ws)}

Evaluation section:
{cut(evaluation.read_text() if evaluation.exists() else "", 2000)}

{data_view(ws)}"""


def _metric_line(a: Analysis) -> str:
    if a.metric_from == "proxy":
        return (
            f"Metric: {a.metric} (a proxy: the description names {a.official_metric}, which also weighs sub-groups "
            "through train columns it does not name)."
        )
    return f"Metric: {a.metric} (taken from the {a.metric_from})."


STAGE = Stage(
    SUMMARISE,
    GOAL,
    kind="text",
    output=Workspace.SUMMARY,
    checks=[Check(check_summary)],
    expert=expert,
    hints="Keep it under a page. Name the metric, the id column and every target column.",
    role=ROLE_TASK,
    prompt=prompt,
)
