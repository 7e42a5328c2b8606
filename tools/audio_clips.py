"""Sound clips as pictures. No modality reads audio, so fetch writes each clip's log-mel spectrogram as a grey PNG
and the image models learn from those: a folder of clips `<top>/<path>.wav` gets `<top>_spectrograms/<path>.wav.png`
beside it, the clip's whole name kept in the picture's so that a table column naming the clip, with or without its
extension, names the picture too (agentk.competition.file_inputs), and class sub-folders are kept as they are.

A picture's rows are mel bands, the highest at the top; its columns are time, averaged down to MAX_FRAMES when the
clip is longer; its grey levels are decibels over the FLOOR_DB below the clip's loudest band, so that a quiet clip's
pattern shows as clearly as a loud one's. Clips are decoded by libsndfile (soundfile): WAV, FLAC, Ogg (Vorbis, Opus),
MP3, AIFF."""

from __future__ import annotations

import os
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

import numpy as np

from agentk.competition.file_inputs import MIN_FILES
from agentk.competition.files import AUDIO_DECODED, walk

SUFFIX = "_spectrograms"  # <top>_spectrograms/: written by fetch
MIN_CLIPS = MIN_FILES  # a folder with fewer clips holds no samples
BANDS = 128  # mel bands: the picture's height
MAX_FRAMES = 512  # the picture's width at most
MAX_SECONDS = 60.0  # of each clip; a longer recording's first minute
WINDOW_S, HOP_S = 0.025, 0.010  # the usual speech and sound-event frames
FLOOR_DB = 80.0


def clip_folders(raw: Path) -> dict[Path, list[Path]]:
    """Top-level folder of raw/ -> its decodable clips (at any depth), for folders with MIN_CLIPS of them or more."""
    raw, found = Path(raw), defaultdict(list)
    for p in walk(raw, 6):
        rel = p.relative_to(raw)
        if len(rel.parts) >= 2 and p.suffix.lower() in AUDIO_DECODED and not rel.parts[0].endswith(SUFFIX):
            found[raw / rel.parts[0]].append(p)
    return {top: sorted(clips) for top, clips in sorted(found.items()) if len(clips) >= MIN_CLIPS}


def _mel(hz):
    return 2595.0 * np.log10(1.0 + np.asarray(hz, dtype=np.float64) / 700.0)


def _hz(mel):
    return 700.0 * (10.0 ** (np.asarray(mel, dtype=np.float64) / 2595.0) - 1.0)


def spectrogram(samples: np.ndarray, rate: int) -> np.ndarray:
    """(BANDS, frames) uint8 log-mel picture of a mono clip, the highest band in row 0."""
    from scipy.signal import spectrogram as power_spectrogram

    window = max(64, int(round(WINDOW_S * rate)))
    hop = max(1, int(round(HOP_S * rate)))
    x = np.asarray(samples, dtype=np.float64)
    if len(x) < window:
        x = np.pad(x, (0, window - len(x)))
    freqs, _, power = power_spectrogram(x, fs=rate, nperseg=window, noverlap=window - hop, mode="psd")
    # each mel band's mean power density: differences of the cumulative power at the band's edges, interpolated
    # in frequency, so that low bands narrower than one FFT bin still get their share
    edges = _hz(np.linspace(0.0, _mel(rate / 2), BANDS + 1))
    step = freqs[1] - freqs[0]
    cumulative = np.vstack([np.zeros((1, power.shape[1])), np.cumsum(power, axis=0) * step])
    grid = np.concatenate([[0.0], freqs + step / 2])
    at_edges = np.stack([np.interp(edges, grid, col) for col in cumulative.T], axis=1)
    bands = np.diff(at_edges, axis=0) / np.diff(edges)[:, None]
    if bands.shape[1] > MAX_FRAMES:
        bands = np.stack([chunk.mean(axis=1) for chunk in np.array_split(bands, MAX_FRAMES, axis=1)], axis=1)
    if not np.any(bands > 1e-20):  # silence: black, not the floor's white
        return np.zeros(bands.shape, dtype=np.uint8)
    db = 10.0 * np.log10(np.maximum(bands, 1e-20))
    top = db.max()
    scaled = np.clip((db - (top - FLOOR_DB)) / FLOOR_DB, 0.0, 1.0) * 255.0
    return scaled[::-1].round().astype(np.uint8)


