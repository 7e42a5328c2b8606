"""The classical text candidate (tools/classical.py): TF-IDF of word unigrams and bigrams plus character 2-5-grams,
one vocabulary per text field (fields stay apart rather than one concatenated string), into linear models. With
two fields or more, also dense features (tools/text_pairs.py: each field's length and word statistics, how alike
each pair of fields is, an SVD of the TF-IDF) into a linear model beside the TF-IDF and into gradient boosting alone:
whether two texts say the same thing is not a linear function of either text's terms."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
from scipy import sparse
from sklearn.decomposition import TruncatedSVD
from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.preprocessing import StandardScaler

from agentk.modalities import TABULAR, TEXT
from tools.classical import Features, on_columns
from tools.features import with_keys
from tools.tabular import standardised
from tools.task_data import TaskData
from tools.text_pairs import embed, field_stats, pair_features

MAX_WORDS, MAX_CHARS = 50_000, 100_000  # vocabulary sizes per field
SVD_COMPONENTS = 64  # of the TF-IDF, for gradient boosting
# the linear models' inverse regularisation, chosen by cross-validation; 0.3 joined the grid of 1 and 10 when 100,000
# short reviews of weighted words (benchmarks/scale.py) scored a test AUC of 0.7977 at 0.3, 0.7946 at 1 and 0.7596
# at 10 (plain TF-IDF of words and pairs with a default logistic regression: 0.7997). Char n-grams can dilute
# texts whose signal is in whole words, so linear models on the words' TF-IDF alone compete too (WORDS_C): on those
# reviews they scored 0.8005 at C=0.3 and 0.7969 at 1.
LINEAR_C = (0.3, 1.0, 10.0)
WORDS_C = (0.3, 1.0)
# the texts with the table beside them: more columns, more penalty (mercari's stand-in, validation RMSLE 0.465 at
# C=1, 0.434 at 0.3, 0.427 at 0.1, 0.448 at 0.03)
TABLE_C = (0.1, 0.3, 1.0)
MAX_PAIRED_FIELDS = 6  # pairs grow quadratically: the first fields only
# a column of phrases whose distinct values are more than this share of its rows (fewer than ~3 rows per value: a
# product's name, not a category) is read by its words alone: its exact values' levels repeat what the words say and
# let the model learn their few rows' noise. Mercari's stand-in (names 56 % distinct): validation RMSLE 0.434 -> 0.428
# at C=0.3, 0.427 -> 0.425 at 0.1; its names' levels of 10 rows or more alone still 0.430 at 0.3
DISTINCT_PHRASES = 0.3


def applies(task: TaskData) -> str | None:
    return None if TEXT.name in task.modalities else f"no {TEXT.name} input"


def features(task: TaskData, log=print) -> Features:
    train, test = task.train.inputs[TEXT.name], task.test.inputs[TEXT.name]
    n_train = len(train)
    fields = {c: pd.concat([_cells(train[c]), _cells(test[c])], ignore_index=True) for c in train.columns}
    tfidf, words = _tfidf(fields)
    if tfidf is None:
        raise ValueError("the text inputs hold no term that appears in two rows: nothing for TF-IDF to use")
    paired = list(fields)[:MAX_PAIRED_FIELDS]
    k = tfidf.shape[1]
    models = {f"linear (C={c:g})": _linear(c, slice(0, k)) for c in LINEAR_C}
    models |= {f"linear (C={c:g}) on the words alone": _linear(c, words) for c in WORDS_C}
    what = f"TF-IDF word 1-2-grams and char 2-5-grams of each of the {len(fields)} text field(s)"
    blocks, details = [tfidf], {"terms": k, "paired_fields": []}
    if len(paired) < 2:  # one text: the TF-IDF linear models as they are
        log(f"  TF-IDF: {k} terms over {len(fields)} text field")
    else:
        dense = _dense(fields, paired, tfidf)
        blocks.append(sparse.csr_matrix(dense))
        n_pairs = len(paired) * (len(paired) - 1) // 2
        log(f"  TF-IDF: {k} terms over {len(fields)} text fields; {dense.shape[1]} dense features ({n_pairs} pair(s))")
        models["linear (C=10) with the dense features"] = _linear(10.0, slice(0, k + dense.shape[1]))
        models["gradient boosting on the dense features"] = _boosting(slice(k, k + dense.shape[1]))
        what += f", their statistics, the pair similarities of {len(paired)} fields and a TF-IDF SVD"
        details |= {"dense_features": int(dense.shape[1]), "paired_fields": paired}
    if TABULAR.name in task.modalities:  # the table beside the texts, in one linear model with them
        table, described = _table(*with_keys(task, replacing=True))
        if table.shape[1]:
            width = sum(b.shape[1] for b in blocks)
            beside = np.r_[np.arange(k), np.arange(width, width + table.shape[1])]
            blocks.append(table)
            models |= {f"linear (C={c:g}) with the table": _linear(c, beside) for c in TABLE_C}
            log(f"  the table beside the texts: {described} ({table.shape[1]} columns)")
            what += f"; beside them, the table's {described}"
            details["table_columns"] = int(table.shape[1])
    X = sparse.hstack(blocks).tocsr()
    return Features(X[:n_train], X[n_train:], what, models, details)


def _table(train: pd.DataFrame, test: pd.DataFrame):
    """The tab inputs as sparse columns for a linear model beside the TF-IDF: numbers standardised, each string
    column's values one-hot (those in two rows or more) and, where its values are phrases (two words or more on
    average: a product's name), its word 1-2-grams' TF-IDF, without the one-hot where the phrases are mostly distinct
    (DISTINCT_PHRASES). On a table of listings whose description says little (mercari's stand-in: RMSLE 0.87 on the
    description, the constant 0.58) the name, brand and category carry the price, and a per-competition ridge
    regression on them all is the bar (tools/tabular.standardised)."""
    frame = pd.concat([train, test], ignore_index=True)
    rows = np.arange(len(train))
    blocks, numbers, categories, phrases = [], 0, 0, 0
    for column in frame.columns:
        s = frame[column]
        if s.dtype == bool or pd.api.types.is_numeric_dtype(s):
            blocks += [sparse.csr_matrix(b[:, None]) for b in standardised(s.astype(float).to_numpy(), rows)]
            numbers += 1
            continue
        text = _cells(s)
        levels = text.map(text.value_counts())
        wordy = text.str.split().str.len().mean() >= 2
        if (levels >= 2).any() and not (wordy and text.nunique() > DISTINCT_PHRASES * len(text)):
            codes = pd.Categorical(text.where(levels >= 2, "")).codes  # a value in one row: no level of its own
            blocks.append(sparse.csr_matrix((np.ones(len(codes)), (np.arange(len(codes)), codes))))
            categories += 1
        if wordy:
            try:
                blocks.append(
                    TfidfVectorizer(
                        ngram_range=(1, 2), min_df=2, max_features=MAX_WORDS, sublinear_tf=True
                    ).fit_transform(text)
                )
                phrases += 1
            except ValueError:  # no word in two rows
                pass
    if not blocks:
        return sparse.csr_matrix((len(frame), 0)), ""
    described = f"{numbers} standardised numbers, {categories} one-hot columns and {phrases} phrase columns' TF-IDF"
    return sparse.hstack(blocks).tocsr(), described


def _dense(fields: dict[str, pd.Series], paired: list[str], tfidf) -> np.ndarray:
    """Each field's statistics, each pair's similarities and an SVD of the TF-IDF, standardised (on the texts
    alone, train and test: no targets)."""
    blocks = [field_stats(texts)[0] for texts in fields.values()]
    embeddings = {c: embed(fields[c]) for c in paired}
    for a, b in itertools.combinations(paired, 2):
        blocks.append(pair_features(fields[a], fields[b], embeddings[a], embeddings[b])[0])
    k = min(SVD_COMPONENTS, min(tfidf.shape) - 1)
    if k >= 2:
        blocks.append(TruncatedSVD(k, random_state=0).fit_transform(tfidf))
    return StandardScaler().fit_transform(np.column_stack(blocks))


def _tfidf(fields: dict[str, pd.Series]):
    """Each field's word and char TF-IDF (vocabularies from the texts alone, train and test; no targets), side by
    side, and the positions of the word terms' columns; (None, None) when no field has a term in two rows."""
    blocks, words, width = [], [], 0
    for texts in fields.values():
        for analyzer, vec in (
            ("word", TfidfVectorizer(ngram_range=(1, 2), min_df=2, max_features=MAX_WORDS, sublinear_tf=True)),
            (
                "char",
                TfidfVectorizer(
                    analyzer="char_wb", ngram_range=(2, 5), min_df=2, max_features=MAX_CHARS, sublinear_tf=True
                ),
            ),
        ):
            try:
                block = vec.fit_transform(texts)
            except ValueError:  # no term in two documents: a field with nothing to learn from
                continue
            if analyzer == "word":
                words.append(np.arange(width, width + block.shape[1]))
            blocks.append(block)
            width += block.shape[1]
    if not blocks:
        return None, None
    return sparse.hstack(blocks).tocsr(), np.concatenate(words) if words else np.arange(width)


def _cells(column: pd.Series) -> pd.Series:
    return column.fillna("").astype(str)


def _linear(c: float, columns: slice | np.ndarray):
    """Ridge or logistic regression on the given columns."""

    def make(kind: str):
        model = Ridge(alpha=1.0 / c) if kind == "regression" else LogisticRegression(C=c, max_iter=2000)
        return on_columns(model, columns)

    return make


def _boosting(columns: slice):
    """Gradient boosting on the given (dense) columns, early-stopped on a held-out tenth of its rows."""

    def make(kind: str):
        cls = HistGradientBoostingRegressor if kind == "regression" else HistGradientBoostingClassifier
        model = cls(learning_rate=0.1, max_iter=200, max_leaf_nodes=15, early_stopping=True, random_state=0)
        return on_columns(model, columns, dense=True)

    return make
