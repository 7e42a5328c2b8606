"""Generic feature engineering for a tab input map, from what its columns hold, never from what a competition or a
column is called beyond generic patterns:
- datetimes: a text column whose values parse as dates becomes its parts (year, month, week of year, day, day of
  week, day of year, hour, minute where they vary), cyclic encodings (sin/cos of month, day of week, hour) and the elapsed days
  since the earliest train time; the text column itself goes (a network cannot read it, AutoGluon gets the parts).
- coordinates: numeric columns named like a latitude/longitude (a lat/latitude and a lon/lng/long/longitude token)
  whose values lie in [-90, 90] / [-180, 180], paired by the rest of their names into points; between two points
  the haversine distance (km), the initial bearing (sin/cos) and the coordinate differences.
- high-cardinality categoricals: a text column with many levels gets the count of each value over the train and
  test rows together (no targets involved, so nothing leaks and every row can be encoded), and, given the labels,
  an out-of-fold target encoding per output (the smoothed mean of the target, or of each class, per level) when
  its levels have rows enough and the test rows share them.
- entity keys: a whole-number column of many levels, most seen in several rows and the test's mostly among the
  train's (user, item, store ids), gets the same counts and encodings (a damped per-entity bias), and keeps
  the number too.
- entity context (keys: the columns above that got counts, where most rows share their value with another row):
  the count of each of a few pairs of keys that repeat, are not nested and go together (an ip returns to the same
  apps, a user to the same items) and, given the labels, its out-of-fold target encoding; where the rows have a time
  (the datetime column of the most distinct times), for the finest key (ip, user, card) and each pair, its rows in
  the same day and hour and the seconds since its previous row and until its next (the next click, a card's
  payment gap). Over the train and test rows together, sorted by time; no targets beyond the encodings.
- composite codes: a text column of many levels whose values split on one separator (/ - _ : | or a space) into
  the same number of parts (a cabin "E/285/S", a full name) gets each part as a column, numeric where every part
  is a number, and the count of each text part's value over train and test rows (how many share a deck, a
  surname) where it has many levels.
- fixed-width codes: a text column of many levels whose values are words of one length (3 to
  MAX_CODE_WIDTH letters) over a small alphabet ("ABBCDAEBCA", a DNA sequence) gets the character at each position (a
  categorical) and the count of each character of the alphabet, and how many distinct characters it holds: no
  model reads those off the whole string, a level of its own in nearly every row.
- token sets: a text column whose values list a few tokens from a small vocabulary ("books food giving", a
  genre list "Action|Comedy") gets one 0/1 column per token and the number of tokens: as one string per
  combination, a tree or a network sees a level, not which tokens it holds.
- free text: a text column of many-word, mostly distinct values gets its length, word and character statistics
  and, given the labels, an out-of-fold TF-IDF -> linear model prediction per output.
- pairs of texts: two string columns of many levels whose values share words in a good share of the rows (a
  phrase and the phrase it is compared with, a question and its answer) get how alike they are, row by row
  (tools.text_pairs: sentence-embedding cosine, TF-IDF cosines, token overlap, character similarity, length
  differences): no model reads that off either column alone. No targets involved.
- a forecast's series (tools.lags): when the test rows are later times of the train rows' entities, given the
  labels, each row's entity's earlier targets (at the origin, rolling and same-weekday means), read no later than
  the last time a test row as far ahead could know.
- grouped rows (tools.task_data.group_column: groups the test rows do not share): each row's group size and the
  group's mean and standard deviation of the numeric columns, over the rows of its own table.

Out of fold, so no row's feature ever saw its own target (Labels): the fit rows are encoded K-fold within the fit
rows, the validation rows by the fit rows alone, the test rows by every labelled row. A model refitted on fit and
validation rows therefore reads validation features that never used their own targets.

engineer(train, test, labels) returns both frames with the new columns and a record of what was added and why; the
solver applies it (apply_features) to the task's tab inputs before AutoGluon and the networks see them."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from agentk.modalities import TABULAR
from agentk.parsing import to_numeric
from tools.columns import DATE_SAMPLE, as_datetime, is_datetime, text_sample
from tools.lags import add_lags
from tools.task_data import MIN_TIMES, group_column

HIGH_CARDINALITY = 20  # text columns with more levels than this get a count encoding
ENTITY_LEVELS = 100  # whole-number columns with more levels than this may name entities (users, items)
EARTH_KM = 6371.0
LAT_TOKENS, LON_TOKENS = {"lat", "latitude"}, {"lon", "lng", "long", "longitude"}
CYCLES = {"month": 12, "dayofweek": 7, "hour": 24}
FOLDS = 5  # out-of-fold encodings of the fit rows
SMOOTHING = 10.0  # a level's target mean counts as this many rows of the prior
MAX_ENCODED_CLASSES = 10  # multiclass outputs with more classes get no target encoding (one column per class)
MIN_SHARED = 0.5  # share of test rows whose level the train rows hold, below which a target encoding says nothing
# rows per level on average below which a target encoding is mostly noise a model overfits (an arena task with 1.9
# rows per level validated 2 points lower with it; a fixture with 7.5 gained 3 AUC points)
MIN_LEVEL_ROWS = 5
CODE_SEPARATORS = ("/", "-", "_", ":", "|", " ")
CODE_SHARE = 0.95  # of a column's values that must split into the same number of parts
MAX_CODE_PARTS = 4
MIN_CODE_WIDTH, MAX_CODE_WIDTH, MAX_CODE_ALPHABET = 3, 16, 26
# a list's items, whether joined by spaces, commas or pipes, or written as a repr
TOKENS = re.compile(r"[^\s,;|\[\]'\"]+")
MAX_VOCABULARY = 50  # distinct tokens of a token-set column (natural language has many more)
MULTI_TOKEN_SHARE = 0.2  # of the values that must list two tokens or more (else it is one categorical)
MAX_REPEATS = 0.1  # of the values that may list a token twice
TEXT_WORDS = 3.0  # free text: this many words per value on average, and
TEXT_DISTINCT = 0.5  # at least this share of distinct values
TEXT_ALPHAS = (1.0, 3.0, 10.0, 30.0)  # ridge strengths, and logistic Cs, the free-text model chooses from
TEXT_CS = (0.25, 1.0, 4.0)
TEXT_CHOICE_ROWS = 5000  # fit rows sampled for that choice
MAX_GROUP_COLUMNS = 20  # numeric columns aggregated per group
MAX_PAIR_COLUMNS = 6  # string columns compared pairwise
MIN_PAIR_WORDS = 1.2  # mean words per value of one column of a pair of texts: below it both hold single tokens
PAIR_SHARE = 0.05  # of the train rows whose two values share a word: below it the columns are not a pair of texts
MAX_KEYS = 6  # keys (those of the most levels) whose pairs may be counted
MAX_KEY_PAIRS = 4  # pairs of keys counted, the most specific first
REPEATED_KEYS = 0.5  # share of the rows whose key (pair of keys) another row shares, below which it names rows
NESTED = 1.1  # times the finer key's levels a pair must have distinct values, else it says what that key says
PAIRED = 0.8  # times the distinct pairs of its keys shuffled a pair may have, else its keys are unrelated
WINDOWS = {"day": 86400.0, "hour": 3600.0}  # seconds; a key's rows within the same window are counted


@dataclass
class Labels:
    """What out-of-fold features need from a task: model-space targets (rows, outputs; NaN where a row lacks one),
    the heads (tools.heads outputs), the fixed split and, when rows come in groups, each train row's group."""

    y: np.ndarray
    outputs: list[dict]
    widths: list[int]
    fit: np.ndarray
    val: np.ndarray
    groups: np.ndarray | None = None


