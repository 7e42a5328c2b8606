"""Tables of pixels beside the train and test tables, a row per image keyed by their key column (image_id, then
one column per pixel; in parquet parts, as Kaggle ships big ones): every row a PNG `<name>_images/<key>.png`,
the name the tables' own less any part number, where the image map finds it by the key; the tables stand aside
(stand_ins.json), so that their pixels are never joined as features. What was written, one line per name."""

from pathlib import Path

from agentk.competition import written
from agentk.competition.readers import read_table
from agentk.competition.series import pixel_columns, pixels_to_images
from agentk.competition.tables import PART, candidates, find, stem
from agentk.core.errors import BadInput


def pixel_tables_as_images(root: Path) -> list[str]:
    """The conversion on the folder `root`; what was written, one line each."""
    root = Path(root)
    paths = find(root).paths
    splits = [read_table(paths[r], dtype=str) for r in ("train", "test") if r in paths]
    if not splits:
        return []
    keys: dict[str, set] = {}
    for t in splits:
        for c in t.columns:
            if t[c].notna().all() and t[c].is_unique:
                keys.setdefault(c, set()).update(t[c])
    replaced, groups = written.stand_ins(root), {}
    for p in candidates(root):
        if p in paths.values() or p.relative_to(root).as_posix() in replaced:
            continue
        try:
            head = read_table(p, nrows=50)
        except BadInput:  # a table that does not read is the input checks' to report
            continue
        key = next((c for c in head.columns if c in keys and set(head[c].astype(str)) <= keys[c]), None)
        if key is not None and pixel_columns(head.drop(columns=key)) is not None:
            groups.setdefault((PART.sub("", stem(p)), key), []).append(p)
    done = []
    for (name, key), parts in groups.items():
        dest = root / f"{name}_images"
        if not dest.exists():  # written whole, then recorded: a resumed fetch finds one or the other
            tmp = root / f".{dest.name}.partial"
            for p in parts:
                pixels_to_images(read_table(p).astype({key: str}), key, tmp)
            tmp.replace(dest)
        written.record_stand_in(root, parts, f"{dest.name}/")
        done.append(
            f"{dest.name}/: the pixel rows of {', '.join(p.name for p in parts)} as one PNG per {key!r}; "
            "the tables set aside"
        )
    return done
