"""The late-fusion network of the paper (3.2): one embedder per input modality (each modality's model module
builds its branch: an MLP over preprocessed tabular features, a timm image backbone, a transformers text encoder
with mean pooling), concatenated, a fusion MLP and one head per output, with a loss matched to the metric. Early
stopping watches the competition's metric on a holdout of the fit rows (the stop rows) and keeps the best epoch's
weights; the task's validation rows, which select among solutions, are only predicted and scored. Rows the metric
skips (TaskData.learn_rows: RMSPE's zeros, a masked metric's unscored rows) are predicted, never trained on, and
the loss weighs the others as the metric does (TaskData.fit_weights: RMSPE 1/y^2), its weighted mean over a batch.

Frozen encoders embed every row once (no grad), in float16 into the workspace's cache, and only the rest trains,
on those features: that is what makes CPU presets fast. Trained encoders see augmented images and learn at a reduced rate.

The input pipeline keeps the device busy, with one code path for CPU and GPU: every input is prepared once
(images decoded at the training size into uint8, texts tokenised) and moved to the device when it fits there, so
that a batch is an index into device memory; augmentation runs on the batch, on the device. Inputs too large for
the device (a memory-mapped image cache) are read by persistent loader workers into pinned memory and copied
without blocking. On a GPU the batch size (and the learning rate with it) grows with the GPU's memory, the network
runs channels-last under bf16 autocast, and evaluation runs in large batches."""

from __future__ import annotations

import hashlib
import math
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd
import psutil
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset, Sampler

from agentk.core.fileio import written_array
from agentk.modalities import MODALITIES
from agentk.workspace import Workspace
from tools import machine
from tools.fusion_config import STOP_ROWS, Branch, FusionConfig
from tools.heads import check_targets, head_loss, output_losses, target_scaling, to_model_space
from tools.resampling import at_most
from tools.task_data import TaskData


@dataclass
class FusionResult:
    val_pred: np.ndarray  # model space, the task's validation rows, at the best epoch
    test_pred: np.ndarray  # model space, every test row, with the best epoch's weights
    val_score: float  # on the validation rows, which chose nothing here
    stop_score: float  # on the stop rows, at the best epoch: what early stopping (and a tuner) looks at
    stop_loss: float  # the training loss on the stop rows (regression standardised) at the best epoch
    best_epoch: int
    epochs_run: int
    seconds: float
    history: list[dict] = field(default_factory=list)  # per epoch, what on_epoch received (see train_fusion)
    device: str = "cpu"
    notes: list[str] = field(default_factory=list)
    batch_size: int = 32  # the batch size trained with, after scaling to the device
    capped: bool = False  # the safety cap (max_time) stopped training before its planned epochs


@dataclass
class RefitResult:
    """A network trained on every train row for a fixed number of epochs (refit_fusion): test predictions only,
    since no row is left to validate on."""

    test_pred: np.ndarray  # model space, every test row (or the held-out train rows), with the last epoch's weights
    rows: int  # the train rows it learnt from
    epochs: int  # the epochs it ran
    samples: int  # the samples it trained on, every epoch together
    seconds: float
    capped: bool  # the safety cap stopped it before its epochs
    notes: list[str] = field(default_factory=list)
    checked_pred: np.ndarray | None = None  # model space, the `check` train rows (learnt from), the same weights


# --------------------------------------------------------------------------- branches


class FusionNet(nn.Module):
    def __init__(self, branches: dict[str, Branch], widths: list[int], cfg: FusionConfig):
        super().__init__()
        self.branches = nn.ModuleDict({m: b.encoder for m, b in branches.items()})  # _Float once frozen
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


# --------------------------------------------------------------------------- the device


def resolve_device(name: str) -> torch.device:
    """auto: cuda when available, else cpu."""
    return torch.device(("cuda" if torch.cuda.is_available() else "cpu") if name == "auto" else name)


