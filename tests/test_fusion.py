"""The late-fusion network on tiny finished workspaces (maps, target transform and metric written directly, as a
setup leaves them): it learns from images, texts and tables, sizes its heads from OUTPUTS, matches its loss to
the metric, stops early on the validation score with the best epoch's weights, runs its planned epochs on a slow
machine (max_time is only a safety cap), and refits on every row for a given number of epochs."""

from __future__ import annotations

import json
import sys
import time
import types
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from PIL import Image

from agentk.workspace import Workspace
from tools import fusion, machine, modality_img
from tools.fusion import refit_fusion, train_fusion
from tools.fusion_config import FusionConfig
from tools.heads import output_losses
from tools.task_data import TaskData

# the generated modules a setup writes, reduced to what TaskData uses; spec.json says the outputs and metrics
TRANSFORM = """import json
from dataclasses import replace
from pathlib import Path
import numpy as np
import pandas as pd

SPEC = json.loads((Path(__file__).parent / "spec.json").read_text())
OUTPUTS = [{"name": o["name"], "kind": o["kind"], "n_classes": len(o.get("classes", []))} for o in SPEC["outputs"]]


def transform(df):
    return np.column_stack([df[o["name"]].astype(str).map({c: i for i, c in enumerate(o["classes"])}).to_numpy(float)
                            if "classes" in o else df[o["name"]].to_numpy(float) for o in SPEC["outputs"]])


def inverse_transform(arr):
    arr, out, j = np.asarray(arr, dtype=float), {}, 0
    for o in SPEC["outputs"]:
        if o["kind"] == "multiclass":
            out[o["name"]] = [o["classes"][k] for k in arr[:, j:j + len(o["classes"])].argmax(axis=1)]
            j += len(o["classes"])
        else:
            out[o["name"]] = arr[:, j]
            j += 1
    return pd.DataFrame(out)
"""
METRIC = """import json
from dataclasses import replace
from pathlib import Path
import numpy as np
from tools.metrics import METRICS

SPEC = json.loads((Path(__file__).parent / "spec.json").read_text())
METRIC = SPEC["metrics"][0]
HIGHER_IS_BETTER = METRICS[METRIC].higher_is_better


def metric(y_true, y_pred):
    scores = []
    for o, name in zip(SPEC["outputs"], SPEC["metrics"]):
        truth, guess = y_true[o["name"]], y_pred[o["name"]]
        if o["kind"] == "binary":
            truth = (truth.astype(str) == o["classes"][1]).astype(int)
        elif o["kind"] == "multiclass":
            truth, guess = truth.astype(str), guess.astype(str)
        scores.append(METRICS[name].fn(truth.to_numpy(), guess.to_numpy()))
    return float(np.mean(scores))
"""
QUICK = {
    "image_size": 32,
    "finetune_image": False,
    "finetune_text": False,
    "batch_size": 16,
    "max_epochs": 15,
    "max_time": 60,
}


def workspace(
    ws: Path, outputs: list[dict], metrics: list[str], targets: pd.DataFrame, n_test: int, **inputs: pd.DataFrame
) -> TaskData:
    """A finished setup: per modality a frame over train then test rows; targets for the train rows."""
    ws.mkdir(parents=True, exist_ok=True)
    n = len(targets)
    ids = [f"r{i}" for i in range(n + n_test)]
    for modality, frame in inputs.items():
        frame = frame.reset_index(drop=True)
        for split, rows in (("train", slice(0, n)), ("test", slice(n, n + n_test))):
            frame.iloc[rows].assign(id=ids[rows]).set_index("id").to_csv(ws / f"{split}_{modality}_input_map.csv")
    targets.assign(id=ids[:n]).set_index("id").to_csv(ws / "train_tab_target_map.csv")
    (ws / "spec.json").write_text(json.dumps({"outputs": outputs, "metrics": metrics}))
    (ws / "code_transform_tab_target_train.py").write_text(TRANSFORM)
    (ws / "code_metric.py").write_text(METRIC)
    (ws / "code_submission_format.py").write_text("")  # only its presence matters here
    return TaskData(ws)


def constant_score(task: TaskData) -> float:
    """The metric of the best constant a model could learn from the fit rows: class shares, or the mean."""
    fit, val = task.split
    y, cols = task.y[fit], []
    for j, (o, w) in enumerate(zip(task.outputs, task.widths)):
        cols.append(
            np.bincount(y[:, j].astype(int), minlength=w) / len(y) if o["kind"] == "multiclass" else [y[:, j].mean()]
        )
    return task.score(np.tile(np.concatenate(cols), (len(val), 1)), val)


