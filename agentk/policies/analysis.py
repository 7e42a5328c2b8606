"""What the expert policy reads off a competition before it writes any code.

Deterministic inspection of raw/ and task/: which files, which id column, which targets and how they
are submitted (labels, probabilities, per-class probability columns, values), which metric the
evaluation text names, and the task type. Each stage's expert writes its code from this.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from agentk.competition.class_names import class_columns
from agentk.competition.column_kinds import is_long_text
from agentk.competition.dataview import find_tables
from agentk.competition.file_inputs import (
    FileSource,
    column_source,
    listing_frame,
    listing_source,
    matched_views,
    modality_files,
)
from agentk.competition.graph import key_text
from agentk.competition.joins import Join, find_joins
from agentk.competition.joins import apply as join_tables
from agentk.competition.readers import read_table
from agentk.competition.spelling import respelled
from agentk.competition.tables import find, sample_columns_of
from agentk.competition.values import numeric_text
from agentk.modalities import MODALITIES, TABULAR, TEXT
from agentk.parsing import to_numeric
from agentk.policies import target_shapes as shapes
from agentk.policies.hypotheses import Decision, Decisions, Hypothesis
from agentk.workspace import (
    ROLE_INPUT_MAP,
    ROLE_METRIC,
    ROLE_SUBMISSION_FORMAT,
    ROLE_TARGET_MAP,
    ROLE_TARGET_TRANSFORM,
    Workspace,
)
from tools.columns import is_datetime
from tools.metrics import COLUMNWISE, LOG_ERROR, METRICS, TARGET_ALONE, Metric, find_metric

BOOL_VALUES = {"true", "false"}


def source_key(split: str, modality: str) -> str:
    """The key of Analysis.files for a split's files of one modality (train_img)."""
    return f"{split}_{modality}"


class CannotAnalyse(Exception):
    """The expert cannot tell; the stage's code says why and the unit tests record it. `decisions`: those the
    analysis had made when it stopped (another hypothesis of one of them may get further)."""

    decisions: Decisions = Decisions()


@dataclass
class Target:
    column: str  # column of the target map (the submission's name when it has one)
    kind: str  # binary | multiclass | regression | multilabel (a set of labels per row: one binary head per label)
    submit: str  # label | proba | proba_columns | value | ranking (top k labels, best first) | label_set
    columns: list[str]  # submission columns this target fills
    classes: list = field(default_factory=list)  # sorted classes (classification; ordinal ratings of a regression)
    positive: object = None  # binary: the class submitted as 1 / whose probability is submitted
    log: bool = False  # regression scored on a log scale: model log1p(y)
    source: str = ""  # column of the train table it comes from (defaults to `column`)
    k: int = 0  # ranking: labels per row
    threshold: float | None = None  # binary from a continuous train column: positive when value >= threshold
    onehot: bool = False  # proba_columns whose train rows are one-hot over `columns` (exclusive outcomes)
    # proba_columns named by the classes with an affix ("class_0"): each train value (as text) -> its column; the
    # target map writes the column's name as the label, so the classes are the columns
    named: dict = field(default_factory=dict)

    def __post_init__(self):
        self.source = self.source or self.column