GB_PER_STEP = 10  # a GPU doubles the batch size for every doubling of its memory past this many GB (at 224 px)
MIN_STEPS = 8  # a batch grows only while an epoch still takes at least this many optimiser steps
DEVICE_SHARE = 0.4  # inputs move to the device while they take at most this share of its free memory
SAMPLE_SEED = 0  # the learn_sample's draw


def device_batch(cfg: FusionConfig, device: torch.device, n_fit: int) -> int:
    """cfg.batch_size on CPU. On a GPU, times a power of two that grows with its memory (1 below 20 GB, 8 on an
    80 GB H100 at 224 px, more at smaller images, at most 16), and never past the size that leaves an epoch
    MIN_STEPS optimiser steps: a small competition still needs steps to learn from."""
    memory = _total_memory_gb(device)
    if not cfg.scale_batch or memory is None:
        return cfg.batch_size
    factor = 2 ** int(math.log2(max(1.0, memory / GB_PER_STEP * (224 / cfg.image_size) ** 2)))
    batch = cfg.batch_size * min(16, factor)
    while batch > cfg.batch_size and n_fit < MIN_STEPS * batch:
        batch //= 2
    return batch


def scaled_lr(cfg: FusionConfig, batch: int) -> float:
    """The learning rate for a batch grown from cfg.batch_size: linear in the batch for SGD, its square root for
    Adam and AdamW (whose steps are normalised already)."""
    ratio = batch / cfg.batch_size
    return cfg.lr * (ratio if cfg.optimizer == "SGD" else math.sqrt(ratio))


def _total_memory_gb(device: torch.device) -> float | None:
    """A GPU's memory; None on CPU, where batches stay at their configured size."""
    return torch.cuda.get_device_properties(device).total_memory / 2**30 if device.type == "cuda" else None


def _free_memory(device: torch.device) -> float:
    if device.type == "cuda":
        return float(torch.cuda.mem_get_info(device)[0])

    return float(psutil.virtual_memory().available)


def _peak_memory_gb(device: torch.device) -> float | None:
    return torch.cuda.max_memory_allocated(device) / 2**30 if device.type == "cuda" else None


def _synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _autocast(device: torch.device):
    on_cuda = device.type == "cuda"
    dtype = torch.bfloat16 if on_cuda and torch.cuda.is_bf16_supported() else torch.float16
    return torch.autocast(device.type, dtype=dtype, enabled=on_cuda)


def _loader_workers(device: torch.device) -> int:
    """Workers reading host-resident inputs (a memory-mapped cache: a copy per batch, no decoding). On a GPU, every
    core but the one driving it; on CPU one, since the cores train."""
    return max(1, min(machine.cores() - 1, 16)) if device.type == "cuda" else 1


# --------------------------------------------------------------------------- data


def _apply(fn, x):
    """fn on every tensor of a (nested) dict of tensors."""
    return {k: _apply(fn, v) for k, v in x.items()} if isinstance(x, dict) else fn(x)


def _leaves(x) -> list:
    return [leaf for v in x.values() for leaf in _leaves(v)] if isinstance(x, dict) else [x]


class _HostRows(Dataset):
    """A batch of row numbers -> the host-resident inputs of those rows (in a loader worker)."""

    def __init__(self, inputs: dict):
        self.inputs = inputs

    def __len__(self) -> int:
        return len(_leaves(self.inputs)[0])

    def __getitem__(self, rows: list[int]) -> dict:
        return _apply(lambda t: t[rows], self.inputs)


class _Plan(Sampler):
    """The batches of the next pass: set before each pass, so that one loader, and its workers, serve them all."""

    def __init__(self):
        self.batches: list[list[int]] = []

    def __iter__(self) -> Iterator[list[int]]:
        return iter(self.batches)

    def __len__(self) -> int:
        return len(self.batches)


