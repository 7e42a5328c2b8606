"""Fixture family "rewrites": a text target that rewrites an input text, most rows copying it (text normalisation:
a token's spoken form). The tokens of each sentence come one per row in reading order, a number reads as a year
after "in" and as a cardinal elsewhere, and some test numbers are in no train row: a memorising lookup gets most
rows, the context the rest of what can be learnt.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from testing.competitions import fixture
from testing.competitions.layouts import description, finish

FAMILY = "rewrites"


_ONES = "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen".split()
_ONES += "seventeen eighteen nineteen".split()
_TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()


def _spoken(n: int) -> str:
    """A number below a million as words (1984: one thousand nine hundred eighty four)."""
    if n < 20:
        return _ONES[n]
    if n < 100:
        return _TENS[n // 10] + ("" if n % 10 == 0 else f" {_ONES[n % 10]}")
    if n < 1000:
        return f"{_ONES[n // 100]} hundred" + ("" if n % 100 == 0 else f" {_spoken(n % 100)}")
    return f"{_spoken(n // 1000)} thousand" + ("" if n % 1000 == 0 else f" {_spoken(n % 1000)}")


def _year(n: int) -> str:
    """A year as it is read (1984: nineteen eighty four; 2005: two thousand five)."""
    if 2000 <= n < 2010:
        return _spoken(n)
    return f"{_spoken(n // 100)} " + (
        "hundred" if n % 100 == 0 else f"oh {_ONES[n % 10]}" if n % 100 < 10 else _spoken(n % 100)
    )


@fixture(
    FAMILY, "a text target rewriting an input token (text normalisation): tokens in rows, context decides", fast=True
)
def rewrite_tokens(folder: Path, rng: np.random.Generator) -> dict:
    pub = folder / "public"
    letters = np.array(list("abcdefghijklmnoprstuvw"))
    words = sorted({"".join(rng.choice(letters, rng.integers(2, 9))) for _ in range(1500)})
    acronyms = sorted({"".join(rng.choice(letters, rng.integers(2, 5))).upper() for _ in range(150)})
    years = np.unique(rng.integers(1900, 2030, 60))  # read as years after "in", as numbers elsewhere
    numbers = np.unique(rng.integers(0, 3000, 240))
    rows = []
    for s in range(1800):
        for t in range(int(rng.integers(6, 14))):
            after_in = bool(rows) and rows[-1][3] == "in" and rows[-1][0] == s
            u = 0.0 if after_in and rng.random() < 0.7 else rng.random()
            if u < 0.1:  # a number, the common ones most often
                pool = years if after_in or rng.random() < 0.3 else numbers
                n = int(pool[min(int(rng.zipf(1.3)) - 1, len(pool) - 1)] if rng.random() < 0.7 else rng.choice(pool))
                year = after_in and n >= 1000
                before, after, kind = str(n), (_year(n) if year else _spoken(n)), "DATE" if year else "CARDINAL"
            elif u < 0.16:
                before = str(rng.choice(acronyms))
                after, kind = " ".join(before.lower()), "LETTERS"
            elif u < 0.25:
                before = after = "in"
                kind = "PLAIN"
            elif u < 0.3:
                before = after = str(rng.choice([".", ",", "-", ":"]))
                kind = "PUNCT"
            else:
                before = after = str(words[min(int(rng.zipf(1.15)) - 1, len(words) - 1)])
                kind = "PLAIN"
            rows.append((s, t, kind, before, after))
    frame = pd.DataFrame(rows, columns=["sentence_id", "token_id", "class", "before", "after"])
    cut = frame["sentence_id"] >= 1500
    train, test = frame[~cut].reset_index(drop=True), frame[cut].reset_index(drop=True)
    ids = test["sentence_id"].astype(str) + "_" + test["token_id"].astype(str)
    train.to_csv(pub / "en_train.csv", index=False)
    test[["sentence_id", "token_id", "before"]].to_csv(pub / "en_test_2.csv", index=False)
    pd.DataFrame({"id": ids, "after": test["before"]}).to_csv(pub / "en_sample_submission_2.csv", index=False)
    (pub / "description.md").write_text(
        description(
            "Convert written text into its spoken form: '12 kg' is read 'twelve kilograms'. Most tokens are read as "
            "written.",
            "Submissions are evaluated on prediction accuracy (the total percent of correct tokens).",
            [
                "en_train.csv - the training set, one row per token: sentence_id, token_id, class, before (the "
                "written token) and after (its spoken form)",
                "en_test_2.csv - the test set, without after or class",
                "en_sample_submission_2.csv - a sample submission: id is sentence_id and token_id joined by an "
                "underscore",
            ],
        )
    )
    answers = pd.DataFrame({"id": ids, "after": test["after"]})
    return finish(folder, answers, "en_sample_submission_2.csv", "MultiCls", n_train=len(train), n_test=len(test))


@fixture(FAMILY, "a spelling to correct, one word a row, the test joined to the sample by its id column", fast=True)
def corrected_spellings(folder: Path, rng: np.random.Generator) -> dict:
    pub = folder / "public"
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    words = sorted({"".join(rng.choice(letters, rng.integers(4, 10))) for _ in range(400)})
    typos = {}  # each word's usual misspellings: a letter dropped, doubled or two swapped
    for w in words:
        i = int(rng.integers(1, len(w) - 1))
        typos[w] = [w[:i] + w[i + 1 :], w[:i] + w[i] + w[i:], w[: i - 1] + w[i] + w[i - 1] + w[i + 1 :]]
    rows = []
    for k in range(6000):
        w = str(words[min(int(rng.zipf(1.2)) - 1, len(words) - 1)])
        typed = w if rng.random() < 0.6 else str(rng.choice(typos[w]))
        rows.append((f"w{k:05d}", typed, w))
    frame = pd.DataFrame(rows, columns=["word_id", "typed", "intended"]).sample(frac=1.0, random_state=0)
    train, test = frame.iloc[:4800], frame.iloc[4800:]
    train.to_csv(pub / "train.csv", index=False)
    test[["word_id", "typed"]].sort_values("word_id").to_csv(pub / "test.csv", index=False)
    pd.DataFrame({"word_id": test["word_id"], "intended": ""}).to_csv(pub / "sample_submission.csv", index=False)
    (pub / "description.md").write_text(
        description(
            "Each word was typed by hand: predict the word that was meant.",
            "Submissions are evaluated on accuracy, the share of words predicted exactly.",
            ["train.csv - typed words and the intended words", "test.csv - typed words", "sample_submission.csv"],
        )
    )
    answers = test[["word_id", "intended"]]
    return finish(folder, answers, "sample_submission.csv", "MultiCls", n_train=len(train), n_test=len(test))
