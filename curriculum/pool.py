"""The curriculum's pool: a text file listing competitions, and what the selection needs to know of each.

One competition per line: a local folder in Kaggle layout (relative paths are resolved against the pool
file's folder) or a Kaggle competition URL. `#` at a line's start or after a space starts a comment; blank lines are skipped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from agentk.competition.dataview import competition_name, file_tree, find_description
from agentk.competition.files import TEXT_DOC_EXT, is_table, walk
from agentk.core.errors import BadInput
from agentk.workspace import Workspace
from tools.kaggle import parse_competition_url


@dataclass(frozen=True)
class Task:
    name: str  # the workspace folder's name: the folder's name or the competition's slug
    source: str  # what `agentk setup` is given: an absolute folder path or the URL
    is_url: bool


def read_pool(pool_file: Path) -> list[Task]:
    pool_file = Path(pool_file)
    if not pool_file.is_file():
        raise BadInput(f"pool file {pool_file} not found: give a text file with one competition folder or URL per line")
    tasks: list[Task] = []
    for n, raw in enumerate(pool_file.read_text().splitlines(), 1):
        line = re.split(r"(?:^|\s)#", raw, maxsplit=1)[0].strip()  # a URL's own #fragment is not a comment
        if not line:
            continue
        slug = parse_competition_url(line)
        if slug:
            task = Task(slug, line, True)
        elif "://" in line:
            raise BadInput(
                f"{pool_file.name} line {n}: {line} is not a Kaggle competition URL "
                f"(https://www.kaggle.com/competitions/<slug>)"
            )
        else:
            folder = (pool_file.parent / line).resolve()
            if not folder.is_dir():
                raise BadInput(f"{pool_file.name} line {n}: folder {folder} not found")
            task = Task(competition_name(folder), str(folder), False)
        clash = next((t for t in tasks if t.name == task.name), None)
        if clash:  # two tasks would share one workspace
            raise BadInput(f"{pool_file.name} line {n}: {task.name} is already in the pool ({clash.source})")
        tasks.append(task)
    if not tasks:
        raise BadInput(f"pool file {pool_file} lists no competitions")
    return tasks


def data_root(task: Task, ws: Path) -> Path | None:
    """Where the task's files are: its folder, or for a URL the workspace's raw/ once setup fetched it."""
    if not task.is_url:
        return Path(task.source)
    raw = Workspace(ws).raw
    return raw if raw.is_dir() else None


def describe(task: Task, ws: Path) -> tuple[str, str]:
    """(description text, data-tree description) of a task; a URL's are known only after its setup fetched
    them, so until then the description is its slug and the tree is empty."""
    fetched = Workspace(ws).description
    if fetched.is_file():
        description = fetched.read_text(errors="replace")
    elif not task.is_url and (doc := find_description(Path(task.source))):
        description = doc.read_text(errors="replace")
    else:
        description = task.name.replace("-", " ")
    root = data_root(task, ws)
    tree = file_tree(root) if root else ""
    return description, tree


def ease(task: Task, ws: Path) -> tuple:
    """How easy a data tree looks, smaller first: tabular-only folders before ones holding images, audio or
    other media; then fewer files; then smaller total size; a URL not fetched yet comes last (unknown)."""
    root = data_root(task, ws)
    if root is None:
        return (2, 0, 0, task.name)
    files = list(walk(root, 4))
    media = any(not is_table(f) and not f.name.lower().endswith(TEXT_DOC_EXT) for f in files)
    return (int(media), len(files), sum(f.stat().st_size for f in files), task.name)