def regression_task(ws: Path, metric: str = "rmse", n: int = 240, n_test: int = 30) -> TaskData:
    """y = 3 x1 - 2 x2 + a shift per colour (a text column) + a little noise; x2 has missing values."""
    rng = np.random.default_rng(0)
    x1, x2 = rng.normal(size=n + n_test), rng.normal(size=n + n_test)
    colour = rng.choice(["red", "green", "blue"], n + n_test)
    shift = pd.Series(colour).map({"red": 4.0, "green": 0.0, "blue": -4.0}).to_numpy()
    y = 3 * x1 - 2 * x2 + shift + rng.normal(0, 0.3, n + n_test)
    x2[rng.random(n + n_test) < 0.1] = np.nan
    tab = pd.DataFrame({"x1": x1, "x2": x2, "colour": colour})
    return workspace(ws, [{"name": "y", "kind": "regression"}], [metric], pd.DataFrame({"y": y[:n]}), n_test, tab=tab)


@pytest.fixture(scope="module")
def image_task(tmp_path_factory) -> TaskData:
    """Three classes, the colour of a noisy image gives the class."""
    ws = tmp_path_factory.mktemp("img")
    rng = np.random.default_rng(0)
    colours = {"red": (210, 40, 40), "green": (40, 190, 40), "blue": (40, 40, 210)}
    labels = [list(colours)[i % 3] for i in range(75)]
    (ws / "raw").mkdir()
    for i, label in enumerate(labels):
        pixels = np.clip(np.array(colours[label]) + rng.normal(0, 25, (16, 16, 3)), 0, 255).astype(np.uint8)
        Image.fromarray(pixels).save(ws / "raw" / f"{i}.png")
    img = pd.DataFrame({"path": [f"raw/{i}.png" for i in range(75)]})
    outputs = [{"name": "label", "kind": "multiclass", "classes": list(colours)}]
    return workspace(ws, outputs, ["accuracy"], pd.DataFrame({"label": labels[:60]}), 15, img=img)


@pytest.fixture(scope="module")
def mixed_task(tmp_path_factory) -> TaskData:
    """A binary, a three-class and a regression output from the same two numbers."""
    rng = np.random.default_rng(1)
    x = rng.normal(size=(150, 2))
    targets = pd.DataFrame(
        {
            "flag": np.where(x[:, 0] > 0, "yes", "no"),
            "size": np.array(["s", "m", "l"])[np.digitize(x[:, 1], [-0.5, 0.5])],
            "value": x.sum(axis=1),
        }
    )
    outputs = [
        {"name": "flag", "kind": "binary", "classes": ["no", "yes"]},
        {"name": "size", "kind": "multiclass", "classes": ["s", "m", "l"]},
        {"name": "value", "kind": "regression"},
    ]
    return workspace(
        tmp_path_factory.mktemp("mixed"),
        outputs,
        ["roc_auc", "accuracy", "r2"],
        targets[:120],
        30,
        tab=pd.DataFrame(x, columns=["a", "b"]),
    )


def test_learns_image_classes_and_says_the_backbone_is_random_offline(image_task, monkeypatch):
    monkeypatch.setattr(modality_img, "_cached_weights", lambda cfg: None)  # as on a machine without the weights
    monkeypatch.setattr(modality_img, "_reachable", lambda timeout=3.0: False)
    logged = []
    result = train_fusion(image_task, FusionConfig(pretrained=True, **QUICK), log=logged.append)
    assert result.val_score >= 0.9 > constant_score(image_task) + 0.3
    note = "tiny CNN from random initialisation instead of resnet18 (no pretrained weights offline"
    assert any(note in line for line in logged)
    assert any(note in n for n in result.notes)
    assert result.val_pred.shape == (len(image_task.split[1]), 3) and result.test_pred.shape == (15, 3)
    assert result.device == ("cuda" if torch.cuda.is_available() else "cpu")


def test_learns_a_keyword_with_the_frozen_text_encoder(tmp_path):
    rng = np.random.default_rng(0)
    filler = ["the", "a", "of", "report", "review", "article", "source", "note", "page", "edit", "talk"]
    labels = np.arange(100) % 2
    texts = [
        " ".join(rng.permutation(list(rng.choice(filler, 10)) + [("wonderful" if y else "awful")])) for y in labels
    ]
    task = workspace(
        tmp_path,
        [{"name": "good", "kind": "binary", "classes": ["0", "1"]}],
        ["roc_auc"],
        pd.DataFrame({"good": labels[:80]}),
        20,
        txt=pd.DataFrame({"text": texts}),
    )
    result = train_fusion(task, FusionConfig(**QUICK), log=lambda line: None)
    assert result.val_score >= 0.9  # a constant scores 0.5
    assert any("all-MiniLM-L6-v2 frozen" in note for note in result.notes)
    assert ((result.test_pred >= 0) & (result.test_pred <= 1)).all()


def test_tab_regression_beats_the_mean_and_predicts_in_target_units(tmp_path):
    task = regression_task(tmp_path)
    result = train_fusion(task, FusionConfig(lr=3e-3, max_epochs=40, patience=10), log=lambda line: None)
    assert result.val_score < 0.3 * constant_score(task)  # rmse: the mean's error is about 5.4
    # un-standardised: predictions spread like the targets, not like z-scores
    assert result.test_pred.std() > 3


