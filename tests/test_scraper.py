"""tools/scraper.py against local Kaggle-shaped pages (tests/kaggle_pages/), served over real HTTP, read by a real
headless chromium. Never skipped: CI installs chromium (.ci/run); a machine without it fails with the fix to apply."""

from __future__ import annotations

import asyncio
import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tools.scraper import TABS, ScrapeUnavailable, find_chromium, scrape_competition

PAGES = Path(__file__).parent / "kaggle_pages"


class KaggleLike(SimpleHTTPRequestHandler):
    """/competitions/<slug>/<tab> -> kaggle_pages/<slug>/<tab>.html; anything else is a file under kaggle_pages/."""

    def translate_path(self, path):
        parts = path.split("?")[0].strip("/").split("/")
        if len(parts) == 3 and parts[0] == "competitions":
            return str(PAGES / parts[1] / f"{parts[2]}.html")
        return super().translate_path(path)

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def base_url():
    if not find_chromium():
        pytest.fail(
            "no chromium found: these tests drive a real headless chromium; run `apt-get install chromium` "
            "(or set AGENTK_CHROMIUM to a chromium binary)"
        )
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(KaggleLike, directory=str(PAGES)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def scraped(base_url, tmp_path_factory):
    """slug -> (out_dir, {tab: markdown}), each slug scraped once."""
    out = {}
    for slug in ("spaceship-titanic", "store-sales-demo"):
        out_dir = tmp_path_factory.mktemp(slug)
        out[slug] = out_dir, scrape_competition(base_url, slug, out_dir, timeout=15)
    return out


NOISE = (
    "Sign In",
    "Register",
    "Competitions",
    "Datasets",
    "Privacy Policy",
    "© 2912",
    "cookies",
    "OK, Got it",
    "UA-NOT-CONTENT",
    "dataLayer",
    "tracking-pixel",
    "Leaderboard",
    "Loading…",
    "Download All",
    "Kaggle Pro",
)


def test_spaceship_tabs_written(scraped):
    out_dir, pages = scraped["spaceship-titanic"]
    assert set(pages) == set(TABS)
    for tab, md in pages.items():
        assert (out_dir / f"{tab}.md").read_text().strip() == md
        for noise in NOISE:
            assert noise not in md, f"{noise!r} leaked into {tab}.md:\n{md}"


def test_overview_waits_for_client_side_rendering(scraped):
    md = scraped["spaceship-titanic"][1]["overview"]
    assert md.startswith("# Spaceship Titanic")
    assert "## Description\n" in md  # the heading's '#' anchor link is dropped
    assert "### Acknowledgments" in md and "## Frequently Asked Questions" in md
    assert "Welcome to the year 2912" in md and "The *Spaceship Titanic* was an interstellar" in md
    assert "[Joel Filipe](https://unsplash.com/@joelfilip)" in md
    assert "[Team](http://127.0.0.1:" in md and "/c/spaceship-titanic/team)" in md  # relative links made absolute
    assert "![joel-filipe-QwoNAhbmLLo-unsplash.jpg](https://storage.googleapis.com/" in md


def test_evaluation_and_code_block(scraped):
    md = scraped["spaceship-titanic"][1]["evaluation"]
    assert "## Evaluation" in md and "### Metric" in md
    assert (
        "Submissions are evaluated based on their [classification accuracy](https://developers.google.com/"
        "machine-learning/crash-course/classification/accuracy), the percentage of predicted labels"
    ) in md
    assert "```\nPassengerId,Transported\n0013_01,False\n0018_01,False" in md


def test_data_lists_and_table(scraped):
    md = scraped["spaceship-titanic"][1]["data"]
    assert "## Dataset Description" in md
    assert "- **train.csv** - Personal records" in md
    assert "  - `PassengerId` - A unique Id for each passenger. Each Id takes the form `gggg_pp`." in md
    assert "| Name | Size | Type |\n| --- | --- | --- |\n| train.csv | 805.42 kB | csv |" in md
    rules = scraped["spaceship-titanic"][1]["rules"]
    assert "1. You must be registered on [Kaggle.com](https://www.kaggle.com)." in rules
    assert "3. You may select up to 2 final submissions" in rules


def test_missing_tab_skipped_and_js_built_main(scraped):
    out_dir, pages = scraped["store-sales-demo"]
    assert set(pages) == {"overview", "evaluation", "data"}
    assert not (out_dir / "rules.md").exists()
    md = pages["evaluation"]  # <main> itself was inserted by JavaScript 300 ms after load
    assert "Root Mean Squared Logarithmic Error (RMSLE), rendered client-side." in md
    assert "| id | sales |\n| --- | --- |\n| 3000888 | 0.0 |" in md
    assert "*store_nbr*" in pages["data"]
    for noise in NOISE:
        assert noise not in md


def test_works_inside_a_running_event_loop(base_url, tmp_path):
    async def main():
        return scrape_competition(base_url, "store-sales-demo", tmp_path, timeout=15)

    pages = asyncio.run(main())
    assert "RMSLE" in pages["evaluation"] and (tmp_path / "overview.md").exists()


def test_unavailable_when_chromium_missing(monkeypatch, tmp_path):
    monkeypatch.setenv("AGENTK_CHROMIUM", str(tmp_path / "no-such-chromium"))
    assert find_chromium() is None
    with pytest.raises(ScrapeUnavailable, match="AGENTK_CHROMIUM"):
        scrape_competition("http://127.0.0.1:9", "spaceship-titanic", tmp_path / "out")
    assert not (tmp_path / "out").exists()
