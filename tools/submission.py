"""Submissions as Kaggle reads them: the setup's two formatters (primary, then alternative) turn predictions
into a submission, which must match the sample submission (columns, id set, dtypes, no gaps). The solver, the
setup's light solve and `agentk submit` use this; the formatter's unit test compares the same way."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from agentk.competition import long_format, rewrites
from agentk.competition.column_kinds import placeholder
from agentk.competition.dataview import find_tables
from agentk.competition.readers import read_table
from agentk.competition.tables import sample_columns_of
from agentk.parsing import read_csv
from agentk.workspace import SUBMISSION_FORMAT, SUBMISSION_FORMAT_ALT, Workspace, code_module

FORMATTERS = (SUBMISSION_FORMAT, SUBMISSION_FORMAT_ALT)  # the stages writing format_submission, in fallback order


def as_submitted(raw: Path, sub: pd.DataFrame) -> pd.DataFrame:
    """A submission as the models wrote it, in the sample's own form: long rows where the sample is long, text where
    the target rewrites an input."""
    return rewrites.as_submitted(raw, long_format.as_submitted(raw, sub))


def as_modelled(raw: Path, sub: pd.DataFrame) -> pd.DataFrame:
    """A submission in the sample's own form read back as the models wrote it (the inverse of as_submitted)."""
    return long_format.as_modelled(raw, rewrites.as_modelled(raw, sub))


class SubmissionMismatch(ValueError):
    """The submission would be rejected or misread; the message says what differs from the sample and how to fix it."""


def type_family(s: pd.Series) -> str:
    """What a column holds, as far as a CSV reader can tell: bool, numeric, string or empty."""
    if s.dtype == bool:
        return "bool"
    if s.isna().all():  # a column left empty reads as float64: it says no type
        return "empty"
    if pd.api.types.is_numeric_dtype(s):
        return "numeric"
    return "string"


def numbers_as_text(s: pd.Series) -> bool:
    """Is this a text column whose every cell is numbers separated by spaces (label ids such as "1 4")?"""
    cells = s.dropna()
    return (
        type_family(s) == "string"
        and len(cells) > 0
        and bool(cells.astype(str).str.fullmatch(r"\s*[-+]?\d+(?:\.\d+)?(?:\s+[-+]?\d+(?:\.\d+)?)*\s*").all())
    )


def compare_with_sample(ws: Path, sub: pd.DataFrame, who: str) -> None:
    """Round-trip through CSV, as Kaggle reads it, and compare with the sample submission; `who` names the
    submission's maker in the message."""
    sample_path = find_tables(Workspace(ws).raw)["sample"]
    sample = read_csv(sample_path)
    try:  # a submission in a long sample's rows is checked as the models wrote it, one row per key
        sub = as_modelled(Workspace(ws).raw, sub)
    except ValueError as exc:
        raise SubmissionMismatch(f"{who}: {exc}") from None
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / Workspace.SUBMISSION
        sub.to_csv(path, index=False)
        got = read_csv(path)
        got_text = pd.read_csv(path, dtype=str, keep_default_na=False)
    if list(got.columns) != list(sample.columns):
        raise SubmissionMismatch(
            f"{who}: columns {list(got.columns)[:8]} differ from the sample submission's {list(sample.columns)[:8]}"
        )
    layout = sample_columns_of(Workspace(ws).raw)
    id_col = sample.columns[0] if layout is None else layout.id
    predicted = list(sample.columns[1:]) if layout is None else layout.predicted
    if id_col is None:  # no id column: one row per test row, in order
        if len(got) != len(sample):
            raise SubmissionMismatch(
                f"{who}: {len(got)} rows, the sample submission has {len(sample)}: one per test row"
            )
        ids = want = set()
    else:
        ids, want = set(got[id_col].astype(str)), set(sample[id_col].astype(str))
    if ids != want or len(got) != len(sample):
        raise SubmissionMismatch(
            f"{who}: {len(got)} rows, {len(want - ids)} sample ids missing, {len(ids - want)} "
            f"unknown (e.g. {sorted(want - ids)[:2] or sorted(ids - want)[:2]}): one row per "
            "sample submission id"
        )
    # ids as text: "007" written as 7 is another id to the grader
    if id_col is not None and sample_path.name.lower().endswith(".csv"):
        want_text = set(pd.read_csv(sample_path, dtype=str, keep_default_na=False)[id_col])
        if odd := sorted(set(got_text[id_col]) - want_text):
            raise SubmissionMismatch(
                f"{who}: ids written as {odd[:2]} are not the sample's text (e.g. {sorted(want_text)[:2]}): "
                "write the ids exactly as the sample does"
            )
    gaps = got.columns[unfilled(got, sample, id_col, [] if layout is None else layout.echo).any()].tolist()
    if gaps:
        raise SubmissionMismatch(
            f"{who}: missing values in {gaps[:5]}: every cell must be filled (but those of repeated test inputs "
            "that the sample leaves empty)"
        )
    targets = _target_map(ws, [c for c in predicted if placeholder(sample[c])])
    for c in sample.columns:
        if type_family(got[c]) == "numeric" and numbers_as_text(sample[c]):
            continue  # label ids "1 4": a submission of one id per row reads back as numbers, as valid
        if targets is not None and c in targets.columns and _typed_like(got[c], targets[c]):
            continue  # one value in every sample row is a placeholder (0, 0.5): the train targets' type is valid too
        if type_family(got[c]) != type_family(sample[c]) and type_family(sample[c]) != "empty":
            raise SubmissionMismatch(
                f"{who}: column {c!r} is {got[c].dtype} but the sample's is {sample[c].dtype}; "
                f"e.g. {got[c].iloc[0]!r} vs {sample[c].iloc[0]!r}"
            )
    if unknown := unknown_labels(ws, predicted, got):
        c, labels = next(iter(unknown.items()))
        raise SubmissionMismatch(
            f"{who}: column {c!r} holds {labels[0]!r}, which is no label of the train table's {c!r}: write the "
            "labels as train does (several labels in one cell separated by spaces, no quotes or brackets)"
        )
    if exclusive_columns(ws, sample, predicted):  # one probability per outcome: Kaggle rejects rows not summing to 1
        sums = got[predicted].sum(axis=1)
        off = (sums - 1).abs() > 1e-6
        if off.any():
            raise SubmissionMismatch(
                f"{who}: the sample's probability columns sum to 1 in every row but row {int(off.idxmax())} of the "
                f"submission sums to {sums[off].iloc[0]:.6g}: predict the outcomes with one softmax, not one by one"
            )