def test_tab_inputs_are_single_precision_numbers_and_32_bit_codes():
    """Half the memory of float64/int64: on 5 M rows x 54 numbers and 44 codes, gigabytes."""
    from tools.modality_tab import tab_features

    frame = pd.DataFrame({"x": [1.5, np.nan, 3.25, 4.75], "flag": [0, 1, 1, 0], "c": list("abaz")})
    num, cat, cards = tab_features(frame, np.arange(3))
    assert num.dtype == torch.float32 and cat.dtype == torch.int32 and cat.shape == (4, 2) and cards == [3, 3]
    assert num.shape == (4, 3)  # x, its missing indicator, flag
    assert cat[3, 1].item() == 0  # a level unseen in the fit rows: code 0


def test_heads_have_the_widths_of_binary_multiclass_and_regression_outputs(mixed_task):
    result = train_fusion(mixed_task, FusionConfig(max_epochs=5), log=lambda line: None)
    n_val = len(mixed_task.split[1])
    assert result.val_pred.shape == (n_val, 5) and result.test_pred.shape == (30, 5)
    flag, size = result.test_pred[:, 0], result.test_pred[:, 1:4]
    assert ((flag > 0) & (flag < 1)).all()
    np.testing.assert_allclose(size.sum(axis=1), 1, rtol=1e-5)
    assert np.isfinite(result.val_score) and np.isfinite(result.stop_loss)


def test_loss_follows_the_metric():
    outputs = [{"kind": "binary"}, {"kind": "multiclass", "n_classes": 3}, {"kind": "regression"}]
    assert output_losses(outputs, "rmse") == ["bce", "ce", "mse"]
    assert output_losses(outputs, "mae") == ["bce", "ce", "l1"]
    assert output_losses(outputs[2:], "median_ae") == ["l1"]


@pytest.mark.parametrize("metric", ["mae", "rmse"])
def test_mae_trains_towards_the_median_and_rmse_towards_the_mean(tmp_path, metric):
    """Targets without signal and a long right tail (mean 2.6, median 0.64): L1 pulls predictions towards the
    median, squared error towards the mean."""
    rng = np.random.default_rng(0)
    n = 300
    y = rng.exponential(1.0, n) ** 2
    tab = pd.DataFrame({"noise": rng.normal(size=n + 20)})
    task = workspace(tmp_path, [{"name": "y", "kind": "regression"}], [metric], pd.DataFrame({"y": y}), 20, tab=tab)
    typical = np.median(train_fusion(task, FusionConfig(max_epochs=20, lr=1e-2), log=lambda line: None).val_pred)
    to_median, to_mean = abs(typical - np.median(y)), abs(typical - y.mean())
    assert to_median < to_mean if metric == "mae" else to_mean < to_median


def test_rmspe_trains_towards_its_own_best_constant_the_weighted_mean(tmp_path):
    """Targets without signal spread over two orders of magnitude (mean 2.0): weighted by 1/y^2 as RMSPE weighs
    them, squared error pulls predictions towards RMSPE's best constant sum(1/y) / sum(1/y^2) (0.11), not the
    mean (unweighted: 1.39); and the batch loss is the weighted mean of the rows' losses."""
    from tools.heads import head_loss

    rng = np.random.default_rng(0)
    n = 300
    y = np.exp(rng.normal(0, 1.2, n))
    tab = pd.DataFrame({"noise": rng.normal(size=n + 20)})
    task = workspace(tmp_path, [{"name": "y", "kind": "regression"}], ["rmspe"], pd.DataFrame({"y": y}), 20, tab=tab)
    typical = np.median(train_fusion(task, FusionConfig(max_epochs=20, lr=1e-2), log=lambda line: None).val_pred)
    best = np.sum(1 / y) / np.sum(1 / y**2)
    assert abs(typical - best) < abs(typical - y.mean()) / 4
    z, t, w = (
        torch.tensor([[1.0], [2.0], [4.0]]),
        torch.tensor([[0.0], [0.0], [0.0]]),
        torch.tensor([[3.0], [1.0], [0.0]]),
    )
    assert head_loss([z], t, ["mse"], w).item() == pytest.approx((3 * 1 + 1 * 4) / 4)
    assert head_loss([z], t, ["mse"], torch.ones(3, 1)).item() == pytest.approx(head_loss([z], t, ["mse"]).item())


def test_early_stopping_keeps_the_best_epoch_on_the_stop_rows(mixed_task):
    cfg = FusionConfig(lr=1e-2, max_epochs=60, patience=3, seed=3)
    result = train_fusion(mixed_task, cfg, log=lambda line: None)
    scores = [h["stop_score"] for h in result.history]
    assert result.epochs_run == len(scores) < 60
    assert result.best_epoch == int(np.argmax(scores)) + 1  # the first epoch reaching the highest score
    assert result.epochs_run - result.best_epoch == cfg.patience
    best = result.history[result.best_epoch - 1]
    assert (result.stop_score, result.stop_loss) == (best["stop_score"], best["stop_loss"])
    assert mixed_task.score(result.val_pred, mixed_task.split[1]) == pytest.approx(result.val_score)
    # the test predictions come from the best epoch's weights: a run that ends there predicts the same
    again = train_fusion(
        mixed_task, FusionConfig(lr=1e-2, max_epochs=result.best_epoch, patience=3, seed=3), log=lambda line: None
    )
    np.testing.assert_allclose(again.test_pred, result.test_pred, rtol=1e-6)


