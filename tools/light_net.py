"""A tiny late-fusion network for the setup's final light solve on image, text and multimodal tasks: one small
branch per input modality, concatenated, one hidden layer, one head per output. It trains on CPU in seconds:
inputs are transformed once into tensors (small images, short texts), and one thread is used because several
setups run side by side."""
from __future__ import annotations

import time

import numpy as np
import torch
from torch import nn

from tools.map_dataset import ImageTransform, MapDataset, TextTransform, vocab_size
from tools.tabular import encode

IMAGE_SIZE, TEXT_LENGTH, WIDTH, BATCH = 32, 64, 64, 64


def fit_predict(train: MapDataset, fit_idx: np.ndarray, predict: list[tuple[MapDataset, np.ndarray | None]],
                outputs: list[dict], max_epochs: int = 20, max_seconds: float = 30.0, seed: int = 0) -> list[np.ndarray]:
    """Fit on train's fit_idx rows; per predict entry, an array (rows, width): per output P(class 1) for binary,
    n_classes probabilities for multiclass, the value for regression. Deterministic for a seed unless
    max_seconds cuts training short."""
    fit_idx = np.asarray(fit_idx)
    parts = [(train, fit_idx)] + [(ds, np.arange(len(ds)) if idx is None else np.asarray(idx)) for ds, idx in predict]
    for ds, _ in parts:
        if ds.modalities != train.modalities:
            raise ValueError(f"the {ds.split} maps have modalities {ds.modalities} but train has {train.modalities}: "
                             "build the same input maps for both splits")
    y = train.targets[fit_idx]
    _check_targets(y, outputs)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        torch.manual_seed(seed)
        inputs = _tensors(parts)
        n_tokens = _compact_vocabulary(inputs) if "txt" in inputs[0] else 0
        widths = [_width(o) for o in outputs]
        model = LateFusionNet({m: x.shape[1:] for m, x in inputs[0].items()}, widths, n_tokens)
        mean, scale = _target_scaling(y, outputs)
        _train(model, inputs[0], torch.tensor((y - mean) / scale, dtype=torch.float32), outputs,
               max_epochs, max_seconds, seed)
        # back to the targets' scale: only regression columns have a mean and scale other than 0 and 1
        return [_predict(model, x, outputs) * np.repeat(scale, widths) + np.repeat(mean, widths) for x in inputs[1:]]
    finally:
        torch.set_num_threads(threads)


