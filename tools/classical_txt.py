"""The classical text candidate (tools/classical.py): TF-IDF of word unigrams and bigrams plus character 2-5-grams,
one vocabulary per text field (fields stay apart rather than one concatenated string), into a linear model; the
sparse matrix goes straight to scikit-learn, whose linear models take it as it is."""

from __future__ import annotations

import pandas as pd
from scipy import sparse
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression, Ridge

from agentk.modalities import TEXT
from tools.classical import Features
from tools.task_data import TaskData

MAX_WORDS, MAX_CHARS = 50_000, 100_000  # vocabulary sizes per field


def applies(task: TaskData) -> str | None:
    return None if TEXT.name in task.modalities else f"no {TEXT.name} input"


def features(task: TaskData, log=print) -> Features:
    train, test = task.train.inputs[TEXT.name], task.test.inputs[TEXT.name]
    blocks_train, blocks_test = [], []
    for c in train.columns:
        a, b = _cells(train[c]), _cells(test[c])
        for vec in (
            TfidfVectorizer(ngram_range=(1, 2), min_df=2, max_features=MAX_WORDS, sublinear_tf=True),
            TfidfVectorizer(
                analyzer="char_wb", ngram_range=(2, 5), min_df=2, max_features=MAX_CHARS, sublinear_tf=True
            ),
        ):
            try:  # the vocabulary comes from the texts alone, train and test (no targets)
                vec.fit(pd.concat([a, b]))
            except ValueError:  # no term in two documents: a field with nothing to learn from
                continue
            blocks_train.append(vec.transform(a))
            blocks_test.append(vec.transform(b))
    if not blocks_train:
        raise ValueError("the text inputs hold no term that appears in two rows: nothing for TF-IDF to use")
    X, X_test = sparse.hstack(blocks_train).tocsr(), sparse.hstack(blocks_test).tocsr()
    log(f"  TF-IDF: {X.shape[1]} terms over {len(train.columns)} text field(s)")
    return Features(
        X,
        X_test,
        f"TF-IDF word 1-2-grams and char 2-5-grams of each of the {len(train.columns)} text field(s)",
        {f"linear (C={c:g})": _linear(c) for c in (1.0, 10.0)},
        {"terms": int(X.shape[1])},
    )


def _cells(column: pd.Series) -> pd.Series:
    return column.fillna("").astype(str)


def _linear(c: float):
    def make(kind: str):
        if kind == "regression":
            return Ridge(alpha=1.0 / c)
        return LogisticRegression(C=c, max_iter=2000)

    return make
