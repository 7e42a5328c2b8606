"""The classical text candidate (tools/classical_txt.py, tools/text_pairs.py): per-field TF-IDF, field statistics and,
for two fields or more, pair features into gradient boosting, chosen by cross-validation (tools/classical.py).

A finished setup takes minutes, so these tests hand the candidate an in-memory task: the few TaskData members that
tools/classical.py reads, over the rows of a generated fixture. The full path (setup, then the solver's
classical-txt solution) is measured by benchmarks/classical_txt.py."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from agentk.modalities import TABULAR, TEXT
from testing.competitions import build
from tools import classical_txt
from tools.classical import Features, fit_candidate
from tools.metrics import pearson, roc_auc
from tools.task_data import TaskData
from tools.text_pairs import pair_features, word_alignment


class FrameTask:
    """The members of TaskData that tools/classical.py uses, for one output over in-memory text fields."""

    times = groups = None  # rows neither in time order nor in groups
    folds = TaskData.folds  # the real folds over such rows
    learn_rows, fit_weights = TaskData.learn_rows, TaskData.fit_weights  # the real rows and weights the metric asks
    _placeholders = TaskData._placeholders  # and the placeholder values it leaves out
    engineered = TaskData.engineered  # no engineered columns unless a test says so
    set_aside = TaskData.set_aside  # and no columns set aside
    _scored = None  # every row scored (no mask)

    def __init__(self, texts: pd.DataFrame, y: np.ndarray, kind: str, n_test: int, metric, table=None):
        n = len(texts) - n_test
        inputs = {TEXT.name: texts} | ({TABULAR.name: table} if table is not None else {})
        self.modalities = list(inputs)
        self.train = SimpleNamespace(inputs={m: f.iloc[:n].reset_index(drop=True) for m, f in inputs.items()})
        self.test = SimpleNamespace(inputs={m: f.iloc[n:].reset_index(drop=True) for m, f in inputs.items()})
        self.y = np.asarray(y[:n], dtype=float).reshape(-1, 1)
        self.outputs, self.widths = [{"kind": kind}], [1]
        rows = np.random.default_rng(0).permutation(n)
        self.split = (np.sort(rows[n // 5 :]), np.sort(rows[: n // 5]))
        self.metric, self.metric_name = metric, metric.__name__

    def score(self, pred: np.ndarray, rows) -> float:
        return float(self.metric(self.y[rows, 0], pred[:, 0]))

    def better(self, a: float, b: float) -> bool:
        return a > b


def quiet(*_):
    pass


@pytest.fixture(scope="module")
def phrase_pairs(tmp_path_factory) -> pd.DataFrame:
    folder = build("phrase-pair-similarity", tmp_path_factory.mktemp("fixtures"))
    return pd.read_csv(folder / "public" / "train.csv").head(300)


def test_pair_features_make_the_candidate_beat_tfidf_alone_on_phrase_similarity(phrase_pairs):
    task = FrameTask(phrase_pairs[["anchor", "target"]], phrase_pairs["score"].to_numpy(), "regression", 40, pearson)
    feats = classical_txt.features(task, log=quiet)
    assert feats.details["paired_fields"] == ["anchor", "target"]
    assert any(n.startswith("gradient boosting") for n in feats.models)
    full = fit_candidate(task, feats, log=quiet)
    terms = feats.details["terms"]
    tfidf_only = Features(
        feats.train[:, :terms], feats.test[:, :terms], "TF-IDF", {"linear": classical_txt._linear(1.0, slice(None))}
    )
    alone = fit_candidate(task, tfidf_only, log=quiet)
    # whether the target phrase keeps the anchor's words is invisible to per-field TF-IDF, plain to the pair features
    assert not full.details["chosen"].startswith("linear (C=")
    assert full.val_score > 0.5 and full.val_score > alone.val_score + 0.2, (full.val_score, alone.val_score)
    assert full.test_pred.shape == (40, 1) and np.isfinite(full.test_pred).all()


def test_a_linear_model_on_the_words_alone_competes_where_word_pairs_carry_the_label():
    """Reviews whose signal words flip their weight after "not": word pairs see the negation, character n-grams
    (taken within each word) only dilute it. Cross-validation picks the words alone, and it validates better than
    the best model on every term."""
    rng = np.random.default_rng(0)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    noise = ["".join(rng.choice(letters, rng.integers(4, 9))) for _ in range(3000)]
    signal, weights = ["".join(rng.choice(letters, 6)) for _ in range(30)], rng.normal(0, 1.5, 30)
    zipf = 1 / np.arange(1, len(noise) + 1)
    texts, labels = [], []
    for _ in range(2000):
        picked, flipped = rng.choice(30, 3), rng.random(3) < 0.5
        words = [*rng.choice(noise, rng.integers(8, 20), p=zipf / zipf.sum())]
        words += [("not " if f else "") + signal[j] for j, f in zip(picked, flipped, strict=True)]
        rng.shuffle(words)
        texts.append(" ".join(words))
        labels.append(rng.random() < 1 / (1 + np.exp(-(weights[picked] * np.where(flipped, -1, 1)).sum())))
    task = FrameTask(pd.DataFrame({"text": texts}), np.array(labels, float), "binary", 400, roc_auc)
    feats = classical_txt.features(task, log=quiet)
    chosen = fit_candidate(task, feats, log=quiet)
    assert chosen.details["chosen"].endswith("on the words alone"), chosen.details["cv"]
    every_term = {n: m for n, m in feats.models.items() if not n.endswith("on the words alone")}
    best_of_all = fit_candidate(task, Features(feats.train, feats.test, feats.what, every_term), log=quiet)
    assert chosen.val_score > best_of_all.val_score + 0.02, (chosen.val_score, best_of_all.val_score)


def test_each_field_has_its_own_vocabulary():
    """The label is which field holds the marker word: one string of both fields could not tell."""
    rng = np.random.default_rng(1)
    words = "river stone cloud paper window garden music bread".split()
    n = 240
    y = rng.integers(0, 2, n)
    a = [" ".join([*rng.choice(words, 6), *(["marker"] if t else [])]) for t in y]
    b = [" ".join([*rng.choice(words, 6), *([] if t else ["marker"])]) for t in y]
    task = FrameTask(pd.DataFrame({"first": a, "second": b}), y, "binary", 40, roc_auc)
    feats = classical_txt.features(task, log=quiet)
    res = fit_candidate(task, feats, log=quiet)
    assert res.val_score > 0.95


def test_missing_and_empty_cells_and_an_empty_field_do_not_break_the_candidate():
    rng = np.random.default_rng(2)
    n = 120
    y = rng.integers(0, 2, n)
    text = np.array([f"good fine day {i % 7}" if t else f"bad awful night {i % 5}" for i, t in enumerate(y)], object)
    text[::9] = None
    text[1::11] = ""
    frame = pd.DataFrame({"body": text, "note": [None] * n, "title": ["same title"] * n})
    task = FrameTask(frame, y, "binary", 20, roc_auc)
    feats = classical_txt.features(task, log=quiet)
    assert np.isfinite(feats.train.toarray()).all() and np.isfinite(feats.test.toarray()).all()
    res = fit_candidate(task, feats, log=quiet)
    assert np.isfinite(res.test_pred).all() and res.val_score > 0.8


def test_one_field_gets_no_pair_features_and_no_text_at_all_is_a_clear_error():
    texts = pd.DataFrame({"comment": ["spam offer now", "hello friend", "spam spam win", "hello there"] * 10})
    y = np.array([1, 0, 1, 0] * 10)
    task = FrameTask(texts, y, "binary", 8, roc_auc)
    feats = classical_txt.features(task, log=quiet)
    assert feats.details["paired_fields"] == [] and set(feats.models) == {
        "linear (C=0.3)",
        "linear (C=1)",
        "linear (C=10)",
        "linear (C=0.3) on the words alone",
        "linear (C=1) on the words alone",
    }
    blank = FrameTask(pd.DataFrame({"comment": [None, " "] * 10}), y[:20], "binary", 4, roc_auc)
    with pytest.raises(ValueError, match="no term"):
        classical_txt.features(blank, log=quiet)


def test_words_are_aligned_by_meaning_where_no_token_is_shared():
    """A target that says the anchor's words in synonyms shares no token with it, as an unrelated one does not;
    the word alignment (the best MiniLM cosine of each word in the other text) tells them apart."""
    anchor = np.array(["large fast vehicle", "large fast vehicle", "large fast vehicle", "", "only words"])
    target = np.array(["big quick car", "green soft table", "fast vehicle large", "big car", ""])
    values, names = word_alignment(anchor, target)
    row = {n: values[:, k] for k, n in enumerate(names)}
    assert row["aligned_first_mean"][0] > row["aligned_first_mean"][1] + 0.15, row["aligned_first_mean"]
    assert row["aligned_first_mean"][2] == row["aligned_second_least"][2] == 1.0  # the same words, reordered
    assert row["aligned_first_share_0.999_1"][2] == 1.0 and row["aligned_first_share_0.999_1"][0] == 0.0
    shares = [n for n in names if n.startswith("aligned_first_share")]
    assert np.allclose(sum(row[n] for n in shares)[:3], 1.0)  # each word falls in one band
    assert not values[3:].any()  # a text without words matches nothing
    pairs, pair_names = pair_features(pd.Series(anchor), pd.Series(target), np.eye(5), np.eye(5))
    assert set(names) <= set(pair_names)
    jaccard = pairs[:, pair_names.index("jaccard")]
    assert jaccard[0] == jaccard[1] == 0.0  # token overlap: synonyms and unrelated words alike


def test_the_table_beside_the_texts_joins_them_in_one_linear_model():
    """Listings whose two text fields say little: the price is in the table beside them, a product name's words (a
    phrase column), a category and a condition number. The linear model over texts and table is chosen, and it
    validates far better than any model of the texts alone."""
    rng = np.random.default_rng(4)
    n = 1500
    brands, kinds = [f"brand{i}" for i in range(40)], [f"Kind/{i}" for i in range(12)]
    brand, kind, condition = rng.integers(0, 40, n), rng.integers(0, 12, n), rng.integers(1, 6, n)
    value = rng.normal(0, 1, 40)[brand] + rng.normal(0, 0.7, 12)[kind] - 0.2 * condition + rng.normal(0, 0.2, n)
    filler = "great item fast shipping smoke free home no trades offers welcome".split()
    texts = pd.DataFrame(
        {
            "description": [" ".join(rng.choice(filler, 6)) for _ in range(n)],
            "title": [" ".join(rng.choice(filler, 3)) for _ in range(n)],
        }
    )
    table = pd.DataFrame(
        {
            "name": [f"{brands[b]} {rng.choice(filler)} size {rng.integers(1, 9)}" for b in brand],
            "category": np.array(kinds)[kind],
            "condition": condition,
        }
    )

    def rmse(y, p):
        return -float(np.sqrt(np.mean((y - p) ** 2)))  # higher is better, as FrameTask.better reads it

    task = FrameTask(texts, value, "regression", 300, rmse, table=table)
    feats = classical_txt.features(task, log=quiet)
    assert feats.details["table_columns"] > 0
    chosen = fit_candidate(task, feats, log=quiet)
    assert chosen.details["chosen"].endswith("with the table"), chosen.details["cv"]
    texts_alone = {name: m for name, m in feats.models.items() if not name.endswith("with the table")}
    alone = fit_candidate(task, Features(feats.train, feats.test, feats.what, texts_alone), log=quiet)
    assert chosen.val_score > -0.4 and alone.val_score < -0.9, (chosen.val_score, alone.val_score)


def test_a_column_of_mostly_distinct_phrases_is_read_by_its_words_not_its_exact_values():
    """Product names beside a description that says nothing: the price is in the names' brand word, and an exact
    name recurs in one or two listings with their own noise. The names are read as words alone, with no level per
    exact name, which would learn those few listings' noise: the linear model with the table validates better than
    the same model given the names' levels too. A category of few levels keeps its levels."""
    from scipy import sparse
    from sklearn.linear_model import Ridge

    rng = np.random.default_rng(7)
    n = 1800
    brands, words = [f"brand{i}" for i in range(30)], "vintage new classic soft bright small warm light".split()
    pool = [
        f"{rng.choice(brands)} {rng.choice(words)} {rng.choice(words)} size {rng.integers(1, 9)}" for _ in range(1000)
    ]
    names = rng.choice(pool, n)
    effect = dict(zip(brands, rng.normal(0, 1, 30)))
    kind = rng.integers(0, 6, n)
    value = np.array([effect[s.split()[0]] for s in names]) + 0.3 * kind + rng.normal(0, 0.5, n)
    texts = pd.DataFrame({"description": [" ".join(rng.choice(words, 5)) for _ in range(n)]})
    table = pd.DataFrame({"name": names, "category": [f"Home / Kind {k}" for k in kind]})

    def rmse(y, p):
        return -float(np.sqrt(np.mean((y - p) ** 2)))

    task = FrameTask(texts, value, "regression", 300, rmse, table=table)
    feats = classical_txt.features(task, log=quiet)
    assert "2 one-hot" not in feats.what and "1 one-hot columns and 2 phrase columns" in feats.what, feats.what
    fit, val = task.split
    levels = pd.Categorical(table["name"].iloc[: len(task.y)]).codes
    one_hot = sparse.csr_matrix((np.ones(len(levels)), (np.arange(len(levels)), levels)))
    with_levels = sparse.hstack([feats.train, one_hot]).tocsr()
    y = task.y[:, 0]
    scores = []
    for X in (feats.train, with_levels):
        model = Ridge(alpha=1 / 0.3).fit(X[fit], y[fit])
        scores.append(rmse(y[val], model.predict(X[val])))
    assert scores[0] > scores[1] + 0.005, scores


def test_the_table_beside_the_texts_reads_a_key_set_aside_in_place_of_its_encodings():
    """A brand the features replaced by its target encodings (TaskData.set_aside) comes back as its own column and its
    encodings leave: beside the key a linear model would read fit rows' labels off them."""
    from tools.features import with_keys

    train = pd.DataFrame({"price_floor": [1.0, 2.0], "brand__count": [2.0, 1.0], "brand__te_price": [0.3, 0.4]})
    test = pd.DataFrame({"price_floor": [3.0], "brand__count": [1.0], "brand__te_price": [0.5]})
    task = SimpleNamespace(
        train=SimpleNamespace(inputs={TABULAR.name: train}),
        test=SimpleNamespace(inputs={TABULAR.name: test}),
        set_aside={"brand": (pd.Series(["acme", "zeta"]), pd.Series(["acme"]))},
    )
    with_train, with_test = with_keys(task, replacing=True)
    assert list(with_train.columns) == ["price_floor", "brand__count", "brand"]
    assert with_train["brand"].tolist() == ["acme", "zeta"] and with_test["brand"].tolist() == ["acme"]
    assert "brand__te_price" in train  # the task's own frames untouched
