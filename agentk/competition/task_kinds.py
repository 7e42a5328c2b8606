"""Kinds of task agentk does not do, read off the values and the structure of a competition's files (never their
names): a program as the only deliverable (simulation), assignments of entities without any target (optimisation),
character offsets into a text (span extraction), ranked ids of a gallery of items like the queries (retrieval) and
sets of catalogue items drawn from a table of interactions (recommendation). unsupported_task (below) asks these,
after the file-level kinds of agentk.competition.support, before any stage runs."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pandas as pd

from agentk.competition.archives import is_archive, members
from agentk.competition.column_kinds import PEEK_ROWS, is_long_text
from agentk.competition.dataview import find_tables
from agentk.competition.files import AUDIO_EXT, walk
from agentk.competition.readers import CSV_SUFFIXES, read_table
from agentk.competition.support import file_reason, per_position, positions_sampled, table_reason, unsupported
from agentk.competition.tables import candidates, sample_columns
from agentk.core.errors import BadInput
from agentk.modalities import IMAGE

PROGRAM_EXT = (".py", ".ipynb")
WHOLE_TABLE_BYTES = 64 << 20  # a table not in CSV is read whole for a column up to this size, else its head
MIN_SHARE = 0.8  # share of the sample's distinct tokens that must be ids of one table (or one folder's files)
OFFSET_PAIR = re.compile(r"^(\d+)\s+(\d+)$")  # "25 44": a character range, start and end
MIN_RANGES = 5  # character ranges needed to call a column offsets
TABLE_FILES = (".csv", ".tsv", ".json", ".jsonl", ".parquet", ".feather", ".gz", ".zip")
DOCUMENTS = (".md", ".txt", ".html", ".htm", ".pdf")


# ---- simulation: no data, a program to submit -----------------------------------------------------------------
def simulation_reason(folder: Path, names: list[str]) -> str | None:
    """A folder without any table (no train, test or sample submission) whose program files (.py, a notebook) are
    what a submission is: an agent played against others in a simulated environment, not a model of data."""

    if candidates(folder):
        return None
    programs = [(n, _defined(folder / n)) for n in names if Path(n).suffix.lower() in PROGRAM_EXT]
    programs = [(n, defs) for n, defs in programs if defs is not None]
    if not programs:
        return None
    name, defs = programs[0]
    what = f"defining {', '.join(f'{d}()' for d in defs[:3])}" if defs else "a notebook of code"
    return unsupported(
        "simulation",
        f"no data tables and no sample submission table; the folder's program {name} ({what}) is what a submission is",
    )


def _defined(path: Path) -> list[str] | None:
    """The functions and classes a Python file (or a notebook's code cells) defines; None if it is not code."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    if path.suffix.lower() == ".ipynb":
        try:
            cells = json.loads(text).get("cells", [])
        except (ValueError, AttributeError, RecursionError):
            return None
        code = [c.get("source", "") for c in cells if isinstance(c, dict) and c.get("cell_type") == "code"]
        if not code:
            return None
        text = "\n".join("".join(s) if isinstance(s, list) else str(s) for s in code)
        text = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith(("!", "%")))
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return [] if path.suffix.lower() == ".ipynb" else None
    defs = [n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)]
    return defs if defs or path.suffix.lower() == ".ipynb" else None


# ---- the table kinds ------------------------------------------------------------------------------------------
class _Tables:
    """The heads of a folder's tables (as text) and, on demand, a column's values read whole."""

    def __init__(self, folder: Path, sample: Path):

        self.sample_path = sample
        self.heads: dict[Path, pd.DataFrame] = {}
        for p in candidates(folder):
            try:
                self.heads[p] = read_table(p, nrows=PEEK_ROWS, dtype=str)
            except BadInput:  # an unreadable table is the input checks' to report
                continue
        self._whole: dict[tuple[Path, str], set[str]] = {}

    def others(self) -> dict[Path, pd.DataFrame]:
        """Every table but the sample."""
        return {p: df for p, df in self.heads.items() if p != self.sample_path}

    def values(self, path: Path, column: str) -> set[str]:
        """A column's distinct values, read whole (a CSV's one column alone; another format up to a size), else
        those of its head."""

        key = (path, column)
        if key not in self._whole:
            head = self.heads[path][column]
            whole = head
            if len(head) >= PEEK_ROWS:  # a longer table than its head
                try:
                    if path.is_file() and path.name.lower().endswith(CSV_SUFFIXES):
                        whole = read_table(path, dtype=str, usecols=[column])[column]
                    elif path.is_file() and path.stat().st_size <= WHOLE_TABLE_BYTES:
                        whole = read_table(path, dtype=str)[column]
                except (BadInput, KeyError, OSError, ValueError):
                    pass
            self._whole[key] = {str(v).strip() for v in whole.dropna()}
        return self._whole[key]

    def holding(self, ids: set[str], skip: tuple[Path, ...] = ()) -> tuple[Path, str] | None:
        """The first table (not in `skip`) with a column holding nearly all of `ids`, and that column."""
        for p, df in self.others().items():
            if p in skip:
                continue
            for c in df.columns:
                head = {str(v).strip() for v in df[c].dropna()}
                if head & ids and _share(ids, self.values(p, c)) >= MIN_SHARE:  # the head tells which may
                    return p, str(c)
        return None


