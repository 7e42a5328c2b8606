"""A seeded generator of Kaggle-like layouts, each with its ground truth, and the judge of a setup against it.

A layout is a base learning problem (a small table with a learnable target: binary, multi-class or regression)
written out through a random draw of transformations, the ways real competitions differ (targets in a column, a
labels table, folder names, file names beside the ids, one table per class or label sets):

- names: Kaggle's usual file names, role words inside other words, or no role word at all; column names in any
  case, with spaces or in other languages; tables in a sub-folder;
- ids: numbers, prefixed, zero-padded, hexadecimal (some of them the digits-e-digits kind), named anything;
- targets in the train table, in a labels table of their own, or as the names of one train table per class (in a
  folder, each row carrying its class too, of several words where ranked); a set
  of labels per row, submitted in one column or as one 0/1 column per label; inputs split over a 1:1 side table keyed by the
  id (under another column name), summarised from a 1:N table of many rows per id, or from one file per sample
  named by its id, or looked up by a key assembled along a chain (the row's hour and its id's group, in a table
  given one per period), or summarised per pair of columns naming the rows (a group and a window), many rows each;
- formats: CSV (in UTF-8, Latin-1, cp1252, UTF-16 or with a BOM), TSV, gzip, zip, parquet (one file or
  partitioned), JSON records, keyed, split or nested, JSON lines; whole-split .npy arrays (train and test features,
  train labels) told apart by their shapes alone; every table zipped alone and the zips in one
  archive; sample submissions of labels, of the classes ranked in one column, or of one probability column per
  class;
- media: a free-text column beside the numbers, or a text file per sample named by its id; an input carried by one picture per sample, named by its id, in
  one folder or a train and a test folder, or by several pictures per sample (<id>_<view>.png), or by one sound
  clip per sample; the train pictures in a folder per class, the only labels;
- decoys: an older, unscored test table beside the scored one;
- a long signal (regression): train one table of consecutive windows of readings, the target on every row, each
  test sample a segment file named by its id, scored at its end (the truth's train samples are the windows in
  order, as setup cuts them);
- tasks agentk does not do (refuse:<kind>): recommendation, span extraction by character offsets, optimisation,
  simulation, retrieval, which setup must refuse naming the kind (exit 2).

`truth.json` records what setup must recover (the `Truth`): the train and test ids, the target per train id, each
input's values per train id, and the submission a perfect prediction gives (private/answers.csv). `judge` compares
a finished workspace with it: the target map equals the truth, every input reaches the input maps (a column of the
maps carrying its values, in any encoding that keeps them apart; a picture's column must point to each sample's
own picture), and the perfect prediction, through the target
transform and the formatter, gives the answers. `benchmarks/layout_fuzz.py` runs `agentk setup` over many seeds.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import re
import threading
import zipfile
import zlib
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from agentk.parsing import to_numeric

# each transformation and how often it is drawn
TRANSFORMS = {
    "names:role-inside": 0.25,  # "trainset_2019.csv", "kaggle_test_v2.csv"
    "names:other": 0.15,  # tables named without a role word; the description names them
    "columns:odd": 0.4,  # column names with spaces, case, other languages
    "subfolder": 0.2,  # the tables under data/
    "ids:prefixed": 0.2,
    "ids:padded": 0.15,
    "ids:hex": 0.2,
    "ids:named": 0.4,  # the id column is not called id
    "labels-file": 0.25,
    "side:1-1": 0.25,  # some inputs in a side table keyed by the id under another name
    "side:1-n": 0.2,  # one input summarised from many rows per id
    "format:tsv": 0.1,
    "format:gz": 0.1,
    "format:zip": 0.1,
    "format:parquet": 0.1,
    "format:json": 0.1,
    "format:jsonl": 0.1,
    "sample:proba": 0.3,  # one probability column per class (classification)
    "decoy:old-test": 0.15,
    "sample:renamed": 0.2,  # the sample names the predicted column otherwise than the train table does
    "decoy:train-only": 0.2,  # a train-only column named like a target: an older annotation, mostly empty
    "sample:unseen-class": 0.5,  # with sample:proba, a column for a class no train row has
    "format:json-keyed": 0.1,  # {id: {field: value}}: rows keyed by their id (split where ids repeat)
    "format:json-nested": 0.1,  # {"version": 2, "data": {"rows": [records]}}
    "format:json-split": 0.1,  # {"columns": [...], "data": [[...]]}
    "side:chain": 0.2,  # x1 two tables away: the id's code in one table, the code's x1 in another
    "side:composite": 0.2,  # x1 in a table keyed by two columns of train and test (a site and a visit number)
    "format:partitioned": 0.1,  # <stem>.parquet/<column>=<value>/part-0.parquet (hive), else numbered parts
    "decoy:described": 0.5,  # with decoy:train-only, the description names the decoy column too
    "side:per-sample-files": 0.15,  # x2 as the mean of a few readings in one CSV per sample, named by its id
    "media:text": 0.2,  # a free-text column in the tables, the colour among its words
    "media:images": 0.15,  # x2 as the grey level of one picture per sample, named by its id
    "media:split-folders": 0.5,  # with media:images, the test pictures in a folder of their own
    "media:audio": 0.1,  # x2 as the pitch of one sound clip per sample, named by its id
    "media:views": 0.5,  # with media:images, 2-4 pictures per sample (<id>_<view>.png): x2 is their mean grey level
    "target:folders": 0.5,  # with media:images, classes: the train pictures in a folder per class, no target column
    "format:encoding": 0.1,  # CSV in Latin-1, cp1252, UTF-16 or UTF-8 with a BOM; the colours spelt with accents
    "archive:nested": 0.1,  # every table zipped, and the zips (the sample's too) in one archive
    # with side:1-n, the events of train and of test samples apart, under the train and test tables' names, and
    # those tables (one row per sample) named after them: training_set.csv beside training_set_metadata.csv
    "side:split-events": 0.5,
    "sample:ranked": 0.3,  # multi-class, no probabilities: the sample ranks the classes in one column (MAP@3)
    # regression: train is one long signal (x1 and x2 as two readings' levels, the target on every row), each test
    # sample a segment file of it named by its id, scored at its end (the LANL earthquake layout)
    "signal:long": 0.15,
    "media:text-files": 0.4,  # with media:text, each note in a text file of its own named by its id, not in a table
    # classes: the train rows in one table per class, named by it (<train>_<class>.csv or <train>/<class>.csv), the
    # only labels
    "target:class-tables": 0.15,
    # multi-class made multi-label: each row's set of labels (its class, "vivid" where red, "busy" for a count of 4
    # or more) in one column; the sample submits the set in one column (F2 of each row's set), or one 0/1 column
    # per label (mean AUC), the train's labels then apart by a space, a comma or a bar
    "target:label-sets": 0.2,
    # with media:images, classes: each train picture's name holds its class beside its id (<class>.<id>.png or
    # <id>_<class>.png), no table has the target
    "target:file-names": 0.5,
    # with sample:proba, the evaluation text states a class-weighted log loss (each class's sum divided by its own
    # count, weights not given): the setup's metric weighs every class alike (balanced log loss)
    "metric:weighted-logloss": 0.5,
    # binary scored by AUC: the evaluation text states a sub-group bias AUC and names none of train's identity
    # columns (mostly empty fractions); the setup optimises the target's AUC as its proxy
    "metric:bias-unnamed": 0.5,
    # tasks agentk does not do, which setup must refuse (exit 2, "unsupported task: <kind>"), keeping the names, ids
    # and table format drawn: sets of catalogue items per order, drawn from a table of interactions; character
    # offsets of phrases in notes; an assignment of entities to their preferred slots, no target anywhere; a program
    # as the only file; ids of a gallery of items like the queries, ranked per query (tables, or picture folders)
    "refuse:recommendation": 0.012,
    "refuse:span-extraction": 0.012,
    "refuse:optimisation": 0.012,
    "refuse:simulation": 0.0125,
    "refuse:retrieval": 0.012,
    # classes or label sets submitted in one column, the sample's cells a placeholder of another type: 0 in every
    # row, or left empty (the human-protein and paddy layouts); the submission is written as the labels are
    "sample:placeholder": 0.2,
    # every input in one .npy array per sample (x1, x2, the count, the colour's number), in train/ and test/ folders
    # fanned out by the id's last character; no test table, but an older test table of other ids beside the data
    # (the seti layout): the test samples are the files the sample's ids name
    "media:arrays": 0.3,
    # {column: {row key: value}}: pandas' columns orientation, the row keys those of a larger table's rows, shuffled
    "format:json-columns": 0.1,
    # an earlier stage's test table (the scored one's first rows) with its own sample beside the scored pair; which
    # pair is named plainly is drawn (the later stage's names may carry a suffix, or the earlier's)
    "test:two-stages": 0.3,
    # several rows per id in train and test (the items of a trip), the sample one row per id: x1 the mean of each
    # id's readings, x2 the sum of its parts, a row's item a category of its own, the target on every train row
    "rows:many-per-id": 0.4,
    # features and labels as whole-split .npy arrays (a train and a test feature matrix, a train label vector),
    # maybe two folders deep and named without a role word: only their shapes tell them apart
    "format:arrays": 0.3,
    # classes: the train rows in a folder of one table per class, named by it, each row carrying its class too (the
    # target, constant within a table) and a train-only column; ranked, the class names hold spaces, which the
    # sample spells with underscores (the Quick, Draw! layout)
    "target:class-tables-folder": 0.15,
    # x2 and colour in a second table per split, keyed by the id, holding some of its split's rows (the others'
    # values missing); each split's main table and that one named after the split (train_records.csv beside
    # train_ext.csv: the smaller table's name the shorter)
    "split:two-train-tables": 0.2,
    "columns:test-spelling": 0.2,  # the test tables spell some input columns otherwise (case, punctuation)
    # a larger table named as train, of other rows and a target-like column the sample does not score; the real
    # train table's name the longer
    "decoy:larger-table": 0.15,
    # x1 in a table keyed by (a group, an hour): the hour the row's own, the group in a table keyed by the id; that
    # table given one per period, train's hours in one and test's (after them) in the other (issue 63)
    "side:chained-key": 0.3,
    # x1 the mean of many readings per (group, window) in a table of both (an order book's quotes per stock and time
    # window), one row per window of each group in train and test, the test's windows others than train's; the two
    # columns spelt otherwise there, neither alone naming a row; the readings one table, or one per split
    "side:many-per-pair": 0.25,
    # a data dictionary beside the tables (a row number, the table, each column's name, its description), written as
    # CSV whatever the tables' format: no data, and its row numbers are a count's values
    "side:data-dictionary": 0.3,
    # with side:1-n: a weekday of every row in train and test and of every event, and a fifth of the ids without
    # events (no reading: their count 0); the weekday covers all its values both ways, the id only four fifths
    "side:shared-category": 0.6,
    # the base problem's size: 48, 400 or 1,500 train rows, the test a fifth to three fifths of that (issue 62: the
    # fuzzer's 500 layouts all had 160 train and 60 test rows)
    "problem:sizes": 0.3,
    # every column named from an open vocabulary (made-up words of two or three syllables): the inputs, the
    # target, the id; no name says what a column holds
    "names:open": 0.3,
    # time-ordered rows: each row's date (a day, or a day and an hour), the train rows' before the test's, a weekly
    # swing in the target; the date must reach both splits' maps alike (the test is later periods, not a shuffle)
    "problem:time-ordered": 0.3,
    # regression: a second value to predict from the same inputs, beside the first in train, both in the sample,
    # scored by the mean column-wise RMSE
    "problem:multi-target": 0.5,
    # misleading evidence, made so that the first-ranked option is wrong: the sample names the target otherwise, and
    # of the train-only columns the one named as a target (a plain target word) and named by the description too is
    # an older annotation of a third of the rows; the target's own name is a made-up word. The search must drop it
    # (the train map keeps too few rows) and take the next (issue 62: a name that lies, a column in train only)
    "decoy:lying-target": 0.9,
}
# the transformations learnt from the corpus of real layouts (issue 62), by family. Each family draws from a stream of
# its own, and a layout takes one family at most: a new family leaves the draws of the seeds that do not draw it as
# they were (a seed drawing several takes one of them anew: tests pin their seeds' draws), and families written apart
# never meet in one layout
FAMILIES = {
    "metric": ("metric:weighted-logloss", "metric:bias-unnamed"),
    "refuse": tuple(t for t in TRANSFORMS if t.startswith("refuse:")),
    "per-sample arrays": ("sample:placeholder", "media:arrays"),
    "test rows": ("format:json-columns", "test:two-stages", "rows:many-per-id"),
    "whole-split arrays": ("format:arrays", "target:class-tables-folder"),
    "train tables": ("split:two-train-tables", "columns:test-spelling", "decoy:larger-table"),
    "chained keys": ("side:chained-key",),
    "keys of many rows": ("side:many-per-pair",),
    "reference tables": ("side:data-dictionary", "side:shared-category"),
    "problems": ("problem:sizes", "names:open", "problem:time-ordered", "problem:multi-target"),
    "misleading": ("decoy:lying-target",),
}
FAMILY_OF = {t: family for family, names in FAMILIES.items() for t in names}
OWN_STREAMS = {"keys of many rows": 63, "reference tables": 64}
LAST_FAMILIES = {"reference tables"}  # families added since, each drawing from a stream of its own
# where the misleading family is kept beside others, how often it is the one taken (issue 62 asks that a fifth of the
# passing setups pass only after the search dropped a hypothesis: these layouts are where it must)
MISLEADING_SHARE = 0.8
# what whole-split arrays keep of the other transformations: the sample's ids and names, the folder
ARRAY_KEEPS = {"subfolder", "names:other", "names:role-inside", "ids:prefixed", "ids:padded", "ids:hex"}
ARRAY_KEEPS |= {"ids:named", "columns:odd", "sample:renamed", "format:arrays"}
SPACED = {"low": "low tide", "mid": "mid range", "high": "high ground"}  # class names holding spaces
# the tables named as train that split:two-train-tables and decoy:larger-table write: their names decide nothing
SPLIT_WORDS = ("records", "entries", "rows_main")  # the main table's name, after the split's
SIDE_WORDS = ("ext", "info", "meta")  # the smaller table's
DECOY_WORDS = ("all", "big", "old")
X2_ELSEWHERE = {"side:1-1", "side:per-sample-files", "media:images", "media:audio"}  # x2 in another place
# what a long signal keeps of the other transformations: the tables' names and place, the ids, the format
SIGNAL_KEEPS = {
    "names:role-inside",
    "names:other",
    "columns:odd",
    "subfolder",
    "ids:prefixed",
    "ids:padded",
    "ids:hex",
    "sample:renamed",
}
SIGNAL_FORMATS = {"format:tsv", "format:gz", "format:zip", "format:parquet", "format:encoding"}
# what side:chained-key keeps of the other transformations: the names, the ids, a flat table format, other side tables
CHAIN_KEEPS = SIGNAL_KEEPS | SIGNAL_FORMATS | {"ids:named", "labels-file", "side:1-1", "side:1-n", "side:chained-key"}
REFUSE_KEEPS = SIGNAL_KEEPS - {"sample:renamed"}  # and the one table format drawn
# each refuse:<kind> transformation and the kind of task setup must name
REFUSALS = {
    "refuse:recommendation": "recommendation",
    "refuse:span-extraction": "span extraction",
    "refuse:optimisation": "optimisation",
    "refuse:simulation": "simulation",
    "refuse:retrieval": "retrieval",
}
SIGNAL_LENGTH = 40  # rows per window of the train signal and per test segment
ENCODINGS = ("latin-1", "cp1252", "utf-16", "utf-8-sig")
ACCENTED = {"red": "rojo-ñ", "green": "grün", "blue": "blå", "amber": "ámbar"}
FORMATS = [t for t in TRANSFORMS if t.startswith("format:")]
WORDS = ["alpha", "río", "données", "wert", "größe", "colour", "mass", "kappa", "delta", "höhe", "peso", "valor"]
NOUNS = ["records", "observations", "cases", "rows", "measurements", "samples", "entries"]
KINDS = ("binary", "multiclass", "regression")
AUDIO_RATE = 8000  # media:audio's clips: samples per second


@dataclass
class Truth:
    seed: int
    kind: str
    transforms: list[str]
    files: dict[str, str]  # role -> path under public/
    train_ids: list[str]
    test_ids: list[str]
    target: dict[str, object]  # train id -> the target's value
    features: dict[str, dict[str, object]]  # input name (the base problem's) -> train id -> value
    classes: list = field(default_factory=list)
    refusal: str = ""  # the kind of task setup must refuse ("unsupported task: <kind>"), else ""
    test_features: dict[str, dict[str, object]] = field(default_factory=dict)  # as features, for the test ids
    metric: list[str] = field(default_factory=list)  # the names code_metric.py's METRIC may take (the text's metric)
    more_targets: dict[str, dict[str, object]] = field(default_factory=dict)  # a second target: its name -> id -> value


def draw(seed: int) -> tuple[str, list[str]]:
    """The base problem's kind and the transformations of layout `seed`."""
    rng = np.random.default_rng(seed)
    kind = KINDS[int(rng.integers(len(KINDS)))]
    base = [t for t in TRANSFORMS if t not in FAMILY_OF]
    chosen = [t for t in base if rng.random() < TRANSFORMS[t]]
    drawn = {}  # a family's stream: the numbers that follow the earlier transformations' draws, as when it came alone
    for family, names in FAMILIES.items():
        own = np.random.default_rng(seed)
        own.integers(len(KINDS))
        own.random(len(base))
        if family in OWN_STREAMS:  # drawn apart from the other families (whose first draws are one number)
            own = np.random.default_rng([seed, OWN_STREAMS[family]])
        if found := [t for t in names if own.random() < TRANSFORMS[t]]:
            drawn[family] = found
    # one family at most: of those whose transformations the rules below keep, one drawn from a stream of its own
    kept = {f: _pruned(seed, kind, chosen + found) for f, found in drawn.items()}
    kept = {f: c for f, c in kept.items() if any(FAMILY_OF.get(t) == f for t in c)}
    if len(kept) > 1:  # a family that comes last joins only a layout no other family took: earlier draws stay
        kept = {f: c for f, c in kept.items() if f not in LAST_FAMILIES}
    if not kept:
        return kind, _pruned(seed, kind, chosen)
    pick = np.random.default_rng([seed, 62])
    if "misleading" in kept and (len(kept) == 1 or pick.random() < MISLEADING_SHARE):  # the search's own layouts
        return kind, kept["misleading"]
    kept.pop("misleading", None)
    return kind, list(kept.values())[int(pick.integers(len(kept)))]


