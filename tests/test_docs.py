"""The README and docs/*.md: every relative link resolves (the file, and the #anchor where given, by GitHub's rule for
turning a heading into an anchor), and the README stays short enough to read in five minutes."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from urllib.parse import unquote

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
README_MAX_BYTES = 10_240

FENCE = re.compile(r"^\s*(```|~~~)")
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")


def prose_lines(text: str) -> list[str]:
    """The lines outside fenced code blocks."""
    lines, fenced = [], False
    for line in text.splitlines():
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            lines.append(line)
    return lines


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: its text as rendered (no markup, a link's text), lower-cased, punctuation but
    hyphens and underscores dropped, each space a hyphen."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = text.replace("`", "").replace("*", "")
    text = re.sub(r"<[^>]+>", "", text).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    seen: Counter[str] = Counter()
    out = set()
    for line in prose_lines(page.read_text(encoding="utf-8")):
        m = HEADING.match(line)
        if not m:
            continue
        base = slug(m.group(2))
        out.add(base if seen[base] == 0 else f"{base}-{seen[base]}")
        seen[base] += 1
    return out


def links(page: Path) -> list[str]:
    out = []
    for line in prose_lines(page.read_text(encoding="utf-8")):
        out += LINK.findall(CODE_SPAN.sub("", line))
    return out


def test_slug_follows_githubs_rule() -> None:
    assert slug("The first command's time") == "the-first-commands-time"
    assert slug("Real competitions, quick budget") == "real-competitions-quick-budget"
    assert slug("`agentk.core`: the MDP") == "agentkcore-the-mdp"
    assert slug("Configuring an LLM") == "configuring-an-llm"


def test_links_skip_code() -> None:
    page = 'see [a](a.md) and `[b](b.md)`\n```\n[c](c.md)\n```\n![d](d.png "title")\n'
    found = []
    for line in prose_lines(page):
        found += LINK.findall(CODE_SPAN.sub("", line))
    assert found == ["a.md", "d.png"]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_relative_links_resolve(page: Path) -> None:
    broken = []
    for target in links(page):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):  # http:, https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        dest = (page.parent / unquote(path)).resolve() if path else page
        if not dest.exists():
            broken.append(f"{target}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            broken.append(f"{target}: no heading #{anchor} in {dest.relative_to(ROOT)}")
    assert not broken, f"{page.relative_to(ROOT)}: " + "; ".join(broken)


def test_every_page_is_linked_from_the_readme() -> None:
    readme = set(links(ROOT / "README.md"))
    missing = [p.name for p in PAGES[1:] if f"docs/{p.name}" not in readme]
    assert not missing, f"README.md links none of {missing}"


def test_readme_is_short() -> None:
    size = (ROOT / "README.md").stat().st_size
    assert size <= README_MAX_BYTES, f"README.md is {size} bytes; move detail to docs/ (at most {README_MAX_BYTES})"


def test_readme_opens_with_the_two_commands() -> None:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert lines[2] == "```bash"
    assert lines[3].startswith("pip install uv && uv sync --compile-bytecode && uv run agentk setup examples/")
    assert lines[4].startswith("pip install uv && tests/run")
    assert (ROOT / "tests" / "run").exists()