class Feed:
    """Every row's model inputs (train rows, then test rows) and targets, where a batch is read fastest: tensors
    that fit the device's free memory move there once (on CPU they are there already), and a batch of them is an
    index; the rest (e.g. a memory-mapped image cache) is read by persistent loader workers into pinned memory
    and copied to the device without blocking."""

    def __init__(self, inputs: dict, targets: torch.Tensor, device: torch.device):
        self.device = device
        self.targets = targets.to(device)
        budget = DEVICE_SHARE * _free_memory(device)
        self.resident, host = {}, {}
        for m, x in inputs.items():
            leaves = _leaves(x)
            size = sum(t.nbytes for t in leaves if isinstance(t, torch.Tensor) and t.device != device)
            if all(isinstance(t, torch.Tensor) for t in leaves) and size <= budget:
                self.resident[m] = _apply(lambda t: t.to(device), x)
                budget -= size
            else:
                host[m] = x
        self.plan = _Plan()
        self.loader = None
        workers = _loader_workers(device)
        if host:
            self.loader = DataLoader(
                _HostRows(host),
                sampler=self.plan,
                batch_size=None,
                num_workers=workers,
                persistent_workers=True,
                prefetch_factor=4,
                pin_memory=device.type == "cuda",
            )
        self.where = {m: str(device) for m in self.resident} | {m: f"host ({workers} loader workers)" for m in host}

    def __call__(self, batches: list[list[int]]) -> Iterator[tuple[dict, torch.Tensor]]:
        """(inputs, targets) of each batch of row numbers, on the device."""
        self.plan.batches = batches
        read = iter(self.loader) if self.loader is not None else None
        for rows in batches:
            index = torch.tensor(rows, dtype=torch.long).to(self.device, non_blocking=True)
            x = {m: _apply(lambda t, i=index: t[i], v) for m, v in self.resident.items()}
            if read is not None:
                x |= _apply(lambda t: t.to(self.device, non_blocking=True), next(read))
            yield x, self.targets[index]


def _chunks(rows: np.ndarray, size: int) -> list[list[int]]:
    return [rows[i : i + size].tolist() for i in range(0, len(rows), size)]


def _shuffled(rows: np.ndarray, size: int, gen: torch.Generator) -> list[list[int]]:
    batches = _chunks(rows[torch.randperm(len(rows), generator=gen).numpy()], size)
    if len(batches) > 1 and len(batches[-1]) == 1:  # batch norm cannot train on one row
        batches.pop()
    return batches


@torch.no_grad()
def _embed(
    branch: Branch, modality: str, targets: torch.Tensor, size: int, device: torch.device, rows: np.ndarray, out: Path
) -> None:
    """The features of `rows` from a frozen encoder, in float16 into the .npy file `out`, one batch at a time (a
    large input never holds its float32 features in memory), in row order: zeros for the other rows, which nothing
    reads. With lengths, rows go shortest first, so that each batch is cut to similar lengths. Written under a
    temporary name and renamed once complete: a killed run leaves no cache."""
    feed = Feed({modality: branch.inputs}, targets, device)
    encoder = branch.encoder.to(device, memory_format=torch.channels_last).eval()
    order = rows[np.argsort(branch.lengths.numpy()[rows], kind="stable")] if branch.lengths is not None else rows
    batches = _chunks(order, size)
    with written_array(out, np.float16, (len(targets), branch.dim)) as features:
        for rows_of, (x, _) in zip(batches, feed(batches), strict=True):
            with _autocast(device):
                features[rows_of] = encoder(x[modality]).float().cpu().numpy()
    encoder.cpu()


def _embeddings_key(frame: pd.DataFrame, skip: np.ndarray, cfg: FusionConfig, encoder: nn.Module) -> str:
    """What a frozen embedding depends on: the modality's inputs, the rows left out, the sizes the inputs are cut
    to, and the encoder's weights (equal for the same seed or pretrained weights)."""
    digest = hashlib.sha1(pd.util.hash_pandas_object(frame, index=False).to_numpy().tobytes())
    digest.update(np.ascontiguousarray(skip, dtype=np.int64).tobytes())
    digest.update(repr((cfg.image_size, cfg.max_length, _fingerprint(encoder))).encode())
    return digest.hexdigest()[:16]