def _pruned(seed: int, kind: str, chosen: list[str]) -> list[str]:
    """The transformations drawn, less those the others rule out."""
    formats = [t for t in chosen if t in FORMATS]
    chosen = [t for t in chosen if t not in FORMATS] + formats[:1]  # one table format
    if "names:other" in chosen and "names:role-inside" in chosen:
        chosen.remove("names:role-inside")
    if kind == "regression" and "sample:proba" in chosen:
        chosen.remove("sample:proba")
    if "sample:proba" in chosen and "sample:renamed" in chosen:
        chosen.remove("sample:renamed")
    if "sample:unseen-class" in chosen and "sample:proba" not in chosen:
        chosen.remove("sample:unseen-class")
    if "side:chain" in chosen and "side:composite" in chosen:  # both move x1
        chosen.remove("side:composite")
    if "decoy:described" in chosen and "decoy:train-only" not in chosen:
        chosen.remove("decoy:described")
    if "side:per-sample-files" in chosen and "side:1-1" in chosen:  # both move x2
        chosen.remove("side:per-sample-files")
    if "media:images" in chosen and ("side:1-1" in chosen or "side:per-sample-files" in chosen):  # x2 again
        chosen.remove("media:images")
    if "media:audio" in chosen and ({"side:1-1", "side:per-sample-files", "media:images"} & set(chosen)):  # x2
        chosen.remove("media:audio")
    if "media:split-folders" in chosen and "media:images" not in chosen:
        chosen.remove("media:split-folders")
    if "media:views" in chosen and "media:images" not in chosen:
        chosen.remove("media:views")
    if "sample:ranked" in chosen and (kind != "multiclass" or "sample:proba" in chosen):
        chosen.remove("sample:ranked")
    if "media:text-files" in chosen and "media:text" not in chosen:
        chosen.remove("media:text-files")
    if "signal:long" in chosen:
        if kind != "regression":
            chosen.remove("signal:long")
        else:
            chosen = [t for t in chosen if t in SIGNAL_KEEPS | SIGNAL_FORMATS | {"signal:long"}]
    if "side:split-events" in chosen and "side:1-n" not in chosen:
        chosen.remove("side:split-events")
    if "target:folders" in chosen:
        if "media:images" not in chosen or kind == "regression":
            chosen.remove("target:folders")
        else:  # the class folders are the only labels, the train pictures apart from the test's, one per sample
            chosen = [t for t in chosen if t not in ("labels-file", "media:views")]
            chosen += [] if "media:split-folders" in chosen else ["media:split-folders"]
    if "target:label-sets" in chosen:
        if kind != "multiclass":
            chosen.remove("target:label-sets")
        else:  # the sample's forms are the sets' own
            drop = (
                *("sample:proba", "sample:unseen-class", "sample:ranked"),
                *("target:folders", "target:class-tables", "target:file-names"),
            )
            chosen = [t for t in chosen if t not in drop]
    if "target:file-names" in chosen:
        if "media:images" not in chosen or kind == "regression" or "target:folders" in chosen:
            chosen.remove("target:file-names")
        else:  # as target:folders: the names the only labels, the train pictures apart, one per sample
            chosen = [t for t in chosen if t not in ("labels-file", "media:views", "target:class-tables")]
            chosen += [] if "media:split-folders" in chosen else ["media:split-folders"]
    if "target:class-tables" in chosen:
        if kind == "regression" or "target:folders" in chosen:
            chosen.remove("target:class-tables")
        else:  # the tables' names are the labels: no labels table, no train-only decoy, no events named as train
            drop = ("labels-file", "decoy:train-only", "decoy:described", "side:split-events")
            chosen = [t for t in chosen if t not in drop]
    # the tables named as train and test hold the rows and the target: drawn only beside no other place for the
    # target or for x2 and colour (and not where the names are not the splits'), which keeps the earlier draws
    placed = {"names:other", "labels-file", "side:split-events", "sample:renamed", "format:partitioned"}
    placed |= {"target:folders", "target:file-names", "target:class-tables", "archive:nested"}
    if "split:two-train-tables" in chosen and (placed | X2_ELSEWHERE) & set(chosen):
        chosen.remove("split:two-train-tables")
    if "decoy:larger-table" in chosen and placed & set(chosen):
        chosen.remove("decoy:larger-table")
    if "format:arrays" in chosen and not set(chosen) <= ARRAY_KEEPS:  # arrays of a plain layout only
        chosen.remove("format:arrays")
    if "target:class-tables-folder" in chosen:
        # the folder says train, its tables' rows the labels: of a classification whose labels nothing else holds
        clash = {"target:folders", "target:file-names", "target:class-tables", "labels-file", "names:other"}
        clash |= {"decoy:train-only", "side:split-events", "target:label-sets", "archive:nested"}
        if kind == "regression" or clash & set(chosen):
            chosen.remove("target:class-tables-folder")
    if "side:chained-key" in chosen and not set(chosen) <= CHAIN_KEEPS:  # drawn beside a plain layout only
        chosen.remove("side:chained-key")
    if "side:many-per-pair" in chosen and not set(chosen) <= CHAIN_KEEPS | {"side:many-per-pair"}:  # likewise
        chosen.remove("side:many-per-pair")
    if "side:shared-category" in chosen and ("side:1-n" not in chosen or "side:split-events" in chosen):
        chosen.remove("side:shared-category")  # the events of both splits in one table
    flat = ("format:arrays", "media:arrays", "signal:", "target:class-tables", "rows:", "refuse:")
    if "side:data-dictionary" in chosen and any(t.startswith(flat) for t in chosen):  # one train table named
        chosen.remove("side:data-dictionary")
    # the two classes below are drawn only beside what they keep: the earlier transformations stay as drawn
    many = ("names:", "columns:", "subfolder", "ids:", "format:", "sample:", "side:1-1", "media:text", "rows:")
    if "rows:many-per-id" in chosen and any(
        not t.startswith(many) or t in ("media:text-files", "format:partitioned") for t in chosen
    ):  # the rows hold the inputs and the target themselves: no per-sample files, events, labels or decoys
        chosen.remove("rows:many-per-id")
    if "test:two-stages" in chosen and {"decoy:old-test", "names:other", "side:split-events", "signal:long"} & set(
        chosen
    ):  # the test tables are told apart by their values: no other older test set, none named without a role
        chosen.remove("test:two-stages")
    # the arrays hold every input: no other place for one, no table but train's labels and the old test's (dropped
    # itself, so that the seeds drawn before it keep their layouts)
    if "media:arrays" in chosen and any(
        t.startswith(("side:", "signal:", "target:folders", "target:file-names", "target:class-tables"))
        or (t.startswith("media:") and t != "media:arrays")
        or t in ("labels-file", "decoy:old-test", "names:other", "archive:nested")
        for t in chosen
    ):
        chosen.remove("media:arrays")
    if "sample:placeholder" in chosen and (
        kind == "regression" or {"sample:proba", "sample:ranked", "signal:long"} & set(chosen)
    ):
        chosen.remove("sample:placeholder")
    if "metric:weighted-logloss" in chosen and "sample:proba" not in chosen:
        chosen.remove("metric:weighted-logloss")
    if "metric:bias-unnamed" in chosen and (kind != "binary" or seed % 2 == 0 or "sample:proba" in chosen):
        chosen.remove("metric:bias-unnamed")  # the AUC-scored layouts only (build's metric)
    if "decoy:lying-target" in chosen:  # its parts, where nothing else places the target or renames the sample
        parts = ["sample:renamed", "decoy:train-only", "decoy:described"]
        if {*parts, "sample:proba", "labels-file"} & set(chosen):  # a draw of its own
            chosen.remove("decoy:lying-target")
        else:
            chosen = [*chosen, *parts]
            for rule in ("sample:proba", "target:", "media:arrays", "format:arrays", "signal:", "refuse:", "rows:"):
                if any(t.startswith(rule) for t in chosen):
                    chosen = [t for t in chosen if t not in (*parts, "decoy:lying-target")]
                    break
    if {"signal:long", "format:arrays"} & set(chosen) or any(t in REFUSALS for t in chosen):
        chosen = [t for t in chosen if not t.startswith(("problem:", "names:open"))]
    if "problem:multi-target" in chosen and (
        kind != "regression"
        or any(t.startswith(("sample:", "target:", "rows:", "media:arrays")) for t in chosen)
        or {"labels-file", "decoy:larger-table"} & set(chosen)
    ):  # the targets in the train table itself, the sample naming them as train does
        chosen.remove("problem:multi-target")
    if "problem:sizes" in chosen and "media:audio" in chosen:  # a clip per sample: 2,000 of them is a long setup
        chosen.remove("problem:sizes")
    refuse = [t for t in chosen if t in REFUSALS]
    if refuse:  # the first kind drawn, with the names, ids and format drawn
        chosen = [t for t in chosen if t in REFUSE_KEEPS or t in FORMATS] + refuse[:1]
    return chosen


