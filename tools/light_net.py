"""A tiny late-fusion network for the setup's final light solve on image, text and multimodal tasks: one small
branch per input modality (each modality's model module builds its own), concatenated, one hidden layer, one
head per output. It trains on CPU in seconds: inputs are transformed once into tensors (small images, short
texts), and one thread is used because several setups run side by side."""

from __future__ import annotations

import time

import numpy as np
import torch
from torch import nn

from agentk.modalities import MODALITIES
from tools.heads import check_targets, head_loss, output_losses, target_scaling, to_model_space, width
from tools.map_dataset import MapDataset

WIDTH, BATCH = 64, 64


def fit_predict(
    train: MapDataset,
    fit_idx: np.ndarray,
    predict: list[tuple[MapDataset, np.ndarray | None]],
    outputs: list[dict],
    max_epochs: int = 20,
    max_seconds: float = 30.0,
    seed: int = 0,
) -> list[np.ndarray]:
    """Fit on train's fit_idx rows; per predict entry, an array (rows, width): per output P(class 1) for binary,
    n_classes probabilities for multiclass, the value for regression. Deterministic for a seed unless
    max_seconds cuts training short."""
    fit_idx = np.asarray(fit_idx)
    parts = [(train, fit_idx)] + [(ds, np.arange(len(ds)) if idx is None else np.asarray(idx)) for ds, idx in predict]
    for ds, _ in parts:
        if ds.modalities != train.modalities:
            raise ValueError(
                f"the {ds.split} maps have modalities {ds.modalities} but train has {train.modalities}: "
                "build the same input maps for both splits"
            )
    unknown = [m for m in train.modalities if m not in MODALITIES]
    if unknown:
        raise ValueError(
            f"the light solve has no branch for the {unknown[0]!r} modality: use {', '.join(MODALITIES)} maps"
        )
    y = train.targets[fit_idx]
    check_targets(y, outputs)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        torch.manual_seed(seed)
        inputs, branches, widths = [{} for _ in parts], {}, {}
        for m, modality in MODALITIES.items():  # registry order: the order the branches are created (seeded) in
            if m in train.modalities:
                tensors, branches[m], widths[m] = modality.model_module().light_branch(parts, WIDTH)
                for x, t in zip(inputs, tensors):
                    x[m] = t
        model = LateFusionNet(branches, sum(widths.values()), [width(o) for o in outputs])
        _start_from_prior(model, y, outputs)
        mean, scale = target_scaling(y, outputs)
        _train(
            model,
            inputs[0],
            torch.tensor((y - mean) / scale, dtype=torch.float32),
            output_losses(outputs),
            max_epochs,
            max_seconds,
            seed,
        )
        return [_predict(model, x, outputs, mean, scale) for x in inputs[1:]]
    finally:
        torch.set_num_threads(threads)


class LateFusionNet(nn.Module):
    def __init__(self, branches: dict[str, nn.Module], branch_width: int, head_widths: list[int]):
        super().__init__()
        self.branches = nn.ModuleDict(branches)
        self.hidden = nn.Sequential(nn.Linear(branch_width, WIDTH), nn.ReLU())
        self.heads = nn.ModuleList(nn.Linear(WIDTH, w) for w in head_widths)

    def forward(self, x: dict[str, torch.Tensor]) -> list[torch.Tensor]:
        h = self.hidden(torch.cat([branch(x[m]) for m, branch in self.branches.items()], dim=1))
        return [head(h) for head in self.heads]


@torch.no_grad()
def _start_from_prior(model: LateFusionNet, y: np.ndarray, outputs: list[dict]) -> None:
    """Each class head's bias at the fit rows' log-odds (binary) or log class shares (multiclass), counted with one
    more row of each class: the net starts as the constant it must beat and learns what the inputs add (started at
    even odds, a net of a few epochs over many rare labels stays worse than the labels' shares)."""
    for j, (out, head) in enumerate(zip(outputs, model.heads, strict=True)):
        known = y[np.isfinite(y[:, j]), j]
        if out["kind"] == "binary":
            p = (known.sum() + 1) / (len(known) + 2)
            head.bias.fill_(float(np.log(p / (1 - p))))
        elif out["kind"] == "multiclass":
            counts = np.bincount(known.astype(int), minlength=int(out["n_classes"])) + 1.0
            head.bias.copy_(torch.tensor(np.log(counts / counts.sum()), dtype=head.bias.dtype))


def _train(
    model: LateFusionNet, x: dict, y: torch.Tensor, losses: list[str], max_epochs: int, max_seconds: float, seed: int
) -> None:
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    order = torch.Generator().manual_seed(seed)
    start = time.monotonic()
    model.train()
    for _ in range(max_epochs):
        for b in torch.randperm(len(y), generator=order).split(BATCH):
            loss = head_loss(model({m: t[b] for m, t in x.items()}), y[b], losses)
            if loss is None:
                continue
            opt.zero_grad()
            loss.backward()
            opt.step()
            if time.monotonic() - start > max_seconds:
                return


@torch.no_grad()
def _predict(model: LateFusionNet, x: dict, outputs: list[dict], mean: np.ndarray, scale: np.ndarray) -> np.ndarray:
    model.eval()
    n = len(next(iter(x.values())))
    chunks = [model({m: t[start : start + 1024] for m, t in x.items()}) for start in range(0, n, 1024)]
    if not chunks:
        return np.zeros((0, sum(width(o) for o in outputs)))
    return to_model_space([torch.cat(zs) for zs in zip(*chunks)], outputs, mean, scale)