def _learning(task: TaskData, cfg: FusionConfig) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(learn rows, stop rows, learn rows left out): the task's fit rows less its holdout (task.holdout), with
    cfg.learn_sample a fixed sample of the learn rows (the same in every trial and the refit, so that a frozen
    embedding is reused)."""
    fit, _ = task.split
    learn, stop = task.holdout(fit)
    if not cfg.learn_sample:
        return learn, stop, learn[:0]
    kept = at_most(learn, cfg.learn_sample, np.random.default_rng(SAMPLE_SEED))
    return kept, stop, np.setdiff1d(learn, kept)


def taught(task: TaskData, rows: np.ndarray) -> np.ndarray:
    """Those of these rows that teach some output what the metric scores (TaskData.learn_rows): a row without a
    known target, or that the metric skips (RMSPE's zero sales, a masked metric's unscored rows), is not trained on
    (it is still embedded and predicted)."""
    return np.unique(np.concatenate([task.learn_rows(j, rows) for j in range(len(task.outputs))]))


@torch.no_grad()
def _fingerprint(encoder: nn.Module) -> tuple[int, float]:
    """The encoder's weights and buffers, summarised: equal for the same seed and pretrained weights."""
    tensors = [t for t in encoder.state_dict().values() if t.is_floating_point()]
    return len(tensors), float(sum(t.double().abs().sum() for t in tensors)) if tensors else 0.0


def _build(
    task: TaskData,
    cfg: FusionConfig,
    fit: np.ndarray,
    device: torch.device,
    targets: torch.Tensor,
    batch: int,
    skip: np.ndarray,
):
    """Per modality present, in registry order (the order the branches are created, and seeded, in), its branch
    from its model module; frozen encoders embed every row here but the train rows `skip` (learning rows left out
    of a sample). Returns (branches, notes)."""
    frames = {m: pd.concat([task.train.inputs[m], task.test.inputs[m]]) for m in task.train.modalities}
    branches, notes = {}, []
    for m, modality in MODALITIES.items():
        if m not in frames:
            continue
        branch = modality.model_module().fusion_branch(frames[m], task.ws, cfg, fit)
        notes += branch.notes
        if branch.frozen:  # a network's HEBO trials and its refit embed the same rows alike: the first pays
            began = time.monotonic()
            path = Workspace(task.ws).embedding_cache(m, _embeddings_key(frames[m], skip, cfg, branch.encoder))
            if path.exists():
                how = f"read from {path.name} (embedded before by the same frozen encoder)"
            else:
                rows = np.setdiff1d(np.arange(len(frames[m])), skip)
                _embed(branch, m, targets, branch.embed_batch * batch, device, rows, path)
                how = f"in {time.monotonic() - began:.1f}s, float16 into {path.name}"
            features = torch.from_numpy(np.load(path, mmap_mode="c"))  # copy-on-write: pages read on demand
            branch = replace(branch, encoder=_Float(), inputs=features, augment=None, views=[], lengths=None)
            notes.append(f"{branch.title} frozen: {len(features) - len(skip)} embeddings {how}")
        elif branch.backbone:
            notes.append(f"{branch.title} trained")
        branches[m] = branch
    return branches, notes


