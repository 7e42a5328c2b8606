"""Text inputs (the txt input maps: one or more columns holding the text itself): the map dataset turns a row
into token ids of the packaged all-MiniLM-L6-v2 tokenizer, the light net trains a bag of words, the fusion net a
transformers encoder with mean pooling, trained or frozen. The modality interface is described in
tools/map_dataset.py."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
import torch
from torch import nn

from agentk.modalities import TEXT
from tools.fusion_config import Branch, FusionConfig
from tools.text_encoder import DEFAULT_MODEL, TextEmbedder, TextTransform, vocab_size

if TYPE_CHECKING:
    from tools.map_dataset import MapDataset

NAME = TEXT.name
LIGHT_LENGTH = 64  # the light net's tokens per text


# --------------------------------------------------------------------------- map dataset


def check_map(frame: pd.DataFrame, name: str) -> None:
    if not len(frame.columns):
        raise ValueError(f"{name} has no column after id: add the text column(s), holding the text itself")


def dataset_transform(ws: Path, map_name: str, options: dict) -> TextTransform:
    return TextTransform(max_length=options["max_length"])


# --------------------------------------------------------------------------- light net


def light_branch(parts: list[tuple[MapDataset, np.ndarray]], width: int) -> tuple[list[torch.Tensor], nn.Module, int]:
    """Token ids, once per part; a bag of words: the mean embedding of the tokens, padding left out."""
    tf = TextTransform(max_length=LIGHT_LENGTH)
    tensors = [tf.batch(ds.inputs[NAME].to_numpy(dtype=object)[idx])["input_ids"] for ds, idx in parts]
    n_tokens = _compact_vocabulary(tensors)
    return tensors, nn.EmbeddingBag(n_tokens, width, mode="mean", padding_idx=0), width


def _compact_vocabulary(tensors: list[torch.Tensor]) -> int:
    """Renumber the token ids seen in the fit rows (the first part) 1..k, in place; unseen ones become padding (0),
    which the bag leaves out: their embeddings would stay untrained noise. A small table also makes each Adam
    step several times cheaper than the full 30k-token vocabulary. Returns the table size."""
    seen = torch.unique(torch.cat([torch.zeros(1, dtype=torch.long), tensors[0].flatten()]))  # 0 first
    lookup = torch.zeros(vocab_size(), dtype=torch.long)
    lookup[seen] = torch.arange(len(seen))
    tensors[:] = [lookup[x] for x in tensors]
    return len(seen)


# --------------------------------------------------------------------------- fusion net


def fusion_branch(frame: pd.DataFrame, ws: Path, cfg: FusionConfig, fit: np.ndarray) -> Branch:
    """The encoder over token ids (every text tokenised once, here), trained at the encoders' rate, or frozen
    (texts embedded shortest first)."""
    encoder = TextEmbedder(cfg.text_model, cfg.max_length)
    tokens = encoder.tokens(frame.to_numpy(dtype=object))
    return Branch(
        encoder,
        encoder.dim,
        inputs=tokens,
        backbone=True,
        pretrained=True,
        frozen=not cfg.finetune_text,
        embed_batch=4,
        lengths=tokens["attention_mask"].sum(dim=1),
        title=f"text encoder {cfg.text_model or DEFAULT_MODEL}",
    )
