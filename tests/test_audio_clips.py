"""Sound clips as spectrogram pictures (tools/audio_clips.py): what the picture shows, where fetch writes it, and
how the image maps find it on the audio fixtures (testing/competitions/audio.py)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import soundfile
from PIL import Image

from agentk.competition.support import unsupported_reason
from agentk.modalities import IMAGE
from agentk.policies.analysis import analyse
from stages.fetch import fetch_local
from testing.competitions import build
from tools.audio_clips import BANDS, MAX_FRAMES, _hz, _mel, clip_folders, clips_as_images, spectrogram


def tone(hz: float, rate: int, seconds: float = 1.0, level: float = 0.5) -> np.ndarray:
    t = np.arange(int(rate * seconds)) / rate
    return level * np.sin(2 * np.pi * hz * t)


def band_row(hz: float, rate: int) -> int:
    """The picture row of the mel band holding hz (row 0: the highest band)."""
    band = int(_mel(hz) / _mel(rate / 2) * BANDS)
    return BANDS - 1 - band


@pytest.mark.parametrize("rate", [8000, 16000, 44100])
def test_a_tone_lights_its_own_mel_band_at_any_rate(rate):
    for hz in (250.0, 1000.0, 3000.0):
        picture = spectrogram(tone(hz, rate), rate)
        assert picture.shape[0] == BANDS and picture.dtype == np.uint8
        brightest = int(np.argmax(picture.astype(float).mean(axis=1)))
        assert abs(brightest - band_row(hz, rate)) <= 1, (hz, rate, brightest, band_row(hz, rate))
    assert _hz(_mel(1234.0)) == pytest.approx(1234.0)


def test_loudness_does_not_change_the_picture_and_time_runs_left_to_right():
    rate, rng = 16000, np.random.default_rng(0)
    x = rng.normal(scale=0.01, size=rate * 2)
    x[rate:] += tone(2000.0, rate)[:rate]  # the tone in the second half only
    loud, quiet = spectrogram(x, rate), spectrogram(0.02 * x, rate)
    assert np.abs(loud.astype(int) - quiet.astype(int)).max() <= 1
    row = band_row(2000.0, rate)
    half = loud.shape[1] // 2
    assert loud[row, half + 5 :].mean() > loud[row, : half - 5].mean() + 100


def test_long_clips_are_averaged_to_the_widest_picture_and_short_ones_still_make_one():
    rate = 8000
    assert spectrogram(tone(500.0, rate, seconds=30.0), rate).shape == (BANDS, MAX_FRAMES)
    assert spectrogram(tone(500.0, rate, seconds=0.002), rate).shape == (BANDS, 1)
    assert spectrogram(np.zeros(rate), rate).max() == 0  # silence: a black picture, not NaN


def test_every_decodable_format_becomes_a_picture_beside_the_originals(tmp_path):
    raw, rate = tmp_path / "raw", 8000
    formats = {".wav": "WAV", ".flac": "FLAC", ".ogg": "OGG", ".mp3": "MP3", ".aiff": "AIFF", ".opus": "OGG"}
    names = []
    for i in range(12):
        ext = list(formats)[i % len(formats)]
        path = raw / "train_audio" / ("birds" if i % 2 else "frogs") / f"c{i}{ext}"
        path.parent.mkdir(parents=True, exist_ok=True)
        subtype = "OPUS" if ext == ".opus" else None
        soundfile.write(str(path), tone(400.0 + 100 * i, rate), rate, format=formats[ext], subtype=subtype)
        names.append(path.relative_to(raw / "train_audio").as_posix())
    (raw / "train_audio" / "frogs" / "broken.wav").write_bytes(b"RIFF\x00\x00\x00\x00WAVEjunk")
    (raw / "few").mkdir()
    for i in range(3):  # fewer clips than samples need: some other file
        soundfile.write(str(raw / "few" / f"x{i}.wav"), tone(300.0, rate), rate)

    assert list(clip_folders(raw)) == [raw / "train_audio"]
    lines = clips_as_images(raw)
    assert len(lines) == 1 and lines[0].startswith("train_audio_spectrograms/: 12 clips of train_audio/")
    assert lines[0].endswith("; 1 did not decode")
    out = raw / "train_audio_spectrograms"
    written = sorted(p.relative_to(out).as_posix() for p in out.rglob("*.png"))
    assert written == sorted(f"{n}.png" for n in names)  # class folders kept, the clip's name in the picture's
    for name in names:
        with Image.open(out / f"{name}.png") as img:
            assert img.mode == "L" and img.size[1] == BANDS
    assert not (raw / "few_spectrograms").exists() and not list(tmp_path.rglob("*.partial"))
    assert clips_as_images(raw) == []  # a resumed fetch keeps what was written


def test_only_audio_no_decoder_reads_is_refused(tmp_path):
    raw = tmp_path / "raw"
    (raw / "train").mkdir(parents=True)
    sample = pd.DataFrame({"fname": [f"c{i}.wav" for i in range(3)], "label": "a"})
    for i in range(6):
        (raw / "train" / f"c{i}.wav").write_bytes(b"RIFF")
    assert unsupported_reason(raw, None, sample) is None
    for i in range(6):
        (raw / "train" / f"c{i}.m4a").write_bytes(b"\x00\x00\x00\x20ftypM4A ")
    assert "unsupported task: audio (6 .m4a files" in unsupported_reason(raw, None, sample)


@pytest.mark.parametrize(
    ("name", "train", "test"),
    [
        # a table names each clip with its extension: the picture is the name plus .png
        ("tagged-clips", ("raw/audio_train_spectrograms", "fname", ".png"), ("raw/audio_test_spectrograms", "fname")),
        # class folders for train, the sample's file names for test
        ("word-folders", ("raw/train_spectrograms/audio", None, "folder"), ("raw/test_spectrograms/audio", "fname")),
        # ids without extension: the clip's extension and .png
        (
            "species-recordings",
            ("raw/train_spectrograms", "recording_id", ".flac.png"),
            ("raw/test_spectrograms", "recording_id"),
        ),
        # the label at the end of each train clip's name, the sample's file names for test
        ("suffix-labelled-calls", ("raw/train2_spectrograms", None, "suffix"), ("raw/test2_spectrograms", "clip")),
    ],
)
def test_the_image_maps_find_the_pictures_of_each_audio_layout(tmp_path, name, train, test):
    folder = build(name, tmp_path / "fixtures")
    public_before = sorted(p.relative_to(folder).as_posix() for p in (folder / "public").rglob("*"))
    ws = tmp_path / "ws"
    ws.mkdir()
    fetch_local(folder / "public", ws)
    assert sorted(p.relative_to(folder).as_posix() for p in (folder / "public").rglob("*")) == public_before
    a = analyse(ws)
    src = a.file_source("train", IMAGE.name)
    assert (src.folder, src.column, src.ext if src.column else src.label) == train
    src = a.file_source("test", IMAGE.name)
    assert (src.folder, src.column) == test
    assert a.inputs == [IMAGE.name]
    why = json.loads((ws / "task" / "meta.json").read_text())["tables_why"]["normalised"]
    assert sum("log-mel spectrogram PNGs" in line for line in why) == 2
    assert not any("did not decode" in line for line in why)


def test_a_clip_that_crashes_its_decoder_is_left_out_and_the_others_are_written(tmp_path, monkeypatch):
    """libsndfile can segfault on a damaged file: the worker dies, the pool breaks, and fetch must go on."""
    import ctypes
    import faulthandler

    import tools.audio_clips as audio_clips

    raw, rate = tmp_path / "raw", 8000
    (raw / "clips").mkdir(parents=True)
    for i in range(40):
        soundfile.write(str(raw / "clips" / f"c{i:02d}.wav"), tone(300.0 + 10 * i, rate), rate)
    real = audio_clips.read_clip

    def crashing(path):
        if path.name == "c17.wav":
            faulthandler.disable()  # pytest's traceback dump of the dying worker is noise here
            ctypes.string_at(0)  # a segfault in the worker process, as a decoder's would be
        return real(path)

    monkeypatch.setattr(audio_clips, "read_clip", crashing)  # worker processes are forked: they see it
    lines = clips_as_images(raw)
    assert lines[0].startswith("clips_spectrograms/: 39 clips of clips/") and lines[0].endswith("; 1 did not decode")
    written = sorted(p.name for p in (raw / "clips_spectrograms").glob("*.png"))
    assert written == [f"c{i:02d}.wav.png" for i in range(40) if i != 17]


def test_label_sets_become_the_samples_label_columns(tmp_path):
    """train's "Church bell,Bark" beside a sample of one probability column per label: one 0/1 column per label,
    split at commas before spaces (a label may hold one); nothing when a label is not a sample column."""
    from agentk.competition.normalise.label_sets_as_columns import label_sets_as_columns
    from agentk.competition.tables import find

    raw = tmp_path / "raw"
    raw.mkdir()
    sets = ["Church bell,Bark", "Bark", "Meow,Church bell", "Meow"]
    pd.DataFrame({"fname": [f"{i}.wav" for i in range(4)], "labels": sets}).to_csv(raw / "train.csv", index=False)
    pd.DataFrame({"fname": ["9.wav"], "Bark": 0.3, "Church bell": 0.3, "Meow": 0.3}).to_csv(
        raw / "sample_submission.csv", index=False
    )
    (lines,) = label_sets_as_columns(raw)
    assert lines.startswith("train_label_columns.csv: train.csv's label sets in 'labels'")
    train = pd.read_csv(find(raw).paths["train"])
    assert train.to_dict("list") == {
        "fname": ["0.wav", "1.wav", "2.wav", "3.wav"],
        "Bark": [1, 1, 0, 0],
        "Church bell": [1, 0, 1, 0],
        "Meow": [0, 0, 1, 1],
    }
    assert label_sets_as_columns(raw) == []  # done once
    other = tmp_path / "other"
    other.mkdir()
    pd.DataFrame({"fname": ["0.wav"], "labels": ["Bark,Purr"]}).to_csv(other / "train.csv", index=False)
    (raw / "sample_submission.csv").replace(other / "sample_submission.csv")
    assert label_sets_as_columns(other) == []  # Purr is no column of the sample
    pd.DataFrame({"fname": ["0.wav", "1.wav"], "labels": ["Bark", "Meow"]}).to_csv(other / "train.csv", index=False)
    assert label_sets_as_columns(other) == []  # one label a row: a class, its columns exclusive probabilities