class _Float(nn.Module):
    """A frozen branch's encoder once its features are embedded: the float16 features as the head's float32."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.float()


# --------------------------------------------------------------------------- training


@torch.no_grad()
def _logits(model: FusionNet, feed: Feed, rows: np.ndarray, size: int, device: torch.device, views: dict | None = None):
    """The model's outputs for `rows`, with their targets. With `views` (modality -> other views of its inputs),
    each output is the mean over the inputs as they are and each view (test-time augmentation)."""
    model.eval()
    parts, targets = [], []
    for x, t in feed(_chunks(rows, size)):
        with _autocast(device):
            seen = [model(x)] + [model(x | {m: view(x[m])}) for m, vs in (views or {}).items() for view in vs]
            parts.append([torch.stack([out[k].float() for out in seen]).mean(dim=0) for k in range(len(seen[0]))])
        targets.append(t)
    return [torch.cat(zs).cpu() for zs in zip(*parts)], torch.cat(targets).cpu()


def _optimizer(model: FusionNet, slow_modules: list[nn.Module], cfg: FusionConfig, lr: float) -> torch.optim.Optimizer:
    slow = {id(p) for m in slow_modules for p in m.parameters()}
    groups = [
        {"params": [p for p in model.parameters() if id(p) not in slow], "lr": lr},
        {"params": [p for p in model.parameters() if id(p) in slow], "lr": lr * cfg.encoder_lr_factor},
    ]
    groups = [g for g in groups if g["params"]]
    if cfg.optimizer == "SGD":
        return torch.optim.SGD(groups, lr=lr, momentum=0.9, weight_decay=cfg.weight_decay)
    if cfg.optimizer in ("Adam", "AdamW"):
        return getattr(torch.optim, cfg.optimizer)(groups, lr=lr, weight_decay=cfg.weight_decay)
    raise ValueError(f"unknown optimizer {cfg.optimizer!r}: use Adam, SGD or AdamW")


def _improves(task: TaskData, score: float, best: dict | None) -> bool:
    if best is None:
        return True
    if not np.isfinite(best["stop_score"]):  # a metric undefined on one epoch's predictions never blocks a real one
        return bool(np.isfinite(score))
    return task.better(score, best["stop_score"])


def _stalled(score: float, loss: float, best: dict, epoch: int, patience: int) -> bool:
    """Early stopping: `patience` epochs without progress. Progress is a better score (best is then this epoch),
    or the best score again with a lower stop loss than at the last progress: a coarse metric's plateau (QWK 0,
    every prediction one grade, for the first 5 or 6 epochs) while the loss still falls is learning, not a stall,
    and stopping there ended a third of a search's trials at QWK 0 beside trials that reached 0.96."""
    if score == best["stop_score"] and loss < best["progress"][1]:
        best["progress"] = (epoch, loss)
        return False
    return epoch - best["progress"][0] >= patience


@dataclass
class _Run:
    """What a training run needs, built from the task for the rows it learns from (_prepare)."""

    device: torch.device
    model: FusionNet
    opt: torch.optim.Optimizer
    scaler: torch.amp.GradScaler
    feed: Feed
    augments: dict[str, Callable]
    views: dict[str, list[Callable]]  # test-time augmentation of the final predictions
    kinds: list[str]
    batch: int
    eval_size: int
    mean: np.ndarray
    scale: np.ndarray
    trained: list[Branch]
    notes: list[str]


