"""Images kept in table cells written as PNGs: bands as number lists (JSON, parquet), or one column per pixel
(label, pixel0..pixel783), named by the row's id; the rest of the table as a CSV standing in for it."""

from pathlib import Path

from agentk.competition import written
from agentk.competition.readers import nested_as_text, read_table
from agentk.competition.series import bands_to_images, pixel_columns, pixels_to_images
from agentk.competition.tables import find, stem
from agentk.parsing import to_numeric

FLAT = "_without_pixels"  # <stem>_without_pixels.csv: written by normalise, it stands in for the table <stem>


def bands_as_images(root: Path) -> list[str]:
    """Tables whose cells hold image bands as number lists: the bands become PNGs, the rest a CSV."""
    done, paths = [], find(root).paths
    sample = read_table(paths["sample"], nrows=5, dtype=str) if "sample" in paths else None
    for role in ("train", "test"):
        path = find(root).paths.get(role)
        if path is None or sample is None or not path.name.lower().endswith((".json", ".jsonl", ".parquet")):
            continue
        dest = root / f"{stem(path)}.csv"
        if dest.exists():
            continue
        table = read_table(path, nested=True)
        id_col = sample.columns[0] if sample.columns[0] in table.columns else table.columns[0]
        flat = bands_to_images(table, id_col, root / f"{stem(path)}_images")
        if flat is not None:
            written.write_csv(nested_as_text(flat), dest)
            done.append(f"{dest.name}: {path.name} without its image bands, written as {stem(path)}_images/<id>.png")
    return done


def pixel_columns_as_images(root: Path) -> list[str]:
    """Tables whose columns are an image's pixels (label, pixel0..pixel783): the pixels become PNGs named by the
    row's id, or by its position where the sample's ids are the test rows' positions, the rest a CSV."""
    done, paths = [], find(root).paths
    if "sample" not in paths:
        return done
    sample = read_table(paths["sample"], dtype=str)
    id_col = sample.columns[0]
    ids = to_numeric(sample[id_col], errors="coerce")
    first = int(ids.iloc[0]) if ids.notna().all() and (ids.diff().iloc[1:] == 1).all() else None  # positions from
    for role in ("train", "test"):
        path = paths.get(role)
        if path is None or (dest := root / f"{stem(path)}{FLAT}.csv").exists():
            continue
        table = read_table(path)
        if pixel_columns(table) is None:
            continue
        if id_col not in table.columns:
            if first not in (0, 1) or (role == "test" and len(table) != len(sample)):
                continue  # no id names the test rows' images
            table.insert(0, id_col, range(first, first + len(table)))
        flat = pixels_to_images(table, id_col, root / f"{stem(path)}_images")
        written.stand_in(root, [path], flat, dest)
        done.append(f"{dest.name}: {path.name} without its pixel columns, written as {stem(path)}_images/<id>.png")
    return done
