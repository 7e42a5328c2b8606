"""Views of a competition's raw files: what the expert inspects and what prompts show.

Finding the train/test/sample-submission files and reading tables live here; reading errors become
BadInput with a one-line reason. The prompt views (data_view, task_view) serve the LLM policy's code
prompts and the text stages' own prompts alike.
"""

from __future__ import annotations

import codecs
import gzip
import json
import os
import re
import zlib
from collections import OrderedDict
from collections.abc import Iterator
from pathlib import Path

import charset_normalizer
import numpy as np
import pandas as pd

from agentk.competition.json_tables import read_json_table
from agentk.core.errors import BadInput
from agentk.parsing import read_csv
from agentk.workspace import Workspace

TABLE_EXT = (".csv", ".tsv", ".json", ".jsonl", ".parquet", ".feather", ".csv.gz", ".tsv.gz")
AUDIO_EXT = (".wav", ".mp3", ".flac", ".ogg", ".opus", ".aif", ".aiff", ".m4a", ".aac", ".wma")
# libsndfile reads these (Opus in its Ogg container too): fetch pictures them; the rest of AUDIO_EXT is refused
AUDIO_DECODED = (".wav", ".mp3", ".flac", ".ogg", ".opus", ".aif", ".aiff")
TEXT_DOC_EXT = (".md", ".txt", ".html", ".htm")
MAX_VIEW = 3000  # characters of one table's view in a prompt
HEAD = 1 << 20  # bytes of a text table that tell its encoding in the common case
CHUNK = 16 << 20  # bytes per read when a whole table is checked


def is_table(path: Path) -> bool:
    return path.is_file() and path.name.lower().endswith(TABLE_EXT)


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
    # short text often ties several code pages: among those as little chaotic and at least as coherent as the best
    # (which is not always the most coherent: cp1250 before cp1252 for "grün, blå, rojo-ñ"), the most widespread one
    # (Windows-1252, latin-1's superset) decodes what Western spreadsheets write
    tied = [m for m in found if m.chaos == best.chaos and m.coherence >= best.coherence]
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
            from agentk.competition.partitions import read_dataset

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


def walk(root: Path, max_depth: int = 4):
    """Files under root (following links, but not a link back to a folder above it: `a -> .`), sorted, hidden
    ones skipped."""
    root = Path(root)
    stack = [(root, 0, frozenset({os.path.realpath(root)}))]
    while stack:
        folder, depth, above = stack.pop()
        try:
            children = sorted(folder.iterdir())
        except OSError:
            continue
        for child in children:
            if child.name.startswith((".", "__MACOSX")):
                continue
            if child.is_dir():
                real = os.path.realpath(child)
                if depth < max_depth and real not in above:
                    stack.append((child, depth + 1, above | {real}))
            else:
                yield child


def file_tree(root: Path, max_lines: int = 40, per_folder: int = 6) -> str:
    """A compact `tree` view: big folders are summarised by count and extensions."""
    root = Path(root)
    lines: list[str] = []

    def visit(folder: Path, indent: str, above: frozenset[str]) -> None:
        try:
            children = sorted(c for c in folder.iterdir() if not c.name.startswith("."))
        except OSError:
            return
        files = [c for c in children if not c.is_dir()]
        for d in (c for c in children if c.is_dir()):
            real = os.path.realpath(d)
            if real in above:  # a link back to a folder above (`a -> .`): shown, not followed
                lines.append(f"{indent}{d.name}/ (a link to a folder above)")
                continue
            n = sum(1 for _ in walk(d, 3))
            lines.append(f"{indent}{d.name}/ ({n} files)")
            visit(d, indent + "  ", above | {real})
        for f in files[:per_folder]:
            lines.append(f"{indent}{f.name} ({_size(f)})")
        if len(files) > per_folder:
            exts = sorted({"".join(f.suffixes[-1:]).lower() for f in files})
            lines.append(f"{indent}... {len(files) - per_folder} more files ({', '.join(exts)})")

    visit(root, "", frozenset({os.path.realpath(root)}))
    return "\n".join(
        lines[:max_lines] + ([f"... ({len(lines) - max_lines} more lines)"] if len(lines) > max_lines else [])
    )


