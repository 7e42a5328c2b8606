"""The late-fusion network of the paper (3.2): one embedder per input modality (each modality's model module
builds its branch: an MLP over preprocessed tabular features, a timm image backbone, a transformers text encoder
with mean pooling), concatenated, a fusion MLP and one head per output, with a loss matched to the metric. Early stopping watches the competition's metric on the
task's validation rows and keeps the best epoch's weights.

Frozen encoders embed every row once (no grad) and only the rest trains, on the cached features: that is what
makes CPU presets fast. Trained encoders see augmented images and learn at a reduced rate."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

from agentk.modalities import MODALITIES
from tools.heads import check_targets, head_loss, output_losses, target_scaling, to_model_space
from tools.task_data import TaskData


@dataclass
class FusionConfig:
    image_backbone: str = "resnet18"  # a timm model name
    image_size: int = 64
    pretrained: bool = True  # try to load the backbone's weights (random initialisation when unobtainable)
    text_model: str | None = None  # a transformers model folder; None: the packaged all-MiniLM-L6-v2
    max_length: int = 128
    finetune_text: bool = True  # train through the encoder, or embed once with it frozen
    finetune_image: bool = True
    tab_hidden: int = 128
    fusion_hidden: int = 256
    dropout: float = 0.1
    batch_size: int = 32
    max_epochs: int = 30
    max_time: float = 36000.0  # seconds for the whole call, embedding included; training stops once past it
    lr: float = 1e-3
    encoder_lr_factor: float = 0.1  # pretrained encoders train at lr * this: the full rate wrecks their features
    optimizer: str = "Adam"  # Adam | SGD | AdamW
    weight_decay: float = 0.0
    patience: int = 5  # epochs without a better validation score before stopping
    seed: int = 0
    device: str = "auto"  # auto: cuda when available


@dataclass
class FusionResult:
    val_pred: np.ndarray  # model space, the task's validation rows, at the best epoch
    test_pred: np.ndarray  # model space, every test row, with the best epoch's weights
    val_score: float
    val_loss: float  # the training loss on the validation rows (regression standardised) at the best epoch
    best_epoch: int
    epochs_run: int
    seconds: float
    history: list[dict] = field(default_factory=list)  # per epoch: epoch, train_loss, val_loss, val_score, seconds
    device: str = "cpu"
    notes: list[str] = field(default_factory=list)


# --------------------------------------------------------------------------- branches


@dataclass
class Branch:
    """One input modality's part of the network, as fusion_branch of its tools/modality_<name>.py builds it."""

    encoder: nn.Module  # a batch of the modality's inputs -> features (rows, dim)
    dim: int
    inputs: object = None  # every row's inputs (train rows, then test rows): a tensor or a dict of them
    read: Callable[[list[int], bool], torch.Tensor] | None = None  # or: rows -> inputs read now (augment: bool)
    backbone: bool = False  # a large encoder: features batch-normalised; trained, it sets batch sizes and threads
    pretrained: bool = False  # trained, it learns at lr * encoder_lr_factor so as not to wreck its features
    frozen: bool = False  # embed every row once (no grad) and train only the rest on the cached features
    embed_batch: int = 1  # frozen: the embedding batch, in multiples of the batch size
    lengths: torch.Tensor | None = None  # frozen: embed the rows shortest first (each batch is cut to its longest)
    title: str = ""  # how notes name the encoder
    notes: list[str] = field(default_factory=list)


class FusionNet(nn.Module):
    def __init__(self, branches: dict[str, Branch], widths: list[int], cfg: FusionConfig):
        super().__init__()
        self.branches = nn.ModuleDict({m: b.encoder for m, b in branches.items()})  # identity once frozen
        # encoder features differ wildly in scale per dimension (random backbones most of all): standardise them
        self.norms = nn.ModuleDict({m: nn.BatchNorm1d(b.dim) for m, b in branches.items() if b.backbone})
        self.fusion = nn.Sequential(
            nn.Linear(sum(b.dim for b in branches.values()), cfg.fusion_hidden), nn.ReLU(), nn.Dropout(cfg.dropout)
        )
        self.heads = nn.ModuleList(nn.Linear(cfg.fusion_hidden, w) for w in widths)

    def forward(self, x: dict) -> list[torch.Tensor]:
        parts = [self.norms[m](b(x[m])) if m in self.norms else b(x[m]) for m, b in self.branches.items()]
        h = self.fusion(torch.cat(parts, dim=1))
        return [head(h) for head in self.heads]


