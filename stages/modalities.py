"""Detect the input and target modalities and the task type: modalities.json. The choices come from the
modality registry (agentk.modalities), read when the stage runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from pydantic import create_model

from agentk import workspace
from agentk.competition.dataview import data_view, task_view
from agentk.core.checks import Check
from agentk.core.engine import Action, Context, Stage
from agentk.modalities import MODALITIES, TARGET
from agentk.policies.analysis import Analysis
from agentk.workspace import ROLE_TASK, Workspace
from stages.codegen import parse_json_object
from unit_tests_lib.task import TASK_TYPES, check_modalities


def _quoted(values) -> str:
    return ", ".join(f'"{v}"' for v in values)


def goal() -> str:
    return (
        f'Write {Workspace.MODALITIES}: {{"inputs": subset of [{_quoted(MODALITIES)}], "targets": ["{TARGET}"], '
        f'"task_type": one of {", ".join(TASK_TYPES)}}}.'
    )


def hints() -> str:
    said = "; ".join(f"{m.hint} are '{m.name}'" for m in MODALITIES.values())
    return said[:1].upper() + said[1:] + "."


def expert(a: Analysis, ctx: Context) -> Action:
    spec = {"inputs": a.inputs, "targets": [TARGET], "task_type": a.task_type}
    return Action(text=json.dumps(spec))


def prompt(ws: Path) -> str:
    meanings = "; ".join(f'"{m.name}": {m.hint}' for m in MODALITIES.values())
    return f"""
Detect the input and target modalities and the task type. Answer with one JSON object:
{{"inputs": [...subset of {_quoted(MODALITIES)}], "targets": ["{TARGET}"], "task_type": one of {_quoted(TASK_TYPES)}}}.
{meanings}.

{task_view(ws)}

{data_view(ws)}"""


def parse(answer: str) -> str:
    """The answer validated against the registry's modalities and the task types, as modalities.json's text;
    ValueError (pydantic's ValidationError is one) when it is not valid."""
    names = Literal[tuple(MODALITIES)]
    schema = create_model(
        "Modalities", inputs=(list[names], ...), targets=(list[names], ...), task_type=(Literal[TASK_TYPES], ...)
    )
    return schema(**parse_json_object(answer)).model_dump_json()


def make() -> Stage:
    """Built from the registry as it is now (a modality registered later is in the next pipeline's stage)."""
    return Stage(
        workspace.MODALITIES,
        goal(),
        kind="text",
        output=Workspace.MODALITIES,
        checks=[Check(check_modalities)],
        expert=expert,
        hints=hints(),
        role=ROLE_TASK,
        prompt=prompt,
        parse=parse,
    )