@dataclass
class Analysis:
    train: str | None  # paths relative to the workspace; train None: the samples are files[train_*]'s listing
    test: str | None  # None: no test table, the sample submission lists the test samples
    sample: str
    id_col: str | None  # the sample submission's id column (None: it has none, its rows are the test rows in order)
    train_id: str | None  # id column of train (None: row numbers)
    test_id: str | None  # id column of test (None: the sample's ids, by position)
    features: list[str]  # tabular inputs
    bool_features: list[str]
    targets: list[Target]
    metric: str
    metric_from: str  # "description", "fallback", or "proxy" (the description's metric is official_metric)
    task_type: str
    n_train: int
    n_test: int
    text_columns: list[str] = field(default_factory=list)  # long free-text inputs of the tables
    files: dict[str, FileSource] = field(default_factory=dict)  # source_key(split, modality): per-sample files
    joins: list[Join] = field(default_factory=list)  # tables joined to train/test by a key (labels, per-entity)
    numeric_text: list[str] = field(default_factory=list)  # features written as text that are numbers ("1,234")
    echo: list[str] = field(default_factory=list)  # sample columns that repeat test inputs: copied, not predicted
    metric_columns: list[str] = field(default_factory=list)  # train columns the metric reads (identities, a mask)
    scored_value: float | None = None  # masked metrics: only rows whose metric_columns[0] holds this are scored
    decisions: Decisions = field(default_factory=Decisions)  # each decision's ranked hypotheses, the current one used
    test_id_respelled: bool = False  # test_id holds the sample's ids but for padding: write them as the sample does
    # a metric the text names that agentk cannot score here (a sub-group bias AUC whose sub-group columns the text
    # does not name): `metric` is its score of the target alone, optimised in its place
    official_metric: str | None = None
    test_renamed: dict[str, str] = field(default_factory=dict)  # test columns train spells otherwise -> train's name

    @property
    def submission_columns(self) -> list[str]:
        return [c for t in self.targets for c in t.columns]

    def file_source(self, split: str, modality: str) -> FileSource | None:
        """Where a split's per-sample files of a modality are, if it has any."""
        return self.files.get(source_key(split, modality))

    @property
    def inputs(self) -> list[str]:
        """The input modalities, in the registry's order: table columns or per-sample files of the train split."""
        columns = {TABULAR.name: self.features, TEXT.name: self.text_columns}
        return [m for m in MODALITIES if columns.get(m) or self.file_source("train", m)]

    def to_dict(self) -> dict:
        return asdict(self)


def evaluation_text(ws: Path) -> str:
    w = Workspace(ws)
    if w.evaluation.exists() and w.evaluation.read_text().strip():
        return w.evaluation.read_text()
    return w.description.read_text() if w.description.exists() else ""


def _task_text(ws: Path) -> str:
    """The description and the evaluation text together (what to predict is said in either)."""
    w = Workspace(ws)
    return "\n".join(p.read_text(errors="replace") for p in (w.description, w.evaluation) if p.exists())


def _py(v):
    return v.item() if isinstance(v, np.generic) else v


def _is_boolish(s: pd.Series) -> bool:
    # the distinct values as text, not every row's: on 5 million rows each column's text took gigabytes
    values = pd.unique(s.dropna())
    if len(values) == 0 or s.dtype == bool:
        return len(values) > 0
    return len(values) <= 3 * len(BOOL_VALUES) and {str(v).lower() for v in values} <= BOOL_VALUES  # True, true, TRUE


# the test's id column shapes the train maps too (the train table's column of that name is its id)
TEST_ID_ROLES = (ROLE_INPUT_MAP["train"], ROLE_TARGET_MAP, ROLE_INPUT_MAP["test"], ROLE_SUBMISSION_FORMAT)
RESPELLED = "holds the sample's ids but for zero padding or a float's .0"
# the train maps keep the rows that have the target
TARGET_ROLES = (ROLE_INPUT_MAP["train"], ROLE_TARGET_MAP, ROLE_TARGET_TRANSFORM, ROLE_SUBMISSION_FORMAT, ROLE_METRIC)


def _test_id_options(test: pd.DataFrame, sample: pd.DataFrame, id_col: str | None) -> list[Hypothesis]:
    """Where the test rows' ids are, best first: a column holding exactly the sample's ids, the column named as the
    sample's, one holding them but for padding or a float's ".0", then the test rows in the sample's order."""
    if id_col is None:
        return [Hypothesis(None, "the sample has no id column: its rows are the test rows in order")]
    ids = set(sample[id_col].astype(str))
    # a column can hold the ids only with as many distinct values (counted first: text of every column is slow)
    same_count = [c for c in test.columns if test[c].nunique(dropna=False) == len(ids)]
    if id_col in same_count and set(test[id_col].astype(str)) == ids:  # the obvious one: no need to look further
        same_count = [id_col]
    exact = [c for c in same_count if set(test[c].astype(str)) == ids]
    options = [Hypothesis(c, "holds exactly the sample's ids") for c in exact]
    if id_col in test.columns and id_col not in exact:
        options.append(Hypothesis(id_col, "named as the sample's id column"))
    keys = set(key_text(sample[id_col].astype(str)))
    options += [
        Hypothesis(c, RESPELLED)
        for c in same_count
        if c not in exact and c != id_col and test[c].notna().all() and set(key_text(test[c])) == keys
    ]
    if len(test) == len(sample) or not options:
        options.append(Hypothesis(None, "the test rows are the sample's rows in order"))
    return options