def _share(wanted: set[str], have: set[str]) -> float:
    return len(wanted & have) / len(wanted) if wanted else 0.0


def _ids_of(tokens: set[str], keys: set[str]) -> bool:
    """The tokens are ids of these keys: nearly all of them are, or (a sample's placeholder ids drawn from the full
    catalogue, of which the folder may hold a part) whole numbers within the range of keys that are whole numbers."""
    if _share(tokens, keys) >= MIN_SHARE:
        return True
    if len(keys) < 20 or not all(t.isdigit() for t in tokens) or not all(k.isdigit() for k in keys):
        return False
    numbers = [int(k) for k in keys]
    return all(min(numbers) <= int(t) <= max(numbers) for t in tokens)


def _same_form(tokens: set[str], key: pd.Series) -> bool:
    """Tokens written as a key column's values are: as long as they are, digits alone where they are."""
    lengths = key.str.len()
    digits = bool(key.str.isdigit().all())
    return all(lengths.min() <= len(t) <= lengths.max() and (t.isdigit() or not digits) for t in tokens)


def table_kind_reason(folder: Path, names: list[str], sample_path: Path, sample: pd.DataFrame, layout) -> str | None:
    """Span extraction by offsets, retrieval, recommendation and optimisation, from the sample submission's
    predicted columns (`layout`: tables.sample_columns of its head) and the folder's tables; None if none."""
    tables = _Tables(folder, sample_path)
    heads = tables.others()
    in_tables = {str(c) for df in heads.values() for c in df.columns}
    for c in layout.predicted:
        if reason := _offsets_reason(c, sample, heads):
            return reason
    for c in layout.predicted:
        if c in in_tables:  # a column some table holds is a target learnt from it (label sets too)
            continue
        if reason := _item_ids_reason(c, sample, layout.id, tables, folder, names):
            return reason
    return _assignment_reason(sample, layout, tables, names, in_tables)


def _offsets_reason(column: str, sample: pd.DataFrame, heads: dict[Path, pd.DataFrame]) -> str | None:
    """A target of character offsets: a train (or the sample's) column of "start end" ranges, several per row as a
    list or joined by ";", beside a text they fit in. Spans given as text are chosen among the input's words
    elsewhere (agentk takes them on); offsets would need a model of positions."""
    held = [(p, df[column]) for p, df in heads.items() if column in df.columns] + [(None, sample[column])]
    for where, values in held:
        ranges = _offset_ranges(values)
        if ranges is None or len(ranges) < MIN_RANGES:
            continue
        numbers = [n for r in ranges for n in r]
        if len(set(numbers)) < 0.3 * len(numbers):  # offsets into many texts vary; a set of label ids repeats
            continue
        end = max(e for _, e in ranges)
        for p, df in heads.items():
            texts = [x for x in df.columns if x != column and _is_text(df[x])]
            fits = [x for x in texts if df[x].dropna().str.len().max() >= end]
            if fits:
                whose = f"the {where.name} column" if where is not None else "the sample's column"
                return unsupported(
                    "span extraction",
                    f"{whose} {column!r} holds character offsets ({_quote(ranges[0])} pairs) into the text "
                    f"{fits[0]!r} of {p.name}, not the spans' text",
                )
    return None