def engineer(
    train: pd.DataFrame, test: pd.DataFrame, labels: Labels | None = None
) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """(train, test) with the generic features added; record: {"added": {column: how}, "dropped": [columns]}.
    Without labels, no feature that needs targets (target encodings, text model predictions)."""
    train, test = train.copy(), test.copy()
    added: dict[str, str] = {}
    dropped: list[str] = []
    times: dict[str, tuple[pd.Series, pd.Series]] = {}  # the datetime columns, parsed (for the entity context)
    keys: list[str] = []  # the columns whose levels got counts (for the entity context)
    shared = [c for c in train.columns if c in test.columns]
    numeric = [c for c in shared if pd.api.types.is_numeric_dtype(train[c]) and train[c].dtype != bool]
    if labels is not None:  # a forecast's past targets per entity, before its time column becomes parts
        series = {name: t[:, 0] for name, _, t, width in _targets(labels) if width == 1}
        added.update(add_lags(train, test, series, labels.fit, labels.val))
    for c in shared:
        if is_datetime(train[c]):
            t_train, t_test = as_datetime(train[c]), as_datetime(test[c])
            times[c] = (t_train, t_test)
            origin = t_train.min()
            for frame, t in ((train, t_train), (test, t_test)):
                for name, values in _date_parts(t, origin, t_train).items():
                    frame[f"{c}__{name}"] = values
            added.update({f"{c}__{name}": f"datetime {c!r}: {name}" for name in _date_parts(t_train, origin, t_train)})
            train, test = train.drop(columns=c), test.drop(columns=c)
            dropped.append(c)
    points = coordinate_points(train[[c for c in shared if c in train.columns]])
    names = list(points)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            for frame in (train, test):
                for name, values in _between(frame, points[a], points[b]).items():
                    frame[f"{a}_{b}__{name}".strip("_")] = values
            for name in _between(train.head(1), points[a], points[b]):
                added[f"{a}_{b}__{name}".strip("_")] = f"points {points[a]} -> {points[b]}: {name}"
    group = group_column(train.reset_index(), test.reset_index())
    for c in shared:
        if c in dropped or pd.api.types.is_numeric_dtype(train[c]) or train[c].dtype == bool:
            continue
        if c != group and train[c].nunique() > HIGH_CARDINALITY and (sep := _code_separator(train[c])) is not None:
            added.update(_add_code_parts(train, test, c, sep))
        elif c != group and train[c].nunique() > HIGH_CARDINALITY and (width := _code_width(train[c])) is not None:
            added.update(_add_code_letters(train, test, c, width))
        if (vocabulary := _token_vocabulary(train[c])) is not None:
            added.update(_add_token_set(train, test, c, vocabulary))
        if _is_free_text(train[c]):
            for name, values in _text_stats(train[c]).items():
                train[f"{c}__{name}"] = values
            for name, values in _text_stats(test[c]).items():
                test[f"{c}__{name}"] = values
            added.update({f"{c}__{name}": f"free text {c!r}: {name}" for name in _text_stats(test[c].head(1))})
            if labels is not None:
                _add(train, test, added, *_text_model(train[c], test[c], labels))
            continue
        if train[c].nunique() > HIGH_CARDINALITY and c != group:  # a group's count is its size, below
            if _add_level_statistics(train, test, c, labels, added, "categorical"):
                keys.append(c)
    for c in numeric:  # whole numbers naming entities (users, items, stores): their levels, besides the number
        if c != group and _entity_numbers(train[c], test[c]):
            if _add_level_statistics(train, test, c, labels, added, "entity key"):
                keys.append(c)
    _add_entity_context(train, test, keys, _event_time(times), labels, added)
    strings = [
        c
        for c in shared
        if c not in dropped and c != group and train[c].dtype != bool and not pd.api.types.is_numeric_dtype(train[c])
    ]
    for a, b in text_pairs(train, [c for c in strings if train[c].nunique() > HIGH_CARDINALITY]):
        names = _add_pair(train, test, a, b)
        added.update({f"{a}_{b}__{n}": f"texts {a!r} and {b!r}: {n}" for n in names})
    if group is not None:  # aggregates of the table's own numeric columns, not of the engineered ones
        numeric = [c for c in numeric if c != group][:MAX_GROUP_COLUMNS]
        for frame in (train, test):
            for name, values in _group_aggregates(frame, group, numeric).items():
                frame[name] = values
        added[f"{group}__size"] = f"rows grouped by {group!r}: the number of rows in the row's group"
        for stat in ("mean", "std"):
            added.update(
                {f"{c}__{group}_{stat}": f"rows grouped by {group!r}: {stat} of {c!r} over the group" for c in numeric}
            )
    # a text key replaced by its target encoding: beside it, a model learns each level's own mean from the key and
    # reads a fit row's label off the encoding (out of fold, a level's rows in one fold share one value, lower the
    # more of them are positive); the count and the encoding stay, and the key itself for the factorisation
    encoded = [c for c in strings if encodings(c, added)]
    set_aside = {c: (train.pop(c), test.pop(c)) for c in encoded}
    dropped += encoded
    return train, test, {"added": added, "dropped": dropped, "set_aside": set_aside}


