"""Fixture family "text pairs": text tasks whose answer lies in how two texts of a row relate, not in either alone:
a phrase-pair similarity regression scored by Pearson correlation (a second phrase rewritten from the first, some
words kept, some replaced by a synonym, some by an unrelated word) and a question/answer quality task with several
rated targets scored by mean column-wise Spearman (whether the answer is on the question's topic, how long and how
detailed it is, what kind of question it is). Every text is synthetic, built from small English vocabularies; the
texts are sentence-length, so setup reads them as free text.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from testing.competitions import fixture
from testing.competitions.targets import _tabular

FAMILY = "text pairs"

# word -> a synonym: a rewritten phrase that swaps one keeps its meaning (what a sentence embedding sees)
SYNONYMS = {
    "large": "big",
    "small": "little",
    "device": "apparatus",
    "vehicle": "car",
    "method": "technique",
    "fast": "quick",
    "container": "vessel",
    "liquid": "fluid",
    "heating": "warming",
    "cutting": "slicing",
    "rotating": "spinning",
    "electric": "electrical",
    "motor": "engine",
    "signal": "message",
    "image": "picture",
    "storage": "memory",
    "cover": "lid",
    "seal": "gasket",
    "filter": "sieve",
    "pump": "compressor",
    "valve": "tap",
    "sensor": "detector",
    "wheel": "tyre",
    "shaft": "axle",
    "beam": "girder",
    "panel": "board",
    "lamp": "light",
    "plastic": "polymer",
    "metal": "steel",
    "glass": "crystal",
}
PAIRED = SYNONYMS | {v: k for k, v in SYNONYMS.items()}  # either word of a pair may be the anchor's
VOCABULARY = sorted(PAIRED)
FILLER = "for with of in on the a an using having".split()
CONTEXTS = ["A01", "B23", "C07", "F16", "G06", "H04"]


def _phrase(rng: np.random.Generator, n_words: int) -> list[str]:
    content = list(rng.choice(VOCABULARY, n_words, replace=False))
    out = []
    for w in content:  # fillers between content words make the phrase read like a claim fragment
        out.append(w)
        if rng.random() < 0.5:
            out.append(str(rng.choice(FILLER)))
    return out


def _rewrite(rng: np.random.Generator, words: list[str]) -> tuple[list[str], float]:
    """The phrase with each content word kept, swapped for its synonym or for an unrelated word of the same
    vocabulary (so neither phrase alone tells the score); and how similar the result is (kept 1, synonym 0.75,
    unrelated 0), averaged over the content words."""
    p_keep, p_syn = rng.dirichlet([1.0, 1.0, 1.0])[:2]
    out, sims = [], []
    for w in words:
        if w in FILLER:
            out.append(w)
            continue
        r = rng.random()
        if r < p_keep:
            out.append(w), sims.append(1.0)
        elif r < p_keep + p_syn:
            out.append(PAIRED[w]), sims.append(0.75)
        else:
            out.append(str(rng.choice([v for v in VOCABULARY if v not in (w, PAIRED[w])]))), sims.append(0.0)
    return out, float(np.mean(sims))


@fixture(FAMILY, "phrase pairs (anchor, target, context) rated for similarity 0-1 in quarters, Pearson correlation")
def phrase_pair_similarity(folder: Path, rng: np.random.Generator) -> dict:
    return _phrase_pairs(folder, rng, lambda: _phrase(rng, int(rng.integers(6, 10))), ["text", "tabular"])


@fixture(
    FAMILY,
    "short phrase pairs (1-3 words, anchors repeated over rows, as in patent phrase matching): setup reads them as "
    "table columns, so the pair features come from the tab feature engineering",
)
def short_phrase_pairs(folder: Path, rng: np.random.Generator) -> dict:
    anchors = [" ".join(rng.choice(VOCABULARY, int(rng.integers(1, 4)), replace=False)) for _ in range(150)]
    return _phrase_pairs(folder, rng, lambda: str(rng.choice(anchors)).split(), ["tabular"])


def _phrase_pairs(folder: Path, rng: np.random.Generator, make_anchor, inputs: list[str]) -> dict:
    n_train, n_test = 1200, 400
    rows = []
    for i in range(n_train + n_test):
        anchor = make_anchor()
        target, sim = _rewrite(rng, anchor)
        if rng.random() < 0.3:  # the raters judge meaning, not word order
            rng.shuffle(target)
        score = np.clip(np.round((sim + rng.normal(scale=0.08)) * 4) / 4, 0, 1)
        rows.append((f"p{i:05d}", " ".join(anchor), " ".join(target), str(rng.choice(CONTEXTS)), score))
    frame = pd.DataFrame(rows, columns=["id", "anchor", "target", "context", "score"])
    train, test = frame.iloc[:n_train], frame.iloc[n_train:]
    return _tabular(
        folder,
        "Phrase to phrase matching",
        "Each row pairs an anchor phrase with a target phrase, within a technical context (a class code). Predict "
        "`score`, how similar in meaning the two phrases are: 0 unrelated, 0.25 somewhat related, 0.5 related, "
        "0.75 close synonyms, 1 the same meaning.",
        "Submissions are evaluated on the Pearson correlation coefficient between the predicted and the actual "
        "similarity scores.",
        train,
        test.drop(columns="score"),
        pd.DataFrame({"id": test["id"], "score": 0.0}),
        test[["id", "score"]],
        {
            "modalities": {"inputs": inputs, "targets": ["tabular"]},
            "task_type": "Reg",
            "metric": "pearson",
            "lower_is_better": False,
        },
    )


TOPICS = {
    "cooking": "oven recipe flour butter simmer sauce garlic dough bake onion pepper skillet".split(),
    "gardening": "soil compost seeds tomato prune roses watering mulch weeds seedlings fertilizer shade".split(),
    "cycling": "bike chain gears saddle brakes tyres pedals frame derailleur helmet spokes cadence".split(),
    "photography": "lens aperture shutter exposure tripod sensor focus flash portrait zoom iso lighting".split(),
    "plumbing": "pipe faucet leak drain valve washer sink toilet pressure fitting solder trap".split(),
}
OPENERS = {
    "how": "How do I {a} the {b} when the {c} keeps failing?",
    "why": "Why does my {b} {a} every time I change the {c}?",
    "what": "What is the best {b} to pick for {a} with a {c}?",
}
VERBS = "fix adjust replace clean choose check".split()
GENERIC = "i think you should try it and see what happens because it usually works for most people".split()
RATINGS = [
    "question_type_instructions",
    "question_type_reason",
    "question_type_choice",
    "answer_relevance",
    "answer_helpful",
    "answer_level_of_information",
    "answer_plausible",
    "question_well_written",
]


@fixture(FAMILY, "question title, body and answer rated on 8 targets (raters' averages), mean column-wise Spearman")
def qa_quality_ratings(folder: Path, rng: np.random.Generator) -> dict:
    n_train, n_test = 1200, 400
    names = list(TOPICS)
    records, latent = [], []
    for i in range(n_train + n_test):
        topic = str(rng.choice(names))
        kind = str(rng.choice(list(OPENERS)))
        words = list(rng.choice(TOPICS[topic], 3, replace=False))
        title = OPENERS[kind].format(a=rng.choice(VERBS), b=words[0], c=words[1])
        body = " ".join(
            [*rng.choice(TOPICS[topic], int(rng.integers(6, 14))), *rng.choice(GENERIC, int(rng.integers(4, 10)))]
        ).capitalize()
        on_topic = rng.random() < 0.6
        answer_topic = topic if on_topic else str(rng.choice([t for t in names if t != topic]))
        detail = int(rng.integers(0, 4))  # 0: a generic reply ... 3: a long on-point one
        answer = " ".join(
            [*rng.choice(GENERIC, int(rng.integers(6, 12))), *rng.choice(TOPICS[answer_topic], 4 * detail + 2)]
        ).capitalize()
        typo = rng.random() < 0.3
        if typo:  # a badly written question: lower case, no question mark
            title = title.lower().rstrip("?")
        records.append((f"q{i:05d}", title, body, answer, topic))
        latent.append(
            [
                kind == "how",
                kind == "why",
                kind == "what",
                on_topic,
                on_topic * (0.4 + 0.2 * detail),
                detail / 3,
                0.5 * on_topic + 0.5 * (detail > 0),
                1 - typo,
            ]
        )
    z = np.asarray(latent, dtype=float) * 3 - 1.5 + rng.normal(scale=0.6, size=(len(latent), len(RATINGS)))
    y = np.round(1 / (1 + np.exp(-z)) * 6) / 6  # raters' averages: a few distinct values
    frame = pd.DataFrame(records, columns=["qa_id", "question_title", "question_body", "answer", "category"])
    frame[RATINGS] = y.round(6)
    train, test = frame.iloc[:n_train], frame.iloc[n_train:]
    return _tabular(
        folder,
        "Question and answer quality",
        "Each row is a question (title and body) from a help forum and one answer to it, with its forum category. "
        f"Raters judged {len(RATINGS)} aspects of the pair; predict each rating, a value in [0, 1].",
        "Submissions are evaluated on the mean column-wise Spearman's correlation coefficient: the Spearman's rank "
        "correlation is computed for each target column, and the mean of these values is the score.",
        train,
        test.drop(columns=RATINGS),
        pd.DataFrame({"qa_id": test["qa_id"], **{c: 0.5 for c in RATINGS}}),
        test[["qa_id", *RATINGS]],
        {
            "modalities": {"inputs": ["text", "tabular"], "targets": ["tabular"]},
            "task_type": "MultiTgtReg",
            "metric": "mean_spearman",
            "lower_is_better": False,
        },
    )
