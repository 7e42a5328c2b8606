"""tools/kaggle.py through the real kaggle/kagglesdk client against testing.fake_kaggle on localhost:7777."""

from __future__ import annotations

import gzip
import io
import tarfile
import zipfile
from pathlib import Path

import pandas as pd
import pytest

from agentk.core.errors import BadInput
from testing.fake_kaggle import FakeKaggle
from tools.kaggle import MARKER, NO_CREDENTIALS, KaggleTool, parse_competition_url

SHARED = Path(__file__).resolve().parents[2] / "shared"
TITANIC = SHARED / "arena-dev" / "spaceship-titanic"
USER, KEY, TOKEN = "agentk-test", "fake-key", "fake-token"


@pytest.fixture(autouse=True)
def kaggle_env(tmp_path, monkeypatch):
    """Fake credentials, the TEST environment (http://localhost:7777), nothing read from the real home."""
    for var in ("KAGGLE_API_TOKEN", "KAGGLE_USERNAME", "KAGGLE_KEY", "KAGGLE_API_ENVIRONMENT", "KAGGLE_CONFIG_DIR"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "home" / ".config"))
    (tmp_path / "cfg").mkdir()
    monkeypatch.setenv("KAGGLE_CONFIG_DIR", str(tmp_path / "cfg"))
    monkeypatch.setenv("KAGGLE_API_ENVIRONMENT", "TEST")
    monkeypatch.setenv("KAGGLE_USERNAME", USER)
    monkeypatch.setenv("KAGGLE_KEY", KEY)


@pytest.fixture
def tiny(tmp_path) -> Path:
    """A competition whose files hold a zip with a nested zip, a .tar.gz and a .gz."""
    root = tmp_path / "tiny"
    root.mkdir()
    (root / "train.csv").write_text("id,y\n1,a\n2,b\n3,a\n4,b\n")
    (root / "test.csv").write_text("id\n5\n6\n7\n8\n")
    (root / "sample_submission.csv").write_text("id,y\n5,a\n6,a\n7,a\n8,a\n")
    inner = io.BytesIO()
    with zipfile.ZipFile(inner, "w") as z:
        z.writestr("deep.txt", "nested")
    with zipfile.ZipFile(root / "images.zip", "w") as z:
        z.writestr("a.txt", "A")
        z.writestr("b.txt", "B")
        z.writestr("inner.zip", inner.getvalue())
    with tarfile.open(root / "extra.tar.gz", "w:gz") as t:
        data = b"tarred"
        info = tarfile.TarInfo("extra/notes.txt")
        info.size = len(data)
        t.addfile(info, io.BytesIO(data))
    (root / "labels.csv.gz").write_bytes(gzip.compress(b"id,label\n1,x\n"))
    (tmp_path / "tiny-answers.csv").write_text("id,y\n5,a\n6,b\n7,a\n8,a\n")
    return root


@pytest.fixture
def serve(tiny, tmp_path):
    """serve(**knobs) -> a running FakeKaggle with `tiny` (and spaceship-titanic when present)."""
    servers = []

    def start(**knobs) -> FakeKaggle:
        comps = {"tiny": tiny}
        answers = {"tiny": tmp_path / "tiny-answers.csv"}
        if TITANIC.exists():
            comps["spaceship-titanic"] = TITANIC / "public"
            answers["spaceship-titanic"] = TITANIC / "private" / "test.csv"
        fake = FakeKaggle(comps, answers=answers, **knobs).__enter__()
        servers.append(fake)
        return fake

    yield start
    for fake in servers:
        fake.__exit__(None, None, None)


def tool() -> KaggleTool:
    return KaggleTool(backoff=0.01)


