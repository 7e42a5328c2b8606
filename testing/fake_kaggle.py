"""A fake Kaggle API on 127.0.0.1:7777 for tests and demos, speaking the wire protocol of the official
client (kagglesdk: POST /api/v1/<service>/<method> with a JSON body, errors as {"code", "message"}).

    with FakeKaggle({"<slug>": Path("<competition>/public")}, answers={...}) as fake:
        os.environ["KAGGLE_API_ENVIRONMENT"] = "TEST"   # kagglesdk's http://localhost:7777
        ...

Endpoints (all POST JSON under /api/v1/ unless noted):
  security.OAuthService/IntrospectToken                 {token} -> {active, username}
  competitions.CompetitionApiService/ListCompetitions   {search, ...} -> {competitions: [ApiCompetition]}
  .../GetCompetition                                    {competitionName} -> ApiCompetition
  .../ListDataFiles                                     {competitionName} -> {files: [{ref, name, totalBytes, creationDate}]}
  .../DownloadDataFiles                                 {competitionName} -> 302 to GET /_storage/<slug>/<slug>.zip
  .../DownloadDataFile                                  {competitionName, fileName} -> 302 to GET /_storage/<slug>/files/<name>
  .../StartSubmissionUpload                             {competitionName, fileName, contentLength, ...} -> {token, createUrl}
  PUT /_upload/<token>                                  the file's bytes -> 200
  .../CreateSubmission                                  {competitionName, blobFileTokens, submissionDescription} -> {message, ref}
  .../ListSubmissions                                   {competitionName, ...} -> {submissions: [ApiSubmission]}, newest first
  .../GetSubmission                                     {ref} -> ApiSubmission
  .../GetSubmissionLimits                               {competitionName} -> {numToday, numTotal, numAllowedNow}
  .../DownloadLeaderboard                               {competitionName} -> 200 application/zip (one CSV)
  .../GetLeaderboard                                    {competitionName} -> {submissions: [{teamId, teamName, submissionDate, score}]}

A submission is PENDING on its first poll (ListSubmissions/GetSubmission; pending_polls=N: its first N), then
COMPLETE (or ERROR when its CSV does not fit the answers). Knobs: credentials (username/key for Basic auth, token for Bearer;
require_auth), rules_not_accepted -> 403, unknown slug -> 404, daily_limit -> the 400 Kaggle sends once
the day's submissions are used, fail_first=N -> the first N requests answer fail_status (503)."""

from __future__ import annotations

import base64
import csv
import fcntl
import io
import json
import tempfile
import threading
import uuid
import zipfile
from datetime import UTC, datetime
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import quote, unquote, urlsplit

from agentk.workspace import Workspace

SERVICE = "/api/v1/competitions.CompetitionApiService/"
DEFAULT_LIMIT = 10


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


class _Error(Exception):
    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code, self.message = code, message