def _offset_ranges(values: pd.Series) -> list[tuple[int, int]] | None:
    """The (start, end) ranges of a column whose every filled cell lists "start end" pairs, start before end
    ("25 44", "['25 44', '50 60']", "25 44;50 60"); None if a cell holds anything else."""
    ranges = []
    for v in values.dropna().astype(str).head(PEEK_ROWS):
        for piece in re.split(r"[;,]", re.sub(r"[\[\]'\"]", "", v)):
            piece = piece.strip()
            if not piece:
                continue
            m = OFFSET_PAIR.match(piece)
            if not m or int(m.group(1)) >= int(m.group(2)):
                return None
            ranges.append((int(m.group(1)), int(m.group(2))))
    return ranges


def _is_text(s: pd.Series) -> bool:

    return is_long_text(s)


def _quote(r: tuple[int, int]) -> str:
    return f"'{r[0]} {r[1]}'"


def _item_ids_reason(
    column: str, sample: pd.DataFrame, id_col: str | None, tables: _Tables, folder: Path, names: list[str]
) -> str | None:
    """A sample column of space-separated ids of items the tables list one per row (or the files of a folder name),
    where no table holds the column: retrieval when the items are of the queries' kind (a table of the same columns
    as the one holding the sample's ids, or a gallery folder beside the queries' one), recommendation when a table
    of interactions lists those items many times over, grouped by entity."""
    cells = [str(v).split() for v in sample[column].dropna()]
    tokens = {t for cell in cells for t in cell}
    if not tokens or all(len(cell) < 2 for cell in cells):
        return None
    ids = {str(v).strip() for v in sample[id_col].dropna()} if id_col else set()
    for p, df in tables.others().items():
        for k in df.columns:
            key = df[k].dropna().astype(str).str.strip()
            if len(key) < 2 or not key.is_unique or not _same_form(tokens, key):  # the head says which may hold them
                continue
            if not _ids_of(tokens, tables.values(p, k)):
                continue
            if ids and _share(ids, tables.values(p, k)) >= MIN_SHARE:  # the queries' own table: items are others
                continue
            found = f"the sample's {column!r} lists ids of {p.name}'s {k!r} ({' '.join(sorted(tokens)[:2])}, ...)"
            query = tables.holding(ids, skip=(p,)) if ids else None
            same = {str(c) for c in df.columns} - {str(k)}
            if query is not None:
                q_cols = {str(c) for c in tables.heads[query[0]].columns} - {query[1]}
                if same and same <= q_cols:
                    return unsupported(
                        "retrieval",
                        f"{found}, a table of items with the columns of the queries in {query[0].name}: a ranked "
                        "list of the gallery per query, not a prediction",
                    )
            if interactions := _interactions(tables, p, tables.values(p, k)):
                table, item, entity = interactions
                return unsupported(
                    "recommendation",
                    f"{found}, a catalogue; {table.name} lists its items in {item!r}, several per {entity!r}: a "
                    "set of catalogue items per entity, not a label",
                )
    return _gallery_reason(column, tokens, ids, folder, names)


def _interactions(tables: _Tables, catalogue: Path, items: set[str]) -> tuple[Path, str, str] | None:
    """(table, item column, entity column) of a table other than the catalogue whose column holds the catalogue's
    items, repeated, beside a column of entities each with several rows (an order's products, a user's clicks)."""
    for p, df in tables.others().items():
        if p == catalogue or len(df) < 10:
            continue
        for c in df.columns:
            vals = df[c].dropna().astype(str).str.strip()
            if len(vals) < 10 or vals.is_unique or _share(set(vals), items) < 0.95:
                continue
            for e in df.columns:
                group = df[e].dropna()
                if e != c and len(group) >= 10 and group.nunique() <= len(group) / 1.5:
                    return p, str(c), str(e)
    return None


def _gallery_reason(column: str, tokens: set[str], ids: set[str], folder: Path, names: list[str]) -> str | None:
    """Retrieval over files: the sample's tokens name the files of one folder (the gallery) and its ids those of
    another (the queries)."""
    stems: dict[Path, set[str]] = {}  # each folder's files' names, those of its sub-folders' too
    for n in names:
        if not n.lower().endswith((*TABLE_FILES, *DOCUMENTS)):
            for folder in Path(n).parents[:-1]:  # a/b/c/x.png: a/b/c, a/b and a
                stems.setdefault(folder, set()).add(Path(n).stem)
    deepest = sorted(stems, key=lambda f: -len(f.parts))
    gallery = next((f for f in deepest if _share(tokens, stems[f]) >= MIN_SHARE), None)
    queries = next(
        (f for f in deepest if gallery is not None and _share(ids, stems[f]) >= MIN_SHARE and f not in gallery.parents
         and gallery not in f.parents and f != gallery),
        None,
    )  # fmt: skip
    if gallery is None or queries is None:
        return None
    return unsupported(
        "retrieval",
        f"the sample's {column!r} lists names of the {len(stems[gallery])} files in {gallery.as_posix()}/, a "
        f"gallery beside the queries in {queries.as_posix()}/: a ranked list of the gallery per query, not a prediction",
    )


