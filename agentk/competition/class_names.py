"""The sample's columns that name the label's classes with an affix every column shares ("class_0", "class_1" for a
label of 0 and 1; "Pclass_A"): the one probability column per class a multi-class sample submits."""

from __future__ import annotations

import os


def class_columns(values: set[str], columns: list[str]) -> dict[str, str] | None:
    """The probability column of each class when the sample's columns name the label's values with a common prefix
    or suffix ("class_0", "class_1" for a label of 0 and 1; "Pclass_A"): value -> column, or None. The affixes
    are what every column shares; the values must each match one column's rest, letter case aside."""
    if len(columns) < 2 or not values:
        return None
    prefix = len(os.path.commonprefix(columns))
    suffix = len(os.path.commonprefix([c[::-1] for c in columns]))
    rests = {c[prefix : len(c) - suffix].lower(): c for c in columns if len(c) > prefix + suffix}
    if len(rests) != len(columns):
        return None
    named = {v: rests.get(v.lower()) for v in sorted(values)}  # a set: its order varies with the process
    return named if all(named.values()) else None


def shared_name(columns: list[str]) -> str | None:
    """The name the sample's probability columns share ("outcome_low", "outcome_mid" -> "outcome"): the label's
    own name in the table that holds it; None where they share fewer than three letters."""
    if len(columns) < 2:
        return None
    prefix = os.path.commonprefix([str(c) for c in columns]).rstrip("_-. ")
    return prefix if len(prefix) >= 3 else None