@pytest.mark.parametrize(
    "url,slug",
    [
        ("https://www.kaggle.com/competitions/titanic", "titanic"),
        ("https://www.kaggle.com/competitions/titanic/", "titanic"),
        ("https://www.kaggle.com/c/titanic", "titanic"),
        ("https://kaggle.com/competitions/spaceship-titanic/overview", "spaceship-titanic"),
        ("https://www.kaggle.com/competitions/spaceship-titanic/data?select=train.csv", "spaceship-titanic"),
        ("https://www.kaggle.com/competitions/home-credit-default-risk/leaderboard#score", "home-credit-default-risk"),
        (
            "http://www.kaggle.com/c/dogs-vs-cats-redux-kernels-edition/submissions",
            "dogs-vs-cats-redux-kernels-edition",
        ),
        ("http://127.0.0.1:7777/competitions/tiny", "tiny"),
        ("www.kaggle.com/competitions/titanic", "titanic"),
        ("  https://www.kaggle.com/competitions/titanic  ", "titanic"),
        ("https://www.kaggle.com/competitions", None),
        ("https://www.kaggle.com/datasets/user/titanic", None),
        ("https://www.kaggle.com/", None),
        ("/work/shared/arena-dev/spaceship-titanic/public", None),
        ("examples/competitions/titanic", None),
        ("titanic", None),
        ("", None),
    ],
)
def test_parse_competition_url(url, slug):
    assert parse_competition_url(url) == slug


def test_download_extracts_every_archive(serve, tiny, tmp_path):
    fake = serve()
    dest = tmp_path / "raw"
    files = tool().download("tiny", dest)
    got = {str(p.relative_to(dest)) for p in files}
    assert got == {
        "train.csv",
        "test.csv",
        "sample_submission.csv",
        "images/a.txt",
        "images/b.txt",
        "images/deep.txt",
        "extra/notes.txt",
        "labels.csv",
    }
    assert (dest / "images" / "deep.txt").read_text() == "nested"
    assert (dest / "labels.csv").read_text() == "id,label\n1,x\n"
    assert (dest / "train.csv").read_bytes() == (tiny / "train.csv").read_bytes()
    assert (dest / MARKER).exists() and not list(dest.glob(".partial-*"))
    assert ("GET", "/_storage/tiny/tiny.zip") in fake.requests  # the API's redirect was followed
    before = len(fake.requests)
    assert tool().download("tiny", dest) == files  # complete: not downloaded again
    assert len(fake.requests) == before


def test_interrupted_download_is_redone(serve, tiny, tmp_path):
    serve()
    dest = tmp_path / "raw"
    dest.mkdir()
    (dest / "train.csv").write_text("half")
    (dest / ".partial-99999").mkdir()
    (dest / "images.zip").write_text("truncated")
    tool().download("tiny", dest)
    assert (dest / "train.csv").read_bytes() == (tiny / "train.csv").read_bytes()
    assert (dest / MARKER).exists() and not (dest / ".partial-99999").exists()


@pytest.mark.skipif(not TITANIC.exists(), reason=f"{TITANIC} is absent")
def test_spaceship_titanic_download_and_metadata(serve, tmp_path):
    serve()
    t = tool()
    files = t.download("spaceship-titanic", tmp_path / "raw")
    assert sorted(p.name for p in files) == sorted(p.name for p in (TITANIC / "public").iterdir())
    meta = t.metadata("spaceship-titanic")
    assert meta["title"] == "Spaceship Titanic" and meta["evaluation_metric"] == "accuracy"
    assert meta["max_daily_submissions"] == 10 and meta["url"].endswith("/competitions/spaceship-titanic")
    assert meta["deadline"].startswith("2030-12-31") and meta["description"]


def test_7z_without_py7zr_is_a_bad_input(tmp_path, tiny):
    try:
        import py7zr  # noqa: F401

        pytest.skip("py7zr is installed")
    except ImportError:
        pass
    (tiny / "images.7z").write_bytes(b"7z\xbc\xaf\x27\x1c fake")
    with FakeKaggle({"tiny": tiny}):
        with pytest.raises(BadInput, match="images.7z is a 7z archive: install py7zr"):
            tool().download("tiny", tmp_path / "raw")
    assert not (tmp_path / "raw" / MARKER).exists() and not list((tmp_path / "raw").iterdir())


