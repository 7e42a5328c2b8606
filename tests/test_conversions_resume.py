"""A fetch killed while a conversion writes its stand-in tables (agentk/competition/normalise/: long formats, rewrites,
positions, wide series, series, pixels, label sets, arrays) resumes to the same tables as an uninterrupted one: the conversion
starts over under the same names instead of taking its own half-written tables for the originals, and a stand-in
recorded but never written replaces nothing (before, each lost a train or test table, or the record)."""

from __future__ import annotations

import importlib
import shutil
from pathlib import Path

import pytest

from agentk.competition import written
from testing.competitions import build

CASES = [
    ("components-per-sample", "long_as_wide.long_as_wide"),
    ("rewrite-tokens", "rewrites_as_ranks.rewrites_as_ranks"),
    ("positions-per-sequence", "positions_as_rows.positions_as_rows"),
    ("page-views-wide", "wide_series_as_long.wide_series_as_long"),
    ("sensor-rows-per-series", "series_as_rows.series_as_rows"),
    ("items-per-trip", "rows_per_id_as_one.rows_per_id_as_one"),
    ("pixel-csv", "images_in_tables.pixel_columns_as_images"),
    ("multilabel-clips", "label_sets_as_columns.label_sets_as_columns"),
    ("npy-arrays", "arrays_as_tables.arrays_as_tables"),
    # pixel parts as images, then the long sample as wide (28 s: in the slow run; each conversion's resume runs above)
    pytest.param("pixel-parts-components", "normalise", marks=pytest.mark.slow),
    ("sensor-rows-per-series", "normalise"),  # the conversions before a killed one never read its half-written tables
    ("positions-per-sequence", "normalise"),
    ("page-views-wide", "normalise"),
]


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize(("name", "conversion"), CASES)
def test_a_conversion_killed_after_any_write_resumes_to_the_tables_of_an_uninterrupted_one(
    tmp_path, monkeypatch, name, conversion
):
    build(name, tmp_path / "fixtures")
    public = tmp_path / "fixtures" / name / "public"
    module, _, name_ = conversion.rpartition(".")
    convert = getattr(importlib.import_module(f"agentk.competition.normalise{'.' + module if module else ''}"), name_)
    whole = shutil.copytree(public, tmp_path / "whole")
    writes = []
    real = written.write_csv
    monkeypatch.setattr(written, "write_csv", lambda df, dest: (writes.append(dest.name), real(df, dest)))
    assert convert(whole) and writes
    expected = _files(whole)
    for kill in range(len(writes)):
        root = shutil.copytree(public, tmp_path / f"killed-{kill}")
        done = []

        def dying(df, dest, done=done, kill=kill):
            if len(done) == kill:
                raise KeyboardInterrupt(f"killed before writing {dest.name}")
            done.append(dest.name)
            real(df, dest)

        monkeypatch.setattr(written, "write_csv", dying)
        with pytest.raises(KeyboardInterrupt):
            convert(root)
        monkeypatch.setattr(written, "write_csv", real)
        assert convert(root), f"killed after {kill} writes: the resumed conversion did nothing"
        assert _files(root) == expected, f"killed after {kill} writes"
        assert convert(root) == []  # and once done, it is done
