"""Sample submissions of one row per (test sample, target) (agentk/competition/long_format.py): the composite ids
split into keys and targets, the long tables modelled wide, and every submission written back in the sample's own
rows. The fixtures are the "long submissions" family (testing/competitions/long_rows.py)."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pandas as pd
import pytest
from conftest import agentk

from agentk.competition.long_format import detect, split_ids, to_long, to_wide
from agentk.policies.analysis import analyse
from benchmarks.arena import grade
from stages.fetch import fetch_local
from testing.competitions import build
from tools.submission import SubmissionMismatch, compare_with_sample


def test_composite_ids_split_at_the_longest_target_name_whatever_its_parts():
    ids = pd.Series(["Test_0_root", "Test_0_grapheme_root", "Test_1_root", "Test_1_grapheme_root"])
    pairs = split_ids(ids, ["root", "grapheme_root"], "_")
    assert pairs.values.tolist() == [
        ["Test_0", "root"],
        ["Test_0", "grapheme_root"],
        ["Test_1", "root"],
        ["Test_1", "grapheme_root"],
    ]
    ids = pd.Series(["10003_age", "10003_domain1_var1", "10004_age", "10004_domain1_var1"])
    assert split_ids(ids, ["age", "domain1_var1"], "_")["key"].tolist() == ["10003", "10003", "10004", "10004"]
    assert split_ids(ids.iloc[:3], ["age", "domain1_var1"], "_") is None  # a key without one of the targets
    assert split_ids(ids, ["age"], "_") is None  # an id that ends in no target


def test_ordinary_samples_are_not_long():
    train = pd.DataFrame({"id": ["ID_1", "ID_2"], "x": [1, 2], "target": [0, 1]})
    test = pd.DataFrame({"id": ["ID_3", "ID_4", "ID_5", "ID_6"], "x": [1, 2, 3, 4]})
    assert detect(pd.DataFrame({"id": test["id"], "target": 0}), train, test) is None
    # ids of a store and an item form a grid, but the test table holds them as its rows' own ids, with inputs
    grid = [f"{s}_{i}" for s in (1, 2, 3) for i in (7, 8)]
    train = pd.DataFrame({"id": grid, "x": range(6), "sales": range(6)})
    test = pd.DataFrame({"id": grid, "x": range(6)})
    assert detect(pd.DataFrame({"id": grid, "sales": 0}), train, test) is None
    # time steps of breaths (id <breath>-<step>), a column naming the step: each row has readings of its own
    ids = [f"{b}-{t}" for b in range(4) for t in range(3)]
    steps = pd.DataFrame({"id": ids, "step": [t for b in range(4) for t in range(3)], "flow": range(12)})
    train, test = steps.iloc[:6].assign(pressure=range(6)), steps.iloc[6:]
    assert detect(pd.DataFrame({"id": test["id"], "pressure": 0}), train, test) is None
    # the same rows without readings of their own are one breath's targets
    assert detect(
        pd.DataFrame({"id": test["id"], "pressure": 0}), train.drop(columns="flow"), test.drop(columns="flow")
    )


def test_a_long_table_goes_wide_and_back_to_the_samples_own_rows_and_order():
    sample = pd.DataFrame(
        {"ID": [f"ID_{k}_{t}" for k in ("b7", "a3", "c1") for t in ("any", "bleed")], "Label": 0.5}
    ).iloc[[1, 0, 3, 2, 5, 4]]
    train = pd.DataFrame({"ID": [f"ID_{k}_{t}" for k in ("x", "y") for t in ("bleed", "any")], "Label": [1, 1, 0, 0]})
    rec = detect(sample, train, None)
    assert rec == {"id": "ID", "value": "Label", "sep": "_", "targets": ["bleed", "any"], "key": "ID", "train": "long"}
    wide = to_wide(train, rec, grid=False)
    assert wide.values.tolist() == [["ID_x", 1, 1], ["ID_y", 0, 0]]
    # a train table with a repeated row and a missing label: the first row counts, the missing label is empty
    odd = pd.concat([train, train.iloc[[0]].assign(Label=0)]).iloc[[0, 1, 2, 4]]
    assert detect(sample, odd, None) == rec
    assert to_wide(odd, rec, grid=False).fillna(-1).values.tolist() == [["ID_x", 1, 1], ["ID_y", 0, -1]]
    with pytest.raises(ValueError, match="every key with every target once"):
        to_wide(odd, rec)
    model = pd.DataFrame({"ID": ["ID_c1", "ID_a3", "ID_b7"], "bleed": [0.1, 0.2, 0.3], "any": [0.4, 0.5, 0.6]})
    back = to_long(model, rec, sample)
    assert back["ID"].tolist() == sample["ID"].tolist()
    assert dict(zip(back["ID"], back["Label"]))["ID_a3_any"] == 0.5
    assert dict(zip(back["ID"], back["Label"]))["ID_c1_bleed"] == 0.1


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("long")
    return lambda name: build(name, root) if not (root / name).exists() else root / name


@pytest.mark.parametrize(
    "name, tables, targets, metric",
    [
        ("measures-per-subject", {"train": "train_scores.csv", "test": "test.csv"}, 3, "mcrmse"),
        ("findings-per-scan", {"train": "stage_1_train_wide.csv"}, 4, "mean_columnwise_log_loss"),
        ("components-per-sample", {"train": "train.csv", "test": "test_wide.csv"}, 3, "mean_columnwise_auc"),
    ],
)
def test_a_long_sample_is_set_up_as_one_row_per_sample_with_a_column_per_target(
    folders, tmp_path, name, tables, targets, metric
):
    public = folders(name) / "public"
    before = {p.name: p.stat().st_mtime_ns for p in public.iterdir()}
    ws = tmp_path / "ws"
    ws.mkdir()
    fetch_local(public, ws)
    found = json.loads((ws / "task" / "meta.json").read_text())["tables"]
    assert found == {**tables, "sample": found["sample"]} and found["sample"].endswith("_wide.csv")
    a = analyse(ws)
    assert len(a.targets) == targets and a.metric == metric
    assert a.n_test * targets == len(pd.read_csv(next(public.glob("*sample_submission.csv"))))
    assert {p.name: p.stat().st_mtime_ns for p in public.iterdir()} == before  # the user's folder untouched


@pytest.mark.slow  # a full setup (35 s); benchmarks/solve.py --fixtures components-per-sample runs the family, the other tests here its pieces
def test_a_long_sample_competition_submits_in_the_samples_rows_and_beats_the_constant(folders, tmp_path):
    folder = folders("measures-per-subject")
    ws = tmp_path / "ws"
    r = agentk("setup", str(folder / "public"), "--workspace", str(ws))
    assert r.returncode == 0, r.stderr
    sample = pd.read_csv(folder / "public" / "sample_submission.csv", dtype=str)
    sub = pd.read_csv(ws / "submission.csv", dtype={"Id": str})
    assert sub["Id"].tolist() == sample["Id"].tolist() and sub["Predicted"].notna().all()
    answers = pd.read_csv(folder / "private" / "answers.csv", dtype={"Id": str})
    score = grade(ws / "submission.csv", folder / "private" / "answers.csv", "rmse")
    train = pd.read_csv(folder / "public" / "train_scores.csv")
    means = answers["Id"].str.split("_", n=1).str[1].map(train.drop(columns="Id").mean())
    constant = float(np.sqrt(np.mean((answers["Predicted"] - means) ** 2)))
    assert score < 0.9 * constant, (score, constant)
    compare_with_sample(ws, sub, "submission.csv")  # `agentk submit` and the report check the long file so
    with pytest.raises(SubmissionMismatch, match="every key with every target once"):
        compare_with_sample(ws, sub.iloc[1:], "submission.csv")
    with pytest.raises(SubmissionMismatch, match="missing values"):
        compare_with_sample(ws, sub.assign(Predicted=sub["Predicted"].where(sub.index != 4)), "submission.csv")
    r = agentk("report", "--workspace", str(ws))
    assert r.returncode == 0, r.stderr
    html = (ws / "report.html").read_text()
    assert "matches the sample submission" in html
    assert html.count(sample["Id"].iloc[0]) >= 2  # the long sample shown beside the submission, not its wide form
    shutil.rmtree(ws)