# --------------------------------------------------------------------------- data


class _Rows(Dataset):
    """A batch of row numbers (train rows, then test rows) -> (model inputs, targets). Readers (images) read
    their rows here, so that DataLoader workers read them in parallel."""

    def __init__(self, inputs: dict, targets: torch.Tensor, readers: dict | None = None, augment: bool = False):
        self.inputs, self.targets, self.readers, self.augment = inputs, targets, readers or {}, augment

    def __len__(self) -> int:
        return len(self.targets)

    def __getitem__(self, rows: list[int]) -> tuple[dict, torch.Tensor]:
        x = _apply(lambda t: t[rows], self.inputs)
        for m, read in self.readers.items():
            x[m] = read(rows, self.augment)
        return x, self.targets[rows]


def _apply(fn, x):
    """fn on every tensor of a (nested) dict of tensors."""
    return {k: _apply(fn, v) for k, v in x.items()} if isinstance(x, dict) else fn(x)


def _to(x, device: torch.device):
    return _apply(lambda t: t.to(device, non_blocking=True), x)


def _loader(ds: _Rows, batches: list[list[int]], device: torch.device) -> DataLoader:
    workers = min(8, os.cpu_count() or 1) if device.type == "cuda" and ds.readers else 0
    return DataLoader(ds, sampler=batches, batch_size=None, num_workers=workers, pin_memory=device.type == "cuda")


def _chunks(rows: np.ndarray, size: int) -> list[list[int]]:
    return [rows[i : i + size].tolist() for i in range(0, len(rows), size)]


def _shuffled(rows: np.ndarray, size: int, gen: torch.Generator) -> list[list[int]]:
    batches = _chunks(rows[torch.randperm(len(rows), generator=gen).numpy()], size)
    if len(batches) > 1 and len(batches[-1]) == 1:  # batch norm cannot train on one row
        batches.pop()
    return batches


def _autocast(device: torch.device):
    on_cuda = device.type == "cuda"
    dtype = torch.bfloat16 if on_cuda and torch.cuda.is_bf16_supported() else torch.float16
    return torch.autocast(device.type, dtype=dtype, enabled=on_cuda)


@torch.no_grad()
def _embed(branch: Branch, modality: str, targets: torch.Tensor, size: int, device: torch.device) -> torch.Tensor:
    """Every row's features from a frozen encoder, in row order. With lengths, rows go shortest first, so that
    each batch is cut to similar lengths."""
    ds = _Rows(
        {} if branch.inputs is None else {modality: branch.inputs},
        targets,
        {} if branch.read is None else {modality: branch.read},
    )
    encoder = branch.encoder.to(device).eval()
    order = np.argsort(branch.lengths.numpy(), kind="stable") if branch.lengths is not None else np.arange(len(ds))
    out = []
    for x, _ in _loader(ds, _chunks(order, size), device):
        with _autocast(device):
            out.append(encoder(_to(x[modality], device)).float().cpu())
    encoder.cpu()
    features = torch.empty_like(torch.cat(out))
    features[torch.as_tensor(order)] = torch.cat(out)
    return features