class FakeKaggle:
    def __init__(
        self,
        competitions: dict[str, Path],
        port: int = 7777,
        *,
        username: str = "agentk-test",
        key: str = "fake-key",
        token: str = "fake-token",
        require_auth: bool = True,
        rules_not_accepted: tuple[str, ...] | list[str] = (),
        daily_limit: int | None = None,
        fail_first: int = 0,
        fail_status: int = 503,
        answers: dict[str, Path] | None = None,
        score: float = 0.5,
        info: dict[str, dict] | None = None,
        pending_polls: int = 1,
    ):
        self.competitions = {slug: Path(p) for slug, p in competitions.items()}
        self.port, self.username, self.key, self.token = port, username, key, token
        self.require_auth, self.rules_not_accepted = require_auth, set(rules_not_accepted)
        self.daily_limit, self.fail_first, self.fail_status = daily_limit, fail_first, fail_status
        self.answers = {slug: Path(p) for slug, p in (answers or {}).items()}
        self.score, self.info = score, info or {}
        self.pending_polls = pending_polls  # polls that see a new submission PENDING before it is scored
        self.requests: list[tuple[str, str]] = []  # (method, path) of every request, failed ones too
        self.uploads: dict[str, bytes] = {}
        self.submissions: dict[str, list[dict]] = {slug: [] for slug in self.competitions}
        self._lock = threading.Lock()
        self._zips: dict[str, bytes] = {}
        self._server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        return f"http://localhost:{self.port}"

    # -- lifecycle -------------------------------------------------------------------------------

    def __enter__(self) -> FakeKaggle:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):
                fake._handle(self)

            do_GET = do_PUT = do_POST

            def log_message(self, *args):
                pass

        class Server(ThreadingHTTPServer):
            allow_reuse_address = True
            daemon_threads = True

        # The client only knows localhost:7777: fake servers in several processes (parallel tests) take turns.
        self._port_lock = open(Path(tempfile.gettempdir()) / f"agentk-fake-kaggle-{self.port}.lock", "w")
        fcntl.flock(self._port_lock, fcntl.LOCK_EX)
        self._server = Server(("127.0.0.1", self.port), Handler)
        threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True, name="fake-kaggle").start()
        return self

    def __exit__(self, *exc) -> None:
        if self._server:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
            fcntl.flock(self._port_lock, fcntl.LOCK_UN)
            self._port_lock.close()

    # -- HTTP plumbing ---------------------------------------------------------------------------

    def _handle(self, h: BaseHTTPRequestHandler) -> None:
        path = urlsplit(h.path).path
        body = _read_body(h)
        with self._lock:
            self.requests.append((h.command, path))
            failing = self.fail_first > 0
            self.fail_first -= failing
        try:
            if failing:
                raise _Error(self.fail_status, "Service Unavailable (injected)")
            if h.command == "PUT" and path.startswith("/_upload/"):
                return self._upload(h, path.rsplit("/", 1)[-1], body)
            if h.command == "GET" and path.startswith("/_storage/"):
                return self._storage(h, [unquote(s) for s in path.split("/")[2:]])
            if h.command != "POST" or not path.startswith("/api/v1/"):
                raise _Error(404, f"no such endpoint: {h.command} {path}")
            request = json.loads(body or b"{}")
            if path == "/api/v1/security.OAuthService/IntrospectToken":
                active = request.get("token") == self.token
                return _json(h, 200, {"active": active, "username": self.username if active else ""})
            self._authorize(h.headers.get("Authorization", ""))
            method = path.removeprefix(SERVICE)
            handler = getattr(self, f"_api_{method}", None) if path.startswith(SERVICE) else None
            if handler is None:
                raise _Error(404, f"no such endpoint: {path}")
            result = handler(h, request)
            if result is not None:
                _json(h, 200, result)
        except _Error as e:
            _json(h, e.code, {"code": e.code, "message": e.message})
        except Exception as e:  # a bug here: say so rather than drop the connection
            _json(h, 500, {"code": 500, "message": f"fake kaggle: {type(e).__name__}: {e}"})

    def _authorize(self, header: str) -> None:
        if not self.require_auth:
            return
        scheme, _, value = header.partition(" ")
        if scheme == "Bearer" and value == self.token:
            return
        if scheme == "Basic":
            try:
                if base64.b64decode(value).decode() == f"{self.username}:{self.key}":
                    return
            except ValueError:
                pass
        raise _Error(401, "Unauthenticated: invalid or missing credentials")

    def _slug(self, request: dict, rules: bool = False) -> str:
        slug = request.get("competitionName", "")
        if slug not in self.competitions:
            raise _Error(404, f"Competition '{slug}' not found")
        if rules and slug in self.rules_not_accepted:
            raise _Error(403, "You must accept this competition's rules before you can download its data or submit")
        return slug

    def _base(self, h: BaseHTTPRequestHandler) -> str:
        return f"http://{h.headers.get('Host') or f'localhost:{self.port}'}"

    # -- competitions ----------------------------------------------------------------------------

    def competition(self, slug: str) -> dict:
        folder = self.competitions[slug]
        meta = {}
        if (folder.parent / "meta.json").exists():
            meta = json.loads((folder.parent / "meta.json").read_text())
        description = ""
        if (folder / "description.md").exists():
            paragraphs = [p.strip() for p in (folder / "description.md").read_text().split("\n\n")]
            description = next((p for p in paragraphs if p and not p.startswith("#")), "")[:300]
        return {
            "id": 1000 + sorted(self.competitions).index(slug),
            "ref": f"https://www.kaggle.com/competitions/{slug}",
            "title": slug.replace("-", " ").title(),
            "url": f"https://www.kaggle.com/competitions/{slug}",
            "description": description,
            "category": "Getting Started",
            "reward": "Knowledge",
            "deadline": "2030-12-31T23:59:00Z",
            "enabledDate": "2024-01-01T00:00:00Z",
            "teamCount": 3,
            "maxDailySubmissions": self.daily_limit if self.daily_limit is not None else DEFAULT_LIMIT,
            "maxTeamSize": 5,
            "evaluationMetric": meta.get("metric", ""),
            "userHasEntered": True,
            **self.info.get(slug, {}),
        }

    def _api_ListCompetitions(self, h, request):
        search = request.get("search", "").lower()
        found = [
            self.competition(s)
            for s in sorted(self.competitions)
            if search in s.lower() or search in self.competition(s)["title"].lower()
        ]
        return {"competitions": found[: request.get("pageSize", 20)], "nextPageToken": ""}

    def _api_GetCompetition(self, h, request):
        return self.competition(self._slug(request))

    # -- data ------------------------------------------------------------------------------------

    def _files(self, slug: str) -> list[Path]:
        folder = self.competitions[slug]
        return sorted(p for p in folder.rglob("*") if p.is_file())

    def _api_ListDataFiles(self, h, request):
        slug = self._slug(request, rules=True)
        folder = self.competitions[slug]
        files = [
            {
                "ref": str(p.relative_to(folder)),
                "name": str(p.relative_to(folder)),
                "totalBytes": p.stat().st_size,
                "creationDate": "2024-01-01T00:00:00Z",
            }
            for p in self._files(slug)
        ]
        return {"files": files, "nextPageToken": ""}

    def _api_DownloadDataFiles(self, h, request):
        slug = self._slug(request, rules=True)
        _redirect(h, f"{self._base(h)}/_storage/{slug}/{slug}.zip?X-Goog-Signature={uuid.uuid4().hex}")

    def _api_DownloadDataFile(self, h, request):
        slug = self._slug(request, rules=True)
        name = request.get("fileName", "")
        if not (self.competitions[slug] / name).is_file() or ".." in Path(name).parts:
            raise _Error(404, f"File '{name}' not found in {slug}")
        _redirect(h, f"{self._base(h)}/_storage/{slug}/files/{quote(name)}?X-Goog-Signature={uuid.uuid4().hex}")

    def _storage(self, h, parts: list[str]) -> None:
        """The signed-URL storage the API redirects to: no credentials needed, like GCS."""
        slug = parts[0] if parts else ""
        if slug not in self.competitions:
            raise _Error(404, "NoSuchKey")
        if parts[1:] == [f"{slug}.zip"]:
            if slug not in self._zips:
                buffer = io.BytesIO()
                with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as z:
                    for p in self._files(slug):
                        z.write(p, str(p.relative_to(self.competitions[slug])))
                self._zips[slug] = buffer.getvalue()
            return _bytes(h, self._zips[slug], "application/zip")
        file = self.competitions[slug].joinpath(*parts[2:])
        if parts[1:2] != ["files"] or ".." in parts or not file.is_file():
            raise _Error(404, "NoSuchKey")
        _bytes(h, file.read_bytes(), "application/octet-stream")

    # -- submissions -----------------------------------------------------------------------------

    def _api_StartSubmissionUpload(self, h, request):
        self._slug(request, rules=True)
        token = uuid.uuid4().hex
        return {"token": token, "createUrl": f"{self._base(h)}/_upload/{token}"}

    def _upload(self, h, token: str, body: bytes) -> None:
        self.uploads[token] = body
        _json(h, 200, {})

    def _api_CreateSubmission(self, h, request):
        slug = self._slug(request, rules=True)
        token = request.get("blobFileTokens", "")
        if token not in self.uploads:
            raise _Error(400, "The submission file was not uploaded (unknown blob token)")
        with self._lock:
            limit = self.daily_limit if self.daily_limit is not None else DEFAULT_LIMIT
            today = [s for s in self.submissions[slug] if s["date"][:10] == _now()[:10]]
            if len(today) >= limit:
                raise _Error(
                    400,
                    f"Submission not allowed: Your team has used its daily Submission allowance "
                    f"({limit}) today, please try again tomorrow UTC (in {_hours_to_midnight():.1f} hours).",
                )
            ref = 50_000_000 + sum(len(v) for v in self.submissions.values()) + 1
            sub = {
                "ref": ref,
                "date": _now(),
                "description": request.get("submissionDescription", ""),
                "fileName": Workspace.SUBMISSION,
                "totalBytes": len(self.uploads[token]),
                "submittedBy": self.username,
                "teamName": self.username,
                "polls": 0,
                "data": self.uploads.pop(token),
            }
            sub.update(self._grade(slug, sub["data"]))
            self.submissions[slug].insert(0, sub)
        return {"message": f"Successfully submitted to {self.competition(slug)['title']}", "ref": ref}

    def _grade(self, slug: str, data: bytes) -> dict:
        if slug not in self.answers:
            return {"publicScore": f"{self.score:.5f}", "privateScore": f"{self.score:.5f}"}
        try:
            public, private = _accuracy(data, self.answers[slug])
        except ValueError as e:
            return {"error": str(e)}
        return {"publicScore": f"{public:.5f}", "privateScore": f"{private:.5f}"}

    def _view(self, sub: dict) -> dict:
        """A submission as ApiSubmission JSON, as this poll sees it (pending on the first one)."""
        sub["polls"] += 1
        out = {k: sub[k] for k in ("ref", "date", "description", "fileName", "totalBytes", "submittedBy", "teamName")}
        if sub["polls"] <= self.pending_polls:
            return {**out, "status": "PENDING"}
        if "error" in sub:
            return {**out, "status": "ERROR", "errorDescription": sub["error"]}
        return {**out, "status": "COMPLETE", "publicScore": sub["publicScore"], "privateScore": sub["privateScore"]}

    def _api_ListSubmissions(self, h, request):
        slug = self._slug(request, rules=True)
        with self._lock:
            return {
                "submissions": [self._view(s) for s in self.submissions[slug][: request.get("pageSize", 20)]],
                "nextPageToken": "",
            }

    def _api_GetSubmission(self, h, request):
        with self._lock:
            for subs in self.submissions.values():
                for s in subs:
                    if s["ref"] == request.get("ref"):
                        return self._view(s)
        raise _Error(404, "Submission not found")

    def _api_GetSubmissionLimits(self, h, request):
        slug = self._slug(request)
        limit = self.daily_limit if self.daily_limit is not None else DEFAULT_LIMIT
        today = sum(s["date"][:10] == _now()[:10] for s in self.submissions[slug])
        return {"numToday": today, "numTotal": len(self.submissions[slug]), "numAllowedNow": max(0, limit - today)}

    # -- leaderboard -----------------------------------------------------------------------------

    def leaderboard_rows(self, slug: str) -> list[dict]:
        rows = [
            {"TeamId": 1, "TeamName": "Alpha Centauri", "Score": 0.82},
            {"TeamId": 2, "TeamName": "Cryo", "Score": 0.79},
            {"TeamId": 3, "TeamName": "Baseline", "Score": 0.5},
        ]
        scored = [float(s["publicScore"]) for s in self.submissions[slug] if "publicScore" in s]
        if scored:
            rows.append({"TeamId": 4, "TeamName": self.username, "Score": max(scored)})
        rows.sort(key=lambda r: -r["Score"])
        return [{**r, "LastSubmissionDate": "2024-06-01 12:00:00", "SubmissionCount": 1} for r in rows]

    def _api_DownloadLeaderboard(self, h, request):
        slug = self._slug(request)
        text = io.StringIO()
        writer = csv.DictWriter(text, ["Rank", "TeamId", "TeamName", "LastSubmissionDate", "Score", "SubmissionCount"])
        writer.writeheader()
        for rank, row in enumerate(self.leaderboard_rows(slug), 1):
            writer.writerow({"Rank": rank, **row})
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as z:
            z.writestr(f"{slug}-publicleaderboard.csv", text.getvalue())
        _bytes(h, buffer.getvalue(), "application/zip")

    def _api_GetLeaderboard(self, h, request):
        slug = self._slug(request)
        return {
            "submissions": [
                {
                    "teamId": r["TeamId"],
                    "teamName": r["TeamName"],
                    "submissionDate": "2024-06-01T12:00:00Z",
                    "score": f"{r['Score']:.5f}",
                }
                for r in self.leaderboard_rows(slug)
            ]
        }


