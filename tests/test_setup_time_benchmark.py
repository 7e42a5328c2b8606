"""benchmarks/setup_time.py's comparison of two setups' outputs: the maps and the submission that differ, or that
only one of the two workspaces holds, are named; everything else in a workspace is not compared."""

from __future__ import annotations

from benchmarks.setup_time import outputs_differ, table


def test_outputs_differ_names_the_maps_and_submission_that_are_not_the_same(tmp_path):
    before, after = tmp_path / "before", tmp_path / "after"
    for ws in (before, after):
        ws.mkdir()
        (ws / "train_tab_input_map.csv").write_text("id,x\n1,2\n")
        (ws / "submission.csv").write_text("id,y\n1,0\n")
        (ws / "setup.json").write_text(f'{{"seconds": {len(ws.name)}}}')  # not an output a solve reads
    assert outputs_differ(before, after) == []
    (after / "train_tab_target_map.csv").write_text("id,y\n1,1\n")
    (after / "submission.csv").write_text("id,y\n1,1\n")
    assert outputs_differ(before, after) == ["submission.csv", "train_tab_target_map.csv"]
    row = {"seconds": 1.0, "cpu": 1.0, "status": "done"}
    lines = table({"a": {"before": row, "after": row, "differ": ["submission.csv"]}}).splitlines()
    assert lines[2].endswith("| differ: submission.csv |")