def _build(task: TaskData, cfg: FusionConfig, fit: np.ndarray, device: torch.device, targets: torch.Tensor):
    """Per modality present, in registry order (the order the branches are created, and seeded, in), its branch
    from its model module; frozen encoders embed every row here. Returns (fit dataset, eval dataset, branches,
    notes)."""
    frames = {m: pd.concat([task.train.inputs[m], task.test.inputs[m]]) for m in task.train.modalities}
    branches, notes = {}, []
    for m, modality in MODALITIES.items():
        if m not in frames:
            continue
        branch = modality.model_module().fusion_branch(frames[m], task.ws, cfg, fit)
        notes += branch.notes
        if branch.frozen:
            began = time.monotonic()
            features = _embed(branch, m, targets, branch.embed_batch * cfg.batch_size, device)
            branch = replace(branch, encoder=nn.Identity(), inputs=features, read=None, lengths=None)
            notes.append(f"{branch.title} frozen: {len(features)} embeddings in {time.monotonic() - began:.1f}s")
        elif branch.backbone:
            notes.append(f"{branch.title} trained")
        branches[m] = branch
    inputs = {m: b.inputs for m, b in branches.items() if b.inputs is not None}
    readers = {m: b.read for m, b in branches.items() if b.read is not None}
    # augmentation only on the fit rows
    return _Rows(inputs, targets, readers, augment=True), _Rows(inputs, targets, readers), branches, notes


# --------------------------------------------------------------------------- training


@torch.no_grad()
def _logits(model: FusionNet, ds: _Rows, rows: np.ndarray, size: int, device: torch.device):
    model.eval()
    parts, targets = [], []
    for x, t in _loader(ds, _chunks(rows, size), device):
        with _autocast(device):
            parts.append([z.float().cpu() for z in model(_to(x, device))])
        targets.append(t)
    return [torch.cat(zs) for zs in zip(*parts)], torch.cat(targets)


def _optimizer(model: FusionNet, slow_modules: list[nn.Module], cfg: FusionConfig) -> torch.optim.Optimizer:
    slow = {id(p) for m in slow_modules for p in m.parameters()}
    groups = [
        {"params": [p for p in model.parameters() if id(p) not in slow], "lr": cfg.lr},
        {"params": [p for p in model.parameters() if id(p) in slow], "lr": cfg.lr * cfg.encoder_lr_factor},
    ]
    groups = [g for g in groups if g["params"]]
    if cfg.optimizer == "SGD":
        return torch.optim.SGD(groups, lr=cfg.lr, momentum=0.9, weight_decay=cfg.weight_decay)
    if cfg.optimizer in ("Adam", "AdamW"):
        return getattr(torch.optim, cfg.optimizer)(groups, lr=cfg.lr, weight_decay=cfg.weight_decay)
    raise ValueError(f"unknown optimizer {cfg.optimizer!r}: use Adam, SGD or AdamW")


def _improves(task: TaskData, score: float, best: dict | None) -> bool:
    if best is None:
        return True
    if not np.isfinite(best["val_score"]):  # a metric undefined on one epoch's predictions never blocks a real one
        return bool(np.isfinite(score))
    return task.better(score, best["val_score"])


