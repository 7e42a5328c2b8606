"""Numbers read out of text without crashing the process.

pandas 2.x parses floats with its own C code, and on a string of digits, an `e` and an exponent past 2**31
(`028e454608203890`, as Kaggle's hexadecimal ids often read) it overflows a signed integer and segfaults
(pandas-dev/pandas#63650; fixed in pandas 3, which AutoGluon 1.x's `pandas<2.4` keeps out). `to_numeric` and
`read_csv`'s type inference in both engines go there, and a native crash cannot be caught. So every numeric
reading of text in agentk goes through this module:

- `to_numeric`: pandas' own, with such strings screened out first: a number no float can hold (an exponent of five
  digits or more) is not a number here (NaN under errors="coerce", else the ValueError pandas gives for text);
- `read_csv`: pandas' own, its floats parsed by Python's correctly rounded parser (float_precision="round_trip",
  which leaves such a cell text) in the C engine, and the python engine's inference screened as above;
- `guard_pandas()`: the same screen put into pandas itself, for the code agentk does not write: AutoGluon's type
  inference, and generated code (the sandboxed runner of stages and checks installs it before running any).
"""

from __future__ import annotations

import csv
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
from pandas._libs import lib
from pandas.api.extensions import no_default
from pandas.io.parsers import readers

# the crash needs an exponent of ten digits; five already overflows every float, so nothing real is lost. The
# parser reads the exponent before it looks at what follows, so a string that merely starts so crashes it too
# (240e8198484372e2, a hex id); such a string is no number either way.
OVERFLOWING = re.compile(r"\s*[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)[eE][+-]?0*[1-9][0-9]{4,}")

_original_to_numeric = pd.to_numeric
_original_convert = None  # pandas._libs.lib.maybe_convert_numeric, once guard_pandas replaced it
_original_read = None  # pandas.io.parsers.readers._read, likewise


def overflowing(values) -> np.ndarray:
    """Which of `values` (an object array, a list or a Series) are strings pandas' float parser crashes on."""
    values = np.asarray(values, dtype=object).ravel()
    return np.fromiter(
        (isinstance(v, str) and ("e" in v or "E" in v) and OVERFLOWING.match(v) is not None for v in values),
        dtype=bool,
        count=len(values),
    )


def _unparsable(value: str, position: int) -> ValueError:
    return ValueError(f'Unable to parse string "{value}" at position {position}')


def to_numeric(arg, errors: str = "raise", **kwargs):
    """pd.to_numeric(arg, errors, ...) that cannot crash: strings whose exponent no float can hold are text."""
    if isinstance(arg, str):
        if overflowing([arg])[0]:
            if errors == "coerce":
                return np.nan
            if errors == "raise":
                raise _unparsable(arg, 0)
            return arg
    elif isinstance(arg, pd.Series | pd.Index | np.ndarray | list | tuple) and _textual(arg):
        bad = overflowing(arg)
        if bad.any():
            if errors == "raise":
                first = int(np.flatnonzero(bad)[0])
                raise _unparsable(np.asarray(arg, dtype=object).ravel()[first], first)
            if errors != "coerce":  # "ignore": pandas hands the input back when anything is not a number
                return arg
            arg = _masked(arg, bad)
    return _original_to_numeric(arg, errors=errors, **kwargs)


def _textual(arg) -> bool:
    dtype = getattr(arg, "dtype", None)
    return dtype is None or not (pd.api.types.is_numeric_dtype(dtype) or pd.api.types.is_bool_dtype(dtype))


def _masked(arg, bad: np.ndarray):
    """`arg` with the flagged cells missing, in its own kind (Series keep their index and name)."""
    if isinstance(arg, pd.Series):
        return arg.astype(object).mask(bad)
    values = np.array(arg, dtype=object)
    values[bad] = None
    return pd.Index(values, name=arg.name) if isinstance(arg, pd.Index) else values


def read_csv(*args, **kwargs) -> pd.DataFrame:
    """pd.read_csv that cannot crash on a cell like `028e454608203890` (it stays text)."""
    guard_pandas()  # float_precision="round_trip" where the C engine reads, the screen where the python one does
    return pd.read_csv(*args, **kwargs)


WIDE = 1000  # columns from which a header with repeated names is read ahead (pandas renames repeats in O(n^2))