def test_a_coarse_metrics_plateau_with_a_falling_loss_is_not_a_stall(tmp_path):
    """Accuracy on imbalanced classes stays at the majority's share while the network learns: patience counts
    epochs without progress, and the same score with a lower stop loss is progress. (Stopping there ended a third
    of image-grades-qwk's trials at QWK 0.)"""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(440, 3))
    y = np.array(["s", "m", "l"])[np.digitize(x[:, 0] + 0.5 * x[:, 1], [1.0, 1.6])]  # 86 % "s"
    outputs = [{"name": "size", "kind": "multiclass", "classes": ["s", "m", "l"]}]
    task = workspace(
        tmp_path, outputs, ["accuracy"], pd.DataFrame({"size": y[:400]}), 40, tab=pd.DataFrame(x, columns=list("abc"))
    )
    cfg = FusionConfig(lr=3e-4, max_epochs=40, patience=3, seed=0)
    result = train_fusion(task, cfg, log=lambda line: None)
    scores = [h["stop_score"] for h in result.history]
    losses = [h["stop_loss"] for h in result.history]
    plateau = next(i for i, s in enumerate(scores) if s != scores[0])  # epochs at the first score
    assert plateau > cfg.patience + 1 and all(np.diff(losses[:plateau]) < 0)  # flat score, falling loss
    assert result.stop_score > scores[0] + 0.05 and result.best_epoch > plateau  # it went on and learnt
    assert result.epochs_run - result.best_epoch >= cfg.patience  # and still stopped on its patience


def test_max_time_stops_training(tmp_path):
    task = regression_task(tmp_path, n=2000)
    torch.optim.Adam([torch.zeros(1, requires_grad=True)])  # torch loads its compiler on the first optimiser: not timed
    result = train_fusion(task, FusionConfig(max_epochs=100_000, patience=100_000, max_time=2.0), log=lambda line: None)
    assert 1 <= result.epochs_run < 100_000
    assert result.seconds < 6
    assert result.history[-1]["seconds"] < 4  # no epoch starts after the deadline
    assert result.capped and any("SAFETY CAP" in note for note in result.notes)  # said loudly


def test_a_slowed_down_machine_runs_the_same_planned_epochs(mixed_task, monkeypatch):
    cfg = FusionConfig(max_epochs=5, patience=100, seed=2, max_time=120)
    idle = train_fusion(mixed_task, cfg, log=lambda line: None)
    epoch = fusion._epoch

    def busy(*args):  # every epoch's training pass takes longer, as on a machine running other work
        time.sleep(0.4)
        return epoch(*args)

    monkeypatch.setattr(fusion, "_epoch", busy)
    loaded = train_fusion(mixed_task, cfg, log=lambda line: None)
    assert loaded.seconds > idle.seconds + 1.5
    assert loaded.epochs_run == idle.epochs_run == 5 and not loaded.capped
    np.testing.assert_array_equal(loaded.val_pred, idle.val_pred)  # the same result, only later
    np.testing.assert_array_equal(loaded.test_pred, idle.test_pred)


def test_an_epoch_trains_on_a_fresh_sample_of_epoch_rows(mixed_task):
    result = train_fusion(mixed_task, FusionConfig(max_epochs=3, batch_size=16, epoch_rows=40), log=lambda line: None)
    assert [h["samples"] for h in result.history] == [48] * 3  # whole batches: 3 of 16
    full = train_fusion(mixed_task, FusionConfig(max_epochs=1, batch_size=16), log=lambda line: None)
    assert full.history[0]["samples"] == len(mixed_task.holdout(mixed_task.split[0])[0])  # the rows it learns from


def test_a_network_learns_only_the_rows_the_metric_scores(tmp_path):
    """RMSPE skips the rows whose true value is 0: neither a trial nor the refit trains on them."""
    base = regression_task(tmp_path / "base")
    tab = pd.concat([base.train.inputs["tab"], base.test.inputs["tab"]], ignore_index=True)
    y = base.y[:, 0] + 20.0  # positive values, a fifth of them 0
    y[::5] = 0.0
    task = workspace(tmp_path / "rmspe", base.outputs, ["rmspe"], pd.DataFrame({"y": y}), len(base.test), tab=tab)
    learn = task.holdout(task.split[0])[0]
    trial = train_fusion(task, FusionConfig(max_epochs=1, batch_size=16), log=lambda line: None)
    assert trial.history[0]["samples"] == np.count_nonzero(task.y[learn, 0]) < len(learn)
    refit = refit_fusion(task, FusionConfig(batch_size=16), epochs=1, log=lambda line: None)
    assert refit.samples == np.count_nonzero(y) < len(y)


