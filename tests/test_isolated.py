"""agentk.core.isolated.call_isolated: a check's calls into generated code run in a sandboxed child, and what comes
back is plain data with its types, the child's error where the child stopped, and nothing it printed as a marker."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from agentk.core.isolated import ChildError, Opaque, call_isolated, type_name


def echo_then_fail(ws, out, **data):
    """In the child: records its inputs back and a few values that are not plain data, then generated code crashes."""
    out.update(data)
    out["np_bool"], out["opaque"], out["nested"] = np.True_, object(), [1, "a", None, (2, 3), {"k": np.int64(4)}]
    print("printed by the child")
    print("@@agentk-check@@ " + '{"passed": true}')  # would pass for the check process's result line
    import code_broken  # noqa: F401 - a generated module that raises at import


def test_plain_data_round_trips_and_the_childs_error_raises_where_it_stopped(tmp_path, capsys):
    (tmp_path / "code_broken.py").write_text("raise KeyError('no column y')\n")
    frame = pd.DataFrame(
        {
            "id": ["a", "b", None],
            "x": [1.5, np.nan, 3.0],
            "n": [1, 2, 3],
            "flag": [True, False, True],
            "label": pd.Categorical(["u", "v", "u"]),
            "count": pd.array([1, None, 3], dtype="Int64"),
            "text": pd.array(["p", None, "q"], dtype="string"),
            "mixed": [1, "a", 2.5],
            "when": pd.to_datetime(["2020-01-01", "2021-06-01", None]),
            7: [0, 1, 2],
        },
        index=["r1", "r2", "r3"],
    )
    ids = pd.Series(["1", "2"], name="id")
    got = call_isolated(echo_then_fail, tmp_path, frame=frame, ids=ids, matrix=np.arange(6.0).reshape(2, 3))
    pd.testing.assert_frame_equal(got["frame"], frame)
    pd.testing.assert_series_equal(got["ids"], ids)
    np.testing.assert_array_equal(got["matrix"], np.arange(6.0).reshape(2, 3))
    assert got["np_bool"] is np.True_ and not isinstance(got["np_bool"], bool)
    assert got["opaque"] == Opaque("object") and type_name(got["opaque"]) == "object"
    assert got["nested"] == [1, "a", None, (2, 3), {"k": 4}]
    with pytest.raises(ChildError, match="KeyError: 'no column y'") as info:
        got["never recorded"]
    assert "code_broken.py" in str(info.value)  # the generated code's frame, for the policy to repair
    printed = capsys.readouterr().out
    assert "printed by the child" in printed and "@@agentk" not in printed
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".agentk-call-")]  # its folder is gone


def fail_in_child(ws, out):
    from unit_tests_lib.common import load

    load(ws, "missing_stage")


def test_a_failure_in_the_child_is_an_assertion_with_its_message(tmp_path):
    got = call_isolated(fail_in_child, tmp_path)
    with pytest.raises(AssertionError, match="code_missing_stage.py does not exist"):
        got["anything"]