def _size(path: Path) -> str:
    try:
        n = path.stat().st_size
    except OSError:  # a dangling link, a link loop (loop1 -> loop2 -> loop1)
        return "unreadable"
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024:
            return f"{n:.0f}{unit}"
        n /= 1024
    return f"{n:.0f}TB"


def table_view(path: Path, rows: int = 5) -> str:
    """Head, dtypes and missing counts of a table, for prompts and the expert's log."""
    df = read_table(path)
    info = pd.DataFrame({"dtype": df.dtypes.astype(str), "missing": df.isna().sum(), "unique": df.nunique()})
    return (
        f"{path.name}: {len(df)} rows x {df.shape[1]} columns\n{df.head(rows).to_string(max_colwidth=40)}\n\n"
        f"{info.to_string()}"
    )


def spelling(column) -> str:
    """A column's name up to case and punctuation: id_01, id-01 and ID01 are one column spelled three ways (and
    Größe, GRÖSSE: letters compared case-folded)."""
    return re.sub(r"[\W_]+", "", str(column).casefold())


def role_of(path: Path) -> str | None:
    """train / test / sample, read off a file or folder name (train.csv, en_train.csv.zip, training_set.csv,
    train_images/, test.zip, gender_submission.csv, sampleSubmission.csv...)."""
    name = path.name.lower()
    if re.search(r"sample|submission", name):
        return "sample"
    if re.search(r"(^|[^a-z])(train|training)([^a-z]|$)", name) or name.startswith("train"):
        return "train"
    if re.search(r"(^|[^a-z])(test|testing)([^a-z]|$)", name) or name.startswith("test"):
        return "test"
    return None


def find_tables(raw: Path) -> dict[str, Path]:
    """The train, test and sample-submission tables of a competition folder, and a separate train-labels table
    ("labels") when the targets are not in the train table (agentk.competition.tables says how and why)."""
    from agentk.competition.tables import find

    return dict(find(raw).paths)


def split_folders(root: Path, role: str) -> list[Path]:
    """Top-level folders or archives of one split (train/, train_images/, test.zip)."""
    return [
        p
        for p in sorted(Path(root).iterdir())
        if not p.name.startswith(".")
        and not is_table(p)
        and (p.is_dir() or p.name.lower().endswith((".zip", ".tar", ".tar.gz", ".tgz", ".7z")))
        and role_of(p) == role
    ]


def competition_name(folder: Path) -> str:
    """A local competition's name: its folder's, or the parent's for a `public/` folder (the prepared layout
    <competition>/public beside <competition>/private, as in MLE-bench), whose own name says nothing."""
    folder = Path(folder).resolve()
    return folder.parent.name if folder.name == "public" and folder.parent.name else folder.name


def find_description(raw: Path) -> Path | None:
    """The competition's description text: description.md, README, overview... (largest wins)."""
    docs = [p for p in walk(raw, 1) if p.name.lower().endswith(TEXT_DOC_EXT)]
    preferred = [p for p in docs if re.search(r"descr|overview|readme|competition|task", p.name.lower())]
    pool = preferred or docs
    return max(pool, key=lambda p: p.stat().st_size) if pool else None


# ---- views of a workspace for prompts (paper 2, Appendix D: summary, directory tree, tables) ---------------
def cut(text: str, limit: int = MAX_VIEW) -> str:
    return text if len(text) <= limit else text[:limit] + f"\n... [{len(text) - limit} characters cut]"


def data_view(ws: Path) -> str:
    raw = Workspace(ws).raw
    parts = [f"Directory tree of {raw.name}/:\n{file_tree(raw, max_lines=30)}"]
    for role, path in find_tables(raw).items():
        parts.append(f"{role} table {path.relative_to(ws)}:\n{cut(table_view(path))}")
    return "\n\n".join(parts)


def task_view(ws: Path) -> str:
    """The summary once the summarise stage wrote it, else the competition's description."""
    w = Workspace(ws)
    if w.summary.exists():
        return f"Task summary:\n{cut(w.summary.read_text(), 4000)}"
    return f"Competition description:\n{cut(w.description.read_text(), 6000)}"