def test_refit_learns_from_every_row_for_the_given_epochs(tmp_path):
    task = regression_task(tmp_path, n=250)
    cfg = FusionConfig(lr=3e-3, seed=1)
    result = refit_fusion(task, cfg, epochs=12, log=lambda line: None)
    assert (result.rows, result.epochs, result.samples) == (250, 12, 12 * 250)  # the validation rows too
    assert not result.capped and result.test_pred.shape == (len(task.test), 1)
    # its test predictions (model space: the target's units) follow the planted function of the test inputs
    tab = task.test.inputs["tab"]
    truth = 3 * tab["x1"] - 2 * tab["x2"].fillna(0) + tab["colour"].map({"red": 4.0, "green": 0.0, "blue": -4.0})
    assert np.corrcoef(truth, result.test_pred[:, 0])[0, 1] > 0.9


def test_a_refit_predicts_the_rows_it_is_checked_on_and_one_astray_is_rejected(tmp_path):
    """The refit also predicts train rows it learnt from (the validation rows, agentk/solve/kinds/network.py), with
    the weights that predict the test: a refit that predicts them clearly worse than its trial did unseen went astray
    (a baseball table's refit tested at RMSE 2.70, its trial at 2.25), and the trial's test predictions stay."""
    from agentk.solve.kinds.network import _astray

    task = regression_task(tmp_path, n=250)
    val = task.split[1]
    cfg = FusionConfig(lr=3e-3, seed=1)
    trained = refit_fusion(task, cfg, epochs=12, log=lambda line: None, held=val, check=val)
    np.testing.assert_allclose(trained.checked_pred, trained.test_pred, rtol=1e-5, atol=1e-6)  # same rows, weights
    untrained = refit_fusion(task, cfg, epochs=0, log=lambda line: None, check=val)
    good, bad = task.score(trained.checked_pred, val), task.score(untrained.checked_pred, val)
    assert not _astray(good, good * 1.05, higher_is_better=False)  # learnt rows fitted at least as well
    assert _astray(bad, good, higher_is_better=False) and _astray(0.70, 0.80, higher_is_better=True)


def test_a_new_modality_needs_only_a_registry_entry_and_its_model_module(tmp_path, monkeypatch):
    """A toy modality (bit strings such as "-++-") registered here, as a newcomer would add one: the map dataset,
    the light net and the fusion net use its pieces without knowing its name."""
    from torch import nn

    from agentk.modalities import MODALITIES, Modality
    from tools.fusion_config import Branch
    from tools.light_net import fit_predict
    from tools.map_dataset import MapDataset

    def bits(cell) -> np.ndarray:
        return np.array([float(c == "+") for c in str(cell)])

    def tensor(cells) -> torch.Tensor:
        return torch.tensor(np.stack([bits(c) for c in cells]), dtype=torch.float32)

    def check_map(frame, name):
        if len(frame.columns) != 1:
            raise ValueError(f"{name}: expected one bit-string column")

    model = types.ModuleType("toy_bits_model")
    model.check_map = check_map
    model.dataset_transform = lambda ws, map_name, options: lambda row: bits(row[0])
    model.light_branch = lambda parts, width: (
        [tensor(ds.inputs["bits"].iloc[idx, 0]) for ds, idx in parts],
        nn.Sequential(nn.Linear(4, width), nn.ReLU()),
        width,
    )
    model.fusion_branch = lambda frame, ws, cfg, fit: Branch(
        nn.Sequential(nn.Linear(4, 8), nn.ReLU()), 8, inputs=tensor(frame.iloc[:, 0]), notes=["bits: 4"]
    )
    monkeypatch.setitem(sys.modules, model.__name__, model)
    monkeypatch.setitem(MODALITIES, "bits", Modality("bits", "bit strings", "", (), "stages.none", model.__name__))

    rng = np.random.default_rng(0)
    codes = ["".join(rng.choice(["-", "+"], 4)) for _ in range(180)]
    flag = np.where([c[0] == "+" for c in codes], "yes", "no")  # the first bit is the class
    task = workspace(
        tmp_path,
        [{"name": "flag", "kind": "binary", "classes": ["no", "yes"]}],
        ["roc_auc"],
        pd.DataFrame({"flag": flag[:150]}),
        30,
        bits=pd.DataFrame({"code": codes}),
    )

    batch = next(MapDataset(tmp_path, "test").batches(5))
    assert batch["bits"].shape == (5, 4) and (batch["bits"] == [bits(c) for c in codes[150:155]]).all()
    result = train_fusion(task, FusionConfig(max_epochs=15, lr=1e-2), log=lambda line: None)
    assert "bits: 4" in result.notes and result.val_score >= 0.95
    fit, val = task.split
    (pred,) = fit_predict(task.train, fit, [(task.train, val)], task.outputs, seed=0)
    assert ((pred[:, 0] > 0.5) == task.y[val, 0]).mean() >= 0.95
    pd.DataFrame({"id": task.test.ids, "a": codes[150:], "b": codes[150:]}).to_csv(
        Workspace(tmp_path).input_map("test", "bits"), index=False
    )
    with pytest.raises(ValueError, match="test_bits_input_map.csv: expected one bit-string column"):
        MapDataset(tmp_path, "test")


