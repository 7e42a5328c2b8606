"""Train and test text input maps: first column "id", then the text inputs themselves (free-text table
columns, or the content of one text file per sample)."""
from __future__ import annotations

from agentk.policies.analysis import Analysis, CannotAnalyse
from agentk.core.checks import Check
from agentk.core.engine import Action, Context, Stage, fill
from stages.codegen import file_paths, listing_rows, map_template, table_rows
from unit_tests_lib.maps import check_id_map, check_no_train_only_columns, check_rows_match_source
from unit_tests_lib.media import check_text_map

READ_TEXT = ['def read_text(path):  # UTF-8, else Latin-1: older corpora are not UTF-8',
             '    data = Path(path).read_bytes()',
             '    try:',
             '        return data.decode("utf-8")',
             '    except UnicodeDecodeError:',
             '        return data.decode("latin-1")',
             '']


def template(split: str) -> str:
    return map_template(f"{split}_txt_input_map.csv",
                        f'one row per {split} sample, first column "id", then its text inputs (the text itself).')


def expert(a: Analysis, ctx: Context, split: str) -> Action:
    src = a.files.get(f"{split}_txt")
    if src is not None:
        lines = READ_TEXT + (listing_rows(src) if src.column is None else table_rows(a, split) + [f"paths = {file_paths(src)}"])
        lines += ['return pd.DataFrame({"id": ids.to_numpy(), "text": [read_text(p) for p in paths]})']
    elif a.text_columns:
        lines = table_rows(a, split) + [f"texts = {a.text_columns!r}",
                                        'return pd.concat([pd.DataFrame({"id": ids.to_numpy()}), df[texts].astype("string")], axis=1)']
    else:
        raise CannotAnalyse(f"no {split} text inputs were found")
    return Action(code=fill(template(split), "\n".join(lines)))


def make(split: str) -> Stage:
    output = f"{split}_txt_input_map.csv"
    checks = [Check(check_id_map, {"name": output}, split), Check(check_rows_match_source, {"name": output, "role": split}, split),
              Check(check_text_map, {"name": output}, split)]
    if split == "train":
        checks.append(Check(check_no_train_only_columns, {"name": output}))
    return Stage(f"{split}_txt_input_map", f"Write code that builds {output}: first column 'id' (as text, the same ids "
                 f"as the other {split} maps), then the text inputs, one column each (the text, not file paths).",
                 output=output, template=template(split), checks=checks, expert=lambda a, ctx: expert(a, ctx, split),
                 hints="Long free-text columns of the tables go here, not into the tabular map; one text file per "
                       "sample is read into a 'text' column.")
