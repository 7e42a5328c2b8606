"""Fetch & scrape (local folders): link the raw files into <ws>/raw and split the description into
task/description.md, evaluation.md and data.md. Bad input is caught here, before anything else."""

from __future__ import annotations

import re
import shutil
import tempfile
from pathlib import Path
from urllib.parse import urlsplit

import pandas as pd

from agentk.competition.archives import holds_tables, is_archive, members, unpack_beside
from agentk.competition.dataview import competition_name, find_description, find_tables
from agentk.competition.file_inputs import listing_source, modality_files
from agentk.competition.files import AUDIO_DECODED, is_table, role_of, split_folders, walk
from agentk.competition.normalise import normalise
from agentk.competition.normalise.arrays_as_tables import arrays_as_tables
from agentk.competition.normalise.class_tables_as_one import class_tables_as_one
from agentk.competition.normalise.label_sets_as_columns import label_sets_as_columns
from agentk.competition.normalise.long_as_wide import long_as_wide
from agentk.competition.normalise.parts_as_one import parts_as_one
from agentk.competition.normalise.positions_as_rows import positions_as_rows
from agentk.competition.normalise.rewrites_as_ranks import rewrites_as_ranks
from agentk.competition.readers import csv_dialect, read_table, text_encoding
from agentk.competition.support import hopeless_reason, pixels_sampled, unsupported, unsupported_reason
from agentk.competition.tables import candidates, find
from agentk.competition.task_kinds import unsupported_task
from agentk.core.checks import Check
from agentk.core.engine import Stage
from agentk.core.errors import BadInput
from agentk.core.fileio import write_json, write_text
from agentk.workspace import FETCH, ROLE_TASK, Workspace
from tools.audio_clips import clips_as_images
from tools.image_series import series_as_images
from tools.kaggle import KaggleTool, parse_competition_url
from tools.scraper import ScrapeUnavailable, scrape_competition
from unit_tests_lib.task import check_fetched

GOAL = (
    f"Link the competition's raw files into {Workspace.RAW}/ and save its description pages as markdown in "
    f"{Workspace.TASK}/."
)


def check_source(source: str | Path, try_unsupported: bool = False) -> str | None:
    """Raise BadInput (one line: what is wrong, what to do) for folders agentk cannot set up. Tables inside
    archives (en_train.csv.zip, sample_submission.csv.7z, data.zip holding train.csv.zip) are looked at in a
    temporary folder, so nothing of the workspace is written before the folder is known to be good.
    A task agentk cannot do ("unsupported task: <kind> (<evidence>)") is raised too, unless try_unsupported:
    then that line is returned (None for a supported task) and the folder's other checks are skipped."""
    given, source = str(source), Path(source)
    if not source.exists():
        if re.match(r"[a-z][a-z0-9+.-]*:/", given, re.I):  # a URL (a Path keeps one slash of "://")
            raise BadInput(
                f"{given} is not a Kaggle competition URL: give https://www.kaggle.com/competitions/<name> "
                "or a local competition folder"
            )
        raise BadInput(f"no such folder: {source}")
    if not source.is_dir():
        raise BadInput(f"{source} is not a folder: unzip the competition download and point agentk at the folder")
    for archive in (p for p in source.iterdir() if is_archive(p)):
        members(archive)  # a broken archive is bad input now, not a failed stage later
    with tempfile.TemporaryDirectory(prefix="agentk-check-") as tmp:
        view = Path(tmp)
        link_children(source.resolve(), view)
        unpack_beside(source.resolve(), view, tables_only=True)
        class_tables_as_one(view)  # one table per class, the class in its name
        parts_as_one(view)  # a split in parts (one table per class whose rows carry it too): judged whole
        arrays_as_tables(view)  # X_train.npy, y_train.npy, X_test.npy: the tables fetch will write
        # before any other check: say what agentk cannot do, not what is missing
        reason = unsupported_task(view)
        if not reason:
            positions_as_rows(view)  # records of per-position lists, one row per position
            long_as_wide(view)  # a long sample's wide form, and a test table of its keys
            label_sets_as_columns(view)  # label sets as the sample's label columns
            rewrites_as_ranks(view)  # a target rewriting an input as the rank of its rewrite
            reason = check_tables(view, source)
    if reason and not try_unsupported:
        raise BadInput(reason)
    return reason


PLAIN_FOLDER_TABLES = 50  # a sub-folder of more tables (per-sample files) is linked whole, never recoded


