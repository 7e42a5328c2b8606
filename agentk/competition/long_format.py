"""Sample submissions in long format: one row per (test sample, target), the row's id the sample's key and the
target's name joined by a separator (`ID_0a1b2c_epidural,Label`; `10003_age,Predicted`), one value column.

Models learn one row per sample with a column per target, so fetch writes the wide form beside the originals:
`<sample>_wide.csv` (key, then one column per target) and, where the train or test table is itself long, its wide
form; a competition with no test table, whose test keys are only in the sample, gets `test.csv` of those keys.
A wide table stands in for its original (agentk.competition.written). Every submission agentk writes goes back to
the sample's own long rows (`as_submitted`), and a long submission is read back wide to be checked (`as_modelled`).

The targets are what the composite ids end with: columns of a wide train table (the longest name that ends an id),
or the endings of a long train table's ids, which share the sample's. Every key of the sample has every target
once; nothing is recognised by a name.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from agentk.competition.readers import read_table

RECORD = "long_format.json"  # written by normalise.long_as_wide at the top of raw/: how the sample's ids split
WIDE = "_wide"  # <stem>_wide.csv stands in for the long table <stem>
SEPARATORS = ("_", "-", ":", "|", ".")
MAX_TARGETS = 200  # more endings than this are one id's own parts (dates, positions), not targets
HEAD = 5000  # rows of the sample whose ids must split before all of them are tried; a long sample's rows come
# grouped by key, so its head holds every target


def split_ids(ids: pd.Series, targets: list[str], sep: str, grid: bool = True) -> pd.DataFrame | None:
    """(key, target) per composite id, each id ending in <sep><target> (the longest target that fits); None when an id
    ends in no target, or (grid) the keys do not each have every target exactly once. A train table need not be a
    grid: a key may lack a target (a missing label) or repeat one (a duplicated row)."""
    ids = ids.astype(str)
    key, target = pd.Series(pd.NA, index=ids.index, dtype=object), pd.Series(pd.NA, index=ids.index, dtype=object)
    for t in sorted(targets, key=len, reverse=True):
        hit = target.isna() & ids.str.endswith(f"{sep}{t}") & (ids.str.len() > len(t) + len(sep))
        key[hit], target[hit] = ids[hit].str[: -len(t) - len(sep)], t
    if target.isna().any():
        return None
    pairs = pd.DataFrame({"key": key.astype(str), "target": target.astype(str)})
    found = pairs["target"].unique()
    n_keys = pairs["key"].nunique()
    if len(found) < 2 or n_keys < 2:
        return None
    if grid and (pairs.duplicated().any() or len(pairs) != n_keys * len(found)):
        return None
    return pairs


def _endings(ids: pd.Series, sep: str) -> list[list[str]]:
    """Candidate target sets: the ids' last one or two <sep>-separated parts (of the sample's head: a full check
    follows)."""
    out = []
    for parts in (1, 2):
        pieces = ids.astype(str).str.rsplit(sep, n=parts)
        if not (pieces.str.len() == parts + 1).all():
            break
        ending = pieces.str[1:].str.join(sep)
        found = list(dict.fromkeys(ending))
        if 2 <= len(found) <= MAX_TARGETS:
            out.append(found)
    return out


def detect(sample: pd.DataFrame, train: pd.DataFrame, test: pd.DataFrame | None) -> dict | None:
    """How a long sample's ids split, or None: {"id", "value", "sep", "targets", "key", "train": "wide"|"long"}."""
    if sample.shape[1] != 2 or len(sample) < 4:
        return None
    id_col, value = (str(c) for c in sample.columns)
    if value in train.columns and id_col not in train.columns:
        return None  # the usual wide layout, the id named otherwise in train
    ids = sample[id_col].astype(str)
    head = ids.iloc[:HEAD]  # an ordinary sample of millions of rows is told on its head, quickly
    wide_targets = [str(c) for c in train.columns if c != id_col and (test is None or c not in test.columns)]
    for sep in SEPARATORS:
        if not head.str.contains(sep, regex=False).all() or not ids.str.contains(sep, regex=False).all():
            continue
        pairs = None
        if 2 <= len(wide_targets) <= MAX_TARGETS and split_ids(head, wide_targets, sep, grid=False) is not None:
            pairs = split_ids(ids, wide_targets, sep)
        if pairs is not None:
            key = _key_name(id_col, pairs, train, test)
            return {
                "id": id_col,
                "value": value,
                "sep": sep,
                "targets": list(dict.fromkeys(pairs["target"])),
                "key": key,
                "train": "wide",
            }
        if id_col in train.columns and value in train.columns:  # the train table long too: its ids end the same
            for targets in _endings(head, sep):
                if (
                    _names_targets(test, id_col, targets)
                    and split_ids(ids, targets, sep) is not None
                    and split_ids(train[id_col], targets, sep, grid=False) is not None
                    and not _own_inputs(train, id_col, targets, sep, [value])
                    and (test is None or id_col not in test.columns or not _own_inputs(test, id_col, targets, sep))
                ):
                    return {
                        "id": id_col,
                        "value": value,
                        "sep": sep,
                        "targets": targets,
                        "key": id_col,
                        "train": "long",
                    }
    return None


