"""The unit and meta-unit tests fail on broken workspaces with messages that say what is wrong and what
to do: they are what a policy reflects on. Each case breaks one thing in a copy of a good workspace."""

from __future__ import annotations

import shutil

import pandas as pd
import pytest

from agentk.workspace import SUBMISSION_FORMAT
from unit_tests_lib.maps import check_id_map, check_no_train_only_columns, check_rows_match_source, check_target_map
from unit_tests_lib.meta import check_light_solve, check_test_maps, check_train_map_dataset
from unit_tests_lib.metric import check_metric
from unit_tests_lib.submission import check_submission_format
from unit_tests_lib.targets import check_transform
from unit_tests_lib.task import check_modalities, check_summary


@pytest.fixture
def ws(example_ws, tmp_path, monkeypatch):
    good, proc = example_ws("breast-cancer")
    assert proc.returncode == 0, proc.stderr[-2000:]
    copy = tmp_path / "ws"
    shutil.copytree(good, copy, symlinks=True)
    monkeypatch.chdir(copy)  # generated code runs from the workspace
    return copy


def edit_csv(path, fn):
    df = pd.read_csv(path, dtype={"id": str})
    fn(df).to_csv(path, index=False)


def edit_code(path, old, new):
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def test_good_workspace_passes_everything(ws):
    check_id_map(ws, "train_tab_input_map.csv")
    check_target_map(ws)
    check_transform(ws)
    check_train_map_dataset(ws)
    check_test_maps(ws)
    check_submission_format(ws, SUBMISSION_FORMAT)
    check_metric(ws)
    check_light_solve(ws)


CASES = [
    (
        "duplicate ids",
        lambda ws: edit_csv(ws / "train_tab_input_map.csv", lambda d: d.assign(id=d.id.where(d.index != 1, d.id[0]))),
        lambda ws: check_id_map(ws, "train_tab_input_map.csv"),
        "ids must be unique",
    ),
    (
        "id not first",
        lambda ws: edit_csv(ws / "train_tab_input_map.csv", lambda d: d[d.columns[::-1]]),
        lambda ws: check_id_map(ws, "train_tab_input_map.csv"),
        "first column must be 'id'",
    ),
    (
        "leaked target",
        lambda ws: edit_csv(ws / "train_tab_input_map.csv", lambda d: d.assign(malignant=1)),
        lambda ws: check_no_train_only_columns(ws, "train_tab_input_map.csv"),
        "['malignant']",
    ),
    (
        "dropped test rows",
        lambda ws: edit_csv(ws / "test_tab_input_map.csv", lambda d: d.iloc[:-5]),
        lambda ws: check_rows_match_source(ws, "test_tab_input_map.csv", "test"),
        "keep one row per test sample",
    ),
    (
        "missing targets",
        lambda ws: edit_csv(
            ws / "train_tab_target_map.csv", lambda d: d.assign(malignant=d.malignant.where(d.index > 2))
        ),
        check_target_map,
        "have missing values",
    ),
    (
        "target map ids disagree",
        lambda ws: edit_csv(ws / "train_tab_target_map.csv", lambda d: d.assign(id="x" + d.id)),
        check_train_map_dataset,
        "ids of train_tab_target_map.csv and train_tab_input_map.csv disagree",
    ),
    (
        "test column typed differently",
        lambda ws: edit_csv(ws / "test_tab_input_map.csv", lambda d: d.assign(mean_radius="big")),
        check_test_maps,
        "'mean_radius' is numeric in train_tab_input_map.csv but string in test_tab_input_map.csv",
    ),
    (
        "test ids are not the sample's",
        lambda ws: edit_csv(ws / "test_tab_input_map.csv", lambda d: d.assign(id="t" + d.id)),
        check_test_maps,
        "ids differ from the sample submission's",
    ),
    (
        "transform not invertible",
        lambda ws: edit_code(
            ws / "code_transform_tab_target_train.py", "np.clip(v, 0.0, 1.0)", "np.clip(1 - v, 0.0, 1.0)"
        ),
        check_transform,
        "the two must be inverses",
    ),
    (
        "transform yields NaN",
        lambda ws: edit_code(
            ws / "code_transform_tab_target_train.py",
            "return np.column_stack(cols)",
            "return np.column_stack(cols) / 0 * 0",
        ),
        check_transform,
        "NaN/inf",
    ),
    (
        "formatter shuffles rows",
        lambda ws: edit_code(
            ws / "code_submission_format.py",
            "_like(preds[c].reset_index(drop=True), sample[c]).to_numpy()",
            "_like(preds[c].reset_index(drop=True), sample[c]).to_numpy()[::-1]",
        ),
        lambda ws: check_submission_format(ws, SUBMISSION_FORMAT),
        "wrong ids",
    ),
    (
        "formatter renames a column",
        lambda ws: edit_code(
            ws / "code_submission_format.py", "    return sub\n", "    return sub.rename(columns={ID: 'Id'})\n"
        ),
        lambda ws: check_submission_format(ws, SUBMISSION_FORMAT),
        "differ from the sample submission's",
    ),
    (
        "both formatters drop a row",
        lambda ws: (
            edit_code(ws / "code_submission_format.py", "    return sub\n", "    return sub.iloc[1:]\n"),
            edit_code(ws / "code_submission_format_alt.py", "    return out\n", "    return out.iloc[1:]\n"),
        ),
        check_light_solve,
        "both submission formatters failed",
    ),
    (
        "metric direction flipped",
        lambda ws: edit_code(ws / "code_metric.py", "HIGHER_IS_BETTER = True", "HIGHER_IS_BETTER = False"),
        check_metric,
        "fix the direction",
    ),
    (
        "metric imports agentk",
        lambda ws: edit_code(
            ws / "code_metric.py", "import numpy as np\n", "import numpy as np\nimport tools.metrics\n"
        ),
        check_metric,
        "must be self-contained",
    ),
    (
        "summary without the metric",
        lambda ws: (ws / "summary.md").write_text("x " * 100 + "id"),
        check_summary,
        "does not say how submissions are evaluated",
    ),
    (
        "modalities with a bad task type",
        lambda ws: (ws / "modalities.json").write_text(
            '{"inputs": ["tab"], "targets": ["tab"], "task_type": "Binary"}'
        ),
        check_modalities,
        "task_type 'Binary' must be one of",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_broken_workspace_fails_with_actionable_message(ws, case):
    _, breaks, check, message = case
    breaks(ws)
    with pytest.raises(AssertionError) as info:
        check(ws)
    assert message in str(info.value)


def test_transform_that_reverses_rows_fails_for_per_class_probabilities(example_ws, tmp_path, monkeypatch):
    good, proc = example_ws("wine")
    assert proc.returncode == 0, proc.stderr[-2000:]
    ws = tmp_path / "wine"
    shutil.copytree(good, ws, symlinks=True)
    monkeypatch.chdir(ws)
    edit_code(
        ws / "code_transform_tab_target_train.py", "return np.column_stack(cols)", "return np.column_stack(cols)[::-1]"
    )
    with pytest.raises(AssertionError, match="highest probability to another class"):
        check_transform(ws)
