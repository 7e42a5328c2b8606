"""Dense features of text fields for the classical text candidate (tools/classical_txt.py): per field, length and
word statistics; per pair of fields, how alike the two texts are (sentence-embedding cosine of the packaged
all-MiniLM-L6-v2, TF-IDF cosines over one vocabulary shared by the pair, token overlap, how well each word is
matched by a word of the other text, character similarity, length differences). A linear model over each field's
own TF-IDF cannot see whether two texts say the same thing; these features can."""

from __future__ import annotations

import difflib
import functools
import re
from collections import Counter

import numpy as np
import pandas as pd
from sklearn.feature_extraction.text import TfidfVectorizer

TOKEN = re.compile(r"\w+")
EMBED_LENGTH = 128  # tokens per text for the sentence embeddings
EMBED_BATCH = 64
DIFF_CHARS = 300  # difflib is quadratic: long texts are compared on their heads
ALIGN_WORDS = 64  # words of each text aligned (its first): the similarity matrix grows with their product
ALIGN_VOCABULARY = 5_000  # the most frequent words get an embedding (2 CPU cores: ~1,000 words/s; their cosines
# 100 MB); a rarer one matches only itself
ALIGN_CHUNK = 1024  # rows aligned at once: ALIGN_CHUNK x ALIGN_WORDS² cosines
ALIGN_BANDS = (0.4, 0.6, 0.8, 0.999)  # best-match cosines: unrelated, loosely, closely related, a synonym, the same


def field_stats(texts: pd.Series) -> tuple[np.ndarray, list[str]]:
    """Per text: characters, words, mean word length, distinct-word share, upper-case, digit and punctuation
    shares, question and exclamation marks, lines (counts as log1p: long texts are heavy-tailed)."""
    s = texts.to_numpy(dtype=str)
    chars = np.array([len(t) for t in s], dtype=float)
    words = [TOKEN.findall(t.lower()) for t in s]
    n_words = np.array([len(w) for w in words], dtype=float)
    per_char = np.maximum(chars, 1)
    cols = {
        "chars": np.log1p(chars),
        "words": np.log1p(n_words),
        "mean_word_length": np.array([np.mean([len(x) for x in w]) if w else 0.0 for w in words]),
        "distinct_words": np.array([len(set(w)) / len(w) if w else 0.0 for w in words]),
        "upper_share": np.array([sum(c.isupper() for c in t) for t in s]) / per_char,
        "digit_share": np.array([sum(c.isdigit() for c in t) for t in s]) / per_char,
        "punctuation_share": np.array([sum(not c.isalnum() and not c.isspace() for c in t) for t in s]) / per_char,
        "question_marks": np.log1p([t.count("?") for t in s]),
        "exclamation_marks": np.log1p([t.count("!") for t in s]),
        "lines": np.log1p([t.count("\n") for t in s]),
    }
    return np.column_stack(list(cols.values())), list(cols)


def embed(texts: pd.Series) -> np.ndarray:
    """Unit-length all-MiniLM-L6-v2 sentence embeddings (mean-pooled, as the network's text branch), shortest
    texts batched together so padding costs little."""
    import torch

    encoder = _encoder()
    rows = texts.to_numpy(dtype=object).reshape(-1, 1)
    tokens = encoder.tokens(rows)
    order = np.argsort(tokens["attention_mask"].sum(dim=1).numpy(), kind="stable")
    out = np.zeros((len(rows), encoder.dim), dtype=np.float32)
    with torch.inference_mode():
        for start in range(0, len(order), EMBED_BATCH):
            idx = torch.from_numpy(order[start : start + EMBED_BATCH])
            out[idx.numpy()] = encoder({k: v[idx] for k, v in tokens.items()}).numpy()
    return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-9)


_WORDS: dict[str, np.ndarray] = {}  # word -> embedding, shared by the pairs of fields of one process
MAX_CACHED_WORDS = 50_000


def _word_vectors(words: list[str]) -> np.ndarray:
    """The embeddings of these words, (len(words), dim); each new word embedded once per process."""
    new = [w for w in words if w not in _WORDS]
    if len(_WORDS) + len(new) > MAX_CACHED_WORDS:
        _WORDS.clear()
        new = list(words)
    if new:
        _WORDS.update(zip(new, embed(pd.Series(new, dtype=object)), strict=True))
    return np.array([_WORDS[w] for w in words], dtype=np.float32).reshape(len(words), _encoder().dim)


@functools.lru_cache(maxsize=1)
def _encoder():
    from tools.text_encoder import TextEmbedder

    return TextEmbedder(None, EMBED_LENGTH).eval()


