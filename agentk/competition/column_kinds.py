"""What a column holds, read off its values: free text (comments, essays) rather than a short category or name,
label sets (several labels per row in one string), a sample submission's placeholder. Numbers written as text are
agentk.competition.values."""

from __future__ import annotations

import re
from collections import Counter

import pandas as pd

LABEL_TOKEN = re.compile(r"^[\w\-./:]+$")
PEEK_ROWS = 2000  # rows read to look for evidence: enough to tell, quick on any file


def is_long_text(s: pd.Series) -> bool:
    """Free text (comments, essays), not a short category or name."""
    if pd.api.types.is_numeric_dtype(s) or s.dtype == bool:
        return False
    vals = s.dropna().head(500).astype(str)
    if len(vals) == 0:
        return False
    return vals.str.len().mean() > 40 and vals.str.split().str.len().mean() > 6 and vals.nunique() > 0.5 * len(vals)


def is_label_set(s: pd.Series) -> bool:
    """Several labels per row as one space-separated string ("3 17 42", "cat dog"): label-like tokens, none
    repeated within a row, (unlike free text) nearly every label seen in more than one row, and (unlike class
    names with spaces, "golden retriever") no fewer distinct combinations than labels: sets combine their labels."""
    if pd.api.types.is_numeric_dtype(s) or s.dtype == bool:
        return False
    rows = [str(v).split() for v in s.dropna().head(PEEK_ROWS)]
    if not rows or max(len(r) for r in rows) < 2:
        return False
    if any(len(set(r)) != len(r) or not all(LABEL_TOKEN.match(t) for t in r) for r in rows):
        return False
    counts = Counter(t for r in rows for t in r)
    if len({frozenset(r) for r in rows}) < len(counts):
        return False
    if all(t.isdigit() for t in counts):  # label ids: a vocabulary reused across rows, however long its tail
        return len(counts) <= 0.5 * sum(counts.values())
    return sum(c == 1 for c in counts.values()) <= 0.3 * len(counts)


def placeholder(s: pd.Series) -> bool:
    """Does a sample column hold one value in every row (0, 0.5, "cat"), a stand-in rather than an example of the
    predictions' type?"""
    return len(s) > 1 and s.notna().all() and s.nunique() == 1
