"""Image inputs (the img input maps: one column, each sample's image path, relative to the workspace or absolute):
the map dataset turns a path into a normalised tensor, the light net trains a small CNN on small images, the
fusion net a timm backbone, trained or frozen. The modality interface is described in tools/map_dataset.py."""

from __future__ import annotations

import hashlib
import os
import socket
import time
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlparse

import numpy as np
import pandas as pd
import torch
from torch import nn

from agentk.modalities import IMAGE, TABULAR
from agentk.workspace import Workspace

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

    def __init__(self, ws: Path, size: int = 64, map_name: str = f"the {NAME} input map"):
        from torchvision.transforms import v2

        self.ws, self.size, self.map_name = Path(ws), size, map_name
        self.pipeline = v2.Compose(
            [v2.ToImage(), v2.ToDtype(torch.float32, scale=True), v2.Normalize(IMAGENET_MEAN, IMAGENET_STD)]
        )

    def __call__(self, row):
        return self.pipeline(self.pixels(np.atleast_1d(row)[0]))

    def pixels(self, cell) -> np.ndarray:
        """The image at a path cell, RGB, resized to size x size: uint8 (size, size, 3)."""
        from PIL import Image

        return np.array(self.open(cell).resize((self.size, self.size), Image.BILINEAR))  # writable, for torch

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
    """The backbone over the images decoded once at the training size (augmented on the device when trained), or
    frozen."""
    from tools.fusion import Branch

    encoder = ImageEmbedder(cfg.image_backbone, cfg.pretrained)
    images, note = decoded(frame.iloc[:, 0].tolist(), ws, cfg.image_size, f"the {NAME} input maps")
    return Branch(
        encoder,
        encoder.dim,
        inputs=images,
        augment=augment if cfg.finetune_image else None,
        backbone=True,
        pretrained=encoder.pretrained,
        frozen=not cfg.finetune_image,
        embed_batch=4,
        title="image backbone",
        notes=[encoder.note, note],
    )


IN_MEMORY_SHARE = 0.5  # decoded images stay in memory when they take at most this share of the available memory
_DECODED: dict[str, torch.Tensor] = {}  # the last images decoded in memory: a solve's next trial reuses them


def decoded(paths: list, ws: Path, size: int, map_name: str) -> tuple[torch.Tensor | MappedImages, str]:
    """Every image decoded once, RGB at size x size: uint8 (rows, size, size, 3), in memory when it fits (kept for
    the next call on the same files), else a memory-mapped file in the workspace (kept there, and reused while
    the files are unchanged). Returns the images and a note saying where they are."""
    import psutil

    tf = ImageTransform(ws, size, map_name=map_name)
    key = _images_key(tf, paths)
    shape = (len(paths), size, size, 3)
    if key in _DECODED:
        return _DECODED[key], f"{len(paths)} images at {size}px in memory (decoded before)"
    began = time.monotonic()
    if np.prod(shape) <= IN_MEMORY_SHARE * psutil.virtual_memory().available:
        _DECODED.clear()  # before decoding: the previous images are not needed any more
        images = np.empty(shape, dtype=np.uint8)
        _decode_into(images, tf, paths)
        _DECODED[key] = torch.from_numpy(images)
        return _DECODED[key], f"{len(paths)} images decoded at {size}px in memory in {time.monotonic() - began:.1f}s"
    path = Workspace(ws).image_cache(size, key)
    if path.exists():
        return MappedImages(path), f"{len(paths)} images at {size}px memory-mapped from {path}"
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")  # renamed once complete: a killed run leaves no cache
    images = np.lib.format.open_memmap(partial, mode="w+", dtype=np.uint8, shape=shape)
    _decode_into(images, tf, paths)
    images.flush()
    del images
    os.replace(partial, path)
    note = f"{len(paths)} images decoded at {size}px into {path} in {time.monotonic() - began:.1f}s"
    return MappedImages(path), note


def _images_key(tf: ImageTransform, paths: list) -> str:
    """What the cache holds: the files (path, size, modification time) and the side."""
    digest = hashlib.sha1(f"{tf.size}".encode())
    for cell in paths:
        try:
            st = (tf.ws / str(cell)).stat()
            digest.update(f"\0{tf.ws / str(cell)}\0{st.st_size}\0{st.st_mtime_ns}".encode())
        except (OSError, ValueError):  # unreadable: decoding says what is wrong
            digest.update(f"\0{cell}".encode())
    return digest.hexdigest()[:16]


def _decode_into(out: np.ndarray, tf: ImageTransform, paths: list) -> None:
    """Decodes paths[i] into out[i] in threads (as many as the cores, and a few): Pillow releases the GIL while it
    decodes and resizes."""
    from concurrent.futures import ThreadPoolExecutor

    def one(i: int) -> None:
        out[i] = tf.pixels(paths[i])

    with ThreadPoolExecutor() as pool:
        for _ in pool.map(one, range(len(paths))):  # the first failure raises here, naming its file
            pass


class MappedImages:
    """Decoded images in a .npy file: rows -> uint8 tensor (rows, S, S, 3). Pickles as its path: each loader worker
    maps the file itself."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self._array = np.load(self.path, mmap_mode="r")

    def __len__(self) -> int:
        return len(self._array)

    @property
    def nbytes(self) -> int:
        return self._array.nbytes

    def __getitem__(self, rows) -> torch.Tensor:
        return torch.from_numpy(self._array[np.asarray(rows)])

    def __getstate__(self) -> dict:
        return {"path": self.path}

    def __setstate__(self, state: dict) -> None:
        self.__init__(state["path"])


def augment(images: torch.Tensor) -> torch.Tensor:
    """A batch of decoded images (B, S, S, 3) -> each shifted by up to S/8 px along both axes (edges repeated) and
    flipped left-right with probability 1/2: one gather, on the batch's device."""
    n, side = images.shape[:2]
    device = images.device
    reach = max(1, side // 8)
    shift = torch.randint(-reach, reach + 1, (2, n, 1), device=device)
    steps = torch.arange(side, device=device)
    ys, xs = (steps + shift[0]).clamp(0, side - 1), (steps + shift[1]).clamp(0, side - 1)
    xs = torch.where(torch.rand(n, 1, device=device) < 0.5, xs.flip(1), xs)
    return images[torch.arange(n, device=device)[:, None, None], ys[:, :, None], xs[:, None, :]]


class ImageEmbedder(nn.Module):
    """A classifier-less backbone: decoded images (B, S, S, 3) uint8 -> pooled features (B, dim). The images enter
    as channels-last floats normalised here, on the device. `note` says which weights."""

    def __init__(self, name: str, pretrained: bool):
        super().__init__()
        self.backbone, self.note = _backbone(name, pretrained)
        self.pretrained = "random initialisation" not in self.note
        self.dim = int(self.backbone.num_features)
        self.register_buffer("mean", torch.tensor(IMAGENET_MEAN).view(1, 3, 1, 1) * 255, persistent=False)
        self.register_buffer("std", torch.tensor(IMAGENET_STD).view(1, 3, 1, 1) * 255, persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # (B, S, S, 3) viewed as (B, 3, S, S) is channels-last already: no copy
        return self.backbone((x.permute(0, 3, 1, 2).float() - self.mean) / self.std)


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
