"""A map-style dataset over the setup's maps: joins every <split>_<modality>_input_map.csv (and, for train,
the target map) on "id", applies per-modality transforms, and collates batches.

Tabular rows come out as object arrays of raw values; later tools encode them. Errors say which map
disagrees with which, because that is what a policy repairs."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Callable, Iterator

import numpy as np
import pandas as pd


def read_id_map(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, dtype={"id": str})


class MapDataset:
    def __init__(self, ws: Path, split: str = "train", target_transform: Callable | None = None,
                 transforms: dict[str, Callable] | None = None):
        ws = Path(ws)
        paths = sorted(ws.glob(f"{split}_*_input_map.csv"))
        if not paths:
            raise ValueError(f"no {split}_*_input_map.csv in the workspace: build the {split} input maps first")
        self.modalities = [re.match(rf"{split}_(\w+?)_input_map\.csv", p.name).group(1) for p in paths]
        self.inputs = {m: read_id_map(p).set_index("id") for m, p in zip(self.modalities, paths)}
        first, ids = self.modalities[0], self.inputs[self.modalities[0]].index
        for m, frame in self.inputs.items():
            _same_ids(frame.index, ids, f"{split}_{m}_input_map.csv", f"{split}_{first}_input_map.csv")
        self.ids = list(ids)
        self.transforms = transforms or {}
        self.targets = None
        if split == "train":
            target_path = ws / "train_tab_target_map.csv"
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
        for m, frame in self.inputs.items():
            row = frame.loc[self.ids[i]].to_numpy()
            item[m] = self.transforms[m](row) if m in self.transforms else row
        if self.targets is not None:
            item["target"] = self.targets[i]
        return item

    def batches(self, batch_size: int = 32) -> Iterator[dict]:
        for start in range(0, len(self), batch_size):
            yield collate([self[i] for i in range(start, min(start + batch_size, len(self)))])


def collate(items: list[dict]) -> dict:
    return {k: [it[k] for it in items] if k == "id" else np.stack([it[k] for it in items]) for k in items[0]}


def _same_ids(got: pd.Index, want: pd.Index, name: str, other: str) -> None:
    if got.has_duplicates:
        raise ValueError(f"{name} has duplicate ids (e.g. {got[got.duplicated()][0]!r})")
    a, b = set(got), set(want)
    if a != b:
        only_a, only_b = sorted(a - b)[:2], sorted(b - a)[:2]
        raise ValueError(f"ids of {name} and {other} disagree: {len(a - b)} only in {name} (e.g. {only_a}), "
                         f"{len(b - a)} only in {other} (e.g. {only_b}); build both from the same rows and id column")
