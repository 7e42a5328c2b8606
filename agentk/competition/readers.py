"""Reading a competition's tables: CSV and TSV in whatever text encoding, delimiter and decimal mark, gzipped or not,
JSON in its orientations (agentk.competition.json_tables), JSON lines, parquet and feather, and partitioned
folders (agentk.competition.partitions); a small table's frame is kept across reads. A file that cannot be read is
BadInput with a one-line reason. Nothing here knows what a table is for (agentk.competition.tables does)."""

from __future__ import annotations

import codecs
import gzip
import json
import re
import zlib
from collections import OrderedDict
from collections.abc import Iterator
from pathlib import Path

import charset_normalizer
import numpy as np
import pandas as pd

from agentk.competition.json_tables import read_json_table
from agentk.competition.partitions import read_dataset
from agentk.core.errors import BadInput
from agentk.parsing import read_csv

HEAD = 1 << 20  # bytes of a text table that tell its encoding in the common case
CHUNK = 16 << 20  # bytes per read when a whole table is checked
TIE_SLACK = 0.1  # charset-normalizer's chaos within which a code page ties the best one


def text_encoding(path: Path, limit: int | None = HEAD) -> str | None:
    """The codec of a CSV/TSV that is not UTF-8 (UTF-16, latin-1...) as charset-normalizer tells it; None for
    UTF-8 (BOM or not) and ASCII, which pandas reads as they are, and for bytes that are no text at all.
    Looks at the first `limit` bytes (None: the whole file, in chunks)."""
    path = Path(path)
    decoder = codecs.getincrementaldecoder("utf-8")()
    with (gzip.open if path.name.lower().endswith(".gz") else open)(path, "rb") as f:
        chunk = f.read(HEAD)
        try:
            seen = 0
            while chunk:
                decoder.decode(chunk)
                seen += len(chunk)
                if limit is not None and seen >= limit:
                    return None
                chunk = f.read(CHUNK)
            decoder.decode(b"", final=True)
            return None
        except UnicodeDecodeError:
            pass  # `chunk` holds bytes that are not UTF-8: they tell the encoding
    found = charset_normalizer.from_bytes(chunk)
    best = found.best()
    if best is None:
        return None
    # short text often ties several code pages: among those about as little chaotic as the best (a few accented
    # words score within TIE_SLACK of each other: cp775's "rojo-±, gr³n" or cp1250's "rojo-ń, blĺ" before cp1252's
    # "rojo-ñ, grün"; coherence, a language guess over a table's few words, decides nothing there), the most
    # widespread one (Windows-1252, latin-1's superset) decodes what Western spreadsheets write. Text cp1252 reads
    # as chaos (Cyrillic, Greek, Central European letters) does not tie
    tied = [m for m in found if m.chaos <= best.chaos + TIE_SLACK]
    return next((m.encoding for m in tied if "cp1252" in m.could_be_from_charset), best.encoding)


DELIMITERS = (",", ";", "\t", "|")
DECIMAL_COMMA = re.compile(r"^[+-]?\d+,\d+$")  # "0,126": a number written with a decimal comma


def csv_dialect(path: Path, encoding: str | None = None) -> tuple[str, str]:
    """(delimiter, decimal mark) of a .csv: "," when its header holds one, else the one of ";", tab and "|" the
    header holds most; with another delimiter than ",", a decimal comma when cells of the first lines are numbers
    written with one ("0,126", as European spreadsheets write them)."""
    opener = gzip.open if path.name.lower().endswith(".gz") else open
    with opener(path, "rt", encoding=encoding or "utf-8-sig", errors="replace") as f:
        lines = [line.rstrip("\r\n") for _, line in zip(range(21), f)]
    header = lines[0] if lines else ","
    sep = max(DELIMITERS[1:], key=header.count) if "," not in header else ","
    if sep == "," or not header.count(sep):
        return ",", "."
    cells = [c.strip().strip('"') for line in lines[1:] for c in line.split(sep)]
    return sep, "," if any(DECIMAL_COMMA.match(c) for c in cells) else "."


CACHED_BYTES = 64 * 2**20  # tables up to this size on disk are kept after a read (the last CACHED of them)
CACHED = 8
_cache: OrderedDict[tuple, pd.DataFrame] = OrderedDict()


def read_table(path: Path, nrows: int | None = None, nested: bool = False, **kwargs) -> pd.DataFrame:
    """Read a CSV/TSV/JSON/parquet table, in whatever text encoding; an empty or corrupt file is BadInput. Cells
    holding lists or records become text (nested_as_text) unless `nested` (image bands as number lists). Setup
    reads a competition's tables many times over (which is which, what the sample's columns are, each normalising
    step): a small table's frame is kept, keyed by its file's state and the reading's options, and a copy returned
    (a table of 20,000 columns took seven seconds a read)."""
    try:
        st = Path(path).stat()
    except OSError:
        st = None
    key = None
    if st is not None and st.st_size <= CACHED_BYTES:
        key = (str(Path(path).resolve()), st.st_size, st.st_mtime_ns, nrows, nested, repr(sorted(kwargs.items())))
        if key in _cache:
            _cache.move_to_end(key)
            return _cache[key].copy()
    df = _read_table(path, nrows, nested, **kwargs)
    if key is not None:
        _cache[key] = df.copy()
        while len(_cache) > CACHED:
            _cache.popitem(last=False)
    return df


