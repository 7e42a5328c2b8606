"""Views of a competition's raw files, for the expert and for prompts: which tables are the train, test and
sample-submission ones (agentk.competition.tables decides; find_tables is its short answer), the description, a
compact file tree and a table's head. The prompt views (data_view, task_view) serve the LLM policy's code prompts
and the text stages' own prompts alike.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pandas as pd

from agentk.competition.files import TEXT_DOC_EXT, walk
from agentk.competition.readers import read_table
from agentk.competition.tables import find
from agentk.workspace import Workspace

MAX_VIEW = 3000  # characters of one table's view in a prompt


def file_tree(root: Path, max_lines: int = 40, per_folder: int = 6) -> str:
    """A compact `tree` view: big folders are summarised by count and extensions."""
    root = Path(root)
    lines: list[str] = []

    def visit(folder: Path, indent: str, above: frozenset[str]) -> None:
        try:
            children = sorted(c for c in folder.iterdir() if not c.name.startswith("."))
        except OSError:
            return
        files = [c for c in children if not c.is_dir()]
        for d in (c for c in children if c.is_dir()):
            real = os.path.realpath(d)
            if real in above:  # a link back to a folder above (`a -> .`): shown, not followed
                lines.append(f"{indent}{d.name}/ (a link to a folder above)")
                continue
            n = sum(1 for _ in walk(d, 3))
            lines.append(f"{indent}{d.name}/ ({n} files)")
            visit(d, indent + "  ", above | {real})
        for f in files[:per_folder]:
            lines.append(f"{indent}{f.name} ({_size(f)})")
        if len(files) > per_folder:
            exts = sorted({"".join(f.suffixes[-1:]).lower() for f in files})
            lines.append(f"{indent}... {len(files) - per_folder} more files ({', '.join(exts)})")

    visit(root, "", frozenset({os.path.realpath(root)}))
    return "\n".join(
        lines[:max_lines] + ([f"... ({len(lines) - max_lines} more lines)"] if len(lines) > max_lines else [])
    )


def _size(path: Path) -> str:
    try:
        n = path.stat().st_size
    except OSError:  # a dangling link, a link loop (loop1 -> loop2 -> loop1)
        return "unreadable"
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024:
            return f"{n:.0f}{unit}"
        n /= 1024
    return f"{n:.0f}TB"


def table_view(path: Path, rows: int = 5) -> str:
    """Head, dtypes and missing counts of a table, for prompts and the expert's log."""
    df = read_table(path)
    info = pd.DataFrame({"dtype": df.dtypes.astype(str), "missing": df.isna().sum(), "unique": df.nunique()})
    return (
        f"{path.name}: {len(df)} rows x {df.shape[1]} columns\n{df.head(rows).to_string(max_colwidth=40)}\n\n"
        f"{info.to_string()}"
    )


def find_tables(raw: Path) -> dict[str, Path]:
    """The train, test and sample-submission tables of a competition folder, and a separate train-labels table
    ("labels") when the targets are not in the train table (agentk.competition.tables says how and why)."""
    return dict(find(raw).paths)


def competition_name(folder: Path) -> str:
    """A local competition's name: its folder's, or the parent's for a `public/` folder (the prepared layout
    <competition>/public beside <competition>/private, as in MLE-bench), whose own name says nothing."""
    folder = Path(folder).resolve()
    return folder.parent.name if folder.name == "public" and folder.parent.name else folder.name


def find_description(raw: Path) -> Path | None:
    """The competition's description text: description.md, README, overview... (largest wins)."""
    docs = [p for p in walk(raw, 1) if p.name.lower().endswith(TEXT_DOC_EXT)]
    preferred = [p for p in docs if re.search(r"descr|overview|readme|competition|task", p.name.lower())]
    pool = preferred or docs
    return max(pool, key=lambda p: p.stat().st_size) if pool else None


# ---- views of a workspace for prompts (paper 2, Appendix D: summary, directory tree, tables) ---------------
def cut(text: str, limit: int = MAX_VIEW) -> str:
    return text if len(text) <= limit else text[:limit] + f"\n... [{len(text) - limit} characters cut]"


def data_view(ws: Path) -> str:
    raw = Workspace(ws).raw
    parts = [f"Directory tree of {raw.name}/:\n{file_tree(raw, max_lines=30)}"]
    for role, path in find_tables(raw).items():
        parts.append(f"{role} table {path.relative_to(ws)}:\n{cut(table_view(path))}")
    return "\n\n".join(parts)


def task_view(ws: Path) -> str:
    """The summary once the summarise stage wrote it, else the competition's description."""
    w = Workspace(ws)
    if w.summary.exists():
        return f"Task summary:\n{cut(w.summary.read_text(), 4000)}"
    return f"Competition description:\n{cut(w.description.read_text(), 6000)}"
