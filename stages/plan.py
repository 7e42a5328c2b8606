"""Plan the rest of the setup: the ordered stages still to do, pruned by the modalities (no unit tests)."""

from __future__ import annotations

import json
from pathlib import Path

from agentk.competition.dataview import task_view
from agentk.core.engine import Action, Context, Stage
from agentk.policies.analysis import Analysis
from agentk.workspace import PLAN, ROLE_TASK, Workspace
from stages.codegen import parse_json_object

GOAL = f'Write {Workspace.PLAN}: {{"stages": [the remaining stage names, in order], "notes": [at most 3 short steps]}}.'


def expert(a: Analysis, ctx: Context, remaining: list[str]) -> Action:
    notes = [
        f"Build id-keyed maps of the {len(a.features)} features and of the targets {[t.column for t in a.targets]}",
        f"Encode targets for a {a.task_type} model and format predictions like {a.sample}",
        f"Score with {a.metric}, then check the whole chain with a light solve",
    ]
    return Action(text=json.dumps({"stages": remaining, "notes": notes}, indent=2))


def prompt(ws: Path, remaining: list[str]) -> str:
    return f"""
Plan the rest of the setup. These stages remain, in this order: {remaining}.
Answer with one JSON object {{"stages": [the stages in the order to do them], "notes": [at most 3 short steps]}}.

{task_view(ws)}"""


def parse(answer: str, remaining: list[str]) -> str:
    """plan.json's text; an answer without a usable plan keeps the remaining stages in their order."""
    try:
        spec = parse_json_object(answer)
    except ValueError:
        spec = {}
    stages = spec.get("stages") if isinstance(spec.get("stages"), list) else remaining
    notes = [str(n) for n in spec.get("notes", [])][:3] if isinstance(spec.get("notes"), list) else []
    return json.dumps({"stages": stages, "notes": notes}, indent=2)


def make(remaining: list[str]) -> Stage:
    return Stage(
        PLAN,
        GOAL,
        kind="text",
        output=Workspace.PLAN,
        expert=lambda a, ctx: expert(a, ctx, remaining),
        hints=f"The stages that apply, in this order: {remaining}.",
        role=ROLE_TASK,
        prompt=lambda ws: prompt(ws, remaining),
        parse=lambda answer: parse(answer, remaining),
        intrinsic="plan_stage",
    )
