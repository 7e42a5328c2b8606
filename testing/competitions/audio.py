"""Fixture competitions of sound clips: tagged clips named in a table, spoken-word clips in class folders, and
recordings named by an id without extension scored per class. Each class is a sound with its own pitch and rhythm,
put at a random time into a clip of random loudness over background noise and a random distractor sound, so that a
model must find the event in the spectrum rather than read the clip's level or length."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from testing.competitions import fixture
from testing.competitions.layouts import ACCURACY, description, finish

FAMILY = "audio"


def clip(rng: np.random.Generator, k: int, rate: int, seconds: float) -> np.ndarray:
    """A mono clip in [-1, 1] whose event is class k's: a tone near its pitch with a harmonic, pulsed at its rate,
    sometimes barely above the noise, beside two distractor tones of any pitch."""
    n = int(rate * seconds)
    t = np.arange(n) / rate
    x = rng.normal(scale=0.05, size=n)  # background noise
    pitch = 400.0 * 1.45**k * rng.uniform(0.85, 1.15)  # neighbouring classes' pitches overlap
    pulses = 3.0 + 2.5 * (k % 3)  # bursts per second
    length = min(seconds, rng.uniform(0.3, 0.8))
    start = rng.uniform(0, seconds - length)
    on = (t >= start) & (t < start + length)
    envelope = on * (0.5 + 0.5 * np.sign(np.sin(2 * np.pi * pulses * (t - start))))
    level = rng.uniform(0.01, 0.2)
    x += envelope * level * (np.sin(2 * np.pi * pitch * t) + 0.4 * np.sin(2 * np.pi * 2 * pitch * t))
    for _ in range(2):  # distractor tones of any pitch, anywhere
        other, d0 = rng.uniform(200, 0.4 * rate), rng.uniform(0, seconds)
        x += ((t >= d0) & (t < d0 + 0.3)) * rng.uniform(0.02, 0.2) * np.sin(2 * np.pi * other * t)
    return np.clip(x * rng.uniform(0.05, 1.0), -1, 1)  # any loudness


def _write(path: Path, samples: np.ndarray, rate: int) -> None:
    import soundfile

    path.parent.mkdir(parents=True, exist_ok=True)
    kind = "AIFF" if path.suffix.lower() in (".aif", ".aiff") else None  # soundfile names .aiff only
    soundfile.write(str(path), samples, rate, format=kind)


@fixture(FAMILY, "tagged clips: train.csv names each WAV (with extension), 2-4 s at 16 kHz, top-3 labels by MAP@3")
def tagged_clips(folder: Path, rng: np.random.Generator) -> dict:
    pub = folder / "public"
    classes = ["Bark", "Chime", "Cough", "Drill", "Flute", "Knock"]
    rows = {"train": [], "test": []}
    for split, n in (("train", 360), ("test", 120)):
        for _ in range(n):
            k = int(rng.integers(0, len(classes)))
            name = f"{rng.integers(0, 16**8):08x}.wav"
            _write(pub / f"audio_{split}" / name, clip(rng, k, 16000, rng.uniform(2, 4)), 16000)
            rows[split].append((name, classes[k], int(rng.integers(0, 2))))
    train = pd.DataFrame(rows["train"], columns=["fname", "label", "manually_verified"])
    train.to_csv(pub / "train.csv", index=False)
    answers = pd.DataFrame(rows["test"], columns=["fname", "label", "_"])[["fname", "label"]]
    answers.assign(label="Bark Chime Cough").to_csv(pub / "sample_submission.csv", index=False)
    (pub / "description.md").write_text(
        description(
            "Tag each sound clip with the kind of sound it holds; up to three labels, the likeliest first.",
            "Submissions are evaluated according to the Mean Average Precision @ 3 (MAP@3).",
            [
                "train.csv: fname, label, manually_verified",
                "audio_train/, audio_test/: WAV clips",
                "sample_submission.csv",
            ],
        )
    )
    return finish(folder, answers, "sample_submission.csv", task_type="MultiCls", metric="map_at_3", inputs=("audio",))


@fixture(FAMILY, "spoken-word clips: train/audio/<word>/<speaker>_nohash_<n>.wav, test/audio/*.wav, 1 s, accuracy")
def word_folders(folder: Path, rng: np.random.Generator) -> dict:
    pub = folder / "public"
    words = ["down", "go", "left", "no", "up"]
    for i in range(300):
        k = int(rng.integers(0, len(words)))
        name = f"{rng.integers(0, 16**8):08x}_nohash_{i % 3}.wav"
        _write(pub / "train" / "audio" / words[k] / name, clip(rng, k, 16000, 1.0), 16000)
    answers = []
    for _ in range(100):
        k = int(rng.integers(0, len(words)))
        name = f"clip_{rng.integers(0, 16**9):09x}.wav"
        _write(pub / "test" / "audio" / name, clip(rng, k, 16000, 1.0), 16000)
        answers.append((name, words[k]))
    answers = pd.DataFrame(answers, columns=["fname", "label"])
    answers.assign(label="silence").to_csv(pub / "sample_submission.csv", index=False)
    (pub / "description.md").write_text(
        description(
            "Say which word is spoken in each one-second clip.",
            ACCURACY,
            ["train/audio/<word>/*.wav", "test/audio/*.wav", "sample_submission.csv"],
        )
    )
    return finish(folder, answers, "sample_submission.csv", task_type="MultiCls", inputs=("audio",))


@fixture(FAMILY, "FLAC recordings at 32 kHz named by recording_id (no extension); one probability column per species")
def species_recordings(folder: Path, rng: np.random.Generator) -> dict:
    pub = folder / "public"
    species = 4
    train, answers = [], []
    for split, n, out in (("train", 240, train), ("test", 80, answers)):
        for _ in range(n):
            k = int(rng.integers(0, species))
            rid = f"{rng.integers(0, 16**9):09x}"
            _write(pub / split / f"{rid}.flac", clip(rng, k, 32000, rng.uniform(3, 6)), 32000)
            out.append((rid, k))
    pd.DataFrame(train, columns=["recording_id", "species_id"]).to_csv(pub / "train_tp.csv", index=False)
    test = pd.DataFrame(answers, columns=["recording_id", "species_id"])
    onehot = pd.DataFrame(
        {f"s{j}": (test["species_id"] == j).astype(int) for j in range(species)}, index=test.index
    ).assign(recording_id=test["recording_id"])[["recording_id", *[f"s{j}" for j in range(species)]]]
    onehot.assign(**{f"s{j}": 0.25 for j in range(species)}).to_csv(pub / "sample_submission.csv", index=False)
    (pub / "description.md").write_text(
        description(
            "Give, for each recording, the probability that each species (s0 to s3) is heard in it.",
            "Submissions are evaluated on mean column-wise ROC AUC: the average of the species' AUCs.",
            ["train_tp.csv: recording_id, species_id", "train/, test/: FLAC recordings", "sample_submission.csv"],
        )
    )
    return finish(folder, onehot, "sample_submission.csv", "MultiCls", "mean_columnwise_auc", inputs=("audio",))


@fixture(
    FAMILY, "clips with one or two tags each as comma-separated label sets; one probability column per tag, lwlrap"
)
def multilabel_clips(folder: Path, rng: np.random.Generator) -> dict:
    pub = folder / "public"
    tags = ["Bark", "Chime", "Cough", "Drill", "Flute"]
    rows = {"train": [], "test": []}
    for split, n in (("train", 300), ("test", 100)):
        for _ in range(n):
            ks = sorted(rng.choice(len(tags), int(rng.integers(1, 3)), replace=False))
            seconds = rng.uniform(2, 4)
            samples = sum(clip(rng, int(k), 16000, seconds) for k in ks) / len(ks)
            name = f"{rng.integers(0, 16**8):08x}.wav"
            _write(pub / f"{split}_curated" / name, samples, 16000)
            rows[split].append((name, {tags[k] for k in ks}))
    pd.DataFrame([(n, ",".join(sorted(s))) for n, s in rows["train"]], columns=["fname", "labels"]).to_csv(
        pub / "train_curated.csv", index=False
    )
    answers = pd.DataFrame([{"fname": n, **{t: int(t in s) for t in tags}} for n, s in rows["test"]])
    answers.assign(**{t: 0.2 for t in tags}).to_csv(pub / "sample_submission.csv", index=False)
    (pub / "description.md").write_text(
        description(
            "Tag each clip with every kind of sound it holds (one or two): a probability for each tag.",
            "The task is evaluated with label-weighted label-ranking average precision (lwlrap).",
            [
                "train_curated.csv: fname, labels (comma-separated)",
                "train_curated/, test_curated/",
                "sample_submission.csv",
            ],
        )
    )
    return finish(folder, answers, "sample_submission.csv", task_type="MultiLabel", metric="lwlrap", inputs=("audio",))


@fixture(FAMILY, "AIFF clips labelled by the end of their name (..._TRAIN7_1.aif), test clips unlabelled, AUC")
def suffix_labelled_calls(folder: Path, rng: np.random.Generator) -> dict:
    pub = folder / "public"
    stamp = lambda i: f"2009{3 + i % 2:02d}{10 + i % 17:02d}_{i % 24:02d}0000_{i % 60:03d}s{i % 997}ms"  # noqa: E731
    answers = []
    for i in range(300):  # a call (class 0's tone) in a quarter of the clips, another sound (class 1's) elsewhere
        label = int(rng.random() < 0.25)
        samples = clip(rng, 1 - label, 2000, 2.0)
        _write(pub / "train2" / f"{stamp(i)}_TRAIN{i}_{label}.aif", samples, 2000)
    for i in range(100):
        label = int(rng.random() < 0.25)
        name = f"{stamp(i + 300)}_Test{i}.aif"
        _write(pub / "test2" / name, clip(rng, 1 - label, 2000, 2.0), 2000)
        answers.append((name, label))
    answers = pd.DataFrame(answers, columns=["clip", "probability"])
    answers.assign(probability=0).to_csv(pub / "sampleSubmission.csv", index=False)
    (pub / "description.md").write_text(
        description(
            "Detect the up-call of a right whale in two-second recordings from buoys.",
            "Submissions are judged on area under the ROC curve.",
            [
                "train2 - the training clips; a name ending in _1.aif holds a call, in _0.aif none",
                "test2 - the test clips",
                "sampleSubmission.csv - a probability for each test clip",
            ],
        )
    )
    return finish(folder, answers, "sampleSubmission.csv", "BinCls", "roc_auc", inputs=("image",))
