"""The test table's columns that train names otherwise: the same input under another spelling (id-01 for id_01),
or the one free-text column each side holds alone (content for comment_text). The analysis reads the test table
under train's names, and the checks compare train's and test's columns the same way."""

from __future__ import annotations

import pandas as pd

from agentk.competition.column_kinds import is_long_text
from agentk.competition.files import spelling


def respelled(train: pd.DataFrame, test: pd.DataFrame, sample_columns: set) -> dict[str, str]:
    """{test's name: train's} for the test columns train holds under another name: the same name up to case and
    punctuation, else the one free-text column each side holds alone (the same input: a text the test table has
    and train lacks cannot be learnt from). The sample's columns keep their names (ids, echoed inputs)."""
    train_only = [c for c in train.columns if c not in test.columns and c not in sample_columns]
    test_only = [c for c in test.columns if c not in train.columns and c not in sample_columns]
    by_spelling: dict[str, list] = {}
    for c in train_only:
        by_spelling.setdefault(spelling(c), []).append(c)
    renamed = {c: by_spelling[spelling(c)][0] for c in test_only if len(by_spelling.get(spelling(c), [])) == 1}
    taken = list(renamed.values())
    renamed = {c: t for c, t in renamed.items() if taken.count(t) == 1}  # two test spellings of one column: neither
    texts_train = [c for c in train_only if c not in renamed.values() and is_long_text(train[c])]
    texts_test = [c for c in test_only if c not in renamed and is_long_text(test[c])]
    if len(texts_train) == 1 and len(texts_test) == 1:
        renamed[texts_test[0]] = texts_train[0]
    return renamed