def _classification(metric: Metric | None, s: pd.Series, sample_col: pd.Series | None) -> bool:
    if metric is not None:
        return metric.prediction != "value"
    if s.dtype == bool or not pd.api.types.is_numeric_dtype(s):
        return True
    vals = s.dropna()
    integer = bool(np.all(np.mod(vals, 1) == 0))
    return vals.nunique() <= 2 or (
        integer and vals.nunique() <= 20 and sample_col is not None and pd.api.types.is_integer_dtype(sample_col)
    )


def _submit_kind(metric: Metric | None, sample_col: pd.Series) -> str:
    if metric is not None:
        return "proba" if metric.prediction == "proba" else "label"
    vals = to_numeric(sample_col, errors="coerce")
    fractional = vals.notna().all() and ((vals % 1) != 0).any() and vals.between(0, 1).all()
    return "proba" if fractional else "label"


def _positive(classes: list, column: str, text: str = ""):
    """The class submitted as 1: named by the column, or by the description ("1 = dog", "probability that
    the image is a dog"); else the later one."""
    for c in classes:
        name = re.escape(str(c))
        if (
            len(str(c)) > 1
            and not str(c).isdigit()
            and re.search(
                rf"(\b1\s*(=|:|means|for|if)\s*(an?\s+|the\s+)?{name}\b|probability\s+(that\s+)?[\w\s]{{0,30}}?"
                rf"\b(is|being|contains|of)\s+(an?\s+|the\s+)?{name}\b)",
                text,
                re.I,
            )
        ):
            return c
    for c in classes:
        if str(c).lower() in column.lower() and len(str(c)) > 1:
            return c
    return classes[-1]  # 1 / True / the later name: scikit-learn's convention


def analyse(ws: Path, chosen: dict[str, int] | None = None, recall=None) -> Analysis:
    """The analysis under the hypotheses `chosen` (decision name -> index of its option; 0, the best ranked, for
    any decision not named); `recall`: long-term memory's ranking (agentk.policies.hypotheses.Decisions.recall)."""
    decisions = Decisions()
    decisions.recall = recall
    try:
        analysis = _analyse(Path(ws), chosen or {}, decisions)
    except CannotAnalyse as exc:
        exc.decisions = decisions
        raise
    except Exception as exc:  # noqa: BLE001 - data the analysis did not foresee: the stage says so, in one line
        failed = CannotAnalyse(f"the analysis failed on this data ({type(exc).__name__}: {exc})")
        failed.decisions = decisions
        raise failed from exc
    analysis.decisions = decisions
    return analysis