def test_single_file_and_file_list_with_the_real_client(serve, tiny, tmp_path):
    serve()
    api = tool().api
    names = {f.name for f in api.competition_list_files("tiny").files}
    assert {"train.csv", "images.zip", "labels.csv.gz"} <= names
    api.competition_download_file("tiny", "train.csv", path=str(tmp_path / "one"), force=True, quiet=True)
    assert (tmp_path / "one" / "train.csv").read_bytes() == (tiny / "train.csv").read_bytes()


def test_submit_poll_scores_and_leaderboard(serve, tmp_path):
    fake = serve()
    t = tool()
    sub = tmp_path / "submission.csv"
    sub.write_text("id,y\n5,a\n6,b\n7,b\n8,a\n")  # answers: 5 a, 6 b | 7 a, 8 a -> public 1.0, private 0.5
    ref = t.submit("tiny", sub, "first try")
    assert any(path.startswith("/_upload/") for method, path in fake.requests if method == "PUT")
    assert t.submissions("tiny")[0] | {"date": None} == {
        "status": "pending",
        "public_score": None,
        "private_score": None,
        "ref": ref,
        "date": None,
        "message": "first try",
        "file": "submission.csv",
        "error": None,
    }
    result = t.wait_for_score("tiny", ref, timeout=5, poll=0.01)
    assert (result["status"], result["public_score"], result["private_score"]) == ("complete", 1.0, 0.5)
    assert result["ref"] == ref and result["message"] == "first try" and result["date"]
    board = t.leaderboard("tiny", tmp_path / "lb")
    assert {"TeamName", "Score"} <= set(board.columns)
    assert board.loc[board.TeamName == USER, "Score"].item() == 1.0


def test_a_malformed_submission_is_scored_as_error(serve, tmp_path):
    serve()
    t = tool()
    bad = tmp_path / "bad.csv"
    bad.write_text("id,wrong\n5,a\n")
    result = t.wait_for_score("tiny", t.submit("tiny", bad, "bad"), timeout=5, poll=0.01)
    assert result["status"] == "error" and "wrong" in result["error"]


@pytest.mark.skipif(not TITANIC.exists(), reason=f"{TITANIC} is absent")
def test_spaceship_titanic_sample_submission_scores_its_accuracy(serve):
    serve()
    t = tool()
    result = t.wait_for_score(
        "spaceship-titanic",
        t.submit("spaceship-titanic", TITANIC / "public" / "sample_submission.csv", "all False"),
        timeout=5,
        poll=0.01,
    )
    truth = pd.read_csv(TITANIC / "private" / "test.csv")
    half = len(truth) // 2
    assert result["public_score"] == pytest.approx(round((~truth.Transported[:half]).mean(), 5))
    assert result["private_score"] == pytest.approx(round((~truth.Transported[half:]).mean(), 5))


def test_api_token_credentials(serve, monkeypatch):
    fake = serve()
    monkeypatch.delenv("KAGGLE_USERNAME")
    monkeypatch.delenv("KAGGLE_KEY")
    monkeypatch.setenv("KAGGLE_API_TOKEN", TOKEN)
    assert tool().metadata("tiny")["title"] == "Tiny"
    assert ("POST", "/api/v1/security.OAuthService/IntrospectToken") in fake.requests
    monkeypatch.setenv("KAGGLE_API_TOKEN", "stale-token")
    with pytest.raises(BadInput, match="rejected the API token"):
        tool()


def test_kaggle_json_credentials(serve, tmp_path, monkeypatch):
    serve()
    monkeypatch.delenv("KAGGLE_USERNAME")
    monkeypatch.delenv("KAGGLE_KEY")
    (tmp_path / "cfg" / "kaggle.json").write_text(f'{{"username": "{USER}", "key": "{KEY}"}}')
    (tmp_path / "cfg" / "kaggle.json").chmod(0o600)
    assert tool().metadata("tiny")["slug"] == "tiny"


