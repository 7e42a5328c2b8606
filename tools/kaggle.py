"""The Kaggle tool: download, describe, submit to and rank a competition through the official `kaggle`
package (imported lazily: it authenticates at import time).

The kaggle CLI always talks to api.kaggle.com; this tool builds its clients with kagglesdk's own
environment (KAGGLE_API_ENVIRONMENT=TEST -> http://localhost:7777), which testing.fake_kaggle serves.
Errors the user can fix are one-line BadInputs; transient ones (5xx, 429, connection resets) are
retried with exponential backoff."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import sys
import time
import zipfile
from datetime import UTC
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from agentk.competition.archives import extract, extract_all
from agentk.core.errors import BadInput

if TYPE_CHECKING:
    import pandas as pd

MARKER = ".agentk-complete"
NO_CREDENTIALS = (
    "no Kaggle credentials: put kaggle.json in ~/.kaggle/ (or set KAGGLE_USERNAME and KAGGLE_KEY, "
    "or KAGGLE_API_TOKEN) — see https://www.kaggle.com/settings"
)
_SLUG = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]*$")
_LIMIT = re.compile(
    r"daily submission|submission allowance|submission limit|max(imum)? (number of )?submissions"
    r"|submissions? (remaining|per day)",
    re.I,
)


def parse_competition_url(url: str) -> str | None:
    """The competition slug of .../competitions/<slug>[/tab][?query][#fragment] or .../c/<slug>, any host."""
    url = (url or "").strip()
    if "://" not in url and re.match(r"^[\w.-]+\.[a-z]{2,}(:\d+)?/", url, re.I):
        url = "https://" + url  # www.kaggle.com/competitions/<slug>
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return None
    segments = [s for s in parts.path.split("/") if s]
    if len(segments) >= 2 and segments[0] in ("competitions", "c") and _SLUG.match(segments[1]):
        return segments[1]
    return None


class _Transient(Exception):
    """A failure worth retrying (the kaggle package reported it without raising)."""


def _kaggle_api_class():
    """Import kaggle quietly: its import-time authentication prints help and, with a token, calls
    api.kaggle.com; our own authentication (right after, in the right environment) is what counts."""
    saved = {k: os.environ.pop(k) for k in ("KAGGLE_API_TOKEN",) if k in os.environ}
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            from kaggle.api.kaggle_api_extended import KaggleApi
    except SystemExit:
        raise BadInput(NO_CREDENTIALS) from None
    except ImportError as exc:
        raise BadInput(f"the kaggle package is broken here ({exc}): reinstall it (uv sync)") from None
    finally:
        os.environ.update(saved)
    return KaggleApi


def _config_dir() -> str:
    """Where kaggle.json lives, as the kaggle package decides it (but read now, not at its import)."""
    if os.environ.get("KAGGLE_CONFIG_DIR"):
        return os.environ["KAGGLE_CONFIG_DIR"]
    home = os.path.join(os.path.expanduser("~"), ".kaggle")
    if sys.platform.startswith("linux") and not os.path.exists(home):
        return os.path.join(
            os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config"), "kaggle"
        )
    return home


def _score(value) -> float | None:
    try:
        return float(value) if value not in (None, "") else None
    except (TypeError, ValueError):
        return None


def _iso(when) -> str | None:  # the API's times are UTC, parsed naive
    return when.replace(tzinfo=when.tzinfo or UTC).isoformat() if when else None


def _submission(s) -> dict:
    status = getattr(s.status, "name", str(s.status or "pending")).lower()
    return {
        "status": status,
        "public_score": _score(s.public_score),
        "private_score": _score(s.private_score),
        "ref": str(s.ref),
        "date": _iso(s.date),
        "message": s.description,
        "file": s.file_name,
        "error": s.error_description or None,
    }


class KaggleTool:
    def __init__(self, backoff: float = 2.0, attempts: int = 4):
        self.backoff, self.attempts = backoff, attempts
        api = self.api = _kaggle_api_class()()
        api.config_dir = _config_dir()
        api.config = os.path.join(api.config_dir, api.config_file)
        from kagglesdk import KaggleClient
        from kagglesdk.kaggle_env import get_endpoint, get_env

        try:
            env = get_env()
        except Exception as exc:
            raise BadInput(str(exc)) from None
        self.endpoint = get_endpoint(env)

        def build_client():  # KaggleApi's own builder ignores KAGGLE_API_ENVIRONMENT (always PROD)
            values = api.config_values
            return KaggleClient(
                env=env,
                verbose="--verbose" in api.args,
                username=values.get(api.CONFIG_NAME_USER),
                password=values.get(api.CONFIG_NAME_KEY),
                api_token=values.get(api.CONFIG_NAME_TOKEN),
                response_processor=api.get_response_processor(),
            )

        api.build_kaggle_client = build_client
        from kagglesdk import get_access_token_from_env

        try:
            self._call("", lambda: self._authenticate(api))
        except SystemExit:
            token, _ = get_access_token_from_env()
            raise BadInput(
                f"Kaggle rejected the API token ({self.endpoint}, 401): check KAGGLE_API_TOKEN or "
                "~/.kaggle/access_token — see https://www.kaggle.com/settings"
                if token
                else NO_CREDENTIALS
            ) from None

    @staticmethod
    def _authenticate(api) -> None:
        with contextlib.redirect_stdout(io.StringIO()):
            api.authenticate()

    # -- errors and retries --------------------------------------------------------------------

    def _call(self, slug: str, fn, *args, **kwargs):
        for attempt in range(self.attempts):
            try:
                with contextlib.redirect_stdout(sys.stderr):  # the package prints progress and errors
                    return fn(*args, **kwargs)
            except (BadInput, SystemExit):
                raise
            except Exception as exc:
                error = self._translate(exc, slug)
                if error is not None:
                    raise error from None
                if attempt == self.attempts - 1:
                    raise BadInput(f"the Kaggle API keeps failing ({_oneline(exc)}): try again later") from None
                time.sleep(self.backoff * 2**attempt)

    def _translate(self, exc: Exception, slug: str) -> BadInput | None:
        """A BadInput for what the user must fix; None for a transient error; re-raise anything else."""
        import requests

        if isinstance(exc, _Transient):
            return None
        response = getattr(exc, "response", None)
        code = getattr(response, "status_code", None)
        if code is not None:
            text = f"{exc} {_body(response)}"
            if code in (400, 429) and _LIMIT.search(text):
                reset = re.search(r"(?:try again|resets?)[^\"]*?(?=\.\s|\.?\"|\.?$)", text, re.I)
                after = response.headers.get("Retry-After")
                when = reset.group(0) if reset else f"retry after {after} s" if after else "it resets at 00:00 UTC"
                return BadInput(f"daily submission limit reached for {slug}: {when}")
            if code == 401:
                return BadInput(
                    "Kaggle rejected the credentials (401): check ~/.kaggle/kaggle.json, KAGGLE_USERNAME/"
                    "KAGGLE_KEY or KAGGLE_API_TOKEN — see https://www.kaggle.com/settings"
                )
            if code == 403:
                return BadInput(
                    f"Kaggle refused access to {slug} (403): accept the competition rules on "
                    f"https://www.kaggle.com/competitions/{slug}/rules, then retry"
                )
            if code == 404:
                return BadInput(f"unknown competition {slug} (404): check the URL")
            if code == 429 or code >= 500:
                return None
            return BadInput(f"the Kaggle API refused the request for {slug} ({code}): {_oneline(exc)}")
        if isinstance(exc, requests.ConnectionError) and _unreachable(exc):
            url = getattr(getattr(exc, "request", None), "url", None) or self.endpoint
            parts = urlsplit(url)
            return BadInput(f"cannot reach the Kaggle API ({parts.scheme}://{parts.netloc}): check the network")
        if isinstance(
            exc, (requests.ConnectionError, requests.Timeout, requests.exceptions.ChunkedEncodingError, ConnectionError)
        ):
            return None
        raise exc

    # -- operations ----------------------------------------------------------------------------

    def download(self, slug: str, dest: Path) -> list[Path]:
        """Every competition file into dest, archives extracted and removed; dest/.agentk-complete last."""
        dest = Path(dest)
        if (dest / MARKER).exists():
            return _listing(dest)
        dest.mkdir(parents=True, exist_ok=True)
        for stale in dest.glob(".partial-*"):
            shutil.rmtree(stale, ignore_errors=True)
        partial = dest / f".partial-{os.getpid()}"
        partial.mkdir()
        try:
            self._call(slug, self.api.competition_download_files, slug, path=str(partial), force=True, quiet=True)
            for leftover in partial.glob("*.kaggle-partial"):
                leftover.unlink()
            for bundle in [p for p in partial.iterdir() if zipfile.is_zipfile(p)]:  # the whole competition
                extract(bundle if bundle.suffix == ".zip" else bundle.rename(bundle.with_suffix(".zip")), partial)
            extract_all(partial)
            for item in partial.iterdir():
                target = dest / item.name
                if target.is_dir() and not target.is_symlink():
                    shutil.rmtree(target)
                elif target.exists() or target.is_symlink():
                    target.unlink()
                os.replace(item, target)
        finally:
            shutil.rmtree(partial, ignore_errors=True)
        files = _listing(dest)
        (dest / MARKER).write_text(
            json.dumps({"slug": slug, "time": time.time(), "files": [str(p.relative_to(dest)) for p in files]})
        )
        return files

    def files(self, slug: str) -> list[str]:
        """The competition's data files; refused (403) until its rules are accepted."""
        response = self._call(slug, self.api.competition_list_files, slug)
        return [f.name for f in (getattr(response, "files", None) or [])]

    def metadata(self, slug: str) -> dict:
        response = self._call(slug, self.api.competitions_list, search=slug)
        for c in (response.competitions if response else None) or []:
            if slug in (c.ref, c.ref.rstrip("/").split("/")[-1], parse_competition_url(c.url or "")):
                return {
                    "slug": slug,
                    "title": c.title,
                    "url": c.url or f"https://www.kaggle.com/competitions/{slug}",
                    "deadline": _iso(c.deadline),
                    "evaluation_metric": c.evaluation_metric,
                    "max_daily_submissions": c.max_daily_submissions,
                    "max_team_size": c.max_team_size,
                    "reward": c.reward,
                    "category": c.category,
                    "description": c.description,
                }
        raise BadInput(f"unknown competition {slug}: check the URL")

    def submit(self, slug: str, file: Path, message: str) -> str:
        def once():
            result = self.api.competition_submit(str(file), message, slug, quiet=True)
            if result.message == self.api.COMPETITION_SUBMIT_UPLOAD_FAILED_MESSAGE:
                raise _Transient(f"uploading {file} failed")
            return result

        if not Path(file).is_file():
            raise BadInput(f"{file} does not exist: nothing to submit")
        result = self._call(slug, once)
        if result.ref:
            return str(result.ref)
        mine = [s for s in self.submissions(slug) if s["message"] == message]  # servers that give no ref
        if not mine:
            raise BadInput(f"Kaggle accepted the submission to {slug} but does not list it: {result.message}")
        return max(mine, key=lambda s: s["date"] or "")["ref"]

    def submissions(self, slug: str) -> list[dict]:
        return [_submission(s) for s in self._call(slug, self.api.competition_submissions, slug) or [] if s]

    def wait_for_score(self, slug: str, ref: str, timeout: float = 600, poll: float = 10) -> dict:
        """Poll until the submission is complete or errored; on timeout, its last state (status "pending")."""
        deadline, last = time.monotonic() + timeout, None
        while True:
            last = next((s for s in self.submissions(slug) if s["ref"] == str(ref)), last)
            if last and last["status"] in ("complete", "error"):
                return last
            if time.monotonic() + poll > deadline:
                return last or {
                    "status": "pending",
                    "public_score": None,
                    "private_score": None,
                    "ref": str(ref),
                    "date": None,
                    "message": None,
                    "error": f"not listed after {timeout:.0f} s",
                }
            time.sleep(poll)

    def leaderboard(self, slug: str, dest: Path) -> pd.DataFrame:

        dest = Path(dest)
        dest.mkdir(parents=True, exist_ok=True)
        self._call(slug, self.api.competition_leaderboard_download, slug, str(dest), quiet=True)
        archive = dest / f"{slug}.zip"
        if zipfile.is_zipfile(archive):
            with zipfile.ZipFile(archive) as z:
                names = [n for n in z.namelist() if n.endswith(".csv")]
                z.extractall(dest, members=names)
            archive.unlink()
            csv = dest / names[0] if names else None
        else:
            csv = archive.rename(dest / f"{slug}-leaderboard.csv")
        if csv is None:
            raise BadInput(f"the leaderboard of {slug} came without a CSV")
        from agentk.parsing import read_csv

        return read_csv(csv)


def _listing(dest: Path) -> list[Path]:
    return sorted(
        p
        for p in dest.rglob("*")
        if p.is_file()
        and p.name != MARKER
        and not any(part.startswith(".partial-") for part in p.relative_to(dest).parts)
    )


def _body(response) -> str:
    try:
        return response.text[:500]
    except Exception:
        return ""


def _oneline(exc: Exception) -> str:
    return " ".join(str(exc).split())[:300] or type(exc).__name__


def _unreachable(exc: Exception) -> bool:
    """Connection refused or DNS failure (nothing answered), as opposed to a connection dropped mid-call."""
    from urllib3.exceptions import NewConnectionError

    seen, todo = set(), [exc]
    while todo:
        e = todo.pop()
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, (NewConnectionError, ConnectionRefusedError)):
            return True
        todo += [
            getattr(e, "reason", None),
            e.__cause__,
            e.__context__,
            *[a for a in e.args if isinstance(a, BaseException)],
        ]
    return bool(
        re.search(r"Connection refused|Name or service not known|Failed to resolve|nodename nor servname", str(exc))
    )