def _names_targets(test: pd.DataFrame | None, id_col: str, targets: list[str]) -> bool:
    """A test table that holds the composite ids is long only if a column names each row's target; composite ids of
    a wide test table (store_item) that happen to form a grid are its rows' own ids."""
    if test is None or id_col not in test.columns:
        return True
    return any(set(test[c].astype(str)) == set(targets) for c in test.columns if c != id_col)


def _own_inputs(table: pd.DataFrame, id_col: str, targets: list[str], sep: str, values: list[str] = ()) -> bool:
    """Do a long table's rows carry inputs of their own? Rows that are one key's targets share everything but the
    id, the value and the column naming the target; time steps of one breath (id <breath>-<step>) each have their
    own readings, and are samples."""
    head = table.iloc[:HEAD]
    pairs = split_ids(head[id_col], targets, sep, grid=False)
    if pairs is None:
        return True
    rest = head.drop(columns=[id_col, *values])
    rest = rest[[c for c in rest.columns if set(rest[c].astype(str)) != set(targets)]]
    return bool((rest.groupby(pairs["key"].to_numpy()).nunique(dropna=False) > 1).any().any())


def _key_name(id_col: str, pairs: pd.DataFrame, train: pd.DataFrame, test: pd.DataFrame | None) -> str:
    """The name of the key column: the sample's id column where train has it, else a train column the test table
    holds the keys in, else train's first column."""
    if id_col in train.columns:
        return id_col
    keys = set(pairs["key"])
    if test is not None:
        for c in test.columns:
            if c in train.columns and test[c].astype(str).isin(keys).mean() > 0.9:
                return str(c)
    return str(train.columns[0])


def to_wide(long: pd.DataFrame, rec: dict, keep: bool = True, grid: bool = True) -> pd.DataFrame:
    """A long table (the sample, a long train or test table) as one row per key; keep: with the columns that are the
    same on every row of a key (a long test table's inputs), first; grid: every key with every target once (else a
    missing one is left empty, a repeated one counts once)."""
    pairs = split_ids(long[rec["id"]], rec["targets"], rec["sep"], grid=grid)
    if pairs is None:
        raise ValueError(
            f"the ids of column {rec['id']!r} do not each end in one of the targets {rec['targets'][:4]} after "
            f"{rec['sep']!r}" + (", every key with every target once" if grid else "")
        )
    first = ~pairs.duplicated().to_numpy()  # a repeated row of a key and target: the first one counts
    long, pairs = long[first], pairs[first]
    keys = pairs["key"].to_numpy()
    order = list(dict.fromkeys(keys))
    out = pd.DataFrame({rec["key"]: order})
    if keep:
        rest = long.drop(columns=[rec["id"], *([rec["value"]] if rec["value"] in long.columns else [])])
        rest = rest.drop(columns=[c for c in rest.columns if c == rec["key"]])
        grouped = rest.groupby(keys, sort=False)
        same = [c for c in rest.columns if (grouped[c].nunique(dropna=False) <= 1).all()]
        if same:
            out = out.join(grouped[same].first(), on=rec["key"])
    if rec["value"] in long.columns:
        values = pd.Series(long[rec["value"]].to_numpy(), index=pd.MultiIndex.from_arrays([keys, pairs["target"]]))
        out = out.join(values.unstack()[rec["targets"]], on=rec["key"])
    return out


def to_long(wide: pd.DataFrame, rec: dict, sample: pd.DataFrame) -> pd.DataFrame:
    """A wide submission (key, target columns) as the long sample's rows, in the sample's order."""
    pairs = split_ids(sample[rec["id"]], rec["targets"], rec["sep"])
    if pairs is None:
        raise ValueError(f"the sample's ids no longer split into the targets {rec['targets'][:4]}")
    table = wide.assign(**{rec["key"]: wide[rec["key"]].astype(str)}).set_index(rec["key"])
    if missing := sorted(set(pairs["key"]) - set(table.index))[:2]:
        raise ValueError(f"no prediction for sample keys {missing}")
    values = table[rec["targets"]].stack(future_stack=True)
    picked = values.reindex(pd.MultiIndex.from_arrays([pairs["key"], pairs["target"]]))
    return pd.DataFrame({rec["id"]: sample[rec["id"]].to_numpy(), rec["value"]: picked.to_numpy()})


def record(root: Path) -> dict | None:
    """The pivot fetch wrote at the top of a competition folder (None: its sample is not long)."""
    path = Path(root) / RECORD
    return json.loads(path.read_text()) if path.is_file() else None


def long_sample(root: Path) -> pd.DataFrame:
    """The original long sample submission, as text."""
    return read_table(Path(root) / record(root)["sample"], dtype=str)


def as_submitted(root: Path, sub: pd.DataFrame) -> pd.DataFrame:
    """A wide submission as the sample's long rows where the sample is long; else unchanged."""
    rec = record(root)
    if rec is None or rec["key"] not in sub.columns:
        return sub
    return to_long(sub, rec, long_sample(root))


def as_modelled(root: Path, sub: pd.DataFrame) -> pd.DataFrame:
    """A long submission (the sample's columns) read back wide, as the models wrote it; else unchanged."""
    rec = record(root)
    if rec is None or list(sub.columns) != [rec["id"], rec["value"]]:
        return sub
    return to_wide(sub, rec, keep=False)