def _prepare(
    task: TaskData, cfg: FusionConfig, rows: np.ndarray, log: Callable[[str], None], skip: np.ndarray | None = None
) -> _Run:
    """The network, its inputs and optimiser for learning from `rows` (train row numbers): the target scaling and
    every branch's preprocessing are fitted on them alone; frozen encoders embed no train row of `skip`."""
    device = resolve_device(cfg.device)
    train, test = task.train, task.test
    if set(train.modalities) - set(MODALITIES) or test.modalities != train.modalities:
        raise ValueError(
            f"the fusion network takes {', '.join(MODALITIES)} maps, the same for train and test; "
            f"found train {train.modalities}, test {test.modalities}"
        )
    torch.manual_seed(cfg.seed)
    y = task.y
    check_targets(y[rows], task.outputs)
    mean, scale = target_scaling(y[rows], task.outputs)
    targets = np.vstack([(y - mean) / scale, np.full((len(test), y.shape[1]), np.nan)])
    weights = [task.fit_weights(j, np.arange(len(y))) for j in range(len(task.outputs))]
    if any(w is not None for w in weights):  # the metric's row weights, a column per output after the targets
        weights = np.column_stack([np.ones(len(y)) if w is None else w for w in weights])
        targets = np.hstack([targets, np.vstack([weights, np.ones((len(test), len(task.outputs)))])])
    targets = torch.tensor(targets, dtype=torch.float32)
    batch = device_batch(cfg, device, len(rows))
    branches, notes = _build(task, cfg, rows, device, targets, batch, np.asarray([] if skip is None else skip, int))
    trained = [b for b in branches.values() if not b.frozen and b.backbone]  # encoders trained on every batch
    feed = Feed({m: b.inputs for m, b in branches.items() if b.inputs is not None}, targets, device)
    augments = {m: b.augment for m, b in branches.items() if b.augment is not None}
    views = {m: b.views for m, b in branches.items() if b.views}
    lr = scaled_lr(cfg, batch)
    notes.append(
        f"batch {batch}, lr {lr:.3g} on {device}; inputs on "
        + ", ".join(f"{m}: {where}" for m, where in feed.where.items())
    )
    for note in notes:
        log(f"fusion: {note}")
    # channels-last: what cuDNN's fastest convolutions take under bf16, and oneDNN's on CPU (the decoded images
    # arrive channels-last)
    model = FusionNet(branches, task.widths, cfg).to(device, memory_format=torch.channels_last)
    if cfg.compile:
        model.compile()
    return _Run(
        device=device,
        model=model,
        opt=_optimizer(model, [b.encoder for b in trained if b.pretrained], cfg, lr),
        # float16 needs its gradients scaled (bfloat16 has float32's range): a no-op on CPU and bfloat16 GPUs
        scaler=torch.amp.GradScaler("cuda", enabled=device.type == "cuda" and not torch.cuda.is_bf16_supported()),
        feed=feed,
        augments=augments,
        views=views,
        kinds=output_losses(task.outputs, task.metric_name),
        batch=batch,
        # no gradients to keep: evaluation takes four times the training batch (cached features, far more)
        eval_size=4 * batch if trained else max(1024, batch),
        mean=mean,
        scale=scale,
        trained=trained,
        notes=notes,
    )


@contextmanager
def _threads_for(run: _Run):
    """Small matrices on cached features: more CPU threads only add synchronisation (and suffer most when several
    trainings share the cores). The caller's thread count is restored."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1 if run.device.type == "cpu" and not run.trained else threads)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def _epoch_batches(rows: np.ndarray, cfg: FusionConfig, batch: int, gen: torch.Generator) -> list[list[int]]:
    """One epoch's batches: every row shuffled, or with epoch_rows the first of them (a fresh sample each epoch)."""
    batches = _shuffled(rows, batch, gen)
    return batches[: max(1, math.ceil(cfg.epoch_rows / batch))] if cfg.epoch_rows else batches


def _cap_note(cfg: FusionConfig, epochs_done: int, planned: int, seconds: float) -> str:
    return (
        f"SAFETY CAP: stopped after {epochs_done} of {planned} planned epochs at {seconds:.0f} s (cap "
        f"{cfg.max_time:.0f} s): this machine ran far slower than the budget's plan"
    )


