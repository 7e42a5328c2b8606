"""Seeded data fuzzing of `agentk setup`: a bundled example copied, one named mutation (sometimes two) applied to
its files, the real CLI run on it in a child process, and the run judged.

A case is a seed: `make_case(seed)` picks the mutation (round robin over MUTATIONS by the seed, so a run of N
seeds covers every mutation), the example it applies to, and sometimes a second mutation; `build_case` copies the
example and mutates it with a generator seeded by the same seed, so a case is rebuilt byte for byte from its seed
(and the mutation, where `make_case` was told one). `run_case` runs `agentk setup <folder> --workspace <ws>` with
no standard input and an 80-column console, and `judge` says what went wrong, if anything:

- the exit code is 0, 1 or 2 (a negative code or 128+n is a signal: "signal"; anything else "exit <n>");
- it ended within the time cap ("hang" otherwise; the process group is killed);
- neither stdout nor stderr holds "Traceback" ("traceback");
- a non-zero exit ends stderr with exactly one `agentk: ...` line, not a warning ("not-one-line");
- the user's folder is as it was: every name, file's bytes and mode, and symlink target ("folder changed");
- no file escaped the workspace (the zip-slip members of `truncated_archive`: "escaped").

tests/test_fuzz_data.py runs a few seeded cases in the default suite; benchmarks/fuzz_data.py runs many and prints
the table. Both import this module: it is a test double, the product never imports it.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
import json
import os
import random
import shutil
import signal
import stat
import struct
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"

# the tabular examples, weighted towards the small ones (a full setup of iris takes ~18 s, of digits-multilabel
# longer); docstring-library holds its tables as JSON records, digits-images its images in folders
SMALL_TABLES = {"iris-species": 5, "wine": 3, "diabetes": 3, "breast-cancer": 1}
TABLES = {**SMALL_TABLES, "digits-multilabel": 1}
JSON_TABLES = "docstring-library"
IMAGES = "digits-images"

FAILURES = ("signal", "hang", "traceback", "not-one-line", "folder changed", "escaped", "other exit")


@dataclass(frozen=True)
class Mutation:
    name: str
    apply: Callable[[Path, random.Random], str]  # (the copied example, the case's generator) -> what it did
    examples: dict[str, int]  # the examples it applies to, and how often each is drawn
    doc: str
    # "cells": reads the tables and writes them back (parsable); "raw": leaves a file unparsable, so it goes after
    # the cell mutations of a case and a case has one at most; "tree": adds or changes files without reading any
    kind: str = "cells"


MUTATIONS: dict[str, Mutation] = {}


def mutation(examples: dict[str, int], kind: str = "cells"):
    """Registers a mutation: a function of (folder, rng) that changes the folder's files and says how."""

    def register(fn):
        doc = (fn.__doc__ or "").strip().split("\n")[0]
        MUTATIONS[fn.__name__] = Mutation(fn.__name__, fn, dict(examples), doc, kind)
        return fn

    return register


# ---- tables as rows of strings (the csv module: the generator must not parse what it writes with pandas) ------
def read_rows(path: Path) -> list[list[str]]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.reader(f))


def format_rows(rows: list[list[str]]) -> str:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    return buf.getvalue()


def write_rows(path: Path, rows: list[list[str]]) -> None:
    path.write_text(format_rows(rows), encoding="utf-8", newline="")


