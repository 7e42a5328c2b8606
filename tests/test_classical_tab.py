"""The classical tabular candidate (tools/classical_tab.py): kernel methods on small tables, chosen by cross-validation
(tools/classical.py). Like tests/test_classical_txt.py, the candidate gets an in-memory task; the solver's
classical-tab solution on finished setups is measured by benchmarks/solve.py and benchmarks/vs_autogluon.py."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pandas as pd
from sklearn.ensemble import HistGradientBoostingRegressor
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.svm import SVC

from agentk.modalities import TABULAR, TEXT
from tools import classical_tab
from tools.classical import fit_candidate, predict_outputs, tempered_probabilities
from tools.metrics import log_loss, multi_log_loss, rmse, rmspe, roc_auc
from tools.tabular import standardised
from tools.task_data import TaskData


class FrameTask:
    """The members of TaskData that tools/classical.py uses, over an in-memory table and its outputs."""

    times = groups = None  # rows neither in time order nor in groups
    folds = TaskData.folds  # the real folds over such rows
    learn_rows, fit_weights = TaskData.learn_rows, TaskData.fit_weights  # the real rows and weights the metric asks
    _placeholders = TaskData._placeholders  # and the placeholder values it leaves out
    engineered = TaskData.engineered  # no engineered columns unless a test says so
    set_aside = TaskData.set_aside  # and no columns set aside
    _scored = None  # every row scored (no mask)

    def __init__(self, table: pd.DataFrame, y: np.ndarray, outputs: list[dict], n_test: int, metric, higher: bool):
        n = len(table) - n_test
        self.modalities = [TABULAR.name]
        self.train = SimpleNamespace(inputs={TABULAR.name: table.iloc[:n].reset_index(drop=True)})
        self.test = SimpleNamespace(inputs={TABULAR.name: table.iloc[n:].reset_index(drop=True)})
        self.y = np.asarray(y[:n], dtype=float).reshape(n, -1)
        self.outputs = outputs
        self.widths = [o.get("n_classes", 1) for o in outputs]
        rows = np.random.default_rng(0).permutation(n)
        self.split = (np.sort(rows[n // 5 :]), np.sort(rows[: n // 5]))
        self.metric, self.metric_name, self.higher = metric, metric.__name__, higher

    @property
    def _values(self) -> np.ndarray:  # the targets as the metric reads them (no transform)
        return self.y

    def score(self, pred: np.ndarray, rows) -> float:
        return float(self.metric(self.y[rows, 0], pred[:, 0]))

    def better(self, a: float, b: float) -> bool:
        return a > b if self.higher else a < b


def quiet(*_):
    pass


def smooth_table(n: int, seed: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    """A target that varies smoothly with two numbers, shifted by a three-level category; a noise column, a column
    with missing numbers, a name-like text column (a level per row) and a constant one."""
    rng = np.random.default_rng(seed)
    x1, x2 = rng.uniform(-2, 2, n), rng.uniform(-2, 2, n)
    colour = rng.choice(["red", "green", "blue"], n)
    y = np.sin(2 * x1) + 0.5 * x2**2 + pd.Series(colour).map({"red": 1.0, "green": 0.0, "blue": -1.0}).to_numpy()
    y += rng.normal(0, 0.05, n)
    patchy = np.where(rng.random(n) < 0.2, np.nan, rng.normal(size=n))
    table = pd.DataFrame(
        {
            "x1": x1,
            "x2": x2,
            "noise": rng.normal(size=n),
            "patchy": patchy,
            "colour": colour,
            "name": [f"passenger {i}" for i in range(n)],
            "same": 1.0,
        }
    )
    return table, y


def test_features_standardise_numbers_one_hot_categories_and_leave_out_names():
    table, y = smooth_table(200)
    task = FrameTask(table, y, [{"kind": "regression"}], 40, rmse, higher=False)
    feats = classical_tab.features(task, log=quiet)
    # x1, x2, noise, patchy and its missing indicator, three colours; the names and the constant left out
    assert feats.train.shape == (160, 8) and feats.test.shape == (40, 8)
    assert feats.what.startswith("5 standardised numbers and 1 one-hot categories")
    np.testing.assert_allclose(feats.train[:, :3].mean(axis=0), 0, atol=1e-9)
    np.testing.assert_allclose(feats.train[:, :3].std(axis=0), 1, atol=1e-9)
    assert np.isfinite(feats.train).all() and set(np.unique(feats.train[:, -3:])) == {0.0, 1.0}
    ridges = ["ridge (alpha=1)", "ridge (alpha=10)", "ridge (alpha=100)"]
    # and the ridges on the 5 columns most correlated with the value (10 and 20 are not below 8 columns)
    best = [f"{r} on the 5 columns most correlated with the value" for r in ridges]
    assert list(feats.models) == ["gaussian process", *ridges, *best]


def test_the_gaussian_process_beats_boosted_trees_on_a_smooth_target():
    table, y = smooth_table(400)
    task = FrameTask(table, y, [{"kind": "regression"}], 50, rmse, higher=False)
    result = fit_candidate(task, classical_tab.features(task, log=quiet), log=quiet)
    fit, val = task.split
    X = pd.get_dummies(task.train.inputs[TABULAR.name].drop(columns="name"), dtype=float).to_numpy()
    trees = HistGradientBoostingRegressor(random_state=0).fit(X[fit], y[fit]).predict(X[val])
    assert result.val_score < 0.5 * rmse(y[val], trees), (result.val_score, rmse(y[val], trees))
    assert result.details["chosen"] == "gaussian process"  # chosen over the ridges by cross-validation
    assert all(
        result.details["cv"]["gaussian process"] < 0.5 * v for k, v in result.details["cv"].items() if "ridge" in k
    )
    assert result.test_pred.shape == (50, 1) and rmse(y[350:], result.test_pred[:, 0]) < 0.2  # the test rows too


def test_a_value_linear_in_many_heavy_tailed_columns_gets_the_ridge_weighted_as_the_metric_weighs_rows():
    """Sixty heavy-tailed summaries (a side table's), the target a line in them: a kernel with one length scale
    over sixty columns learns little from 500 rows, a ridge learns the line. Under a relative error the ridge
    fits the rows as the metric weighs them, so it beats the same ridge fitted unweighted."""
    rng = np.random.default_rng(3)
    n = 600
    X = rng.lognormal(0, 1, (n, 60))
    y = np.exp(np.log(X[:, :10]).sum(axis=1) / np.sqrt(10)) * (1 + 0.05 * rng.normal(size=n))  # 0.07 to 42
    table = pd.DataFrame(X, columns=[f"s{i}" for i in range(60)])
    task = FrameTask(table, y, [{"kind": "regression"}], 100, rmspe, higher=False)
    feats = classical_tab.features(task, log=quiet)
    result = fit_candidate(task, feats, log=quiet)
    cv = result.details["cv"]
    assert result.details["chosen"].startswith("ridge") and cv[result.details["chosen"]] < 0.7 * cv["gaussian process"]
    fit, val = task.split
    unweighted = feats.models[result.details["chosen"]]("regression").fit(feats.train[fit], y[fit])  # the same model
    assert result.val_score < 0.5 * rmspe(y[val], unweighted.predict(feats.train[val]))  # 0.50 against 1.54
    assert "learnt" not in result.details  # a ridge learns no kernel


def test_the_gaussian_process_learns_its_kernel_on_a_subset_of_many_rows_and_fits_them_all(monkeypatch):
    monkeypatch.setattr(classical_tab, "TUNE_ROWS", 200)
    table, y = smooth_table(600)
    X = classical_tab.features(FrameTask(table, y, [{"kind": "regression"}], 100, rmse, False), log=quiet).train
    gp = classical_tab._gp(X.shape[1]).fit(X[:450], y[:450])
    rows = np.random.default_rng(0).choice(450, 200, replace=False)
    search = classical_tab._kernel_search
    on_subset = GaussianProcessRegressor(gp.kernel, normalize_y=True, optimizer=search, random_state=0)
    on_subset.fit(X[rows], y[rows])
    np.testing.assert_allclose(gp.kernel_.theta, on_subset.kernel_.theta)  # the subset's kernel, kept as learnt
    assert gp.optimizer is search and len(gp.X_train_) == 450  # fitted on every row, its settings intact
    assert rmse(y[450:500], gp.predict(X[450:500])) < rmse(y[450:500], on_subset.predict(X[450:500]))


def test_the_kernel_search_stops_after_its_steps_and_converged_ones_find_the_same_kernel(monkeypatch):
    table, y = smooth_table(300)
    X = classical_tab.features(FrameTask(table, y, [{"kind": "regression"}], 50, rmse, False), log=quiet).train
    steps = []
    likelihood = GaussianProcessRegressor.log_marginal_likelihood
    monkeypatch.setattr(
        GaussianProcessRegressor,
        "log_marginal_likelihood",
        lambda self, *a, **k: (steps.append(1), likelihood(self, *a, **k))[1],
    )

    def search(limit: int) -> tuple[np.ndarray, int]:
        monkeypatch.setattr(classical_tab, "KERNEL_STEPS", limit)
        steps.clear()
        gp = classical_tab._gp(X.shape[1]).fit(X[:250], y[:250])
        return gp.kernel_.theta, len(steps)

    converged, evaluations = search(15_000)
    capped, few = search(3)
    assert evaluations > 10 and few <= 3 * 4 + 1  # a likelihood or two per step; the final fit's one more
    assert np.abs(capped - converged).max() > 0.1  # three steps are not enough here
    np.testing.assert_allclose(search(evaluations)[0], converged)  # as many steps as it needed: the same kernel


def test_the_kernel_learnt_on_the_fit_rows_is_recorded_and_can_be_fixed_for_other_rows():
    """Kernel searches cost ~40 s each on 2 cores: the one on the fit rows is recorded, and a cross-validation's
    folds fit with it fixed (predict_outputs with it) rather than searching again."""
    table, y = smooth_table(300)
    task = FrameTask(table, y, [{"kind": "regression"}], 50, rmse, higher=False)
    feats = classical_tab.features(task, log=quiet)
    result = fit_candidate(task, feats, log=quiet)
    (learnt,) = result.details["learnt"]
    fit, _ = task.split
    on_fit = classical_tab._gp(feats.train.shape[1]).fit(feats.train[fit], y[fit])
    np.testing.assert_allclose(learnt, on_fit.kernel_.theta)  # the kernel the fit rows taught
    model, every = feats.models["gaussian process"], np.arange(len(task.y))
    fixed = predict_outputs(task, model, feats.train, every, feats.test, [learnt])
    by_hand = classical_tab._gp(feats.train.shape[1])
    by_hand.kernel, by_hand.optimizer = on_fit.kernel_, None
    np.testing.assert_allclose(fixed[:, 0], by_hand.fit(feats.train[every], y[every]).predict(feats.test))
    searched = predict_outputs(task, model, feats.train, every, feats.test)  # a kernel searched on every row
    np.testing.assert_allclose(result.test_pred, searched)  # the refit on every row searches again
    assert not np.allclose(searched, fixed)
    assert rmse(y[250:], fixed[:, 0]) < 0.2  # and the fixed kernel predicts as well


def test_classes_get_a_machine_or_a_logistic_regression_chosen_on_the_fit_rows():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(300, 2))
    ring = (np.hypot(x[:, 0], x[:, 1]) > 1.1).astype(float)  # no line separates a ring from its centre
    task = FrameTask(pd.DataFrame(x, columns=["a", "b"]), ring, [{"kind": "binary"}], 50, roc_auc, higher=True)
    feats = classical_tab.features(task, log=quiet)
    assert set(feats.models) == {"logistic (C=1)", "logistic (C=0.1)", "logistic (C=3)", "logistic (C=0.3)", "svm"}
    result = fit_candidate(task, feats, log=quiet)
    cv = result.details["cv"]
    assert result.details["chosen"] == "svm" and cv["svm"] > max(cv["logistic (C=1)"], cv["logistic (C=0.1)"]) + 0.2
    assert result.val_score > 0.9 and ((result.test_pred >= 0) & (result.test_pred <= 1)).all()


def test_many_classes_skip_the_machine_and_mixed_outputs_pair_the_models():
    table, y = smooth_table(100)
    many = FrameTask(table, y, [{"kind": "multiclass", "n_classes": 40}], 20, rmse, higher=False)
    assert list(classical_tab.features(many, log=quiet).models) == [
        "logistic (C=1)",
        "logistic (C=0.1)",
        "logistic (C=3)",
        "logistic (C=0.3)",
    ]  # a machine per pair of 40 classes
    both = np.column_stack([y, y > 0])  # a value and a label
    mixed = FrameTask(table, both, [{"kind": "regression"}, {"kind": "binary"}], 20, rmse, higher=False)
    models = classical_tab.features(mixed, log=quiet).models
    assert set(models) == {
        "gaussian process and logistic (C=1)",
        "gaussian process and logistic (C=0.1)",
        "gaussian process and logistic (C=3)",
        "gaussian process and logistic (C=0.3)",
        "gaussian process and svm",
    }
    pair = models["gaussian process and svm"]
    assert isinstance(pair("regression"), GaussianProcessRegressor) and isinstance(pair("binary").estimator, SVC)
    rare = FrameTask(table, np.arange(100) % 10 == 0, [{"kind": "binary"}], 20, rmse, higher=False)  # 8 train 1s
    assert list(classical_tab.features(rare, log=quiet).models) == [
        "logistic (C=1)",
        "logistic (C=0.1)",
        "logistic (C=3)",
        "logistic (C=0.3)",
    ]  # too few to calibrate a machine


def test_applies_to_small_tables_only():
    table, y = smooth_table(50)
    assert classical_tab.applies(FrameTask(table, y, [{"kind": "regression"}], 10, rmse, higher=False)) is None
    big = SimpleNamespace(
        modalities=[TABULAR.name],
        y=np.zeros((classical_tab.MAX_ROWS + 1, 1)),
        outputs=[{"kind": "binary"}],
        test=SimpleNamespace(inputs={TABULAR.name: range(10)}),
    )
    assert "cost the cube of the rows" in classical_tab.applies(big)
    assert classical_tab.applies(SimpleNamespace(modalities=[TEXT.name], y=np.zeros((5, 1)))) == "no tab input"
    # a Gaussian process per value: two values on 1,500 rows are within the work of one on 2,000, thirty are not
    values = lambda k, rows, test=10: SimpleNamespace(  # noqa: E731
        modalities=[TABULAR.name],
        y=np.zeros((rows, k)),
        outputs=[{"kind": "regression"}] * k,
        test=SimpleNamespace(inputs={TABULAR.name: range(test)}),
    )
    assert classical_tab.applies(values(2, 1500)) is None and classical_tab.applies(values(1, 2000)) is None
    assert "30 values to predict on 1000 rows" in classical_tab.applies(values(30, 1000))
    # one value: its kernel is learnt on TUNE_ROWS rows, and the fits on every row are cheap up to MAX_ROWS
    assert classical_tab.applies(values(1, classical_tab.MAX_ROWS)) is None
    assert classical_tab.applies(values(1, classical_tab.MAX_ROWS + 1)) is None  # fitted on a sample
    # a process on a sample still predicts every validation and test row: a million train and test rows at most
    assert "cost the cube of the rows" in classical_tab.applies(values(1, 9000, classical_tab.PREDICTED_ROWS - 8999))
    assert "2 values to predict on 2001 rows" in classical_tab.applies(values(2, 2001))
    classes = SimpleNamespace(modalities=[TABULAR.name], y=np.zeros((1500, 30)), outputs=[{"kind": "binary"}] * 30)
    assert classical_tab.applies(classes) is None  # machines and logistic regressions: no cube


def test_larger_tables_fit_a_process_with_a_kernel_learnt_on_a_sample_and_classes_a_logistic_regression(monkeypatch):
    monkeypatch.setattr(classical_tab, "TUNE_ROWS", 200)
    table, y = smooth_table(2600, seed=3)
    task = FrameTask(table, y, [{"kind": "regression"}], 300, rmse, higher=False)
    assert classical_tab.applies(task) is None
    searches = []

    class Counted(GaussianProcessRegressor):  # the process that learns a kernel on a sample of the rows
        def fit(self, X, y):
            searches.append(len(X))
            return super().fit(X, y)

    monkeypatch.setattr(classical_tab, "GaussianProcessRegressor", Counted)
    result = fit_candidate(task, classical_tab.features(task, log=quiet), log=quiet)
    assert result.val_score < 0.1  # the noise is 0.05: a smooth function of two numbers and a category
    # the kernel is learnt once, on a sample of the fit rows; the refit on every row keeps it
    assert searches == [200] and "refitted on all 2300 rows" in result.plan
    assert np.sqrt(np.mean((result.test_pred[:, 0] - result.validated_test_pred[:, 0]) ** 2)) < 0.05
    # a process predicts in blocks of PREDICT_ROWS rows: the same means as in one
    feats = classical_tab.features(task, log=quiet)
    gp = classical_tab._gp(feats.train.shape[1]).fit(feats.train, task.y[:, 0])
    whole = gp.predict(feats.train[:500])
    monkeypatch.setattr(classical_tab, "PREDICT_ROWS", 64)
    np.testing.assert_allclose(gp.predict(feats.train[:500]), whole, rtol=1e-9, atol=1e-9)
    # classes on more than SVM_ROWS rows: a logistic regression alone (a machine would fit ~30 times on them)
    labels = FrameTask(table, y > 0, [{"kind": "binary"}], 300, roc_auc, higher=True)
    assert len(labels.y) > classical_tab.SVM_ROWS and classical_tab.applies(labels) is None
    assert list(classical_tab.features(labels, log=quiet).models) == [
        "logistic (C=1)",
        "logistic (C=0.1)",
        "logistic (C=3)",
        "logistic (C=0.3)",
    ]


def test_a_value_on_more_rows_than_a_process_takes_is_learnt_from_a_random_sample_of_them(monkeypatch):
    monkeypatch.setattr(classical_tab, "TUNE_ROWS", 200)
    monkeypatch.setattr(classical_tab, "MAX_ROWS", 600)
    table, y = smooth_table(1500, seed=4)
    task = FrameTask(table, y, [{"kind": "regression"}], 300, rmse, higher=False)
    assert classical_tab.applies(task) is None
    feats = classical_tab.features(task, log=quiet)
    assert "fits on 600 of the rows it is given" in feats.what
    gp = classical_tab._gp(feats.train.shape[1]).fit(feats.train, task.y[:, 0])
    assert gp.X_train_.shape[0] == 600 and len(np.unique(gp.X_train_, axis=0)) == 600  # distinct rows, not the first
    assert not np.array_equal(gp.X_train_, feats.train[:600])
    result = fit_candidate(task, feats, log=quiet)
    assert result.val_score < 0.1  # as well as from every row: the noise is 0.05
    classes = FrameTask(table, y > 0, [{"kind": "binary"}], 300, roc_auc, higher=True)
    assert "cost the cube of the rows" in classical_tab.applies(classes)  # classes: MAX_ROWS at most


def test_a_relative_error_fits_the_rows_it_scores_weighted_as_it_weighs_them():
    """Under RMSPE a classical model learns neither the zero targets RMSPE skips nor the rows alike: a model that
    takes row weights (boosting; a pipeline's last step) is fitted as by hand on the non-zero rows at 1/y^2, and
    predicts the relative error better than when it learns every row unweighted."""
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from tools.metrics import relative_weights, rmspe

    rng = np.random.default_rng(0)
    n = 1500
    x = rng.normal(size=(n, 3))
    y = np.exp(1.5 * x[:, 0] + rng.normal(0, 0.5, n)) * (rng.random(n) > 0.15)  # spread out, a sixth 0
    task = FrameTask(pd.DataFrame(x), y, [{"kind": "regression"}], 500, rmspe, higher=False)
    rows, test = np.arange(1000), x[1000:]
    kept = rows[y[rows] > 0]
    weight = relative_weights("rmspe", y[kept])
    boosting = lambda kind: HistGradientBoostingRegressor(random_state=0)  # noqa: E731
    fitted = predict_outputs(task, boosting, x[:1000], rows, test)[:, 0]
    by_hand = HistGradientBoostingRegressor(random_state=0).fit(x[kept], y[kept], sample_weight=weight)
    np.testing.assert_allclose(fitted, by_hand.predict(test))
    linear = lambda kind: make_pipeline(StandardScaler(), Ridge())  # noqa: E731
    by_hand = make_pipeline(StandardScaler(), Ridge()).fit(x[kept], y[kept], ridge__sample_weight=weight)
    np.testing.assert_allclose(predict_outputs(task, linear, x[:1000], rows, test)[:, 0], by_hand.predict(test))
    plain = HistGradientBoostingRegressor(random_state=0).fit(x[:1000], y[:1000]).predict(test)
    assert rmspe(y[1000:], fitted) < 0.8 * rmspe(y[1000:], plain)


def test_a_skewed_count_is_standardised_as_its_log_and_the_logistic_penalty_is_chosen_on_the_fit_rows():
    """Counts of many rare events (most rows 0, a few large): a linear model reads their log1p, standardised, and
    its penalty is chosen by cross-validation; 60 such columns, 3 of them the signal, on 300 rows want the stronger one (a log loss punishes the weaker one's
    confidence)."""
    rng = np.random.default_rng(0)
    counts = rng.negative_binomial(0.3, 0.05, size=(400, 60)).astype(float)
    logit = np.log1p(counts[:, :3]).sum(axis=1) - 2.5
    y = (rng.random(400) < 1 / (1 + np.exp(-logit))).astype(float)
    task = FrameTask(pd.DataFrame(counts).add_prefix("feat_"), y, [{"kind": "binary"}], 100, log_loss, higher=False)
    feats = classical_tab.features(task, log=quiet)
    logged = np.log1p(counts[:300, 0])  # standardised on the train rows (no target involved)
    np.testing.assert_allclose(feats.train[:, 0], (logged - logged.mean()) / logged.std(), rtol=1e-6)
    result = fit_candidate(task, feats, log=quiet)
    cv = result.details["cv"]
    assert result.details["chosen"] == "logistic (C=0.1)" and cv["logistic (C=1)"] > cv["logistic (C=0.1)"] + 0.1, cv
    # a column of both signs, or one barely skewed, stays as it is
    wide = FrameTask(
        pd.DataFrame({"a": rng.normal(size=200), "b": rng.uniform(0, 5, 200)}),
        y[:200],
        [{"kind": "binary"}],
        50,
        roc_auc,
        higher=True,
    )
    X = classical_tab.features(wide, log=quiet).train
    for j, column in enumerate("ab"):
        v = wide.train.inputs["tab"][column].to_numpy()
        np.testing.assert_allclose(X[:, j], (v - v.mean()) / v.std(), rtol=1e-6)


def test_rare_counts_stay_in_log_units_so_the_penalty_keeps_their_noise_small():
    """Five common counts carry the label, eighty rare ones (mostly 0) are noise: standardised, a rare count's few
    1s become 6s and the logistic regression fits them; in log units (centred, not scaled up) the penalty keeps
    them small, and the candidate beats the standardised model at its best penalty."""
    rng = np.random.default_rng(1)
    n = 800
    y = rng.integers(0, 2, n)
    common = rng.poisson(np.where(y[:, None] == 1, [2.0, 1.0, 0.5, 2.0, 1.0], [1.0, 2.0, 1.0, 0.5, 1.5]), (n, 5))
    counts = np.hstack([common, rng.poisson(0.03, (n, 80))]).astype(float)
    task = FrameTask(pd.DataFrame(counts).add_prefix("dept_"), y, [{"kind": "binary"}], 200, log_loss, higher=False)
    feats = classical_tab.features(task, log=quiet)
    logged = np.log1p(counts[:600, 5])
    assert logged.std() < 1
    np.testing.assert_allclose(feats.train[:, 5], logged - logged.mean(), atol=1e-9)  # centred, not scaled
    z = np.column_stack([standardised(counts[:600, j], np.arange(600))[0] for j in range(counts.shape[1])])
    fit, val = task.split
    result = fit_candidate(task, feats, log=quiet)
    standard = [
        log_loss(y[val], LogisticRegression(C=c, max_iter=3000).fit(z[fit], y[fit]).predict_proba(z[val])[:, 1])
        for c in classical_tab.LOGISTIC_C
    ]
    assert result.details["chosen"].startswith("logistic") and result.val_score < 0.8 * min(standard)


def test_a_many_level_category_is_one_hot_in_the_levels_train_and_test_share():
    """Crimes at 200 addresses, each address's own odds: its levels that train holds three times or more and the
    test holds too are columns, so the model learns each address; a household id that never crosses into the test
    adds none (it would teach the test nothing). The addresses' levels lift the AUC far above the numbers alone."""
    rng = np.random.default_rng(5)
    n, n_test = 2400, 400
    address = rng.integers(0, 200, n)
    odds = rng.normal(0, 2, 200)[address] + rng.normal(0, 0.5, n)
    y = (rng.random(n) < 1 / (1 + np.exp(-odds))).astype(float)
    household = np.where(np.arange(n) < n - n_test, rng.integers(0, 300, n), 1000 + rng.integers(0, 100, n))
    table = pd.DataFrame(
        {
            "address": [f"{a} Main St" for a in address],
            "household": [f"h{h}" for h in household],
            "noise": rng.normal(size=n),
        }
    )
    task = FrameTask(table, y, [{"kind": "binary"}], n_test, roc_auc, higher=True)
    feats = classical_tab.features(task, log=quiet)
    shared = pd.Series(address[: n - n_test]).value_counts()
    shared = shared[(shared >= classical_tab.LEVEL_ROWS) & shared.index.isin(address[n - n_test :])]
    assert feats.train.shape[1] == 1 + len(shared) + 1  # noise, the shared addresses, one "other"; no household
    alone = classical_tab.features(FrameTask(table[["noise"]], y, task.outputs, n_test, roc_auc, True), log=quiet)
    with_levels = fit_candidate(task, feats, log=quiet).val_score
    without = fit_candidate(task, alone, log=quiet).val_score
    assert with_levels > 0.75 and with_levels > without + 0.2, (with_levels, without)


def test_a_linear_model_is_also_offered_the_tables_own_columns_and_chosen_there_where_the_engineered_are_noise():
    """Six classes on 400 rows from two columns of the table's own, beside forty engineered columns of noise (each
    costs a multinomial logistic regression six weights): every logistic regression is also fitted on the table's
    own columns, and cross-validation takes that one; without engineered columns nothing is added."""
    rng = np.random.default_rng(0)
    n = 500
    own = rng.normal(size=(n, 2))
    y = np.digitize(own[:, 0] + 0.5 * own[:, 1] + rng.normal(0, 0.3, n), [-1.2, -0.5, 0, 0.5, 1.2]).astype(float)
    noise = pd.DataFrame(rng.normal(size=(n, 40))).add_prefix("made_")
    table = pd.concat([pd.DataFrame(own, columns=["a", "b"]), noise], axis=1)
    task = FrameTask(table, y, [{"kind": "multiclass", "n_classes": 6}], 100, multi_log_loss, higher=False)
    task.score = lambda pred, rows: multi_log_loss(task.y[rows, 0].astype(int), pred)  # the classes' columns
    assert not any("own columns" in m for m in classical_tab.features(task, log=quiet).models)
    task.engineered = tuple(noise.columns)
    feats = classical_tab.features(task, log=quiet)
    assert {m for m in feats.models if "own columns" in m} == {
        f"logistic (C={c:g}) on the table's own columns" for c in classical_tab.LOGISTIC_C
    }
    result = fit_candidate(task, feats, log=quiet)
    cv = result.details["cv"]
    assert result.details["chosen"].endswith("on the table's own columns"), cv
    chosen = result.details["chosen"]
    assert cv[chosen] < cv[chosen.removesuffix(" on the table's own columns")] - 0.02, cv
    assert result.test_pred.shape == (100, 6) and np.allclose(result.test_pred.sum(axis=1), 1)


def test_a_model_whose_cross_validation_passes_the_deadline_stops_between_fits_and_the_scored_one_is_kept():
    """A second model starts with time left, then the wall time allotted runs out: it stops before its next fit
    (not after its whole cross-validation), the first model is the choice, and no refit is started."""
    table, y = smooth_table(200)
    task = FrameTask(table, y > 0, [{"kind": "binary"}], 40, roc_auc, higher=True)
    feats = classical_tab.features(task, log=quiet)
    calls = []

    class Deadline:
        def left(self):
            calls.append(1)
            return 100.0 if len(calls) == 1 else 0.0  # time enough to start the second model, then none

    said = []
    result = fit_candidate(task, feats, log=said.append, deadline=Deadline())
    first = next(iter(feats.models))
    assert list(result.details["cv"]) == [first] and result.details["chosen"] == first
    assert any("stopped in its cross-validation" in line for line in said), said
    assert len(calls) == 3  # the second model's start, its first fit's check, the refit's
    assert "not refitted" in result.plan and result.test_pred.shape == (40, 1)


def test_a_table_of_single_level_categories_gives_no_columns_and_no_own_column_models():
    """Every column one level: nothing to learn from, an empty matrix (not an error), and no own-columns variants."""
    table = pd.DataFrame({"a": ["x"] * 60, "b": ["y"] * 60})
    task = FrameTask(table, np.arange(60) % 2, [{"kind": "binary"}], 10, roc_auc, higher=True)
    task.engineered = ("b",)
    feats = classical_tab.features(task, log=quiet)
    assert feats.train.shape == (50, 0) and feats.test.shape == (10, 0)
    assert not any("own columns" in m for m in feats.models)


def test_a_value_carried_by_a_few_of_many_columns_gets_the_ridge_on_the_columns_most_correlated_with_it():
    """A value from 3 of 80 columns on 300 rows: a ridge on all 80 spends its fit on the 77 noise columns, a ridge on
    the columns most correlated with the value (chosen on each fold's rows, so its score stays honest) does not, and
    cross-validation takes it."""
    rng = np.random.default_rng(4)
    n = 360
    X = rng.normal(size=(n, 80))
    y = X[:, 0] + 0.7 * X[:, 1] - 0.5 * X[:, 2] + rng.normal(0, 0.5, n)
    table = pd.DataFrame(X).add_prefix("c")
    task = FrameTask(table, y, [{"kind": "regression"}], 60, rmse, higher=False)
    feats = classical_tab.features(task, log=quiet)
    result = fit_candidate(task, feats, log=quiet)
    cv, chosen = result.details["cv"], result.details["chosen"]
    assert "columns most correlated with the value" in chosen, cv
    assert cv[chosen] < 0.9 * min(cv[f"ridge (alpha={a:g})"] for a in classical_tab.RIDGE_ALPHA), cv


def test_a_key_set_aside_is_read_by_the_own_column_models_alone():
    """A text key the features replaced by its encoding (TaskData.set_aside): its shared levels are one-hot beside the
    table's own columns, where a level's effect is learnt, and kept from the models that read the encodings too."""
    rng = np.random.default_rng(2)
    n = 600
    key = np.array([f"m{i}" for i in rng.integers(0, 20, n)])
    effect = pd.Series(rng.normal(0, 1.5, 20), index=[f"m{i}" for i in range(20)])
    x = rng.normal(size=n)
    y = (x + effect[key].to_numpy() > 0).astype(float)
    table = pd.DataFrame({"x": x, "made_noise": rng.normal(size=n)})
    task = FrameTask(table, y, [{"kind": "binary"}], 100, log_loss, higher=False)
    task.engineered = ("made_noise",)
    task.set_aside = {"key": (pd.Series(key[:500]), pd.Series(key[500:]))}
    feats = classical_tab.features(task, log=quiet)
    assert feats.train.shape[1] == 2 + 20  # x, the noise and the key's 20 levels
    plain, own = (
        feats.models["logistic (C=1)"]("classification"),
        feats.models["logistic (C=1) on the table's own columns"]("classification"),
    )
    assert plain.steps[0][1].kw_args["columns"].tolist() == [0, 1]  # x and the noise, not the key
    assert 1 not in own.steps[0][1].kw_args["columns"] and len(own.steps[0][1].kw_args["columns"]) == 21
    result = fit_candidate(task, feats, log=quiet)
    assert result.details["chosen"].endswith("on the table's own columns"), result.details["cv"]


def test_a_penalised_models_probabilities_are_tempered_by_its_folds_where_the_metric_scores_them():
    """Logistic regressions under a heavy penalty on 20 weak columns predict too near the middle: the temperature
    their folds choose sharpens the chosen one's probabilities, and the validation log loss (rows the temperature
    never saw) falls. Under the AUC, which only ranks, nothing is tempered."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(1200, 20))
    y = (rng.random(1200) < 1 / (1 + np.exp(-X @ rng.normal(0, 0.5, 20)))).astype(float)
    table = pd.DataFrame(X, columns=[f"x{i}" for i in range(20)])
    heavy = {f"logistic (C={c:g})": (lambda kind, c=c: LogisticRegression(C=c)) for c in (0.002, 0.003)}
    for metric, higher in ((log_loss, False), (roc_auc, True)):
        task = FrameTask(table, y, [{"kind": "binary"}], 200, metric, higher)
        feats = replace(classical_tab.features(task, log=quiet), models=heavy)
        res = fit_candidate(task, feats, log=quiet)
        t = res.details["temperature"]
        if metric is roc_auc:
            assert t == 1.0 and "tempered" not in res.plan
            continue
        assert t > 1.2 and f"tempered at t={t:g}" in res.plan
        untempered = tempered_probabilities(task, res.val_pred, 1 / t)
        assert res.val_score < task.score(untempered, task.split[1]) - 0.01


def test_tempered_probabilities_keep_each_rows_order_and_sum_to_one():
    task = SimpleNamespace(
        outputs=[{"kind": "multiclass"}, {"kind": "binary"}, {"kind": "regression"}], widths=[3, 1, 1]
    )
    pred = np.array([[0.5, 0.3, 0.2, 0.8, 7.0], [0.1, 0.1, 0.8, 0.3, -2.0], [0.0, 1.0, 0.0, 1.0, 0.5]])
    sharp, soft = tempered_probabilities(task, pred, 2.0), tempered_probabilities(task, pred, 0.5)
    np.testing.assert_allclose(tempered_probabilities(task, pred, 1.0), pred, atol=1e-12)
    np.testing.assert_allclose(sharp[0, :3], np.array([25, 9, 4]) / 38)  # p^2, renormalised
    np.testing.assert_allclose(sharp[:2, 3], [0.64 / 0.68, 0.09 / 0.58])  # P(1)^2 against P(0)^2
    np.testing.assert_allclose(sharp[:, :3].sum(axis=1), 1.0)
    assert (np.argsort(sharp[:2, :3]) == np.argsort(pred[:2, :3])).all()
    assert (abs(soft[:2, 3] - 0.5) < abs(pred[:2, 3] - 0.5)).all()  # nearer the middle
    np.testing.assert_array_equal(sharp[:, 4], pred[:, 4])  # values untouched
    np.testing.assert_allclose(sharp[2, :4], [0.0, 1.0, 0.0, 1.0], atol=1e-12)  # certain stays certain