def pair_features(a: pd.Series, b: pd.Series, emb_a: np.ndarray, emb_b: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """How alike the texts of two fields are, row by row."""
    sa, sb = a.to_numpy(dtype=str), b.to_numpy(dtype=str)
    cols = {"embedding_cosine": np.sum(emb_a * emb_b, axis=1)}
    for name, vec in (
        ("tfidf_word_cosine", TfidfVectorizer(sublinear_tf=True)),
        ("tfidf_char_cosine", TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 4), sublinear_tf=True)),
    ):
        try:  # one vocabulary for both fields, so their vectors are comparable
            vec.fit(np.concatenate([sa, sb]))
        except ValueError:  # no term at all (every cell empty)
            cols[name] = np.zeros(len(sa))
            continue
        cols[name] = np.asarray(vec.transform(sa).multiply(vec.transform(sb)).sum(axis=1)).ravel()
    ta = [set(TOKEN.findall(t.lower())) for t in sa]
    tb = [set(TOKEN.findall(t.lower())) for t in sb]
    shared = np.array([len(x & y) for x, y in zip(ta, tb, strict=True)], dtype=float)
    na, nb = np.array([len(x) for x in ta], dtype=float), np.array([len(y) for y in tb], dtype=float)
    la, lb = np.array([len(t) for t in sa], dtype=float), np.array([len(t) for t in sb], dtype=float)
    cols |= {
        "shared_tokens": np.log1p(shared),
        "jaccard": shared / np.maximum(na + nb - shared, 1),
        "share_of_first_in_second": shared / np.maximum(na, 1),
        "share_of_second_in_first": shared / np.maximum(nb, 1),
        "char_similarity": np.array(
            [
                difflib.SequenceMatcher(None, x[:DIFF_CHARS].lower(), y[:DIFF_CHARS].lower(), autojunk=False).ratio()
                for x, y in zip(sa, sb, strict=True)
            ]
        ),
        "length_ratio": np.minimum(la, lb) / np.maximum(np.maximum(la, lb), 1),
        "log_length_difference": np.log1p(la) - np.log1p(lb),
        "word_count_difference": np.log1p(na) - np.log1p(nb),
    }
    aligned, names = word_alignment(sa, sb)
    cols |= dict(zip(names, aligned.T, strict=True))
    return np.column_stack(list(cols.values())), list(cols)


def word_alignment(sa: np.ndarray, sb: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """How well each word of one text is matched by a word of the other, row by row: its best cosine between
    single-word MiniLM embeddings (1 for the same word), so that a synonym counts where token overlap sees nothing.
    Per direction the mean and the least of the words' best matches, and the share of words in each band of
    ALIGN_BANDS (phrase-pair-similarity, gradient boosting on pair_features: 5-fold Pearson 0.664 -> 0.734)."""
    words = [[TOKEN.findall(t.lower())[:ALIGN_WORDS] for t in texts] for texts in (sa, sb)]
    counts = Counter(w for side in words for ws in side for w in ws)
    ranked = [w for w, _ in counts.most_common()]
    index = {w: i for i, w in enumerate(ranked)}  # every word's id: the frequent ones first
    embedded = ranked[:ALIGN_VOCABULARY]
    vectors = _word_vectors(embedded)
    # the cosines of every two embedded words, and a last row and column of zeros for a word without a vector
    cosines = np.zeros((len(embedded) + 1, len(embedded) + 1), np.float32)
    cosines[:-1, :-1] = vectors @ vectors.T
    ids = []  # per side, (rows, ALIGN_WORDS) word ids, -1 past a text's words
    for side in words:
        grid = np.full((len(side), ALIGN_WORDS), -1)
        for r, ws in enumerate(side):
            grid[r, : len(ws)] = [index[w] for w in ws]
        ids.append(grid)
    cols = {}
    for name, (x, y) in {"first": (ids[0], ids[1]), "second": (ids[1], ids[0])}.items():
        best = np.zeros(x.shape)
        for start in range(0, len(x), ALIGN_CHUNK):
            cx, cy = x[start : start + ALIGN_CHUNK], y[start : start + ALIGN_CHUNK]
            ex, ey = (np.where((c >= 0) & (c < len(embedded)), c, len(embedded)) for c in (cx, cy))
            cosine = np.where(cy[:, None, :] >= 0, cosines[ex[:, :, None], ey[:, None, :]], -np.inf)
            same = ((cx[:, :, None] == cy[:, None, :]) & (cy[:, None, :] >= 0)).any(axis=2)
            best[start : start + ALIGN_CHUNK] = np.where(same, 1.0, cosine.max(axis=2))
        present = (x >= 0) & (y >= 0).any(axis=1, keepdims=True)  # a word, and a text to match it in
        n = np.maximum(present.sum(axis=1), 1)
        cols[f"aligned_{name}_mean"] = np.where(present, best, 0.0).sum(axis=1) / n
        cols[f"aligned_{name}_least"] = np.where(present.any(axis=1), np.where(present, best, np.inf).min(axis=1), 0.0)
        edges = [-np.inf, *ALIGN_BANDS, np.inf]
        for lo, hi in zip(edges[:-1], edges[1:], strict=True):
            cols[f"aligned_{name}_share_{max(lo, 0):g}_{min(hi, 1):g}"] = (present & (best >= lo) & (best < hi)).sum(
                axis=1
            ) / n
    return np.column_stack(list(cols.values())), list(cols)