# -- helpers -------------------------------------------------------------------------------------


def _read_body(h: BaseHTTPRequestHandler) -> bytes:
    if h.headers.get("Transfer-Encoding", "").lower() == "chunked":
        chunks = []
        while True:
            size = int(h.rfile.readline().split(b";")[0].strip() or b"0", 16)
            if size == 0:
                h.rfile.readline()
                return b"".join(chunks)
            chunks.append(h.rfile.read(size))
            h.rfile.readline()
    return h.rfile.read(int(h.headers.get("Content-Length") or 0))


def _json(h: BaseHTTPRequestHandler, code: int, payload: dict) -> None:
    _bytes(h, json.dumps(payload).encode(), "application/json; charset=utf-8", code)


def _bytes(h: BaseHTTPRequestHandler, data: bytes, content_type: str, code: int = 200) -> None:
    h.send_response(code)
    h.send_header("Content-Type", content_type)
    h.send_header("Content-Length", str(len(data)))
    h.send_header("Last-Modified", formatdate(usegmt=True))
    h.end_headers()
    h.wfile.write(data)


def _redirect(h: BaseHTTPRequestHandler, location: str) -> None:
    h.send_response(302)
    h.send_header("Location", location)
    h.send_header("Content-Length", "0")
    h.end_headers()


