"""Tabular inputs (the tab input maps: one column per feature, booleans, numbers and strings as the setup wrote
them): the map dataset keeps rows raw, the light net standardises the encoded columns, the fusion net embeds
numbers and categories with an MLP. The modality interface is described in tools/map_dataset.py.

This module imports without torch, because a tab-only map dataset must not pay for it: the network pieces
import torch when they are called."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from agentk.modalities import TABULAR
from tools.fusion_config import Branch, FusionConfig
from tools.tabular import encode, standardised

if TYPE_CHECKING:
    import torch
    from torch import nn

    from tools.map_dataset import MapDataset

NAME = TABULAR.name
LOW_CARDINALITY = 10  # integer columns with at most this many levels are also embedded as categories


# --------------------------------------------------------------------------- map dataset


def check_map(frame: pd.DataFrame, name: str) -> None:
    """Any columns will do: even none (an id-only map) is a valid table."""


def dataset_transform(ws: Path, map_name: str, options: dict) -> None:
    """None: rows stay raw object arrays, which each model encodes its own way."""


# --------------------------------------------------------------------------- light net


def light_branch(parts: list[tuple[MapDataset, np.ndarray]], width: int) -> tuple[list[torch.Tensor], nn.Module, int]:
    """The encoded columns standardised on the first part (the fit rows), one layer."""
    import torch
    from torch import nn

    matrices, _ = encode([ds.inputs[NAME].iloc[idx].reset_index(drop=True) for ds, idx in parts])
    fit = matrices[0]
    mean = np.nan_to_num(np.nanmean(fit, axis=0)) if len(fit) else 0.0
    std = np.nan_to_num(np.nanstd(fit, axis=0)) if len(fit) else 1.0
    std = np.where(std > 0, std, 1.0)
    tensors = []
    for x in matrices:
        x = np.nan_to_num((x - mean) / std)
        tensors.append(torch.tensor(x if x.shape[1] else np.zeros((len(x), 1)), dtype=torch.float32))
    return tensors, nn.Sequential(nn.Linear(tensors[0].shape[1], width), nn.ReLU()), width


# --------------------------------------------------------------------------- fusion net


def fusion_branch(frame: pd.DataFrame, ws: Path, cfg: FusionConfig, fit: np.ndarray) -> Branch:
    """Numeric features and category codes, embedded by an MLP trained with the rest."""

    num, cat, cards = tab_features(frame, fit)
    return Branch(
        _embedder()(num.shape[1], cards, cfg.tab_hidden, cfg.dropout),
        cfg.tab_hidden,
        inputs={"num": num, "cat": cat},
        notes=[f"{NAME}: {num.shape[1]} numeric features, {len(cards)} categorical"],
    )


def tab_features(frame: pd.DataFrame, fit_rows: np.ndarray) -> tuple[torch.Tensor, torch.Tensor, list[int]]:
    """Numeric features (n, p) and category codes (n, k) of a tab map, with each category's table size.
    Numbers are median-imputed, standardised on the fit rows and get missing indicators; text, booleans and
    integer columns with few levels become codes (0: missing or unseen in the fit rows)."""
    import torch

    (matrix,), columns = encode([frame.reset_index(drop=True)])
    numeric, codes, cards = [], [], []
    for j, column in enumerate(columns):
        v, s = matrix[:, j], frame[column]
        is_text = s.dtype == bool or not pd.api.types.is_numeric_dtype(s)
        levels = np.unique(v[fit_rows][~np.isnan(v[fit_rows])])
        if is_text or (len(levels) <= LOW_CARDINALITY and np.array_equal(levels, np.round(levels))):
            pos = np.clip(np.searchsorted(levels, v), 0, max(len(levels) - 1, 0))
            seen = (levels[pos] == v) if len(levels) else np.zeros(len(v), bool)
            codes.append(np.where(seen, pos + 1, 0).astype(np.int32))
            cards.append(len(levels) + 1)
        if is_text:
            continue
        # float32 and int32 column by column: on 5 M rows each float64 copy of 56 columns is 2.2 GB
        numeric += [c.astype(np.float32) for c in standardised(v, fit_rows)]
    n = len(frame)
    num = np.column_stack(numeric) if numeric else np.zeros((n, 0), np.float32)
    cat = np.column_stack(codes) if codes else np.zeros((n, 0), np.int32)
    return torch.from_numpy(num), torch.from_numpy(cat), cards


@functools.cache
def _embedder() -> type:
    """The TabEmbedder class, defined on first use: nn.Module is torch's, and this module imports without it."""
    import torch
    from torch import nn

    class TabEmbedder(nn.Module):
        def __init__(self, n_numeric: int, cards: list[int], hidden: int, dropout: float):
            super().__init__()
            self.embeddings = nn.ModuleList(nn.Embedding(k, min(16, 1 + k // 2)) for k in cards)
            width = n_numeric + sum(e.embedding_dim for e in self.embeddings)
            self.mlp = nn.Sequential(
                nn.Linear(width, hidden), nn.ReLU(), nn.Dropout(dropout), nn.Linear(hidden, hidden), nn.ReLU()
            )

        def forward(self, x: dict) -> torch.Tensor:
            parts = [x["num"]] + [e(x["cat"][:, j]) for j, e in enumerate(self.embeddings)]
            return self.mlp(torch.cat(parts, dim=1))

    return TabEmbedder
