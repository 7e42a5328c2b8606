"""A JSON document as a table, whatever its orientation: records, columns, index (rows keyed by an id), split,
pandas' table schema, a list of rows, a mapping of keys to values, JSON lines, or any of these nested under a
key of a larger document. `pd.read_json` reads only the first two the way they are meant."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pandas as pd

DEPTH = 4  # how far under keys a table may be nested ({"data": {"rows": [...]}})
MAX_NESTING = 100  # lists and records nested deeper than this are no table, whichever Python parses them
# orientations of a .json file whose table pd.read_json(path) reads too: generated code may read those as they are
AS_PANDAS_READS = {"records", "columns"}


def read_json_table(path: Path) -> tuple[pd.DataFrame, str]:
    """The table in a JSON (or JSON lines) file and the orientation it was found in. ValueError: no table."""
    text = Path(path).read_text(encoding="utf-8-sig", errors="replace")
    if re.match(
        r"\s*\[\s*\{", text
    ):  # records: read as pandas reads them (its dates; each value its JSON type: "007" stays text), as generated code does
        try:
            return pd.read_json(io.StringIO(text), dtype=False), "records"
        except ValueError:
            pass  # JSON lines starting with a list of records, or broken: parsed below
    try:
        data = json.loads(text)
        if _nested_deeper(data, MAX_NESTING):  # Python 3.13's parser reads what 3.11's refused (RecursionError)
            raise RecursionError
    except RecursionError:
        raise ValueError("nested too deep to be a table") from None
    except json.JSONDecodeError:  # JSON lines, under either name
        try:
            rows = [json.loads(line) for line in text.splitlines() if line.strip()]
        except (json.JSONDecodeError, RecursionError) as exc:
            raise ValueError(f"neither JSON nor JSON lines ({exc})") from None
        return orient(rows)[0], "lines"
    frame, how = orient(data)
    return (pd.read_json(io.StringIO(text), dtype=False), how) if how in AS_PANDAS_READS else (frame, how)


def _nested_deeper(data, limit: int) -> bool:
    """Whether lists and records nest more than `limit` levels deep (walked without recursion)."""
    stack = [(data, 0)] if isinstance(data, list | dict) else []
    while stack:
        value, depth = stack.pop()
        if depth > limit:
            return True
        children = value.values() if isinstance(value, dict) else value
        stack.extend((c, depth + 1) for c in children if isinstance(c, list | dict))
    return False


def orient(data, depth: int = 0) -> tuple[pd.DataFrame, str]:
    """(the table `data` holds, its orientation)."""
    if isinstance(data, list):
        return _rows(data)
    if not isinstance(data, dict) or not data:
        raise ValueError("a JSON scalar or an empty document is not a table")
    if {"schema", "data"} <= set(data) and isinstance(data["data"], list):  # orient="table"
        frame = _rows(data["data"])[0]
        keys = (data.get("schema") or {}).get("primaryKey") or []
        return frame.drop(columns=[k for k in keys if k == "index" and k in frame.columns]), "table"
    if {"columns", "data"} <= set(data) and isinstance(data["data"], list):  # orient="split"
        return pd.DataFrame(data["data"], columns=data["columns"]), "split"
    values = list(data.values())
    if all(isinstance(v, dict) for v in values):
        inner = {k for v in values for k in v}
        # many outer keys over a few shared fields, or as many but each mixing text and numbers: rows keyed by an id
        if len(data) > len(inner) or (len(data) == len(inner) and any(_mixed(v) for v in values)):
            frame = pd.DataFrame.from_dict(data, orient="index")
            return _keyed(frame, list(data)), "index"
        return pd.DataFrame(data), "columns"
    if all(isinstance(v, list) for v in values) and len({len(v) for v in values}) == 1 and len(data) > 1:
        return pd.DataFrame(data), "columns"
    nested = [v for v in values if isinstance(v, list | dict) and v]
    if nested and depth < DEPTH:  # a table under a key, metadata beside it: {"version": 2, "data": [...]}
        return orient(max(nested, key=len), depth + 1)[0], "nested"
    if all(_scalar(v) for v in values):  # {"img_1": "cat", ...}: a key's value
        return pd.DataFrame({"key": list(data), "value": values}), "mapping"
    raise ValueError("no table in this JSON document")


def _rows(data: list) -> tuple[pd.DataFrame, str]:
    if not data:
        raise ValueError("an empty list is not a table")
    if all(isinstance(r, dict) for r in data):
        return pd.DataFrame.from_records(data), "records"
    if all(isinstance(r, list) for r in data):
        head = data[0]
        if len(data) > 1 and all(isinstance(h, str) for h in head) and not all(isinstance(h, str) for h in data[1]):
            return pd.DataFrame(data[1:], columns=head), "values"  # a header row, then values
        return pd.DataFrame(data), "values"
    return pd.DataFrame({"value": data}), "values"


def _keyed(frame: pd.DataFrame, keys: list) -> pd.DataFrame:
    """Rows keyed by an id: the keys as a first column, unless a field already holds them."""
    text = [str(k) for k in keys]
    numbered = text == [str(i) for i in range(len(text))]  # pandas' orient="index": the keys are row numbers
    if numbered or any(frame[c].astype(str).tolist() == text for c in frame.columns):
        return frame.reset_index(drop=True)
    name = "id" if "id" not in frame.columns else "key"
    return frame.reset_index(drop=True).assign(**{name: text})[[name, *frame.columns]]


def _mixed(record: dict) -> bool:
    """Text beside numbers: a row's fields, not one column's values."""
    kinds = {type(v) is str for v in record.values() if v is not None}
    return len(kinds) > 1


def _scalar(v) -> bool:
    return v is None or isinstance(v, str | int | float | bool)
