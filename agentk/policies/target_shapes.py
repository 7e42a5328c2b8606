"""Target shapes beyond one label or value per column, as the expert reads them off the train table, the sample
submission and the metric: label sets in one string column, top-k rankings in one column, fractions that the
metric binarises, continuous targets of ranking metrics, ordinal ratings scored by kappa, mutually exclusive
outcomes given as one-hot columns, and class probability columns named by the class with an affix ("class_0").

Each function returns the analysis' Target for its shape, or None when the data do not show that shape.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from agentk.competition.column_kinds import is_label_set
from agentk.parsing import to_numeric
from tools.metrics import Metric
from tools.submission import SPACE_JOINERS

LABEL_SET_METRICS = {"f1_samples", "f2_samples"}
BINARISE = re.compile(
    r"(?:target|label|value|score|fraction)s? (?:of |at )?(?:>= ?|≥ ?|greater than or equal to |of |at least )?"
    r"(0?\.\d+) (?:or (?:more|greater|above|higher))",
    re.I,
)


def label_tokens(s: pd.Series) -> list[list[str]]:
    return [str(v).split() for v in s.fillna("")]


def label_set_shape(s: pd.Series, metric: Metric | None) -> list[str] | None:
    """The label vocabulary when each train value is a space-separated set of labels scored as a set."""
    if metric is not None and metric.prediction == "ranking":
        return None
    if not ((metric is not None and metric.name in LABEL_SET_METRICS) or is_label_set(s)):
        return None
    vocab = {t for row in label_tokens(s) for t in row}
    return sorted(vocab, key=_natural) if len(vocab) >= 2 else None


def ranking_k(s: pd.Series, metric: Metric | None, sample_col: pd.Series) -> int | None:
    """k when the submission ranks k labels in one column (MAP@k): read from the metric's name, else from the
    sample's rows when they hold k >= 2 labels while each train row holds one."""
    if metric is not None and metric.prediction == "ranking":
        m = re.search(r"(\d+)$", metric.name)
        return int(m.group(1)) if m else _sample_k(sample_col)
    if metric is None and not pd.api.types.is_numeric_dtype(s):
        k = _sample_k(sample_col)
        if k and k >= 2 and s.dropna().astype(str).str.split().str.len().max() == 1:
            return k
    return None


def ranked_spelling(s: pd.Series, sample_col: pd.Series) -> dict[str, str]:
    """Each class name holding spaces (a train value) -> its spelling in a ranking's cell, where spaces part the
    classes: the words joined as the sample's cells join them ("The_Eiffel_Tower alarm_clock circle"), by "_"
    when the sample shows none of them. {} when no class name holds a space."""
    spaced = [v for v in s.dropna().astype(str).unique() if len(v.split()) > 1]
    if not spaced:
        return {}
    tokens = {t for cell in sample_col.dropna().astype(str) for t in cell.split()}
    joiner = max(SPACE_JOINERS, key=lambda j: sum(j.join(v.split()) in tokens for v in spaced))  # ties: the first, "_"
    return {v: joiner.join(v.split()) for v in spaced}


def _sample_k(sample_col: pd.Series) -> int | None:
    counts = sample_col.dropna().astype(str).str.split().str.len()
    return int(counts.max()) if len(counts) else None


def binarise_threshold(s: pd.Series, metric: Metric | None, text: str) -> float | None:
    """The threshold at which a probability metric turns a continuous train target in [0, 1] into 0/1 (the text's
    "a target of 0.5 or more", else 0.5); None when the target is already binary or is not a fraction."""
    if metric is None or metric.prediction != "proba" or "log_loss" in metric.name:  # log loss takes soft labels
        return None
    if not pd.api.types.is_numeric_dtype(s) or s.dtype == bool:
        return None
    vals = s.dropna()
    if vals.nunique() <= 2 or not vals.between(0, 1).all():
        return None
    m = BINARISE.search(text)
    return float(m.group(1)) if m else 0.5


def continuous_for_ranking_metric(s: pd.Series, metric: Metric | None) -> bool:
    """A probability metric that only orders rows (normalized Gini, AUC) scoring a continuous target outside
    [0, 1] (claim amounts): the target is a regression target."""
    if metric is None or metric.prediction != "proba" or not pd.api.types.is_numeric_dtype(s) or s.dtype == bool:
        return False
    vals = s.dropna()
    return vals.nunique() > 2 and not vals.between(0, 1).all()


def onehot_outcomes(train: pd.DataFrame, columns: list[str]) -> bool:
    """Mutually exclusive outcomes given as separate 0/1 columns: exactly one is 1 in every train row."""
    if len(columns) < 2 or not all(c in train.columns for c in columns):
        return False
    block = train[columns]
    if not all(pd.api.types.is_numeric_dtype(block[c]) for c in columns) or block.isna().any().any():
        return False
    values = block.to_numpy(float)
    return bool(np.isin(values, (0, 1)).all() and (values.sum(axis=1) == 1).all())


