"""Cell values written as text that are numbers: thousands separators ("1,234"), missing-value tokens pandas does
not know ("na", "-", "?"). The tabular map reads such a column as numbers, the way NUMERIC_TEXT's code does."""

from __future__ import annotations

import pandas as pd

from agentk.parsing import to_numeric

MISSING = ("na", "n/a", "nan", "null", "none", "-", "?", "")
SHARE = 0.95  # of the non-missing cells that must read as numbers


def as_numbers(s: pd.Series) -> pd.Series:
    """The column as floats: separators dropped, missing tokens as NaN, anything else NaN."""
    text = s.astype(str).str.strip()  # NaN reads "nan": missing
    text = text.mask(text.str.lower().isin(MISSING))
    return to_numeric(text.str.replace(r"(?<=\d),(?=\d{3}\b)", "", regex=True), errors="coerce").astype(float)


def numeric_text(s: pd.Series) -> bool:
    """A text column whose cells are numbers (with thousands separators or odd missing tokens)."""
    if pd.api.types.is_numeric_dtype(s) or s.dtype == bool:
        return False
    text = s.dropna().astype(str).str.strip()
    present = text[~text.str.lower().isin(MISSING)]
    return len(present) > 0 and as_numbers(present).notna().mean() >= SHARE
