"""benchmarks/solve.py's interval of a normalised score: bootstrap resamples of the test rows, the submission and the
constant scored on the same rows, so a figure on a few hundred test rows says how far its test set alone moves it."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from benchmarks.arena import grader
from benchmarks.solve import BOOTSTRAP, compare, interval, mean_interval, normalised_resamples


def write(tmp_path, name: str, ids, column: str, values) -> object:
    path = tmp_path / f"{name}.csv"
    pd.DataFrame({"id": ids, column: values}).to_csv(path, index=False)
    return path


def graded(tmp_path, n: int, right: float, seed: int = 0):
    """A label task of n test rows, a submission right on a share of them, and a constant (one class)."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 2, n)
    pred = np.where(rng.random(n) < right, truth, 1 - truth)
    ids = [f"r{i}" for i in range(n)]
    answers = write(tmp_path, f"answers{n}", ids, "y", truth)
    ours = grader(write(tmp_path, f"ours{n}", ids, "y", pred), answers, "accuracy")
    constant = grader(write(tmp_path, f"const{n}", ids, "y", np.zeros(n, int)), answers, "accuracy")
    return ours, constant


def test_a_normalised_score_on_few_test_rows_has_a_wide_interval_around_it(tmp_path):
    few, many = graded(tmp_path, 200, 0.8), graded(tmp_path, 5000, 0.8)
    widths = []
    for ours, constant in (few, many):
        point = (ours(None) - constant(None)) / (1 - constant(None))
        draws = normalised_resamples(ours, constant, 1.0)
        assert len(draws) == BOOTSTRAP and np.isfinite(draws).all()
        lo, hi = interval(draws)
        assert lo < point < hi
        widths.append(hi - lo)
    assert widths[0] > 3 * widths[1]  # the interval shrinks as 1/sqrt(rows): 25x the rows, 5x narrower
    assert 0.1 < widths[0] < 0.35  # 200 rows of 80 % accuracy against a coin: about +-0.09 in accuracy


def test_resamples_a_metric_cannot_score_are_left_out_and_a_mean_pairs_the_competitions_draws(tmp_path):
    ids = [f"r{i}" for i in range(30)]
    truth = np.r_[np.ones(1, int), np.zeros(29, int)]  # one positive: most resamples lack it or keep it alone
    answers = write(tmp_path, "answers", ids, "y", truth)
    ours = grader(write(tmp_path, "ours", ids, "y", np.linspace(1, 0, 30)), answers, "roc_auc")
    constant = grader(write(tmp_path, "const", ids, "y", np.full(30, 0.5)), answers, "roc_auc")
    draws = normalised_resamples(ours, constant, 1.0)
    assert np.isnan(draws).any() and np.isfinite(draws).any()  # no positive drawn: AUC undefined, left out
    assert interval(draws) == (1.0, 1.0)  # where the positive is drawn, the ranking is perfect
    a, b = np.full(BOOTSTRAP, 0.2), np.r_[np.full(BOOTSTRAP // 2, 0.4), np.full(BOOTSTRAP // 2, np.nan)]
    assert mean_interval([a, b]) == pytest.approx((0.3, 0.3))
    assert mean_interval([a, np.full(BOOTSTRAP, np.nan)]) is None


MODELS = (("RF", 0.9), ("XT", 0.9), ("NN", float("nan")))  # tied on score, and one that failed to score


def test_two_solve_runs_compared_name_each_differing_prediction_and_ignore_times_and_trained_models(tmp_path):
    """The same solve twice differs in what was measured: wall seconds (in records, notes and array archives), a time
    limit set from them, the order of a leaderboard's models tied on score, trained models' pickles; a prediction or
    a score that differs is named."""

    def run(name: str, val: float, seconds: float, pred: list[float], model: bytes) -> object:
        out = tmp_path / name
        sol = out / "iris" / "solutions" / "autogluon"
        (sol / "models").mkdir(parents=True)
        (out / "iris" / "logs").mkdir()
        (out / "solve.json").write_text(json.dumps([{"competition": "iris", "normalised": 1.0}]))
        record = {"id": "autogluon", "val_score": val, "seconds": seconds, "notes": [f"embedded in {seconds}s"]}
        record["time_limit"] = 345 - seconds  # set from the wall time left
        board = [{"model": m, "score_val": score, "fit_time": seconds * i} for i, (m, score) in enumerate(MODELS)]
        (sol / "score.json").write_text(json.dumps(record | {"board": board[:: 1 if seconds < 11 else -1]}))
        np.save(sol / "test_pred.npy", np.array(pred))
        np.savez(sol / "cross_validated.npz", pred=np.array(pred), seconds=np.array([seconds]))
        (sol / "models" / "predictor.pkl").write_bytes(model)  # names its path and time: not compared
        (out / "iris" / "logs" / "solve.log").write_text(f"{seconds} s")
        (out / "iris" / "plan.json").write_text(json.dumps({"workspace": str(out / "iris")}))  # names its run
        return out

    a = run("a", 0.9, 10.3, [0.1, 0.9], b"pickle at 10:00")
    b = run("b", 0.9, 12.8, [0.1, 0.9], b"pickle at 10:01")
    assert compare(a, b) == ["1 competitions: 0 differences, 0 programs differing in a dict's key order"]
    c = run("c", 0.8, 10.3, [0.2, 0.9], b"pickle at 10:00")
    assert compare(a, c) == [
        "iris: solutions/autogluon/cross_validated.npz differs",
        "iris: solutions/autogluon/score.json differs",
        "iris: solutions/autogluon/test_pred.npy differs",
        "1 competitions: 3 differences, 0 programs differing in a dict's key order",
    ]
