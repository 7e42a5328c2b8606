"""Train and test tabular input maps: one row per sample, first column "id", then the input features."""

from __future__ import annotations

from agentk.competition.values import MISSING
from agentk.core.checks import Check
from agentk.core.engine import Action, Context, Stage, fill
from agentk.core.fileio import write_json
from agentk.modalities import TABULAR
from agentk.policies.analysis import Analysis
from agentk.workspace import ROLE_INPUT_MAP, Workspace, input_map_stage, map_file
from stages.codegen import map_checks, map_template, table_rows
from unit_tests_lib.maps import check_no_train_only_columns


def template(split: str) -> str:
    return map_template(
        map_file(input_map_stage(split, TABULAR.name)),
        f'one row per {split} sample, first column "id", then the tabular input features.',
    )


def expert(a: Analysis, ctx: Context, split: str) -> Action:
    if split == "train":  # what the maps join, for the report and the solve's features.json
        write_json(Workspace(ctx.ws).joins, [j.record() for j in a.joins if split in j.splits])
    lines = table_rows(a, split)
    lines += [
        f"features = {a.features!r}",
        'out = pd.concat([pd.DataFrame({"id": ids.to_numpy()}), df[features]], axis=1)',
    ]
    if a.bool_features:
        lines += [
            f"for c in {a.bool_features!r}:  # True/False with gaps reads as text: make it 1.0/0.0/NaN",
            '    out[c] = out[c].map(lambda v: np.nan if pd.isna(v) else float(str(v).lower() == "true"))',
        ]
    if a.numeric_text:
        lines += [
            f"for c in {a.numeric_text!r}:  # numbers written as text: thousands separators, 'na' for missing",
            "    text = out[c].astype(str).str.strip()",
            f"    text = text.mask(text.str.lower().isin({MISSING!r}))",
            "    out[c] = pd.to_numeric(text.str.replace(r'(?<=\\d),(?=\\d{3}\\b)', '', regex=True), errors='coerce').astype(float)",
        ]
    lines.append("return out")
    return Action(code=fill(template(split), "\n".join(lines)))


def make(split: str) -> Stage:
    name = input_map_stage(split, TABULAR.name)
    output = map_file(name)
    checks = map_checks(output, split)
    if split == "train":
        checks.append(Check(check_no_train_only_columns, {"name": output}))
    return Stage(
        name,
        f"Write code that builds {output}: first column 'id' (as text), then the "
        "input features of every sample, one row each; no target columns.",
        output=output,
        template=template(split),
        checks=checks,
        role=ROLE_INPUT_MAP[split],
        expert=lambda a, ctx: expert(a, ctx, split),
        hints="Keep the raw feature values; encoding happens later. Read ids as strings.",
    )
