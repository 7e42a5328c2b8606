"""Normalising a fetched folder: each conversion in its own module of this package, with its detection and its
writing, run in the order `normalise` gives (some read what an earlier one wrote). Each writes only new files at
the top of raw/ (never into the user's folders), records what its tables stand in for (agentk.competition.written)
and returns what it did, one line each; run twice, it does nothing the second time."""

from __future__ import annotations

from pathlib import Path

from agentk.competition import written
from agentk.competition.normalise.arrays_as_tables import arrays_as_tables
from agentk.competition.normalise.class_tables_as_one import class_tables_as_one
from agentk.competition.normalise.empty_columns_dropped import empty_columns_dropped
from agentk.competition.normalise.folder_labels import labels_of_folders
from agentk.competition.normalise.image_pairs_as_pixels import image_pairs_as_pixels
from agentk.competition.normalise.images_in_tables import bands_as_images, pixel_columns_as_images
from agentk.competition.normalise.json_as_csv import json_as_csv
from agentk.competition.normalise.label_sets_as_columns import label_sets_as_columns
from agentk.competition.normalise.long_as_wide import long_as_wide
from agentk.competition.normalise.partitions_as_tables import partitions_as_tables
from agentk.competition.normalise.parts_as_one import parts_as_one
from agentk.competition.normalise.pixel_tables_as_images import pixel_tables_as_images
from agentk.competition.normalise.positions_as_rows import positions_as_rows
from agentk.competition.normalise.rewrites_as_ranks import rewrites_as_ranks
from agentk.competition.normalise.rows_per_id_as_one import rows_per_id_as_one
from agentk.competition.normalise.sample_as_csv import sample_as_csv
from agentk.competition.normalise.series_as_rows import series_as_rows
from agentk.competition.normalise.series_summarised import summarised_series
from agentk.competition.normalise.signal_as_windows import signal_as_windows
from agentk.competition.normalise.split_rows_as_one import split_rows_as_one
from agentk.competition.normalise.wide_series_as_long import wide_series_as_long

# in this order: a conversion may read what an earlier one wrote
CONVERSIONS = (
    partitions_as_tables,
    json_as_csv,
    empty_columns_dropped,
    split_rows_as_one,
    class_tables_as_one,  # before parts are joined: train_0.csv and train_1.csv may be two classes
    parts_as_one,
    arrays_as_tables,
    bands_as_images,
    pixel_columns_as_images,
    series_as_rows,
    rows_per_id_as_one,
    positions_as_rows,
    wide_series_as_long,
    long_as_wide,
    pixel_tables_as_images,  # after the wide test table: its keys are unique
    label_sets_as_columns,
    rewrites_as_ranks,
    image_pairs_as_pixels,
    signal_as_windows,
    summarised_series,
    labels_of_folders,
    sample_as_csv,
)


def normalise(root: Path) -> list[str]:
    """Make a fetched folder's data readable the one simple way every program reads it: a split that comes in
    parts is joined into one CSV; whole-split arrays become tables; image bands and pixel columns become PNGs;
    per-sample series or array files are summarised into one table; class sub-folders beside a label-less train
    table become a labels table; a sample submission that is not a plain CSV gets a CSV copy (CONVERSIONS, each
    in its module). Each conversion killed part-way before starts over first. What was done, one line each."""
    root = Path(root)
    written.unfinished_started_over(root)
    return [line for conversion in CONVERSIONS for line in conversion(root)]
