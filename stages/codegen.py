"""Small helpers the stages share: readable generated code for the expert, the checks every input map
passes, and reading a JSON answer of the LLM."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from inspect import getsource
from pathlib import PurePath

from agentk.competition.file_inputs import NAME_LABEL, SUFFIX_LABEL
from agentk.competition.graph import key_text
from agentk.competition.joins import CHUNK_ROWS, join_keyed, share_column
from agentk.core.checks import Check
from agentk.core.engine import HOLE
from agentk.modalities import MODALITIES, PATHS_SEP
from unit_tests_lib.maps import check_id_map, check_rows_match_source


def read_expr(path: str, *text_cols: str | None, chunksize: int | None = None) -> str:
    """The pandas call that reads a raw table, its id and file-name columns kept as text (leading zeros survive); a
    CSV or TSV file in chunks of `chunksize` rows where given."""
    name = PurePath(path).name.lower()
    kept = list(dict.fromkeys(c for c in text_cols if c))
    dtype = f", dtype={{{', '.join(f'{c!r}: str' for c in kept)}}}" if kept else ""
    dtype += f", chunksize={chunksize}" if chunksize else ""
    if name.endswith((".tsv", ".tsv.gz")):
        return f"pd.read_csv({path!r}, sep='\\t'{dtype})"
    if name.endswith((".csv", ".csv.gz")):
        return f"pd.read_csv({path!r}{dtype})"
    if name.endswith(".jsonl"):
        return f"nested_as_text(pd.read_json({path!r}, lines=True, dtype=False))"
    if name.endswith(".json"):  # a table keyed by column then row: its row keys are no row numbers, nor ids
        return f"nested_as_text(pd.read_json({path!r}, dtype=False).reset_index(drop=True))"
    if name.endswith(".feather"):
        return f"nested_as_text(pd.read_feather({path!r}))"
    return f"nested_as_text(pd.read_parquet({path!r}))"


def map_template(output: str, doc: str, preview: str = "table.head().to_string()") -> str:
    """The template of a map stage: build_map() returns the table, running the file writes it."""
    return f'''"""Builds {output}: {doc}"""
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd


def nested_as_text(df: pd.DataFrame) -> pd.DataFrame:
    """Cells holding lists or records (JSON, parquet) as text: a list's items joined by spaces, a record as JSON."""
    for c in df.select_dtypes(include="object").columns:
        df[c] = df[c].map(
            lambda v: " ".join(map(str, v)) if isinstance(v, (list, tuple, np.ndarray))
            else json.dumps(v, sort_keys=True, default=str) if isinstance(v, dict) else v
        )
    return df


def build_map() -> pd.DataFrame:
    {HOLE}


if __name__ == "__main__":
    table = build_map()
    table.to_csv("{output}", index=False)
    print(table.shape)
    print({preview})