def link_children(source: Path, raw: Path, plain: bool = False) -> None:
    """Link the folder's files into raw/ (plain: tables that are not plain UTF-8 CSV become plain copies instead,
    in the sub-folders of a few tables too, which are then made in raw/ and their files linked one by one)."""
    for child in sorted(source.iterdir()):
        link = raw / child.name
        if child.name.startswith("."):
            continue
        made = link.is_dir() and not link.is_symlink()  # by a fetch killed part-way: it goes on filling it
        if child.is_dir() and not child.is_symlink() and (made or not link.exists()):
            # made in raw/ where something is written into it: its tables recoded, its zipped tables unpacked
            if made or (plain and _holds_tables_to_recode(child)) or _holds_table_archives(child):
                link.mkdir(exist_ok=True)
                link_children(child, link, plain=plain)
                continue
        if not link.exists() and not link.is_symlink() and not (plain and plain_copy(child, link)):
            link.symlink_to(child)


def _holds_table_archives(folder: Path) -> bool:
    """A few archives of tables (train/low.csv.zip, train/high.csv.zip): unpacked where they are, so that the
    folder still groups them."""
    archives = [p for p in walk(folder, 1) if is_archive(p)][: PLAIN_FOLDER_TABLES + 1]
    return 0 < len(archives) <= PLAIN_FOLDER_TABLES and any(holds_tables(a) for a in archives)


def _holds_tables_to_recode(folder: Path) -> bool:
    tables = [p for p in walk(folder, 1) if p.name.lower().endswith((".csv", ".tsv"))][: PLAIN_FOLDER_TABLES + 1]
    return len(tables) <= PLAIN_FOLDER_TABLES and any(_plain_form(t) is not None for t in tables)


def check_tables(folder: Path, source: Path) -> str | None:
    """The checks of a competition folder's tables and split folders (`source` names it in messages): raises
    BadInput for bad input, returns the reason for a task agentk cannot do (None when it can)."""
    tables = find_tables(folder)
    if "sample" not in tables:
        found = [p.relative_to(folder).as_posix() for p in candidates(folder)]
        raise BadInput(
            f"no sample submission in {source}: found "
            + (f"the tables {', '.join(found[:6])}" if found else "no tables")
            + ", none named like a sample submission (*sample*, *submission*); agentk needs one to know the "
            "submission format: add it to the folder"
        )
    for role in ("train", "test"):
        unreadable = [  # .npy arrays are read where features and labels fit (else: no training data, and why)
            p.name
            for p in sorted(folder.iterdir())
            if p.is_file() and role_of(p) == role and not is_table(p) and p.suffix.lower() != ".npy"
        ]
        if role not in tables and not split_folders(folder, role) and unreadable:
            return (
                f"unsupported task: the {role} data in {source} is {', '.join(unreadable[:3])}, a format agentk does "
                "not read (it reads CSV, TSV, JSON, parquet, feather, .npy arrays and per-sample files); convert it"
            )
    if "train" not in tables and not split_folders(folder, "train"):
        if texts := text_tables(folder):
            return unsupported(
                "tables in text files",
                f"{', '.join(texts[:3])}{' ...' if len(texts) > 3 else ''} hold columns under a header line, and no "
                "table agentk reads (CSV, TSV, JSON, parquet, feather, .npy arrays) holds the training data",
            )
        raise BadInput(
            f"no training data in {source}: looked for a table named train* (or labels*), a train/ folder or "
            "archive, tables whose values make them train (the test's columns beside the sample's targets) and "
            "whole-split .npy arrays (features and a label vector of as many rows); found "
            + _seen(folder)
            + ": add the training data"
        )
    if "test" not in tables and not split_folders(folder, "test") and not any(p.is_dir() for p in folder.iterdir()):
        raise BadInput(f"no test data in {source}: expected test*.csv, a test/ folder or test.zip")
    train_folders = split_folders(folder, "train")
    if (
        "train" not in tables
        and all(p.is_dir() for p in train_folders)
        and not any(is_archive(f) for p in train_folders for f in walk(p))
        and not pixels_sampled(folder)
    ):  # archives, the split's or inside its folder: checked once unpacked; image pairs scored per pixel: written as
        # tables by fetch
        files = modality_files(folder) | modality_files(folder, {"clips": AUDIO_DECODED})  # clips: pictured later
        if not any(listing_source(m, paths) for m, paths in files.items()):
            raise BadInput(
                f"the training files in {source} carry no labels: expected class sub-folders "
                "(train/<class>/...), labels in the file names (cat.1.jpg, x_TRAIN7_1.aif) or a labels CSV"
            )
    train = read_table(tables["train"]) if "train" in tables else None
    test = read_table(tables["test"]) if "test" in tables else None
    sample = read_table(tables["sample"], dtype=str)
    if sample.shape[1] < 2:
        raise BadInput(
            f"{tables['sample'].name} has one column: a submission needs an id column and a prediction column"
        )
    if reason := unsupported_reason(folder, train, sample, test):
        return reason
    if reason := hopeless_reason(
        None if train is None else (tables["train"].name, train),
        None if test is None else (tables["test"].name, test),
        (tables["sample"].name, sample),
    ):
        raise BadInput(reason)
    return None