def train_fusion(
    task: TaskData, config: FusionConfig | None = None, log: Callable[[str], None] = print, progress: bool = False
) -> FusionResult:
    """Train on the task's fit rows with early stopping on the validation score; predict the validation rows
    and every test row in model space with the best epoch's weights. progress: log every epoch."""
    cfg, start = config or FusionConfig(), time.monotonic()
    deadline = start + cfg.max_time
    device = torch.device(
        "cuda" if cfg.device == "auto" and torch.cuda.is_available() else "cpu" if cfg.device == "auto" else cfg.device
    )
    train, test = task.train, task.test
    if set(train.modalities) - set(MODALITIES) or test.modalities != train.modalities:
        raise ValueError(
            f"the fusion network takes {', '.join(MODALITIES)} maps, the same for train and test; "
            f"found train {train.modalities}, test {test.modalities}"
        )
    torch.manual_seed(cfg.seed)
    fit, val = task.split
    y = task.y
    check_targets(y[fit], task.outputs)
    mean, scale = target_scaling(y[fit], task.outputs)
    targets = torch.tensor(
        np.vstack([(y - mean) / scale, np.full((len(test), y.shape[1]), np.nan)]), dtype=torch.float32
    )
    fit_ds, eval_ds, branches, notes = _build(task, cfg, fit, device, targets)
    trained = [b for b in branches.values() if not b.frozen and b.backbone]  # encoders trained on every batch
    for note in notes:
        log(f"fusion: {note}")
    model = FusionNet(branches, task.widths, cfg).to(device)
    kinds = output_losses(task.outputs, task.metric_name)
    opt = _optimizer(model, [b.encoder for b in trained if b.pretrained], cfg)
    eval_size = 2 * cfg.batch_size if trained else max(256, cfg.batch_size)
    # float16 needs its gradients scaled (bfloat16 has float32's range): a no-op on CPU and bfloat16 GPUs
    scaler = torch.amp.GradScaler("cuda", enabled=device.type == "cuda" and not torch.cuda.is_bf16_supported())
    order = torch.Generator().manual_seed(cfg.seed)
    best, history = None, []
    # small matrices on cached features: more CPU threads only add synchronisation (and suffer most when
    # several trainings share the cores)
    threads = torch.get_num_threads()
    torch.set_num_threads(1 if device.type == "cpu" and not trained else threads)
    try:
        for epoch in range(1, cfg.max_epochs + 1):
            batches = _loader(fit_ds, _shuffled(fit, cfg.batch_size, order), device)
            losses, out_of_time = _epoch(model, opt, scaler, batches, kinds, device, deadline)
            if out_of_time and best is not None:
                break  # a cut epoch is not evaluated: the best one so far stands
            logits, t = _logits(model, eval_ds, val, eval_size, device)
            val_loss = head_loss(logits, t, kinds)
            val_pred = to_model_space(logits, task.outputs, mean, scale)
            score = task.score(val_pred, val)
            history.append(
                {
                    "epoch": epoch,
                    "train_loss": float(np.mean(losses)) if losses else float("nan"),
                    "val_loss": float("nan") if val_loss is None else float(val_loss),
                    "val_score": score,
                    "seconds": time.monotonic() - start,
                }
            )
            if progress:
                log(
                    f"fusion epoch {epoch}: train loss {history[-1]['train_loss']:.4f}, "
                    f"val loss {history[-1]['val_loss']:.4f}, val {task.metric_name} {score:.5f}"
                )
            if _improves(task, score, best):
                best = {
                    "epoch": epoch,
                    "val_score": score,
                    "val_loss": history[-1]["val_loss"],
                    "val_pred": val_pred,
                    "state": {k: v.detach().clone() for k, v in model.state_dict().items()},
                }
            elif epoch - best["epoch"] >= cfg.patience:
                break
            if out_of_time:
                break
        model.load_state_dict(best["state"])
        test_logits, _ = _logits(model, eval_ds, np.arange(len(train), len(train) + len(test)), eval_size, device)
    finally:
        torch.set_num_threads(threads)
    result = FusionResult(
        best["val_pred"],
        to_model_space(test_logits, task.outputs, mean, scale),
        best["val_score"],
        best["val_loss"],
        best["epoch"],
        len(history),
        time.monotonic() - start,
        history,
        str(device),
        notes,
    )
    log(
        f"fusion: best epoch {result.best_epoch}/{result.epochs_run}, val {task.metric_name} "
        f"{result.val_score:.5f}, {result.seconds:.1f}s on {device}"
    )
    return result


def _epoch(
    model: FusionNet,
    opt: torch.optim.Optimizer,
    scaler: torch.amp.GradScaler,
    batches: DataLoader,
    kinds: list[str],
    device: torch.device,
    deadline: float,
) -> tuple[list[float], bool]:
    """One pass over the fit rows; returns the batch losses and whether the deadline cut it short."""
    model.train()
    losses = []
    for x, t in batches:
        with _autocast(device):
            loss = head_loss(model(_to(x, device)), t.to(device), kinds)
        if loss is not None:
            opt.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
            losses.append(loss.item())
        if time.monotonic() > deadline:
            return losses, True
    return losses, False
