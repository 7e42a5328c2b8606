"""Text targets that rewrite an input (agentk.competition.rewrites): which targets are rewrites, their candidates and
ranks, the tables fetch writes, submissions back to text, and a full setup of the "rewrites" fixtures against the
memorising lookup a user would write."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from agentk.competition import rewrites
from agentk.competition.task_kinds import unsupported_task
from agentk.workspace import Workspace
from stages.fetch import fetch_local
from testing.competitions import build, registry
from tools.submission import SubmissionMismatch, as_modelled, as_submitted, compare_with_sample

FIXTURES = sorted(n for n, fx in registry().items() if fx.family == "rewrites")


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    dest = tmp_path_factory.mktemp("fixtures")
    for name in FIXTURES:
        build(name, dest)
    return dest


def _public(built: Path, name: str) -> dict[str, pd.DataFrame]:
    meta = json.loads((built / name / "meta.json").read_text())
    sample = built / name / meta["sample_submission"]
    tables = {p.stem: p for p in sample.parent.glob("*.csv")}
    train = next(p for s, p in tables.items() if "train" in s)
    test = next(p for s, p in tables.items() if "test" in s)
    read = lambda p: pd.read_csv(p, dtype=str, keep_default_na=False)  # noqa: E731
    return {
        "train": read(train),
        "test": read(test),
        "sample": read(sample),
        "answers": read(built / name / meta["answers"]),
    }


def _lookup_accuracy(t: dict[str, pd.DataFrame], source: str, target: str) -> float:
    """What a user writes first: each value's most frequent train rewrite, the value itself when train lacks it."""
    mode = t["train"].groupby(source)[target].agg(lambda s: s.value_counts().index[0])
    key = t["sample"].columns[0]
    test = t["test"] if key in t["test"].columns else t["test"].assign(**{key: t["sample"][key].to_numpy()})
    rows = t["answers"].merge(test, on=key)
    return float((rows[source].map(mode).fillna(rows[source]) == rows[target]).mean())


def test_candidates_copy_first_then_rewrites_by_frequency():
    train = pd.DataFrame(
        {
            "x": ["1", "1", "1", "1", "1", "a", "a", "b", "c"],
            "y": ["one", "one", "first", "1", "won", "a", "a", "B", "c"],
        }
    )
    rec = {"source": "x", "target": "y"}
    cands = rewrites.candidates(train, rec)
    assert cands == {"1": ["1", "one", "first", "won"], "b": ["b", "B"]}  # first and won tie: by text
    assert list(rewrites.ranks(train["x"], train["y"], cands)) == [1, 1, 2, 0, 3, 0, 0, 1, 0]
    many = pd.DataFrame({"x": ["n"] * 5, "y": ["p", "p", "q", "r", "s"]})
    assert rewrites.candidates(many, rec)["n"] == ["n", "p", "q", "r"]  # at most MAX_CANDIDATES rewrites
    assert list(rewrites.ranks(many["x"], many["y"], rewrites.candidates(many, rec))) == [1, 1, 2, 3, 1]
    stats = rewrites.value_stats(train, rec)
    beside = rewrites.with_context(pd.DataFrame({"x": ["1", "zzz", "a"]}), "x", stats)
    assert list(beside["x_previous"]) == ["", "1", "zzz"] and list(beside["x_next"]) == ["zzz", "a", ""]
    assert list(beside["x_copied"].fillna(-1)) == [0.2, -1, 1.0] and list(beside["x_in_train"]) == [5, 0, 2]


def test_a_rewrite_copies_its_input_and_is_no_category_carried_over():
    x = pd.Series([f"w{i % 40}" for i in range(400)])
    spoken = pd.Series([v if i % 3 else f"say {v}" for i, v in enumerate(x)])  # new texts where it changes
    assert rewrites.rewrite_share(spoken, x) == pytest.approx(2 / 3, abs=0.01)
    states = pd.Series(["on", "off", "idle"] * 40)
    nxt = states.shift(-1).fillna("on")  # the next state: a class among the input's own values
    assert rewrites.rewrite_share(nxt, states) == 0.0
    words = pd.Series([f"word{i}" for i in range(300)] * 2)
    fixed = words.where(np.arange(600) % 2 == 0, words.shift(1).fillna("word0"))  # other rows' words, 300 texts
    assert rewrites.rewrite_share(fixed, words) > 0.3  # more distinct texts than classes: a correction
    assert rewrites.rewrite_share(pd.Series(range(50)).astype(str), pd.Series(range(50))) == 0.0  # numbers


