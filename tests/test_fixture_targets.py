"""The "targets" fixture family: what the expert reads off each competition (target shape, metric), how the
generated transform, metric and formatter treat those shapes, the refusals (one line, exit 2, in seconds, through
the CLI), and two full setups (label sets; exclusive outcomes)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn import metrics as skm

from agentk.competition.class_names import class_columns
from agentk.competition.column_kinds import is_label_set
from agentk.competition.support import unsupported_reason
from agentk.competition.task_kinds import unsupported_task
from agentk.core.engine import Context
from agentk.core.memory import WorkingMemory
from agentk.policies.analysis import analyse
from agentk.workspace import METRIC, SUBMISSION_FORMAT, SUBMISSION_FORMAT_ALT, TARGET_MAP, TARGET_TRANSFORM, Workspace
from stages import metric as metric_stage
from stages import submission_format, tab_target_map, target_transform
from stages.fetch import fetch_local
from testing.competitions import build, registry
from tools.submission import SubmissionMismatch, compare_with_sample
from unit_tests_lib.targets import check_transform

ROOT = Path(__file__).parents[1]
FIXTURES = {n: fx for n, fx in registry().items() if fx.family == "targets"}
SUPPORTED = sorted(n for n in FIXTURES if not n.startswith("refuse-"))
REFUSED = sorted(n for n in FIXTURES if n.startswith("refuse-"))

# fixture -> (metric, [(kind, submit) per target]) the expert must read off it
EXPECTED = {
    "balanced-log-loss-classes": ("balanced_log_loss", [("multiclass", "proba_columns")]),
    "bias-auc-identities": ("bias_auc", [("binary", "proba")]),
    "binary-f2": ("f2", [("binary", "label")]),
    "exclusive-outcomes": ("multi_log_loss", [("multiclass", "proba_columns")]),
    "extra-train-columns": ("roc_auc", [("binary", "proba")]),
    "fraction-binarised-auc": ("roc_auc", [("binary", "proba")]),
    "gini-claims": ("gini", [("regression", "value")]),
    "grouped-log-mae-targets": ("grouped_log_mae", [("regression", "value")] * 3),
    "household-heads-macro-f1": ("f1_macro", [("multiclass", "label")]),
    "multi-target-mcrmse": ("mcrmse", [("regression", "value")] * 3),
    "multi-target-spearman": ("mean_spearman", [("regression", "value")] * 4),
    "multiclass-macro-f1": ("f1_macro", [("multiclass", "label")]),
    "multilabel-label-ids": ("f2_samples", [("multilabel", "label_set")]),
    "multilabel-label-words": ("f1_samples", [("multilabel", "label_set")]),
    "multilabel-macro-f1": ("f1_macro", [("multilabel", "label_set")]),
    "ordinal-qwk": ("qwk", [("regression", "label")]),  # a value cut into ratings at tuned points
    "pearson-regression": ("pearson", [("regression", "value")]),
    "top5-ranking-new-class": ("map_at_5", [("multiclass", "ranking")]),
    "weighted-auc-labels": ("weighted_auc", [("binary", "proba")] * 4),
}


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    dest = tmp_path_factory.mktemp("fixtures")
    for name in FIXTURES:
        build(name, dest)
    return dest


@pytest.fixture(scope="module")
def fetched(built, tmp_path_factory) -> dict[str, Path]:
    """Each supported fixture fetched into a workspace (fetch checks the source: nothing here may be refused)."""
    out = {}
    for name in SUPPORTED:
        ws = tmp_path_factory.mktemp(name) / "ws"
        fetch_local(built / name / "public", ws)
        out[name] = ws
    return out


def test_the_family_has_the_fixtures_the_issue_asks_for(built):
    assert set(EXPECTED) == set(SUPPORTED) and len(FIXTURES) >= 15
    kinds = {json.loads((built / n / "meta.json").read_text())["refusal"] for n in REFUSED}
    assert kinds == {
        "image-to-image",
        "segmentation",
        "object detection",
        "text generation / sequence-to-sequence",
        "span extraction",
        "audio",
    }


@pytest.mark.parametrize("name", SUPPORTED)
def test_analysis_reads_target_shape_and_metric(fetched, built, name):
    a = analyse(fetched[name])
    meta = json.loads((built / name / "meta.json").read_text())
    metric, shapes = EXPECTED[name]
    assert a.metric == metric == meta["metric"] and a.metric_from == "description"
    assert [(t.kind, t.submit) for t in a.targets] == shapes
    assert a.submission_columns == list(pd.read_csv(built / name / "public" / "sample_submission.csv").columns[1:])
    train = pd.read_csv(built / name / "public" / "train.csv")
    test = pd.read_csv(built / name / "public" / "test.csv")
    assert set(a.features) <= set(test.columns)  # train-only columns (targets, leaks) are never features
    assert not set(a.features) & (set(train.columns) - set(test.columns))


def test_shapes_in_detail(fetched):
    (ranked,) = analyse(fetched["top5-ranking-new-class"]).targets
    assert ranked.k == 5 and "new_whale" in ranked.classes
    (frac,) = analyse(fetched["fraction-binarised-auc"]).targets
    assert frac.threshold == 0.5
    (tags,) = analyse(fetched["multilabel-label-words"]).targets
    assert tags.classes == sorted(["haze", "cloudy", "road", "water", "farm", "forest"])
    (outcome,) = analyse(fetched["exclusive-outcomes"]).targets
    assert outcome.onehot and outcome.columns == ["winner_model_a", "winner_model_b", "winner_tie"]
    bias = analyse(fetched["bias-auc-identities"])  # the identities the text names, not the other train-only columns
    assert bias.metric_columns == ["male", "female", "christian", "muslim"]
    assert [(t.column, t.source, t.threshold) for t in bias.targets] == [("prediction", "target", 0.5)]
    leak = analyse(fetched["extra-train-columns"])
    assert [t.column for t in leak.targets] == ["target"]
    assert not {"diagnosis", "benign_malignant", "lesion_size_followup"} & set(leak.features)


def _generated(ws: Path) -> dict:
    """The expert's target map, transform, metric and formatter for a fetched workspace, run in-process."""
    a, w = analyse(ws), Workspace(ws)
    ctx = Context(ws, "first", 0, WorkingMemory(), None, None)
    w.code(TARGET_MAP).write_text(tab_target_map.STAGE.expert(a, ctx).code)
    subprocess.run([sys.executable, w.code(TARGET_MAP).name], cwd=ws, check=True, capture_output=True)
    for stage in (target_transform.STAGE, metric_stage.STAGE, *map(submission_format.make, (0, 1))):
        w.code(stage.name).write_text(stage.expert(a, ctx).code)  # after the map, as setup runs them
    return {
        "analysis": a,
        "transform": w.load(TARGET_TRANSFORM),
        "metric": w.load(METRIC),
        "format": w.load(SUBMISSION_FORMAT),
        "format_alt": w.load(SUBMISSION_FORMAT_ALT),
    }