def _analyse(ws: Path, chosen: dict[str, int], decisions: Decisions) -> Analysis:
    raw = Workspace(ws).raw
    tables = find_tables(raw)
    train_table = _train_table_options(raw, tables)
    if train_table:  # several tables named train: the one the tables' values chose, then the others
        table = decisions.add(Decision("train_table", set(TEST_ID_ROLES) | set(TARGET_ROLES), train_table), chosen)
        tables["train"] = raw / table.value
    if "sample" not in tables:
        raise CannotAnalyse(f"no sample submission found under {raw.name}/")
    sample = read_table(tables["sample"], dtype=str)
    columns = sample_columns_of(raw)
    id_col, sub_cols = columns.id, columns.predicted  # id None: the sample's rows are the test rows in order
    files = modality_files(raw)
    sources: dict[str, FileSource] = {}
    if "train" in tables:
        train = read_table(tables["train"])
    else:  # image/text folders: the files are the samples, labelled by folder or file name
        listing = next((src for m in files if (src := listing_source(m, files[m]))), None)
        if listing is None:
            raise CannotAnalyse(
                "no train table, and no train folder whose files are labelled by class sub-folder or file-name prefix"
            )
        sources[source_key("train", listing.modality)] = listing
        train = listing_frame(ws, listing, sub_cols[0] if len(sub_cols) == 1 else "label")
    test = read_table(tables["test"]) if "test" in tables else sample[[id_col]]
    renamed = respelled(train, test, set(sample.columns)) if "train" in tables and "test" in tables else {}
    test = test.rename(columns=renamed)
    joins = find_joins(ws, raw, tables, train, test) if "train" in tables else []
    train, test = join_tables(ws, joins, train, "train"), join_tables(ws, joins, test, "test")
    test_ids = decisions.add(
        Decision("test_id", set(TEST_ID_ROLES), _test_id_options(test, sample, id_col), r"\bids?\b", TEST_ID_ROLES[0]),
        chosen,
    )
    test_id = test_ids.value
    train_id = (
        "id" if "train" not in tables else test_id if test_id in train.columns and train[test_id].is_unique else None
    )
    metric = find_metric(evaluation_text(ws))
    metric_from = "description" if metric else "fallback"

    direct = [c for c in sub_cols if c in train.columns]
    targets: list[Target] = []
    if shapes.onehot_outcomes(train, sub_cols):  # exclusive outcomes: one label, one softmax over the columns
        label = shapes.outcome_column(train)
        targets.append(Target(label, "multiclass", "proba_columns", sub_cols, list(sub_cols), onehot=True))
    elif len(direct) == len(sub_cols):
        for c in sub_cols:
            targets.append(_target(train[c], c, [c], metric, sample[c], evaluation_text(ws)))
    else:
        labels = _label_columns(train, test, sub_cols, id_col)
        label, named = None, {}
        if labels:
            options = [
                Hypothesis(c, f"its values are the classes the sample's columns name, {share:.0%} of rows labelled")
                for c, _, share in labels
            ]
            label = decisions.add(Decision("label_column", set(TARGET_ROLES), options, owner=TARGET_ROLES[0]), chosen)
            label, named = label.value, next(n for c, n, _ in labels if c == label.value)
        if named:  # a column no train value names (a "none of these" class train lacks) is not a class to learn
            held = set(named.values())
            classes = [c for c in sub_cols if c in held]
            targets.append(Target(label, "multiclass", "proba_columns", sub_cols, classes, named=named))
        elif label is not None:
            classes = sorted(_py(v) for v in train[label].dropna().unique())
            by_name = {str(v): v for v in classes}
            targets.append(
                Target(label, "multiclass", "proba_columns", sub_cols, [by_name[c] for c in sub_cols if c in by_name])
            )
        elif len(sub_cols) == 1:
            candidates = [c for c in train.columns if c not in test.columns and c not in (id_col, train_id)]
            if not candidates:
                raise CannotAnalyse(
                    f"submission column {sub_cols[0]!r} is not in the train table and the train table has no column "
                    "the test table lacks to stand in for it"
                )
            options = _stand_in_options(train, candidates, sample[sub_cols[0]], _task_text(ws))
            source = decisions.add(Decision("target_column", set(TARGET_ROLES), options, owner=TARGET_ROLES[0]), chosen)
            target = _target(
                train[source.value], sub_cols[0], sub_cols, metric, sample[sub_cols[0]], evaluation_text(ws)
            )
            target.source = source.value
            targets.append(target)
        else:
            raise CannotAnalyse(f"submission columns {sub_cols[:5]} are neither train columns nor the classes of one")

    target_cols = {t.source for t in targets}
    if "train" in tables:
        named = _as_written(train, tables["train"]) if files else train
        sources.update(_table_sources(files, named, [c for c in (train_id, id_col) if c], "train", exclude=target_cols))
    for m in [m for m in files if source_key("train", m) in sources]:
        named = _as_written(test, tables["test"]) if "test" in tables else test
        test_src = _table_sources({m: files[m]}, named, [c for c in (test_id, id_col) if c], "test", exclude=set())
        if source_key("test", m) not in test_src:
            folder = sources[source_key("train", m)].folder
            raise CannotAnalyse(
                f"the train samples' {m} files are under {folder}/ but no column of "
                f"the test table or sample submission names the test samples' files"
            )
        train_key, test_key = source_key("train", m), source_key("test", m)
        sources[train_key], sources[test_key] = matched_views(sources[train_key], test_src[test_key])
    file_cols = {src.column for src in sources.values()}
    features = [
        c
        for c in train.columns
        if c in test.columns and c not in target_cols and c not in (id_col, train_id, test_id) and c not in file_cols
    ]
    if not any(is_datetime(train[c]) for c in features):  # a timestamp id is the rows' time: information, not a name
        features += [c for c in dict.fromkeys((test_id, id_col)) if _time_id(c, train, test)]
    if not features and not sources and "train" in tables and "test" in tables:
        raise CannotAnalyse(f"{tables['train'].name} shares no input column with {tables['test'].name}")
    both = pd.concat([train[features], test[features]], ignore_index=True)
    text_columns = [c for c in features if is_long_text(both[c])]
    features = [c for c in features if c not in text_columns]
    bool_features = [c for c in features if _is_boolish(both[c]) and both[c].dtype != bool]
    numbers_as_text = [c for c in features if c not in bool_features and numeric_text(both[c])]
    metric_name = _adjust_metric(metric, targets)
    for t in targets:
        t.log = t.kind == "regression" and metric_name in LOG_ERROR
    rel = lambda role: str(tables[role].relative_to(ws)) if role in tables else None  # noqa: E731
    metric_columns, official = [], None
    if metric_name == "bias_auc":  # the identity sub-groups the evaluation text names, as train-only columns
        train_only = [c for c in train.columns if c not in test.columns and c not in target_cols]
        metric_columns = shapes.columns_named_in(evaluation_text(ws), train_only)
        if not metric_columns:  # no sub-group to score: the metric's score of the target alone is what is optimised
            official, metric_name, metric_from = metric_name, TARGET_ALONE[metric_name], "proxy"
    scored_value = None
    others = train.drop(columns=[c for c in (*target_cols, id_col, train_id) if c in train.columns])
    if metric_name == "masked_mae":  # the two-valued column whose value the evaluation text says rows are scored at
        mask = shapes.scored_rows(evaluation_text(ws), others)
    else:  # any metric over the rows the text names in words, a 0/1 column the data section describes alike
        mask = None if metric_columns else shapes.described_scored_rows(_task_text(ws), others)
    if mask:
        metric_columns, scored_value = [mask[0]], mask[1]
    if train_table:  # revised last at its stages: their other decisions are tried on the first table first
        decisions.items.append(decisions.items.pop(0))
    return Analysis(
        rel("train"),
        rel("test"),
        rel("sample"),
        id_col,
        train_id,
        test_id,
        features,
        bool_features,
        targets,
        metric_name,
        metric_from,
        _task_type(targets),
        len(train),
        len(test),
        text_columns,
        sources,
        joins,
        numbers_as_text,
        columns.echo,
        metric_columns,
        scored_value,
        test_id_respelled=test_ids.evidence == RESPELLED,
        official_metric=official,
        test_renamed=renamed,
    )


