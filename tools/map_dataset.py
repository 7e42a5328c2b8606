"""A map-style dataset over the setup's maps: joins every input map of a split (and, for train, the target map)
on "id", applies per-modality transforms, and collates batches.

Each modality's pieces live in its model module, tools/modality_<name>.py, which agentk.modalities names; this
module, tools/light_net.py and tools/fusion.py loop over the modalities present and call, in registry order:
    check_map(frame, map_name)                       raise a ValueError when the map's columns are wrong
    dataset_transform(ws, map_name, options)         a callable map row -> sample, or None for raw rows
    light_branch(parts, width)                       light net: tensors per (dataset, rows) part, branch, its width
    fusion_branch(frame, ws, cfg, fit_rows)          fusion net: a tools.fusion.Branch over train then test rows

By default tabular rows come out as object arrays of raw values (later tools encode them), images as
normalised tensors and texts as token ids. Errors say which map and which row or file is wrong, because
that is what a policy repairs. torch loads only when an image, a text or a loader needs it:
a tab-only workspace never pays its import (tools/modality_tab.py imports without it)."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pandas as pd

from agentk.modalities import MODALITIES
from agentk.workspace import Workspace, read_map


class MapDataset:
    def __init__(
        self,
        ws: Path,
        split: str = "train",
        target_transform: Callable | None = None,
        transforms: dict[str, Callable] | None = None,
        image_size: int = 64,
        max_length: int = 128,
    ):
        self.ws, self.split = Path(ws), split
        layout = Workspace(self.ws)
        self.maps = layout.input_maps(split)  # by modality, in file-name order
        if not self.maps:
            raise ValueError(
                f"no {layout.input_map(split, '*').name} in the workspace: build the {split} input maps first"
            )
        self.modalities = list(self.maps)
        models = {m: MODALITIES[m].model_module() for m in self.modalities if m in MODALITIES}
        frames = {m: read_map(p).set_index("id") for m, p in self.maps.items()}
        for m, model in models.items():
            model.check_map(frames[m], self.maps[m].name)
        first, ids = self.modalities[0], frames[self.modalities[0]].index
        for m, frame in frames.items():
            _same_ids(frame.index, ids, self.maps[m].name, self.maps[first].name)
        self.ids = list(ids)
        # every map in the same row order, so row i of each is sample i
        self.inputs = {m: frame.loc[self.ids] for m, frame in frames.items()}
        if transforms is None:
            options = {"image_size": image_size, "max_length": max_length}
            made = {m: model.dataset_transform(self.ws, self.maps[m].name, options) for m, model in models.items()}
            transforms = {m: tf for m, tf in made.items() if tf is not None}
        self.transforms = transforms
        self.targets = None
        if split == "train":
            target_path = layout.target_map
            if not target_path.exists():
                raise ValueError(f"{target_path.name} is missing: build the target map first")
            targets = read_map(target_path).set_index("id")
            _same_ids(targets.index, ids, target_path.name, self.maps[first].name)
            targets = targets.loc[self.ids]
            values = target_transform(targets.reset_index(drop=True)) if target_transform else targets.to_numpy()
            self.targets = np.asarray(values, dtype=float).reshape(len(self.ids), -1)

    def __len__(self) -> int:
        return len(self.ids)

    @functools.cached_property
    def _columns(self) -> dict[str, list[np.ndarray]]:
        # each map's columns in their own types, a sample's row gathered when it is read: the solver reads the
        # frames, and a whole map as Python objects (14 M rows x 19 columns) takes more than 10 GB
        return {m: [frame[c].to_numpy() for c in frame.columns] for m, frame in self.inputs.items()}

    def _row(self, modality: str, i: int) -> np.ndarray:
        """Row i of a map as an object array of Python values, as the transforms and the tab encoders take it."""
        values = [c[i] for c in self._columns[modality]]
        row = np.empty(len(values), dtype=object)
        row[:] = [v.item() if isinstance(v, np.generic) else v for v in values]
        return row

    def __getitem__(self, i: int) -> dict:
        item = {"id": self.ids[i]}
        for m in self.inputs:
            row = self._row(m, i)
            item[m] = self.transforms[m](row) if m in self.transforms else row
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

        return DataLoader(
            self,
            batch_size=batch_size,
            shuffle=shuffle,
            num_workers=num_workers,
            collate_fn=collate,
            generator=torch.Generator().manual_seed(seed),
        )


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


def _same_ids(got: pd.Index, want: pd.Index, name: str, other: str) -> None:
    if got.has_duplicates:
        raise ValueError(f"{name} has duplicate ids (e.g. {got[got.duplicated()][0]!r})")
    a, b = set(got), set(want)
    if a != b:
        only_a, only_b = sorted(a - b)[:2], sorted(b - a)[:2]
        raise ValueError(
            f"ids of {name} and {other} disagree: {len(a - b)} only in {name} (e.g. {only_a}), "
            f"{len(b - a)} only in {other} (e.g. {only_b}); build both from the same rows and id column"
        )