def test_spelling(rng: np.random.Generator, column: str) -> str:
    """The column spelled otherwise, its letters and digits the same: its case turned, its separators another."""
    turned = column.upper() if column != column.upper() else column.lower()
    between = str(rng.choice(["-", ".", "_", " "]))
    respelled = re.sub(r"[ _\-.]+", between, turned)
    if re.search(r"[ _\-.]", turned) is None and len(turned) > 1:  # no separator to change: add one
        respelled = f"{turned[0]}{between}{turned[1:]}"
    return respelled


def _problem(rng: np.random.Generator, kind: str, n: int) -> tuple[pd.DataFrame, list]:
    """Four inputs (two numbers, a category, a count) and a target learnable from them."""
    x1, x2 = rng.normal(size=n).round(4), rng.normal(size=n).round(4)
    colour = rng.choice(["red", "green", "blue", "amber"], size=n)
    count = rng.poisson(3, size=n)
    score = 1.4 * x1 - x2 + np.where(colour == "red", 1.0, 0.0) + 0.2 * count + rng.normal(scale=0.3, size=n)
    frame = pd.DataFrame({"x1": x1, "x2": x2, "colour": colour, "count": count})
    if kind == "binary":
        return frame.assign(target=(score > 0.6).astype(int)), [0, 1]
    if kind == "multiclass":
        classes = ["low", "mid", "high"]
        cuts = np.quantile(score, [1 / 3, 2 / 3])
        return frame.assign(target=np.array(classes)[np.searchsorted(cuts, score)]), classes
    return frame.assign(target=(10 + 3 * score).round(3)), []


def _ids(rng: np.random.Generator, n: int, transforms: list[str]) -> list[str]:
    numbers = rng.choice(np.arange(1000, 1000 + 50 * n), size=n, replace=False)
    if "ids:hex" in transforms:
        ids = [f"{int(v):016x}" for v in rng.integers(0, 2**62, size=n)]
        for i in range(0, n, 9):  # Kaggle's hex ids include the digits-e-digits kind that crashes pandas 2.x
            ids[i] = f"{rng.integers(100, 999)}e{rng.integers(10**11, 10**12)}0"
        return ids
    if "ids:prefixed" in transforms:
        return [f"ID_{v}" for v in numbers]
    if "ids:padded" in transforms:
        return [f"{v:08d}" for v in numbers]
    return [str(v) for v in numbers]


def _column(rng: np.random.Generator, base: str, odd: bool) -> str:
    if not odd:
        return base
    word = WORDS[int(rng.integers(len(WORDS)))]
    return [f"{word} {base}", f"{base.upper()}_{word}", f"{word.capitalize()}{base.capitalize()}"][int(rng.integers(3))]


def _open_words(rng: np.random.Generator, k: int) -> list[str]:
    """k different made-up words of two or three syllables, some capitalised or joined by an underscore."""
    words: list[str] = []
    while len(words) < k:
        letters = [
            str(rng.choice(list(part))) for _ in range(int(rng.integers(2, 4))) for part in ("bdfklmnprstvz", "aeiou")
        ]
        word = "".join(letters)
        word = [word, word.capitalize(), f"{word[:3]}_{word[3:]}"][int(rng.integers(3))]
        if word.lower() not in {w.lower() for w in words}:
            words.append(word)
    return words


def _word(rng: np.random.Generator) -> str:
    return WORDS[int(rng.integers(len(WORDS)))]


def _names(rng: np.random.Generator, transforms: list[str]) -> dict[str, str]:
    """The tables' file stems by role."""
    if "names:other" in transforms:
        noun = NOUNS[int(rng.integers(len(NOUNS)))]
        return {
            "train": f"{noun}_labelled",
            "test": f"{noun}_unlabelled",
            "sample": "sample_submission",
            "labels": f"{noun}_outcomes",
            "side": f"{noun}_details",
            "child": f"{noun}_events",
            "old": f"{noun}_unlabelled_2019",
        }
    if "names:role-inside" in transforms:
        year = int(rng.integers(2015, 2025))
        return {
            "train": f"trainset_{year}",
            "test": "kaggle_test_v2",
            "sample": "sampleSubmission",
            "labels": f"trainset_{year}_labels",
            "side": "metadata",
            "child": "events_log",
            "old": "kaggle_test_v1",
        }
    return {
        "train": "train",
        "test": "test",
        "sample": "sample_submission",
        "labels": "train_labels",
        "side": "extra",
        "child": "history",
        "old": "test_old",
    }


def _write(frame: pd.DataFrame, folder: Path, stem: str, fmt: str | None) -> str:
    """Write a table in the layout's format; its file name."""
    folder.mkdir(parents=True, exist_ok=True)
    if fmt == "format:tsv":
        frame.to_csv(folder / f"{stem}.tsv", sep="\t", index=False)
        return f"{stem}.tsv"
    if fmt == "format:gz":
        with gzip.open(folder / f"{stem}.csv.gz", "wt") as f:
            frame.to_csv(f, index=False)
        return f"{stem}.csv.gz"
    if fmt == "format:zip":
        with zipfile.ZipFile(folder / f"{stem}.csv.zip", "w") as z:
            z.writestr(f"{stem}.csv", frame.to_csv(index=False))
        return f"{stem}.csv.zip"
    if fmt == "format:parquet":
        frame.to_parquet(folder / f"{stem}.parquet", index=False)
        return f"{stem}.parquet"
    if fmt == "format:json":
        frame.to_json(folder / f"{stem}.json", orient="records")
        return f"{stem}.json"
    if fmt == "format:json-keyed" and frame[frame.columns[0]].is_unique:
        frame.set_index(frame.columns[0]).to_json(folder / f"{stem}.json", orient="index")
        return f"{stem}.json"
    if fmt == "format:json-columns":  # rows keyed by the row numbers of a larger table, shuffled
        keys = np.random.default_rng(len(frame)).choice(10 * len(frame), size=len(frame), replace=False)
        frame.set_axis([str(k) for k in keys]).to_json(folder / f"{stem}.json", orient="columns")
        return f"{stem}.json"
    if fmt in ("format:json-split", "format:json-keyed"):
        frame.to_json(folder / f"{stem}.json", orient="split", index=False)
        return f"{stem}.json"
    if fmt == "format:json-nested":
        rows = json.loads(frame.to_json(orient="records"))
        (folder / f"{stem}.json").write_text(json.dumps({"version": 2, "data": {"rows": rows}}))
        return f"{stem}.json"
    if fmt == "format:jsonl":
        frame.to_json(folder / f"{stem}.jsonl", orient="records", lines=True)
        return f"{stem}.jsonl"
    if fmt == "format:partitioned":  # by a column of few text values (it leaves the files), else in three parts
        import pyarrow as pa
        import pyarrow.parquet as pq

        by = [c for c in frame.columns[1:] if frame[c].dtype == object and 1 < frame[c].nunique() <= 8][:1]
        if by:
            table = pa.Table.from_pandas(frame, preserve_index=False)  # named part-0: pyarrow's default is random
            pq.write_to_dataset(table, folder / f"{stem}.parquet", by, basename_template="part-{i}.parquet")
        else:
            (folder / f"{stem}.parquet").mkdir()
            for i, part in enumerate(np.array_split(np.arange(len(frame)), 3)):
                frame.iloc[part].to_parquet(folder / f"{stem}.parquet" / f"part-{i:05d}.parquet", index=False)
        return f"{stem}.parquet/"
    if fmt == "format:encoding":  # the encoding of the stem's hash: one layout's tables differ too
        frame.to_csv(folder / f"{stem}.csv", index=False, encoding=ENCODINGS[zlib.crc32(stem.encode()) % 4])
        return f"{stem}.csv"
    frame.to_csv(folder / f"{stem}.csv", index=False)
    return f"{stem}.csv"


ITEMS = ["bread", "milk", "soap", "tea", "rice", "salt", "eggs"]


def _many_rows(frame: pd.DataFrame, cols: dict[str, str], item: str, seed: int) -> pd.DataFrame:
    """rows:many-per-id: each row of `frame` as 2-5 rows of its id, shuffled: x1 spread around it (their mean is
    it), x2 cut into parts (their sum is it), an `item` drawn per row; the other columns repeated."""
    rng = np.random.default_rng(140_000 + seed)
    counts = rng.integers(2, 6, size=len(frame))
    rows = frame.loc[frame.index.repeat(counts)].reset_index(drop=True)
    group = np.repeat(np.arange(len(frame)), counts)
    if cols["x1"] in rows:
        spread = pd.Series(rng.normal(size=len(rows)))
        rows[cols["x1"]] = rows[cols["x1"]] + (spread - spread.groupby(group).transform("mean")).to_numpy()
    if cols["x2"] in rows:
        share = pd.Series(rng.random(len(rows)) + 0.1)
        rows[cols["x2"]] = rows[cols["x2"]] * (share / share.groupby(group).transform("sum")).to_numpy()
    rows[item] = rng.choice(ITEMS, size=len(rows))
    return rows.sample(frac=1, random_state=seed).reset_index(drop=True)


def _nest(public: Path, tables: Path, rng: np.random.Generator) -> str:
    """archive:nested: each table file of `tables` (and the sample) zipped alone, and those zips in one archive in
    public/, in place of the files; the outer archive's name."""
    outer = public / f"{_word(rng)}-data.zip"
    with zipfile.ZipFile(outer, "w") as z:
        for f in sorted({*tables.iterdir(), *public.glob("*.csv")}):
            if f.is_file() and f.name != "description.md" and f != outer:
                inner = io.BytesIO()
                with zipfile.ZipFile(inner, "w") as one:
                    one.write(f, f.name)
                z.writestr(f"{f.name}.zip", inner.getvalue())
                f.unlink()
    if tables != public and not any(tables.iterdir()):
        tables.rmdir()
    return outer.name


