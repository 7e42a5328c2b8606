"""Image inputs (the img input maps: one column, each sample's image path, relative to the workspace or absolute):
the map dataset turns a path into a normalised tensor, the light net trains a small CNN on small images, the
fusion net a timm backbone, trained or frozen. The modality interface is described in tools/map_dataset.py."""

from __future__ import annotations

import hashlib
import os
import socket
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import astuple, dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlparse

import numpy as np
import pandas as pd
import torch
from torch import nn

from agentk.core.fileio import written_array
from agentk.modalities import IMAGE, TABULAR
from agentk.workspace import Workspace
from tools.fusion_config import Branch, FusionConfig
from tools.image_files import cell_paths, cell_size, grid, mosaic, open_image
from tools.machine import images_in_memory

if TYPE_CHECKING:
    from collections.abc import Callable

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
        self.ws, self.size, self.map_name = Path(ws), size, map_name
        self.unreadable: set[str] = set()  # files there that did not decode, warned about once each
        # plain torch, not torchvision's transforms: importing torchvision costs seconds (its ops import
        # torch._dynamo), in every sandboxed check and solve that reads an image
        self.mean = torch.tensor(IMAGENET_MEAN).view(3, 1, 1)
        self.std = torch.tensor(IMAGENET_STD).view(3, 1, 1)

    def __call__(self, row):
        pixels = torch.from_numpy(self.pixels(np.atleast_1d(row)[0])).permute(2, 0, 1)
        return (pixels.to(torch.float32) / 255 - self.mean) / self.std

    def pixels(self, cell) -> np.ndarray:
        """The image at a path cell, RGB, resized to size x size: uint8 (size, size, 3)."""
        from PIL import Image

        return np.array(self.open(cell).resize((self.size, self.size), Image.BILINEAR))  # writable, for torch

    def open(self, cell):
        """The image at a path cell as an RGB PIL image; a ValueError says which file and map are wrong."""
        from PIL import Image

        if pd.isna(cell) or not str(cell).strip():
            raise ValueError(f"an empty image path in {self.map_name}: fill the path column for every row")
        try:
            paths = cell_paths(self.ws, cell)  # an absolute path stays absolute
            if len(paths) == 1:
                return self._read(paths[0])
            cols, rows = grid(len(paths))  # several views: each cut to its share of the side as it is read
            tile = (max(1, self.size // cols), max(1, self.size // rows))
            return mosaic([self._read(path).resize(tile, Image.BILINEAR) for path in paths])
        except FileNotFoundError:
            raise ValueError(
                f"{cell} in {self.map_name}: file not found; fix the path column "
                "(paths are relative to the workspace, or absolute)"
            ) from None
        except Image.UnidentifiedImageError:
            problem = "cannot identify image (not an image or corrupt)"
        except Image.DecompressionBombError as exc:  # a header claiming billions of pixels
            problem = f"image too large ({exc})"
        except (OSError, SyntaxError, ValueError) as exc:
            problem = f"cannot read image ({exc})"
        # a file that is there but does not decode (cut short, empty): competitions ship a few such, and one must
        # not stop the rest (the image map's unit test fails a map whose sampled files mostly do not decode)
        if str(cell) not in self.unreadable:
            self.unreadable.add(str(cell))
            warnings.warn(f"{cell} in {self.map_name}: {problem}; read as a black image", stacklevel=2)
        return Image.new("RGB", (self.size, self.size))

    def _read(self, path: Path):

        with open_image(path) as img:
            img.seek(0)  # the first frame of gifs and multi-page tiffs
            img.draft(None, (self.size, self.size))  # JPEGs decode at a reduced scale: much faster
            img.load()
            return to_rgb(img)


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

    encoder = ImageEmbedder(cfg.image_backbone, cfg.pretrained)
    paths = frame.iloc[:, 0].tolist()
    side = tiny_side(paths, ws) if isinstance(encoder.backbone, TinyCNN) else cfg.image_size
    images, note = decoded(paths, ws, side, f"the {NAME} input maps")
    notes, augments = [encoder.note, note], None
    if cfg.finetune_image:
        augments, why = symmetries(images, fit)
        notes.append(why)
    return Branch(
        encoder,
        encoder.dim,
        inputs=images,
        augment=augments,
        views=augments.views() if augments else [],
        backbone=True,
        pretrained=encoder.pretrained,
        frozen=not cfg.finetune_image,
        embed_batch=4,
        title="image backbone",
        notes=notes,
    )


_DECODED: dict[str, torch.Tensor] = {}  # the last images decoded in memory: a solve's next trial reuses them


def decoded(paths: list, ws: Path, size: int, map_name: str) -> tuple[torch.Tensor | MappedImages, str]:
    """Every image decoded once, RGB at size x size: uint8 (rows, size, size, 3), in memory when it fits (kept for
    the next call on the same files), else a memory-mapped file in the workspace (kept there, and reused while
    the files are unchanged). Returns the images and a note saying where they are."""

    tf = ImageTransform(ws, size, map_name=map_name)
    key = _images_key(tf, paths)
    shape = (len(paths), size, size, 3)
    if key in _DECODED:
        return _DECODED[key], f"{len(paths)} images at {size}px in memory (decoded before)"
    began = time.monotonic()
    if images_in_memory(int(np.prod(shape))):  # under the solve's memory limit, with room to spare
        _DECODED.clear()  # before decoding: the previous images are not needed any more
        images = np.empty(shape, dtype=np.uint8)
        _decode_into(images, tf, paths)
        _DECODED[key] = torch.from_numpy(images)
        return _DECODED[key], f"{len(paths)} images decoded at {size}px in memory in {time.monotonic() - began:.1f}s"
    path = Workspace(ws).image_cache(size, key)
    if path.exists():
        return MappedImages(path), f"{len(paths)} images at {size}px memory-mapped from {path}"
    with written_array(path, np.uint8, shape) as images:  # a killed run leaves no cache
        _decode_into(images, tf, paths)
    note = f"{len(paths)} images decoded at {size}px into {path} in {time.monotonic() - began:.1f}s"
    return MappedImages(path), note


def _images_key(tf: ImageTransform, paths: list) -> str:
    """What the cache holds: the files (path, size, modification time) and the side."""
    digest = hashlib.sha1(f"{tf.size}".encode())
    for cell in paths:
        for path in cell_paths(tf.ws, cell):
            try:
                st = path.stat()
                digest.update(f"\0{path}\0{st.st_size}\0{st.st_mtime_ns}".encode())
            except (OSError, ValueError):  # unreadable: decoding says what is wrong
                digest.update(f"\0{path}".encode())
    return digest.hexdigest()[:16]


def _decode_into(out: np.ndarray, tf: ImageTransform, paths: list) -> None:
    """Decodes paths[i] into out[i] in threads (as many as the cores, and a few): Pillow releases the GIL while it
    decodes and resizes."""

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


@dataclass(frozen=True)
class Augment:
    """A batch of decoded images (B, S, S, 3) -> each shifted by up to S/8 px along both axes (edges repeated) and,
    each with probability 1/2, mirrored left-right, turned upside down and transposed, as far as this collection of
    images looks the same so (`symmetries`): one gather and a transposition, on the batch's device."""

    mirror: bool = True
    upside_down: bool = False
    transpose: bool = False

    def __call__(self, images: torch.Tensor) -> torch.Tensor:
        n, side = images.shape[:2]
        device = images.device
        reach = max(1, side // 8)
        shift = torch.randint(-reach, reach + 1, (2, n, 1), device=device)
        steps = torch.arange(side, device=device)
        ys, xs = (steps + shift[0]).clamp(0, side - 1), (steps + shift[1]).clamp(0, side - 1)
        if self.mirror:
            xs = torch.where(torch.rand(n, 1, device=device) < 0.5, xs.flip(1), xs)
        if self.upside_down:
            ys = torch.where(torch.rand(n, 1, device=device) < 0.5, ys.flip(1), ys)
        out = images[torch.arange(n, device=device)[:, None, None], ys[:, :, None], xs[:, None, :]]
        if self.transpose:  # the images are square
            out = torch.where(torch.rand(n, 1, 1, 1, device=device) < 0.5, out.transpose(1, 2), out)
        return out

    def views(self) -> list[Callable[[torch.Tensor], torch.Tensor]]:
        """The images seen otherwise at prediction time (test-time augmentation): mirrored, upside down and
        transposed, as far as training saw them so."""
        flags = (self.mirror, self.upside_down, self.transpose)
        return [view for view, on in zip((_mirrored, _upside_down, _transposed), flags, strict=True) if on]


def _mirrored(images: torch.Tensor) -> torch.Tensor:
    return images.flip(2)


def _upside_down(images: torch.Tensor) -> torch.Tensor:
    return images.flip(1)


def _transposed(images: torch.Tensor) -> torch.Tensor:
    return images.transpose(1, 2)


PROBES, PROBE_SIDE = 2000, 16  # fit images the symmetry test reads, and the side it compares them at
# Of the probed images, the share that lie farther from the other images when transformed than as they are: 1/2 if
# the collection looks the same transformed. Measured on 2,000 images at 32 px (2026-11-26):
#   mirrored:    MNIST 0.96 (mirrored training cost its CNN 1.1 points of accuracy), leaf silhouettes 0.87,
#                Fashion-MNIST 0.77-0.81 (shoes all point one way; mirroring neither helps nor hurts, 0.832 against
#                0.828), synthetic pet photos 0.48;
#   upside down: MNIST 0.95, Fashion-MNIST 0.96, synthetic pet photos 0.93; transposed: 0.93-0.98 for all of them;
#   any of them, of the same images each turned at random by one of the 8 flips and turns: 0.46-0.54.
# Mirroring is the default (photos); it is off when the share is above MIRROR_FARTHER. Turning upside down and
# transposing (microscopy, aerial views: the 8 flips and turns) are added when the share is at most TURN_FARTHER.
# benchmarks/augmentations.py measures the choice against the alternatives (docs/benchmarks.md, "Augmentations": digits,
# clothes, turned digits).
MIRROR_FARTHER, TURN_FARTHER = 0.9, 0.6


def _grey(batch: torch.Tensor) -> torch.Tensor:
    """Decoded images (B, S, S, 3) uint8 -> grey (B, PROBE_SIDE, PROBE_SIDE) floats."""
    return nn.functional.adaptive_avg_pool2d(batch.float().mean(dim=3)[:, None], PROBE_SIDE)[:, 0]


def symmetries(images, fit: np.ndarray) -> tuple[Augment, str]:
    """(the augmentation, a note saying why): the flips and turns under which the fit images look the same."""
    farther = farther_shares(images, fit)
    if farther is None:
        return Augment(), f"shifted, mirrored in training ({len(fit)} fit images, too few to test flips and turns)"
    aug = Augment(
        farther["mirrored"] <= MIRROR_FARTHER,
        farther["upside down"] <= TURN_FARTHER,
        farther["transposed"] <= TURN_FARTHER,
    )
    done = [w for w, on in zip(("mirrored", "turned upside down", "transposed"), astuple(aug), strict=True) if on]
    shares = ", ".join(f"{v:.0%} {k}" for k, v in farther.items())
    why = f"of {min(len(fit), PROBES) // 4} fit images, {shares} lie farther from the others than as they are"
    return aug, f"shifted{''.join(', ' + w for w in done)} in training: {why}"


def farther_shares(images, fit: np.ndarray) -> dict[str, float] | None:
    """{"mirrored", "upside down", "transposed"} -> the share of probed fit images that lie farther from the other
    fit images so transformed than as they are; None when there are too few to tell. A quarter of up to PROBES fit
    images (grey, PROBE_SIDE px, centred and scaled) are the probes; each one's distance to its nearest neighbour
    among the rest is compared with its transformed image's."""
    rows = np.random.default_rng(0).permutation(np.asarray(fit))[:PROBES]
    probes = len(rows) // 4
    if probes < 20:
        return None
    x = torch.cat([_grey(images[rows[k : k + 256]]) for k in range(0, len(rows), 256)])  # chunks: 224 px images
    x = x - x.mean(dim=(1, 2), keepdim=True)
    x = x / (x.flatten(1).norm(dim=1)[:, None, None] + 1e-6)
    ref, probe = x[probes:].flatten(1), x[:probes]
    as_is = torch.cdist(probe.flatten(1), ref).min(dim=1).values
    return {
        name: float((torch.cdist(t.flatten(1), ref).min(dim=1).values > as_is).float().mean())
        for name, t in (("mirrored", probe.flip(2)), ("upside down", probe.flip(1)), ("transposed", probe.mT))
    }


class ImageEmbedder(nn.Module):
    """A classifier-less backbone: decoded images (B, S, S, 3) uint8 -> pooled features (B, dim). The images enter
    as channels-last floats normalised here, on the device. `note` says which weights."""

    def __init__(self, name: str, pretrained: bool):
        super().__init__()
        self.backbone, self.note, self.pretrained = _backbone(name, pretrained)
        self.dim = int(self.backbone.num_features)
        self.register_buffer("mean", torch.tensor(IMAGENET_MEAN).view(1, 3, 1, 1) * 255, persistent=False)
        self.register_buffer("std", torch.tensor(IMAGENET_STD).view(1, 3, 1, 1) * 255, persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # (B, S, S, 3) viewed as (B, 3, S, S) is channels-last already: no copy
        return self.backbone((x.permute(0, 3, 1, 2).float() - self.mean) / self.std)


WEIGHTS_ENV = "AGENTK_WEIGHTS"  # a folder of backbone weights: `agentk solve --weights DIR` sets it for the solver
TINY_SIDE, MIN_TINY_SIDE = 48, 32  # the tiny CNN's image side: small images keep an epoch short on a CPU
SIDE_PROBES = 64  # images whose size tiny_side reads


def tiny_side(paths: list, ws: Path) -> int:
    """The tiny CNN's image side for these images: their median side rounded up to a multiple of 8, between
    MIN_TINY_SIDE and TINY_SIDE. Decoding 28 px images at 48 px adds no information and doubles an epoch's cost."""
    sides = []
    for cell in paths[:: max(1, len(paths) // SIDE_PROBES)][:SIDE_PROBES]:
        try:
            sides.append(max(cell_size(ws, cell)))
        except (OSError, ValueError):  # unreadable: decoding says which file is wrong
            continue
    native = int(np.median(sides)) if sides else TINY_SIDE
    return int(np.clip(-(-native // 8) * 8, MIN_TINY_SIDE, TINY_SIDE))


def image_encoder(name: str, pretrained: bool, paths: list, ws: Path, size: int) -> tuple[bool, int]:
    """(tiny?, side) of the encoder fusion_branch builds for these images, told before it trains (a network's plan
    depends on it): the tiny CNN at tiny_side when _backbone falls back to it, else the timm model at `size`.
    The same decision as fusion_branch's, from the same function."""
    tiny = isinstance(_backbone(name, pretrained)[0], TinyCNN)
    return tiny, tiny_side(paths, ws) if tiny else size


class TinyCNN(nn.Sequential):
    """What trains when no pretrained weights exist: four conv stages (24 to 192 channels, each halving the side
    after the first), batch-normalised, 0.65M weights; on a 2-core CPU it trains 370 images per second at 48 px and
    730 at 32 px (resnet18: 165 at 64 px), so it gets many epochs where a random resnet18 would get one."""

    def __init__(self, widths: tuple[int, ...] = (24, 48, 96, 192)):
        layers, before = [], 3
        for k, w in enumerate(widths):
            stride = 1 if k == 0 else 2
            layers += [nn.Conv2d(before, w, 3, stride, 1, bias=False), nn.BatchNorm2d(w), nn.ReLU(inplace=True)]
            if k:
                layers += [nn.Conv2d(w, w, 3, 1, 1, bias=False), nn.BatchNorm2d(w), nn.ReLU(inplace=True)]
            before = w
        super().__init__(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.num_features = before
        for m in self.modules():  # He initialisation, as resnets have: features keep their scale through the stages
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")


def _backbone(name: str, pretrained: bool) -> tuple[nn.Module, str, bool]:
    """(model, note, pretrained?): the timm model `name` with its pretrained weights from the --weights folder, the
    local caches or the hub; the model with random weights when pretrained is False; else the tiny CNN, which
    learns from scratch in the epochs a CPU affords (a random resnet does not)."""
    tiny = f"tiny CNN from random initialisation instead of {name}"
    try:
        import timm

        model = timm.create_model(name, pretrained=False, num_classes=0)
    except (ImportError, RuntimeError) as exc:  # an unknown name or a broken timm
        return TinyCNN(), f"{tiny} (timm failed: {str(exc)[:80]})", False
    if not pretrained:
        return model, f"{name}: random initialisation (pretrained=False)", False
    found = weights_file(name, model.pretrained_cfg)
    # offline, the hub client retries for about a minute before failing: look before asking it
    if found is None and not _reachable():
        return TinyCNN(), f"{tiny} (no pretrained weights offline: none cached, none in --weights)", False
    try:
        return (
            timm.create_model(
                name, pretrained=True, num_classes=0, pretrained_cfg_overlay={"file": found} if found else None
            ),
            f"{name}: pretrained weights{f' ({found})' if found else ''}",
            True,
        )
    except Exception as exc:  # noqa: BLE001 - whatever went wrong, training goes on without the weights
        return TinyCNN(), f"{tiny} (pretrained weights failed: {str(exc)[:120]})", False


def weights_file(name: str, cfg: dict) -> str | None:
    """The weights of timm model `name` on this machine: in the folder $AGENTK_WEIGHTS names (`--weights DIR`), then
    in the Hugging Face and torch hub caches."""
    folder = os.environ.get(WEIGHTS_ENV)
    return (_in_folder(Path(folder), name, cfg) if folder else None) or _cached_weights(cfg)


def _in_folder(folder: Path, name: str, cfg: dict) -> str | None:
    """A weights file for `name` in folder: <name>.safetensors (or .pth, .pt, .bin), the hub's file under its repo
    id (<folder>/timm/resnet18.a1_in1k/model.safetensors), torch hub's file name, or a Hugging Face cache copied
    there."""
    from huggingface_hub import try_to_load_from_cache

    hub_id, url = cfg.get("hf_hub_id"), cfg.get("url")
    hub_files = [f for f in (cfg.get("hf_hub_filename"), "model.safetensors", "pytorch_model.bin") if f]
    candidates = [folder / f"{name}{ext}" for ext in (".safetensors", ".pth", ".pt", ".bin")]
    candidates += [folder / hub_id / f for f in hub_files] if hub_id else []
    candidates += [folder / Path(urlparse(url).path).name] if url else []
    for path in candidates:
        if path.is_file():
            return str(path)
    for filename in hub_files if hub_id else []:
        path = try_to_load_from_cache(hub_id, filename, cache_dir=folder)
        if isinstance(path, str):
            return path
    return None


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
