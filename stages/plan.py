"""Plan the rest of the setup: the ordered stages still to do, pruned by the modalities (no unit tests)."""
from __future__ import annotations

import json

from agentk.policies.analysis import Analysis
from agentk.core.engine import Action, Context, Stage

GOAL = 'Write plan.json: {"stages": [the remaining stage names, in order], "notes": [at most 3 short steps]}.'


def expert(a: Analysis, ctx: Context, remaining: list[str]) -> Action:
    notes = [f"Build id-keyed maps of the {len(a.features)} features and of the targets {[t.column for t in a.targets]}",
             f"Encode targets for a {a.task_type} model and format predictions like {a.sample}",
             f"Score with {a.metric}, then check the whole chain with a light solve"]
    return Action(text=json.dumps({"stages": remaining, "notes": notes}, indent=2))


def make(remaining: list[str]) -> Stage:
    return Stage("plan", GOAL, kind="text", output="plan.json", expert=lambda a, ctx: expert(a, ctx, remaining),
                 hints=f"The stages that apply, in this order: {remaining}.", params={"remaining": remaining})