def test_label_sets_round_trip_and_threshold(fetched):
    g = _generated(fetched["multilabel-label-ids"])
    y = pd.read_csv(Workspace(fetched["multilabel-label-ids"]).target_map, dtype={"id": str}).drop(columns="id")
    t = g["transform"].transform(y)
    assert t.shape == (len(y), 8) and set(np.unique(t)) == {0.0, 1.0}  # one 0/1 column per label
    assert [o["kind"] for o in g["transform"].OUTPUTS] == ["binary"] * 8
    back = g["transform"].inverse_transform(t)
    assert (back["attribute_ids"] == y["attribute_ids"]).all()
    assert g["metric"].metric(y, back) == 1.0
    g["transform"].THRESHOLD = 0.95  # every probability 0.9: only each row's top label survives
    low = g["transform"].inverse_transform(np.full_like(t, 0.9))
    assert low["attribute_ids"].str.split().str.len().eq(1).all()
    g["transform"].THRESHOLD = 0.5
    assert g["transform"].inverse_transform(np.full_like(t, 0.9))["attribute_ids"].iloc[0] == "1 4 7 10 13 16 19 22"


def test_kappa_ratings_are_a_value_cut_at_tuned_points(fetched):
    g = _generated(fetched["ordinal-qwk"])
    check_transform(fetched["ordinal-qwk"])
    y = pd.read_csv(Workspace(fetched["ordinal-qwk"]).target_map, dtype={"id": str}).drop(columns="id")
    tf = g["transform"]
    assert [o["kind"] for o in tf.OUTPUTS] == ["regression"] and set(tf.TUNABLE) == {f"CUT_0_{i}" for i in range(4)}
    assert (tf.inverse_transform(tf.transform(y))["rating"] == y["rating"]).all()
    assert tf.inverse_transform(np.array([[-3.0], [1.49], [1.51], [9.0]]))["rating"].tolist() == [0, 1, 2, 4]
    squeezed = 1.0 + 0.5 * tf.transform(y)  # a model that shrinks ratings towards the mean
    before = g["metric"].metric(y, tf.inverse_transform(squeezed))
    for i in range(4):  # the cuts that fit the shrunk scale
        setattr(tf, f"CUT_0_{i}", 1.25 + 0.5 * i)
    assert g["metric"].metric(y, tf.inverse_transform(squeezed)) == 1.0 > before


