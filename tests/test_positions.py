"""Per-position targets (agentk/competition/positions.py): JSON records of sequences whose targets are number lists,
one value per position, written one row per position when the sample asks for `<id>_<position>` rows; refused,
naming them, when it does not."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from agentk.competition import positions
from agentk.competition.readers import read_table
from agentk.competition.task_kinds import unsupported_task
from agentk.policies.analysis import analyse
from stages.fetch import fetch_local
from testing.competitions import build


def records(n: int, labelled: bool, rng) -> pd.DataFrame:
    rows = []
    for i in range(n):
        seq = "".join(rng.choice(list("ACGU"), 12))
        rec = {"id": f"r{i}", "sequence": seq, "structure": "((....))...." if i % 2 else "....((...)).", "snr": i}
        if labelled:
            rec["reactivity"] = list(rng.random(8 if i else 6).round(3))  # the first record's list is shorter
            rec["deg"] = list(rng.random(8).round(3))
        rows.append(rec)
    return pd.DataFrame(rows)


def test_records_become_one_row_per_position_with_a_window_of_characters():
    rng = np.random.default_rng(0)
    train, test = records(3, True, rng), records(2, False, rng)
    sample = pd.DataFrame({"id_seqpos": [f"r{i}_{p}" for i in range(2) for p in range(12)], "reactivity": 0, "deg": 0})
    rec = positions.detect(train, test, sample)
    assert rec == {
        "id": "id",
        "key": "id_seqpos",
        "sep": "_",
        "sequences": ["sequence", "structure"],
        "lists": ["reactivity", "deg"],
    }
    rows = positions.as_rows(train, rec, labelled=True)
    assert len(rows) == 3 * 8  # the positions the lists cover
    first = rows[rows["id"] == "r0"]
    assert first["id_seqpos"].tolist()[:2] == ["r0_0", "r0_1"] and first["position"].tolist() == list(range(8))
    assert first["reactivity"].isna().tolist() == [False] * 6 + [True] * 2  # a shorter list: the rest missing
    assert first["deg"].tolist() == pytest.approx(train["deg"][0])
    seq = train["sequence"][0]
    at0 = first.iloc[0]
    assert (at0["sequence"], at0["sequence_next1"], at0["sequence_prev1"], at0["sequence_prev3"]) == (
        seq[0],
        seq[1],
        positions.PAD,
        positions.PAD,
    )
    assert first.iloc[5]["sequence_prev3"] == seq[2] and first.iloc[5]["structure_next2"] == train["structure"][0][7]
    assert (first["length"] == 12).all() and first["from_end"].tolist()[0] == 11 and (first["snr"] == 0).all()
    test_rows = positions.as_rows(test, rec, labelled=False)
    assert len(test_rows) == 2 * 12 and "reactivity" not in test_rows
    assert test_rows["id_seqpos"].tolist() == sample["id_seqpos"].tolist()


def test_a_sample_of_one_row_per_record_is_not_positions_and_is_refused(tmp_path):
    rng = np.random.default_rng(1)
    train, test = records(3, True, rng), records(2, False, rng)
    per_record = pd.DataFrame({"id": ["r0", "r1"], "reactivity": 0, "deg": 0})
    assert positions.detect(train, test, per_record) is None
    for name, frame in (("train.json", train), ("test.json", test)):
        with open(tmp_path / name, "w") as f:  # JSON lines under a .json name
            f.writelines(json.dumps(r) + "\n" for r in frame.to_dict("records"))
    per_record.to_csv(tmp_path / "sample_submission.csv", index=False)
    reason = unsupported_task(tmp_path)
    assert reason.startswith("unsupported task: per-position sequence outputs (train.json: reactivity, deg")
    assert isinstance(read_table(tmp_path / "train.json", nested=True)["deg"][0], list)
    sample = pd.DataFrame({"id_seqpos": [f"r{i}_{p}" for i in range(2) for p in range(12)], "reactivity": 0, "deg": 0})
    sample.to_csv(tmp_path / "sample_submission.csv", index=False)
    assert unsupported_task(tmp_path) is None


def test_the_fixture_sets_up_as_a_table_of_positions_grouped_by_record(tmp_path):
    folder = build("positions-per-sequence", tmp_path / "fixtures")
    ws = tmp_path / "ws"
    ws.mkdir()
    fetch_local(folder / "public", ws)
    stand_ins = json.loads((ws / "raw" / "stand_ins.json").read_text())
    assert stand_ins == {"train.json": "train_positions.csv", "test.json": "test_positions.csv"}
    a = analyse(ws)
    assert [t.column for t in a.targets] == ["reactivity", "deg_Mg_pH10"] and a.id_col == "id_seqpos"
    assert {"sequence", "structure_prev1", "predicted_loop_type_next3", "position", "from_end"} <= set(a.features)
    assert "signal_to_noise" not in a.features  # train-only
    test = pd.read_csv(ws / "raw" / "test_positions.csv")
    sample = pd.read_csv(ws / "raw" / "sample_submission.csv")
    assert test["id_seqpos"].tolist() == sample["id_seqpos"].tolist()
    from tools.task_data import group_column

    train = pd.read_csv(ws / "raw" / "train_positions.csv")
    assert group_column(train, test) == "id"  # a record's positions are validated together
