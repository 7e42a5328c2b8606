"""JSON tables in every orientation (issue 47, the data graph's nodes): each reads as the same table, and fetch's
normalising writes a CSV for those pandas' read_json misreads, which generated code then reads."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from agentk.competition.json_tables import read_json_table
from agentk.competition.normalise.json_as_csv import json_as_csv
from agentk.competition.readers import read_table
from agentk.competition.written import stand_ins

FRAME = pd.DataFrame({"uid": ["a1", "b2", "c3", "d4"], "x": [1.5, 2.5, 3.5, 4.5], "cat": ["u", "v", "u", "w"]})


def _write(path, how: str) -> None:
    if how in ("records", "columns", "split", "table", "values"):
        FRAME.to_json(path, orient=how, **({"index": False} if how in ("split", "table") else {}))
    elif how == "index":  # rows keyed by their id
        FRAME.set_index("uid").to_json(path, orient="index")
    elif how == "numbered":  # pandas' orient="index": rows keyed by their number
        FRAME.to_json(path, orient="index")
    elif how == "lines":
        FRAME.to_json(path, orient="records", lines=True)
    elif how == "nested":
        path.write_text(json.dumps({"version": 3, "data": {"rows": FRAME.to_dict(orient="records")}}))


@pytest.mark.parametrize("how", ["records", "columns", "split", "table", "index", "numbered", "lines", "nested"])
def test_every_orientation_reads_as_the_same_table(tmp_path, how):
    path = tmp_path / "t.json"
    _write(path, how)
    table = read_table(path)
    if how == "index":  # the key's name is not in the file
        assert list(table.columns) == ["id", "x", "cat"]
        table = table.rename(columns={"id": "uid"})
    pd.testing.assert_frame_equal(table.reset_index(drop=True), FRAME, check_dtype=False)


def test_a_mapping_and_a_header_row_and_what_is_no_table(tmp_path):
    mapping = tmp_path / "m.json"
    mapping.write_text(json.dumps({"img_1": "cat", "img_2": "dog"}))
    assert read_json_table(mapping)[0].to_dict(orient="list") == {"key": ["img_1", "img_2"], "value": ["cat", "dog"]}
    header = tmp_path / "h.json"
    header.write_text(json.dumps([["uid", "x"], ["a", 1], ["b", 2]]))
    assert list(read_json_table(header)[0].columns) == ["uid", "x"]
    for text in ("3", "{}", "[" * 5000 + "]" * 5000):
        (tmp_path / "bad.json").write_text(text)
        with pytest.raises(ValueError):
            read_json_table(tmp_path / "bad.json")


def test_normalising_writes_a_csv_where_pandas_would_misread(tmp_path):
    for how in ("records", "index", "nested", "lines"):
        _write(tmp_path / f"{how}.json", how)
    done = json_as_csv(tmp_path)
    # records read as they are; JSON lines (sequences' records) go to their own conversions
    assert sorted(stand_ins(tmp_path)) == ["index.json", "nested.json"]
    assert len(done) == 2 and not (tmp_path / "records.csv").exists() and not (tmp_path / "lines.csv").exists()
    assert json_as_csv(tmp_path) == []  # stand_ins.json, which normalise writes, is no table of the competition
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "nested.csv"), FRAME)


def test_a_table_of_thousands_of_empty_columns_gets_a_stand_in_without_them(tmp_path):
    """A trailing run of separators (1,200 empty columns): fetch's normalising writes the table without them, and
    table discovery reads that one from then on."""
    from agentk.competition.normalise.empty_columns_dropped import empty_columns_dropped
    from agentk.competition.tables import find

    header = ",".join(["uid", "x", *[""] * 1200])
    rows = [",".join([f"r{i}", str(i), *[""] * 1200]) for i in range(5)]
    (tmp_path / "train.csv").write_text("\n".join([header, *rows]) + "\n")
    (tmp_path / "test.csv").write_text("uid,x\nt0,1\nt1,2\n")
    (tmp_path / "sample_submission.csv").write_text("uid,y\nt0,0\nt1,0\n")
    assert empty_columns_dropped(tmp_path) == ["train_columns.csv: train.csv without its 1200 empty columns"]
    assert find(tmp_path).paths["train"].name == "train_columns.csv"
    assert list(pd.read_csv(tmp_path / "train_columns.csv").columns) == ["uid", "x"]
    assert empty_columns_dropped(tmp_path) == []  # once


def test_json_records_keep_each_value_as_its_json_type(tmp_path):
    """Zero-padded ids written as JSON strings stay text ("00012", not 12), in the analysis's reading and in the
    generated code's; JSON numbers stay numbers."""
    import json

    from agentk.competition.readers import read_table
    from stages.codegen import read_expr

    rows = [{"id": f"{i:05d}", "x": i * 1.5, "n": i} for i in range(1, 6)]
    (tmp_path / "records.json").write_text(json.dumps(rows))
    (tmp_path / "lines.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    for name in ("records.json", "lines.jsonl"):
        frame = read_table(tmp_path / name)
        generated = eval(read_expr(str(tmp_path / name)), {"pd": pd, "nested_as_text": lambda df: df})  # noqa: S307
        for df in (frame, generated):
            assert df["id"].tolist() == ["00001", "00002", "00003", "00004", "00005"]
            assert df["n"].tolist() == [1, 2, 3, 4, 5] and df["x"].iloc[1] == 3.0