def test_label_strings_are_checked_against_train(fetched, monkeypatch):
    ws = fetched["multilabel-label-words"]
    monkeypatch.chdir(ws)
    g = _generated(ws)
    ids = pd.read_csv(Workspace(ws).raw / "sample_submission.csv")["image_name"]
    sub = g["format"].format_submission(ids, pd.DataFrame({"tags": ["haze road"] * len(ids)}))
    compare_with_sample(ws, sub, "formatter")
    with pytest.raises(SubmissionMismatch, match="no label of the train table"):
        compare_with_sample(ws, sub.assign(tags="['haze', 'road']"), "list repr")
    with pytest.raises(SubmissionMismatch, match="column 'tags' is int64 but the sample's is object"):
        compare_with_sample(ws, sub.assign(tags=3), "numbers for words")


def test_label_ids_of_one_label_each_read_back_as_numbers_and_pass(fetched, monkeypatch):
    # label ids "1 4" in the sample: a submission whose every row holds one id reads back from the CSV as numbers,
    # and is as valid (numbers where the sample holds words are caught: the test above)
    ws = fetched["multilabel-label-ids"]
    monkeypatch.chdir(ws)
    ids = pd.read_csv(Workspace(ws).raw / "sample_submission.csv")["id"]
    sub = _generated(ws)["format"].format_submission(ids, pd.DataFrame({"attribute_ids": ["4"] * len(ids)}))
    compare_with_sample(ws, sub, "formatter")


def test_ranking_gives_k_labels_best_first(fetched):
    g = _generated(fetched["top5-ranking-new-class"])
    check_transform(fetched["top5-ranking-new-class"])  # the truth is the first of the k labels
    classes = g["analysis"].targets[0].classes
    proba = np.tile(np.linspace(0.01, 0.2, len(classes)), (3, 1))
    proba /= proba.sum(axis=1, keepdims=True)
    ranked = g["transform"].inverse_transform(proba)["Id"]
    assert ranked.iloc[0].split() == [str(c) for c in classes[::-1][:5]]


def test_exclusive_outcomes_are_one_softmax_and_sum_to_one(fetched, monkeypatch):
    ws = fetched["exclusive-outcomes"]
    monkeypatch.chdir(ws)  # generated code reads raw/ relative to the workspace, as the sandbox runs it
    g = _generated(ws)
    assert [(o["kind"], o["n_classes"]) for o in g["transform"].OUTPUTS] == [("multiclass", 3)]
    proba = np.random.default_rng(0).dirichlet(np.ones(3), 200)
    preds = g["transform"].inverse_transform(proba)
    ids = pd.read_csv(Workspace(ws).raw / "sample_submission.csv")["id"]
    sub = g["format"].format_submission(ids.astype(str), preds)
    compare_with_sample(ws, sub, "formatter")
    independent = sub.copy()
    independent.iloc[:, 1:] = np.random.default_rng(1).random((200, 3))  # three binary heads: rows off 1
    with pytest.raises(SubmissionMismatch, match="sum to 1"):
        compare_with_sample(ws, independent, "independent heads")


def test_class_columns_named_with_a_prefix_submit_the_label_classes(fetched, monkeypatch):
    """A 0/1 label submitted as class_0, class_1 probabilities: the columns are the classes, each train value maps
    to its column, and the generated metric is the balanced log loss of the labels."""
    ws = fetched["balanced-log-loss-classes"]
    monkeypatch.chdir(ws)
    g = _generated(ws)
    (t,) = g["analysis"].targets
    assert (t.column, t.classes, t.named) == ("Class", ["class_0", "class_1"], {"0": "class_0", "1": "class_1"})
    labels = pd.read_csv(Workspace(ws).raw / "train.csv")["Class"].to_numpy()
    y = pd.read_csv(Workspace(ws).target_map, dtype={"id": str}).drop(columns="id")
    assert (y["Class"] == np.array(["class_0", "class_1"])[labels]).all()
    np.testing.assert_array_equal(g["transform"].transform(y)[:, 0], labels)
    # the decoding divides by the train shares to BALANCE's power (1 unless the validation rows tune it down): at
    # 0 the probabilities are submitted as predicted
    assert g["transform"].TUNABLE["BALANCE"][0] == 0.0 and g["transform"].BALANCE == 1.0
    monkeypatch.setattr(g["transform"], "BALANCE", 0.0)
    proba = np.random.default_rng(0).dirichlet(np.ones(2), len(y))
    preds = g["transform"].inverse_transform(proba)
    assert list(preds.columns) == ["class_0", "class_1"]
    np.testing.assert_allclose(preds.to_numpy(), proba)
    weight = 1 / np.bincount(labels)[labels]
    expected = skm.log_loss(labels, proba, sample_weight=weight)
    assert g["metric"].metric(y, preds) == pytest.approx(expected) and expected != pytest.approx(
        skm.log_loss(labels, proba)
    )
    # the metric weighs the classes alike: the decoding may divide by the train shares, which turns the train
    # shares (the best constant for a plain log loss) into 0.5 / 0.5, the best constant for this one
    shares = np.bincount(labels) / len(labels)
    as_predicted = g["metric"].metric(y, g["transform"].inverse_transform(np.tile(shares, (len(y), 1))))
    monkeypatch.setattr(g["transform"], "BALANCE", 1.0)
    balanced = g["transform"].inverse_transform(np.tile(shares, (len(y), 1)))
    np.testing.assert_allclose(balanced.to_numpy(), 0.5, atol=1e-4)
    assert g["metric"].metric(y, balanced) == pytest.approx(np.log(2), abs=1e-3)
    assert as_predicted > np.log(2) + 0.05