def csv_tables(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.csv"))


def id_column(folder: Path) -> str:
    return read_rows(folder / "sample_submission.csv")[0][0]


def numeric_columns(rows: list[list[str]], skip: set[str] = frozenset()) -> list[int]:
    """The columns whose every value reads as a number (the id excluded)."""
    found = []
    for j, name in enumerate(rows[0]):
        if name in skip:
            continue
        try:
            [float(r[j]) for r in rows[1:] if len(r) > j]
        except ValueError:
            continue
        found.append(j)
    return found


def feature_tables(folder: Path) -> list[Path]:
    """train.csv and test.csv: the tables whose cells the cell mutations change."""
    return [p for p in (folder / "train.csv", folder / "test.csv") if p.exists()]


def pick(rng: random.Random, items: list, share: float) -> list:
    """A share of the items (at least one), in their order."""
    k = max(1, round(len(items) * share))
    return sorted(rng.sample(range(len(items)), min(k, len(items))))


def change_cells(folder: Path, rng: random.Random, value: Callable[[str], str], target: bool = True) -> str:
    """Replaces a share of the cells of one to three numeric columns of train and test (sometimes the target's)
    with value(old)."""
    ident = id_column(folder)
    share = rng.choice([0.02, 0.2, 1.0])
    train = read_rows(folder / "train.csv")
    cols = numeric_columns(train, {ident})
    names = [train[0][j] for j in rng.sample(cols, min(len(cols), rng.randint(1, 3)))]
    test_names = set(read_rows(folder / "test.csv")[0])
    if target and rng.random() < 0.3:  # a target column (in train only)
        extra = [c for c in train[0] if c not in test_names and c != ident]
        names += extra[:1]
    for path in feature_tables(folder):
        rows = read_rows(path)
        for name in names:
            if name not in rows[0]:
                continue
            j = rows[0].index(name)
            for i in pick(rng, rows[1:], share):
                rows[i + 1][j] = value(rows[i + 1][j])
        write_rows(path, rows)
    return f"{share:.0%} of {names}"


# ---- hexadecimal strings -----------------------------------------------------------------------------------------
def hex_string(rng: random.Random, kind: str | None = None) -> str:
    """12 or 16 hex characters; kind "digits-e" is all digits but one `e` (028e454608203890), which reads as a float
    with a huge exponent, and is what segfaults pandas 2.x's float parser (pandas-dev/pandas#63650)."""
    n = rng.choice([12, 16])
    kind = kind or rng.choice(["digits-e", "hex"])
    if kind == "digits-e":
        digits = [rng.choice("0123456789") for _ in range(n)]
        digits[rng.randint(1, n - 2)] = rng.choice("eE") if rng.random() < 0.2 else "e"
        return "".join(digits)
    return "".join(rng.choice("0123456789abcdef") for _ in range(n))


@mutation({**TABLES, JSON_TABLES: 2})
def hex_ids(folder: Path, rng: random.Random) -> str:
    """ids replaced by hexadecimal strings, consistently in train, test and the sample submission"""
    kind = rng.choice(["digits-e", "hex", "mixed"])
    ident = id_column(folder)
    new: dict[str, str] = {}

    def fresh(old: str) -> str:
        if old not in new:
            value = hex_string(rng, None if kind == "mixed" else kind)
            while value in new.values():
                value = hex_string(rng, None if kind == "mixed" else kind)
            new[old] = value
        return new[old]

    for path in csv_tables(folder):
        rows = read_rows(path)
        if ident in rows[0]:
            j = rows[0].index(ident)
            for r in rows[1:]:
                r[j] = fresh(r[j])
            write_rows(path, rows)
    for path in sorted(folder.glob("*.json")):
        records = json.loads(path.read_text())
        for r in records:
            r[ident] = fresh(str(r[ident]))
        path.write_text(json.dumps(records, indent=1))
    return f"{kind} ids in {ident!r}"


@mutation(TABLES)
def hex_cells(folder: Path, rng: random.Random) -> str:
    """feature cells replaced by hexadecimal strings (some all digits but one `e`)"""
    return change_cells(folder, rng, lambda old: hex_string(rng))


# ---- numbers out of range, and the spellings of not-a-number ------------------------------------------------------
HUGE = ["1e999999999999", "-3E-99999999999", "1e309", "-1e400", "2.5e+99999999999999999999", "1E-400", "9" * 400]
NONFINITE = ["inf", "-inf", "nan", "NaN", "Infinity", "-Infinity", "#N/A", "N/A", "NULL", "None", "-nan", "+inf"]
NONFINITE += ["1.#INF", "#DIV/0!", "?", "", " ", "NA", "null", "-"]


@mutation(TABLES)
def huge_exponents(folder: Path, rng: random.Random) -> str:
    """numeric cells replaced by numbers out of a float's range (1e999999999999, -3E-99999999999, 400 nines)"""
    return change_cells(folder, rng, lambda old: rng.choice(HUGE))


@mutation({**TABLES, JSON_TABLES: 2})
def nonfinite(folder: Path, rng: random.Random) -> str:
    """numeric cells spelled inf, -inf, nan, NaN, Infinity, #N/A, NULL, blank..."""
    if (folder / "train.json").exists():  # JSON's own NaN and Infinity literals, which Python's json accepts
        share, done = rng.choice([0.05, 1.0]), []
        for path in sorted(folder.glob("*.json")):
            records = json.loads(path.read_text())
            key = rng.choice(["n_parameters", "name_length"])
            for i in pick(rng, records, share):
                records[i][key] = rng.choice([float("nan"), float("inf"), float("-inf"), None, "NaN", "#N/A"])
            path.write_text(json.dumps(records, indent=1))
            done.append(f"{path.name}:{key}")
        return f"{share:.0%} of {done}"
    spellings = rng.sample(NONFINITE, rng.randint(1, 4))
    return change_cells(folder, rng, lambda old: rng.choice(spellings)) + f" as {spellings}"


# ---- long cells, control characters, encodings -----------------------------------------------------------------
def long_text(rng: random.Random, n: int = 10_000) -> str:
    kind = rng.choice(["letters", "digits", "words", "one"])
    if kind == "digits":  # an integer of 10,000 digits
        return "".join(rng.choice("0123456789") for _ in range(n))
    if kind == "words":
        return " ".join("lorem" for _ in range(n // 6))[:n]
    if kind == "one":
        return "x" * n
    return "".join(rng.choice("abcdefghij,\"' ") for _ in range(n))


@mutation({**TABLES, JSON_TABLES: 1})
def long_cells(folder: Path, rng: random.Random) -> str:
    """cells (and sometimes a header or an id) of 10,000 characters"""
    where = rng.choice(["cells", "header", "ids", "target"])
    if (folder / "train.json").exists():
        records = json.loads((folder / "train.json").read_text())
        key = {"header": None, "ids": "id", "target": "library"}.get(where, "docstring")
        for i in pick(rng, records, rng.choice([0.01, 0.2])):
            if key is None:
                records[i][long_text(rng)] = 1
            else:
                records[i][key] = long_text(rng)
        (folder / "train.json").write_text(json.dumps(records))
        return f"train.json {where}"
    if where == "header":
        path = rng.choice(feature_tables(folder))
        rows = read_rows(path)
        rows[0][rng.randrange(1, len(rows[0]))] = long_text(rng)
        write_rows(path, rows)
        return f"a header of {path.name}"
    if where == "ids":
        ident = id_column(folder)
        path = rng.choice(csv_tables(folder))
        rows = read_rows(path)
        j = rows[0].index(ident)
        for i in pick(rng, rows[1:], 0.1):
            rows[i + 1][j] = long_text(rng)
        write_rows(path, rows)
        return f"ids of {path.name}"
    return change_cells(folder, rng, lambda old: long_text(rng), target=where == "target")


CONTROL = ["\x00", "\x01", "\x07", "\x08", "\x1b[31m", "\x7f", "\x0b", "\x0c", "\r", "\x85", "\u2028", "\ufeff"]
CONTROL += ["\u202e", "\x00\x00\x00", "\n"]


@mutation({**TABLES, JSON_TABLES: 1}, kind="raw")
def control_chars(folder: Path, rng: random.Random) -> str:
    """control characters and NUL bytes inside cells, ids and headers (quoted or not)"""
    chars = rng.sample(CONTROL, rng.randint(1, 3))

    def dirty(old: str) -> str:
        k = rng.randint(0, len(old))
        return old[:k] + rng.choice(chars) + old[k:]

    if (folder / "train.json").exists():
        raw = rng.random() < 0.5  # the characters written raw into the JSON text (strictly invalid JSON)
        for path in sorted(folder.glob("*.json")):
            records = json.loads(path.read_text())
            for i in pick(rng, records, 0.1):
                key = rng.choice(["docstring", "id"])
                records[i][key] = dirty(str(records[i][key]))
            text = json.dumps(records, indent=1, ensure_ascii=False)
            if raw:
                text = text.replace("\\u0000", "\x00").replace("\\u001b", "\x1b").replace("\\r", "\r")
            path.write_text(text, encoding="utf-8")
        return f"{chars!r} in JSON strings{' raw' if raw else ''}"
    quoted = rng.random() < 0.6
    where = rng.choice(["cells", "ids", "header"])
    for path in csv_tables(folder):
        rows = read_rows(path)
        if where == "header":
            j = rng.randrange(len(rows[0]))
            rows[0][j] = dirty(rows[0][j])
        else:
            cols = [0] if where == "ids" else list(range(1, len(rows[0])))
            for i in pick(rng, rows[1:], rng.choice([0.02, 0.3])):
                j = rng.choice(cols)
                if j < len(rows[i + 1]):
                    rows[i + 1][j] = dirty(rows[i + 1][j])
        text = format_rows(rows) if quoted else "".join(",".join(r) + "\n" for r in rows)
        path.write_text(text, encoding="utf-8", newline="")
    return f"{chars!r} in {where}, {'quoted' if quoted else 'raw'}"


ACCENTED = ["café", "naïve", "Müller", "Ångström", "façade", "señor", "Zürich", "crème brûlée", "€uro", "“quoted”"]


@mutation(TABLES, kind="raw")
def mixed_encoding(folder: Path, rng: random.Random) -> str:
    """a table whose lines mix UTF-8 and latin-1/cp1252 bytes (an accented column added to train and test)"""
    share = rng.choice([0.05, 0.5, 0.95])
    codec = rng.choice(["latin-1", "cp1252"])
    header_too = rng.random() < 0.3
    files = feature_tables(folder) if rng.random() < 0.7 else [rng.choice(feature_tables(folder))]
    for path in feature_tables(folder):
        rows = read_rows(path)
        rows[0].insert(1, "städt" if header_too else "city")
        for r in rows[1:]:
            r.insert(1, rng.choice(ACCENTED))
        lines = format_rows(rows).splitlines(keepends=True)
        data = b""
        for k, line in enumerate(lines):
            mixed = path in files and (k > 0 or header_too) and rng.random() < share
            data += line.encode(codec, errors="replace") if mixed else line.encode("utf-8")
        path.write_bytes(data)
    return f"{share:.0%} of the lines of {[p.name for p in files]} in {codec}"


@mutation(TABLES, kind="raw")
def odd_encoding(folder: Path, rng: random.Random) -> str:
    """a whole table in UTF-16, cp1252, with a BOM, CR line ends, or random bytes"""
    path = rng.choice(csv_tables(folder))
    kind = rng.choice(["utf-16", "utf-16-le", "utf-8-sig", "cp1252", "cr", "crlf", "random", "gzip-unnamed"])
    text = path.read_text(encoding="utf-8")
    if kind == "cp1252":
        rows = read_rows(path)
        rows[0][-1] += "é"
        path.write_bytes(format_rows(rows).encode("cp1252"))
    elif kind in ("utf-16", "utf-16-le", "utf-8-sig"):
        path.write_bytes(text.encode(kind))
    elif kind in ("cr", "crlf"):
        path.write_bytes(text.replace("\n", "\r" if kind == "cr" else "\r\n").encode())
    elif kind == "random":
        path.write_bytes(rng.randbytes(rng.choice([1, 100, 5000])))
    else:  # gzip bytes in a file named .csv
        path.write_bytes(gzip.compress(text.encode(), mtime=0))
    return f"{path.name} as {kind}"


# ---- the shape of a table ------------------------------------------------------------------------------------
@mutation(TABLES, kind="raw")
def ragged_rows(folder: Path, rng: random.Random) -> str:
    """rows with extra or missing fields, a blank line, an unterminated quote"""
    path = rng.choice(csv_tables(folder))
    kind = rng.choice(["extra", "missing", "one-field", "blank", "quote", "mixed"])
    rows = read_rows(path)
    lines = format_rows(rows).splitlines()
    for i in pick(rng, lines[1:], rng.choice([0.01, 0.2, 0.9])):
        line = lines[i + 1]
        k = kind if kind != "mixed" else rng.choice(["extra", "missing", "one-field", "blank", "quote"])
        if k == "extra":
            line += "," * rng.randint(1, 3) + "x"
        elif k == "missing":
            line = line.rsplit(",", rng.randint(1, 2))[0]
        elif k == "one-field":
            line = line.split(",")[0]
        elif k == "blank":
            line = rng.choice(["", ",,,", " "])
        else:
            line = line.replace(",", ',"', 1)
        lines[i + 1] = line
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return f"{kind} in {path.name}"


@mutation(TABLES)
def duplicate_headers(folder: Path, rng: random.Random) -> str:
    """two columns of a table with the same name (the id's, the target's, blank, or differing only in case)"""
    path = rng.choice(csv_tables(folder))
    rows = read_rows(path)
    header = rows[0]
    kind = rng.choice(["id", "any", "blank", "case", "last"])
    if len(header) < 2:
        return f"{path.name} has one column"
    if kind == "id":
        j = rng.randrange(1, len(header))
        header[j] = header[0]
    elif kind == "blank":
        for j in rng.sample(range(len(header)), 2):
            header[j] = ""
    elif kind == "case":
        header.append(header[0].swapcase())
        for r in rows[1:]:
            r.append(r[0])
    elif kind == "last":  # the last column (the target in train) named as the one before it
        header[-1] = header[-2]
    else:
        i, j = rng.sample(range(len(header)), 2)
        header[j] = header[i]
    write_rows(path, rows)
    return f"{kind} in {path.name}: {header[:4]}..."


@mutation({**TABLES, JSON_TABLES: 1, IMAGES: 1}, kind="raw")
def header_only(folder: Path, rng: random.Random) -> str:
    """a table with no rows: its header only, or an empty file, or a lone newline"""
    path = rng.choice(sorted([*csv_tables(folder), *folder.glob("*.json")]))
    kind = rng.choice(["header", "header-no-newline", "empty", "newline", "empty-json"])
    if path.suffix == ".json":
        path.write_text(rng.choice(["[]", "{}", "", "null", "[{}]"]))
        return f"{path.name} empty"
    header = path.read_text(encoding="utf-8").split("\n")[0]
    path.write_text(
        {"header": header + "\n", "header-no-newline": header, "empty": "", "newline": "\n", "empty-json": "[]"}[kind]
    )
    return f"{path.name}: {kind}"


@mutation({"iris-species": 3, "wine": 1})
def many_empty_columns(folder: Path, rng: random.Random) -> str:
    """a table with thousands of empty columns (20,000 at most), named, unnamed or duplicated"""
    n = rng.choice([500, 5000, 20000])
    naming = rng.choice(["named", "unnamed", "same"])
    paths = feature_tables(folder) if rng.random() < 0.5 else [folder / "train.csv"]
    for path in paths:
        rows = read_rows(path)
        names = {"named": [f"empty_{k}" for k in range(n)], "unnamed": [""] * n, "same": ["empty"] * n}[naming]
        lines = [",".join(rows[0] + names)] + [",".join(r) + "," * n for r in rows[1:]]
        path.write_text("\n".join(lines) + "\n")
    return f"{n} {naming} empty columns in {[p.name for p in paths]}"


# ---- nested JSON ---------------------------------------------------------------------------------------------
def deep(depth: int, kind: str) -> str:
    if kind == "lists":
        return "[" * depth + "1" + "]" * depth
    return '{"a":' * depth + "1" + "}" * depth


@mutation({JSON_TABLES: 3, "iris-species": 1, "wine": 1}, kind="raw")
def deep_json(folder: Path, rng: random.Random) -> str:
    """JSON nested 10,000 (or 100,000) levels deep: a record's field, a whole table, or a side file"""
    depth = rng.choice([10_000, 10_000, 100_000])
    kind = rng.choice(["lists", "objects"])
    if (folder / "train.json").exists():
        where = rng.choice(["field", "file"])
        path = rng.choice(sorted(folder.glob("*.json")))
        if where == "file":
            path.write_text(deep(depth, kind))
        else:
            records = json.loads(path.read_text())
            i = rng.randrange(len(records))
            key = rng.choice(["docstring", "n_parameters", "id"])
            records[i][key] = "@DEEP@"
            path.write_text(json.dumps(records).replace('"@DEEP@"', deep(depth, kind)))
        return f"{kind} {depth} deep in {path.name} ({where})"
    if rng.random() < 0.5:  # train as JSON records, one of them deep
        rows = read_rows(folder / "train.csv")
        records = [dict(zip(rows[0], r)) for r in rows[1:]]
        records[0][rows[0][1]] = "@DEEP@"
        (folder / "train.csv").unlink()
        (folder / "train.json").write_text(json.dumps(records).replace('"@DEEP@"', deep(depth, kind)))
        return f"train.csv as train.json, a cell {kind} {depth} deep"
    (folder / "metadata.json").write_text(deep(depth, kind))
    return f"metadata.json: {kind} {depth} deep"


# ---- archives and images -------------------------------------------------------------------------------------
def _zip(path: Path, members: dict[str, bytes]) -> None:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members.items():
            info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
            z.writestr(info, data, zipfile.ZIP_DEFLATED)


@mutation(SMALL_TABLES, kind="raw")
def truncated_archive(folder: Path, rng: random.Random) -> str:
    """a table shipped in an archive cut short (zip, gz, tar.gz, 7z), an empty archive, or a zip whose member
    names climb out of the folder (zip slip)"""
    path = rng.choice(feature_tables(folder) if rng.random() < 0.8 else csv_tables(folder))
    data = path.read_bytes()
    kind = rng.choice(["zip", "gz", "tar.gz", "7z", "zip-empty", "zip-no-directory", "zip-slip"])
    cut = rng.choice([0.5, rng.uniform(0.05, 0.95)])
    path.unlink()
    if kind in ("zip", "zip-no-directory", "zip-slip"):
        target = path.with_name(path.name + ".zip")
        members = {path.name: data}
        if kind == "zip-slip":
            token = rng.randrange(10**9)
            members = {"../" * k + f"zipslip-{token}.csv": data for k in range(1, 5)}
            members[f"/tmp/zipslip-{token}-absolute.csv"] = data
            members[path.name] = data
            _zip(target, members)
            return f"{target.name} with members climbing out: {sorted(members)}"
        _zip(target, members)
        blob = target.read_bytes()
        end = len(blob) - 22 if kind == "zip-no-directory" else int(len(blob) * cut)
        target.write_bytes(blob[:end])
        return f"{target.name} cut to {end} of {len(blob)} bytes"
    if kind == "zip-empty":
        target = path.with_name(path.name + ".zip")
        target.write_bytes(b"")
        return f"{target.name} empty"
    if kind == "gz":
        target = path.with_name(path.name + ".gz")
        blob = gzip.compress(data, mtime=0)
    elif kind == "tar.gz":
        target = path.with_name(path.stem + ".tar.gz")
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w:gz") as tar:
            info = tarfile.TarInfo(path.name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        blob = buf.getvalue()
    else:
        import py7zr

        target = path.with_name(path.name + ".7z")
        with py7zr.SevenZipFile(target, "w") as z:
            z.writestr(data, path.name)
        blob = target.read_bytes()
    end = int(len(blob) * cut)
    target.write_bytes(blob[:end])
    return f"{target.name} cut to {end} of {len(blob)} bytes"


def _png(width: int, height: int) -> bytes:
    """A PNG header claiming width x height grey pixels, with a tiny (wrong) image stream."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"\x00" * 64)) + chunk(b"IEND", b"")
    )


@mutation({IMAGES: 1}, kind="tree")
def truncated_images(folder: Path, rng: random.Random) -> str:
    """images cut short, zero bytes, JPEG bytes cut short, random bytes, text, or a PNG claiming 100,000 x 100,000"""
    images = sorted(folder.rglob("*.png"))
    share = rng.choice([1 / len(images), 0.01, 0.3, 1.0])
    kinds = rng.sample(["cut", "zero", "jpeg-cut", "random", "text", "bomb", "header-only"], rng.randint(1, 3))
    chosen = pick(rng, images, share)
    for i in chosen:
        path, kind = images[i], rng.choice(kinds)
        data = path.read_bytes()
        if kind == "cut":
            path.write_bytes(data[: rng.randint(1, len(data) - 1)])
        elif kind == "zero":
            path.write_bytes(b"")
        elif kind == "jpeg-cut":
            from PIL import Image

            buf = io.BytesIO()
            Image.open(io.BytesIO(data)).convert("L").save(buf, "JPEG")
            blob = buf.getvalue()
            path.write_bytes(blob[: rng.randint(2, len(blob) - 2)])
        elif kind == "random":
            path.write_bytes(rng.randbytes(rng.randint(1, 500)))
        elif kind == "text":
            path.write_text("not an image\n")
        elif kind == "bomb":
            path.write_bytes(_png(100_000, 100_000))
        else:
            path.write_bytes(data[:33])  # the signature and IHDR, no pixels
    return f"{kinds} on {len(chosen)} of {len(images)} images"


# ---- the folder itself ---------------------------------------------------------------------------------------
@mutation({**SMALL_TABLES, IMAGES: 2, JSON_TABLES: 1}, kind="tree")
def symlink_loops(folder: Path, rng: random.Random) -> str:
    """symlink loops in the folder (a -> ., loop1 -> loop2 -> loop1, sub/up -> ..), a dangling link"""
    made = []
    options = ["self", "pair", "dangling", "up", "dangling-csv", "table-link", "deep-self"]
    for kind in rng.sample(options, rng.randint(1, 4)):
        if kind == "self":
            (folder / "a").symlink_to(".")
        elif kind == "pair":
            (folder / "loop1").symlink_to("loop2")
            (folder / "loop2").symlink_to("loop1")
        elif kind == "dangling":
            (folder / "gone").symlink_to("does-not-exist")
        elif kind == "up":
            sub = next((p for p in sorted(folder.iterdir()) if p.is_dir()), None) or folder / "extra"
            sub.mkdir(exist_ok=True)
            (sub / "up").symlink_to("..")
        elif kind == "dangling-csv":
            (folder / "labels.csv").symlink_to("missing/labels.csv")
        elif kind == "table-link":
            (folder / "train_copy.csv").symlink_to("train.csv")
        else:
            (folder / "nest" / "deeper").mkdir(parents=True)
            (folder / "nest" / "deeper" / "root").symlink_to("../..")
        made.append(kind)
    return f"links: {made}"


@mutation({"iris-species": 1, "wine": 1}, kind="tree")
def special_files(folder: Path, rng: random.Random) -> str:
    """a named pipe (FIFO) beside the tables, or as a table, or an unreadable file"""
    kind = rng.choice(["fifo-beside", "fifo-table", "fifo-sub"])
    name = {"fifo-beside": "stream.csv", "fifo-table": "extra_features.csv", "fifo-sub": "more/pipe.csv"}[kind]
    (folder / name).parent.mkdir(exist_ok=True)
    os.mkfifo(folder / name)
    return f"{kind}: {name}"


# ---- cases ----------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Case:
    seed: int
    mutations: tuple[str, ...]
    example: str

    @property
    def label(self) -> str:
        return "+".join(self.mutations)


def make_case(seed: int, mutation: str | None = None) -> Case:
    """The case of a seed: its mutation (the one named, else round robin over MUTATIONS), an example it applies to,
    and, for one seed in five where none was named, a second mutation that applies to that example."""
    if mutation is not None and mutation not in MUTATIONS:
        raise KeyError(f"no mutation {mutation!r}: one of {', '.join(MUTATIONS)}")
    rng = random.Random(f"case-{seed}")
    names = list(MUTATIONS)
    first = mutation or names[seed % len(names)]
    examples = MUTATIONS[first].examples
    example = rng.choices(sorted(examples), weights=[examples[e] for e in sorted(examples)])[0]
    chosen = [first]
    if mutation is None and rng.random() < 0.2:
        raw = MUTATIONS[first].kind == "raw"
        others = [
            n
            for n in names
            if n != first and example in MUTATIONS[n].examples and not (raw and MUTATIONS[n].kind == "raw")
        ]
        if others:
            chosen.append(rng.choice(others))
    order = ("cells", "raw", "tree")  # the cell mutations read tables the raw ones would leave unreadable
    return Case(seed, tuple(sorted(chosen, key=lambda n: order.index(MUTATIONS[n].kind))), example)


def build_case(case: Case, dest: Path) -> list[str]:
    """Copies the case's example to dest and applies its mutations; what each did."""
    shutil.copytree(EXAMPLES / case.example, dest)
    rng = random.Random(f"mutate-{case.seed}")
    return [f"{name}: {MUTATIONS[name].apply(dest, rng)}" for name in case.mutations]


def snapshot(root: Path) -> dict[str, str]:
    """Every name under root with its kind and content: a file's mode and sha256, a symlink's target (never
    followed), a directory's mode, another node's type (a FIFO is not opened)."""
    found: dict[str, str] = {}

    def walk(folder: str, rel: str) -> None:
        with os.scandir(folder) as it:
            entries = sorted(it, key=lambda e: e.name)
        for e in entries:
            name = rel + e.name
            st = e.stat(follow_symlinks=False)
            if stat.S_ISLNK(st.st_mode):
                found[name] = f"link -> {os.readlink(e.path)}"
            elif stat.S_ISDIR(st.st_mode):
                found[name] = f"dir {stat.S_IMODE(st.st_mode):o}"
                walk(e.path, name + "/")
            elif stat.S_ISREG(st.st_mode):
                digest = hashlib.sha256()
                with open(e.path, "rb") as f:
                    for block in iter(lambda f=f: f.read(1 << 20), b""):
                        digest.update(block)
                found[name] = f"file {stat.S_IMODE(st.st_mode):o} {digest.hexdigest()}"
            else:
                found[name] = f"node {stat.S_IFMT(st.st_mode):o} {stat.S_IMODE(st.st_mode):o}"

    walk(str(root), "")
    return found


def changes(before: dict[str, str], after: dict[str, str]) -> list[str]:
    said = [f"removed {n!r}" for n in sorted(before.keys() - after.keys())]
    said += [f"added {n!r}" for n in sorted(after.keys() - before.keys())]
    said += [
        f"changed {n!r}: {before[n]} -> {after[n]}"
        for n in sorted(before.keys() & after.keys())
        if before[n] != after[n]
    ]
    return said


@dataclass
class Result:
    seed: int
    mutations: list[str]
    example: str
    notes: list[str]
    rc: int | None  # None: killed at the time cap
    seconds: float
    failures: list[str] = field(default_factory=list)
    detail: list[str] = field(default_factory=list)  # what changed in the folder, what escaped
    last_line: str = ""  # the last line of stderr
    stderr_tail: str = ""
    stdout_tail: str = ""

    @property
    def outcome(self) -> str:
        return "hang" if self.rc is None else f"exit {self.rc}"

    def to_json(self) -> dict:
        return asdict(self)


def last_line(err: str) -> str:
    lines = [l for l in err.split("\n") if l.strip()]
    return lines[-1] if lines else ""


def judge(rc: int | None, out: str, err: str) -> list[str]:
    """What is wrong with a run's exit code and output (the folder is judged apart)."""
    failures = []
    if rc is None:
        failures.append("hang")
    elif rc < 0 or rc >= 128:
        failures.append("signal")
    elif rc not in (0, 1, 2):
        failures.append("other exit")
    if "Traceback" in out or "Traceback" in err:
        failures.append("traceback")
    if rc not in (None, 0):
        lines = [l for l in err.split("\n") if l.strip()]
        mine = [l for l in lines if l.startswith("agentk: ") and not l.startswith("agentk: warning:")]
        last = lines[-1] if lines else ""
        one = last.startswith("agentk: ") and not last.startswith("agentk: warning:") and len(mine) == 1
        if not one or len(last.splitlines()) != 1:
            failures.append("not-one-line")
    return failures


def _env(memory: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTK_LLM_")}
    return {**env, "COLUMNS": "80", "AGENTK_MEMORY": str(memory)}


def run_case(case: Case, timeout: float = 180, workdir: Path | None = None, keep: bool = False) -> Result:
    """Builds the case in a temporary folder, runs `agentk setup` on it and judges the run."""
    tmp = Path(tempfile.mkdtemp(prefix=f"fuzz-{case.seed}-", dir=workdir))
    try:
        data, ws = tmp / "data", tmp / "ws"
        notes = build_case(case, data)
        before = snapshot(data)
        outside = {up: set(os.listdir(up)) for up in {tmp.parent, tmp.parent.parent, Path("/tmp")}}
        cmd = [sys.executable, "-m", "agentk", "setup", str(data), "--workspace", str(ws), "--policy", "expert"]
        start = time.monotonic()
        proc = subprocess.Popen(
            cmd,
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=_env(tmp / "memory"),
            start_new_session=True,
        )
        try:
            out, err = proc.communicate(timeout=timeout)
            rc = proc.returncode
        except subprocess.TimeoutExpired:
            rc = None
            os.killpg(proc.pid, signal.SIGKILL)
            try:
                out, err = proc.communicate(timeout=30)
            except subprocess.TimeoutExpired:  # a grandchild outside the group holds the pipes
                out, err = b"", b""
        seconds = time.monotonic() - start
        if rc is not None:  # whatever the run left in its group (a sandboxed child) goes too
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        out_s, err_s = out.decode("utf-8", "replace"), err.decode("utf-8", "replace")
        failures = judge(rc, out_s, err_s)
        detail = changes(before, snapshot(data))
        if detail:
            failures.append("folder changed")
        # the zip-slip members of truncated_archive climb from the workspace's raw/ up to four levels
        escaped = [str(p) for p in tmp.rglob("zipslip-*") if ws not in p.parents and data not in p.parents]
        for up in {tmp.parent, tmp.parent.parent, Path("/tmp")}:
            for p in up.glob("zipslip-*"):
                if p.name not in outside.get(up, ()):
                    escaped.append(str(p))
                    p.unlink(missing_ok=True)
        if escaped:
            failures.append("escaped")
            detail += [f"escaped: {p}" for p in escaped]
        return Result(
            case.seed,
            list(case.mutations),
            case.example,
            notes,
            rc,
            round(seconds, 2),
            failures,
            detail[:20],
            last_line(err_s)[:500],
            err_s[-3000:],
            out_s[-1500:],
        )
    finally:
        if not keep:
            shutil.rmtree(tmp, ignore_errors=True)