def read_clip(path: Path) -> tuple[np.ndarray, int]:
    """The clip's first MAX_SECONDS as mono float samples, and its sample rate."""
    import soundfile

    with soundfile.SoundFile(str(path)) as f:
        rate = f.samplerate
        data = f.read(int(MAX_SECONDS * rate), dtype="float32", always_2d=True)
    return data.mean(axis=1), rate


def _write(job: tuple[Path, Path]) -> bool:
    from PIL import Image

    src, dest = job
    try:
        samples, rate = read_clip(src)
        dest.parent.mkdir(parents=True, exist_ok=True)
        Image.fromarray(spectrogram(samples, rate), "L").save(dest)
        return True
    except Exception:  # noqa: BLE001 - libsndfile's errors for a broken clip vary; it is counted and reported
        return False


def _write_all(jobs: list[tuple[Path, Path]], progress, chunk: int = 32) -> list[bool]:
    """_write over the jobs in worker processes, chunk by chunk; which were written. A clip that crashes its decoder
    (a segfault in libsndfile on a damaged file) breaks the pool: the chunks it left unfinished are done again
    one clip at a time in one worker, so that the first unfinished clip is the one that broke it: that one counts as
    not written."""
    written: dict[int, bool] = {}
    todo, size, workers = list(range(len(jobs))), chunk, os.cpu_count() or 1
    while todo:
        chunks = [todo[i : i + size] for i in range(0, len(todo), size)]
        try:
            with ProcessPoolExecutor(max_workers=workers) as pool:
                futures = {pool.submit(_write_chunk, [jobs[i] for i in c]): c for c in chunks}
                for future in as_completed(futures):
                    written.update(zip(futures[future], future.result(), strict=True))
                    progress(len(futures[future]))
        except BrokenProcessPool:
            if workers == 1:  # one clip at a time, in order: the first unfinished one crashed
                written[next(i for i in todo if i not in written)] = False
                progress(1)
        todo, size, workers = [i for i in todo if i not in written], 1, 1
    return [written[i] for i in range(len(jobs))]


def _write_chunk(jobs: list[tuple[Path, Path]]) -> list[bool]:
    return [_write(job) for job in jobs]


def clips_as_images(raw: Path) -> list[str]:
    """Write every clip's spectrogram (module docstring); what was written, one line per folder. A clip that does
    not decode is left out, and the line says how many. A folder already written is kept (a resumed fetch)."""
    from tqdm import tqdm

    done = []
    for top, clips in clip_folders(raw).items():
        dest = top.with_name(top.name + SUFFIX)
        if dest.exists():
            continue
        tmp = dest.with_name(f".{dest.name}.partial")
        tmp.mkdir(exist_ok=True)
        jobs = [(clip, tmp / f"{clip.relative_to(top).as_posix()}.png") for clip in clips]
        with tqdm(total=len(jobs), desc=f"spectrograms of {top.name}/", unit="clip", disable=len(jobs) < 500) as bar:
            written = _write_all(jobs, bar.update)
        tmp.replace(dest)
        failed = written.count(False)
        done.append(
            f"{dest.name}/: {len(clips) - failed} clips of {top.name}/ as log-mel spectrogram PNGs ({BANDS} mel bands, "
            f"at most {MAX_FRAMES} time steps of the first {MAX_SECONDS:.0f} s)"
            + (f"; {failed} did not decode" if failed else "")
        )
    return done
