"""format_submission(test_ids, predictions) -> DataFrame exactly in the sample submission's format.

Two independent implementations: the first builds the frame from the predictions; the alternative
fills a copy of the sample submission by id. The solver falls back to the second if the first fails."""

from __future__ import annotations

from agentk.core.checks import Check
from agentk.core.engine import HOLE, Action, Context, Stage, fill
from agentk.policies.analysis import Analysis
from agentk.workspace import (
    ROLE_SUBMISSION_FORMAT,
    SUBMISSION_FORMAT,
    SUBMISSION_FORMAT_ALT,
    code_file,
    input_map_stage,
    map_file,
)
from stages.codegen import read_expr
from unit_tests_lib.submission import check_submission_format

TEMPLATE = f'''"""format_submission(test_ids, predictions) -> DataFrame in the exact format of the sample submission.
predictions: the DataFrame returned by inverse_transform (the submission's prediction columns)."""
from pathlib import Path

import numpy as np
import pandas as pd

{HOLE}

if __name__ == "__main__":
    first_test_map = sorted(Path(".").glob("{map_file(input_map_stage("test", "*"))}"))[0]
    ids = pd.read_csv(first_test_map, dtype={{"id": str}})["id"]
    demo = format_submission(ids, SAMPLE_PREDICTIONS())
    print(demo.shape)
    print(demo.head().to_string())
'''

COMMON = '''SAMPLE_PATH = {sample!r}
ID = {id_col!r}
COLUMNS = {columns!r}


def SAMPLE_PREDICTIONS() -> pd.DataFrame:
    """The sample submission's own predictions, for a dry run."""
    return {read}[COLUMNS]


def _like(values: pd.Series, template: pd.Series) -> pd.Series:
    """Cast to the sample column's type when nothing is lost (ints stay ints, booleans stay booleans)."""
    if pd.api.types.is_bool_dtype(template):
        return values.astype(str).str.lower().eq("true")
    if pd.api.types.is_integer_dtype(template):
        numeric = pd.to_numeric(values, errors="coerce")
        if numeric.notna().all() and (numeric % 1 == 0).all():
            return numeric.astype(np.int64)
    return values
'''

PRIMARY = (
    COMMON
    + """

def format_submission(test_ids, predictions) -> pd.DataFrame:
    sample = {read_typed}
    preds = predictions if isinstance(predictions, pd.DataFrame) else pd.DataFrame(np.asarray(predictions).reshape(len(test_ids), -1), columns=COLUMNS)
    missing = [c for c in COLUMNS if c not in preds.columns]
    if missing:
        raise ValueError(f"predictions lack the submission columns {{missing[:5]}}")
    if len(preds) != len(test_ids):
        raise ValueError(f"{{len(preds)}} predictions for {{len(test_ids)}} test ids")
    ids = pd.Series(list(test_ids), dtype=str)
    raw_ids = set(pd.read_csv(SAMPLE_PATH, dtype={{ID: str}})[ID]) if SAMPLE_PATH.endswith(".csv") else set()
    sub = pd.DataFrame({{ID: ids if set(ids) <= raw_ids else _like(ids, sample[ID])}})  # "007" stays "007"
    for c in COLUMNS:
        sub[c] = _like(preds[c].reset_index(drop=True), sample[c]).to_numpy()
    return sub
"""
)

ALTERNATIVE = (
    COMMON
    + '''

def format_submission(test_ids, predictions) -> pd.DataFrame:
    """Fill a copy of the sample submission, row by row through the ids (keeps the sample's order)."""
    sample = {read_str}
    preds = pd.DataFrame(predictions).reset_index(drop=True)
    if not isinstance(predictions, pd.DataFrame):
        preds.columns = COLUMNS
    preds.index = pd.Index([str(i) for i in test_ids])
    unknown = set(sample[ID]) - set(preds.index)
    if unknown:
        raise ValueError(f"no prediction for {{len(unknown)}} sample ids, e.g. {{sorted(unknown)[:3]}}")
    typed = {read_typed}
    out = pd.DataFrame({{ID: sample[ID]}})  # the ids as the sample writes them
    for c in COLUMNS:
        out[c] = _like(preds.loc[sample[ID], c].reset_index(drop=True), typed[c]).to_numpy()
    return out
'''
)


