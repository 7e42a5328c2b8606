"""Tables joined to the train and test tables through the data graph (agentk.competition.graph): the targets in a
labels table (train_labels.csv keyed by id), side tables with one row per key (looked up, also by a key spread over
two columns), and per-entity tables with many rows per key (transactions per customer, atoms per molecule), which
are summarised per key (row count; mean, min, max and spread of each numeric column) before the join, read a
million rows at a time. A joined
table may itself first be joined with the tables that hang from it (a loan's payments, summarised per loan, before
the loans are summarised per customer). A key may be assembled along the way: the weather of a site and an hour
is looked up on the row's hour and its building's site, after the building table (`_chains`). Side tables split by
period (weather_train.csv and weather_test.csv) are one table, stacked before any join (`_periods`); one
summarised per key is summarised for each split from its own period. Finding the
links needs only the columns that may hold keys: a large side
table is read in chunks keeping those (texts as categories), and its first rows say what else it holds. The expert's analysis joins its frames with `apply`; the input maps'
generated code calls the same `join_keyed` (stages/codegen.py writes its source into the map)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

import pandas as pd

from agentk.competition.files import spelling
from agentk.competition.graph import FULL, MIN_COVER, Edge, Graph, Node, build, key_text, link, measured
from agentk.competition.readers import CSV_SUFFIXES, read_chunks, read_table
from agentk.competition.tables import candidates
from agentk.competition.written import stand_ins
from agentk.workspace import Workspace

# of each numeric column of a table with many rows per key; "moves": the root of the summed squared changes between
# the key's successive rows in the table's order (a price's realised volatility over a window's quotes)
AGGREGATES = ("mean", "min", "max", "std", "moves")
# a text column of a table with many rows per key, of at most this many values (a loan's status, a visit's
# department), is summarised as each value's share of the key's rows: what a Kaggler counts per applicant
SHARE_LEVELS = 12
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
    shares: dict[str, list[str]] = field(default_factory=dict)  # many rows per key: text columns -> values counted
    prefix: str = ""  # names the summary columns (<prefix>_count, <prefix>_<column>_mean...)
    other_keys: list[str] = field(default_factory=list)  # the key's columns in the joined table (default: the same)
    many: bool = False  # many rows per key: summarised, else looked up
    via: list[Join] = field(default_factory=list)  # joined to this table first (the tables hanging from it)
    rename: dict[str, str] = field(default_factory=dict)  # the table's columns as the train side spells them
    # the table's other periods (weather_test.csv beside weather_train.csv), stacked under it before any join: each
    # table's path and its columns as `table` spells them
    parts: dict[str, dict[str, str]] = field(default_factory=dict)
    # the join before this one whose looked-up columns are part of the key (a building's site, beside the row's hour)
    through: Join | None = None

    def __post_init__(self):
        self.other_keys = self.other_keys or list(self.keys)

    def name(self) -> str:
        """The table's file name, its other periods' after a "+"."""
        return " + ".join(Path(t).name for t in [self.table, *self.parts])

    def describe(self) -> str:
        on = " and ".join(k if k == o else f"{k!r} = its {o!r}" for k, o in zip(self.keys, self.other_keys))
        to = " and ".join(self.splits) or "the table it hangs from"
        first = f" (first joined with {', '.join(Path(v.table).name for v in self.via)})" if self.via else ""
        if self.through is not None:
            on += (
                f" ({', '.join(c for c in self.keys if c in self.through.columns)} looked up in {self.through.name()})"
            )
        if self.many:
            shares = f", each value's share of {list(self.shares)}" if self.shares else ""
            return (
                f"{self.name()}{first}: many rows per {on}, summarised per key as a row count and the "
                f"{'/'.join(AGGREGATES)} of {self.aggregate}{shares} and joined to {to}"
            )
        return f"{self.name()}{first}: joined to {to} on {on}, bringing {self.columns}"

    def path(self, src: str = "train") -> str:
        """The lookup's path from the rows (`src`) to the table: train.building_id -> building_metadata.csv ->
        (site_id, timestamp) -> weather_train.csv + weather_test.csv."""
        keys = self.keys[0] if len(self.keys) == 1 else f"({', '.join(self.keys)})"
        if self.through is None:
            return f"{src}.{keys} -> {self.name()}"
        return f"{self.through.path(src)} -> {keys} -> {self.name()}"

    def record(self, src: str = "train") -> dict:
        """What joins.json keeps of the join (the report and features.json read it): the table, how it is joined,
        its path from the rows, the columns it brings, and the same for the tables joined into it first."""
        return {
            "table": self.name(),
            "how": self.describe(),
            "path": self.path(src),
            "columns": self.brought(),
            "via": [v.record(self.name()) for v in self.via],
        }

    def brought(self) -> list[str]:
        """The columns this join adds."""
        if not self.many:
            return list(self.columns)
        return [
            f"{self.prefix}_count",
            *(f"{self.prefix}_{c}_{how}" for c in self.aggregate for how in AGGREGATES),
            *(share_column(self.prefix, c, v) for c, values in self.shares.items() for v in values),
        ]


# written into the generated code beside join_keyed, which calls it (stages/codegen.JOIN_KEYED)
def share_column(prefix, column, value):
    """The column of a value's share of a key's rows: <prefix>_<column>_<value>_share, the value spelt in letters,
    digits and underscores."""
    return f"{prefix}_{column}_{''.join(ch if ch.isalnum() else '_' for ch in value)}_share"


# join_keyed's source goes into the generated maps on its own (stages/codegen.py), so it names the statistics itself:
# keep its list equal to AGGREGATES
def join_keyed(df, other, keys, other_keys, columns, aggregate, prefix, many, shares=None):
    """`df` with `other` joined on df[keys] = other[other_keys] (as key text, several columns joined by "|"): its
    `columns` looked up, or (`many`) its rows summarised per key: their count (0 for a key without rows), the
    mean, min, max, spread and moves (the root of the summed squared changes from row to row, in order) of each
    `aggregate` column, and the share of the key's rows holding each value of `shares` ({column: [values]}). `other`
    is a table or its chunks (an iterable of tables, as read_csv's chunksize reads a large one), which are summarised
    one at a time and the summaries combined (a key's change across two chunks joined by their last and first row)."""

    def key_of(frame, cols):
        text = [key_text(frame[c]) for c in cols]
        return text[0].str.cat(text[1:], sep="|") if len(text) > 1 else text[0]

    chunks = [other] if isinstance(other, pd.DataFrame) else other
    if not many:
        right = pd.concat([c[columns].assign(_key=key_of(c, other_keys)) for c in chunks], ignore_index=True)
        right = right.drop_duplicates("_key")
    else:
        parts = []  # per chunk and key: the rows, and each column's count, mean, squared deviations, min and max
        shares = shares or {}
        for chunk in chunks:
            keyed = chunk.assign(_key=key_of(chunk, other_keys))
            grouped = keyed.groupby("_key")
            part = pd.DataFrame({"rows": grouped.size()})
            flags = {}
            for i, c in enumerate(shares):
                text = keyed[c].astype(str)
                flags |= {f"s{i}_{k}": text == v for k, v in enumerate(shares[c])}
            if flags:  # rows holding each value, per key
                part = part.join(pd.DataFrame(flags).groupby(keyed["_key"]).sum())
            if aggregate:
                values = grouped[aggregate]
                stat = {"n": values.count(), "mean": values.mean(), "min": values.min(), "max": values.max()}
                stat["m2"] = values.var(ddof=0) * stat["n"]
                stat |= {"first": values.first(), "last": values.last()}
                moved = {}  # between a key's successive values present, as chunks bridged by their first and last
                for c in aggregate:
                    present = keyed.loc[keyed[c].notna(), [c, "_key"]]
                    moved[c] = (present.groupby("_key")[c].diff() ** 2).groupby(present["_key"]).sum()
                stat["d2"] = pd.DataFrame(moved)
                for i, c in enumerate(aggregate):  # by position: any column name stays apart from "rows"
                    part = part.assign(**{f"{i}{how}": stat[how][c] for how in stat})
            parts.append(part.assign(_chunk=len(parts)))
        stats = pd.concat(parts).rename_axis("_key").sort_values(["_key", "_chunk"], kind="stable")
        by_key = stats.groupby(level=0)
        right = pd.DataFrame({f"{prefix}_count": by_key["rows"].sum()})
        for i, c in enumerate(aggregate):
            n, part_mean = stats[f"{i}n"], stats[f"{i}mean"].fillna(0)
            total = by_key[f"{i}n"].sum()
            mean = (n * part_mean).groupby(level=0).sum() / total.where(total > 0)
            spread = stats[f"{i}m2"].fillna(0) + n * (part_mean - mean.reindex(stats.index)).fillna(0) ** 2
            std = (spread.groupby(level=0).sum() / (total - 1).where(total > 1)) ** 0.5
            held = stats[stats[f"{i}n"] > 0]  # a key's change across chunks: from the last value to the next
            bridge = (held[f"{i}first"] - held.groupby(level=0)[f"{i}last"].shift(1)) ** 2
            moves = (held[f"{i}d2"].fillna(0) + bridge.fillna(0)).groupby(level=0).sum() ** 0.5
            right[f"{prefix}_{c}_mean"], right[f"{prefix}_{c}_min"] = mean, by_key[f"{i}min"].min()
            right[f"{prefix}_{c}_max"], right[f"{prefix}_{c}_std"] = by_key[f"{i}max"].max(), std
            right[f"{prefix}_{c}_moves"] = moves
        for i, c in enumerate(shares):
            for k, v in enumerate(shares[c]):
                right[share_column(prefix, c, v)] = by_key[f"s{i}_{k}"].sum() / right[f"{prefix}_count"]
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
    common = [c for c in train.columns if c in test.columns]
    train_node, test_node = Node("train", train[common]), Node("test", test[common])  # their key texts made once
    periods = _periods(nodes, train_node, test_node)
    if not nodes:
        return joins
    entities = Node("train", pd.concat([train[common], test[common]], ignore_index=True))
    graph = build(entities, list(nodes.values()))
    tree = graph.tree()
    chains = _chains(nodes, tree, entities, train_node, test_node)
    if chains:  # a table looked up through a chain hangs from no other table (its rows are no one's summary)
        looked_up = {chain.dst for _, chain in chains}
        tree = Graph(graph.nodes, [e for e in graph.edges if looked_up.isdisjoint({e.src, e.dst})]).tree()
    direct = {}
    for edge in (e for e in tree if e.src == "train"):
        other = nodes[edge.dst]
        in_train = link(train_node, other, only=edge)
        in_test = link(test_node, other, only=edge)
        if in_train is None:
            continue
        j, _ = _join(edge, nodes, tree, ["train", "test"] if in_test is not None else ["train"], set(train.columns))
        j.parts = periods.get(edge.dst, {})
        if in_test is not None and j.many and j.parts:  # each split's rows summarise their own period's rows
            [(later, rename)] = j.parts.items()
            joins += [
                replace(j, splits=["train"], parts={}),
                replace(j, table=later, splits=["test"], parts={}, rename=rename),
            ]
        elif in_test is not None and (j.columns or j.many):
            joins.append(j)
            direct[edge.dst] = j
        elif not j.many and j.columns and "labels" not in tables:
            # keyed by train's entities alone: what it adds only train has (targets, or leaks no map may use)
            joins.append(j)
    for parent, chain in chains:
        through = direct.get(parent.dst)
        if through is None or not set(chain.cols) & set(through.columns):
            continue
        j, _ = _join(chain, nodes, tree, ["train", "test"], set(train.columns) | set(through.columns))
        j.parts, j.through = periods.get(chain.dst, {}), through
        if j.columns:
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
            other = join_keyed(other, frame, v.keys, v.other_keys, v.columns, v.aggregate, v.prefix, v.many, v.shares)
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
    shares = {}
    for c in other.columns:
        if c in theirs or pd.api.types.is_numeric_dtype(other[c]) or pd.api.types.is_bool_dtype(other[c]):
            continue
        counts = other[c].dropna().astype(str).value_counts()
        if 2 <= len(counts) <= SHARE_LEVELS:
            shares[str(c)] = sorted(counts.index)
    return Join(
        edge.dst, keys, splits, aggregate=numeric, shares=shares, prefix=prefix, other_keys=theirs, many=True, via=via
    ), other


def _chains(
    nodes: dict[str, Node], tree: list[Edge], entities: Node, train: Node, test: Node
) -> list[tuple[Edge, Edge]]:
    """Tables looked up on a key assembled along the way: part of it the rows' own columns, part a table's looked
    up by the rows first (the weather of a site and an hour: the hour is the row's, the site its building's). For
    each table the rows look up (the parent: one row per key), the rows with its columns find, by their values, a
    key over several columns naming the rows of a table they would otherwise only summarise, not reach, or look up
    on a key matching less truly (its score): that key mixes the rows' and the parent's columns, and both train's
    and test's rows find their values there.
    Returned as (the parent's edge, the edge from the rows with the parent's columns to the table)."""
    lookups = {e.dst: e.score for e in tree if not e.many}  # tables looked up already, and how truly
    found, taken = [], set()
    for parent in (e for e in tree if e.src == "train" and not e.many):
        cols = [c for c in nodes[parent.dst].key_columns() if c not in parent.dst_cols and c not in entities.frame]
        if not cols:
            continue
        rows, in_train, in_test = _with_lookup(entities, nodes[parent.dst], parent, cols), None, None
        for name in (n for n in nodes if n != parent.dst and n not in taken):
            edge = link(rows, nodes[name])
            if edge is None or edge.many or set(edge.cols).isdisjoint(cols) or set(edge.cols) <= set(cols):
                continue
            if edge.score <= lookups.get(name, 0):  # a meter number 0-3 matches a site number only seemingly
                continue
            in_train = in_train or _with_lookup(train, nodes[parent.dst], parent, cols)
            in_test = in_test or _with_lookup(test, nodes[parent.dst], parent, cols)
            if link(in_train, nodes[name], only=edge) is not None and link(in_test, nodes[name], only=edge) is not None:
                found.append((parent, edge))
                taken.add(name)
    return found


def _with_lookup(rows: Node, parent: Node, edge: Edge, cols: list[str]) -> Node:
    """The rows' key columns (FULL rows at most: the links are judged on distinct values) with the parent's `cols`
    looked up along `edge`."""
    frame = rows.frame[rows.key_columns()]
    frame = frame.sample(FULL, random_state=0) if len(frame) > FULL else frame
    frame = join_keyed(frame, parent.frame, list(edge.cols), list(edge.dst_cols), cols, [], "", False)
    return Node(rows.name, frame)


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
        mine, pairs = nodes[a].schema, _same_columns(nodes[a], nodes[b])
        if pairs is None:
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


def _same_columns(a: Node, b: Node) -> dict[str, str] | None:
    """Each of a's columns and b's of its name, where the two tables have the same columns (up to case and
    punctuation, at least two), else None."""
    mine, theirs = a.schema, b.schema
    spelled = {spelling(c): c for c in theirs.columns}
    pairs = {c: spelled[spelling(c)] for c in mine.columns if spelling(c) in spelled}
    if len(pairs) < 2 or len(pairs) != len(mine.columns) or len(pairs) != len(theirs.columns):
        return None
    return pairs


PERIOD_OVERLAP = 0.1  # of the smaller period's values of the column they are split by that the other may hold too


def _periods(nodes: dict[str, Node], train: Node, test: Node) -> dict[str, dict[str, dict]]:
    """Side tables split by period (weather_train.csv and weather_test.csv, or the 2016 and the 2017 readings),
    made one table in `nodes`: two tables of the same columns (up to spelling) and a column (an hour, a date) whose
    values the two hardly share (PERIOD_OVERLAP), where most (MIN_COVER) of train's values of one of train and
    test's common columns are in the first table and most of test's in the second. Two tables of a customer's
    older and newer transactions both hold train's and test's customers: they stay two. The union takes the train
    side's name and spelling (a large table's key columns those both kept); returned as {its name: {the other
    table: its renaming}} (Join.parts). `train` and `test`: their common columns."""
    periods = {}
    for a, b in [(a, b) for a in list(nodes) for b in list(nodes) if a != b]:
        if a not in nodes or b not in nodes or a in periods or b in periods:
            continue
        pairs = _same_columns(nodes[a], nodes[b])
        if pairs is not None and _split_by_period(nodes[a], nodes[b], pairs, train, test):
            rename = {pairs[c]: c for c in pairs if pairs[c] != c}
            first, second = nodes[a], nodes.pop(b)
            both = [c for c in first.frame.columns if pairs[c] in second.frame]
            frame = {c: _stacked([first.frame[c], second.frame[pairs[c]].rename(c)]) for c in both}
            nodes[a] = Node(a, pd.DataFrame(frame), head=first.head)
            periods[a] = {b: rename}
    return periods


def _split_by_period(a: Node, b: Node, pairs: dict[str, str], train: Node, test: Node) -> bool:
    """a holds train's values of some column and b test's, by a column whose values the two hardly share."""
    for col in a.key_columns():
        other = pairs[col]
        if other not in b.frame or other not in b.key_columns():
            continue
        mine, theirs = a.values(col), b.values(other)
        if len(mine & theirs) > PERIOD_OVERLAP * min(len(mine), len(theirs)):
            continue
        for c in train.key_columns():
            if c in test.frame and train.found(c, a, col) >= MIN_COVER and test.found(c, b, other) >= MIN_COVER:
                return True
    return False


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
        if shared >= 2 and shared / len(columns) > VERSION_SHARE or _describes(node.schema, train):
            continue
        nodes[node.name] = node
    return nodes


DESCRIBED = 0.5  # of train's columns that a column of a data dictionary names as its values


def _describes(table: pd.DataFrame, train: pd.DataFrame) -> bool:
    """A data dictionary, not data: one of its text columns names most (DESCRIBED) of train's columns, row by row
    (a column of a table's column names beside their descriptions). Joined, its row numbers were looked up by a
    count of overdue days."""
    names = {spelling(str(c)) for c in train.columns}
    for c in table.columns:
        if table[c].dtype == object and len(names) >= 3:
            named = {spelling(str(v)) for v in table[c].dropna().unique()} & names
            if len(named) >= DESCRIBED * len(names):
                return True
    return False


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
    """The joined table (its periods stacked), first joined with the tables hanging from it; a summarised table with
    none hanging from it in chunks of CHUNK_ROWS (join_keyed summarises them one at a time)."""
    tables = {j.table: j.rename, **j.parts}
    if j.many and not j.via:
        return (c.rename(columns=r) for t, r in tables.items() for c in read_chunks(Path(ws) / t, CHUNK_ROWS))
    other = pd.concat([read_table(Path(ws) / t).rename(columns=r) for t, r in tables.items()], ignore_index=True)
    for v in j.via:
        other = join_keyed(
            other, widened(ws, v), v.keys, v.other_keys, v.columns, v.aggregate, v.prefix, v.many, v.shares
        )
    return other


def apply(ws: Path, joins: list[Join], df: pd.DataFrame, split: str) -> pd.DataFrame:
    """`df` (a split's table) with the joined tables' columns."""
    for j in (j for j in joins if split in j.splits):
        df = join_keyed(df, widened(ws, j), j.keys, j.other_keys, j.columns, j.aggregate, j.prefix, j.many, j.shares)
    return df


def recorded(ws: Path) -> list[dict]:
    """The joins the train map's expert recorded in joins.json (Join.record); [] when there is none."""

    try:
        return json.loads(Workspace(ws).joins.read_text())
    except (OSError, ValueError):
        return []