def _train_table_options(raw: Path, tables: dict[str, Path]) -> list[Hypothesis]:
    """The train table and, where several tables are named train, the others (agentk.competition.tables ranks them
    by the sample's predicted columns and the test's columns they hold)."""
    ranked = find(raw).ranked.get("train", [])
    if "train" not in tables or len(ranked) < 2:
        return []
    evidence = dict(ranked)
    name = lambda p: p.relative_to(raw).as_posix()  # noqa: E731
    first = Hypothesis(name(tables["train"]), evidence.get(tables["train"], "the table the names and values chose"))
    return [first, *(Hypothesis(name(p), why) for p, why in ranked if p != tables["train"])]


STRONG = 2  # the evidence score of a stand-in named as a target or by the description, or holding the sample's values


def _stand_in_options(train: pd.DataFrame, candidates: list, sample_col: pd.Series, text: str) -> list[Hypothesis]:
    """The train-only columns that may hold the target the sample submits under another name, ranked by their
    evidence: the sample's values among theirs, named as a target, named by the description, numbers where the
    sample has numbers; on a tie, complete and varying columns first, then the later column (targets come last)."""
    submitted = {str(v) for v in sample_col.dropna().unique()}
    sample_numeric = bool(to_numeric(sample_col, errors="coerce").notna().all())
    scored = []
    for order, c in enumerate(candidates):
        col, why, score = train[c], [], 0
        values = {str(_py(v)) for v in col.dropna().unique()[:10_000]}
        if submitted and not sample_numeric and submitted <= values:
            score, why = score + 3, [*why, "holds the sample's values"]
        if shapes.TARGET_NAME.match(str(c)):
            score, why = score + 2, [*why, "named as a target"]
        if len(str(c)) > 2 and re.search(rf"\b{re.escape(str(c))}\b", text, re.I):
            score, why = score + 2, [*why, "named by the description"]
        if sample_numeric == bool(to_numeric(col, errors="coerce").notna().mean() > 0.9):
            score, why = score + 1, [*why, "numbers like the sample's" if sample_numeric else "text like the sample's"]
        tie = (col.notna().all(), col.nunique() > 1, order)
        scored.append(((score, *tie), Hypothesis(c, ", ".join(why) or "a column the test table lacks")))
    ranked = sorted(scored, key=lambda x: x[0], reverse=True)
    if len(ranked) == 1:
        return [ranked[0][1]]
    # of several, only a column with evidence beyond its type: guessing among look-alikes is no hypothesis
    strong = [h for key, h in ranked if key[0] >= STRONG]
    if not strong:
        raise CannotAnalyse(
            f"submission column {sample_col.name!r} is not in the train table, and of the columns the test table "
            f"lacks ({candidates[:8]}) none holds the sample's values or is named as a target or by the description"
        )
    return strong