TEXT_TABLE_LINES = 20  # lines of a .txt file read to tell a table from prose


def text_tables(folder: Path) -> list[str]:
    """.txt files (not the description) that are tables: a header line of two or more names split by commas or
    tabs, and nearly every line read split so into two fields or more (a row of an empty label list has one, a
    row of a label list more)."""
    found = []
    described = find_description(folder)
    for p in walk(folder, 3):
        if p.suffix.lower() != ".txt" or p == described:
            continue
        try:
            with open(p, encoding="utf-8", errors="replace") as f:
                lines = [line.rstrip("\r\n") for _, line in zip(range(TEXT_TABLE_LINES), f)]
        except OSError:
            continue
        sep = next((s for s in (",", "\t") if lines and lines[0].count(s)), None)
        header = lines[0].split(sep) if sep else []
        names = all(h.strip() and len(h) <= 40 and not h.strip().replace(".", "").isdigit() for h in header)
        rows = [line.split(sep) for line in lines[1:] if line] if sep else []
        if len(rows) >= 2 and names and sum(len(r) >= 2 for r in rows) >= 0.8 * len(rows):
            found.append(p.relative_to(folder).as_posix())
    return found


def _seen(folder: Path) -> str:
    """What a competition folder holds, for a message: its files by extension, with an example each."""
    by_ext: dict[str, list[str]] = {}
    for p in walk(folder, 4):
        by_ext.setdefault(p.suffix.lower() or "(no extension)", []).append(p.relative_to(folder).as_posix())
    if not by_ext:
        return "no files"
    return ", ".join(
        f"{len(names)} {ext} file{'s' * (len(names) > 1)} (e.g. {names[0]})" if len(names) > 1 else names[0]
        for ext, names in sorted(by_ext.items(), key=lambda kv: -len(kv[1]))[:8]
    )


def sections(markdown: str) -> dict[str, str]:
    """Split a description into evaluation and data parts by its headings (the whole text stays too)."""
    parts: dict[str, list[str]] = {"evaluation": [], "data": []}
    current, level = None, 0
    for line in markdown.splitlines():
        m = re.match(r"^(#{1,6})\s+(.*)", line)
        if m:
            depth, title = len(m.group(1)), m.group(2).lower()
            if current is None or depth <= level:
                current, level = None, depth
                if re.search(r"evaluat|metric|scor", title):
                    current = "evaluation"
                elif re.search(r"\bdata\b|dataset|files", title):
                    current = "data"
        if current:
            parts[current].append(line)
    out = {k: "\n".join(v).strip() for k, v in parts.items()}
    if not out["evaluation"]:  # no headings: keep the sentences that talk about scoring
        out["evaluation"] = "\n".join(l for l in markdown.splitlines() if re.search(r"evaluat|scored|metric", l, re.I))
    return out


def write_pages(w: Workspace, description: str, evaluation: str, data: str, meta: dict) -> None:
    """task/: the description (written last: the fetch check looks for it), its evaluation and data parts, meta.json."""
    write_text(w.evaluation, evaluation)
    write_text(w.data_page, data)
    write_json(w.meta, meta)
    write_text(w.description, description)


def plain_copy(table: Path, dest: Path) -> bool:
    """Write a CSV/TSV that is not plain UTF-8 CSV to dest as one, so that every program reading raw/ (generated
    ones too) reads it with pandas' defaults: other encodings (UTF-16, latin-1...) recoded; a .csv delimited by
    ";", tab or "|" written with commas, its numbers with decimal commas ("0,126") with points. False (nothing
    written) for plain CSVs and other files."""
    form = _plain_form(table)
    if form is None:
        return False
    encoding, sep, decimal, recode_only = form
    tmp = dest.with_name(f".{dest.name}.plain")
    if recode_only:  # the text is copied as it is
        with open(table, encoding=encoding, newline="") as src, open(tmp, "w", encoding="utf-8", newline="") as out:
            shutil.copyfileobj(src, out)
    else:
        frame = pd.read_csv(table, sep=sep, dtype=str, keep_default_na=False, encoding=encoding)
        for c in frame.columns:
            cells = frame[c][frame[c] != ""]
            if decimal == "," and len(cells) and cells.str.fullmatch(r"[+-]?\d+(,\d+)?").all():
                frame[c] = frame[c].str.replace(",", ".", regex=False)
        frame.to_csv(tmp, index=False)
    tmp.replace(dest)
    return True