ECHO = """

TEST_ID = {test_id!r}
ECHO = {echo!r}  # sample columns that repeat test inputs
_predicted = format_submission


def format_submission(test_ids, predictions) -> pd.DataFrame:
    \"\"\"The predicted columns, then the ECHO columns copied from the test table (never predicted).\"\"\"
    sub = _predicted(test_ids, predictions)
    test = {read_test}
    rows = test.set_index(test[TEST_ID].astype(str)).loc[sub[ID].astype(str)] if TEST_ID else test
    for c in ECHO:
        sub[c] = rows[c].to_numpy()
    return sub[list({read}.columns)]
"""

IDLESS = (
    COMMON
    + """
ECHO = {echo!r}  # sample columns that repeat test inputs


def format_submission(test_ids, predictions) -> pd.DataFrame:
    \"\"\"The sample has no id column: its rows are the test rows in order. The predicted columns are filled
    {how}; the ECHO columns are copied from the test table (never predicted).\"\"\"
    sample = {read_typed}
    test = {read_test}
    preds = predictions if isinstance(predictions, pd.DataFrame) else pd.DataFrame(np.asarray(predictions).reshape(len(test_ids), -1), columns=COLUMNS)
    if not len(preds) == len(test_ids) == len(sample) == len(test):
        raise ValueError(f"{{len(preds)}} predictions, {{len(test_ids)}} test ids, {{len(test)}} test rows and {{len(sample)}} sample rows must agree")
    preds = preds.reset_index(drop=True)
{body}
"""
)
IDLESS_PRIMARY = """    out = sample.copy()
    for c in COLUMNS:
        out[c] = _like(preds[c], sample[c]).to_numpy()
    for c in ECHO:
        out[c] = test[c].to_numpy()
    return out"""
IDLESS_ALTERNATIVE = """    columns = {c: _like(preds[c], sample[c]).to_numpy() if c in COLUMNS else test[c].to_numpy() for c in sample.columns}
    return pd.DataFrame(columns)"""


def expert(a: Analysis, ctx: Context, alternative: bool) -> Action:
    if a.id_col is None or a.echo:
        return Action(code=fill(TEMPLATE, _echo_body(a, alternative)))
    body = (ALTERNATIVE if alternative else PRIMARY).format(**_sample_fields(a))
    return Action(code=fill(TEMPLATE, body))


def _sample_fields(a: Analysis) -> dict:
    """What every formatter template says of the sample submission."""
    return dict(
        sample=a.sample,
        id_col=a.id_col,
        columns=a.submission_columns,
        read=read_expr(a.sample, a.id_col),
        read_typed="pd.read_csv(SAMPLE_PATH)" if a.sample.endswith(".csv") else read_expr(a.sample),
        read_str="pd.read_csv(SAMPLE_PATH, dtype={ID: str})",
    )


def _echo_body(a: Analysis, alternative: bool) -> str:
    """Formatters for samples that repeat test inputs (ECHO) or have no id column."""
    fields = dict(**_sample_fields(a), test_id=a.test_id, echo=a.echo, read_test=read_expr(a.test, a.test_id))
    if a.id_col is None:
        body = IDLESS_ALTERNATIVE if alternative else IDLESS_PRIMARY
        how = "column by column into a new frame" if alternative else "into a copy of the sample"
        return IDLESS.format(**fields, body=body, how=how)
    return (ALTERNATIVE if alternative else PRIMARY).format(**fields) + ECHO.format(**fields)


def make(alternative: bool) -> Stage:
    name = SUBMISSION_FORMAT_ALT if alternative else SUBMISSION_FORMAT
    return Stage(
        name,
        "Write format_submission(test_ids, predictions) returning a DataFrame exactly like the sample "
        "submission (columns, order, id set, dtypes)."
        + (f" Use a different method from {code_file(SUBMISSION_FORMAT)}." if alternative else ""),
        template=TEMPLATE,
        checks=[Check(check_submission_format, {"stage": name})],
        role=ROLE_SUBMISSION_FORMAT,
        expert=lambda a, ctx: expert(a, ctx, alternative),
        hints="Cast ids and labels to the sample's dtypes; keep the sample's column order.",
    )