def test_the_light_net_starts_at_the_class_shares(tmp_path):
    """Untrained (no epoch), the light net predicts about the fit rows' share of each label and class, not even odds:
    a net of a few epochs over many rare labels then starts from the constant it must beat."""
    from tools.light_net import fit_predict

    rng = np.random.default_rng(0)
    n = 200
    rare = np.where(rng.random(n) < 0.1, "yes", "no")  # a label one row in ten holds
    colour = rng.choice(["red", "green", "blue"], n, p=[0.7, 0.2, 0.1])
    task = workspace(
        tmp_path,
        [
            {"name": "rare", "kind": "binary", "classes": ["no", "yes"]},
            {"name": "colour", "kind": "multiclass", "classes": ["blue", "green", "red"]},
        ],
        ["roc_auc"],
        pd.DataFrame({"rare": rare[:150], "colour": colour[:150]}),
        50,
        tab=pd.DataFrame({"x": rng.normal(size=n)}),
    )
    fit = np.arange(150)
    (pred,) = fit_predict(task.train, fit, [(task.test, None)], task.outputs, max_epochs=0, seed=0)
    y = task.y[fit]
    assert abs(pred[:, 0].mean() - y[:, 0].mean()) < 0.05
    shares = np.bincount(y[:, 1].astype(int), minlength=3) / len(y)
    assert np.abs(pred[:, 1:].mean(axis=0) - shares).max() < 0.05


def test_a_trained_backbone_reads_memory_mapped_images_through_loader_workers(image_task, monkeypatch):
    """Images too large for memory (here: any) are decoded once into a file in the workspace, which the next run
    maps again instead of decoding; a loader worker reads them, and each epoch reports its speed."""
    monkeypatch.setattr(machine, "IN_MEMORY_SHARE", 0.0)
    monkeypatch.setattr(modality_img, "_DECODED", {})  # not the images an earlier test decoded in memory
    cfg = FusionConfig(
        **{**QUICK, "image_size": 16, "finetune_image": True, "pretrained": False, "max_epochs": 2, "lr": 3e-3}
    )
    reports, logged = [], []
    result = train_fusion(image_task, cfg, log=logged.append, on_epoch=reports.append)
    assert result.val_score >= 0.9
    cache = list((image_task.ws / Workspace.CACHE).glob("img_*.npy"))
    assert len(cache) == 1 and any(f"into {cache[0]}" in note for note in result.notes)
    workers = fusion._loader_workers(torch.device(result.device))  # 1 on CPU, every core but one on a GPU
    assert any(f"img: host ({workers} loader workers)" in note for note in result.notes), result.notes
    assert any(note.startswith("shifted, mirrored in training (") for note in result.notes), result.notes  # too few
    assert [r["epoch"] for r in reports] == list(range(1, result.epochs_run + 1))
    assert reports == result.history
    for r in reports:
        assert r["epochs"] == 2 and r["batch_size"] == 16 and r["images_per_s"] > 0
        assert (r["gpu_mem_gb"] is None) == (result.device == "cpu")
        assert np.isfinite(r["train_loss"]) and r["seconds"] <= result.seconds
    pixels = modality_img.ImageTransform(image_task.ws, 16).pixels("raw/7.png")
    np.testing.assert_array_equal(modality_img.MappedImages(cache[0])[[7]][0].numpy(), pixels)
    again = train_fusion(image_task, replace(cfg, max_epochs=1), log=lambda line: None)
    assert any(f"memory-mapped from {cache[0]}" in note for note in again.notes)