def _plain_form(table: Path) -> tuple[str | None, str, str, bool] | None:
    """How a CSV/TSV differs from plain UTF-8 CSV: (encoding, delimiter, decimal mark, whether recoding is all it
    needs); None for plain CSVs and other files."""
    name = table.name.lower()
    if not table.is_file() or not name.endswith((".csv", ".tsv")):
        return None
    encoding, tsv = text_encoding(table, None), name.endswith(".tsv")
    sep, decimal = ("\t", ".") if tsv else csv_dialect(table, encoding)
    recode_only = tsv or (sep, decimal) == (",", ".")
    return None if encoding is None and recode_only else (encoding, sep, decimal, recode_only)


def fetch_local(source: Path, ws: Path, try_unsupported: bool = False) -> None:
    check_source(source, try_unsupported)
    w = Workspace(ws)
    raw = w.raw
    raw.mkdir(parents=True, exist_ok=True)
    link_children(Path(source).resolve(), raw, plain=True)
    unpack_beside(Path(source).resolve(), raw)  # train.zip -> raw/train/; the user's folder stays untouched
    for table in (p for p in walk(raw, 3) if is_table(p) and p.resolve().is_relative_to(raw.resolve())):
        plain_copy(table, table)  # unpacked tables in other encodings or dialects too (never the user's own files)
    normalised = normalise(raw) + series_as_images(raw) + clips_as_images(raw)
    found = find(raw)
    desc = find_description(raw)
    text = desc.read_text(errors="replace") if desc else ""
    parts = sections(text)
    write_pages(
        w,
        text or "(no description text was found in the competition folder)",
        parts["evaluation"] or "",
        parts["data"] or "",
        {
            "name": competition_name(Path(source)),
            "source": str(Path(source).resolve()),
            "description_file": desc.name if desc else None,
            "files": [str(p.relative_to(raw)) for p in walk(raw, 1)][:200],
            "tables": {role: str(p.relative_to(raw)) for role, p in found.paths.items()},
            "tables_why": {**found.why, **({"normalised": normalised} if normalised else {})},
        },
    )


def fetch_kaggle(url: str, ws: Path, try_unsupported: bool = False) -> None:
    """Download and extract the competition's files into raw/, scrape its tabs into task/ (the API's
    description when no browser is available)."""

    slug = parse_competition_url(url)
    w = Workspace(ws)
    tool = KaggleTool()
    meta = tool.metadata(slug)
    tool.download(slug, w.raw)
    for table in [p for p in walk(w.raw, 3) if is_table(p)]:
        plain_copy(table, table)
    check_source(w.raw, try_unsupported)
    normalised = normalise(w.raw) + series_as_images(w.raw) + clips_as_images(w.raw)
    found = find(w.raw)
    parts = urlsplit(url)
    try:
        tabs = scrape_competition(f"{parts.scheme}://{parts.netloc}", slug, w.task)
        scraped = "browser"
    except ScrapeUnavailable as exc:
        tabs, scraped = {}, f"API description ({exc})"
    description = "\n\n".join(f"# {tab.title()}\n\n{text}" for tab, text in tabs.items()) or str(
        meta.get("description") or ""
    )
    split = sections(description)
    write_pages(
        w,
        description or f"(no description could be fetched for {slug})",
        tabs.get("evaluation") or split["evaluation"] or str(meta.get("evaluation_metric") or ""),
        tabs.get("data") or split["data"],
        {
            "name": slug,
            "slug": slug,
            "source": url,
            "scraped_with": scraped,
            "kaggle": meta,
            "files": [str(p.relative_to(w.raw)) for p in walk(w.raw, 1)][:200],
            "tables": {role: str(p.relative_to(w.raw)) for role, p in found.paths.items()},
            "tables_why": {**found.why, **({"normalised": normalised} if normalised else {})},
        },
    )


def make(source: str, try_unsupported: bool = False) -> Stage:
    """try_unsupported: the user asked an LLM policy to try a task agentk cannot do (`--try-unsupported`)."""

    if parse_competition_url(str(source)):
        tool = lambda ws: fetch_kaggle(str(source), ws, try_unsupported)  # noqa: E731
    else:
        tool = lambda ws: fetch_local(Path(source), ws, try_unsupported)  # noqa: E731
    return Stage(FETCH, GOAL, kind="tool", tool=tool, checks=[Check(check_fetched)], role=ROLE_TASK)