def train_fusion(
    task: TaskData,
    config: FusionConfig | None = None,
    log: Callable[[str], None] = print,
    on_epoch: Callable[[dict], None] | None = None,
) -> FusionResult:
    """Train on the task's fit rows less a holdout of them (task.holdout: the stop rows), with early stopping on
    the stop rows' score; predict the validation rows and every test row in model space with the best epoch's
    weights. log: text lines (notes, the result). on_epoch: called after each epoch with {epoch, epochs (the most
    that may run), seconds (since the start), images_per_s (samples trained per second of the training pass),
    gpu_mem_gb (peak; None on CPU), train_loss, stop_loss, stop_score, batch_size, samples (trained in the
    epoch)}; the history keeps the same dicts. The epochs are config.max_epochs at most, whatever the machine's
    speed: max_time is a safety cap that only stops a runaway, and the result says when it did (capped, and a
    note)."""
    cfg, start = config or FusionConfig(), time.monotonic()
    deadline = start + cfg.max_time
    _, val = task.split
    learn, stop, skip = _learning(task, cfg)
    learn = taught(task, learn)
    stop = watched_rows(stop, cfg.stop_rows)
    run = _prepare(task, cfg, learn, log, skip)
    device, model, feed, batch = run.device, run.model, run.feed, run.batch
    order = torch.Generator().manual_seed(cfg.seed)
    best, history, capped = None, [], False
    with _threads_for(run):
        for epoch in range(1, cfg.max_epochs + 1):
            if device.type == "cuda":
                torch.cuda.reset_peak_memory_stats(device)
            began = time.monotonic()
            losses, seen, capped = _epoch(
                model,
                run.opt,
                run.scaler,
                feed(_epoch_batches(learn, cfg, batch, order)),
                run.augments,
                run.kinds,
                deadline,
            )
            _synchronize(device)
            images_per_s = seen / max(time.monotonic() - began, 1e-9)
            if capped and best is not None:
                break  # a cut epoch is not evaluated: the best one so far stands
            logits, t = _logits(model, feed, stop, run.eval_size, device)
            stop_loss = _loss(logits, t, run.kinds)
            score = task.score(to_model_space(logits, task.outputs, run.mean, run.scale), stop)
            history.append(
                {
                    "epoch": epoch,
                    "epochs": cfg.max_epochs,
                    "seconds": time.monotonic() - start,
                    "images_per_s": images_per_s,
                    "gpu_mem_gb": _peak_memory_gb(device),
                    "train_loss": losses,
                    "stop_loss": float("nan") if stop_loss is None else float(stop_loss),
                    "stop_score": score,
                    "batch_size": batch,
                    "samples": seen,
                }
            )
            if on_epoch is not None:
                on_epoch(dict(history[-1]))
            loss = history[-1]["stop_loss"]
            if _improves(task, score, best):
                best = {
                    "epoch": epoch,
                    "stop_score": score,
                    "stop_loss": loss,
                    "state": {k: v.detach().clone() for k, v in model.state_dict().items()},
                    "progress": (epoch, loss),
                }
            elif _stalled(score, loss, best, epoch, cfg.patience):
                break
            if capped:
                break
        model.load_state_dict(best["state"])
        val_logits, _ = _logits(model, feed, val, run.eval_size, device, run.views)
        test_logits, _ = _logits(model, feed, _test_rows(task), run.eval_size, device, run.views)
    notes = run.notes
    if capped:
        notes.append(_cap_note(cfg, len(history), cfg.max_epochs, time.monotonic() - start))
        log(f"fusion: {notes[-1]}")
    val_pred = to_model_space(val_logits, task.outputs, run.mean, run.scale)
    result = FusionResult(
        val_pred,
        to_model_space(test_logits, task.outputs, run.mean, run.scale),
        task.score(val_pred, val),
        best["stop_score"],
        best["stop_loss"],
        best["epoch"],
        len(history),
        time.monotonic() - start,
        history,
        str(device),
        notes,
        batch,
        capped,
    )
    log(
        f"fusion: best epoch {result.best_epoch}/{result.epochs_run} by the {len(stop)} stop rows' "
        f"{task.metric_name} {result.stop_score:.5f}; validation {task.metric_name} {result.val_score:.5f} on "
        f"{len(val)} rows; {result.seconds:.1f}s on {device}"
    )
    return result


def watched_rows(stop: np.ndarray, most: int = STOP_ROWS) -> np.ndarray:
    """The stop rows scored after every epoch: all of them, or `most` drawn at random when there are more (on a
    table of a million rows, scoring its 160,000 stop rows each epoch left a CPU plan 128 rows an epoch to learn
    from); the others stay unseen."""
    return at_most(stop, most, np.random.default_rng(0))


