"""Detect the input and target modalities and the task type: modalities.json."""
from __future__ import annotations

import json

from agentk.policies.analysis import Analysis
from agentk.core.checks import Check
from agentk.core.engine import Action, Context, Stage
from unit_tests_lib.task import check_modalities

GOAL = ('Write modalities.json: {"inputs": subset of ["tab", "img", "txt"], "targets": ["tab"], '
        '"task_type": one of BinCls, MultiCls, MultiTgtCls, Reg, MultiTgtReg}.')


def expert(a: Analysis, ctx: Context) -> Action:
    spec = {"inputs": a.inputs, "targets": ["tab"], "task_type": a.task_type}
    return Action(text=json.dumps(spec))


STAGE = Stage("modalities", GOAL, kind="text", output="modalities.json", checks=[Check(check_modalities)],
              expert=expert, hints="Tabular columns are 'tab'; image files 'img'; long free-text columns or text files 'txt'.")