def _time_id(c: str | None, train: pd.DataFrame, test: pd.DataFrame) -> bool:
    return c is not None and c in train.columns and c in test.columns and is_datetime(train[c]) and is_datetime(test[c])


def _as_written(table: pd.DataFrame, path: Path) -> pd.DataFrame:
    """`table` with its integer columns as the file writes them: an id 00042 names 00042.png, the number 42 does
    not (the maps read such a column as text too)."""
    ints = [c for c in table.columns if pd.api.types.is_integer_dtype(table[c])]
    if not ints:
        return table
    text = read_table(path, dtype=str)
    return table.assign(**{c: text[c].to_numpy() for c in ints if c in text.columns and len(text) == len(table)})


def _table_sources(
    files: dict[str, set[str]], table: pd.DataFrame, first: list[str], split: str, exclude: set[str]
) -> dict[str, FileSource]:
    """Per modality, the column of a split's table that names each sample's file."""
    out = {}
    for m, paths in files.items():
        src = column_source(m, table.drop(columns=[c for c in exclude if c in table.columns]), first, paths, split)
        if src:
            out[source_key(split, m)] = src
    return out


def _target(
    s: pd.Series, column: str, sub_cols: list[str], metric: Metric | None, sample_col: pd.Series, text: str = ""
) -> Target:
    shaped = _shaped_target(s, column, sub_cols, metric, sample_col, text)
    if shaped is not None:
        return shaped
    if not _classification(metric, s, sample_col):
        return Target(column, "regression", "value", sub_cols)
    if _is_boolish(s) and s.dtype != bool:
        s = s.astype(str).str.lower().map({"true": True, "false": False})
    classes = sorted(_py(v) for v in s.dropna().unique())
    if len(classes) == 1 and classes[0] in (0, False):  # a label no train row holds
        classes.append(True if isinstance(classes[0], bool) else 1)  # its 1 is still what is predicted
    submit = _submit_kind(metric, sample_col)
    if len(classes) <= 2:
        return Target(column, "binary", submit, sub_cols, classes, _positive(classes, column, text))
    return Target(
        column, "multiclass", "label" if submit == "proba" and len(sub_cols) == 1 else submit, sub_cols, classes
    )