'''


def table_rows(a, split: str, file_col: str | None = None) -> list[str]:
    """Lines that read a split's table into `df` and its sample ids into `ids` (train: labelled rows only,
    the same rows in every train map); `file_col`, a column naming each sample's file, is read as text too."""
    source, id_col = (a.train, a.train_id) if split == "train" else (a.test, a.test_id)
    if source is None:  # no test table: the sample submission lists the test samples
        joined = [line for j in a.joins if split in j.splits for line in join_lines(j)]
        helper = JOIN_KEYED if joined else []
        return [
            f"df = {read_expr(a.sample, a.id_col, file_col)}",
            *helper,
            *joined,
            f"ids = df[{a.id_col!r}].astype(str)",
        ]
    renamed = a.test_renamed if split == "test" else {}
    as_read = {v: k for k, v in renamed.items()}  # the file's own names of the columns read as text
    lines = [f"df = {read_expr(source, as_read.get(id_col, id_col), as_read.get(file_col, file_col))}"]
    if renamed:
        lines.append(f"df = df.rename(columns={renamed!r})  # the test's columns as train spells them")
    joined = [line for j in a.joins if split in j.splits for line in join_lines(j)]
    lines += [*JOIN_KEYED, *joined] if joined else []
    if id_col:
        lines.append(f"ids = df[{id_col!r}].astype(str)")
        if split == "test" and a.test_id_respelled:  # 17 in the test table is 00017 in the sample
            lines += [
                *([] if joined else KEY_TEXT),
                f"sample_ids = {read_expr(a.sample, a.id_col)}[{a.id_col!r}].astype(str)",
                "ids = key_text(ids).map(dict(zip(key_text(sample_ids), sample_ids))).fillna(ids)",
            ]
    elif split == "test" and a.id_col is None:  # the sample has no id: its rows are the test rows in order
        lines.append("ids = pd.Series([str(i) for i in range(len(df))])")
    elif split == "test":  # the test table has no id column: the sample submission lists the ids in order
        lines.append(f"ids = {read_expr(a.sample, a.id_col)}[{a.id_col!r}].astype(str)")
    else:
        lines.append('ids = pd.Series([f"row{i}" for i in range(len(df))])')
    if split == "train":
        label_cols = [c for t in a.targets for c in (t.columns if t.onehot else [t.source])]
        lines.append(f"keep = df[{label_cols!r}].notna().all(axis=1).to_numpy()  # rows without a target teach nothing")
        lines.append("df, ids = df[keep].reset_index(drop=True), ids[keep].reset_index(drop=True)")
    return lines


# agentk.competition.graph.key_text and agentk.competition.joins.join_keyed (with share_column, which it calls),
# written into the generated code as they are: the map joins its tables exactly as the analysis did
KEY_TEXT = getsource(key_text).splitlines()
JOIN_KEYED = [*KEY_TEXT, "", "", *getsource(share_column).splitlines(), "", "", *getsource(join_keyed).splitlines()]


def join_lines(j, into: str = "df", depth: int = 0) -> list[str]:
    """Lines that join a keyed table (agentk.competition.joins.Join) to `into`, after the tables hanging from it;
    `join_keyed` must be defined above them (JOIN_KEYED)."""
    other = f"other{depth or ''}"
    chunked = CHUNK_ROWS if j.many and not j.via else None  # summarised a chunk at a time, as joins.widened reads it
    lines = [f"# {j.describe()}"]
    # the table's periods stacked, chunk after chunk where summarised, each as the train side spells it
    if j.parts or (chunked and j.rename):
        tables = ", ".join(
            f"({read_expr(t, chunksize=chunked)}, {r!r})" for t, r in {j.table: j.rename, **j.parts}.items()
        )
        stacked = (
            "(c.rename(columns=r) for t, r in [{}] for c in t)"
            if chunked
            else "pd.concat([t.rename(columns=r) for t, r in [{}]], ignore_index=True)"
        )
        lines.append(f"{other} = {stacked.format(tables)}")
    else:
        lines.append(f"{other} = {read_expr(j.table, chunksize=chunked)}")
        if j.rename:  # spelled otherwise than the train side's table
            lines.append(f"{other} = {other}.rename(columns={j.rename!r})")
    for v in j.via:
        lines += join_lines(v, other, depth + 1)
    args = f"{j.keys!r}, {j.other_keys!r}, {j.columns!r}, {j.aggregate!r}, {j.prefix!r}, many={j.many}"
    args += f", shares={j.shares!r}" if j.shares else ""
    return [*lines, f"{into} = join_keyed({into}, {other}, {args})"]


def listing_rows(src, labels: bool = False) -> list[str]:
    """Lines that list a folder's files into `paths` and `ids` (path under the folder), and `labels`."""

    lines = [
        f"folder = Path({src.folder!r})",
        f"files = sorted(p for p in folder.rglob('*') if p.suffix.lower() in {MODALITIES[src.modality].extensions!r})",
        "paths = pd.Series([p.as_posix() for p in files])",
        "ids = pd.Series([p.relative_to(folder).as_posix() for p in files])",
    ]
    if labels and src.label == "folder":
        lines.append("labels = [p.parent.name for p in files]  # one sub-folder per class")
    elif labels and src.label == "suffix":
        lines.append(
            f"labels = [re.fullmatch({SUFFIX_LABEL.pattern!r}, p.name).group(2) for p in files]  # x_TRAIN7_1.aif -> 1"
        )
    elif labels:
        lines.append(
            f"labels = [re.fullmatch({NAME_LABEL.pattern!r}, p.stem).group(1) for p in files]  # cat.123.jpg -> cat"
        )
    return lines


def file_paths(src) -> str:
    """The expression giving each row's file path from a table column."""
    if src.by_name:  # the files sit in sub-folders: look each one up by its name or stem
        exts = MODALITIES[src.modality].extensions
        index = (
            f"{{k: p.as_posix() for p in Path({src.folder!r}).rglob('*') if p.suffix.lower() in {exts!r} "
            "for k in (p.name, p.stem)}"
        )
        return f"df[{src.column!r}].astype(str).map({index})"
    return f" + {PATHS_SEP!r} + ".join(view_paths(src))


def view_paths(src) -> list[str]:
    """Per file of a sample (one, or its views), the expression giving each row's path from a table column; the
    image map joins a sample's paths by PATHS_SEP in one cell, the text map reads each into a column."""
    value = f"df[{src.column!r}].astype(str).str.replace('\\\\', '/')"
    return [f"{src.folder + '/' + p!r} + {value}" + (f" + {s!r}" if s else "") for p, s in src.affixes]


def map_checks(output: str, split: str, *own: Callable[..., None]) -> list[Check]:
    """The checks of a split's input map: ids, rows matching the source table or listing, then the modality's own."""
    return [
        Check(check_id_map, {"name": output}, split),
        Check(check_rows_match_source, {"name": output, "role": split}, split),
        *(Check(fn, {"name": output}, split) for fn in own),
    ]


def parse_json_object(answer: str) -> dict:
    """The first JSON object in an answer, fenced blocks first; ValueError when there is none."""
    blocks = re.findall(r"```[^\n]*\n(.*?)```", answer, re.S) + [answer]
    for text in blocks:
        m = re.search(r"\{.*\}", text, re.S)
        if m:
            try:
                return json.loads(m.group(0))
            except json.JSONDecodeError:
                continue
    raise ValueError("no JSON object found in the answer")
