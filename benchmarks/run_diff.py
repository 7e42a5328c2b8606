"""Two versions' workspaces side by side: which files a setup or a solve wrote differently.

For a before/after comparison of a change meant to keep behaviour (two git worktrees, the same inputs):
benchmarks/layout_fuzz.py --compare and benchmarks/solve.py --compare print these lines. Compared: every file a
workspace holds but the run's own record (its logs, setup.json, the trajectory, the lock) and a trained model's
files (AutoGluon's pickles hold their paths and the time they were written). What differs from run to run on any
machine is left out of the records: JSON's measured keys (wall seconds, fit times, speeds, memory peaks) and the
durations its notes quote ("in 0.4s"), an array archive's measured arrays, and the order of a list of records that
a measured time may decide (AutoGluon's leaderboard of models tied on score). The predictions, submissions, maps,
plans and scores are compared whole. A generated program that differs only in the order of a dict literal's keys is
told apart (a set's order varies with string hashing).
"""

from __future__ import annotations

import argparse
import ast
import io
import json
import re
from pathlib import Path

import numpy as np

RUN_RECORDS = {"setup.json", ".agentk.lock", "trajectory.jsonl"}  # the setup's times, attempts and locks
MODEL_FOLDERS = {"models"}  # a solution's trained models: AutoGluon's pickles name their path and time
# a record's wall times, speeds (images_per_s), memory peaks, and a time limit set from the wall time left
MEASURED = re.compile(r"(seconds|time|_s|_gb|time_limit)$")
DURATION = re.compile(r"\b\d+(?:\.\d+)?\s?s\b")  # a duration in a note's text: "embeddings in 1.1s"


def outputs(ws: Path, places: dict[Path, str], copied_from: Path | None = None) -> dict[str, bytes]:
    """A workspace's outputs by relative path, each of the `places` (the run's folder, the version's checkout) written
    as its name: every file but its logs, its record of the run, its trained models and, given the layout's public
    folder, raw/'s copies of its files."""
    out = {}
    for p in sorted(ws.rglob("*")):
        rel = p.relative_to(ws)
        copied = copied_from is not None and rel.parts[0] == "raw" and (copied_from / Path(*rel.parts[1:])).is_file()
        kept = "logs" not in rel.parts and not MODEL_FOLDERS & set(rel.parts) and p.name not in RUN_RECORDS
        if p.is_file() and kept and not copied:
            data = p.read_bytes()
            for place, name in places.items():
                data = data.replace(str(Path(place).resolve()).encode(), name.encode())
            out[str(rel)] = data
    return out


def _unmeasured(value):
    """A JSON value without what was measured, at any depth: the measured keys, the durations in its text, and the
    order of a list of records."""
    if isinstance(value, dict):
        return {k: _unmeasured(v) for k, v in value.items() if not MEASURED.search(k)}
    if isinstance(value, list):
        items = [_unmeasured(v) for v in value]
        records = items and all(isinstance(v, dict) for v in items)
        return sorted(items, key=lambda v: json.dumps(v, sort_keys=True, default=str)) if records else items
    return DURATION.sub("<duration>", value) if isinstance(value, str) else value


def _records(name: str, data: bytes):
    """A .json or .jsonl file's records, or an .npz archive's arrays, without what was measured (None: no such file,
    or not readable as one)."""
    try:
        if name.endswith(".json"):
            return _unmeasured(json.loads(data))
        if name.endswith(".jsonl"):
            return [_unmeasured(json.loads(line)) for line in data.splitlines() if line.strip()]
        if name.endswith(".npz"):
            with np.load(io.BytesIO(data), allow_pickle=False) as arrays:
                return {
                    k: arrays[k].tobytes() + str(arrays[k].shape).encode() for k in arrays if not MEASURED.search(k)
                }
    except ValueError:
        return None
    return None


def _text(records) -> str:
    """Records as comparable text (a NaN score equals a NaN score)."""
    return json.dumps(records, sort_keys=True, default=repr)


def sorted_dicts(source: str) -> str | None:
    """A program's syntax tree with each dict literal's items in key order (None: not Python)."""

    class Sort(ast.NodeTransformer):
        def visit_Dict(self, node: ast.Dict) -> ast.Dict:
            self.generic_visit(node)
            items = sorted(zip(node.keys, node.values), key=lambda kv: ast.dump(kv[0]) if kv[0] else "")
            node.keys, node.values = [k for k, _ in items], [v for _, v in items]
            return node

    try:
        return ast.dump(Sort().visit(ast.parse(source)))
    except (SyntaxError, ValueError):
        return None


def differences(label: str, before: dict[str, bytes], after: dict[str, bytes]) -> tuple[list[str], list[str]]:
    """Lines naming each output written by one version only or differing, and apart from them the programs that
    differ only in a dict's key order."""
    lines, reordered = [], []
    for name in sorted(set(before) ^ set(after)):
        lines.append(f"{label}: {name} written {'before' if name in before else 'after'} only")
    for name in sorted(n for n in set(before) & set(after) if before[n] != after[n]):
        records = [_records(name, x) for x in (before[name], after[name])]
        if records[0] is not None and _text(records[0]) == _text(records[1]):
            continue  # the same record but for its measurements
        trees = (
            [sorted_dicts(x.decode(errors="replace")) for x in (before[name], after[name])]
            if name.endswith(".py")
            else []
        )
        if trees and trees[0] is not None and trees[0] == trees[1]:  # only programs are parsed
            reordered.append(f"{label}: {name}: the same program but for a dict's key order")
        else:
            lines.append(f"{label}: {name} differs")
    return lines, reordered


def command(p: argparse.ArgumentParser, folders: list[Path], record: str, compare) -> int:
    """--compare BEFORE AFTER: two finished runs' --out folders (each holding its `record`), compared and printed."""
    missing = [str(d) for d in folders if not (d / record).is_file()]
    if missing:
        p.error(f"no {record} in {', '.join(missing)}: give two --out folders of finished runs")
    print("\n".join(compare(*folders)))
    return 0