def _read_table(path: Path, nrows: int | None = None, nested: bool = False, **kwargs) -> pd.DataFrame:
    path = Path(path)
    name = path.name.lower()
    try:
        if path.is_dir():  # a partitioned dataset (train.parquet/year=2020/part-0.parquet)
            df = read_dataset(path).head(nrows) if nrows is not None else read_dataset(path)
        elif name.endswith(CSV_SUFFIXES):
            encoding = kwargs.pop("encoding", None) or text_encoding(path)
            sep, decimal = _separators(path, encoding)
            try:
                df = read_csv(path, sep=sep, decimal=decimal, nrows=nrows, encoding=encoding, **kwargs)
            except UnicodeDecodeError:  # a byte past the head is not UTF-8: the whole file tells
                encoding = text_encoding(path, None)
                df = read_csv(path, sep=sep, decimal=decimal, nrows=nrows, encoding=encoding, **kwargs)
        elif name.endswith(".jsonl"):
            df = pd.read_json(path, lines=True, nrows=nrows, dtype=False)
        elif name.endswith(".json"):  # any orientation (JSON lines too, as some competitions ship them)
            df = read_json_table(path)[0]
        elif name.endswith(".parquet"):
            df = pd.read_parquet(path)
        elif name.endswith(".feather"):
            df = pd.read_feather(path)
        else:
            raise BadInput(f"{path.name}: unknown table format; use CSV, TSV, JSON(L), parquet or feather")
        if nrows is not None and name.endswith((".json", ".parquet", ".feather")) and not path.is_dir():
            df = df.head(nrows)
        csv = name.endswith((".tsv", ".tsv.gz", ".csv", ".csv.gz"))  # text cells only: a CSV holds no lists
        df = df if nested or csv else nested_as_text(df)
        if kwargs.get("dtype") is str and not csv:
            df = df.map(lambda v: v if pd.isna(v) else str(v))  # as read_csv(dtype=str) reads a CSV
    except READ_ERRORS as exc:
        raise _unreadable(path, exc) from None
    if df.shape[1] == 0 or (nrows is None and len(df) == 0):
        raise BadInput(f"{path.name} has no rows: re-download the competition data")
    return df


CSV_SUFFIXES = (".tsv", ".tsv.gz", ".csv", ".csv.gz")
READ_ERRORS = (pd.errors.ParserError, UnicodeError, ValueError, OSError, EOFError, zlib.error, ImportError)


def _separators(path: Path, encoding: str | None) -> tuple[str, str]:
    """A CSV or TSV file's field separator and decimal mark."""
    return ("\t", ".") if path.name.lower().endswith((".tsv", ".tsv.gz")) else csv_dialect(path, encoding)


def _unreadable(path: Path, exc: Exception) -> BadInput:
    if isinstance(exc, pd.errors.EmptyDataError):
        return BadInput(f"{path.name} is empty: re-download the competition data")
    if isinstance(exc, ImportError):
        return BadInput(f"{path.name} needs a library that is missing ({exc.name or exc}): install it")
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return BadInput(f"{path.name} is not a readable table ({first}): re-download or repair it")


def read_chunks(path: Path, rows: int) -> Iterator[pd.DataFrame]:
    """A table `rows` rows at a time: a CSV or TSV file in chunks (summaries of a large table need never hold it
    whole), any other format whole, as one chunk. Errors as read_table's."""
    path = Path(path)
    if path.is_dir() or not path.name.lower().endswith(CSV_SUFFIXES):
        yield read_table(path)
        return
    encoding = text_encoding(path, None)  # the whole file: a chunk past the head must not fail to decode
    sep, decimal = _separators(path, encoding)
    try:
        with read_csv(path, sep=sep, decimal=decimal, encoding=encoding, chunksize=rows) as reader:
            yield from reader
    except READ_ERRORS as exc:
        raise _unreadable(path, exc) from None


def nested_as_text(df: pd.DataFrame) -> pd.DataFrame:
    """Cells holding lists or records (a JSON field listing a user's forums) as text: a list's items joined by
    spaces, a record as JSON, as the generated maps read them (stages.codegen). Nothing can count, compare or group
    cells that hold lists."""

    def text(v):
        if isinstance(v, list | tuple | np.ndarray):
            return " ".join(str(x) for x in v)
        return json.dumps(v, sort_keys=True, default=str) if isinstance(v, dict) else v

    for c in df.select_dtypes(include="object").columns:
        if df[c].map(lambda v: isinstance(v, list | tuple | dict | np.ndarray)).any():
            df[c] = df[c].map(text)
    return df
