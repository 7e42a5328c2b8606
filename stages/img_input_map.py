"""Train and test image input maps: first column "id", then "path", the sample's image file relative to
the workspace (raw/train/cat.0.jpg). Images are read later, by the map dataset."""

from __future__ import annotations

from agentk.core.engine import Action, Context, Stage, fill
from agentk.modalities import IMAGE
from agentk.policies.analysis import Analysis, CannotAnalyse
from agentk.workspace import ROLE_INPUT_MAP, input_map_stage, map_file
from stages.codegen import file_paths, listing_rows, map_checks, map_template, table_rows
from unit_tests_lib.media import check_image_map


def template(split: str) -> str:
    return map_template(
        map_file(input_map_stage(split, IMAGE.name)),
        f'one row per {split} sample, first column "id", then "path": its image file, relative to the workspace.',
    )


def expert(a: Analysis, ctx: Context, split: str) -> Action:
    src = a.file_source(split, IMAGE.name)
    if src is None:
        raise CannotAnalyse(f"no {split} image files were found for the samples")
    lines = (
        listing_rows(src) if src.column is None else table_rows(a, split, src.column) + [f"paths = {file_paths(src)}"]
    )
    lines += ['return pd.DataFrame({"id": ids.to_numpy(), "path": np.asarray(paths)})']
    return Action(code=fill(template(split), "\n".join(lines)))


def make(split: str) -> Stage:
    name = input_map_stage(split, IMAGE.name)
    output = map_file(name)
    return Stage(
        name,
        f"Write code that builds {output}: first column 'id' (as text, the same ids "
        f"as the other {split} maps), then 'path', each sample's image file relative to the workspace.",
        output=output,
        template=template(split),
        checks=map_checks(output, split, check_image_map),
        role=ROLE_INPUT_MAP[split],
        expert=lambda a, ctx: expert(a, ctx, split),
        hints="Image files may sit in class sub-folders, carry the label in their name, or be named by a "
        "table's id column (with or without extension). Test ids are the sample submission's.",
    )
