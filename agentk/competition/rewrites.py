"""Targets that rewrite an input: each train row's target is one of its input texts written another way (a token's
spoken form, a corrected spelling, a transliteration), many rows copying it unchanged. No model learns one class
per distinct string, so fetch makes the task a choice among candidates, the way a memorising baseline does and
better where the context decides:

- each source value's candidates are itself, then the other texts train rewrites it to, most frequent first (at
  most `MAX_CANDIDATES`); a value train never saw has only itself;
- the target becomes the rank of the row's rewrite among its value's candidates: 0 a copy, 1 the value's most
  frequent rewrite (also where train's rewrite is rarer than every candidate), 2 the next;
- every table gains the source values of the rows before and after (tokens of a sentence come in reading order), so
  that a model can choose by the context, and how train treats the row's value: the share of its rows copying it
  and their count (a memorising lookup as two features; a validation row's own target is in them, so validation
  scores the choice among candidates as if every value had been seen, which on the test only the seen ones are);
- `<stem>_ranked.csv` stands in for the train, test and sample tables, `rewrite_candidates.csv` holds each sample
  row's candidates, and every submission goes back to text (`as_submitted`); a text submission is read back as
  ranks to be checked (`as_modelled`).

Nothing is recognised by a name: the target is the sample's text column that train has and that copies an input
column the test also has in at least `MIN_COPIED` of the rows, otherwise holding new text or more distinct texts
than classes.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from agentk.parsing import to_numeric

RECORD = "rewrites.json"  # written by normalise.rewrites_as_ranks at the top of raw/: the target, its source
RANKED = "_ranked"  # <stem>_ranked.csv stands in for the train, test and sample tables
CANDIDATES = "rewrite_candidates.csv"  # the sample's ids, then candidate_0..: the text each rank stands for
MAX_CANDIDATES = 3  # train's most frequent rewrites of a value kept as candidates (and the value itself)
MIN_COPIED = 0.3  # rows whose target copies the source: fewer, and it is text to generate, not a rewrite
MAX_CLASSES = 100  # a target of more distinct texts than this copying an input is a rewrite, even in its values
HEAD = 2000  # rows of each table that must show a rewrite before the whole tables are read
CONTEXT = ("previous", "next")  # the neighbouring rows' source values, as columns <source>_previous, <source>_next


def rewrite_share(target: pd.Series, source: pd.Series) -> float:
    """The share of rows where a text target copies a text input, when the rows where it does not hold new strings
    (a normalised or translated input) or more distinct texts than classes (a corrected spelling, often another
    row's input), not a category carried over from an input; else 0."""
    both = target.notna() & source.notna()
    if both.sum() < 10 or _numbers(source) or _numbers(target):
        return 0.0
    t, x = target[both].astype(str), source[both].astype(str)
    changed = t[t != x]
    if len(changed) == 0 or (changed.isin(set(x)).mean() > 0.5 and t.nunique() <= MAX_CLASSES):
        return 0.0
    return float((t == x).mean())


def detect(train: pd.DataFrame, test: pd.DataFrame | None, predicted: list[str]) -> dict | None:
    """{"target", "source"}: the predicted text column of train that rewrites an input column the test also has;
    None if there is none."""
    for c in predicted:
        if c not in train.columns:
            continue
        for x in train.columns:
            if x != c and (test is None or x in test.columns) and rewrite_share(train[c], train[x]) >= MIN_COPIED:
                return {"target": c, "source": x}
    return None


def source_rows(sample: pd.DataFrame, id_col: str | None, test: pd.DataFrame) -> pd.Index | None:
    """The test row of each sample row: by a test column holding the sample's ids once each, else by position when
    the two tables have as many rows (the sample lists the test rows in order); None if neither."""
    if id_col is not None:
        ids = sample[id_col].astype(str)
        for c in test.columns:
            values = test[c].astype(str)
            if values.is_unique and ids.isin(values).all():
                return pd.Index(values).get_indexer(ids)
    if len(test) == len(sample):
        return pd.RangeIndex(len(test))
    return None


def candidates(train: pd.DataFrame, rec: dict) -> dict[str, list[str]]:
    """Each source value's candidates: itself, then the other texts train rewrites it to, most frequent first (ties
    by text)."""
    pairs = pd.DataFrame({"x": _text(train[rec["source"]]), "y": _text(train[rec["target"]])})
    pairs = pairs[pairs["x"] != pairs["y"]]
    counts = pairs.groupby(["x", "y"], sort=False).size().rename("n").reset_index()
    counts = counts.sort_values(["x", "n", "y"], ascending=[True, False, True])
    top = counts.groupby("x", sort=False).head(MAX_CANDIDATES).groupby("x", sort=False)["y"].agg(list)
    return {x: [x, *ys] for x, ys in top.items()}


def ranks(source: pd.Series, target: pd.Series, cands: dict[str, list[str]]) -> np.ndarray:
    """Each row's rewrite as its rank among its source value's candidates: 0 a copy, 1 the most frequent other
    text (also for a text rarer than every candidate)."""
    out = [
        ys.index(y) if y in (ys := cands.get(x, [x])) else 1 for x, y in zip(_text(source), _text(target), strict=True)
    ]
    return np.asarray(out, dtype=np.int64)


def value_stats(train: pd.DataFrame, rec: dict) -> pd.DataFrame:
    """Per source value in train: the share of its rows whose target copies it, and their count."""
    x, y = _text(train[rec["source"]]), _text(train[rec["target"]])
    return (x == y).astype(float).groupby(x).agg(["mean", "size"])


def with_context(frame: pd.DataFrame, source: str, stats: pd.DataFrame) -> pd.DataFrame:
    """The table with, beside each row, the previous and the next row's source value (empty at the ends), and how
    train treats its value (value_stats: empty and 0 for a value train never saw)."""
    values = _text(frame[source])
    return frame.assign(
        **{
            f"{source}_{CONTEXT[0]}": values.shift(1, fill_value="").to_numpy(),
            f"{source}_{CONTEXT[1]}": values.shift(-1, fill_value="").to_numpy(),
            f"{source}_copied": values.map(stats["mean"]).round(4).to_numpy(),
            f"{source}_in_train": values.map(stats["size"]).fillna(0).astype(int).to_numpy(),
        }
    )


def candidate_table(ids: pd.Series, sources: pd.Series, cands: dict[str, list[str]]) -> pd.DataFrame:
    """rewrite_candidates.csv: each sample id (its row number where it has none), then its candidates (empty past
    the last)."""
    lists = [cands.get(x, [x]) for x in _text(sources)]
    width = max(map(len, lists), default=1)
    table = pd.DataFrame(
        [ys + [""] * (width - len(ys)) for ys in lists], columns=[f"candidate_{k}" for k in range(width)]
    )
    table.insert(0, "id", ids.astype(str).to_numpy())
    return table


def record(root: Path) -> dict | None:
    """The rewrite fetch recorded at the top of a competition folder (None: no target rewrites an input)."""
    path = Path(root) / RECORD
    return json.loads(path.read_text()) if path.is_file() else None


def _candidates_of(root: Path, rec: dict, sub: pd.DataFrame) -> pd.DataFrame:
    """Each submission row's candidates, found by its id (by its position where the sample has no id column)."""
    table = pd.read_csv(Path(root) / CANDIDATES, dtype=str, keep_default_na=False).set_index("id")
    keys = sub[rec["id"]] if rec["id"] is not None else pd.Series(range(len(sub)))
    return table.reindex(keys.astype(str))


def as_submitted(root: Path, sub: pd.DataFrame) -> pd.DataFrame:
    """A submission of ranks with each rank's text in its place (a rank past a row's candidates: its first), where a
    target rewrites an input; else unchanged."""
    rec = record(root)
    if rec is None or rec["target"] not in sub.columns or not pd.api.types.is_numeric_dtype(sub[rec["target"]]):
        return sub
    table = _candidates_of(root, rec, sub)
    if table.isna().any().any():
        raise ValueError(f"ids without candidates, e.g. {table.index[table.isna().any(axis=1)][0]!r}")
    texts = table.to_numpy(str)
    rank = np.clip(sub[rec["target"]].to_numpy().round().astype(int), 0, texts.shape[1] - 1)
    picked = texts[np.arange(len(texts)), rank]
    picked = np.where(picked == "", texts[:, 0], picked)
    return sub.assign(**{rec["target"]: picked})


def as_modelled(root: Path, sub: pd.DataFrame) -> pd.DataFrame:
    """A submission of texts read back as the ranks the models chose (a text none of the row's candidates: -1), to
    be checked against the ranked sample; else unchanged."""
    rec = record(root)
    if rec is None or rec["target"] not in sub.columns or pd.api.types.is_numeric_dtype(sub[rec["target"]]):
        return sub
    table = _candidates_of(root, rec, sub).fillna("\0")
    texts = table.to_numpy(str)
    hit = texts == _text(sub[rec["target"]]).to_numpy(str)[:, None]
    return sub.assign(**{rec["target"]: np.where(hit.any(axis=1), hit.argmax(axis=1), -1)})


def _numbers(s: pd.Series) -> bool:
    """Numbers, read as such or as text: a count equal to a feature is no rewrite."""
    return pd.api.types.is_numeric_dtype(s) or bool(to_numeric(s.dropna(), errors="coerce").notna().all())


def _text(s: pd.Series) -> pd.Series:
    return s.fillna("").astype(str).reset_index(drop=True)