def _typed_like(got: pd.Series, targets: pd.Series) -> bool:
    """Does a submission column read back as the train targets do (label ids one per row read as numbers)?"""
    family = type_family(got)
    return family == type_family(targets) or (family == "numeric" and numbers_as_text(targets))


def _target_map(ws: Path, columns: list[str]) -> pd.DataFrame | None:
    """These columns of the train targets as the target map holds them (named as the sample's columns), once
    written and where it has them."""
    path = Workspace(ws).target_map
    if not columns or not path.exists():
        return None
    have = [c for c in read_csv(path, nrows=0).columns if c in columns]
    return read_csv(path, usecols=have) if have else None


def unfilled(got: pd.DataFrame, sample: pd.DataFrame, id_col: str | None, echo: list[str]) -> pd.DataFrame:
    """The submission's empty cells that should hold a value: every one, but in the columns echoing test inputs
    those the sample leaves empty too (the same id's row; the same row where the sample has no id column or repeats
    ids). `got` has the sample's columns, rows and ids."""
    empty = got.isna()
    echo = [c for c in echo if c in got.columns and empty[c].any()]
    if not echo:
        return empty
    blank = sample[echo].isna()
    if id_col is not None and sample[id_col].is_unique:
        blank.index = sample[id_col].astype(str).to_numpy()
        blank = blank.reindex(got[id_col].astype(str).to_numpy(), fill_value=False)
    empty[echo] &= ~blank.to_numpy()
    return empty


def _train(ws: Path) -> pd.DataFrame | None:
    tables = find_tables(Workspace(ws).raw)
    return read_table(tables["train"]) if "train" in tables else None


SPACE_JOINERS = ("_", "-", "")  # what may stand for the spaces of a label in a cell of space-separated labels


def unknown_labels(ws: Path, predicted: list[str], got: pd.DataFrame) -> dict[str, list[str]]:
    """Per text prediction column that train also holds: the submission's labels (space-separated tokens) that no
    train row has. A model predicts labels it was taught, so any other is a formatting slip; a label of several
    words is known with its words joined too ("The_Eiffel_Tower" where spaces part the labels of a ranking)."""
    text = [c for c in predicted if type_family(got[c]) == "string"]
    train = _train(ws) if text else None
    out = {}
    for c in text:
        if train is None or c not in train.columns or type_family(train[c]) != "string":
            continue
        values = train[c].dropna().astype(str).unique()
        known = {t for v in values for t in v.split()} | {j.join(v.split()) for v in values for j in SPACE_JOINERS}
        unknown = sorted({t for v in got[c].dropna().astype(str) for t in v.split()} - known)
        if unknown:
            out[c] = unknown
    return out


def exclusive_columns(ws: Path, sample: pd.DataFrame, predicted: list[str]) -> bool:
    """The prediction columns are the probabilities of mutually exclusive outcomes: the sample's rows sum to 1,
    and the train table holds the same columns one-hot (exactly one outcome per row)."""
    cols = predicted
    if len(cols) < 2 or not all(type_family(sample[c]) == "numeric" for c in cols):
        return False
    if not np.allclose(sample[cols].to_numpy(float).sum(axis=1), 1, atol=1e-6):
        return False
    train = _train(ws)
    if train is None or not set(cols) <= set(train.columns) or train[cols].isna().any().any():
        return False
    if not all(pd.api.types.is_numeric_dtype(train[c]) for c in cols):
        return False
    values = train[cols].to_numpy(float)
    return bool(np.isin(values, (0, 1)).all() and (values.sum(axis=1) == 1).all())


def format_with_fallback(ws: Path, ids, predictions) -> tuple[str, pd.DataFrame]:
    """(the formatter's module name, its submission checked against the sample, in the sample's own rows where those
    are long): the primary formatter's, or the alternative's when the primary fails or its submission does not
    match."""
    errors = []
    for stage in FORMATTERS:
        name = code_module(stage)
        try:
            sub = Workspace(ws).load(stage).format_submission(ids, predictions)
            compare_with_sample(ws, sub, name)
            return name, as_submitted(Workspace(ws).raw, sub)
        except Exception as exc:  # noqa: BLE001 - generated code may raise anything: try the alternative, report both
            errors.append(f"{name}: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}")
    raise SubmissionMismatch("both submission formatters failed: " + " | ".join(errors))