def _hours_to_midnight() -> float:
    now = datetime.now(UTC)
    return 24 - now.hour - now.minute / 60


def _accuracy(submission: bytes, answers: Path) -> tuple[float, float]:
    """Public (first half of the answers) and private (second half) exact-match accuracy of the
    submission's columns against the answers, rows matched on the submission's first column."""
    rows = list(csv.DictReader(io.StringIO(submission.decode("utf-8-sig"))))
    truth = list(csv.DictReader(io.StringIO(answers.read_text())))
    if not rows:
        raise ValueError("Submission file is empty")
    key, *targets = list(rows[0])
    missing = [c for c in [key, *targets] if c not in truth[0]]
    if missing or not targets:
        raise ValueError(f"Submission columns do not match: unexpected {missing or 'no target column'}")
    predicted = {r[key]: r for r in rows}

    def same(a: str | None, b: str) -> bool:
        if a is None:
            return False
        try:
            return abs(float(a) - float(b)) < 1e-9
        except ValueError:
            return a.strip().lower() == b.strip().lower()

    def score(part: list[dict]) -> float:
        hits = [all(same(predicted.get(t[key], {}).get(c), t[c]) for c in targets) for t in part]
        return sum(hits) / max(1, len(hits))

    half = len(truth) // 2
    return score(truth[:half]), score(truth[half:])
