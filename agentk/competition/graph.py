"""The competition as a data graph. Its nodes are the tables; its edges are key links found from the values, never
the names: a column (or a pair of columns) of one table whose values are mostly found in a column (or pair) of
another, with the link's cardinality (the other table has one row per key, or many) and its coverage both ways.

The train and test tables are the entities to predict and learn from. Every other table hangs from them by its best
link, directly or through a chain of tables (a store's region, a customer's loans and each loan's payments):
`tree()` grows the tree greedily, best-covered link first, so that a table joins the table whose keys it shares
most completely. A table of events numbered 1..5000 links to train's ids 1..1000 too (all of train's ids are event
numbers), but only a fifth of its values are train's ids, and all are its parent table's: coverage both ways tells
them apart.

To add an edge kind: a function like `_single` or `_composite` returning an `Edge` (or None), tried in `link`."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import pandas as pd

MIN_COVER = 0.5  # share of a table's key values the other table must hold to be linked on that key
LOOKUP_VALUES = 50  # a non-distinct column refers to a lookup table's rows when it has at least this many values
PAIR_COLUMNS = 12  # columns of a table tried as parts of a key over several columns
MAX_KEY = 5  # columns in such a key at most (an airport, a year, a month, a day and an hour)
DUPLICATES = 0.01  # of a table's rows that may repeat a key over several columns that names its rows
COVER_SLACK = 0.1  # a key naming b's rows outranks one shared column naming neither's, unless it covers this much less
MAX_DEPTH = 3  # tables joined through at most this many links from the entities
SAMPLE = 20_000  # distinct values of a column looked up in the other's (all of which are kept, up to FULL)
FULL = 2_000_000  # distinct values of a column kept for the lookups
QUICK = 256  # distinct values looked up first, to stop early on a pair far from linking
CACHED_TUPLES = 200_000  # distinct value tuples of a node's columns kept for the links tried next
MAX_STARTS = 4  # one-column matches a key naming a's rows (of which b holds many rows each) is grown from


def key_text(values: pd.Series) -> pd.Series:
    """A key's values as text, as both sides of a join compare them: "12.0" read as a float is "12", and a number's
    zero padding goes ("00012" read as text on one side is 12 read as a number on the other)."""
    if values.dtype.kind in "iu":  # whole numbers: their text is already the key's (the fast way for large keys)
        return values.astype(str)
    text = values.astype(str).str.strip()
    text = text.str.replace(r"^(-?\d+)\.0$", r"\1", regex=True) if values.dtype.kind == "f" else text
    return text.str.replace(r"^0+(?=\d+$)", "", regex=True)


def measured(values: pd.Series) -> bool:
    """Numbers with decimals: measurements, not keys."""
    return values.dtype.kind == "f" and bool((values.dropna() != values.dropna().round()).any())


@dataclass
class Node:
    name: str  # "train", "test", or the table's workspace-relative path
    frame: pd.DataFrame = field(repr=False)  # every row; of a large table only the columns that may hold keys
    head: pd.DataFrame | None = field(default=None, repr=False)  # a large table's first rows, every column
    _values: dict[str, frozenset] = field(default_factory=dict, repr=False)
    _samples: dict[str, list] = field(default_factory=dict, repr=False)
    _distinct: dict[tuple, bool] = field(default_factory=dict, repr=False)
    _keys: list[str] | None = field(default=None, repr=False)
    _tuples: dict[tuple, set] = field(default_factory=dict, repr=False)

    @property
    def schema(self) -> pd.DataFrame:
        """Rows with every column: what the table holds and of which types (the frame itself, but for a large
        table read lean)."""
        return self.frame if self.head is None else self.head

    def key_columns(self) -> list[str]:
        """Columns that may hold keys: not measurements, more than one value."""
        if self._keys is None:
            self._keys = [c for c in self.frame.columns if not measured(self.frame[c]) and self.frame[c].nunique() > 1]
        return self._keys

    def values(self, column: str) -> frozenset:
        """The column's distinct values as key text (the first FULL of them)."""
        if column not in self._values:
            text = key_text(self.frame[column].dropna().drop_duplicates().head(FULL))
            self._values[column] = frozenset(text)
            self._samples[column] = text.iloc[:: max(1, len(text) // SAMPLE)].head(SAMPLE).tolist()
        return self._values[column]

    def sample(self, column: str) -> list:
        """Up to SAMPLE of the column's distinct values, spread over the table: what is looked up in another."""
        self.values(column)
        return self._samples[column]

    def found(self, column: str, other: Node, other_column: str) -> float:
        """The share of this column's (sampled) distinct values that the other column holds. A few hundred of them
        are looked up first: a pair far from linking stops there (most pairs of a many-table competition)."""
        sample, theirs = self.sample(column), other.values(other_column)
        if not sample:
            return 0.0
        first = sample[:: max(1, len(sample) // QUICK)]
        share = sum(v in theirs for v in first) / len(first)
        if share < MIN_COVER / 2 or len(first) == len(sample):
            return share
        return sum(v in theirs for v in sample) / len(sample)

    def tuples(self, columns: tuple[str, ...]) -> set:
        """The distinct value tuples (as key text) of the columns, the first FULL rows' worth; kept for the next
        link tried where they are few (CACHED_TUPLES: a key grown from several starts asks for the same ones again)."""
        if columns in self._tuples:
            return self._tuples[columns]
        rows = self.frame[list(columns)].dropna().drop_duplicates().head(FULL)
        found = set(zip(*(key_text(rows[c]) for c in columns)))
        if len(found) <= CACHED_TUPLES:
            self._tuples[columns] = found
        return found

    def nearly_distinct(self, columns: tuple[str, ...]) -> bool:
        """The columns' values name one row each but for a few repeats (DUPLICATES of the rows at most: a weather
        table repeats an hour when the clocks go back)."""
        present = self.frame[list(columns)].dropna()
        return len(present) > 0 and present.duplicated().mean() <= DUPLICATES

    def distinct(self, columns: tuple[str, ...]) -> bool:
        """The columns' values (together) name one row each."""
        if columns not in self._distinct:
            present = self.frame[list(columns)].dropna()
            self._distinct[columns] = len(present) > 0 and not present.duplicated().any()
        return self._distinct[columns]


@dataclass(frozen=True)
class Edge:
    src: str  # the node whose rows look up the other's
    cols: tuple[str, ...]  # its key columns
    dst: str
    dst_cols: tuple[str, ...]  # the key's columns in dst
    cover: float  # share of src's key values found in dst
    back: float  # share of dst's key values found in src
    many: bool  # dst has many rows per key (summarised per key), else one (looked up)

    @property
    def score(self) -> float:
        return round((self.cover + self.back) / 2, 3)

    def describe(self) -> str:
        how = "many rows" if self.many else "one row"
        return (
            f"{self.src}{list(self.cols)} -> {self.dst}{list(self.dst_cols)}: {how} per key, "
            f"{self.cover:.0%} of its keys found there, {self.back:.0%} of theirs found here"
        )


def _single(a: Node, b: Node, only: tuple | None = None) -> Edge | None:
    """The best one-column link from a to b. a's column is an entity's key (its values distinct: b holds many rows
    per key, or one), or refers to b's rows (b's column distinct) and has many values or b's column's name: a column
    of small counts is found in any numbered table. The pair covered best both ways wins (the buyer column of orders,
    not the order numbers that merely include the user numbers), then the one covering most of a's keys, then a's
    leftmost column (ids come first), then a pair sharing its name. Before all, a link naming rows on either side
    or of many values: a category of few values both tables hold (a weekday) links only where nothing else does
    (previous applications summarised per weekday outranked those per applicant, which 88 % of applicants have)."""
    found = []
    for i, c in enumerate(a.key_columns()):
        if only and c != only[0][0]:
            continue
        many_values = len(a.values(c)) >= LOOKUP_VALUES
        is_key = a.distinct((c,))
        for d in b.key_columns():
            if only and d != only[1][0]:
                continue
            unique = b.distinct((d,))
            if not (is_key or c == d or (many_values and unique)):
                continue
            cover = a.found(c, b, d)
            if cover >= MIN_COVER:
                edge = Edge(a.name, (c,), b.name, (d,), cover, b.found(d, a, c), not unique)
                shared = not (is_key or unique or many_values)  # a category both hold, naming no one's rows
                found.append((shared, -round(edge.score, 2), -round(cover, 2), i, c != d, edge))
    return min(found, key=lambda f: f[:5])[5] if found else None


def _composite(a: Node, b: Node, only: tuple | None = None) -> Edge | None:
    """A key spread over several columns (an airport and an hour; an airport, a day and an hour): b's rows are
    distinct (but for DUPLICATES) by a few of its columns though by none alone, and a's rows mostly find their
    values of the matching columns there (b is looked up). Found greedily: b's columns are added one at a time,
    each with the column of a whose values it holds, taking the one whose key so far matches best (its score: the
    share of a's value tuples found in b and of b's found in a), of those the one that leaves the fewest rows of b
    per key, until the key names b's rows or holds MAX_KEY columns. The score keeps a column of two values (a
    target: 0 and 1, both wind directions) out of a key it only seems to match. `only`: those columns."""
    if only is not None:
        (cols, dst_cols) = only
        return _edge(a, b, tuple(cols), tuple(dst_cols))
    b_cols = b.key_columns()[:PAIR_COLUMNS]
    a_cols = a.key_columns()
    matches = {d: [c for c in a_cols if a.found(c, b, d) >= MIN_COVER] for d in b_cols}  # cheap: checked first
    b_cols = [d for d in b_cols if matches[d] and not b.distinct((d,))]
    if len(b_cols) < 2:
        return None
    mine, theirs = (), ()
    while len(theirs) < MAX_KEY:
        steps = []
        for d in b_cols:
            if d in theirs:
                continue
            keys = len(b.frame[[*theirs, d]].dropna().drop_duplicates())  # b's keys: whichever of a's columns
            for c in matches[d]:
                if c not in mine and (edge := _edge(a, b, (*mine, c), (*theirs, d))) is not None:
                    steps.append((keys, edge.score, edge))
        if not steps:
            return None
        _, _, edge = max(steps, key=lambda t: (t[1], t[0]))  # the truest match first, then the most specific
        mine, theirs = edge.cols, edge.dst_cols
        if len(theirs) >= 2 and b.nearly_distinct(theirs):
            order = sorted(range(len(theirs)), key=lambda i: list(b.frame.columns).index(theirs[i]))  # b's order
            return replace(edge, cols=tuple(mine[i] for i in order), dst_cols=tuple(theirs[i] for i in order))
    return None


def _composite_many(a: Node, b: Node) -> Edge | None:
    """A key over several columns naming a's rows, of which b holds many rows each (an order book's quotes per
    stock and time window, one train row per window; summarised by the stock alone, each window's quotes were every
    window's). Grown greedily from each of the best few one-column matches (those a and b both repeat, or named
    otherwise), by the pair of columns whose key so far matches best both ways (its score; then a pair sharing its
    name), until the key names a's rows (but for DUPLICATES), MAX_KEY columns at most. Every step must match b's
    rows both ways (MIN_COVER of b's value tuples are a's too): a's small counts are found among any of b's
    numbers, but b's tuples of them are not a's. The best key grown (its score) wins."""
    a_cols = a.key_columns()
    matches = {d: [c for c in a_cols if a.found(c, b, d) >= MIN_COVER] for d in b.key_columns()[:PAIR_COLUMNS]}

    def step(mine: tuple, theirs: tuple) -> list[tuple[float, bool, Edge]]:
        return [
            (e.score, c == d, e)
            for d, cs in matches.items()
            if d not in theirs
            for c in cs
            if c not in mine and (e := _edge(a, b, (*mine, c), (*theirs, d))) is not None and e.back >= MIN_COVER
        ]

    grown = []
    for *_, edge in sorted(step((), ()), key=lambda t: t[:2], reverse=True)[:MAX_STARTS]:
        while (
            not a.nearly_distinct(edge.cols) and len(edge.cols) < MAX_KEY and (steps := step(edge.cols, edge.dst_cols))
        ):
            edge = max(steps, key=lambda t: t[:2])[2]
        if len(edge.cols) >= 2 and a.nearly_distinct(edge.cols) and not b.nearly_distinct(edge.dst_cols):
            grown.append(replace(edge, many=True))
    return max(grown, key=lambda e: e.score, default=None)


def _edge(a: Node, b: Node, cols: tuple[str, ...], dst_cols: tuple[str, ...]) -> Edge | None:
    """The edge from a's columns to b's, when at least MIN_COVER of a's value tuples are b's: one row per key (a
    caller that finds b repeating the key marks it many)."""
    mine, theirs = a.tuples(cols), b.tuples(dst_cols)
    if not mine or not theirs:
        return None
    common = len(mine & theirs)
    edge = Edge(a.name, cols, b.name, dst_cols, common / len(mine), common / len(theirs), False)
    return edge if edge.cover >= MIN_COVER else None


def link(a: Node, b: Node, only: Edge | None = None) -> Edge | None:
    """The best key link from a to b: one column, else a key over several columns. A composite key that names b's
    rows outranks one column that neither names a's nor b's (flights and weather both have an hour column: the
    airport and the hour name a weather row). `only`: the link on that edge's columns, or none."""
    if only is not None:
        keys = (only.cols, only.dst_cols)
        if len(only.cols) == 1:
            return _single(a, b, keys)
        edge = _composite(a, b, keys)
        return None if edge is None else replace(edge, many=only.many)
    single = _single(a, b)
    if single is not None and not (single.many and not a.distinct(single.cols)):
        return single
    composite = _composite(a, b)
    if composite is None and (many := _composite_many(a, b)) is not None:
        return many if single is None or many.cover >= single.cover - COVER_SLACK else single
    if composite is None or (single is not None and composite.cover < single.cover - COVER_SLACK):
        return single
    return composite


@dataclass
class Graph:
    nodes: dict[str, Node]
    edges: list[Edge]  # every link found between the nodes (from the entities and between the other tables)

    def tree(self, root: str = "train") -> list[Edge]:
        """The links that attach each reachable table, in the order they were chosen: at each step the best scored
        link from an attached table to one not yet attached, at most MAX_DEPTH links from the root."""
        depth, chosen = {root: 0}, []
        while True:
            options = [e for e in self.edges if e.src in depth and e.dst not in depth and depth[e.src] < MAX_DEPTH]
            if not options:
                return chosen
            best = max(options, key=lambda e: (e.score, -depth[e.src]))
            depth[best.dst] = depth[best.src] + 1
            chosen.append(best)


def build(entities: Node, tables: list[Node]) -> Graph:
    """The graph of the entities (train) and the other tables: every link from the entities to a table, and from
    each table to every other."""
    nodes = {entities.name: entities, **{t.name: t for t in tables}}
    edges = []
    for a in [entities, *tables]:
        for b in tables:
            if a is not b and (edge := link(a, b)) is not None:
                edges.append(edge)
    return Graph(nodes, edges)