def _shaped_target(
    s: pd.Series, column: str, sub_cols: list[str], metric: Metric | None, sample_col: pd.Series, text: str
) -> Target | None:
    """Targets whose shape the metric or the data name (agentk.policies.target_shapes), else None."""
    if len(sub_cols) == 1 and (k := shapes.ranking_k(s, metric, sample_col)):
        named = shapes.ranked_spelling(s, sample_col)
        classes = sorted({named.get(v, v) for v in (_py(v) for v in s.dropna().astype(str).unique())})
        return Target(column, "multiclass", "ranking", sub_cols, classes, k=k, named=named)
    if len(sub_cols) == 1 and (labels := shapes.label_set_shape(s, metric)):
        return Target(column, "multilabel", "label_set", sub_cols, labels)
    if (threshold := shapes.binarise_threshold(s, metric, text)) is not None:
        return Target(column, "binary", "proba", sub_cols, [0, 1], 1, threshold=threshold)
    if len(sub_cols) == 1 and (ratings := shapes.ordinal_ratings(s, metric)):  # a value cut into ratings
        return Target(column, "regression", "label", sub_cols, ratings)
    if shapes.continuous_for_ranking_metric(s, metric):
        return Target(column, "regression", "value", sub_cols)
    return None


def _label_columns(
    train: pd.DataFrame, test: pd.DataFrame, sub_cols: list[str], id_col: str
) -> list[tuple[str, dict[str, str], float]]:
    """The train-only columns whose values the submission's columns are the classes of, each with, where the columns
    name them with an affix ("class_0"), each value's column ({} when the names are the values), and the share of
    rows it labels; the most complete first, then in the table's order."""
    found = []
    for order, c in enumerate(train.columns):
        if c in test.columns or c == id_col:
            continue
        values = {str(_py(v)) for v in train[c].dropna().unique()}
        if not values or len(values) < 0.5 * len(sub_cols):
            continue
        if values <= set(sub_cols):
            found.append((train[c].notna().mean(), order, c, {}))
        elif named := class_columns(values, sub_cols):
            found.append((train[c].notna().mean(), order, c, named))
    return [(c, named, share) for share, _, c, named in sorted(found, key=lambda f: (-f[0], f[1]))]


# an F-score of label sets that the text does not say is averaged otherwise is the mean over rows ("mean F2" of
# each image's tags); the binary F-score cannot score sets
PER_ROW = {"f1": "f1_samples", "f2": "f2_samples"}


def _adjust_metric(metric: Metric | None, targets: list[Target]) -> str:
    multi = len(targets) > 1
    if metric is not None:
        name = metric.name
        if targets[0].submit == "label_set":
            name = PER_ROW.get(name, name)
        if multi and not metric.multi_target:
            name = COLUMNWISE.get(name, name)
        if targets[0].submit == "proba_columns" and name in ("log_loss", "mean_columnwise_log_loss"):
            name = "multi_log_loss"
        return name
    t = targets[0]
    if t.submit == "proba_columns":
        return "multi_log_loss"
    if t.submit == "label_set":
        return "f1_samples"
    if t.submit == "ranking":
        return min((n for n, m in METRICS.items() if m.prediction == "ranking"), key=lambda n: abs(_k(n) - t.k))
    if t.kind == "regression":
        return "mcrmse" if multi else "rmse"
    if t.submit == "proba":
        return "mean_columnwise_auc" if multi else "roc_auc"
    return "accuracy"


def _k(metric_name: str) -> int:
    return int(re.search(r"(\d+)$", metric_name).group(1))


def _task_type(targets: list[Target]) -> str:
    if len(targets) == 1:
        kinds = {"binary": "BinCls", "multiclass": "MultiCls", "regression": "Reg", "multilabel": "MultiTgtCls"}
        return kinds[targets[0].kind]
    cls = sum(t.kind != "regression" for t in targets)
    return "MultiTgtCls" if cls * 2 >= len(targets) else "MultiTgtReg"