def _add_level_statistics(train, test, c: str, labels: Labels | None, added: dict, kind: str) -> bool:
    """A column of many levels gets each level's count over the train and test rows and, given the labels and
    levels with rows enough that the test rows share, an out-of-fold target encoding per output. Not for an
    identifier (every level once: nothing to count). Whether it counted the column (a key)."""
    counts = pd.concat([train[c], test[c]]).astype(str).value_counts()
    if counts.max() == 1:
        return False
    for frame in (train, test):
        frame[f"{c}__count"] = frame[c].astype(str).map(counts).where(frame[c].notna()).astype(float)
    added[f"{c}__count"] = f"{kind} {c!r} ({train[c].nunique()} levels): count over train and test rows"
    if labels is not None and _encodable(train[c], test[c]):
        columns, train_values, test_values, how, _ = _target_encoding(train[c], test[c], labels)
        _add(train, test, added, columns, train_values, test_values, how, f"{kind} {c!r} ({train[c].nunique()} levels)")
    return True


def _encodable(train: pd.Series, test: pd.Series) -> bool:
    """Whether a target encoding of these levels says something: MIN_LEVEL_ROWS train rows per level on average,
    and MIN_SHARED of the test rows at levels the train rows hold."""
    shared_levels = test.astype(str).isin(set(train.astype(str))).mean()
    return shared_levels >= MIN_SHARED and len(train) / train.nunique() >= MIN_LEVEL_ROWS


def _entity_numbers(train: pd.Series, test: pd.Series) -> bool:
    """Whole numbers that name entities rather than measure: many levels (more than ENTITY_LEVELS), most of them
    seen in several rows, and the test rows' levels mostly the train rows' (the same users, items, stores). A
    model reading them as numbers sees an order that means nothing; their levels' statistics say who is who."""
    present = train.dropna()
    if present.dtype.kind not in "iu" or present.nunique() <= ENTITY_LEVELS:
        return False
    repeated = (present.value_counts() > 1).mean() >= 0.5
    return repeated and test.dropna().isin(set(present)).mean() >= MIN_SHARED


def encodings(key: str, columns) -> list[str]:
    """Of these columns, the key's target encodings (_target_encoding names them)."""
    return [c for c in columns if c.startswith(f"{key}__te_")]


