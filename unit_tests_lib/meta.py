"""Meta-unit tests (paper A.1.3): they check several stages together and send the episode back to the
first stage they cover when they fail."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from tools.map_dataset import MapDataset
from tools.tabular import encode
from unit_tests_lib.common import fail, load_module, read_map, sample_submission, type_family
from unit_tests_lib.submission import compare_with_sample


def check_train_map_dataset(ws: Path) -> None:
    """The map dataset builds from all train maps plus the target transform and loads a batch."""
    transform = load_module(ws, "code_transform_tab_target_train")
    try:
        ds = MapDataset(ws, "train", transform.transform)
    except ValueError as exc:
        fail(str(exc))
    batch = next(ds.batches(32))
    n = min(32, len(ds))
    if batch["target"].shape != (n, len(transform.OUTPUTS)):
        fail(f"a batch's targets have shape {batch['target'].shape}, expected ({n}, {len(transform.OUTPUTS)})")
    for m in ds.modalities:
        if _rows(batch[m]) != n:
            fail(f"a batch has {_rows(batch[m])} {m} inputs for {n} samples")


def _rows(x) -> int:
    return len(next(iter(x.values()))) if isinstance(x, dict) else len(x)


def check_test_maps(ws: Path) -> None:
    """Test maps have the train maps' columns and types; their ids are the sample submission's."""
    for train_path in sorted(ws.glob("train_*_input_map.csv")):
        name = train_path.name.replace("train_", "test_", 1)
        train, test = read_map(ws, train_path.name), read_map(ws, name)
        if list(train.columns) != list(test.columns):
            extra, missing = set(test.columns) - set(train.columns), set(train.columns) - set(test.columns)
            fail(f"{name} columns differ from {train_path.name}: missing {sorted(missing)[:5]}, extra {sorted(extra)[:5]}; "
                 "build both maps the same way")
        for c in train.columns[1:]:
            a, b = type_family(train[c]), type_family(test[c])
            if a != b and "empty" not in (a, b):
                fail(f"column {c!r} is {a} in {train_path.name} but {b} in {name}: convert both the same way")
        ids, want = set(test["id"]), set(sample_submission(ws).iloc[:, 0].astype(str))
        if ids != want:
            fail(f"{name} ids differ from the sample submission's: {len(want - ids)} missing "
                 f"(e.g. {sorted(want - ids)[:2]}), {len(ids - want)} unknown (e.g. {sorted(ids - want)[:2]})")
    try:
        next(MapDataset(ws, "test").batches(32))
    except ValueError as exc:
        fail(str(exc))


def _fit_predict(kind: str, n_classes: int, x: np.ndarray, y: np.ndarray, x_new: list[np.ndarray]) -> list[np.ndarray]:
    """A small gradient-boosting model for one output: probabilities for classes, values for regression."""
    from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor  # slow import
    if kind == "regression":
        model = HistGradientBoostingRegressor(max_iter=60, random_state=0).fit(x, y)
        return [model.predict(z)[:, None] for z in x_new]
    if len(np.unique(y)) < 2:  # one class seen: predict it with certainty
        width = 1 if kind == "binary" else n_classes
        return [np.tile(_one(kind, n_classes, int(y[0])), (len(z), 1))[:, :width] for z in x_new]
    model = HistGradientBoostingClassifier(max_iter=60, random_state=0).fit(x, y.astype(int))
    outs = []
    for z in x_new:
        p = model.predict_proba(z)
        if kind == "binary":
            outs.append(p[:, list(model.classes_).index(1)][:, None] if 1 in model.classes_ else np.zeros((len(z), 1)))
        else:
            full = np.zeros((len(z), n_classes))
            full[:, model.classes_.astype(int)] = p
            outs.append(full)
    return outs


def _one(kind: str, n: int, c: int) -> np.ndarray:
    return np.array([float(c)]) if kind == "binary" else np.eye(n)[c]


def light_solve(ws: Path, max_rows: int = 3000, seed: int = 0) -> dict:
    """Fit a light model on a subsample, score a held-out part with code_metric, format the test predictions.
    Tabular-only tasks get gradient boosting; image, text and mixed tasks a tiny late-fusion network."""
    transform = load_module(ws, "code_transform_tab_target_train")
    metric = load_module(ws, "code_metric")
    train, test = MapDataset(ws, "train", transform.transform), MapDataset(ws, "test")
    targets = read_map(ws, "train_tab_target_map.csv").set_index("id").loc[train.ids].reset_index(drop=True)
    tabular_only = train.modalities == ["tab"]
    rows = np.random.default_rng(seed).permutation(len(train))[:max_rows if tabular_only else min(max_rows, 1000)]
    cut = max(1, int(0.8 * len(rows)))
    fit_rows, val_rows = rows[:cut], rows[cut:]
    if tabular_only:
        val_pred, test_pred = _boosting(train, test, fit_rows, val_rows, transform.OUTPUTS)
    else:
        from tools.light_net import fit_predict
        val_pred, test_pred = fit_predict(train, fit_rows, [(train, val_rows), (test, None)], transform.OUTPUTS, seed=seed)
    score = float(metric.metric(targets.iloc[val_rows].reset_index(drop=True), transform.inverse_transform(val_pred)))
    formatter, sub = format_with_fallback(ws, pd.Series(test.ids), transform.inverse_transform(test_pred))
    return {"score": score, "higher_is_better": metric.HIGHER_IS_BETTER, "n_fit": len(fit_rows),
            "n_val": len(val_rows), "model": "gradient boosting" if tabular_only else "tiny late-fusion network",
            "formatter": formatter, "submission": sub}


def _boosting(train: MapDataset, test: MapDataset, fit_rows, val_rows, outputs: list[dict]) -> tuple[np.ndarray, np.ndarray]:
    frames = [ds.inputs["tab"].loc[ds.ids].reset_index(drop=True) for ds in (train, test)]
    (x_all, x_test), _ = encode(frames)
    val_parts, test_parts = [], []
    for j, out in enumerate(outputs):
        v, t = _fit_predict(out["kind"], int(out.get("n_classes", 0)), x_all[fit_rows], train.targets[fit_rows, j],
                            [x_all[val_rows], x_test])
        val_parts.append(v)
        test_parts.append(t)
    return np.hstack(val_parts), np.hstack(test_parts)


def format_with_fallback(ws: Path, ids, predictions) -> tuple[str, pd.DataFrame]:
    """The formatter's submission, checked against the sample; the alternative formatter if that fails."""
    errors = []
    for name in ("code_submission_format", "code_submission_format_alt"):
        try:
            sub = load_module(ws, name).format_submission(ids, predictions)
            compare_with_sample(ws, sub, name)
            return name, sub
        except Exception as exc:  # noqa: BLE001 - try the alternative, report both
            errors.append(f"{name}: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}")
    fail("both submission formatters failed: " + " | ".join(errors))


def check_light_solve(ws: Path) -> None:
    """Final test: a light solve on a subsample gives a finite validation metric and a valid submission."""
    import sklearn.ensemble  # noqa: F401 - load OpenMP first: threadpoolctl limits only loaded libraries
    from threadpoolctl import threadpool_limits
    with threadpool_limits(1):  # a light check: several setups side by side must not fight over cores
        result = light_solve(ws)
    if not np.isfinite(result["score"]):
        fail(f"the light solve's validation metric is {result['score']}: the metric, transform or maps are broken")
    out = ws / "solutions" / "light"
    out.mkdir(parents=True, exist_ok=True)
    result.pop("submission").to_csv(out / "submission.csv", index=False)
    (out / "score.json").write_text(json.dumps(result, indent=2))
