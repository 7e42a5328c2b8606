"""Detect the input and target modalities and the task type: modalities.json."""
from __future__ import annotations

import json

from agentk.analysis import Analysis
from agentk.checks import Check
from agentk.dataview import read_table
from agentk.engine import Action, Context, Stage
from agentk.modalities import detect_inputs
from unit_tests_lib.task import check_modalities

GOAL = ('Write modalities.json: {"inputs": subset of ["tab", "img", "txt"], "targets": ["tab"], '
        '"task_type": one of BinCls, MultiCls, MultiTgtCls, Reg, MultiTgtReg}.')


def expert(a: Analysis, ctx: Context) -> Action:
    train = read_table(ctx.ws / a.train)
    exclude = {a.id_col, a.train_id, *(t.source for t in a.targets)}
    spec = {"inputs": detect_inputs(ctx.ws / "raw", train, exclude), "targets": ["tab"], "task_type": a.task_type}
    return Action(text=json.dumps(spec))


STAGE = Stage("modalities", GOAL, kind="text", output="modalities.json", checks=[Check(check_modalities)],
              expert=expert, hints="Tabular columns are 'tab'; image files 'img'; long free-text columns or text files 'txt'.")