def with_keys(task, replacing: bool = False) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The task's tab inputs (train, test) with the keys the features set aside (TaskData.set_aside) back as their
    last columns; replacing: in place of their target encodings (a model that reads both reads fit rows' labels)."""
    train, test = task.train.inputs[TABULAR.name], task.test.inputs[TABULAR.name]
    for c, (a, b) in task.set_aside.items():
        gone = encodings(c, train.columns) if replacing else []
        train, test = (t.drop(columns=gone).assign(**{c: v.to_numpy()}) for t, v in ((train, a), (test, b)))
    return train, test


def _add(train, test, added: dict, columns: dict, train_values, test_values, how: str, what: str) -> None:
    """Adds out-of-fold columns {name: index into the value arrays} to both frames and the record."""
    for name, k in columns.items():
        train[name], test[name] = train_values[:, k], test_values[:, k]
        added[name] = f"{what}: {how}"


def apply_features(task) -> dict:
    """Replaces the tab inputs of a tools.task_data.TaskData with engineer()'s frames (what AutoGluon and the
    networks read); returns the record. A task without a tab map is left as it is."""
    if TABULAR.name not in task.modalities:
        return {"added": {}, "dropped": []}
    fit, val = task.split
    groups = task.groups
    labels = Labels(task.y, task.outputs, task.widths, fit, val, None if groups is None else groups[1])
    train, test, record = engineer(task.train.inputs[TABULAR.name], task.test.inputs[TABULAR.name], labels)
    task.train.inputs[TABULAR.name], task.test.inputs[TABULAR.name] = train, test
    task.engineered, task.set_aside = tuple(record["added"]), record.pop("set_aside")
    return record


# -- composite codes ---------------------------------------------------------------------------------------------
def _code_separator(s: pd.Series) -> str | None:
    """The separator that splits at least CODE_SHARE of a sample of the values into the same 2..MAX_CODE_PARTS
    parts, none empty; None for free text (words vary in number) and for plain values."""
    sample = text_sample(s)
    if sample.empty:
        return None
    for sep in CODE_SEPARATORS:
        parts = sample.str.split(sep, regex=False)
        counts = parts.str.len()
        k = counts.mode().iloc[0]
        if 2 <= k <= MAX_CODE_PARTS and (counts == k).mean() >= CODE_SHARE:
            if parts[counts == k].map(lambda p: all(p)).mean() >= CODE_SHARE:
                return sep
    return None


def _add_code_parts(train: pd.DataFrame, test: pd.DataFrame, c: str, sep: str) -> dict[str, str]:
    """Each part of column c split on sep as a column (a number where every part in train parses as one), and
    the count over train and test rows of each text part with many levels; returns the record's entries."""
    split = {id(f): f[c].astype("string").str.split(sep, regex=False) for f in (train, test)}
    k = int(split[id(train)].dropna().str.len().mode().iloc[0])
    added = {}
    for i in range(k):
        name = f"{c}__part{i + 1}"
        parts = {id(f): split[id(f)].str.get(i) for f in (train, test)}
        numbers = {key: to_numeric(p, errors="coerce") for key, p in parts.items()}
        train_part = parts[id(train)].dropna()
        numeric = numbers[id(train)].notna().sum() == len(train_part) and len(train_part) > 0
        for f in (train, test):
            f[name] = numbers[id(f)].astype(float) if numeric else parts[id(f)].astype(object)
        added[name] = f"composite code {c!r} split on {sep!r}: part {i + 1}{' (a number)' if numeric else ''}"
        levels = train_part.nunique()
        if not numeric and HIGH_CARDINALITY < levels < len(train_part):
            counts = pd.concat([train[name], test[name]]).astype(str).value_counts()
            for f in (train, test):
                f[f"{name}__count"] = f[name].astype(str).map(counts).where(f[name].notna()).astype(float)
            added[f"{name}__count"] = f"composite code {c!r}, part {i + 1}: count over train and test rows"
    return added


def _code_width(s: pd.Series) -> int | None:
    """The length shared by CODE_SHARE of a sample of the values when they are words of MIN_CODE_WIDTH to
    MAX_CODE_WIDTH letters over at most MAX_CODE_ALPHABET distinct letters; else None. Letters only: identifiers
    ("m4821", hex hashes) mix in digits, and their characters say nothing."""
    sample = text_sample(s)
    if sample.empty:
        return None
    width = int(sample.str.len().mode().iloc[0])
    fixed = (sample.str.len() == width) & sample.str.fullmatch(r"[^\W\d_]+")  # letters: ids mix in digits
    alphabet = set("".join(sample[fixed]))
    if MIN_CODE_WIDTH <= width <= MAX_CODE_WIDTH and fixed.mean() >= CODE_SHARE and len(alphabet) <= MAX_CODE_ALPHABET:
        return width
    return None


def _add_code_letters(train: pd.DataFrame, test: pd.DataFrame, c: str, width: int) -> dict[str, str]:
    """The character at each position of column c's codes, the count of each character of their alphabet and the
    number of distinct characters per code; returns the record's entries."""
    text = {id(f): f[c].astype("string") for f in (train, test)}
    alphabet = sorted(set("".join(text[id(train)].dropna())))
    added = {}
    for i in range(width):
        for f in (train, test):
            f[f"{c}__char{i + 1}"] = text[id(f)].str.slice(i, i + 1).astype(object)
        added[f"{c}__char{i + 1}"] = f"fixed-width code {c!r}: character {i + 1}"
    for ch in alphabet:
        for f in (train, test):
            f[f"{c}__n_{ch}"] = text[id(f)].str.count(re.escape(ch)).astype(float)
        added[f"{c}__n_{ch}"] = f"fixed-width code {c!r}: count of {ch!r}"
    for f in (train, test):
        f[f"{c}__distinct"] = text[id(f)].map(lambda v: float(len(set(v))) if isinstance(v, str) else np.nan)
    added[f"{c}__distinct"] = f"fixed-width code {c!r}: distinct characters"
    return added


# -- pairs of texts ---------------------------------------------------------------------------------------------
def text_pairs(frame: pd.DataFrame, columns: list[str]) -> list[tuple[str, str]]:
    """The pairs among the first MAX_PAIR_COLUMNS columns whose values share a word in at least PAIR_SHARE of
    the rows (identical values aside: a copied column is no pair), one of them holding phrases (single words,
    tokens of a sentence a row each, are codes to count and encode, not texts to compare)."""
    from tools.text_pairs import TOKEN

    columns = columns[:MAX_PAIR_COLUMNS]
    sample = frame[columns].dropna().head(DATE_SAMPLE).astype(str)
    words = {c: [set(TOKEN.findall(v.lower())) for v in sample[c]] for c in columns}
    pairs = []
    for i, a in enumerate(columns):
        for b in columns[i + 1 :]:
            shared = [bool(x & y) for x, y in zip(words[a], words[b], strict=True)]
            phrases = max(np.mean([len(w) for w in words[c]]) for c in (a, b)) >= MIN_PAIR_WORDS
            if len(sample) and phrases and np.mean(shared) >= PAIR_SHARE and (sample[a] != sample[b]).any():
                pairs.append((a, b))
    return pairs


def _add_pair(train: pd.DataFrame, test: pd.DataFrame, a: str, b: str) -> list[str]:
    """Adds tools.text_pairs' features of columns a and b to both frames; returns their names. They are computed
    once over the train and test rows together (TF-IDF weights, the words aligned), so that a pair gets the same
    features in either frame; each distinct value is embedded once (a phrase column repeats its phrases)."""
    from tools.text_pairs import embed, pair_features

    x, y = (pd.concat([train[c], test[c]], ignore_index=True).fillna("").astype(str) for c in (a, b))
    distinct = pd.Series(pd.unique(pd.concat([x, y])))
    vectors = dict(zip(distinct, embed(distinct), strict=True))
    values, names = pair_features(x, y, np.stack(x.map(vectors)), np.stack(y.map(vectors)))
    for k, n in enumerate(names):
        train[f"{a}_{b}__{n}"], test[f"{a}_{b}__{n}"] = values[: len(train), k], values[len(train) :, k]
    return names


# -- datetimes ---------------------------------------------------------------------------------------------------
def _date_parts(t: pd.Series, origin, reference: pd.Series) -> dict[str, pd.Series]:
    """The parts that vary over the train times (`reference`), each cyclic part's sin/cos, and the elapsed days."""
    parts = {}
    for name in ("year", "month", "weekofyear", "day", "dayofweek", "dayofyear", "hour", "minute"):
        if _date_part(reference, name).nunique() > 1:
            parts[name] = _date_part(t, name).astype(float)
            if name in CYCLES:
                angle = 2 * np.pi * parts[name] / CYCLES[name]
                parts[f"{name}_sin"], parts[f"{name}_cos"] = np.sin(angle), np.cos(angle)
    parts["elapsed_days"] = (t - origin).dt.total_seconds() / 86400.0
    return parts


def _date_part(t: pd.Series, name: str) -> pd.Series:
    return t.dt.isocalendar().week.astype(float) if name == "weekofyear" else getattr(t.dt, name)


# -- coordinates -------------------------------------------------------------------------------------------------
def _tokens(name: str) -> list[str]:
    spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", str(name))  # camelCase -> camel Case
    return [t for t in re.split(r"[^a-z0-9]+", spaced.lower()) if t]


def coordinate_points(frame: pd.DataFrame) -> dict[str, tuple[str, str]]:
    """{point name: (latitude column, longitude column)}: numeric columns with a latitude/longitude token in their
    names and values in range, paired by the rest of their names (pickup_latitude + pickup_longitude -> pickup)."""
    lats, lons = {}, {}
    for c in frame.columns:
        s = frame[c]
        if not pd.api.types.is_numeric_dtype(s) or s.dtype == bool or s.notna().sum() == 0:
            continue
        tokens = _tokens(c)
        lo, hi = s.min(), s.max()
        rest = "_".join(t for t in tokens if t not in LAT_TOKENS | LON_TOKENS)
        if LAT_TOKENS & set(tokens) and -90 <= lo and hi <= 90:
            lats[rest] = c
        elif LON_TOKENS & set(tokens) and -180 <= lo and hi <= 180:
            lons[rest] = c
    return {rest: (lats[rest], lons[rest]) for rest in lats if rest in lons}


def _between(frame: pd.DataFrame, a: tuple[str, str], b: tuple[str, str]) -> dict[str, np.ndarray]:
    lat1, lon1 = np.radians(frame[a[0]].to_numpy(float)), np.radians(frame[a[1]].to_numpy(float))
    lat2, lon2 = np.radians(frame[b[0]].to_numpy(float)), np.radians(frame[b[1]].to_numpy(float))
    dlat, dlon = lat2 - lat1, lon2 - lon1
    h = np.sin(dlat / 2) ** 2 + np.cos(lat1) * np.cos(lat2) * np.sin(dlon / 2) ** 2
    bearing = np.arctan2(
        np.sin(dlon) * np.cos(lat2), np.cos(lat1) * np.sin(lat2) - np.sin(lat1) * np.cos(lat2) * np.cos(dlon)
    )
    return {
        "haversine_km": 2 * EARTH_KM * np.arcsin(np.sqrt(np.clip(h, 0, 1))),
        "bearing_sin": np.sin(bearing),
        "bearing_cos": np.cos(bearing),
        "dlat": np.degrees(dlat),
        "dlon": np.degrees(dlon),
    }


# -- out of fold -------------------------------------------------------------------------------------------------
def _targets(labels: Labels) -> list[tuple[str, int, np.ndarray, int]]:
    """(name, output index, targets as columns to average, how many) of the outputs an encoding covers: binary and
    regression outputs as themselves, a multiclass output of few classes as one indicator column per class."""
    found = []
    for j, o in enumerate(labels.outputs):
        y = labels.y[:, j]
        name = re.sub(r"[^0-9A-Za-z_]+", "_", str(o.get("name", j)))
        if o["kind"] == "multiclass":
            if labels.widths[j] > MAX_ENCODED_CLASSES:
                continue
            onehot = np.full((len(y), labels.widths[j]), np.nan)
            known = np.isfinite(y)
            onehot[known] = np.eye(labels.widths[j])[y[known].astype(int)]
            found.append((name, j, onehot, labels.widths[j]))
        else:
            found.append((name, j, y[:, None].astype(float), 1))
    return found


def out_of_fold(
    learn: Callable[[np.ndarray], Callable[[np.ndarray | None], np.ndarray]], labels: Labels, n_test: int
) -> tuple[np.ndarray, np.ndarray]:
    """(train values, test values) of a learned feature, never computed with a row's own target: learn(rows) fits
    on those train rows and returns predict(rows), where rows=None means the test rows. Fit rows: K-fold within the
    fit rows (whole groups per fold when rows are grouped); validation rows: learned on the fit rows; test rows:
    learned on every train row."""
    from sklearn.model_selection import GroupKFold, KFold

    fit, val = labels.fit, labels.val
    k = min(FOLDS, len(fit))
    if labels.groups is not None and len(np.unique(labels.groups[fit])) >= k:
        folds = GroupKFold(n_splits=k).split(fit, groups=labels.groups[fit])
    else:
        folds = KFold(n_splits=k, shuffle=True, random_state=0).split(fit)
    parts = [(fit[outer], learn(fit[inner])(fit[outer])) for inner, outer in folds]
    parts.append((val, learn(fit)(val)))
    width = parts[0][1].shape[1]
    train_values = np.full((len(labels.y), width), np.nan)
    for rows, values in parts:
        train_values[rows] = values
    test_values = learn(np.concatenate([fit, val]))(None) if n_test else np.empty((0, width))
    return train_values, test_values


def _target_encoding(train: pd.Series, test: pd.Series, labels: Labels):
    """Per output (and class), the level's target mean smoothed toward the prior of the rows learned from."""
    levels_train, levels_test = train.astype(str).to_numpy(), test.astype(str).to_numpy()
    specs = _targets(labels)
    if not specs:
        return {}, np.empty((len(train), 0)), np.empty((len(test), 0)), "", ""
    targets = np.hstack([t for _, _, t, _ in specs])

    def learn(rows: np.ndarray):
        frame = pd.DataFrame(targets[rows], index=levels_train[rows])
        prior = np.nanmean(targets[rows], axis=0)
        sums, counts = frame.groupby(level=0).sum(min_count=1), frame.groupby(level=0).count()
        encoded = (sums.fillna(0) + SMOOTHING * prior) / (counts + SMOOTHING)

        def predict(which: np.ndarray | None) -> np.ndarray:
            keys = levels_test if which is None else levels_train[which]
            return encoded.reindex(keys).fillna(pd.Series(prior, index=encoded.columns)).to_numpy(float)

        return predict

    train_values, test_values = out_of_fold(learn, labels, len(test))
    columns, k = {}, 0
    for name, _, _, width in specs:
        for cls in range(width):
            columns[f"{train.name}__te_{name}" + (f"_{cls}" if width > 1 else "")] = k
            k += 1
    how = f"out-of-fold target mean per level, smoothed toward the prior with {SMOOTHING:g} rows"
    return columns, train_values, test_values, how, f"categorical {train.name!r} ({train.nunique()} levels)"


# -- free text ---------------------------------------------------------------------------------------------------
def _token_vocabulary(s: pd.Series) -> list[str] | None:
    """The tokens of a token-set column, in order of frequency: a sample of its values lists 2..MAX_VOCABULARY
    distinct tokens, at least MULTI_TOKEN_SHARE of them two or more, at most MAX_REPEATS of them a token twice, and
    holds more distinct values than tokens (combinations: a few multi-word names, "55 Cancri e", are levels of a
    categorical); else None."""
    sample = text_sample(s)
    if sample.empty:
        return None
    tokens = sample.map(TOKENS.findall)
    counts = pd.Series([t for row in tokens for t in row]).value_counts()
    if not 2 <= len(counts) <= MAX_VOCABULARY or (tokens.str.len() >= 2).mean() < MULTI_TOKEN_SHARE:
        return None
    repeats = tokens.map(lambda row: len(row) != len(set(row))).mean()  # words of a sentence repeat, a set's do not
    if sample.nunique() <= len(counts) or repeats > MAX_REPEATS:
        return None
    return counts.index.tolist()


def _add_token_set(train: pd.DataFrame, test: pd.DataFrame, c: str, vocabulary: list[str]) -> dict[str, str]:
    """One 0/1 column per token of the vocabulary (a token outside it counts toward the number only) and the number
    of tokens of each value; returns the record's entries."""
    added = {}
    for f in (train, test):
        sets = f[c].map(lambda v: set(TOKENS.findall(v)) if isinstance(v, str) else set())
        for token in vocabulary:
            f[f"{c}__has_{token}"] = sets.map(lambda row, token=token: float(token in row))
        f[f"{c}__tokens"] = sets.map(len).astype(float)
    added.update({f"{c}__has_{t}": f"token set {c!r}: lists {t!r}" for t in vocabulary})
    added[f"{c}__tokens"] = f"token set {c!r}: number of tokens"
    return added


def _is_free_text(s: pd.Series) -> bool:
    values = s.dropna().astype(str)
    if values.empty:
        return False
    sample = values.sample(min(len(values), DATE_SAMPLE), random_state=0)
    words = sample.str.split().str.len().mean()
    return words >= TEXT_WORDS and values.nunique() >= TEXT_DISTINCT * len(values)


def _text_stats(s: pd.Series) -> dict[str, np.ndarray]:
    text = s.fillna("").astype(str)
    chars = text.str.len().to_numpy(float)
    words = text.str.split().str.len().to_numpy(float)
    per_char = np.maximum(chars, 1)
    return {
        "chars": chars,
        "words": words,
        "mean_word_length": chars / np.maximum(words, 1),
        "distinct_word_share": text.map(lambda t: len(set(t.lower().split())) / max(len(t.split()), 1)).to_numpy(float),
        "upper_share": text.str.count(r"[A-Z]").to_numpy(float) / per_char,
        "digit_share": text.str.count(r"[0-9]").to_numpy(float) / per_char,
        "punctuation_share": text.str.count(r"[^\w\s]").to_numpy(float) / per_char,
    }


def _text_model(train: pd.Series, test: pd.Series, labels: Labels):
    """Per output, the out-of-fold prediction of a linear model on the column's word uni- and bigrams: P(class 1),
    each class's probability, or the value (ridge). The vocabulary comes from the train and test texts (no
    targets). Each output's words as TF-IDF (sublinear, unit length: documents of any length) or as binary counts
    (short texts whose words add up, e.g. titles, where unit length blurs each word's effect), and the
    regularisation, are chosen by 3-fold CV on a sample of the fit rows (_text_choice)."""
    from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer

    texts_train, texts_test = train.fillna("").astype(str), test.fillna("").astype(str)
    both = pd.concat([texts_train, texts_test])
    words = dict(ngram_range=(1, 2), min_df=2, max_features=50_000)
    try:
        views = {
            "tf-idf": TfidfVectorizer(sublinear_tf=True, **words).fit(both),
            "binary counts": CountVectorizer(binary=True, dtype=np.float64, **words).fit(both),
        }
    except ValueError:  # no word occurs twice
        return {}, np.empty((len(train), 0)), np.empty((len(test), 0)), "", ""
    x = {k: (v.transform(texts_train), v.transform(texts_test)) for k, v in views.items()}
    specs = [(name, j, width) for name, j, _, width in _targets(labels)]
    chosen = [_text_choice(x, labels, j) for _, j, _ in specs]

    def learn(rows: np.ndarray):
        models = []
        for (_, j, width), (view, strength) in zip(specs, chosen, strict=True):
            known = rows[np.isfinite(labels.y[rows, j])]
            y = labels.y[known, j]
            if labels.outputs[j]["kind"] != "regression" and len(np.unique(y)) < 2:  # one class: its frequency
                models.append((None, width, np.eye(width)[int(y[0])] if width > 1 else np.array([float(y[0])])))
            else:
                models.append((_linear(labels.outputs[j]["kind"], strength).fit(x[view][0][known], y), width, None))

        def predict(which: np.ndarray | None) -> np.ndarray:
            cols = []
            for (model, width, constant), (_, j, _), (view, _) in zip(models, specs, chosen, strict=True):
                rows_x = x[view][1] if which is None else x[view][0][which]
                if model is None:
                    cols.append(np.tile(constant, (rows_x.shape[0], 1)))
                elif labels.outputs[j]["kind"] == "regression":
                    cols.append(model.predict(rows_x).reshape(-1, 1))
                else:
                    proba = model.predict_proba(rows_x)
                    full = np.zeros((rows_x.shape[0], max(width, 2)))
                    full[:, model.classes_.astype(int)] = proba
                    cols.append(full[:, 1:2] if width == 1 else full[:, :width])
            return np.hstack(cols)

        return predict

    train_values, test_values = out_of_fold(learn, labels, len(test))
    columns, k = {}, 0
    for name, _, width in specs:
        for cls in range(width):
            columns[f"{train.name}__tfidf_{name}" + (f"_{cls}" if width > 1 else "")] = k
            k += 1
    picks = ", ".join(
        f"{name}: {view}, {'alpha' if labels.outputs[j]['kind'] == 'regression' else 'C'} {strength:g}"
        for (name, j, _), (view, strength) in zip(specs, chosen, strict=True)
    )
    how = f"out-of-fold prediction of a linear model (logistic or ridge) on word 1-2-grams ({picks})"
    return columns, train_values, test_values, how, f"free text {train.name!r}"


def _linear(kind: str, strength: float):
    from sklearn.linear_model import LogisticRegression, Ridge

    return Ridge(alpha=strength) if kind == "regression" else LogisticRegression(C=strength, max_iter=1000)


def _text_choice(x: dict, labels: Labels, j: int) -> tuple[str, float]:
    """(words view, alpha or C) of the lowest 3-fold CV error (squared error, or log loss) on at most TEXT_CHOICE_ROWS
    fit rows with output j's target."""
    from sklearn.metrics import log_loss
    from sklearn.model_selection import KFold

    rows = labels.fit[np.isfinite(labels.y[labels.fit, j])]
    rows = np.random.default_rng(0).permutation(rows)[:TEXT_CHOICE_ROWS]
    y, kind = labels.y[rows, j], labels.outputs[j]["kind"]
    grid = TEXT_ALPHAS if kind == "regression" else TEXT_CS
    if len(rows) < 30 or (kind != "regression" and np.bincount(y.astype(int)).max() > len(y) - 3):
        return "tf-idf", 1.0 if kind == "regression" else 4.0  # too few rows (or examples of a class) to choose
    errors = {}
    for view, (xt, _) in x.items():
        for strength in grid:
            err = 0.0
            for inner, outer in KFold(3, shuffle=True, random_state=0).split(rows):
                model = _linear(kind, strength).fit(xt[rows[inner]], y[inner])
                if kind == "regression":
                    err += float(np.sum((model.predict(xt[rows[outer]]) - y[outer]) ** 2))
                else:
                    proba = np.full((len(outer), int(y.max()) + 1), 1e-6)
                    proba[:, model.classes_.astype(int)] = model.predict_proba(xt[rows[outer]])
                    proba /= proba.sum(axis=1, keepdims=True)  # the floor for classes the fold did not see
                    err += log_loss(y[outer].astype(int), proba, labels=range(proba.shape[1])) * len(outer)
            errors[(view, strength)] = err
    return min(errors, key=errors.get)


# -- grouped rows ------------------------------------------------------------------------------------------------
def _group_aggregates(frame: pd.DataFrame, group: str, numeric: list[str]) -> dict[str, np.ndarray]:
    """Each row's group size and its group's mean and standard deviation of the numeric columns; over the frame's
    own rows, since the test rows' groups are not in the train rows (no targets involved)."""
    keys = frame[group].astype(str)
    grouped = frame[numeric].groupby(keys.to_numpy())
    out = {f"{group}__size": keys.map(keys.value_counts()).to_numpy(float)}
    for stat in ("mean", "std"):
        values = grouped.transform(stat)
        out.update({f"{c}__{group}_{stat}": values[c].to_numpy(float) for c in numeric})
    return out


# -- entity context ----------------------------------------------------------------------------------------------
def _event_time(times: dict[str, tuple[pd.Series, pd.Series]]) -> tuple[str, np.ndarray] | None:
    """(column, seconds since the epoch of the train then the test rows, NaN where unknown) of the datetime column
    with the most distinct train times, MIN_TIMES at least: when each row's event happened. None without one."""
    if not times:
        return None
    c = max(times, key=lambda c: times[c][0].nunique())
    if times[c][0].nunique() < MIN_TIMES:
        return None
    both = pd.concat(times[c], ignore_index=True)
    return c, (both - pd.Timestamp(0)).dt.total_seconds().to_numpy(float)


def _codes(values: np.ndarray) -> np.ndarray:
    """One integer code per distinct value (0, 1, ...), -1 where it is missing."""
    return pd.factorize(values)[0].astype(np.int64)


def _combined(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """One code per distinct pair of codes of a and b, -1 where either is missing."""
    both = (a >= 0) & (b >= 0)
    codes = np.full(len(a), -1, dtype=np.int64)
    codes[both] = _codes(a[both] * (int(b.max()) + 1) + b[both])  # codes below the row count: no overflow
    return codes


def _row_counts(codes: np.ndarray) -> np.ndarray:
    """Each row's number of rows sharing its code (NaN where the code is missing)."""
    counts = np.bincount(codes[codes >= 0], minlength=1).astype(float)
    return np.where(codes >= 0, counts[np.maximum(codes, 0)], np.nan)


def _gaps(codes: np.ndarray, seconds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(seconds since the previous row of the same code, seconds until its next row), rows ordered by time (ties in
    row order); NaN for a code's first (last) row and where the code or the time is missing."""
    known = np.flatnonzero((codes >= 0) & np.isfinite(seconds))
    order = known[np.lexsort((seconds[known], codes[known]))]  # by code, then time; stable
    same = codes[order][1:] == codes[order][:-1]
    step = np.where(same, np.diff(seconds[order]), np.nan)
    since, until = np.full(len(codes), np.nan), np.full(len(codes), np.nan)
    since[order[1:]], until[order[:-1]] = step, step
    return since, until


def _repeated(codes: np.ndarray) -> bool:
    """Whether REPEATED_KEYS of the rows share their code with another row: an entity's, not a row's name."""
    return bool((_row_counts(codes) > 1).mean() >= REPEATED_KEYS)


def _key_pairs(both: pd.DataFrame, keys: list[str]) -> dict[tuple[str, str], np.ndarray]:
    """{(a, b): codes} of at most MAX_KEY_PAIRS pairs among the MAX_KEYS keys of the most levels: pairs that repeat
    (_repeated: else the pair names rows), are not nested (NESTED times the finer key's levels at least: else the
    pair says what that key says) and go together (at most PAIRED times the distinct pairs of the same keys
    shuffled: a user returns to the same items, an ip to the same apps; a pair of unrelated keys counts what their
    own counts tell), those that go together the most first."""
    levels = {c: both[c].nunique() for c in keys}
    keys = sorted(keys, key=levels.get, reverse=True)[:MAX_KEYS]
    codes = {c: _codes(both[c].to_numpy()) for c in keys}
    shuffle = np.random.default_rng(0).permutation(len(both))
    found = {}
    for i, a in enumerate(keys):
        for b in keys[i + 1 :]:
            pair = _combined(codes[a], codes[b])
            if pair.max() + 1 < NESTED * max(levels[a], levels[b]) or not _repeated(pair):
                continue
            together = (pair.max() + 1) / (_combined(codes[a], codes[b][shuffle]).max() + 1)
            if together <= PAIRED:
                found[(a, b)] = pair, together
    best = sorted(found, key=lambda pair: found[pair][1])[:MAX_KEY_PAIRS]
    return {pair: found[pair][0] for pair in best}


def _add_entity_context(train, test, keys: list[str], when, labels: Labels | None, added: dict) -> None:
    """What a row's entities did around it, over the train and test rows together (no targets): the count of each
    pair of keys (_key_pairs) and, given the labels, its out-of-fold target encoding (where _encodable); and where
    the rows have a time (`when`: column, seconds), for the finest key (the most levels: the users, ips or cards
    that act; a coarse key's rows, an app's, come every second and their gaps say what its count says) and each
    pair, its rows in the same WINDOWS (day, hour) and the time since its previous row and until its next (the gap
    between an ip's clicks, between a card's payments)."""
    n = len(train)
    both = pd.concat([train[keys], test[keys]], ignore_index=True)
    codes = {c: _codes(both[c].to_numpy()) for c in keys}
    keys = [c for c in keys if _repeated(codes[c])]  # mostly unique values name rows, not entities
    if not keys:
        return

    def put(name: str, values: np.ndarray, how: str) -> None:
        train[name], test[name] = values[:n], values[n:]
        added[name] = how

    finest = max(keys, key=lambda c: codes[c].max())
    timed = {(finest,): codes[finest]}
    for (a, b), pair in _key_pairs(both, keys).items():
        what = f"key pair {a!r} x {b!r} ({pair.max() + 1} pairs)"
        put(f"{a}_{b}__count", _row_counts(pair), f"{what}: count over train and test rows")
        levels = pd.Series(pair[:n], name=f"{a}_{b}"), pd.Series(pair[n:], name=f"{a}_{b}")
        if labels is not None and _encodable(*levels):
            columns, train_values, test_values, how, _ = _target_encoding(*levels, labels)
            _add(train, test, added, columns, train_values, test_values, how, what)
        timed[(a, b)] = pair
    if when is None:
        return
    column, seconds = when
    slots, distinct = {}, 1
    for window, width in WINDOWS.items():  # coarse to fine: a window that splits the times no finer adds nothing
        slot = _codes(np.floor(seconds / width))
        if slot.max() + 1 > distinct:
            slots[window], distinct = slot, slot.max() + 1
    for key, group in timed.items():
        name, what = "_".join(key), (f"key pair {key[0]!r} x {key[1]!r}" if len(key) == 2 else f"key {key[0]!r}")
        for window, slot in slots.items():
            counts = _row_counts(_combined(group, slot))
            put(f"{name}__{window}_count", counts, f"{what}: rows in the same {window} of {column!r}")
        since, until = _gaps(group, seconds)
        put(f"{name}__since_previous", since, f"{what}: seconds since its previous row by {column!r}")
        put(f"{name}__until_next", until, f"{what}: seconds until its next row by {column!r}")