def test_a_macro_f1_label_raises_the_rare_classes_by_their_share(fetched, monkeypatch):
    """Macro F1 weighs every class alike: the transform offers BALANCE for a multi-class label too, and its argmax
    is taken over the probabilities divided by the train shares. A model that sees each row's class but keeps the
    train's skew submits the common class for every row at 0 and each row's own class at 1."""
    ws = fetched["multiclass-macro-f1"]
    monkeypatch.chdir(ws)
    g = _generated(ws)
    tf = g["transform"]
    assert tf.TUNABLE["BALANCE"] == target_transform.BALANCES and tf.BALANCE == 1.0
    monkeypatch.setattr(tf, "BALANCE", 0.0)
    y = pd.read_csv(Workspace(ws).target_map, dtype={"id": str}).drop(columns="id")
    codes = tf.transform(y)[:, 0].astype(int)
    shares = np.bincount(codes) / len(codes)
    assert shares.min() < 0.1 < 0.5 < shares.max()  # the skew the fixture promises
    proba = shares * (1 + np.eye(len(shares))[codes])  # each row's class twice as likely as its share says
    proba /= proba.sum(axis=1, keepdims=True)
    as_predicted = tf.inverse_transform(proba)
    assert as_predicted["level"].nunique() == 1  # the common class everywhere
    monkeypatch.setattr(tf, "BALANCE", 1.0)
    balanced = tf.inverse_transform(proba)
    assert (balanced["level"].astype(str) == y["level"].astype(str)).all()
    assert g["metric"].metric(y, balanced) == 1.0 > g["metric"].metric(y, as_predicted) + 0.5


def test_macro_f1_label_sets_weigh_each_label_against_its_share(fetched, monkeypatch):
    """Macro F1 of label sets weighs a rare label as much as a common one: the transform offers BALANCE after
    THRESHOLD, and at BALANCE 1 each label's probability is judged against its share of the rows. A model that
    raises a row's labels above their shares and lowers the others submits one label a row at 0, each row's own
    labels at 1."""
    ws = fetched["multilabel-macro-f1"]
    monkeypatch.chdir(ws)
    g = _generated(ws)
    tf = g["transform"]
    assert list(tf.TUNABLE) == ["THRESHOLD", "BALANCE"] and tf.BALANCE == 1.0
    monkeypatch.setattr(tf, "BALANCE", 0.0)
    y = pd.read_csv(Workspace(ws).target_map, dtype={"id": str}).drop(columns="id")
    on = tf.transform(y)
    shares = on.mean(axis=0)
    assert shares.max() < 0.5 and shares.min() < 0.1
    assert tf.SPEC[0]["prior"] == pytest.approx(shares, abs=1e-6)
    proba = np.where(on == 1, 1.3 * shares, 0.6 * shares)
    as_predicted = tf.inverse_transform(proba)
    assert (as_predicted["Target"].str.split().map(len) == 1).all()  # the most likely label alone: none reaches 0.5
    monkeypatch.setattr(tf, "BALANCE", 1.0)
    balanced = tf.inverse_transform(proba)
    assert (balanced["Target"].map(lambda v: sorted(v.split())) == y["Target"].map(lambda v: sorted(v.split()))).all()
    assert g["metric"].metric(y, balanced) == 1.0 > g["metric"].metric(y, as_predicted) + 0.5


