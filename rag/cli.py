"""`agentk memory ...`: look into and clean the long-term memory (fixes, RAG+ and RAG- experiences, hypotheses
that passed)."""

from __future__ import annotations

import sys
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from agentk.core.errors import BadInput

memory_app = typer.Typer(
    help="Long-term memory: fixes of past errors and task experiences (RAG+ / RAG-).", no_args_is_help=True
)
console = Console()
KIND_HELP = (
    "fixes (errors fixed during setups), pos (RAG+: solved tasks), neg (RAG-: failed tasks) or hypotheses "
    "(the expert's decisions that passed on a hypothesis other than its first)."
)
MEMORY_HELP = "The memory's folder, e.g. a curriculum's --memory \\[default: $AGENTK_MEMORY or ~/.agentk/memory]."


def _memory(kind: str | None, path: Path | None):
    from rag.memory import KINDS, Memory

    if kind is not None and kind not in KINDS:
        raise BadInput(f"unknown kind {kind!r}: use fixes, pos, neg or hypotheses")
    if path is not None and not path.is_dir():  # a mistyped folder must not become a new, empty memory
        raise BadInput(f"no memory at {path}: give the folder a curriculum or setup wrote its memory to")
    return Memory(path)


def _show(rows: list[dict], kind: str) -> None:
    table = Table(title=f"{kind}: {len(rows)} entries")
    if kind == "fixes":
        cols = ["stage", "competition", "error"]
    elif kind == "hypotheses":
        cols = ["decision", "competition", "passed", "shape"]
    else:
        cols = ["task", "outcome", "scores"]
    for c in cols + (["distance"] if rows and "distance" in rows[0] else []):
        table.add_column(c)
    for r in rows:
        cells = [" ".join(str(r.get(c, "")).split())[:100] for c in cols]
        table.add_row(*cells, *([f"{r['distance']:.3f}"] if "distance" in r else []))
    console.print(table)


@memory_app.command("list")
def list_(
    kind: str = typer.Option("fixes", "--kind", help=KIND_HELP),
    memory: Path | None = typer.Option(None, "--memory", help=MEMORY_HELP),
) -> None:
    """List the entries of one kind, oldest first."""
    _show(_memory(kind, memory).list(kind), kind)


@memory_app.command()
def search(
    query: str = typer.Argument(..., help="Text to search for (an error message, a task description)."),
    kind: str = typer.Option("fixes", "--kind", help=KIND_HELP),
    k: int = typer.Option(5, "-k", help="How many entries to show."),
    memory: Path | None = typer.Option(None, "--memory", help=MEMORY_HELP),
) -> None:
    """The entries nearest in meaning to QUERY."""
    _show(_memory(kind, memory).search(kind, query, k), kind)


@memory_app.command()
def clear(
    kind: str = typer.Option(None, "--kind", help=KIND_HELP + " All kinds when left out."),
    yes: bool = typer.Option(False, "--yes", help="Do not ask for confirmation."),
    memory_dir: Path | None = typer.Option(None, "--memory", help=MEMORY_HELP),
) -> None:
    """Delete the entries of one kind (or all)."""
    memory = _memory(kind, memory_dir)
    what = kind or "all kinds"
    if not yes:
        if not sys.stdin or not sys.stdin.isatty():
            raise BadInput(f"refusing to clear {what} of {memory.path} without confirmation: pass --yes")
        typer.confirm(f"Delete {what} from {memory.path}?", abort=True)
    gone = memory.clear(kind)
    console.print(f"cleared {gone} entries ({what}) from {memory.path}", highlight=False)