def outcome_column(train: pd.DataFrame) -> str:
    """A target-map column name for the outcome label that no train column has."""
    name = "outcome"
    while name in train.columns:
        name = f"_{name}"
    return name


def _natural(label: str):
    return (0, int(label), "") if label.isdigit() else (1, 0, label)


def ordinal_ratings(s: pd.Series, metric: Metric | None) -> list | None:
    """The ratings (three or more whole numbers, in order) of a target scored by quadratic weighted kappa: it is
    modelled as a value and cut into ratings at points tuned on validation, as the metric rewards near misses."""
    if metric is None or metric.name != "qwk" or not pd.api.types.is_numeric_dtype(s):
        return None
    values = np.sort(s.dropna().unique())
    if len(values) < 3 or not np.all(values % 1 == 0):
        return None
    return [int(v) for v in values]


def columns_named_in(text: str, columns: list[str]) -> list[str]:
    """The columns an evaluation text names (as written, or with spaces for underscores): the identity
    columns of a sub-group bias metric."""
    norm = " ".join(re.sub(r"[_\-`*]", " ", text.lower()).split())
    named = []
    for c in columns:
        words = " ".join(re.sub(r"[_\-]", " ", str(c).lower()).split())
        if words and re.search(rf"(?<![a-z0-9]){re.escape(words)}(?![a-z0-9])", norm):
            named.append(c)
    return named


def scored_rows(text: str, table: pd.DataFrame) -> tuple[str, float] | None:
    """(column, value) when the evaluation text says only rows where a two-valued column holds a value are scored
    ("only rows where valve_open == 0 are scored", "rows where valve_open is 1 are not scored"): a masked metric."""
    norm = " ".join(re.sub(r"[_\-`*]", " ", text.lower()).split())
    for sentence in re.split(r"(?<=[.;:])\s", norm):
        for c in table.columns:
            values = to_numeric(table[c], errors="coerce").dropna().unique()
            words = " ".join(re.sub(r"[_\-]", " ", str(c).lower()).split())
            if len(values) != 2 or not words:
                continue
            said = re.search(
                rf"(?<![a-z0-9]){re.escape(words)} ?(?:==?|is|equals|of) ?(-?\d+(?:\.\d+)?)(?![\d.])", sentence
            )
            if said is None or float(said.group(1)) not in values:
                continue
            value = float(said.group(1))
            if re.search(r"\b(?:not (?:be )?(?:scored|counted|evaluated)|ignored|excluded)\b", sentence):
                value = float(next(v for v in values if v != value))  # the other value's rows are the scored ones
            return c, value
    return None


# "only the heads of household are used in scoring", "only heads of household are scored": the rows named
ONLY_SCORED = re.compile(
    r"\bonly (?:the )?([a-z][a-z ]{2,60}?) (?:are|is|will be) (?:used (?:in|for) )?(?:scor|evaluat|count)"
)
# a column's description in a data section: "- parentesco1: indicates if this person is the head of the household"
DESCRIBED = re.compile(r"^\s*(?:[-*+]\s*)?`?([\w.]+)`?\s*(?::|-|–|—)\s+(.+)$", re.M)
_FILLER = {"the", "of", "a", "an", "in", "on", "for", "to", "and", "or", "with", "each", "per", "row", "rows"}


def _content(words: str) -> set[str]:
    """The words that say what a phrase names, in the singular (heads of household: head, household)."""
    out = set()
    for w in re.findall(r"[a-z]+", words.lower()):
        if w not in _FILLER:
            out.add(w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w)
    return out


def described_scored_rows(text: str, table: pd.DataFrame) -> tuple[str, float] | None:
    """(column, 1.0) when the text says only some rows are scored, naming them in words ("only the heads of household
    are used in scoring"), and exactly one 0/1 column of `table` is described by those words ("parentesco1: indicates
    if this person is the head of the household"): a masked metric whose mask the data section describes."""
    norm = " ".join(re.sub(r"[`*_]", " ", text.lower()).split())
    phrases = [_content(m.group(1)) for m in ONLY_SCORED.finditer(norm)]
    phrases = [p for p in phrases if p]
    if not phrases:
        return None
    described = {m.group(1): _content(m.group(2)) for m in DESCRIBED.finditer(text)}
    found = set()
    for c in table.columns:
        words = described.get(str(c))
        if not words or not any(p <= words for p in phrases):
            continue
        values = set(to_numeric(table[c], errors="coerce").dropna().unique().tolist())
        if values == {0.0, 1.0}:
            found.add(c)
    return (found.pop(), 1.0) if len(found) == 1 else None


TARGET_NAME = re.compile(r"^(target|label|labels|y|class|outcome)$", re.I)
