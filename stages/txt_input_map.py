"""Train and test text input maps: first column "id", then the text inputs themselves (free-text table
columns, or the content of one text file per sample)."""

from __future__ import annotations

from agentk.core.checks import Check
from agentk.core.engine import Action, Context, Stage, fill
from agentk.modalities import TEXT
from agentk.policies.analysis import Analysis, CannotAnalyse
from agentk.workspace import ROLE_INPUT_MAP, input_map_stage, map_file
from stages.codegen import file_paths, listing_rows, map_checks, map_template, table_rows, view_paths
from unit_tests_lib.maps import check_no_train_only_columns
from unit_tests_lib.media import check_text_map

READ_TEXT = [
    "def read_text(path):  # UTF-8, else Latin-1: older corpora are not UTF-8",
    "    data = Path(path).read_bytes()",
    "    try:",
    '        return data.decode("utf-8")',
    "    except UnicodeDecodeError:",
    '        return data.decode("latin-1")',
    "",
]


def template(split: str) -> str:
    return map_template(
        map_file(input_map_stage(split, TEXT.name)),
        f'one row per {split} sample, first column "id", then its text inputs (the text itself).',
    )


def expert(a: Analysis, ctx: Context, split: str) -> Action:
    src = a.file_source(split, TEXT.name)
    if src is not None and src.views:  # several files per sample: a text column of each
        lines = READ_TEXT + table_rows(a, split, src.column) + ['out = pd.DataFrame({"id": ids.to_numpy()})']
        for k, expr in enumerate(view_paths(src)):
            lines.append(f"out['text_{k}'] = [read_text(p) for p in {expr}]")
        lines.append("return out")
    elif src is not None:
        lines = READ_TEXT + (
            listing_rows(src)
            if src.column is None
            else table_rows(a, split, src.column) + [f"paths = {file_paths(src)}"]
        )
        lines += ['return pd.DataFrame({"id": ids.to_numpy(), "text": [read_text(p) for p in paths]})']
    elif a.text_columns:
        lines = table_rows(a, split) + [
            f"texts = {a.text_columns!r}",
            'return pd.concat([pd.DataFrame({"id": ids.to_numpy()}), df[texts].astype("string")], axis=1)',
        ]
    else:
        raise CannotAnalyse(f"no {split} text inputs were found")
    return Action(code=fill(template(split), "\n".join(lines)))


def make(split: str) -> Stage:
    name = input_map_stage(split, TEXT.name)
    output = map_file(name)
    checks = map_checks(output, split, check_text_map)
    if split == "train":
        checks.append(Check(check_no_train_only_columns, {"name": output}))
    return Stage(
        name,
        f"Write code that builds {output}: first column 'id' (as text, the same ids "
        f"as the other {split} maps), then the text inputs, one column each (the text, not file paths).",
        output=output,
        template=template(split),
        checks=checks,
        role=ROLE_INPUT_MAP[split],
        expert=lambda a, ctx: expert(a, ctx, split),
        hints="Long free-text columns of the tables go here, not into the tabular map; one text file per "
        "sample is read into a 'text' column.",
    )
