"""Competition archives (zip, tar, gz, 7z): Kaggle ships images and even CSVs zipped.

`extract_all` unpacks a downloaded folder in place; `unpack_beside` extracts the archives of a user's
folder into the workspace without touching the originals."""

from __future__ import annotations

import gzip
import os
import re
import shutil
import tarfile
import zipfile
from pathlib import Path

from agentk.competition.files import TABLE_EXT
from agentk.core.errors import BadInput

ARCHIVE_EXT = (".zip", ".tar", ".tar.gz", ".tgz", ".gz", ".7z")
_STEM = re.compile(r"(\.tar\.gz|\.tgz|\.tar|\.zip|\.gz|\.7z)$", re.I)


def is_archive(p: Path) -> bool:
    return p.is_file() and p.name.lower().endswith(ARCHIVE_EXT)


def extract(archive: Path, into: Path, delete: bool = True) -> None:
    """Unpack one archive into `into` (and delete it unless told not to)."""
    name = archive.name.lower()
    try:
        if name.endswith(".zip"):
            with zipfile.ZipFile(archive) as z:
                z.extractall(into)
        elif name.endswith((".tar", ".tar.gz", ".tgz")):
            with tarfile.open(archive) as t:
                t.extractall(into, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
        elif name.endswith(".gz"):
            with gzip.open(archive) as src, open(into / archive.name[:-3], "wb") as out:
                shutil.copyfileobj(src, out)
        elif name.endswith(".7z"):
            try:
                import py7zr
            except ImportError:
                raise BadInput(f"{archive.name} is a 7z archive: install py7zr (uv add py7zr) to extract it") from None
            try:
                with py7zr.SevenZipFile(archive) as z:
                    z.extractall(into)
            except py7zr.exceptions.ArchiveError as exc:
                raise zipfile.BadZipFile(str(exc)) from None  # one broken-archive message for every format
    except (zipfile.BadZipFile, tarfile.TarError, EOFError, gzip.BadGzipFile) as exc:
        raise BadInput(f"{archive.name} is a broken archive ({exc}): re-download the competition data") from None
    if delete:
        archive.unlink()
    shutil.rmtree(into / "__MACOSX", ignore_errors=True)


def members(archive: Path) -> list[str]:
    name = archive.name.lower()
    try:
        if name.endswith(".zip"):
            with zipfile.ZipFile(archive) as z:
                return z.namelist()
        if name.endswith((".tar", ".tar.gz", ".tgz")):
            with tarfile.open(archive) as t:
                return t.getnames()
        if name.endswith(".7z"):
            import py7zr

            with py7zr.SevenZipFile(archive) as z:
                return z.getnames()
    except (zipfile.BadZipFile, tarfile.TarError, EOFError) as exc:
        raise BadInput(f"{archive.name} is a broken archive ({exc}): re-download the competition data") from None
    except Exception as exc:  # noqa: BLE001 - py7zr's own errors
        if name.endswith(".7z") and type(exc).__module__.startswith("py7zr"):
            raise BadInput(f"{archive.name} is a broken archive ({exc}): re-download the competition data") from None
        raise
    return [archive.name[:-3]]  # .gz: one file


def _tops(archive: Path) -> set[str]:
    return {m.strip("/").split("/")[0] for m in members(archive) if m.strip("/") and not m.startswith("__MACOSX")}


def unpacked_name(archive: Path) -> str | None:
    """What an archive becomes beside itself: its one top-level entry, or a folder named after it
    (images.zip -> images/). None when it holds nothing."""
    tops = _tops(archive)
    if not tops:
        return None
    return next(iter(tops)) if len(tops) == 1 else _STEM.sub("", archive.name)


def extract_all(root: Path, depth: int = 5) -> None:
    """Extract archives found anywhere under root, nested ones too, each where `unpacked_name` says."""
    for _ in range(depth):
        archives = [p for p in root.rglob("*") if is_archive(p)]
        if not archives:
            return
        for archive in archives:
            into = archive.parent if len(_tops(archive)) <= 1 else archive.parent / _STEM.sub("", archive.name)
            into.mkdir(exist_ok=True)
            extract(archive, into)


def holds_tables(archive: Path) -> bool:
    """Whether an archive holds tables or further archives (not only per-sample files such as images)."""

    return any(m.lower().endswith(TABLE_EXT + ARCHIVE_EXT) for m in members(archive))


def _folders(folder: Path) -> list[Path]:
    return [d for d in folder.iterdir() if d.is_dir() and not d.is_symlink() and not d.name.startswith(".")]


def unpack_beside(source: Path, raw: Path, tables_only: bool = False) -> list[str]:
    """Extract the top-level archives of `source` into `raw`, and the archives nested in them, skipping those
    whose content is already there (Kaggle folders often hold both train/ and train.zip). Extraction goes
    through a partial folder so a killed run leaves nothing that looks complete. tables_only: only archives
    holding tables (what checking a folder needs, without unpacking its images). Returns the names created."""
    created = []
    readable = (".csv.gz", ".tsv.gz")  # tables read compressed: no copy needed
    top = [p for p in Path(source).iterdir() if is_archive(p) and not p.name.lower().endswith(readable)]
    # tables zipped in a sub-folder (data/train.csv.zip) come out in raw/'s folder of that name where fetch made
    # one (a few zipped tables: train/low.csv.zip, data/train/low.csv.zip), else at the top of raw/: raw/data links
    # to the user's folder, which nothing writes into. Deeper folders are looked into only where fetch made them.
    nested, folders = [], _folders(Path(source))
    while folders:
        d = folders.pop()
        nested += [p for p in d.iterdir() if is_archive(p) and not p.name.lower().endswith(readable)]
        made = raw / d.relative_to(source)
        if made.is_dir() and not made.is_symlink():
            folders += _folders(d)
    for archive in sorted(top) + sorted(nested):
        name, dest = unpacked_name(archive), raw / archive.parent.relative_to(source)
        dest = raw if archive in top or not dest.is_dir() or dest.is_symlink() else dest
        if name is None or (dest / name).exists() or (Path(source) / name).exists() or (archive.parent / name).exists():
            continue
        if (tables_only or archive not in top) and not holds_tables(archive):
            continue
        partial = dest / f".partial-{archive.name}"
        shutil.rmtree(partial, ignore_errors=True)
        partial.mkdir(parents=True)
        try:
            into = partial if len(_tops(archive)) == 1 else partial / name
            into.mkdir(exist_ok=True)
            extract(archive, into, delete=False)
            extract_all(partial)  # archives inside the archive (data.zip holding train.csv.zip)
            # its one entry, or what that became when it was an archive itself (data.zip holding only x.csv.zip)
            outs = [partial / name] if (partial / name).exists() else sorted(partial.iterdir())
            for out in outs:
                if not (dest / out.name).exists():
                    os.replace(out, dest / out.name)
                    created.append((dest / out.name).relative_to(raw).as_posix())
        finally:
            shutil.rmtree(partial, ignore_errors=True)
    return created