def build(
    seed: int, dest: Path, n_train: int = 160, n_test: int = 60, drawn: tuple[str, list[str]] | None = None
) -> Truth:
    """Write layout `seed` into dest/public (what agentk sees) and dest/private (answers.csv, truth.json). `drawn`
    pins the kind and the transformations (a test's layout, whatever later transformations do to the draws); the
    seed then draws the rest (the data, the names)."""
    rng = np.random.default_rng(10_000 + seed)
    kind, transforms = drawn or draw(seed)
    transforms = list(transforms)
    if refuse := next((t for t in transforms if t in REFUSALS), None):
        return _refused(seed, dest, transforms, REFUSALS[refuse])
    if "signal:long" in transforms:
        return _signal(seed, dest, transforms, n_train // 2, n_test // 2)
    if "problem:sizes" in transforms:
        sizes = np.random.default_rng(160_000 + seed)
        n_train = int(sizes.choice([48, 400, 1500]))
        n_test = int(round(n_train * sizes.uniform(0.2, 0.6)))
    n = n_train + n_test
    frame, classes = _problem(rng, kind, n)
    if "format:arrays" in transforms:
        return _arrays(seed, dest, transforms, kind, frame, classes, _ids(rng, n, transforms)[n_train:])
    spaced = "target:class-tables-folder" in transforms and "sample:ranked" in transforms
    if spaced:  # class names of several words: a ranked cell spells them with underscores
        frame["target"], classes = frame["target"].map(SPACED), [SPACED[c] for c in classes]
    sets = np.random.default_rng(100_000 + seed)  # target:label-sets' draws
    label_columns = "target:label-sets" in transforms and bool(sets.integers(2))  # the sample's form
    if "target:label-sets" in transforms:
        between = str(sets.choice([" ", ",", "|"])) if label_columns else " "
        tags = [
            [c, *(["vivid"] if colour == "red" else []), *(["busy"] if count >= 4 else [])]
            for c, colour, count in zip(frame["target"], frame["colour"], frame["count"])
        ]
        frame["target"] = [between.join(t) for t in tags]
        kind, classes = "multilabel", [*classes, "vivid", "busy"]
    ids = _ids(rng, n, transforms)
    odd = "columns:odd" in transforms
    id_col = _column(rng, "id", odd) if "ids:named" not in transforms else _column(rng, "record_key", odd)
    cols = {c: _column(rng, c, odd) for c in ("x1", "x2", "colour", "count")}
    target = _column(rng, "outcome" if kind != "regression" else "amount", odd)
    if "decoy:lying-target" in transforms:  # the target named by no target word (a target word names the decoy)
        target = _open_words(np.random.default_rng(180_000 + seed), 1)[0]
    if "names:open" in transforms:  # made-up words for every column (drawn apart: the other draws stay as they were)
        words = _open_words(np.random.default_rng(170_000 + seed), 6)
        id_col, target = words[0], words[1]
        cols = dict(zip(cols, words[2:]))
    names = _names(rng, transforms)
    fmt = next((t for t in transforms if t in FORMATS), None)
    public, private, tables, here = _places(dest, transforms)
    public.mkdir(parents=True)
    private.mkdir(parents=True)
    data = pd.DataFrame({id_col: ids}).join(frame.rename(columns={**cols, "target": target}))
    if fmt == "format:encoding":  # letters the encodings write differently
        data[cols["colour"]] = data[cols["colour"]].map(ACCENTED)
    inputs = list(cols.values())
    files: dict[str, str] = {}

    if "side:1-n" in transforms:  # `count` is the number of rows per id in an events table
        inputs.remove(cols["count"])
        child_key = _column(rng, "ref", odd)
        rows = [(i, round(float(v), 3)) for i, c in zip(ids, frame["count"]) for v in rng.normal(size=int(c) or 0)]
        child = pd.DataFrame(rows, columns=[child_key, _column(rng, "reading", odd)])
        if "side:shared-category" in transforms:  # a weekday both hold; a fifth of the ids without events
            week = np.random.default_rng(220_000 + seed)
            day = _column(week, "weekday", odd)
            days = ["MONDAY", "TUESDAY", "WEDNESDAY", "THURSDAY", "FRIDAY", "SATURDAY", "SUNDAY"]
            quiet = set(week.choice(ids, size=n // 5, replace=False))
            frame["count"] = [0 if i in quiet else c for i, c in zip(ids, frame["count"])]
            child = child[~child[child_key].isin(quiet)].assign(**{day: lambda f: week.choice(days, len(f))})
            data[day] = week.choice(days, n)
            inputs.append(day)
        child = child.sample(frac=1, random_state=seed).reset_index(drop=True)
        if "side:split-events" in transforms:  # each split's events under its name; its samples' table beside
            in_train = child[child_key].isin(set(ids[:n_train]))
            files["child"] = here + _write(child[in_train], tables, names["train"], fmt)
            files["test_child"] = here + _write(child[~in_train], tables, names["test"], fmt)
            word = _word(np.random.default_rng(70_000 + seed))
            names["train"], names["test"] = f"{names['train']}_{word}", f"{names['test']}_{word}"
        else:
            files["child"] = here + _write(child, tables, names["child"], fmt)
    side_cols: list[str] = []
    if "side:1-1" in transforms:  # x2 and colour in a side table keyed by the id under another name
        side_key = _column(rng, "key", odd) if _column(rng, "key", odd) != id_col else "key_2"
        side_cols = [cols["x2"], cols["colour"]]
        side = data[[id_col, *side_cols]].rename(columns={id_col: side_key})
        files["side"] = here + _write(side.sample(frac=1, random_state=seed), tables, names["side"], fmt)
    more = np.random.default_rng(30_000 + seed)  # the draws of the transforms added last
    if "side:chain" in transforms:  # the id's code in one table, the code's x1 in another
        inputs.remove(cols["x1"])
        code, ref, key = (_column(more, base, odd) for base in ("code", "ref_code", "member"))
        codes = [f"K{v:05d}" for v in more.choice(100_000, size=n, replace=False)]
        links = pd.DataFrame({key: data[id_col], code: codes}).sample(frac=1, random_state=seed)
        lookup = pd.DataFrame({ref: codes, cols["x1"]: data[cols["x1"]]}).sample(frac=1, random_state=seed + 1)
        files["links"] = here + _write(links, tables, f"{_word(more)}_links", fmt)
        files["lookup"] = here + _write(lookup, tables, f"{_word(more)} codes", fmt)
    second = None
    if "problem:multi-target" in transforms:  # another value of the same inputs
        other = np.random.default_rng(200_000 + seed)
        second = _open_words(other, 1)[0] if "names:open" in transforms else _column(other, "volume", odd)
        second = second if second not in data.columns else f"{second}_2"
        noise = other.normal(scale=0.3, size=n)
        data[second] = (
            5 + 2 * frame["x2"] - frame["x1"] + np.where(frame["colour"] == "blue", 1.5, 0.0) + noise
        ).round(3)
    when = None
    if "problem:time-ordered" in transforms:  # the rows in time, train before test, a weekly swing in the target
        clock = np.random.default_rng(190_000 + seed)
        when = _open_words(clock, 1)[0] if "names:open" in transforms else _column(clock, "date", odd)
        start = pd.Timestamp("2016-01-01") + pd.Timedelta(days=int(clock.integers(0, 2000)))
        step = pd.Timedelta(hours=int(clock.choice([24, 6])))
        stamps = pd.DatetimeIndex([start + step * k for k in range(n)])
        data[when] = stamps.strftime("%Y-%m-%d" if step.days else "%Y-%m-%d %H:%M")
        swing = np.where(stamps.dayofweek >= 5, 1.0, 0.0)
        if kind == "regression":
            data[target] = (data[target] + 2 * swing).round(3)
        inputs = [when, *inputs]
    if "side:composite" in transforms:  # x1 keyed by (site, visit): neither column alone names a row
        inputs.remove(cols["x1"])
        site, visit = _column(more, "site", odd), _column(more, "visit", odd)
        sites = more.choice([f"S{v:02d}" for v in range(12)], size=n)
        data[site] = sites
        data[visit] = pd.Series(range(n)).groupby(sites).cumcount().to_numpy() + 1
        respelled = {site: _column(more, "place", odd), visit: _column(more, "number", odd)}
        grid = data[[site, visit, cols["x1"]]].rename(columns=respelled).sample(frac=1, random_state=seed)
        files["grid"] = here + _write(grid, tables, f"{_word(more)}_by_{_word(more)}", fmt)
        inputs = [site, visit, *inputs]
    if "side:chained-key" in transforms:  # x1 by (group, hour): the hour the row's, the group the id's, per period
        inputs.remove(cols["x1"])
        chain = np.random.default_rng(140_000 + seed)
        group, hour, member = (_column(chain, base, odd) for base in ("group", "hour", "member"))
        member = member if member != id_col else f"{member}_2"
        groups = chain.choice([f"G{v:02d}" for v in range(8)], size=n)
        in_train = np.arange(n) < n_train
        order = pd.Series(range(n)).groupby([groups, in_train]).cumcount().to_numpy()
        data[hour] = np.where(in_train, order, order + 1000)  # the test's hours after the train's
        parent = pd.DataFrame({member: data[id_col], group: groups}).sample(frac=1, random_state=seed)
        files["members"] = here + _write(parent, tables, f"{_word(chain)}_members", fmt)
        respelled = {hour: _column(chain, "when", odd)}
        grid = pd.DataFrame({group: groups, hour: data[hour], cols["x1"]: data[cols["x1"]]}).rename(columns=respelled)
        stem = f"{_word(chain)}_by_hour"
        for period, rows in (("early", grid[in_train]), ("late", grid[~in_train])):
            rows = rows if period == "early" else rows.rename(columns=str.upper)  # spelt otherwise: the same columns
            files[f"hours_{period}"] = here + _write(
                rows.sample(frac=1, random_state=seed), tables, f"{stem}_{period}", fmt
            )
        inputs = [hour, *inputs]
    if "side:many-per-pair" in transforms:  # x1 the mean of each (group, window)'s readings, many rows each
        inputs.remove(cols["x1"])
        book = np.random.default_rng(210_000 + seed)
        group, window = (_column(book, base, odd) for base in ("stock", "window"))
        n_groups = int(book.integers(3, 7))
        labels = np.sort(book.choice(40, size=n_groups, replace=False))
        rows = np.arange(n)
        in_train = rows < n_train
        k = np.where(in_train, rows, rows - n_train) // n_groups + np.where(in_train, 0, n)  # test windows after
        windows = book.choice(np.arange(5, 40_000), size=2 * n, replace=False)  # shared by the groups, in no order
        data[group], data[window] = labels[rows % n_groups], windows[k]
        quotes = []
        for g, w, x1 in zip(data[group], data[window], data[cols["x1"]]):
            noise = book.normal(size=int(book.integers(3, 9)))
            ticks = np.sort(book.choice(600, size=len(noise), replace=False))
            quotes += [(int(w), int(t), float(v), int(g)) for t, v in zip(ticks, noise - noise.mean() + x1)]
        spelt = [_column(book, base, odd) for base in ("period", "second", "reading", "instrument")]
        quotes = pd.DataFrame(quotes, columns=spelt)
        split = np.isin(quotes[spelt[0]], data[window][in_train])
        stem = f"{_word(book)}_quotes"
        if book.random() < 0.5:  # one table per split, as train and test are
            files["quotes_train"] = here + _write(quotes[split], tables, f"{stem}_{names['train']}", fmt)
            files["quotes_test"] = here + _write(quotes[~split], tables, f"{stem}_{names['test']}", fmt)
        else:
            files["quotes"] = here + _write(quotes, tables, stem, fmt)
        inputs = [group, window, *inputs]
    if "side:per-sample-files" in transforms:  # x2 is the mean of each sample's readings, one file per sample
        side_cols = [cols["x2"]]
        folder = tables / _word(more)
        folder.mkdir(parents=True)
        reading = _column(more, "reading", odd)
        for i, x2 in zip(data[id_col], data[cols["x2"]]):
            noise = more.normal(size=int(more.integers(3, 7)))
            pd.DataFrame({reading: noise - noise.mean() + x2}).to_csv(folder / f"{i}.csv", index=False)
        files["readings"] = f"{here}{folder.name}/"
    media = np.random.default_rng(40_000 + seed)  # the media transforms' draws
    if "media:text" in transforms:  # a note of a few words per row, the colour among them
        note = _column(media, "note", odd)
        fill = ["bright", "worn", "small", "heavy", "quiet", "old", "round", "plain", "tall", "soft", "odd", "new"]
        data[note] = [
            " ".join(media.permutation([str(c), *media.choice(fill, size=int(media.integers(4, 9)))]))
            + f" ({k})"  # every note its own
            for k, c in enumerate(data[cols["colour"]])
        ]
        if "media:text-files" in transforms:  # <folder>/<id>.txt, the note alone
            folder = tables / f"{_word(np.random.default_rng(90_000 + seed))}_notes"
            folder.mkdir(parents=True, exist_ok=True)
            for i, text in zip(data[id_col], data[note]):
                (folder / f"{i}.txt").write_text(text, encoding="utf-8")
            files["notes"] = f"{here}{folder.name}/"
        else:
            inputs.append(note)
    if "media:images" in transforms:  # x2 is the grey level of each sample's picture
        from PIL import Image

        side_cols = [cols["x2"]]
        views = "media:views" in transforms
        low, high = (60, 195) if views else (8, 247)  # room for the views' offsets
        levels = np.clip(np.round(128 + 40 * data[cols["x2"]].to_numpy()), low, high).astype(int)
        data["__level"] = levels
        stem = f"{_word(media)}_images"
        split = "media:split-folders" in transforms
        rng_views = np.random.default_rng(50_000 + seed)
        names_of = [""]
        if views:  # a sample's pictures: <id><sep><view>.png, a view's level off by as much as 50, their mean the level
            sep = str(rng_views.choice(["_", "-", "."]))
            names_of = [sep + w for w in dict.fromkeys(_word(rng_views) for _ in range(int(rng_views.integers(2, 5))))]
            names_of = names_of if len(names_of) > 1 else [*names_of, sep + "other"]
        by_class = "target:folders" in transforms
        in_name = "target:file-names" in transforms
        names_rng = np.random.default_rng(110_000 + seed)  # target:file-names' draws: the others' stay as they were
        before, sep_of = bool(names_rng.integers(2)), str(names_rng.choice(["_", "-", "."]))
        name_of = lambda i, c: f"{c}.{i}" if before else f"{i}{sep_of}{c}"  # noqa: E731
        for k, (i, level) in enumerate(zip(data[id_col], levels)):
            folder = tables / (f"{stem}_{'test' if k >= n_train else 'train'}" if split else stem)
            folder = folder / str(data[target].iloc[k]) if by_class and k < n_train else folder
            folder.mkdir(parents=True, exist_ok=True)
            offsets = rng_views.uniform(-50, 50, size=len(names_of)) if views else np.zeros(1)
            offsets = np.round(offsets - offsets.mean()).astype(int)
            offsets[0] -= offsets.sum()  # whole offsets that sum to 0
            for name, offset in zip(names_of, offsets):
                pixels = np.clip(level + offset + media.integers(-3, 4, size=(12, 12)), 0, 255)
                pixels = pixels - int(round(pixels.mean())) + level + offset  # the mean is the view's level
                named = name_of(i, data[target].iloc[k]) if in_name and k < n_train else f"{i}{name}"
                Image.fromarray(pixels.astype(np.uint8), "L").save(folder / f"{named}.png")
        files["images"] = f"{here}{stem}_train/" if split else f"{here}{stem}/"
        if split:
            files["test_images"] = f"{here}{stem}_test/"
    if "media:audio" in transforms:  # x2 is the pitch of each sample's clip
        import soundfile

        side_cols = [cols["x2"]]
        data["__pitch"] = np.round(300 + 150 * (np.clip(data[cols["x2"]].to_numpy(), -3.5, 3.5) + 3.5))
        folder = tables / f"{_word(media)}_clips"
        folder.mkdir(parents=True, exist_ok=True)
        t = np.arange(int(0.4 * AUDIO_RATE)) / AUDIO_RATE
        for i, pitch in zip(data[id_col], data["__pitch"]):
            wave = 0.5 * np.sin(2 * np.pi * pitch * t) + 0.01 * media.normal(size=len(t))
            soundfile.write(folder / f"{i}.wav", wave.astype(np.float32), AUDIO_RATE)
        files["clips"] = f"{here}{folder.name}/"
    split_side = np.random.default_rng(120_000 + seed)  # split:two-train-tables' and the test spelling's draws
    if "split:two-train-tables" in transforms:
        side_cols = [cols["x2"], cols["colour"]]
        word = str(split_side.choice(SPLIT_WORDS))
        side_names = {s: f"{names[s]}_{split_side.choice(SIDE_WORDS)}" for s in ("train", "test")}
        names["train"], names["test"] = f"{names['train']}_{word}", f"{names['test']}_{word}"
        held = split_side.random(n) < split_side.uniform(0.4, 0.8)  # the rows the smaller tables hold
        held[:n_train][split_side.integers(n_train)] = held[n_train:][split_side.integers(n_test)] = True
        data["__held"] = held
    keep = [c for c in inputs if c not in side_cols]
    many = "rows:many-per-id" in transforms
    item = _column(np.random.default_rng(130_000 + seed), "item", odd) if many else None  # each row's own
    keep += [item] if many else []
    train, test = data.iloc[:n_train], data.iloc[n_train:]
    test_named = {}  # columns:test-spelling: the test tables' names of some inputs
    if "columns:test-spelling" in transforms:
        respell = [*keep, *(side_cols if "split:two-train-tables" in transforms else [])]
        chosen = split_side.choice(respell, size=min(len(respell), int(split_side.integers(1, 3))), replace=False)
        test_named = {c: test_spelling(split_side, c) for c in chosen}
    if "split:two-train-tables" in transforms:
        for split, rows in (("train", train), ("test", test)):
            side = rows.loc[rows["__held"], [id_col, *side_cols]].sample(frac=1, random_state=seed)
            side = side.rename(columns=test_named) if split == "test" else side
            files[f"{split}_side"] = here + _write(side, tables, side_names[split], fmt)
    if "decoy:larger-table" in transforms:  # other rows, more of them, and a column the sample does not score
        decoy_rng = np.random.default_rng(130_000 + seed)
        other, _ = _problem(decoy_rng, kind, 2 * n_train)
        other = other.rename(columns={**cols, "target": target})
        other.insert(0, id_col, [f"{v}7" for v in _ids(decoy_rng, 2 * n_train, transforms)])
        scored = _column(decoy_rng, str(decoy_rng.choice(["label", "rating", "flag", "score"])), odd)
        scored = scored if scored not in data.columns else f"{scored}_v0"
        other = other.rename(columns={target: scored})
        other = other.assign(**{c: data[c].iloc[0] for c in keep if c not in other.columns})
        decoy_stem = f"{names['train']}_{decoy_rng.choice(DECOY_WORDS)}"
        names["train"] = f"{names['train']}_{decoy_rng.choice(SPLIT_WORDS)}_set"  # the longer name
        files["decoy_train"] = here + _write(other[[id_col, *keep, scored]], tables, decoy_stem, fmt)
    extra = np.random.default_rng(20_000 + seed)  # the later transforms' draws leave the others' as they were
    if "decoy:train-only" in transforms:  # a third of the rows annotated, under a target's name
        decoy = _column(extra, str(extra.choice(["label", "target", "y", "class"])), odd)
        if "decoy:lying-target" in transforms:  # a plain target word, so that it ranks first
            decoy = str(np.random.default_rng(180_000 + seed).choice(["label", "target", "class", "labels"]))
        decoy = decoy if decoy not in data.columns else f"{decoy}_v0"
        decoy = f"{decoy}_old" if "decoy:described" in transforms and len(decoy) <= 2 else decoy  # a name one can cite
        train = train.assign(**{decoy: train[target].where(extra.random(len(train)) < 0.3)})
        keep_train = [decoy]
    else:
        keep_train, decoy = [], None
    keep_train += [second] if second else []
    if "metric:bias-unnamed" in transforms:  # identity columns the metric reads: fractions on two rows in five
        groups = np.random.default_rng(90_000 + seed)
        for word in groups.choice(["north", "south", "elder", "young"], size=2, replace=False):
            name = _column(groups, f"mentions_{word}", odd)
            fractions = groups.choice([0.0, 0.2, 0.5, 1.0], size=len(train))
            train = train.assign(**{name: np.where(groups.random(len(train)) < 0.4, fractions, np.nan)})
            keep_train.append(name)
    if "media:arrays" in transforms:  # <train|test>/<last character>/<id>.npy: x1, x2, count, the colour's number
        colours = {c: k for k, c in enumerate(sorted(data[cols["colour"]].unique()))}
        for k, row in data.iterrows():
            i = str(row[id_col])
            folder = tables / ("test" if k >= n_train else "train") / i[-1]
            folder.mkdir(parents=True, exist_ok=True)
            values = [row[cols["x1"]], row[cols["x2"]], row[cols["count"]], colours[row[cols["colour"]]]]
            np.save(folder / f"{i}.npy", np.array(values, dtype=float))
        files["arrays"], files["test_arrays"] = f"{here}train/", f"{here}test/"
        keep = []
    early = None  # test:two-stages: the earlier stage's (test, sample) names
    if "test:two-stages" in transforms:
        stages = np.random.default_rng(120_000 + seed)
        suffix = str(stages.choice(["_stage2", "_v2", "_2", "_final"]))
        if stages.integers(2):  # the later stage's names carry a suffix, the earlier's are plain
            early = names["test"], names["sample"]
            names["test"], names["sample"] = names["test"] + suffix, names["sample"] + suffix
        else:
            early = names["old"], names["sample"] + "_old"
    if "labels-file" in transforms:
        files["labels"] = here + _write(train[[id_col, target]], tables, names["labels"], fmt)
        files["train"] = here + _write(train[[id_col, *keep, *keep_train]], tables, names["train"], fmt)
    elif "target:folders" in transforms or "target:file-names" in transforms:  # the folders' or names' classes
        files["train"] = here + _write(train[[id_col, *keep, *keep_train]], tables, names["train"], fmt)
    elif "target:class-tables" in transforms:  # one table per class, named by it, in a folder or beside each other
        in_folder = bool(np.random.default_rng(80_000 + seed).integers(2))
        for c in classes:
            rows = train.loc[train[target] == c, [id_col, *keep]]
            if in_folder:
                files[f"class:{c}"] = f"{here}{names['train']}/" + _write(rows, tables / names["train"], str(c), fmt)
            else:
                files[f"class:{c}"] = here + _write(rows, tables, f"{names['train']}_{c}", fmt)
    elif "target:class-tables-folder" in transforms:  # a folder of one table per class, its rows carrying it
        stem = f"{names['train']}_{_word(np.random.default_rng(120_000 + seed))}"
        checked = _column(np.random.default_rng(130_000 + seed), "checked", odd)
        flags = np.random.default_rng(140_000 + seed).random(len(train)) < 0.8
        rows = train.assign(**{checked: flags})[[id_col, checked, *keep, target]]  # with a train-only column
        for c in classes:
            part = rows[rows[target] == c]
            files[f"class:{c}"] = f"{here}{stem}/" + _write(part, tables / stem, str(c), fmt)
    else:
        rows = _many_rows(train, cols, item, seed) if many else train
        files["train"] = here + _write(rows[[id_col, *keep, *keep_train, target]], tables, names["train"], fmt)
    if "side:data-dictionary" in transforms:  # what each column of the train table holds, one row per column
        about = np.random.default_rng(230_000 + seed)
        named = [id_col, *keep, *keep_train, target]
        named += [f"{_word(about).upper()}_{k}" for k in range(int(about.integers(20, 60)))]  # other tables' columns
        dictionary = pd.DataFrame({"": np.arange(1, len(named) + 1), "Table": names["train"], "Row": named})
        dictionary["Description"] = [f"the {c} of the row" for c in named]
        files["dictionary"] = here + _write(dictionary, tables, f"{_word(about)}_columns_description", None)
    if "media:arrays" in transforms:  # an older test set's labels, of other ids, named as a test table
        # ids past every sample's ("99" after a number of the samples' range): none of them is the sample's
        old = pd.DataFrame({id_col: [f"{v}99" for v in _ids(extra, 40, transforms)], target: train[target].iloc[:40]})
        files["old"] = here + _write(old, tables, f"{names['test']}_labels_old", fmt)
    else:
        rows = _many_rows(test, cols, item, seed + 1) if many else test
        files["test"] = here + _write(rows[[id_col, *keep]].rename(columns=test_named), tables, names["test"], fmt)
    shown = max(10, len(test) * 2 // 5)  # test:two-stages: the earlier stage's test rows, the scored one's first
    if early:
        files["early_test"] = here + _write(test.iloc[:shown][[id_col, *keep]], tables, early[0], fmt)
    if "decoy:old-test" in transforms:  # an older test set of other ids, not scored
        old = _problem(rng, kind, 40)[0].rename(columns={**cols, "target": target})
        old.insert(0, id_col, [f"{v}9" for v in _ids(rng, 40, transforms)])
        old = old.assign(**{c: data[c].iloc[:40].to_numpy() for c in keep if c not in old.columns})  # site, visit
        files["old"] = here + _write(old[[id_col, *keep]], tables, names["old"], fmt)

    if label_columns:  # one 0/1 column per label, named by it (or the target's name and it)
        prefixed = bool(sets.integers(2))
        named = {c: f"{target}_{c}" if prefixed else c for c in classes}
        sample = pd.DataFrame({id_col: test[id_col], **{named[c]: 0 for c in classes}})
        held = test[target].str.split(f"[{re.escape(between)}]")
        answers = pd.DataFrame(
            {id_col: test[id_col], **{named[c]: held.map(lambda t, c=c: int(c in t)) for c in classes}}
        )
    elif kind != "regression" and "sample:proba" in transforms:
        sample = pd.DataFrame({id_col: test[id_col]})
        answers = sample.copy()
        for c in classes:
            sample[f"{target}_{c}"] = 1 / len(classes)
            answers[f"{target}_{c}"] = (test[target] == c).astype(float).to_numpy()
        if "sample:unseen-class" in transforms:  # no train row has it, nor any test row
            sample[f"{target}_unseen"], answers[f"{target}_unseen"] = 1 / len(classes), 0.0
    else:
        submitted = target
        if "sample:renamed" in transforms:
            submitted = _column(extra, str(extra.choice(["prediction", "predicted", "expected", *WORDS])), odd)
            submitted = submitted if submitted not in data.columns else f"{submitted}_pred"
        spelt = (lambda v: str(v).replace(" ", "_")) if spaced else str  # noqa: E731
        first = " ".join(map(spelt, classes)) if "sample:ranked" in transforms else classes[0] if classes else 0.0
        if "sample:placeholder" in transforms:  # 0 where labels go, or nothing at all
            first = [0, np.nan][int(np.random.default_rng(120_000 + seed).integers(2))]
        sample = pd.DataFrame({id_col: test[id_col], submitted: first, **({second: 0.0} if second else {})})
        answers = test[[id_col, target, *([second] if second else [])]].rename(columns={target: submitted})
        answers[submitted] = answers[submitted].map(spelt) if spaced else answers[submitted]
    sample.to_csv(public / f"{names['sample']}.csv", index=False)
    files["sample"] = f"{names['sample']}.csv"
    if early:  # its own sample, of its own ids
        sample.iloc[:shown].to_csv(public / f"{early[1]}.csv", index=False)
        files["early_sample"] = f"{early[1]}.csv"
    answers.to_csv(private / "answers.csv", index=False)
    if "archive:nested" in transforms:
        files["archive"] = _nest(public, tables, np.random.default_rng(60_000 + seed))

    # labels: accuracy, or AUC of the positive class's probability (binary); a column per class: the log loss
    if label_columns:
        metric, scored = (
            "Submissions are evaluated on the mean column-wise area under the ROC curve, one column per label.",
            "mean_columnwise_auc",
        )
    elif kind == "multilabel":
        metric, scored = (
            "Submissions are evaluated on the mean F2 score of each row's space-delimited set of labels.",
            "f2_samples",
        )
    elif "metric:weighted-logloss" in transforms:
        scored = "balanced_log_loss"  # each class's sum divided by its own count: every class weighs alike
        metric = (
            "Submissions are evaluated using a weighted multi-class logarithmic loss:\n\n"
            "    Log Loss = - ( sum_i w_i * sum_j (y_ij / N_i) * ln p_ij ) / ( sum_i w_i )\n\n"
            f"where N_i is the number of {NOUNS[seed % len(NOUNS)]} in class i and w_i the weight of class i: "
            "each class counts by its weight, not its size."
        )
    elif "sample:proba" in transforms:
        metric, scored = "Submissions are evaluated on the multi-class logarithmic loss (log loss).", "multi_log_loss"
    elif second:
        metric, scored = "Submissions are scored on the mean column-wise root mean squared error (MCRMSE).", "mcrmse"
    elif kind == "regression":
        metric, scored = "Submissions are scored on the root mean squared error (RMSE).", "rmse"
    elif "sample:ranked" in transforms:
        scored = "map_at_3"
        metric = (
            "Submissions are evaluated on the Mean Average Precision @ 3 (MAP@3): predict up to three labels per "
            "row, space-delimited, the most likely first."
        )
    elif "metric:bias-unnamed" in transforms:
        scored = "roc_auc"  # no sub-group named: the target's own AUC is the proxy optimised
        metric = (
            "Submissions are evaluated on a bias-aware AUC: the overall ROC AUC combined with the generalized mean "
            "(p = -5) of the Subgroup AUC, BPSN AUC and BNSP AUC of each identity subgroup."
        )
    elif kind == "binary" and seed % 2:
        metric, scored = (
            "Submissions are evaluated on the area under the ROC curve (AUC) of the predicted probability.",
            "roc_auc",
        )
    else:
        metric, scored = (
            "Submissions are evaluated on accuracy, the share of rows whose label is predicted correctly.",
            "accuracy",
        )
    listing = {
        "train": f"the training set, with the target `{target}`"
        if "labels" not in files and "target:folders" not in transforms and "target:file-names" not in transforms
        else "the training set",
        "labels": f"the target `{target}` of each training {id_col}",
        "test": "the test set: predict these",
        "sample": "a sample submission in the correct format",
        "side": f"more inputs of each {id_col}, keyed by another name",
        "child": f"many readings of each {id_col}" + (" of the training set" if "test_child" in files else ""),
        "test_child": f"many readings of each {id_col} of the test set",
        "old": "an older test set, no longer scored",
        "links": f"a code for each {id_col}",
        "lookup": "what each code stands for",
        "grid": "readings by site and visit",
        "members": f"the group of each {id_col}",
        "hours_early": "readings by group and hour, the training period's",
        "hours_late": "readings by group and hour, the test period's",
        "quotes": "many readings in each window of each group",
        "dictionary": "what each column of the tables holds",
        "quotes_train": "many readings in each window of each group, the training set's",
        "quotes_test": "many readings in each window of each group, the test set's",
        "readings": f"a few readings of each {id_col}, one file per {id_col} named by it",
        "images": f"a picture of each {id_col}, named by it"
        + (" (the training set's)" if "test_images" in files else "")
        + (f", in a folder named by its `{target}`" if "target:folders" in transforms else "")
        + (f", its name holding its `{target}` beside its {id_col}" if "target:file-names" in transforms else ""),
        "test_images": f"a picture of each {id_col} of the test set, named by it",
        "clips": f"a sound clip of each {id_col}, named by it",
        "archive": "the tables above, each in a zip of its own",
        "notes": f"a note on each {id_col}, one text file named by it",
        "arrays": f"the inputs of each training {id_col}, an array in a file named by it",
        "test_arrays": f"the inputs of each test {id_col}: predict these",
        "early_test": "the test set of the first stage",
        "early_sample": "a sample submission for the first stage's test set",
        "train_side": f"more inputs of some training {id_col}s",
        "test_side": f"more inputs of some test {id_col}s",
        "decoy_train": "an earlier dataset of other rows, for another task",
    }
    for r in files:
        if r.startswith("class:"):
            listing[r] = f"the training rows whose `{target}` is {r.split(':', 1)[1]}"
    lines = "\n".join(f"- {files[r]} - {listing[r]}" for r in files)
    if "decoy:described" in transforms:  # the decoy is named too: the expert's first hypothesis may be it
        lines += f"\n\nThe column `{decoy}` of the training set holds an earlier round's annotation of some rows."
    (public / "description.md").write_text(
        f"# Synthetic competition {seed}\n\n## Description\n\nPredict `{target}` for each {id_col} of the test set."
        f"\n\n## Evaluation\n\n{metric}\n\n## Data\n\n{lines}\n"
    )

    def features_of(rows: pd.DataFrame, counts: pd.Series) -> dict[str, dict[str, object]]:
        """What each input is for these rows, by id: the base problem's values as agentk must carry them."""
        found = {base: dict(zip(rows[id_col], rows[col].tolist())) for base, col in cols.items()}
        found = {base: v for base, v in found.items() if base != "count" or cols["count"] in inputs}
        if "split:two-train-tables" in transforms:  # the rows the smaller table lacks have no value (judged missing)
            for base in ("x2", "colour"):
                found[base] = {i: v if h else None for (i, v), h in zip(found[base].items(), rows["__held"])}
        if "side:1-n" in transforms:  # what the events table says of each id: how many rows it has
            found["count"] = dict(zip(rows[id_col], counts.tolist()))
        if "media:text" in transforms:
            found["note"] = dict(zip(rows[id_col], rows[note].tolist()))
        if when is not None:
            found["date"] = dict(zip(rows[id_col], rows[when].tolist()))
        if "media:images" in transforms:  # the picture's mean grey level stands for x2 (judged by opening it)
            found["views" if "media:views" in transforms else "image"] = dict(
                zip(rows[id_col], rows["__level"].tolist())
            )
            found.pop("x2")
        if "media:audio" in transforms:  # the clip's pitch stands for x2 (judged on the pictures made of the clips)
            found["sound"] = dict(zip(rows[id_col], rows["__pitch"].tolist()))
            found.pop("x2")
        return {k: {str(i): v for i, v in vals.items()} for k, vals in found.items()}

    truth = Truth(
        seed,
        kind,
        transforms,
        files,
        list(map(str, train[id_col])),
        list(map(str, test[id_col])),
        dict(zip(map(str, train[id_col]), train[target].tolist())),
        features_of(data.iloc[:n_train], frame["count"].iloc[:n_train]),
        classes,
        test_features=features_of(data.iloc[n_train:], frame["count"].iloc[n_train:]),
        metric=[scored],
        more_targets={second: dict(zip(map(str, train[id_col]), train[second].tolist()))} if second else {},
    )
    (private / "truth.json").write_text(json.dumps(asdict(truth), default=str))
    return truth


def _arrays(
    seed: int, dest: Path, transforms: list[str], kind: str, frame: pd.DataFrame, classes: list, test_ids: list[str]
) -> Truth:
    """format:arrays: the inputs as whole-split .npy arrays, a train and a test feature matrix (x1, x2, the
    colour's code, the count) and a train label vector, beside a sample of the test rows' ids in order. Named as
    X_train/y_train/X_test, train_<n>/train_label_<n>/test_<n>, or with no role word (names:other); two folders
    deep with subfolder. The train rows have no ids: setup names them by their number (row0, row1...)."""
    rng = np.random.default_rng(150_000 + seed)
    n_test = len(test_ids)
    n_train = len(frame) - n_test
    odd = "columns:odd" in transforms
    id_col = _column(rng, "record_key" if "ids:named" in transforms else "id", odd)
    target = _column(rng, "outcome" if kind != "regression" else "amount", odd)
    if "sample:renamed" in transforms:
        target = _column(rng, str(rng.choice(["prediction", "predicted", "expected"])), odd)
    codes = {c: i for i, c in enumerate(["red", "green", "blue", "amber"])}
    x = np.column_stack([frame["x1"], frame["x2"], frame["colour"].map(codes), frame["count"]]).astype(np.float32)
    y = frame["target"].to_numpy()
    y = y.astype(str) if kind == "multiclass" else y.astype(np.float64 if kind == "regression" else np.int64)
    number = int(rng.integers(10, 99))
    if "names:other" in transforms:
        stems = {"train": f"features_{number}", "labels": f"outcomes_{number}", "test": f"features_{number + 1}"}
    elif "names:role-inside" in transforms:
        stems = {"train": f"train_{number}", "labels": f"train_label_{number}", "test": f"test_{number}"}
    else:
        stems = {"train": "X_train", "labels": "y_train", "test": "X_test"}
    public, private = dest / "public", dest / "private"
    word = _word(rng)
    here = f"{word}/{word}/" if "subfolder" in transforms else ""
    (public / here).mkdir(parents=True)
    private.mkdir(parents=True)
    files = {}
    for role, array in (("train", x[:n_train]), ("labels", y[:n_train]), ("test", x[n_train:])):
        np.save(public / here / f"{stems[role]}.npy", array)
        files[role] = f"{here}{stems[role]}.npy"
    sample = pd.DataFrame({id_col: test_ids, target: classes[0] if classes else 0.0})
    sample.to_csv(public / "sample_submission.csv", index=False)
    files["sample"] = "sample_submission.csv"
    pd.DataFrame({id_col: test_ids, target: y[n_train:]}).to_csv(private / "answers.csv", index=False)
    metric = (
        "Submissions are scored on the root mean squared error (RMSE)."
        if kind == "regression"
        else "Submissions are evaluated on accuracy, the share of rows whose label is predicted correctly."
    )
    listing = {"train": "the training features", "labels": f"the training `{target}`", "test": "the test features"}
    listing["sample"] = "a sample submission in the correct format"
    lines = "\n".join(f"- {files[r]} - {listing[r]}" for r in files)
    (public / "description.md").write_text(
        f"# Synthetic competition {seed}\n\n## Description\n\nPredict `{target}` for each {id_col} of the test "
        f"set.\n\n## Evaluation\n\n{metric}\n\n## Data\n\n{lines}\n"
    )
    train_ids = [f"row{i}" for i in range(n_train)]  # as setup names rows that have no id
    tr = frame.iloc[:n_train]
    features = {base: dict(zip(train_ids, tr[base].tolist())) for base in ("x1", "x2", "colour", "count")}
    truth = Truth(
        seed,
        kind,
        transforms,
        files,
        train_ids,
        list(map(str, test_ids)),
        dict(zip(train_ids, y[:n_train].tolist())),
        features,
        classes,
        metric=["rmse" if kind == "regression" else "accuracy"],
    )
    (private / "truth.json").write_text(json.dumps(asdict(truth), default=str))
    return truth


def _signal(seed: int, dest: Path, transforms: list[str], n_train: int, n_test: int) -> Truth:
    """signal:long: the base problem's samples as windows of SIGNAL_LENGTH rows of two readings, whose levels are x1
    and x2 (each window's readings centred on them exactly), the target on every row of its window; the train
    windows one after another in one table, each test window a segment file named by its id. Setup cuts the signal
    into windows as long as the segments and labels each by its last row: the truth's train samples are the
    windows in order."""
    rng = np.random.default_rng(80_000 + seed)
    n, odd = n_train + n_test, "columns:odd" in transforms
    frame = _problem(rng, "regression", n)[0]
    ids = _ids(rng, n_test, transforms)
    key, a, b = (_column(rng, base, odd) for base in ("seg_id", "acoustic", "pressure"))
    target = _column(rng, "time_left", odd)
    names = _names(rng, transforms)
    fmt = next((t for t in transforms if t in FORMATS), None)
    public, private, tables, here = _places(dest, transforms)
    private.mkdir(parents=True)
    readings = []
    for k in range(n):
        noise = rng.normal(size=(SIGNAL_LENGTH, 2))
        levels = frame[["x1", "x2"]].to_numpy()[k] + noise - noise.mean(axis=0)
        readings.append(pd.DataFrame(levels.round(6), columns=[a, b]))
    signal = pd.concat(readings[:n_train], ignore_index=True)
    signal[target] = np.repeat(frame["target"].to_numpy()[:n_train], SIGNAL_LENGTH)
    files = {"train": here + _write(signal, tables, names["train"], fmt)}
    segments = tables / names["test"]
    segments.mkdir(parents=True)
    for i, part in zip(ids, readings[n_train:]):
        part.to_csv(segments / f"{i}.csv", index=False)
    files["test"] = f"{here}{names['test']}/"
    submitted = _column(rng, "prediction", odd) if "sample:renamed" in transforms else target
    pd.DataFrame({key: ids, submitted: 0.0}).to_csv(public / f"{names['sample']}.csv", index=False)
    files["sample"] = f"{names['sample']}.csv"
    pd.DataFrame({key: ids, submitted: frame["target"].to_numpy()[n_train:]}).to_csv(
        private / "answers.csv", index=False
    )
    (public / "description.md").write_text(
        f"# Synthetic competition {seed}\n\n## Description\n\nPredict `{target}` at the end of each test segment."
        "\n\n## Evaluation\n\nSubmissions are evaluated on the mean absolute error (MAE).\n\n## Data\n\n"
        f"- {files['train']} - one long recording of the readings `{a}` and `{b}`, with `{target}` on every row\n"
        f"- {files['test']} - one segment of another recording per `{key}`, named by it: predict `{target}` at its "
        f"last row\n- {files['sample']} - a sample submission in the correct format\n"
    )
    windows = [f"window {k}" for k in range(n_train)]  # by position: setup's windows are cut in the signal's order
    means = [r.mean() for r in readings[:n_train]]
    truth = Truth(
        seed,
        "regression",
        transforms,
        files,
        windows,
        list(map(str, ids)),
        dict(zip(windows, frame["target"].to_numpy()[:n_train].tolist())),
        {base: {w: float(m[col]) for w, m in zip(windows, means)} for base, col in (("x1", a), ("x2", b))},
        metric=["mae"],
    )
    (private / "truth.json").write_text(json.dumps(asdict(truth), default=str))
    return truth


def _places(dest: Path, transforms: list[str]) -> tuple[Path, Path, Path, str]:
    """(public, private, the folder the tables go to, its prefix in the truth's file names): data/ with subfolder."""
    public, private = dest / "public", dest / "private"
    sub = "subfolder" in transforms
    return public, private, public / "data" if sub else public, "data/" if sub else ""


def _refused(seed: int, dest: Path, transforms: list[str], refusal: str) -> Truth:
    """A layout of a task agentk does not do (refuse:<kind>), written with the names, ids and table format drawn;
    its truth records the kind setup must name in its refusal."""
    rng = np.random.default_rng(120_000 + seed)
    odd = "columns:odd" in transforms
    names = _names(rng, transforms)
    fmt = next((t for t in transforms if t in FORMATS), None)
    public, private, tables, here = _places(dest, transforms)
    public.mkdir(parents=True)
    private.mkdir(parents=True)
    id_col = _column(rng, "record_key" if "ids:named" in transforms else "id", odd)
    files: dict[str, str] = {}
    write = lambda frame, stem: here + _write(frame, tables, stem, fmt)  # noqa: E731
    train_ids: list[str] = []
    test_ids: list[str] = []
    if refusal == "recommendation":  # orders of users, the products of the train orders; each test order's products
        ids = _ids(rng, 120, transforms)
        item, user = _column(rng, "product_id", odd), _column(rng, "user", odd)
        items = [str(v) for v in rng.choice(np.arange(100, 10_000), size=80, replace=False)]
        catalogue = pd.DataFrame(
            {item: items, _column(rng, "name", odd): [f"{_word(rng)} {k}" for k in range(80)],
             _column(rng, "aisle", odd): rng.integers(1, 9, size=80)}
        )  # fmt: skip
        orders = pd.DataFrame(
            {id_col: ids, user: rng.integers(1, 30, size=120), _column(rng, "weekday", odd): rng.integers(0, 7, 120)}
        )
        train_ids, test_ids = ids[:90], ids[90:]
        basket = {i: list(rng.choice(items, size=int(rng.integers(2, 7)), replace=False)) for i in ids}
        lines = pd.DataFrame(
            [(i, it, k + 1) for i in train_ids for k, it in enumerate(basket[i])],
            columns=[id_col, item, _column(rng, "cart_position", odd)],
        )
        files["catalogue"] = write(catalogue.sample(frac=1, random_state=seed), names["side"])
        files["orders"] = write(orders, names["test"])
        files["train"] = write(lines, names["train"])
        predicted = _column(rng, "products", odd)
        sample = pd.DataFrame({id_col: test_ids, predicted: " ".join(items[:2])})
        answers = pd.DataFrame({id_col: test_ids, predicted: [" ".join(basket[i]) for i in test_ids]})
        metric = f"Submissions are evaluated on the mean F1 score of each order's space-delimited `{predicted}`."
    elif refusal == "span extraction":  # where each feature is said in a note: character ranges, start and end
        fill = ["patient", "reports", "denies", "since", "yesterday", "mild", "severe", "pain", "with", "and", "no"]
        phrases = ["chest pain", "short of breath", "fever", "nausea", "headache", "weight loss"]
        note_key, feature = _column(rng, "note_num", odd), _column(rng, "feature", odd)
        notes = {}
        for k in range(40):
            words = [str(w) for w in rng.choice(fill, size=int(rng.integers(12, 20)))]
            for ph in rng.choice(phrases, size=3, replace=False):
                words.insert(int(rng.integers(0, len(words))), str(ph))
            notes[1000 + k] = " ".join(words) + f". Visit {k}."
        rows = []
        ids = iter(_ids(rng, 40 * len(phrases), transforms))
        joined = bool(rng.integers(2))  # ranges joined by ";", else a list of "start end" strings
        for num, text in notes.items():
            for ph in phrases:
                at = [m.start() for m in re.finditer(re.escape(ph), text)]
                spans = [f"{a} {a + len(ph)}" for a in at]
                rows.append((next(ids), num, ph, ";".join(spans) if joined else str(spans)))
        frame = pd.DataFrame(rows, columns=[id_col, note_key, feature, _column(rng, "location", odd)])
        location = frame.columns[-1]
        n_train = int(len(frame) * 0.75)
        train, test = frame.iloc[:n_train], frame.iloc[n_train:]
        train_ids, test_ids = list(map(str, train[id_col])), list(map(str, test[id_col]))
        text_col = _column(rng, "history", odd)
        files["notes"] = write(pd.DataFrame({note_key: list(notes), text_col: list(notes.values())}), names["side"])
        files["train"] = write(train, names["train"])
        files["test"] = write(test.drop(columns=[location]), names["test"])
        sample = pd.DataFrame({id_col: test[id_col], location: ""})
        answers = test[[id_col, location]]
        metric = "Submissions are evaluated on the micro-averaged F1 score of the predicted character spans."
    elif refusal == "optimisation":  # each family's preferred days; the sample assigns each a day
        ids = _ids(rng, 200, transforms)
        choices = {_column(rng, f"choice_{j}", odd): rng.integers(1, 31, size=200) for j in range(5)}
        people = _column(rng, "n_people", odd)
        entities = pd.DataFrame({id_col: ids, **choices, people: rng.integers(2, 9, size=200)})
        files["entities"] = write(entities, names["side"])
        slot = _column(rng, "assigned_day", odd)
        first = list(choices.values())[0]
        sample = pd.DataFrame({id_col: ids, slot: first})
        answers = sample  # any assignment is scored by its cost: no answers
        test_ids = list(map(str, ids))
        metric = (
            f"Submissions are scored on the total cost of the assignment: a cost for each {id_col} not given its "
            "first choice, and a penalty for days over capacity."
        )
    elif refusal == "simulation":  # no data: an agent program is what is submitted
        agent = _word(rng)
        if rng.integers(2):
            code = (
                "import random\n\n\ndef act(observation, configuration):\n"
                "    return random.choice(range(configuration.columns))\n"
            )
            files["program"] = f"{here}{agent}_bot.py"
            (tables).mkdir(parents=True, exist_ok=True)
            (tables / f"{agent}_bot.py").write_text(code)
        else:
            nb = {
                "cells": [
                    {"cell_type": "markdown", "metadata": {}, "source": ["# A starter agent"]},
                    {"cell_type": "code", "metadata": {}, "source": ["!pip install env\n", "def policy(obs):\n",
                                                                     "    return 0\n"]},
                ],
                "metadata": {},
                "nbformat": 4,
                "nbformat_minor": 4,
            }  # fmt: skip
            tables.mkdir(parents=True, exist_ok=True)
            (tables / f"{agent}-starter.ipynb").write_text(json.dumps(nb))
            files["program"] = f"{here}{agent}-starter.ipynb"
        sample = answers = None
        metric = "Agents play episodes against each other; each is rated by its skill after many games."
    else:  # retrieval: each query's ids of the gallery items most alike, ranked
        n_gallery, n_query, n_train = 90, 30, 60
        ids = _ids(rng, n_gallery + n_query + n_train, transforms)
        gallery, queries, trained = ids[:n_gallery], ids[n_gallery : n_gallery + n_query], ids[n_gallery + n_query :]
        test_ids, train_ids = queries, trained
        predicted = _column(rng, "images", odd)
        place = _column(rng, "landmark", odd)
        folders = bool(rng.integers(2))  # the items are pictures in folders, else rows of tables
        if folders:
            from PIL import Image

            for name, group in (("index", gallery), ("queries", queries), ("training", trained)):
                folder = tables / f"{_word(rng)}_{name}"
                folder.mkdir(parents=True, exist_ok=True)
                for i in group:
                    Image.fromarray(rng.integers(0, 255, size=(8, 8), dtype=np.uint8), "L").save(folder / f"{i}.png")
                files[name] = f"{here}{folder.name}/"
            files["train"] = write(pd.DataFrame({id_col: trained, place: rng.integers(0, 9, n_train)}), names["train"])
        else:
            url, colour = _column(rng, "url", odd), _column(rng, "colour", odd)
            items = lambda group: pd.DataFrame(  # noqa: E731
                {id_col: group, url: [f"https://img.example/{i}.jpg" for i in group],
                 colour: rng.choice(["red", "green", "blue"], size=len(group))}
            )  # fmt: skip
            files["index"] = write(items(gallery), names["side"])
            files["test"] = write(items(queries), names["test"])
            files["train"] = write(items(trained).assign(**{place: rng.integers(0, 9, n_train)}), names["train"])
        sample = pd.DataFrame({id_col: queries, predicted: " ".join(gallery[:5])})
        answers = pd.DataFrame({id_col: queries, predicted: [" ".join(rng.choice(gallery, 5)) for _ in queries]})
        metric = "Submissions are evaluated on the mean average precision @ 100 (mAP@100) of each query's ranked ids."
    if sample is not None:
        sample.to_csv(public / f"{names['sample']}.csv", index=False)
        files["sample"] = f"{names['sample']}.csv"
        answers.to_csv(private / "answers.csv", index=False)
    listing = "\n".join(f"- {f} - the {role} data" for role, f in files.items())
    (public / "description.md").write_text(
        f"# Synthetic competition {seed}\n\n## Description\n\nA task of another kind.\n\n## Evaluation\n\n{metric}"
        f"\n\n## Data\n\n{listing}\n"
    )
    truth = Truth(seed, "refusal", transforms, files, train_ids, list(map(str, test_ids)), {}, {}, [], refusal)
    (private / "truth.json").write_text(json.dumps(asdict(truth), default=str))
    return truth


_CWD = threading.Lock()  # the working folder is the process's: judges in threads take turns


# ---- the judge ---------------------------------------------------------------------------------------------
def _same(a: pd.Series, b: pd.Series) -> bool:
    """Two columns carry the same information: equal numbers, or a one-to-one map between values."""
    a, b = a.reset_index(drop=True), b.reset_index(drop=True)
    if a.isna().any() or b.isna().any():
        return False
    na, nb = to_numeric(a, errors="coerce"), to_numeric(b, errors="coerce")
    if na.notna().all() and nb.notna().all():  # numbers are the same numbers
        return bool(np.allclose(na.astype(float), nb.astype(float), atol=1e-6))
    pairs = pd.DataFrame({"a": a.astype(str), "b": b.astype(str)}).drop_duplicates()
    return pairs["a"].is_unique and pairs["b"].is_unique and len(pairs) > 1


def _label_set(value) -> frozenset[str]:
    """A set of labels as written in one cell ("low vivid", "low,busy", "mid|vivid")."""
    return frozenset(t for t in re.split(r"[\s,|]+", str(value)) if t)


def same_picture(paths: pd.Series, levels: pd.Series, ws: Path) -> bool:
    """A map column of paths (from the workspace) to each sample's own picture: its mean grey level is the truth's."""
    from PIL import Image

    for cell, level in zip(paths, levels):
        try:
            with Image.open(ws / str(cell)) as img:
                if abs(float(np.asarray(img.convert("L")).mean()) - level) > 1.0:
                    return False
        except (OSError, ValueError):  # not a path to a picture
            return False
    return True


def same_views(paths: pd.Series, levels: pd.Series, ws: Path) -> bool:
    """A map column of each sample's several pictures, read as one (tools.image_files, as the models read it): its
    mean grey level rises with the truth's, the mean of the views' (rank correlation 0.99 or more; any one view's
    level is off by up to 50 and correlates far less)."""
    from tools.modality_img import ImageTransform

    read = ImageTransform(ws, size=24, map_name="the judged map")
    try:
        means = [float(read.pixels(cell).mean()) for cell in paths]
    except (OSError, ValueError):  # not paths to pictures
        return False
    return bool(pd.Series(means).corr(levels.reset_index(drop=True), method="spearman") >= 0.99)


def same_pitch(paths: pd.Series, pitches: pd.Series, ws: Path) -> bool:
    """A map column of paths to each sample's sound, as the spectrogram picture agentk makes of a clip: its loudest
    mel band rises with the clip's pitch (rank correlation 0.95 or more; another sample's picture breaks it)."""
    from PIL import Image

    bands = []
    for cell in paths:
        try:
            with Image.open(ws / str(cell)) as img:
                rows = np.asarray(img.convert("L"), dtype=float).mean(axis=1)
        except (OSError, ValueError):  # not a path to a picture
            return False
        bands.append(-int(rows.argmax()))  # the highest band is the top row
    return bool(pd.Series(bands).corr(pitches.reset_index(drop=True), method="spearman") >= 0.95)


def judge(ws: Path, dest: Path, rc: int | None = 0, stderr: str = "") -> list[str]:
    """What the setup in `ws` got wrong about layout `dest` (empty: it recovered the truth). `rc` and `stderr`:
    how setup ended; a layout of a task agentk does not do passes only when setup refused it (exit 2) naming its
    kind, every other one is judged on its finished workspace."""
    from agentk.workspace import Workspace

    t = json.loads((dest / "private" / "truth.json").read_text())
    if t.get("refusal"):
        said = next((line for line in reversed(stderr.strip().splitlines()) if line.startswith("agentk:")), "")
        if rc == 2 and said.startswith(f"agentk: unsupported task: {t['refusal']} ("):
            return []
        return [f"expected a refusal as {t['refusal']} (exit 2), got exit {rc}: {said[:200] or 'no message'}"]
    w = Workspace(ws)
    problems = []
    target_map = pd.read_csv(ws / "train_tab_target_map.csv", dtype={"id": str})
    by_position = "signal:long" in t["transforms"]  # setup names its windows: the truth's are in the same order
    renamed = (
        dict(zip(target_map["id"], t["train_ids"])) if by_position and len(target_map) == len(t["train_ids"]) else {}
    )
    target_map["id"] = target_map["id"].map(renamed) if renamed else target_map["id"]
    if set(target_map["id"]) != set(t["train_ids"]):
        problems.append(f"target map ids: {len(set(target_map['id']) & set(t['train_ids']))} of {len(t['train_ids'])}")
        return problems
    target_map = target_map.set_index("id").loc[t["train_ids"]]
    truth_target = pd.Series([t["target"][i] for i in t["train_ids"]])
    target_col = next((c for c in target_map.columns if _same(target_map[c], truth_target)), None)
    if target_col is None and t["kind"] == "multilabel":  # the sets as one 0/1 column per label
        sets = truth_target.map(_label_set)
        held = {c: sets.map(lambda s, c=c: int(c in s)) for c in t["classes"]}
        found = {c: next((m for m in target_map.columns if _same(target_map[m], held[c])), None) for c in held}
        target_col = found if all(found.values()) else None
    if target_col is None:
        problems.append(f"no target map column equals the target (columns {list(target_map.columns)})")
    more = {}  # a second target: the target map's column -> the answers' (the sample's name, train's too)
    for name, values in t.get("more_targets", {}).items():
        want = pd.Series([values[i] for i in t["train_ids"]])
        found = next((c for c in target_map.columns if c != target_col and _same(target_map[c], want)), None)
        if found is None:
            problems.append(f"target {name} reaches no target map column")
        more[found] = name
    frame = _maps(ws, "train").rename(index=renamed).reindex(t["train_ids"])
    tests = _maps(ws, "test")
    test_ids = [str(i) for i in tests.index]
    for path in sorted(ws.glob("test_*_input_map.csv")) or [ws / "test_*_input_map.csv"]:
        ids = pd.read_csv(path, dtype={"id": str}, usecols=["id"])["id"] if path.exists() else pd.Series([])
        if sorted(ids) != sorted(t["test_ids"]):  # setup's test rows are the scored ones, each once, in every map
            problems.append(f"test map ids ({path.name}): {len(set(ids) & set(t['test_ids']))} of {len(t['test_ids'])}")
    test_features = t.get("test_features", {}) if not problems else {}
    for name, values in t["features"].items():
        want = pd.Series([values[i] for i in t["train_ids"]])
        same = {"image": same_picture, "views": same_views, "sound": same_pitch}.get(name)
        carried = [c for c in frame.columns if _carries(frame[c], want, same, ws)]
        if not carried:
            problems.append(f"input {name} reaches no input map column")
        elif name in test_features:  # the same column of the test maps, read alike (one coding for both splits)
            held = pd.Series([test_features[name][i] for i in test_ids])
            if not any(c in tests.columns and _alike(frame[c], tests[c], want, held, same, ws) for c in carried):
                problems.append(f"input {name} reaches the train maps ({carried[0]}) but not the test maps alike")
    if t.get("metric"):
        found = re.search(r"^METRIC = ['\"](\w+)['\"]", (ws / "code_metric.py").read_text(), re.M)
        if found is None or found.group(1) not in t["metric"]:
            problems.append(f"metric {found and found.group(1)!r}, not {' or '.join(map(repr, t['metric']))}")
    if target_col is not None and not problems:
        # the target map may write the classes otherwise (as the sample's column names): test labels alike
        encode = (
            {}
            if isinstance(target_col, dict)
            else {
                **{v: v for v in target_map[target_col].astype(str)},  # the answers spelt as the map spells them
                **dict(zip(truth_target.astype(str), target_map[target_col].astype(str))),
            }
        )
        problems += _round_trip(w, dest, t, target_col, encode, test_ids, more)
    return problems


def _maps(ws: Path, split: str) -> pd.DataFrame:
    """A split's input maps side by side, by id (empty where setup wrote none)."""
    maps = [pd.read_csv(p, dtype={"id": str}).set_index("id") for p in sorted(ws.glob(f"{split}_*_input_map.csv"))]
    return pd.concat(maps, axis=1) if maps else pd.DataFrame(index=pd.Index([], name="id"))


def _alike(train: pd.Series, test: pd.Series, want: pd.Series, held: pd.Series, same, ws: Path) -> bool:
    """The test map's column carries the test rows' values as the train map's carries the train rows': files
    judged each alone, values over both splits at once (so that a category is coded alike in both)."""
    if same is not None:
        return _carries(test, held, same, ws)
    both = lambda *parts: pd.concat(parts, ignore_index=True)  # noqa: E731
    return _carries(both(train, test), both(want, held), None, ws)


def _carries(column: pd.Series, want: pd.Series, same, ws: Path) -> bool:
    """A map column holds the truth's values of one input, row for row: `same` judges file paths (pictures, sounds);
    else the same numbers or one-to-one values, missing where the truth is missing (a side table's missing rows)."""
    column, want = column.reset_index(drop=True), want.reset_index(drop=True)
    if same is not None:
        return same(column, want, ws)
    held = want.notna().to_numpy()
    return _same(column[held], want[held]) and column[~held].isna().all()


def _round_trip(
    w, dest: Path, t: dict, target_col: str, encode: dict, test_ids: list[str], more: dict | None = None
) -> list[str]:
    """A perfect prediction of setup's own test rows (`test_ids`, in its test maps' order), through the target
    transform and the formatter, is the answers."""
    from agentk.workspace import TARGET_TRANSFORM
    from tools.submission import format_with_fallback

    answers = pd.read_csv(dest / "private" / "answers.csv", dtype=str)
    id_col = answers.columns[0]
    test_ids = pd.Series(test_ids)
    truth = answers.set_index(id_col)
    if t["kind"] == "multilabel":  # the sets, as train writes them (apart by a space, a comma or a bar)
        between = next((b for b in (",", "|") if any(b in str(v) for v in t["target"].values())), " ")
        if len(answers.columns) > 2:  # one 0/1 column per label: the set of those holding 1
            of = {col: str(c) for c in t["classes"] for col in truth.columns if col == c or col.endswith(f"_{c}")}
            labels = truth.astype(int).apply(lambda r: between.join(of[c] for c in truth.columns if r[c]), axis=1)
        else:
            labels = truth.iloc[:, 0]
    elif t["kind"] != "regression" and len(answers.columns) > 2:  # probabilities: the label is the hot column
        of = {col: str(c) for c in t["classes"] for col in truth.columns if col.endswith(f"_{c}")}
        labels = truth.astype(float).idxmax(axis=1).map(of)
    else:
        labels = truth.iloc[:, 0]
    labels = labels.reindex(test_ids).to_numpy()
    if isinstance(target_col, dict):  # label -> its 0/1 column of the target map
        sets = pd.Series(labels).map(_label_set)
        frame = pd.DataFrame(
            {"id": test_ids, **{m: sets.map(lambda s, c=c: int(c in s)) for c, m in target_col.items()}}
        )
    else:
        frame = pd.DataFrame({"id": test_ids, target_col: labels})
    if isinstance(target_col, dict) or t["kind"] == "multilabel":
        pass  # the sets as they are
    elif t["kind"] == "regression":
        frame[target_col] = frame[target_col].astype(float)
        for col, name in (more or {}).items():  # a second target: its answers as they are
            frame[col] = truth[name].reindex(test_ids).astype(float).to_numpy()
    else:
        frame[target_col] = frame[target_col].astype(str).map(encode)
    try:
        with _CWD, contextlib.chdir(w.root):  # generated code reads workspace-relative paths (one judge at a time)
            transform = w.load(TARGET_TRANSFORM)
            _, sub = format_with_fallback(w.root, test_ids, transform.inverse_transform(transform.transform(frame)))
    except Exception as exc:  # noqa: BLE001 - generated code: any failure is the finding
        return [f"a perfect prediction does not format: {str(exc)[:200]}"]
    sub = sub.astype(str).set_index(sub.columns[0]).reindex(truth.index)
    if t["kind"] not in ("regression", "multilabel") and len(truth.columns) > 1 and set(truth.columns) <= set(sub):
        # class probabilities: a class no train row has keeps its share of every row (1/classes), so the perfect
        # prediction is each row's class as the likeliest, and rows that still sum to 1
        got, want = (f[list(truth.columns)].apply(to_numeric, errors="coerce") for f in (sub, truth))
        if got.isna().any().any() or not np.allclose(got.sum(axis=1), 1, atol=0.02):
            return ["a perfect prediction formats to probabilities that do not sum to 1"]
        if not (got.idxmax(axis=1) == want.idxmax(axis=1)).all():
            return ["a perfect prediction formats to another likeliest class"]
        return []
    for c in truth.columns:
        if c not in sub.columns:
            return [f"the submission lacks {c}"]
        got, want = to_numeric(sub[c], errors="coerce"), to_numeric(truth[c], errors="coerce")
        if want.notna().all():
            if not np.allclose(got.astype(float), want.astype(float), atol=0.02):
                return [f"a perfect prediction formats to other values in {c}"]
        elif t["kind"] == "multilabel":
            if not (sub[c].map(_label_set) == truth[c].map(_label_set)).all():
                return [f"a perfect prediction formats to other label sets in {c}"]
        elif not ((sub[c].str.split().str[0] if "sample:ranked" in t["transforms"] else sub[c]) == truth[c]).all():
            return [f"a perfect prediction formats to other labels in {c}"]  # ranked: the truth first
    return []