def test_augmentation_shifts_and_flips_each_image_on_its_device():
    side = 8
    grid = torch.arange(side * side, dtype=torch.uint8).view(1, side, side, 1)  # pixel value = 8 * row + column
    torch.manual_seed(0)
    out = modality_img.Augment()(grid.expand(64, side, side, 3).contiguous())
    assert out.shape == (64, side, side, 3) and out.dtype == torch.uint8
    flips = set()
    for image in out[..., 0].long():
        rows, cols = image[:, 0] // side, image[0] // side * 0 + image[0] % side
        step = int(torch.sign(cols[-1] - cols[0])) or 1
        flips.add(step)
        # rows and columns are runs of the original's, shifted by at most side/8, edges repeated
        for run, ascending in ((rows, 1), (cols, step)):
            inner = run.clamp(1, side - 2) == run
            assert (run.diff()[inner[1:] & inner[:-1]] == ascending).all()
            assert abs(int(run[side // 2]) - (side // 2 if ascending == 1 else side // 2 - 1)) <= 1
        assert (image == rows[:, None] * side + cols[None, :]).all()
    assert flips == {1, -1}


def test_augmentation_turns_only_as_asked():
    side = 8
    grid = torch.arange(side * side, dtype=torch.uint8).view(1, side, side, 1).expand(64, side, side, 3).contiguous()
    torch.manual_seed(0)
    shifted = modality_img.Augment(mirror=False)(grid)[..., 0].long()
    cols, rows = shifted % side, shifted // side
    assert (cols.diff(dim=2) >= 0).all() and (rows.diff(dim=1) >= 0).all()  # left stays left, top stays top
    turned = modality_img.Augment(mirror=False, upside_down=True, transpose=True)(grid)[..., 0].long()
    cols, rows = turned % side, turned // side
    upside_down = rows[:, -1, 0] < rows[:, 0, 0]
    transposed = (cols[:, :, 0].diff(dim=1) != 0).any(dim=1)  # down the first column, the original's columns change
    assert upside_down.any() and (~upside_down).any() and transposed.any() and (~transposed).any()


def test_final_predictions_average_the_views_training_saw():
    """Test-time augmentation: an output is the mean of the model's outputs for the images as they are and for each
    view the augmentation trained on (here mirrored and upside down, not transposed)."""
    cpu = torch.device("cpu")
    images = torch.randint(0, 256, (10, 4, 4, 3), dtype=torch.uint8, generator=torch.Generator().manual_seed(0))
    feed = fusion.Feed({"img": images}, torch.zeros(10, 1), cpu)
    weights = torch.linspace(-1, 1, 48)[:, None]  # a read-out that tells left from right and top from bottom

    class ReadOut(torch.nn.Module):
        def forward(self, x):
            return [x["img"].float().flatten(1) @ weights]

    model = ReadOut()
    views = modality_img.Augment(mirror=True, upside_down=True).views()
    rows = np.array([7, 2, 5])
    (plain,), _ = fusion._logits(model, feed, rows, 2, cpu)
    (averaged,), _ = fusion._logits(model, feed, rows, 2, cpu, {"img": views})
    x = images[rows].float().flatten(1)
    torch.testing.assert_close(plain, x @ weights, rtol=1e-5, atol=1e-3)
    seen = [images[rows], images[rows].flip(2), images[rows].flip(1)]
    expected = torch.stack([v.float().flatten(1) @ weights for v in seen]).mean(dim=0)
    torch.testing.assert_close(averaged, expected, rtol=1e-5, atol=1e-3)
    assert not torch.allclose(averaged, plain)
    assert modality_img.Augment(mirror=False).views() == []


def _digits_at(side: int) -> torch.Tensor:
    """scikit-learn's 1,797 handwritten digits as decoded images (B, side, side, 3) uint8."""
    from sklearn.datasets import load_digits

    x = torch.tensor(load_digits().images * 16, dtype=torch.float32)[:, None]
    x = torch.nn.functional.interpolate(x, size=side, mode="bilinear").clamp(0, 255).to(torch.uint8)
    return x[:, 0, :, :, None].expand(-1, -1, -1, 3).contiguous()


def test_digits_are_only_shifted_in_training_and_images_alike_turned_are_turned_too():
    digits, fit = _digits_at(32), np.arange(1797)
    aug, why = modality_img.symmetries(digits, fit)
    assert aug == modality_img.Augment(mirror=False) and why.startswith("shifted in training: of 449 fit images, 9")
    # the same digits, each mirrored at random: the collection is its own mirror image, but not upside down
    rng = np.random.default_rng(0)
    coin = [torch.from_numpy(rng.random(1797) < 0.5)[:, None, None, None] for _ in range(3)]
    mirrored = torch.where(coin[0], digits.flip(2), digits)
    aug, why = modality_img.symmetries(mirrored, fit)
    assert aug == modality_img.Augment() and why.startswith("shifted, mirrored in training: ")
    # each also turned upside down and transposed at random (as microscopy or aerial views are): all 8 flips and turns
    turned = torch.where(coin[1], mirrored.flip(1), mirrored)
    turned = torch.where(coin[2], turned.transpose(1, 2), turned)
    aug, why = modality_img.symmetries(turned, fit)
    assert aug == modality_img.Augment(True, True, True), why
    assert why.startswith("shifted, mirrored, turned upside down, transposed in training: ")
    assert modality_img.symmetries(digits, fit[:40])[0] == modality_img.Augment()  # too few to test: mirrored


def test_the_batch_and_the_learning_rate_grow_with_the_gpu_memory(monkeypatch):
    from tools import fusion

    cfg = FusionConfig(batch_size=32, image_size=224, lr=1e-3)
    cpu = torch.device("cpu")
    assert fusion.device_batch(cfg, cpu, 100_000) == 32  # CPU: as configured
    monkeypatch.setattr(fusion, "_total_memory_gb", lambda device: 80.0)  # an H100
    assert fusion.device_batch(cfg, cpu, 100_000) == 256
    assert fusion.device_batch(replace(cfg, image_size=112), cpu, 100_000) == 512  # smaller images, larger batches
    assert fusion.device_batch(cfg, cpu, 1000) == 64  # an epoch keeps at least MIN_STEPS steps
    assert fusion.device_batch(cfg, cpu, 100) == 32  # never below the configured batch
    assert fusion.device_batch(replace(cfg, scale_batch=False), cpu, 100_000) == 32
    monkeypatch.setattr(fusion, "_total_memory_gb", lambda device: 16.0)
    assert fusion.device_batch(cfg, cpu, 100_000) == 32
    assert fusion.scaled_lr(cfg, 128) == pytest.approx(2e-3)  # Adam: the square root of the batch ratio
    assert fusion.scaled_lr(replace(cfg, optimizer="SGD"), 128) == pytest.approx(4e-3)  # SGD: linear


def forget_embeddings(task: TaskData) -> None:
    for path in (task.ws / Workspace.CACHE).glob("emb_*"):
        path.unlink()


def test_a_frozen_encoders_embeddings_are_reused_by_the_next_run_with_the_same_result(image_task):
    cfg = FusionConfig(**{**QUICK, "max_epochs": 3})
    forget_embeddings(image_task)
    first = train_fusion(image_task, cfg, log=lambda line: None)
    again = train_fusion(image_task, replace(cfg, lr=3e-3), log=lambda line: None)  # another HEBO trial
    assert any("embeddings read from emb_" in n for n in again.notes) and not any("read from" in n for n in first.notes)
    (cache,) = (image_task.ws / Workspace.CACHE).glob("emb_*")  # float16 on disk, complete (no .partial left)
    stored = np.load(cache, mmap_mode="r")
    assert cache.name.startswith("emb_img_") and stored.dtype == np.float16
    assert stored.shape[0] == len(image_task.train) + len(image_task.test) and np.abs(stored).sum() > 0
    forget_embeddings(image_task)
    fresh = train_fusion(image_task, replace(cfg, lr=3e-3), log=lambda line: None)
    np.testing.assert_array_equal(again.val_pred, fresh.val_pred)
    other = train_fusion(image_task, replace(cfg, seed=5), log=lambda line: None)  # another random encoder
    assert not any("read from" in n for n in other.notes)


def test_the_validation_rows_choose_nothing_in_training(tmp_path):
    """Early stopping reads the stop rows, a holdout of the fit rows: replacing every validation row's target by
    noise changes the validation score and nothing else, so that score is an honest one to choose solutions by."""
    task = regression_task(tmp_path)
    fit, val = task.split
    learn, stop = task.holdout(fit)
    assert len(np.intersect1d(learn, stop)) == 0 and sorted([*learn, *stop]) == sorted(fit)
    assert abs(len(stop) - 0.2 * len(fit)) <= 2
    cfg = FusionConfig(lr=3e-3, max_epochs=12, patience=3, seed=3)
    result = train_fusion(task, cfg, log=lambda line: None)
    target_map = tmp_path / "train_tab_target_map.csv"
    targets = pd.read_csv(target_map)
    targets.loc[val, "y"] = np.random.default_rng(5).normal(0, 100, len(val))
    targets.to_csv(target_map, index=False)
    noisy = TaskData(tmp_path)
    assert np.array_equal(noisy.split[1], val)
    again = train_fusion(noisy, cfg, log=lambda line: None)
    assert again.best_epoch == result.best_epoch and again.stop_score == result.stop_score
    np.testing.assert_allclose(again.test_pred, result.test_pred, rtol=1e-6)
    assert again.val_score > 10 * result.val_score  # rmse against the noise


def test_a_learn_sample_embeds_and_learns_from_that_many_learning_rows_and_the_refit_reuses_them(image_task):
    """Issue 49: where embedding every row is past the budget, the network embeds a sample of its learning rows;
    the stop, validation and test rows stay whole, and the refit learns from the same rows without embedding
    again."""
    cfg = FusionConfig(**{**QUICK, "max_epochs": 2, "learn_sample": 12})
    fit, val = image_task.split
    learn, stop = image_task.holdout(fit)
    assert len(learn) > 12
    forget_embeddings(image_task)
    result = train_fusion(image_task, cfg, log=lambda line: None)
    embedded = len(image_task.train) + len(image_task.test) - (len(learn) - 12)
    assert any(f"frozen: {embedded} embeddings in" in n for n in result.notes)
    assert result.val_pred.shape == (len(val), 3) and result.test_pred.shape == (15, 3)
    assert result.history[0]["samples"] == 12  # the sample alone trains
    refit = refit_fusion(image_task, cfg, 2, log=lambda line: None)
    assert refit.rows == len(image_task.train) - (len(learn) - 12)
    assert any(f"frozen: {embedded} embeddings read from" in n for n in refit.notes)
    assert refit.test_pred.shape == (15, 3) and np.isfinite(refit.test_pred).all()
    forget_embeddings(image_task)
