"""Image inputs (the img input maps: one column, each sample's image path, relative to the workspace or absolute):
the map dataset turns a path into a normalised tensor, the light net trains a small CNN on small images, the
fusion net a timm backbone, trained or frozen. The modality interface is described in tools/map_dataset.py."""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlparse

import numpy as np
import pandas as pd
import torch
from torch import nn

from agentk.modalities import IMAGE, TABULAR

if TYPE_CHECKING:
    from tools.fusion import Branch, FusionConfig
    from tools.map_dataset import MapDataset

NAME = IMAGE.name
IMAGENET_MEAN, IMAGENET_STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)
LIGHT_SIZE, LIGHT_WIDTH = 32, 32  # the light net's image side and branch width


# --------------------------------------------------------------------------- map dataset


def check_map(frame: pd.DataFrame, name: str) -> None:
    cols = list(frame.columns)
    if len(cols) != 1:
        raise ValueError(
            f"{name} has {len(cols)} columns after id {cols[:5]}, expected exactly one: the image path "
            "(relative to the workspace, or absolute); keep one path column and move other columns "
            f"into the {TABULAR.name} map"
        )


def dataset_transform(ws: Path, map_name: str, options: dict) -> ImageTransform:
    return ImageTransform(ws, size=options["image_size"], map_name=map_name)


class ImageTransform:
    """Image path (a map row) -> float32 tensor (3, size, size), normalised with the ImageNet statistics."""

    def __init__(self, ws: Path, size: int = 64, train: bool = False, map_name: str = f"the {NAME} input map"):
        from torchvision.transforms import v2

        self.ws, self.size, self.map_name = Path(ws), size, map_name
        steps = [v2.Resize((size, size), antialias=True)]
        if train:
            steps.append(v2.RandomHorizontalFlip())
        steps += [v2.ToImage(), v2.ToDtype(torch.float32, scale=True), v2.Normalize(IMAGENET_MEAN, IMAGENET_STD)]
        self.pipeline = v2.Compose(steps)

    def __call__(self, row):
        return self.pipeline(self.open(np.atleast_1d(row)[0]))

    def open(self, cell):
        """The image at a path cell as an RGB PIL image; a ValueError says which file and map are wrong."""
        from PIL import Image

        if pd.isna(cell) or not str(cell).strip():
            raise ValueError(f"an empty image path in {self.map_name}: fill the path column for every row")
        path = self.ws / str(cell)  # an absolute path stays absolute
        try:
            with Image.open(path) as img:
                img.seek(0)  # the first frame of gifs and multi-page tiffs
                img.draft(None, (self.size, self.size))  # JPEGs decode at a reduced scale: much faster
                img.load()
                return to_rgb(img)
        except FileNotFoundError:
            problem = "file not found"
        except Image.UnidentifiedImageError:
            problem = "cannot identify image (not an image or corrupt)"
        except (OSError, SyntaxError, ValueError) as exc:
            problem = f"cannot read image ({exc})"
        raise ValueError(
            f"{cell} in {self.map_name}: {problem}; fix the path column "
            "(paths are relative to the workspace, or absolute)"
        )


def to_rgb(img):
    """Any PIL mode -> RGB: 16-bit and float images are rescaled to 0..255 (not clipped to white), transparent
    images are laid on white."""
    from PIL import Image

    if img.mode in ("I", "F") or img.mode.startswith("I;16"):
        # per-image min..max: the bit depth says nothing of the range used (12-bit sensors, float maps)
        a = np.asarray(img, dtype=np.float64)
        lo, hi = np.nanmin(a), np.nanmax(a)
        a = (a - lo) / (hi - lo) * 255 if hi > lo else np.zeros_like(a)
        img = Image.fromarray(np.nan_to_num(a).astype(np.uint8), "L")
    if img.mode in ("RGBA", "LA", "PA") or (img.mode == "P" and "transparency" in img.info):
        white = Image.new("RGBA", img.size, (255, 255, 255, 255))
        img = Image.alpha_composite(white, img.convert("RGBA"))
    return img.convert("RGB")


# --------------------------------------------------------------------------- light net


def light_branch(parts: list[tuple[MapDataset, np.ndarray]], width: int) -> tuple[list[torch.Tensor], nn.Module, int]:
    """Small images, once per part; a two-layer CNN (its own width: pooled channels)."""
    tensors = []
    for ds, idx in parts:
        tf = ImageTransform(ds.ws, size=LIGHT_SIZE, map_name=ds.maps[NAME].name)
        rows = ds.inputs[NAME].to_numpy(dtype=object)[idx]
        tensors.append(torch.stack([tf(r) for r in rows]) if len(rows) else torch.zeros(0, 3, LIGHT_SIZE, LIGHT_SIZE))
    branch = nn.Sequential(  # the strided first conv makes it 4x cheaper on CPU
        nn.Conv2d(3, 16, 3, stride=2, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(16, LIGHT_WIDTH, 3, padding=1),
        nn.ReLU(),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
    )
    return tensors, branch, LIGHT_WIDTH


# --------------------------------------------------------------------------- fusion net


def fusion_branch(frame: pd.DataFrame, ws: Path, cfg: FusionConfig, fit: np.ndarray) -> Branch:
    """The backbone over images read per batch (augmented on the fit rows when trained), or frozen."""
    from tools.fusion import Branch

    encoder = ImageEmbedder(cfg.image_backbone, cfg.pretrained)
    plain = ImageTransform(ws, cfg.image_size, map_name=f"the {NAME} input maps")
    augment = ImageTransform(ws, cfg.image_size, train=True, map_name=plain.map_name) if cfg.finetune_image else None
    return Branch(
        encoder,
        encoder.dim,
        read=_Images(frame.iloc[:, 0].tolist(), plain, augment),
        backbone=True,
        pretrained=encoder.pretrained,
        frozen=not cfg.finetune_image,
        embed_batch=4,
        title="image backbone",
        notes=[encoder.note],
    )


class _Images:
    """Rows -> their images as one batch tensor; picklable, so that DataLoader workers can read them."""

    def __init__(self, paths: list, plain: ImageTransform, augment: ImageTransform | None):
        self.paths, self.plain, self.augment = paths, plain, augment

    def __call__(self, rows: list[int], augment: bool = False) -> torch.Tensor:
        tf = self.augment if augment and self.augment is not None else self.plain
        return torch.stack([tf(self.paths[r]) for r in rows])


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
        return (
            timm.create_model(
                name, pretrained=True, num_classes=0, pretrained_cfg_overlay={"file": cached} if cached else None
            ),
            f"{name}: pretrained weights{' (cached)' if cached else ''}",
        )
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