def test_no_credentials(monkeypatch):
    monkeypatch.delenv("KAGGLE_USERNAME")
    monkeypatch.delenv("KAGGLE_KEY")
    with pytest.raises(BadInput) as err:
        tool()
    assert str(err.value) == NO_CREDENTIALS


def test_invalid_credentials_401(serve, monkeypatch):
    serve()
    monkeypatch.setenv("KAGGLE_KEY", "wrong-key")
    with pytest.raises(BadInput, match=r"rejected the credentials \(401\)"):
        tool().metadata("tiny")


def test_rules_not_accepted_403(serve, tmp_path):
    serve(rules_not_accepted=["tiny"])
    t = tool()
    assert t.metadata("tiny")["slug"] == "tiny"  # the listing works; data and submissions need the rules
    with pytest.raises(BadInput, match=r"403.*https://www\.kaggle\.com/competitions/tiny/rules, then retry"):
        t.download("tiny", tmp_path / "raw")
    assert not (tmp_path / "raw" / MARKER).exists() and not list((tmp_path / "raw").glob(".partial-*"))
    with pytest.raises(BadInput, match="accept the competition rules"):
        t.submit("tiny", tmp_path / "tiny-answers.csv", "x")


def test_unknown_competition_404(serve, tmp_path):
    serve()
    t = tool()
    with pytest.raises(BadInput, match="unknown competition no-such-thing"):
        t.metadata("no-such-thing")
    with pytest.raises(BadInput, match=r"unknown competition no-such-thing \(404\): check the URL"):
        t.download("no-such-thing", tmp_path / "raw")


def test_network_down():
    t = tool()  # key credentials: authenticating needs no network
    with pytest.raises(BadInput, match=r"cannot reach the Kaggle API \(http://localhost:7777\): check the network"):
        t.metadata("tiny")


def test_daily_submission_limit(serve, tmp_path):
    serve(daily_limit=1)
    t = tool()
    sub = tmp_path / "submission.csv"
    sub.write_text("id,y\n5,a\n6,b\n7,a\n8,a\n")
    t.submit("tiny", sub, "one")
    with pytest.raises(
        BadInput, match=r"daily submission limit reached for tiny: try again tomorrow UTC \(in [\d.]+ hours\)"
    ):
        t.submit("tiny", sub, "two")


def test_transient_errors_are_retried(serve, tmp_path):
    fake = serve(fail_first=3)
    t = tool()
    assert t.metadata("tiny")["slug"] == "tiny"
    assert [p for _, p in fake.requests].count("/api/v1/competitions.CompetitionApiService/ListCompetitions") == 4
    fake.fail_first, calls = 2, len(fake.requests)
    assert any(p.name == "train.csv" for p in t.download("tiny", tmp_path / "raw"))
    assert len(fake.requests) - calls == 4  # two 503s, then DownloadDataFiles and the storage GET


def test_upload_failure_is_retried(serve, tmp_path):
    fake = serve()
    t = tool()
    sub = tmp_path / "submission.csv"
    sub.write_text("id,y\n5,a\n6,b\n7,a\n8,a\n")
    original = fake._upload

    def flaky(h, token, body):  # the storage answers 503 once
        fake._upload = original
        from testing.fake_kaggle import _json

        _json(h, 503, {"code": 503, "message": "try later"})

    fake._upload = flaky
    ref = t.submit("tiny", sub, "after a failed upload")
    assert [m for m, _ in fake.requests].count("PUT") == 2
    assert t.wait_for_score("tiny", ref, timeout=5, poll=0.01)["status"] == "complete"


def test_persistent_failure_gives_up(serve):
    serve(fail_first=100)
    with pytest.raises(BadInput, match="keeps failing"):
        KaggleTool(backoff=0.001, attempts=3).metadata("tiny")