def test_rows_the_text_says_are_not_scored_are_out_of_the_metric_and_the_fit(fetched, monkeypatch):
    """ "Only the heads of household are used in scoring", and the data section describes is_head as "indicates if
    this person is the head of the household": the metric scores the heads' rows alone, and every kind fits them
    alone (TaskData.fit_weights 0 elsewhere), as for a masked MAE whose column the text names."""
    from tools.task_data import TaskData

    ws = fetched["household-heads-macro-f1"]
    monkeypatch.chdir(ws)
    g = _generated(ws)
    assert (g["analysis"].metric_columns, g["analysis"].scored_value) == (["is_head"], 1.0)
    y = pd.read_csv(Workspace(ws).target_map, dtype={"id": str})
    heads = y["is_head"] == 1
    truth = y.drop(columns="id")
    others_wrong = truth[["Target"]].where(heads, truth["Target"] % 4 + 1, axis=0)
    assert g["metric"].metric(truth, others_wrong) == 1.0  # the other members' rows are not scored
    heads_wrong = truth[["Target"]].where(~heads, truth["Target"] % 4 + 1, axis=0)
    assert g["metric"].metric(truth, heads_wrong) == 0.0
    y[["id"]].assign(v0=0.0).to_csv(ws / "train_tab_input_map.csv", index=False)
    task = TaskData(ws)
    rows = np.arange(len(y))
    weights = task.fit_weights(0, rows)
    assert (weights == task.targets["is_head"].to_numpy(float)).all() and 0 < weights.mean() < 0.5
    assert set(task.learn_rows(0, rows)) == set(np.flatnonzero(weights))


@pytest.mark.parametrize(
    "values, columns, named",
    [
        ({"0", "1"}, ["class_0", "class_1"], {"0": "class_0", "1": "class_1"}),
        ({"a", "b", "c"}, ["p_A_prob", "p_B_prob", "p_C_prob"], {"a": "p_A_prob", "b": "p_B_prob", "c": "p_C_prob"}),
        ({"0", "1", "2"}, ["class_0", "class_1"], None),  # a value without a column
        ({"0", "1"}, ["class_0"], None),  # one column names no classes
    ],
)
def test_class_columns_strip_what_every_column_shares(values, columns, named):
    assert class_columns(values, columns) == named


def test_binarised_fraction_and_continuous_gini_in_the_metric(fetched):
    g = _generated(fetched["fraction-binarised-auc"])
    check_transform(fetched["fraction-binarised-auc"])  # lossy on purpose: 0/1 on either side of the threshold
    y = pd.read_csv(Workspace(fetched["fraction-binarised-auc"]).target_map, dtype={"id": str}).drop(columns="id")
    t = g["transform"].transform(y)[:, 0]
    assert set(t) == {0.0, 1.0} and (t == (y["target"] >= 0.5)).all()
    assert g["metric"].metric(y, pd.DataFrame({"target": y["target"]})) == 1.0  # ordering by the fraction is perfect
    g = _generated(fetched["gini-claims"])
    y = pd.read_csv(Workspace(fetched["gini-claims"]).target_map, dtype={"id": str}).drop(columns="id")
    assert g["metric"].metric(y, y) == pytest.approx(1.0)
    assert g["metric"].metric(y, -y) < 0


def test_a_corner_and_a_size_are_boxes_only_where_a_prediction_string_is_submitted(tmp_path):
    rng = np.random.default_rng(0)
    shapes = pd.DataFrame(rng.integers(0, 100, (40, 4)), columns=["x", "y", "width", "height"]).assign(area=1.0)
    assert unsupported_reason(tmp_path, shapes, pd.DataFrame(columns=["id", "area"])) is None  # features of shapes
    refused = unsupported_reason(tmp_path, shapes, pd.DataFrame(columns=["id", "PredictionString"]))
    assert refused == "unsupported task: object detection (the train columns height, width, x, y hold bounding boxes)"


def test_label_sets_are_not_free_text(tmp_path):
    assert is_label_set(pd.Series(["3 17 42", "17 5", "3 5", "42 17 3", "5"] * 4))
    rng = np.random.default_rng(0)  # a thousand label ids with a long tail of rare ones, three to five per row
    zipf = 1 / np.arange(1, 1101)
    rows = [
        " ".join(map(str, rng.choice(1100, rng.integers(3, 6), replace=False, p=zipf / zipf.sum())))
        for _ in range(2000)
    ]
    assert (
        is_label_set(pd.Series(rows))
        and unsupported_reason(tmp_path, pd.DataFrame({"ids": rows}), pd.DataFrame(columns=["id", "ids"])) is None
    )
    many_classes = pd.DataFrame({"Id": [f"w_{k:04x}" for k in rng.integers(0, 200, 300)]})  # ~150 classes seen
    assert unsupported_reason(tmp_path, many_classes, pd.DataFrame(columns=["Image", "Id"])) is None
    words = "the cat sat on the mat and then it ran off to see a friend of mine".split()
    assert not is_label_set(pd.Series([" ".join(rng.choice(words, 8)) + f" {i}." for i in range(40)]))