def _assignment_reason(
    sample: pd.DataFrame, layout, tables: _Tables, names: list[str], in_tables: set[str]
) -> str | None:
    """Optimisation: the sample gives each entity of a table (all of them, no other) a value no table holds for
    any row, taken among several option columns of that table (a family's preferred days), and no other table has
    rows like that table's: nothing to learn from, only preferences to satisfy."""

    media = (*IMAGE.extensions, *AUDIO_EXT, ".txt", ".npy")
    if layout.id is None or set(layout.predicted) & in_tables:
        return None
    if sum(Path(n).suffix.lower() in media for n in names) >= 5:  # per-sample files may hold the labels
        return None
    ids = {str(v).strip() for v in sample[layout.id].dropna()}
    for p, df in tables.others().items():
        for k in df.columns:
            head = df[k].dropna().astype(str).str.strip()
            if not head.is_unique or not set(head) & ids:  # the head tells which column may be the entities'
                continue
            rest = {str(c) for c in df.columns} - {str(k)}
            if any(rest & {str(c) for c in o.columns} for q, o in tables.others().items() if q != p):
                return None  # rows like these elsewhere: a train table beside a test table
            for c in layout.predicted:
                chosen = {str(v).strip() for v in sample[c].dropna()}
                in_head = [
                    str(x) for x in df.columns if x != k and chosen & set(df[x].dropna().astype(str).str.strip())
                ]
                if len(in_head) < 2:  # the options, seen in the head already (read whole only then)
                    continue
                whole = tables.values(p, k)
                if whole != ids and not (len(ids) >= PEEK_ROWS and ids <= whole):  # all the entities, no other
                    continue
                options = [str(x) for x in df.columns if x != k and chosen & tables.values(p, x)]
                if len(options) >= 2 and chosen <= set().union(*(tables.values(p, x) for x in options)):
                    return unsupported(
                        "optimisation",
                        f"no table holds a target; the sample gives each of the {len(ids)} rows of {p.name} (by "
                        f"{layout.id!r}) a {c!r} among its options {', '.join(options[:3])}"
                        f"{', ...' * (len(options) > 3)}: an assignment to optimise, not a prediction",
                    )
    return None


def unsupported_task(folder: Path) -> str | None:
    """Why agentk cannot do the task of a competition folder, read off its files and the head of its tables
    before anything is set up (an unreadable or missing table is left to the input checks); None if nothing
    says so."""
    folder = Path(folder)
    names = [p.relative_to(folder).as_posix() for p in walk(folder, 4)]
    for archive in (p for p in folder.iterdir() if is_archive(p)):
        try:
            names += [f"{archive.name}/{m}" for m in members(archive)]
        except Exception:  # noqa: BLE001 - a broken archive is the input checks' to report
            pass
    reason = file_reason(names, folder)
    if reason:
        return reason
    if found := per_position(folder):
        path, lists, seq = found
        if positions_sampled(folder, lists):
            return None  # fetch writes the records one row per position (agentk.competition.positions)
        return unsupported(
            "per-position sequence outputs",
            f"{path.name}: {', '.join(lists[:3])} hold one value per position of {seq!r}",
        )
    tables = find_tables(folder)
    if "sample" not in tables:
        return simulation_reason(folder, names)
    try:
        sample = read_table(tables["sample"], nrows=PEEK_ROWS, dtype=str)
        train = read_table(tables["train"], nrows=PEEK_ROWS) if "train" in tables else None
        test = read_table(tables["test"], nrows=PEEK_ROWS) if "test" in tables else None
    except BadInput:
        return None
    layout = sample_columns(sample, train, test)
    # before the sample's own columns are judged: offsets would read as run-length masks there
    return table_kind_reason(folder, names, tables["sample"], sample, layout) or table_reason(train, test, sample)