def test_sample_rows_find_their_test_rows_by_id_or_position():
    test = pd.DataFrame({"key": ["c", "a", "b"], "x": ["3", "1", "2"]})
    by_id = rewrites.source_rows(pd.DataFrame({"key": ["a", "b", "c"], "y": 0}), "key", test)
    assert list(test["x"].iloc[by_id]) == ["1", "2", "3"]
    composite = pd.DataFrame({"id": ["0_0", "0_1", "1_0"], "y": 0})  # ids no test column holds: in order
    assert list(rewrites.source_rows(composite, "id", test)) == [0, 1, 2]
    assert rewrites.source_rows(composite.iloc[:2], "id", test) is None


def test_a_rewrite_whose_sample_rows_match_no_test_rows_is_refused(tmp_path):
    train = pd.DataFrame({"w": [f"t{i % 30}" for i in range(300)]})
    train["out"] = [v if i % 2 else f"{v} spoken" for i, v in enumerate(train["w"])]
    train.to_csv(tmp_path / "train.csv", index=False)
    pd.DataFrame({"w": ["t1", "t2", "t3"]}).to_csv(tmp_path / "test.csv", index=False)
    pd.DataFrame({"id": ["9_1", "9_2"], "out": ["a", "b"]}).to_csv(tmp_path / "sample_submission.csv", index=False)
    reason = unsupported_task(tmp_path)
    assert reason.startswith("unsupported task: text generation / sequence-to-sequence (the submission column 'out'")
    assert "no test table lists the sample's rows" in reason
    pd.DataFrame({"id": ["9_1", "9_2", "9_3"], "out": "a"}).to_csv(tmp_path / "sample_submission.csv", index=False)
    assert unsupported_task(tmp_path) is None  # as many rows as the test: the sample lists them in order


@pytest.mark.parametrize("name", FIXTURES)
def test_fetch_ranks_the_target_and_submissions_go_back_to_text(built, tmp_path, name):
    ws = tmp_path / "ws"
    fetch_local(built / name / "public", ws)
    raw = Workspace(ws).raw
    rec = rewrites.record(raw)
    t = _public(built, name)
    assert rec is not None and rec["target"] in t["sample"].columns and rec["source"] in t["test"].columns
    ranked = pd.read_csv(next(raw.glob("*train*_ranked.csv")))
    assert set(ranked[rec["target"]]) >= {0, 1} and ranked[rec["target"]].between(0, rewrites.MAX_CANDIDATES).all()
    # rank 0 is a copy, rank 1 train's most frequent other text of the value
    copied = t["train"][rec["target"]] == t["train"][rec["source"]]
    assert (ranked[rec["target"]] == 0).to_numpy().tolist() == copied.tolist()
    sample = t["sample"]
    key = sample.columns[0]
    ranks = np.resize([0, 1, 2], len(sample))
    text = as_submitted(raw, pd.DataFrame({key: sample[key], rec["target"]: ranks}))
    table = pd.read_csv(raw / rewrites.CANDIDATES, dtype=str, keep_default_na=False).set_index("id")
    for i in range(0, len(sample), max(1, len(sample) // 50)):
        row = table.loc[sample[key].iloc[i]]
        want = row.iloc[ranks[i]] or row.iloc[0]  # a rank past the value's candidates: the copy
        assert text[rec["target"]].iloc[i] == want
    assert not pd.api.types.is_numeric_dtype(text[rec["target"]])
    compare_with_sample(ws, text, "the text submission")  # what `agentk submit` and the report check
    back = as_modelled(raw, text)
    assert (back[rec["target"]] >= 0).all()
    with pytest.raises(SubmissionMismatch, match="sample ids missing"):
        compare_with_sample(ws, text.iloc[1:], "a short one")


@pytest.mark.slow  # a full setup (35 s); benchmarks/solve.py --fixtures rewrite-tokens runs it, the other tests here its pieces
def test_full_setup_of_token_rewrites_beats_the_lookup(built, tmp_path):
    """The light solve chooses by the context (a year after "in", a cardinal elsewhere) where the lookup takes each
    value's most frequent reading: more test tokens right, in the sample's rows and as text."""
    from agentk.api import run_setup

    result = run_setup(built / "rewrite-tokens" / "public", tmp_path / "ws", "expert")
    assert result.state.status == "done"
    t = _public(built, "rewrite-tokens")
    sub = pd.read_csv(Workspace(result.workspace).submission, dtype=str, keep_default_na=False)
    assert list(sub.columns) == list(t["sample"].columns) and list(sub["id"]) == list(t["sample"]["id"])
    got = float((t["answers"].merge(sub, on="id", suffixes=("", "_p")).eval("after == after_p")).mean())
    lookup = _lookup_accuracy(t, "before", "after")
    copy = float((t["answers"]["after"] == t["test"]["before"]).mean())
    assert copy < 0.85 < lookup < got, (copy, lookup, got)
