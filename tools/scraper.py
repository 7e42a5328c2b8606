"""Scrape a Kaggle competition's tabs (overview, evaluation, data, rules) to markdown with a headless chromium.

Kaggle renders its pages client-side, so a plain HTTP GET sees an empty shell: this drives the system's chromium
(never a browser playwright downloads) through playwright's sync API, waits until the main content stops changing,
strips the page chrome (nav, header, footer, banners, scripts) and converts the rest with a small HTML->markdown
converter. Raises ScrapeUnavailable when no chromium can be launched, so callers can fall back to the API's text.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import re
import shutil
import time
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urljoin

from agentk.core.fileio import write_text

TABS = ("overview", "evaluation", "data", "rules")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]


class ScrapeUnavailable(Exception):
    """No usable chromium (missing or fails to launch): fall back to the API's description."""


def find_chromium() -> str | None:
    """AGENTK_CHROMIUM when set (None if it is not an executable file), else the first system chromium/chrome found."""
    env = os.environ.get("AGENTK_CHROMIUM")
    if env:
        return env if os.path.isfile(env) and os.access(env, os.X_OK) else None
    for name in ("chromium", "/usr/bin/chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        if found := shutil.which(name):
            return found
    return None


# Runs in the page: pick the main content, drop chrome and hidden elements, return a cleaned HTML copy (+ its text size).
_EXTRACT_JS = r"""(measureOnly) => {
  const size = el => el ? (el.innerText || '').trim().length : 0;
  let root = document.querySelector('main, [role=main]');
  if (!size(root)) {
    const areas = [...document.querySelectorAll('[data-testid]')].filter(e => !e.closest('nav, header, footer'));
    root = areas.sort((a, b) => size(b) - size(a))[0];
  }
  if (!size(root)) root = document.body;
  if (measureOnly) return {size: size(root)};
  const all = [root, ...root.querySelectorAll('*')];
  all.forEach(el => { if (getComputedStyle(el).display === 'none') el.setAttribute('data-agentk-drop', ''); });
  const copy = root.cloneNode(true);
  all.forEach(el => el.removeAttribute('data-agentk-drop'));
  const junk = 'script, style, noscript, template, svg, canvas, iframe, nav, button, form, dialog, [data-agentk-drop], '
    + 'header:not(article header, section header), footer:not(article footer, section footer), [aria-hidden=true], '
    + '[role=navigation], [role=banner], [role=contentinfo], [role=tablist], [role=dialog], [role=alertdialog]';
  copy.querySelectorAll(junk).forEach(el => el.remove());
  copy.querySelectorAll('[id], [class]').forEach(el => {
    if (/cookie|consent|gdpr/i.test((el.id || '') + ' ' + (el.getAttribute('class') || ''))) el.remove();
  });
  return {size: size(root), html: copy.outerHTML, url: location.href};
}"""


def _in_worker_thread_if_async(fn, *args):
    """playwright's sync API refuses to run inside a running asyncio loop: run it in a worker thread there."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return fn(*args)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(fn, *args).result()


def scrape_competition(base_url: str, slug: str, out_dir: Path, timeout: float = 30) -> dict[str, str]:
    """Write out_dir/<tab>.md for each tab of <base_url>/competitions/<slug> that exists and has content; return them."""
    return _in_worker_thread_if_async(_scrape, base_url, slug, Path(out_dir), timeout)


def _scrape(base_url: str, slug: str, out_dir: Path, timeout: float) -> dict[str, str]:
    exe = find_chromium()
    if not exe:
        where = (
            f"AGENTK_CHROMIUM={os.environ['AGENTK_CHROMIUM']} is not an executable"
            if os.environ.get("AGENTK_CHROMIUM")
            else "no chromium found"
        )
        raise ScrapeUnavailable(f"{where}: install it (apt-get install chromium) or set AGENTK_CHROMIUM")
    try:
        from playwright.sync_api import Error as PlaywrightError
        from playwright.sync_api import sync_playwright
    except ImportError as e:
        raise ScrapeUnavailable(f"playwright is not installed: {e}") from e
    pages: dict[str, str] = {}
    with sync_playwright() as pw:
        try:
            browser = pw.chromium.launch(executable_path=exe, headless=True, args=CHROMIUM_ARGS, timeout=timeout * 1000)
        except PlaywrightError as e:
            raise ScrapeUnavailable(f"chromium at {exe} failed to launch: {str(e).splitlines()[0]}") from e
        try:
            for tab in TABS:
                context = browser.new_context()
                try:
                    text = _scrape_tab(context.new_page(), f"{base_url.rstrip('/')}/competitions/{slug}/{tab}", timeout)
                except PlaywrightError:
                    text = ""  # timed out or could not load: treat like a missing tab
                finally:
                    context.close()
                if text:
                    write_text(out_dir / f"{tab}.md", text + "\n")
                    pages[tab] = text
        finally:
            browser.close()
    return pages


def _scrape_tab(page, url: str, timeout: float) -> str:
    """Markdown of one tab, or '' when it 404s or has no content. Waits for client-side rendering to settle."""
    deadline = time.monotonic() + timeout
    response = page.goto(url, wait_until="domcontentloaded", timeout=timeout * 1000)
    if response is None or response.status >= 400:
        return ""
    try:
        page.wait_for_load_state("networkidle", timeout=max(1.0, deadline - time.monotonic()) * 1000)
    except Exception:  # long-polling pages never go idle: rely on the stability check below
        pass
    last, stable = -1, 0
    while time.monotonic() < deadline and stable < 2:  # main content's text unchanged over two polls
        size = page.evaluate(_EXTRACT_JS, True)["size"]
        stable, last = (stable + 1 if size == last and size > 0 else 0), size
        page.wait_for_timeout(250)
    got = page.evaluate(_EXTRACT_JS, False)
    return html_to_markdown(got["html"], got["url"])


# ---- HTML -> markdown -------------------------------------------------------------------------------------------

_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
_SKIP = {"script", "style", "noscript", "template", "svg", "head", "title", "button", "select", "textarea"}
_BLOCK = {
    "address",
    "article",
    "aside",
    "dd",
    "details",
    "div",
    "dl",
    "dt",
    "fieldset",
    "figcaption",
    "figure",
    "main",
    "p",
    "section",
    "summary",
    "body",
    "html",
}
_INDENT, _CODE = "\x00", "\x01"  # placeholders: list indentation and code blocks survive whitespace cleanup


class _Node:
    def __init__(self, tag: str, attrs: dict[str, str]):
        self.tag, self.attrs, self.children = tag, attrs, []

    def text(self) -> str:
        return "".join(c if isinstance(c, str) else ("\n" if c.tag == "br" else c.text()) for c in self.children)


class _TreeBuilder(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = _Node("root", {})
        self.stack = [self.root]

    def handle_starttag(self, tag, attrs):
        node = _Node(tag, {k: v or "" for k, v in attrs})
        self.stack[-1].children.append(node)
        if tag not in _VOID:
            self.stack.append(node)

    def handle_endtag(self, tag):
        for i in range(len(self.stack) - 1, 0, -1):
            if self.stack[i].tag == tag:
                del self.stack[i:]
                return

    def handle_data(self, data):
        self.stack[-1].children.append(data)


def html_to_markdown(html: str, base_url: str = "") -> str:
    """Markdown for an HTML fragment: headings, paragraphs, lists, links, images, code, tables, quotes."""
    builder = _TreeBuilder()
    builder.feed(html)
    builder.close()
    codes: list[str] = []
    md = _Converter(base_url, codes).render(builder.root)
    lines = []
    for line in md.split("\n"):
        line = line.strip(" \t")
        m = re.fullmatch(f"({_INDENT}*)(?:- |\\d+\\. )?{_CODE}(\\d+){_CODE}", line)
        if m:  # a code block: indent its lines like the list item it sits in
            first = line[: m.start(2) - 1].replace(_INDENT, " ")
            code = codes[int(m.group(2))].split("\n")
            lines += [first + code[0]] + [" " * len(first) + c if c else c for c in code[1:]]
        else:
            lines.append(line.replace(_INDENT, " "))
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


class _Converter:
    def __init__(self, base_url: str, codes: list[str]):
        self.base, self.codes = base_url, codes

    def inner(self, node: _Node) -> str:
        return "".join(self.render(c) for c in node.children)

    def render(self, node) -> str:
        if isinstance(node, str):
            return re.sub(r"\s+", " ", node)
        t, inner = node.tag, lambda: self.inner(node)
        if t in _SKIP:
            return ""
        if re.fullmatch(r"h[1-6]", t):
            return f"\n\n{'#' * int(t[1])} {_one_line(inner())}\n\n"
        if t == "pre":
            code = node.text().strip("\n")
            lang = next(
                (c[9:] for c in node.attrs.get("class", "").split() + _code_classes(node) if c.startswith("language-")),
                "",
            )
            self.codes.append(f"```{lang}\n{code}\n```")
            return f"\n\n{_CODE}{len(self.codes) - 1}{_CODE}\n\n"
        if t == "code":
            code = node.text().replace("\n", " ")
            return f"`{code}`" if code.strip() else ""
        if t == "a":
            text, href = _one_line(inner()), node.attrs.get("href", "")
            if not text or not href or href.startswith(("#", "javascript:")):
                return "" if text in ("#", "¶") else text  # heading anchors
            return f"[{text}]({urljoin(self.base, href)})"
        if t == "img":
            src = node.attrs.get("src", "")
            return f"![{node.attrs.get('alt', '')}]({urljoin(self.base, src)})" if src else ""
        if t in ("strong", "b", "em", "i"):
            mark = "**" if t in ("strong", "b") else "*"
            s = inner()
            return (
                f"{' ' if s[:1].isspace() else ''}{mark}{s.strip()}{mark}{' ' if s[-1:].isspace() else ''}"
                if s.strip()
                else s
            )
        if t == "br":
            return "\n"
        if t == "hr":
            return "\n\n---\n\n"
        if t in ("ul", "ol"):
            return self.list(node)
        if t == "table":
            return self.table(node)
        if t == "blockquote":
            body = re.sub(r"\n{2,}", "\n\n", inner().strip())
            return "\n\n" + "\n".join("> " + l.strip() for l in body.split("\n")) + "\n\n"
        if t in _BLOCK or t == "li":
            return f"\n\n{inner()}\n\n"
        return inner()

    def list(self, node: _Node) -> str:
        items, start = [], int(node.attrs.get("start", "1") or 1) if node.tag == "ol" else 1
        for i, li in enumerate(c for c in node.children if isinstance(c, _Node) and c.tag == "li"):
            marker = f"{start + i}." if node.tag == "ol" else "-"
            body = re.sub(r"\n[ \t]*(?:\n[ \t]*)+", "\n", self.inner(li).strip())
            body = "\n".join(l.strip(" ") for l in body.split("\n"))
            items.append(f"{marker} " + body.replace("\n", "\n" + _INDENT * (len(marker) + 1)))
        return "\n\n" + "\n".join(items) + "\n\n"

    def table(self, node: _Node) -> str:
        rows = [
            [
                _one_line(self.inner(c)).replace("|", "\\|")
                for c in tr.children
                if isinstance(c, _Node) and c.tag in ("td", "th")
            ]
            for tr in _rows(node)
        ]
        rows = [r for r in rows if r]
        if not rows:
            return ""
        width = max(map(len, rows))
        rows = [r + [""] * (width - len(r)) for r in rows]
        out = [rows[0], ["---"] * width, *rows[1:]]
        return "\n\n" + "\n".join("| " + " | ".join(r) + " |" for r in out) + "\n\n"


def _rows(node: _Node) -> list[_Node]:
    """The table's <tr>s (through thead/tbody/tfoot, not into nested tables)."""
    out = []
    for c in node.children:
        if isinstance(c, _Node):
            out += [c] if c.tag == "tr" else ([] if c.tag == "table" else _rows(c))
    return out


def _code_classes(node: _Node) -> list[str]:
    return [
        cls
        for c in node.children
        if isinstance(c, _Node) and c.tag == "code"
        for cls in c.attrs.get("class", "").split()
    ]


def _one_line(s: str) -> str:
    return re.sub(r"\s+", " ", s.replace(_INDENT, " ")).strip()