def refit_fusion(
    task: TaskData,
    config: FusionConfig,
    epochs: int,
    log: Callable[[str], None] = print,
    rows: np.ndarray | None = None,
    held: np.ndarray | None = None,
    check: np.ndarray | None = None,
) -> RefitResult:
    """Train on every train row (fit and validation; with config.learn_sample, those of the sample's learning
    rows), or on `rows` of them, for exactly `epochs` epochs (a trial's best epoch count: no row is left for early
    stopping) and predict in model space with the last epoch's weights every test row, or the train rows `held`
    (one fold of a cross-validation), and the train rows `check` (rows it learnt from: how well it fitted them)."""
    cfg, start = config, time.monotonic()
    deadline = start + cfg.max_time
    skip = _learning(task, cfg)[2] if rows is None else None
    rows = np.setdiff1d(np.arange(len(task.train)), skip) if rows is None else np.asarray(rows)
    run = _prepare(task, cfg, rows, log, skip)
    rows = taught(task, rows)
    order = torch.Generator().manual_seed(cfg.seed)
    done, samples, capped = 0, 0, False
    with _threads_for(run):
        while done < epochs and not capped:
            batches = run.feed(_epoch_batches(rows, cfg, run.batch, order))
            _, seen, capped = _epoch(run.model, run.opt, run.scaler, batches, run.augments, run.kinds, deadline)
            done, samples = done + 1, samples + seen
        predicted = _test_rows(task) if held is None else np.asarray(held)  # train rows come first in a Feed
        test_logits, _ = _logits(run.model, run.feed, predicted, run.eval_size, run.device, run.views)
        if check is not None and len(check):
            checked, _ = _logits(run.model, run.feed, np.asarray(check), run.eval_size, run.device, run.views)
    notes = run.notes
    if capped:
        notes.append(_cap_note(cfg, done, epochs, time.monotonic() - start))
        log(f"fusion: {notes[-1]}")
    result = RefitResult(
        to_model_space(test_logits, task.outputs, run.mean, run.scale),
        len(rows),
        done,
        samples,
        time.monotonic() - start,
        capped,
        notes,
        to_model_space(checked, task.outputs, run.mean, run.scale) if check is not None and len(check) else None,
    )
    log(f"fusion: refitted on all {result.rows} rows for {result.epochs} epochs, {result.seconds:.1f}s")
    return result


def _test_rows(task: TaskData) -> np.ndarray:
    """The test rows' numbers in a Feed (train rows come first)."""
    return np.arange(len(task.train), len(task.train) + len(task.test))


def epoch_line(report: dict, metric_name: str) -> str:
    """One on_epoch report as a progress line."""
    memory = f", {report['gpu_mem_gb']:.1f} GB GPU" if report["gpu_mem_gb"] is not None else ""
    return (
        f"fusion epoch {report['epoch']}/{report['epochs']}: train loss {report['train_loss']:.4f}, "
        f"stop-rows loss {report['stop_loss']:.4f}, stop-rows {metric_name} {report['stop_score']:.5f}; "
        f"{report['images_per_s']:.0f} samples/s (batch {report['batch_size']}){memory}"
    )


def _epoch(
    model: FusionNet,
    opt: torch.optim.Optimizer,
    scaler: torch.amp.GradScaler,
    batches: Iterator[tuple[dict, torch.Tensor]],
    augments: dict[str, Callable],
    kinds: list[str],
    deadline: float,
) -> tuple[float, int, bool]:
    """One pass over the fit rows; returns the mean batch loss (nan without one), the samples trained on, and
    whether the deadline cut it short. The losses add up on the device: reading each would wait for the GPU."""
    model.train()
    total, steps, seen = None, 0, 0
    for x, t in batches:
        x |= {m: fn(x[m]) for m, fn in augments.items()}
        with _autocast(t.device):
            loss = _loss(model(x), t, kinds)
        if loss is not None:
            opt.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
            total = loss.detach() if total is None else total + loss.detach()
            steps += 1
            seen += len(t)
        if time.monotonic() > deadline:
            return _mean(total, steps), seen, True
    return _mean(total, steps), seen, False


def _loss(logits: list[torch.Tensor], t: torch.Tensor, kinds: list[str]) -> torch.Tensor | None:
    """The heads' loss of a batch whose targets (one column per output) may be followed by the rows' weights, one
    column per output (_prepare: where the metric weighs rows unequally)."""
    k = len(kinds)
    return head_loss(logits, t[:, :k], kinds, t[:, k:] if t.shape[1] > k else None)


def _mean(total: torch.Tensor | None, steps: int) -> float:
    return float(total.item() / steps) if steps else float("nan")
