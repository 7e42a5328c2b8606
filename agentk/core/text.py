"""Long output cut for people and prompts: the head and the tail, where tracebacks end."""

from __future__ import annotations


def truncate(text: str, limit: int = 4000) -> str:
    """Keep the head and the tail (where tracebacks end) of long output."""
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n... [{len(text) - 2 * half} characters cut] ...\n{text[len(text) - half :]}"