@pytest.mark.parametrize("name", REFUSED)
def test_refusals_read_off_the_folder(built, name):
    kind = json.loads((built / name / "meta.json").read_text())["refusal"]
    reason = unsupported_task(built / name / "public")
    assert reason.startswith(f"unsupported task: {kind} (") and reason.endswith(")") and "\n" not in reason


def test_refusals_through_the_cli_before_the_mdp(built, tmp_path):
    """A refusal through the CLI: exit 2, one stderr line `agentk: unsupported task: <kind> (<evidence>)`, nothing
    written (the MDP writes its workspace before its first stage, so no workspace means no stage ran). Two kinds here
    (each a process, 3 s); test_refusals_read_off_the_folder reads every kind's reason."""
    for name in REFUSED[:2]:
        kind = json.loads((built / name / "meta.json").read_text())["refusal"]
        ws = tmp_path / name
        proc = subprocess.run(
            [sys.executable, "-m", "agentk", "setup", str(built / name / "public"), "--workspace", str(ws)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=300,
        )
        lines = proc.stderr.strip().splitlines()
        assert proc.returncode == 2 and len(lines) == 1, proc.stderr
        assert lines[0].startswith(f"agentk: unsupported task: {kind} ("), lines[0]
        assert not ws.exists(), name


@pytest.mark.slow  # a full setup (30 s); benchmarks/solve.py --fixtures runs it, the target checks here its pieces
def test_full_setup_of_label_sets_submits_label_strings(built, tmp_path):
    """The one full setup here: label sets are learnt as one binary head per label, the threshold is tuned on the
    validation rows, and the submission holds label strings in the sample's format."""
    from agentk.api import run_setup

    result = run_setup(built / "multilabel-label-ids" / "public", tmp_path / "ws", "expert")
    assert result.state.status == "done"
    w = Workspace(result.workspace)
    score = json.loads(w.light.score.read_text())
    assert 0.1 <= score["decoding"]["THRESHOLD"] <= 0.9 and score["score"] > 0.5
    sub = pd.read_csv(w.submission, dtype=str)
    sample = pd.read_csv(built / "multilabel-label-ids" / "public" / "sample_submission.csv", dtype=str)
    assert list(sub.columns) == list(sample.columns) and list(sub["id"]) == list(sample["id"])
    labels = {str(j * 3 + 1) for j in range(8)}
    rows = sub["attribute_ids"].str.split()
    assert rows.map(lambda r: 1 <= len(r) and set(r) <= labels and r == sorted(r, key=int)).all()
    assert rows.str.len().max() > 1  # several labels where the model is sure enough


def _tiny(tmp_path: Path, evaluation: str) -> tuple[Path, list[str]]:
    """A fetched binary competition with zero-padded ids; (workspace, ids)."""
    comp = tmp_path / "comp"
    comp.mkdir(parents=True)
    rng = np.random.default_rng(0)
    ids = [f"{i:03d}" for i in range(60)]
    x = rng.normal(size=60).round(3)
    pd.DataFrame({"id": ids[:40], "x": x[:40], "y": (x[:40] > 0).astype(int)}).to_csv(comp / "train.csv", index=False)
    pd.DataFrame({"id": ids[40:], "x": x[40:]}).to_csv(comp / "test.csv", index=False)
    pd.DataFrame({"id": ids[40:], "y": 0}).to_csv(comp / "sample_submission.csv", index=False)
    (comp / "description.md").write_text(f"# T\n\n## Evaluation\n\n{evaluation}\n")
    fetch_local(comp, tmp_path / "ws")
    return tmp_path / "ws", ids


def test_metric_code_says_where_its_metric_comes_from(tmp_path):
    ws, _ = _tiny(tmp_path / "named", "Submissions are evaluated on the Matthews correlation coefficient.")
    assert _generated(ws)["metric"].METRIC == "mcc"
    assert "\n# mcc: named in the competition's evaluation text." in Workspace(ws).code(METRIC).read_text()
    ws, _ = _tiny(tmp_path / "unnamed", "Submissions are judged by a panel.")
    a = analyse(ws)
    assert (a.metric, a.metric_from) == ("accuracy", "fallback")
    _generated(ws)
    assert "# FALLBACK: the evaluation text names no metric" in Workspace(ws).code(METRIC).read_text()


def test_ids_keep_the_samples_text(tmp_path, monkeypatch):
    """Ids with leading zeros: the formatter writes them as the sample does, and the check catches "7" for "007"."""
    ws, ids = _tiny(tmp_path, "Submissions are evaluated on accuracy.")
    rng = np.random.default_rng(1)
    monkeypatch.chdir(ws)
    g = _generated(ws)
    preds = pd.DataFrame({"y": rng.integers(0, 2, 20)})
    for formatter in (g["format"], g["format_alt"]):
        sub = formatter.format_submission(pd.Series(ids[40:]), preds)
        compare_with_sample(ws, sub, "formatter")
        assert sub.to_csv(index=False).splitlines()[1].startswith("040,")
    with pytest.raises(SubmissionMismatch, match="exactly as the sample"):
        compare_with_sample(ws, sub.assign(id=sub["id"].astype(int)), "int ids")


@pytest.mark.slow  # a full setup (30 s); benchmarks/solve.py --fixtures exclusive-outcomes runs it, the target checks here its pieces
def test_full_setup_of_exclusive_outcomes_submits_one_softmax(built, tmp_path):
    """The second full setup: three one-hot outcome columns are one multi-class head, and every submitted row
    sums to 1 (three independent binaries would not)."""
    from agentk.api import run_setup

    result = run_setup(built / "exclusive-outcomes" / "public", tmp_path / "ws", "expert")
    assert result.state.status == "done"
    w = Workspace(result.workspace)
    assert [(o["kind"], o["n_classes"]) for o in w.load(TARGET_TRANSFORM).OUTPUTS] == [("multiclass", 3)]
    sub = pd.read_csv(w.submission)
    sample = pd.read_csv(built / "exclusive-outcomes" / "public" / "sample_submission.csv")
    assert list(sub.columns) == list(sample.columns) and list(sub["id"]) == list(sample["id"])
    np.testing.assert_allclose(sub.iloc[:, 1:].sum(axis=1), 1.0, atol=1e-9)
    assert sub.iloc[:, 1:].to_numpy().argmax(axis=1).tolist().count(0) > 10  # the outcomes differ by row


def test_class_names_with_spaces_are_classes_and_label_sets_combine():
    names = pd.Series(["golden retriever", "house cat", "red fox", "cat"] * 20)
    assert not is_label_set(names)  # each name is always the same words together: one label
    sets = pd.Series(["haze road", "clear", "haze", "road water", "clear water", "road"] * 10)
    assert is_label_set(sets)


def test_try_unsupported_hands_a_refused_task_to_the_llm_never_to_the_expert(built, tmp_path):
    """--try-unsupported: the expert still refuses (exit 2, one line saying what to use); an LLM policy gets the
    task: fetch passes, the refusal becomes a warning, and the setup goes on (here to an LLM that answers nothing,
    so it runs out of tries: exit 1, not 2)."""
    from agentk.core.errors import BadInput
    from stages.fetch import check_source
    from testing.scripted_llm import ScriptedLLM

    source = built / "refuse-segmentation-rle" / "public"
    with pytest.raises(BadInput, match="unsupported task: segmentation"):
        check_source(source)
    assert check_source(source, try_unsupported=True).startswith("unsupported task: segmentation (")
    assert check_source(built / "multilabel-label-words" / "public", try_unsupported=True) is None

    cli = [sys.executable, "-m", "agentk", "setup", str(source), "--try-unsupported"]
    expert = subprocess.run([*cli, "--workspace", str(tmp_path / "e"), "--policy", "expert"], cwd=ROOT,
                            capture_output=True, text=True, timeout=60)  # fmt: skip
    assert expert.returncode == 2 and "--policy llm or hybrid" in expert.stderr, expert.stderr
    assert len(expert.stderr.strip().splitlines()) == 1 and not (tmp_path / "e").exists()

    env = {k: v for k, v in __import__("os").environ.items() if not k.startswith(("AGENTK_LLM", "OPENAI_"))}
    with ScriptedLLM(handler=lambda messages: "") as server:
        env |= {"AGENTK_LLM_BASE_URL": server.url, "AGENTK_LLM_MODEL": "scripted-model", "AGENTK_LLM_API_KEY": "k",
                "AGENTK_LLM_CACHE": "off", "AGENTK_MEMORY": str(tmp_path / "memory")}  # fmt: skip
        ws = tmp_path / "llm"
        llm = subprocess.run([*cli, "--workspace", str(ws), "--policy", "llm", "--stage-attempts", "1",
                              "--backtracks", "0"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)  # fmt: skip
    assert llm.returncode == 1, llm.stderr[-2000:]
    assert "unsupported task: segmentation (" in llm.stdout + llm.stderr and "tries it" in llm.stdout + llm.stderr
    state = json.loads((ws / "setup.json").read_text())
    assert state["stages"]["fetch"]["status"] == "passed" and state["try_unsupported"] is True  # resume keeps it
    assert server.requests, "the LLM was never asked"


def test_a_hard_label_metric_tunes_its_threshold_on_the_validation_rows_and_submits_at_it(fetched, monkeypatch):
    """F2 of a binary label: the transform offers its threshold for tuning (THRESHOLDS); a solution's save tunes it
    on the validation rows it never learnt from and decodes its submission at the tuned value, recorded in its
    score file; the transform is back at 0.5 after."""
    from types import SimpleNamespace

    from agentk.solve.solution import Solution
    from agentk.solve.solver import Solver
    from tools.task_data import TaskData

    ws = fetched["binary-f2"]
    monkeypatch.chdir(ws)  # the generated formatters read workspace-relative paths, as in a solve
    g = _generated(ws)
    tf = g["transform"]
    assert tf.TUNABLE == {"THRESHOLD": target_transform.THRESHOLDS} and tf.THRESHOLD == 0.5
    task = TaskData.__new__(TaskData)
    task.transform, task.metric_module, task.metric_name = tf, g["metric"], "f2"
    task.higher_is_better, task.decoding_defaults = True, {"THRESHOLD": 0.5}
    targets = pd.read_csv(Workspace(ws).target_map).drop(columns="id")
    truth = tf.transform(targets)[:, 0]
    rows = np.arange(len(truth))
    sample = pd.read_csv(Workspace(ws).raw / "sample_submission.csv")
    task.__dict__.update(targets=targets, groups=None, split=(rows[:0], rows), test=SimpleNamespace(ids=sample["id"]))
    rng = np.random.default_rng(0)
    val_pred = np.where(truth == 1, rng.uniform(0.2, 0.6, len(truth)), rng.uniform(0.0, 0.25, len(truth)))[:, None]
    test_pred = np.full((len(sample), 1), 0.3)  # below 0.5, above a threshold F2 tunes on those rows
    solver = Solver.__new__(Solver)
    solver.task, solver.ws, solver.workspace = task, ws, Workspace(ws)
    solver.save(Solution("model", "classical", "a plan", 0.0, val_pred, test_pred, 1.0))
    files = solver.workspace.solution("model")
    tuned = json.loads(files.score.read_text())["decoding"]["THRESHOLD"]
    assert tuned <= 0.3 and tf.THRESHOLD == 0.5
    assert (pd.read_csv(files.submission)["defect"] == 1).all()  # every test row at 0.3: positive at the tuned value


def test_a_label_no_train_row_holds_is_still_the_one_predicted(tmp_path):
    """One 0/1 column per label, scored by the mean column-wise AUC, and one label (rare) that no train row holds:
    its column is 0 throughout train. Its positive class is still 1, so the transform's round trip keeps its zeros
    (it took 0 for the positive and submitted a probability of 1 for every row)."""
    rng = np.random.default_rng(0)
    public = tmp_path / "public"
    public.mkdir()
    train = pd.DataFrame({"id": range(60), "x": rng.normal(size=60), "common": rng.integers(0, 2, 60), "rare": 0})
    train.to_csv(public / "train.csv", index=False)
    pd.DataFrame({"id": range(60, 80), "x": rng.normal(size=20)}).to_csv(public / "test.csv", index=False)
    pd.DataFrame({"id": range(60, 80), "common": 0.5, "rare": 0.5}).to_csv(
        public / "sample_submission.csv", index=False
    )
    (public / "description.md").write_text(
        "Predict the probability of each label.\n\n## Evaluation\n\nSubmissions are evaluated on the mean "
        "column-wise area under the ROC curve, one column per label.\n"
    )
    ws = tmp_path / "ws"
    fetch_local(public, ws)
    g = _generated(ws)
    rare = next(t for t in g["analysis"].targets if t.column == "rare")
    assert (rare.kind, rare.classes, rare.positive) == ("binary", [0, 1], 1)
    check_transform(ws)  # the setup's unit test of the transform: it failed on the round trip
    y = pd.read_csv(Workspace(ws).target_map, dtype={"id": str}).drop(columns="id")
    assert (g["transform"].inverse_transform(g["transform"].transform(y))["rare"] == 0).all()