class LateFusionNet(nn.Module):
    def __init__(self, input_shapes: dict[str, tuple], head_widths: list[int], n_tokens: int = 0):
        super().__init__()
        self.branches = nn.ModuleDict()
        if "tab" in input_shapes:
            self.branches["tab"] = nn.Sequential(nn.Linear(input_shapes["tab"][0], WIDTH), nn.ReLU())
        if "img" in input_shapes:
            self.branches["img"] = nn.Sequential(  # the strided first conv makes it 4x cheaper on CPU
                nn.Conv2d(3, 16, 3, stride=2, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
        if "txt" in input_shapes:  # a bag of words: the mean embedding of the tokens, padding left out
            self.branches["txt"] = nn.EmbeddingBag(n_tokens or vocab_size(), WIDTH, mode="mean", padding_idx=0)
        width = sum(32 if m == "img" else WIDTH for m in self.branches)
        self.hidden = nn.Sequential(nn.Linear(width, WIDTH), nn.ReLU())
        self.heads = nn.ModuleList(nn.Linear(WIDTH, w) for w in head_widths)

    def forward(self, x: dict[str, torch.Tensor]) -> list[torch.Tensor]:
        h = self.hidden(torch.cat([branch(x[m]) for m, branch in self.branches.items()], dim=1))
        return [head(h) for head in self.heads]


def _tensors(parts: list[tuple[MapDataset, np.ndarray]]) -> list[dict[str, torch.Tensor]]:
    """Per part, each modality's rows as one tensor; tab columns encoded and standardised on the first part."""
    out = [{} for _ in parts]
    modalities = parts[0][0].modalities
    if "tab" in modalities:
        matrices, _ = encode([ds.inputs["tab"].iloc[idx].reset_index(drop=True) for ds, idx in parts])
        fit = matrices[0]
        mean = np.nan_to_num(np.nanmean(fit, axis=0)) if len(fit) else 0.0
        std = np.nan_to_num(np.nanstd(fit, axis=0)) if len(fit) else 1.0
        std = np.where(std > 0, std, 1.0)
        for o, x in zip(out, matrices):
            x = np.nan_to_num((x - mean) / std)
            o["tab"] = torch.tensor(x if x.shape[1] else np.zeros((len(x), 1)), dtype=torch.float32)
    for m in modalities:
        if m == "tab":
            continue
        if m not in ("img", "txt"):
            raise ValueError(f"the light solve has no branch for the {m!r} modality: use tab, img or txt maps")
        for o, (ds, idx) in zip(out, parts):
            rows = ds.inputs[m].to_numpy(dtype=object)[idx]
            if m == "img":
                tf = ImageTransform(ds.ws, size=IMAGE_SIZE, map_name=f"{ds.split}_img_input_map.csv")
                o[m] = torch.stack([tf(r) for r in rows]) if len(rows) else torch.zeros(0, 3, IMAGE_SIZE, IMAGE_SIZE)
            else:
                tf = TextTransform(max_length=TEXT_LENGTH)
                o[m] = torch.stack([tf(r)["input_ids"] for r in rows]) if len(rows) else \
                    torch.zeros(0, TEXT_LENGTH, dtype=torch.long)
    return out


def _compact_vocabulary(inputs: list[dict[str, torch.Tensor]]) -> int:
    """Renumber the token ids seen in the fit rows 1..k, in place; unseen ones become padding (0), which the
    bag leaves out: their embeddings would stay untrained noise. A small table also makes each Adam step
    several times cheaper than the full 30k-token vocabulary. Returns the table size."""
    seen = torch.unique(torch.cat([torch.zeros(1, dtype=torch.long), inputs[0]["txt"].flatten()]))  # 0 first
    lookup = torch.zeros(vocab_size(), dtype=torch.long)
    lookup[seen] = torch.arange(len(seen))
    for x in inputs:
        x["txt"] = lookup[x["txt"]]
    return len(seen)


def _train(model: LateFusionNet, x: dict, y: torch.Tensor, outputs: list[dict], max_epochs: int,
           max_seconds: float, seed: int) -> None:
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    order = torch.Generator().manual_seed(seed)
    start = time.monotonic()
    model.train()
    for _ in range(max_epochs):
        for b in torch.randperm(len(y), generator=order).split(BATCH):
            loss = _loss(model({m: t[b] for m, t in x.items()}), y[b], outputs)
            if loss is None:
                continue
            opt.zero_grad()
            loss.backward()
            opt.step()
            if time.monotonic() - start > max_seconds:
                return


def _loss(logits: list[torch.Tensor], y: torch.Tensor, outputs: list[dict]) -> torch.Tensor | None:
    """The summed loss of all outputs, each over the rows where its target is known."""
    total = None
    for j, (out, z) in enumerate(zip(outputs, logits)):
        known = torch.isfinite(y[:, j])
        if not known.any():
            continue
        t, z = y[known, j], z[known]
        if out["kind"] == "binary":
            part = nn.functional.binary_cross_entropy_with_logits(z[:, 0], t)
        elif out["kind"] == "multiclass":
            part = nn.functional.cross_entropy(z, t.long())
        else:
            part = nn.functional.mse_loss(z[:, 0], t)
        total = part if total is None else total + part
    return total


@torch.no_grad()
def _predict(model: LateFusionNet, x: dict, outputs: list[dict]) -> np.ndarray:
    model.eval()
    n = len(next(iter(x.values())))
    chunks = []
    for start in range(0, n, 1024):
        logits = model({m: t[start:start + 1024] for m, t in x.items()})
        chunks.append(torch.cat([torch.sigmoid(z) if o["kind"] == "binary" else
                                 torch.softmax(z, dim=1) if o["kind"] == "multiclass" else z
                                 for o, z in zip(outputs, logits)], dim=1))
    width = sum(_width(o) for o in outputs)
    return torch.cat(chunks).double().numpy() if chunks else np.zeros((0, width))


def _width(out: dict) -> int:
    return int(out["n_classes"]) if out["kind"] == "multiclass" else 1


def _target_scaling(y: np.ndarray, outputs: list[dict]) -> tuple[np.ndarray, np.ndarray]:
    """Regression targets are learnt standardised; class targets stay as they are (mean 0, scale 1)."""
    mean, scale = np.zeros(len(outputs)), np.ones(len(outputs))
    for j, out in enumerate(outputs):
        known = y[np.isfinite(y[:, j]), j]
        if out["kind"] == "regression" and len(known):
            mean[j], scale[j] = known.mean(), known.std() if known.std() > 0 else 1.0
    return mean, scale


def _check_targets(y: np.ndarray, outputs: list[dict]) -> None:
    if y.shape[1] != len(outputs):
        raise ValueError(f"the targets have {y.shape[1]} columns but OUTPUTS lists {len(outputs)} outputs")
    for j, out in enumerate(outputs):
        known = y[np.isfinite(y[:, j]), j]
        if out["kind"] == "binary" and not np.isin(known, (0, 1)).all():
            raise ValueError(f"output {j} is binary but its transformed targets are not all 0/1 "
                             f"(e.g. {known[~np.isin(known, (0, 1))][:3]})")
        if out["kind"] == "multiclass":
            n = int(out["n_classes"])
            bad = known[(known != np.round(known)) | (known < 0) | (known >= n)]
            if len(bad):
                raise ValueError(f"output {j} is multiclass with {n} classes but its transformed targets are not "
                                 f"all class codes 0..{n - 1} (e.g. {bad[:3]})")
        elif out["kind"] not in ("binary", "regression"):
            raise ValueError(f"output {j} has kind {out['kind']!r}: use binary, multiclass or regression")
