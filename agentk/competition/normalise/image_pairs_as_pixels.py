"""Input images paired with target images and a sample of one row per test pixel (agentk.competition.image_pairs):
the pixels written as the train and test tables, train's last as it marks the work done."""

from pathlib import Path

from agentk.competition import image_pairs, written
from agentk.competition.files import walk
from agentk.competition.readers import read_table
from agentk.competition.tables import find
from agentk.modalities import IMAGE


def image_pairs_as_pixels(root: Path) -> list[str]:
    """The conversion on the folder `root`; what was written, one line each."""
    root = Path(root)
    paths = find(root).paths
    if "sample" not in paths or "train" in paths or (root / image_pairs.TRAIN).exists():
        return []
    images = [p.relative_to(root).as_posix() for p in walk(root, 4) if p.suffix.lower() in IMAGE.extensions]
    if image_pairs.detect(root, images, read_table(paths["sample"], nrows=image_pairs.HEAD, dtype=str)) is None:
        return []
    sample = read_table(paths["sample"], dtype=str)
    rec = image_pairs.detect(root, images, sample)
    test = image_pairs.test_rows(root, rec, sample[rec["id"]])
    written.write_csv(test, root / image_pairs.TEST)
    train = image_pairs.train_rows(root, rec)
    written.write_csv(train, root / image_pairs.TRAIN)
    what = f"{len(image_pairs.FEATURES)} features of its neighbourhood"
    return [
        f"{image_pairs.TEST}: the {len(test)} pixels of {paths['sample'].name}, each by {what}",
        f"{image_pairs.TRAIN}: {len(train)} pixels of the {len(rec['pairs'])} train images paired with target images "
        f"(e.g. {rec['pairs'][0][0]} -> {rec['pairs'][0][1]}), each by {what} and its target value",
    ]
