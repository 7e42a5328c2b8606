"""Setup + solve on sound-clip competitions (the audio fixtures of testing/competitions/audio.py: tagged WAV
clips named in a table and scored by MAP@3, spoken-word clips in class folders scored by accuracy, FLAC recordings
named by an id without extension with one probability column per species, mean column-wise AUC; clips of one or two
tags as comma-separated label sets, one probability column per tag, lwlrap), graded on hidden
answers beside what a user would run instead: each clip's log-mel band statistics (the mean, spread and peak over
time of each of the 128 bands of the spectrogram agentk pictures) into a standardised logistic regression.

    uv run python benchmarks/audio.py [--only NAME ...] [--fresh] [--out DIR] [--budget quick]

The baseline learns from the same setup (its train rows and targets, its test rows, its submission formatter), so
the two columns compare what is learnt from the clips. The table is benchmarks/solve.py's with a column for the
baseline's test score; it goes to <out>/audio.md. A finished setup in <out>/<name> is reused.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
from PIL import Image

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks import solve  # noqa: E402

FIXTURES = ("tagged-clips", "word-folders", "species-recordings", "multilabel-clips", "suffix-labelled-calls")


def band_statistics(ws: Path, paths) -> np.ndarray:
    """Mean, standard deviation and maximum over time of each mel band of each clip's spectrogram picture."""
    rows = []
    for p in paths:
        with Image.open(ws / p) as img:
            s = np.asarray(img, dtype=np.float32)
        rows.append(np.concatenate([s.mean(axis=1), s.std(axis=1), s.max(axis=1)]))
    return np.asarray(rows)


def baselines(c: solve.Competition, ws: Path) -> dict[str, Path]:
    """The baseline's submission, through the setup's own maps and formatter (written beside agentk's)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from tools.submission import format_with_fallback
    from tools.task_data import TaskData

    cwd = os.getcwd()
    os.chdir(ws)  # generated code reads workspace-relative paths
    try:
        task = TaskData(ws)
        (modality,) = task.train.inputs  # the spectrogram pictures' map
        x = band_statistics(ws, task.train.inputs[modality]["path"])
        x_test = band_statistics(ws, task.test.inputs[modality]["path"])
        cols = []
        for j, o in enumerate(task.outputs):
            model = make_pipeline(StandardScaler(), LogisticRegression(C=0.1, max_iter=5000))
            y = task.y[:, j].astype(int)
            proba = model.fit(x, y).predict_proba(x_test)
            if o["kind"] == "multiclass":  # columns for every class, those absent from the fit rows at 0
                full = np.zeros((len(x_test), int(o["n_classes"])))
                full[:, model.classes_] = proba
                cols.append(full)
            else:
                cols.append(proba[:, list(model.classes_).index(1)][:, None])
        pred = np.hstack(cols)
        _, sub = format_with_fallback(ws, task.test.ids, task.transform.inverse_transform(pred))
    finally:
        os.chdir(cwd)
    out = ws / "baseline_submission.csv"
    sub.to_csv(out, index=False)
    return {"baseline": out}


def main(argv: list[str] | None = None) -> int:
    return solve.beside_baselines(__doc__, "audio", FIXTURES, baselines, ("baseline",), argv)


if __name__ == "__main__":
    raise SystemExit(main())
