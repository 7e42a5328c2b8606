"""benchmarks/kaggle_layouts.py's pure helpers: the normalised score either way a metric goes, the refusal of an
unsupported task, grade.py's output line, and the tables built from small made-up records, agentk beside the zoo2 quick models among them."""

from __future__ import annotations

import pytest

from benchmarks.kaggle_layouts import (
    add_normalised,
    comp_rows,
    failures,
    grade_line,
    handled,
    normalised,
    passed,
    quick_rows,
    quick_scores,
    refused,
    report,
    set_rows,
)


def test_normalised_either_direction():
    assert normalised(0.75, 0.5, 1.0) == pytest.approx(0.5)  # higher is better
    assert normalised(1.0, 4.0, 0.0) == pytest.approx(0.75)  # lower is better: oracle below the constant
    assert normalised(5.0, 4.0, 0.0) < 0  # worse than the constant
    assert normalised(0.3, 0.5, 1.0) < 0
    assert normalised(None, 0.5, 1.0) is None
    assert normalised(0.7, 0.5, 0.5) is None  # the oracle ties the constant: no scale


def test_refused_needs_exit_2_and_the_reason():
    assert refused(2, "agentk: unsupported task: video (60 .mp4 files)\n")
    assert not refused(2, "agentk: no such folder\n")
    assert not refused(1, "agentk: unsupported task: video\n")
    assert not refused(None, "")


def test_grade_line_takes_the_last_json_line():
    out = 'noise\n{"competition": "c", "valid": true, "score": 0.5, "error": null}\n'
    assert grade_line(out)["score"] == 0.5
    bad = grade_line("Traceback ...\nValueError: boom\n")
    assert bad["valid"] is False and "boom" in bad["error"]


def grade(score, valid=True):
    return {"valid": valid, "score": score if valid else None, "error": None if valid else "bad"}


def records():
    good = {
        "competition": "a",
        "set": "zoo2",
        "supported": True,
        "setup_rc": 0,
        "setup_seconds": 10.0,
        "setup_grade": grade(0.8),
        "constant": grade(0.5),
        "oracle": grade(1.0),
        "solve": {
            "rc": 0,
            "seconds": 100.0,
            "snapshots": [{"grade": grade(0.4)}, {"grade": grade(0.9)}],
            "grade": grade(0.9),
        },
    }
    below = {  # lower is better: 5 is worse than the constant 4
        "competition": "b",
        "set": "zoo2",
        "supported": True,
        "setup_rc": 0,
        "setup_seconds": 20.0,
        "setup_grade": grade(5.0),
        "constant": grade(4.0),
        "oracle": grade(0.0),
    }
    failed = {
        "competition": "c",
        "set": "dev",
        "supported": True,
        "setup_rc": 1,
        "setup_seconds": 30.0,
        "setup_reason": "stage x failed",
        "constant": grade(0.5),
        "oracle": grade(1.0),
    }
    refusal = {
        "competition": "d",
        "set": "dev",
        "supported": False,
        "setup_rc": 2,
        "refused": True,
        "setup_seconds": 1.0,
        "constant": grade(0.5),
        "oracle": grade(1.0),
    }
    return [add_normalised(r) for r in (good, below, failed, refusal)]


def test_add_normalised_and_pass():
    a, b, c, d = records()
    assert a["setup_normalised"] == pytest.approx(0.6)
    assert a["solve"]["normalised"] == pytest.approx(0.8)
    assert a["solve"]["worst_snapshot_normalised"] == pytest.approx(-0.2)
    assert b["setup_normalised"] == pytest.approx(-0.25)
    assert c["setup_normalised"] is None
    assert [passed(r) for r in (a, b, c, d)] == [True, True, False, True]
    assert [handled(r) for r in (a, b, c, d)] == [True, False, False, True]  # b is below the constant
    taken_on = {**b, "supported": False, "setup_grade": grade(1.0)}  # a kind taken on, above the constant
    assert handled(add_normalised(taken_on))
    a_worse_solve = {**a, "solve": {**a["solve"], "grade": grade(0.4)}}  # the final submission is what counts
    assert not handled(add_normalised(a_worse_solve))


def test_set_table_counts():
    header, rows = set_rows(records(), with_solve=True)
    by = {r[0]: dict(zip(header, r)) for r in rows}
    assert set(by) == {"dev", "zoo2", "all"}
    assert by["zoo2"]["pass@1"] == "2/2" and by["zoo2"]["below const."] == "1" and by["zoo2"]["handled"] == "1/2"
    assert by["zoo2"]["mean norm."] == "0.175"
    assert by["dev"]["pass@1"] == "0/1" and by["dev"]["refused"] == "1/1" and by["dev"]["valid"] == "0/2"
    assert by["all"]["snaps below"] == "1" and by["all"]["worst snapshot"] == "-0.2"


def test_comp_table_and_failures():
    header, rows = comp_rows(records(), with_solve=False)
    assert header[:4] == ["competition", "set", "sup.", "setup exit"]
    assert rows[3][3] == "2 (refused)"
    assert rows[2][5] == "-"
    fails = failures(records())
    assert any(f.startswith("b: setup submission below the constant") for f in fails)
    assert any(f.startswith("c: setup exit 1: stage x failed") for f in fails)
    assert any(f.startswith("a: a solve snapshot below the constant") for f in fails)
    plain, md = report(records(), with_solve=True)
    assert "pass@1" in plain and md.startswith("# agentk on kaggle-layouts")


QUICK_OUTPUT = """running
{"competition": "a", "valid": true, "score": 0.85, "normalised": 0.7}
{"competition": "b", "valid": true, "score": 2.0, "normalised": 0.5}
{"competition": "x", "valid": false, "score": null, "normalised": null}
"""


def test_quick_scores_reads_the_json_lines():
    assert quick_scores(QUICK_OUTPUT) == {"a": 0.7, "b": 0.5, "x": None}


def test_agentk_beside_the_quick_models():
    header, rows, lines = quick_rows(records(), quick_scores(QUICK_OUTPUT))
    by = {r[0]: dict(zip(header, r)) for r in rows}
    assert set(by) == {"a", "b"}  # c and d have no quick model
    # a: the solve's final 0.8 is what counts (the setup's 0.6 alone would be below 0.7); its worst snapshot -0.2
    assert by["a"]["final norm."] == "0.8" and by["a"]["setup norm."] == "0.6" and by["a"]["at or above"] == "yes"
    assert by["a"]["worst snapshot"] == "-0.2" and by["a"]["quick model"] == "0.7"
    assert by["b"]["final norm."] == "-0.25" and by["b"]["worst snapshot"] == "-" and by["b"]["at or above"] == "no"
    assert lines == [
        "zoo2: at or above the quick model: 1 of 2; mean normalised: setup 0.175, final 0.275, "
        "worst snapshot -0.2 (1), quick model 0.6"
    ]
    tie = {**records()[1], "setup_grade": grade(2.0)}  # normalised 0.5: the quick model's own score
    assert quick_rows([add_normalised(tie)], {"b": 0.5})[1][0][-1] == "yes"
    failed = {**records()[2], "set": "zoo2"}  # a setup that failed is below any quick model
    assert quick_rows([failed], {"c": -0.5})[1][0][-1] == "no"
    _, md = report(records(), with_solve=True, quick=quick_scores(QUICK_OUTPUT))
    assert "## Beside the quick scikit-learn models" in md and "at or above the quick model: 1 of 2" in md
    assert "quick" not in report(records(), with_solve=True)[1]
