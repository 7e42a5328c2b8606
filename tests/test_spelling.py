"""The test table's columns that train names otherwise (agentk.competition.spelling)."""

from __future__ import annotations

import pandas as pd

from agentk.competition.files import spelling
from agentk.competition.spelling import respelled

TEXTS = [f"comment number {i} says something long enough to be free text, {i} times over" for i in range(20)]


def test_a_column_spelled_with_other_case_and_punctuation_is_train_s():
    train = pd.DataFrame({"TransactionID": range(20), "id_01": range(20), "DeviceType": ["a"] * 20, "isFraud": 0})
    test = pd.DataFrame({"TransactionID": range(20), "id-01": range(20), "devicetype": ["a"] * 20})
    assert spelling("id-01") == spelling("ID_01") == "id01"
    assert spelling("G_RÖSSECOUNT") == spelling("GrößeCount")  # an upper-case ß is SS
    assert respelled(train, test, {"TransactionID", "isFraud"}) == {"id-01": "id_01", "devicetype": "DeviceType"}


def test_the_one_free_text_column_each_side_holds_alone_is_one_input():
    train = pd.DataFrame({"id": range(20), "comment_text": TEXTS, "toxic": [0, 1] * 10})
    test = pd.DataFrame({"id": range(20), "content": TEXTS[::-1], "lang": ["tr", "es"] * 10})
    assert respelled(train, test, {"id", "toxic"}) == {"content": "comment_text"}
    # two free texts on one side: which is which is not sure, and none is renamed
    two = train.assign(title=TEXTS)
    assert respelled(two, test, {"id", "toxic"}) == {}


def test_the_sample_s_columns_and_ambiguous_spellings_keep_their_names():
    train = pd.DataFrame({"Id": range(3), "a_b": 1, "A-B": 2, "x": 3})
    test = pd.DataFrame({"ID": range(3), "ab": 1, "X_": 3})
    # ID is the sample's id column: kept; ab is spelled as two train columns: not sure
    assert respelled(train, test, {"ID", "target"}) == {"X_": "x"}