def _named_once(source, kwds: dict) -> dict:
    """kwds with the header's names given, made unique as pandas makes them ("x", "x.1"), where a plain CSV file's
    header repeats names across thousands of columns: pandas took 23 s to rename 20,000 repeats of one name, and
    read the same file in 4 s given the names."""
    sep = kwds.get("delimiter") or kwds.get("sep")  # read_csv has put its separator in "delimiter" by now
    names, header = kwds.get("names"), kwds.get("header", "infer")
    plain = isinstance(source, str | Path) and not str(source).lower().endswith((".gz", ".zip", ".bz2", ".xz", ".zst"))
    given = names is not None and names is not no_default
    if not plain or header != "infer" or given or kwds.get("skiprows") is not None:
        return kwds
    if not isinstance(sep, str) or len(sep) != 1:  # sniffed (None) or a regex: not read ahead
        return kwds
    encoding = kwds.get("encoding") or "utf-8"
    encoding = "utf-8-sig" if encoding.lower().replace("-", "").replace("_", "") == "utf8" else encoding  # as pandas
    try:
        with open(source, encoding=encoding, errors="replace", newline="") as f:
            first = f.readline(50_000_000)
        fields = next(csv.reader([first], delimiter=sep), [])
    except (OSError, csv.Error, LookupError):
        return kwds
    if len(fields) < WIDE or len(set(fields)) == len(fields):
        return kwds
    unique = _mangled(fields)
    dtype = kwds.get("dtype")
    if isinstance(dtype, dict):  # as pandas does: a repeat of a name gets the name's dtype
        dtype = {**{new: dtype[old] for old, new in zip(fields, unique) if old in dtype and new not in dtype}, **dtype}
        kwds = {**kwds, "dtype": dtype}
    return {**kwds, "names": unique, "header": None, "skiprows": 1}  # header=0 with names took as long


def _mangled(header: list[str]) -> list[str]:
    """The names pandas' C parser gives a header (an empty one "Unnamed: <i>", renamed last; a repeat "x.1", past
    any "x.1" the header holds), with a count of the names in place of its search of the header list."""
    header = [name if name != "" else f"Unnamed: {i}" for i, name in enumerate(header)]
    unnamed = [i for i, name in enumerate(header) if name == f"Unnamed: {i}"]
    later = set(unnamed)
    present, counts = Counter(header), {}
    for i in [*(i for i in range(len(header)) if i not in later), *unnamed]:
        col = old = header[i]
        cur = counts.get(col, 0)
        while cur > 0:
            counts[old] = cur + 1
            col = f"{old}.{cur}"
            cur = cur + 1 if present[col] else counts.get(col, 0)
        present[old] -= 1
        present[col] += 1
        header[i] = col
        counts[col] = cur + 1
    return header


def guard_pandas() -> None:
    """Screen the crashing strings out inside pandas too (idempotent): its numeric conversion, which to_numeric,
    the python parser and other libraries' type inference call, and its CSV readers' float parsing."""
    global _original_convert, _original_read
    if _original_convert is None:
        _original_convert = lib.maybe_convert_numeric

        def maybe_convert_numeric(values, na_values, convert_empty=True, coerce_numeric=False, **kwargs):
            bad = overflowing(values) if getattr(values, "dtype", None) == np.dtype(object) else None
            if bad is not None and bad.any():
                if not coerce_numeric:
                    first = int(np.flatnonzero(bad)[0])
                    raise _unparsable(values[first], first)
                values = values.copy()
                values[bad] = np.nan
            return _original_convert(values, na_values, convert_empty, coerce_numeric, **kwargs)

        lib.maybe_convert_numeric = maybe_convert_numeric
    if _original_read is None:
        _original_read = readers._read

        def _read(filepath_or_buffer, kwds):
            kwds = _named_once(filepath_or_buffer, kwds)
            if kwds.get("engine") in (None, "c") and kwds.get("float_precision") is None:
                try:
                    return _original_read(filepath_or_buffer, {**kwds, "float_precision": "round_trip"})
                except ValueError as exc:  # options only the python engine reads (sep=None): it infers as guarded
                    if "python' engine" not in str(exc):
                        raise
            return _original_read(filepath_or_buffer, kwds)

        readers._read = _read
