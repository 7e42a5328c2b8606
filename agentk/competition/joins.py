"""Tables joined to the train and test tables through the data graph (agentk.competition.graph): the targets in a
labels table (train_labels.csv keyed by id), side tables with one row per key (looked up, also by a key spread over
two columns), and per-entity tables with many rows per key (transactions per customer, atoms per molecule), which
are summarised per key (row count; mean, min, max and spread of each numeric column) before the join, read a
million rows at a time. A joined
table may itself first be joined with the tables that hang from it (a loan's payments, summarised per loan, before
the loans are summarised per customer). Finding the links needs only the columns that may hold keys: a large side
table is read in chunks keeping those (texts as categories), and its first rows say what else it holds. The expert's analysis joins its frames with `apply`; the input maps'
generated code calls the same `join_keyed` (stages/codegen.py writes its source into the map)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from agentk.competition.files import spelling
from agentk.competition.graph import Edge, Node, build, key_text, link, measured
from agentk.competition.readers import CSV_SUFFIXES, read_chunks, read_table
from agentk.competition.tables import candidates
from agentk.competition.written import stand_ins
from agentk.workspace import Workspace

AGGREGATES = ("mean", "min", "max", "std")  # of each numeric column of a table with many rows per key
CHUNK_ROWS = 1_000_000  # a summarised table's rows read at a time (in setup and in the generated maps)
VERSION_SHARE = 0.5  # a table sharing more of its columns with train or test than this is a version of it
# a side table larger than this is read lean (_lean_node): a 27-million-row table of three columns is about 2 GB
# whole in pandas, and a wide one of measurements far more, where its keys alone, as categories, take a fraction
LEAN_BYTES = 100_000_000
HEAD_ROWS = 10_000  # a lean table's first rows, kept whole: its columns and their types


@dataclass
class Join:
    table: str  # workspace-relative path of the joined table
    keys: list[str]  # columns of the table it joins to (train/test, or the table it hangs from)
    splits: list[str]  # "train" (a labels table) or "train" and "test" (inputs); [] below another join
    columns: list[str] = field(default_factory=list)  # one row per key: the columns brought in
    aggregate: list[str] = field(default_factory=list)  # many rows per key: the numeric columns summarised
    prefix: str = ""  # names the summary columns (<prefix>_count, <prefix>_<column>_mean...)
    other_keys: list[str] = field(default_factory=list)  # the key's columns in the joined table (default: the same)
    many: bool = False  # many rows per key: summarised, else looked up
    via: list[Join] = field(default_factory=list)  # joined to this table first (the tables hanging from it)
    rename: dict[str, str] = field(default_factory=dict)  # the table's columns as the train side spells them

    def __post_init__(self):
        self.other_keys = self.other_keys or list(self.keys)

    def describe(self) -> str:
        on = " and ".join(k if k == o else f"{k!r} = its {o!r}" for k, o in zip(self.keys, self.other_keys))
        to = " and ".join(self.splits) or "the table it hangs from"
        first = f" (first joined with {', '.join(Path(v.table).name for v in self.via)})" if self.via else ""
        if self.many:
            return (
                f"{Path(self.table).name}{first}: many rows per {on}, summarised per key as a row count and the "
                f"{'/'.join(AGGREGATES)} of {self.aggregate} and joined to {to}"
            )
        return f"{Path(self.table).name}{first}: joined to {to} on {on}, bringing {self.columns}"

    def record(self) -> dict:
        """What joins.json keeps of the join (the report and features.json read it): the table, how it is joined,
        the columns it brings, and the same for the tables joined into it first."""
        return {
            "table": Path(self.table).name,
            "how": self.describe(),
            "columns": self.brought(),
            "via": [v.record() for v in self.via],
        }

    def brought(self) -> list[str]:
        """The columns this join adds."""
        if not self.many:
            return list(self.columns)
        return [f"{self.prefix}_count", *(f"{self.prefix}_{c}_{how}" for c in self.aggregate for how in AGGREGATES)]


# join_keyed's source goes into the generated maps on its own (stages/codegen.py), so it names the statistics itself:
# keep its list equal to AGGREGATES
def join_keyed(df, other, keys, other_keys, columns, aggregate, prefix, many):
    """`df` with `other` joined on df[keys] = other[other_keys] (as key text, several columns joined by "|"): its
    `columns` looked up, or (`many`) its rows summarised per key: their count (0 for a key without rows) and the
    mean, min, max and spread of each `aggregate` column. `other` is a table or its chunks (an iterable of tables,
    as read_csv's chunksize reads a large one), which are summarised one at a time and the summaries combined."""

    def key_of(frame, cols):
        text = [key_text(frame[c]) for c in cols]
        return text[0].str.cat(text[1:], sep="|") if len(text) > 1 else text[0]

    chunks = [other] if isinstance(other, pd.DataFrame) else other
    if not many:
        right = pd.concat([c[columns].assign(_key=key_of(c, other_keys)) for c in chunks], ignore_index=True)
        right = right.drop_duplicates("_key")
    else:
        parts = []  # per chunk and key: the rows, and each column's count, mean, squared deviations, min and max
        for chunk in chunks:
            grouped = chunk.assign(_key=key_of(chunk, other_keys)).groupby("_key")
            part = pd.DataFrame({"rows": grouped.size()})
            if aggregate:
                values = grouped[aggregate]
                stat = {"n": values.count(), "mean": values.mean(), "min": values.min(), "max": values.max()}
                stat["m2"] = values.var(ddof=0) * stat["n"]
                for i, c in enumerate(aggregate):  # by position: any column name stays apart from "rows"
                    part = part.assign(**{f"{i}{how}": stat[how][c] for how in stat})
            parts.append(part)
        stats = pd.concat(parts)
        by_key = stats.groupby(level=0)
        right = pd.DataFrame({f"{prefix}_count": by_key["rows"].sum()})
        for i, c in enumerate(aggregate):
            n, part_mean = stats[f"{i}n"], stats[f"{i}mean"].fillna(0)
            total = by_key[f"{i}n"].sum()
            mean = (n * part_mean).groupby(level=0).sum() / total.where(total > 0)
            spread = stats[f"{i}m2"].fillna(0) + n * (part_mean - mean.reindex(stats.index)).fillna(0) ** 2
            std = (spread.groupby(level=0).sum() / (total - 1).where(total > 1)) ** 0.5
            right[f"{prefix}_{c}_mean"], right[f"{prefix}_{c}_min"] = mean, by_key[f"{i}min"].min()
            right[f"{prefix}_{c}_max"], right[f"{prefix}_{c}_std"] = by_key[f"{i}max"].max(), std
        right = right.rename_axis("_key").reset_index()
    out = df.assign(_key=key_of(df, keys)).merge(right, on="_key", how="left").drop(columns="_key")
    if many:
        out[f"{prefix}_count"] = out[f"{prefix}_count"].fillna(0)
    return out


def find_joins(ws: Path, raw: Path, tables: dict[str, Path], train: pd.DataFrame, test: pd.DataFrame) -> list[Join]:
    """The labels table (train only), and the other tables the data graph links to train and test, directly or
    through the tables they hang from."""
    joins = []
    if "labels" in tables:
        other = read_table(tables["labels"])
        edge = link(Node("train", train), Node("labels", other))
        if edge is not None:
            mine, theirs = edge.cols, edge.dst_cols
            cols = [c for c in other.columns if c not in theirs and c not in train.columns]
            joins.append(Join(_rel(tables["labels"], ws), list(mine), ["train"], cols, other_keys=list(theirs)))
    nodes = _side_tables(ws, raw, tables, train, test)
    for j in _per_split(nodes, train, test):
        joins.append(j)
        del nodes[j.table]
    if not nodes:
        return joins
    common = [c for c in train.columns if c in test.columns]
    entities = Node("train", pd.concat([train[common], test[common]], ignore_index=True))
    tree = build(entities, list(nodes.values())).tree()
    train_node, test_node = Node("train", train[common]), Node("test", test[common])  # their key texts made once
    for edge in (e for e in tree if e.src == "train"):
        other = nodes[edge.dst]
        in_train = link(train_node, other, only=edge)
        in_test = link(test_node, other, only=edge)
        if in_train is None:
            continue
        j, _ = _join(edge, nodes, tree, ["train", "test"] if in_test is not None else ["train"], set(train.columns))
        if in_test is not None and (j.columns or j.many):
            joins.append(j)
        elif not j.many and j.columns and "labels" not in tables:
            # keyed by train's entities alone: what it adds only train has (targets, or leaks no map may use)
            joins.append(j)
    return joins


def _join(
    edge: Edge, nodes: dict[str, Node], tree: list[Edge], splits: list[str], have: set
) -> tuple[Join, pd.DataFrame]:
    """The join along `edge` and the joined table, first joined with the tables hanging from it in the tree."""
    other, via = nodes[edge.dst].schema, []  # the columns and their types are what the join is planned from
    for below in (e for e in tree if e.src == edge.dst):
        v, frame = _join(below, nodes, tree, [], set(other.columns))
        if v.columns or v.many:
            other = join_keyed(other, frame, v.keys, v.other_keys, v.columns, v.aggregate, v.prefix, v.many)
            via.append(v)
    keys, theirs = list(edge.cols), list(edge.dst_cols)
    if not edge.many:
        cols = [c for c in other.columns if c not in theirs and c not in have]
        return Join(edge.dst, keys, splits, cols, other_keys=theirs, via=via), other
    numeric = [
        c for c in other.columns
        if c not in theirs and pd.api.types.is_numeric_dtype(other[c]) and other[c].dtype != bool and not _row_id(other[c])
    ]  # fmt: skip
    prefix = "".join(ch if ch.isalnum() else "_" for ch in Path(edge.dst).name.split(".")[0])
    return Join(edge.dst, keys, splits, aggregate=numeric, prefix=prefix, other_keys=theirs, many=True, via=via), other


SPLIT_COVER = 0.9  # of a per-split side table's keys that its split's table must hold


def _per_split(nodes: dict[str, Node], train: pd.DataFrame, test: pd.DataFrame) -> list[Join]:
    """Side tables given one per split (train_identity.csv and test_identity.csv beside the transactions): two tables
    of the same columns (up to case and punctuation: test's id-01 is train's id_01), one keyed by train's ids (its
    key distinct, SPLIT_COVER of it train's) and the other by test's, each joined to its split's rows only. Each
    may hold a row for only some of its split's rows (the graph's links, which need half of every split's keys,
    miss it): the others keep their values missing. Returned as a train join and a test join, the test's columns
    renamed as the train table spells them."""
    joins = []
    for a, b in [(a, b) for a in nodes for b in nodes if a != b]:
        if a in {j.table for j in joins} or b in {j.table for j in joins}:
            continue
        mine, theirs = nodes[a].schema, nodes[b].schema
        spelled = {spelling(c): c for c in theirs.columns}
        pairs = {c: spelled[spelling(c)] for c in mine.columns if spelling(c) in spelled}
        if len(pairs) < 2 or len(pairs) != len(mine.columns) or len(pairs) != len(theirs.columns):
            continue
        for key in mine.columns:
            if key not in nodes[a].frame or pairs[key] not in nodes[b].frame:  # a large table keeps its keys alone
                continue
            mine_keys, their_keys = nodes[a].frame[key], nodes[b].frame[pairs[key]]
            split_key = _split_key(mine_keys, train) if mine_keys.is_unique else None
            if split_key is None or not their_keys.is_unique or _split_key(their_keys, test) != split_key:
                continue
            cols = [c for c in mine.columns if c != key and c not in train.columns and c not in test.columns]
            if cols:
                rename = {pairs[c]: c for c in mine.columns if pairs[c] != c}
                joins.append(Join(a, [split_key], ["train"], cols, other_keys=[key]))
                joins.append(Join(b, [split_key], ["test"], cols, other_keys=[key], rename=rename))
            break
    return joins


def _split_key(values: pd.Series, split: pd.DataFrame) -> str | None:
    """The split's column of distinct values holding SPLIT_COVER of `values` (as key text), or None."""
    keys = set(key_text(values.dropna()))
    if not keys:
        return None
    for c in split.columns:
        column = split[c]
        if measured(column) or not column.is_unique:
            continue
        if len(keys & set(key_text(column.dropna()))) >= SPLIT_COVER * len(keys):
            return c
    return None


def _row_id(values: pd.Series) -> bool:
    """Whole numbers, distinct per row: the rows' own ids, whose mean per key says nothing."""
    present = values.dropna()
    return values.dtype.kind in "iu" and len(present) > 1 and present.is_unique


def _side_tables(ws: Path, raw: Path, tables: dict[str, Path], train: pd.DataFrame, test: pd.DataFrame):
    """The tables that may be joined, by workspace-relative path: not a role's table or one a written table stands
    in for, and not a version of the train or test table (an older test set: most of its columns are theirs)."""
    used = set(tables.values()) | {raw / original for original in stand_ins(raw)}
    nodes = {}
    for path in candidates(raw):
        if path in used:
            continue
        try:
            node = _lean_node(path, _rel(path, ws)) if _large(path) else Node(_rel(path, ws), read_table(path))
        except Exception:  # noqa: BLE001 - a table that does not read is not joined (it is no train/test table)
            continue
        columns = node.schema.columns
        shared = max(len(set(columns) & set(split.columns)) for split in (train, test))
        if shared >= 2 and shared / len(columns) > VERSION_SHARE:
            continue
        nodes[node.name] = node
    return nodes


def _large(path: Path) -> bool:
    return path.is_file() and path.name.lower().endswith(CSV_SUFFIXES) and path.stat().st_size > LEAN_BYTES


def _lean_node(path: Path, name: str) -> Node:
    """A large CSV table as a node: every row, but only the columns that may hold keys (not measurements, as its
    first chunk shows), texts as categories; its first HEAD_ROWS rows kept whole as its schema."""
    head, keys, parts = None, [], []
    for chunk in read_chunks(path, CHUNK_ROWS):
        if head is None:
            head = chunk.head(HEAD_ROWS).copy()
            keys = [c for c in chunk.columns if not measured(chunk[c])]
        part = chunk[keys]
        parts.append(part.astype({c: "category" for c in keys if part[c].dtype == object}))
    frame = pd.DataFrame({c: _stacked([p[c] for p in parts]) for c in keys})
    return Node(name, frame, head=head)


def _stacked(parts: list[pd.Series]) -> pd.Series:
    """A column's chunks as one: categories united where every chunk read texts, else as pandas concatenates."""
    if all(isinstance(p.dtype, pd.CategoricalDtype) for p in parts):
        return pd.Series(pd.api.types.union_categoricals(parts, ignore_order=True), name=parts[0].name)
    plain = [p.astype(object) if isinstance(p.dtype, pd.CategoricalDtype) else p for p in parts]
    return pd.concat(plain, ignore_index=True)


def _rel(path: Path, ws: Path) -> str:
    return str(path.relative_to(ws))


def widened(ws: Path, j: Join) -> pd.DataFrame | Iterator[pd.DataFrame]:
    """The joined table, first joined with the tables hanging from it; a summarised table with none hanging from it
    in chunks of CHUNK_ROWS (join_keyed summarises them one at a time)."""
    if j.many and not j.via:
        return read_chunks(Path(ws) / j.table, CHUNK_ROWS)
    other = read_table(Path(ws) / j.table).rename(columns=j.rename)
    for v in j.via:
        other = join_keyed(other, widened(ws, v), v.keys, v.other_keys, v.columns, v.aggregate, v.prefix, v.many)
    return other


def apply(ws: Path, joins: list[Join], df: pd.DataFrame, split: str) -> pd.DataFrame:
    """`df` (a split's table) with the joined tables' columns."""
    for j in (j for j in joins if split in j.splits):
        df = join_keyed(df, widened(ws, j), j.keys, j.other_keys, j.columns, j.aggregate, j.prefix, j.many)
    return df


def recorded(ws: Path) -> list[dict]:
    """The joins the train map's expert recorded in joins.json (Join.record); [] when there is none."""

    try:
        return json.loads(Workspace(ws).joins.read_text())
    except (OSError, ValueError):
        return []
