"""The modality registry: one entry per input modality agentk handles. Adding a modality means an entry
here, a map stage under stages/ (make(split) -> the split's input-map Stage, role ROLE_INPUT_MAP[split]),
its checks in unit_tests_lib/ and its model pieces under tools/ (see docs/architecture.md, "Adding a
modality"). Everything else reads the registry when it runs: the setup pipeline's map stages, the
modalities stage's prompt and schema, per-sample file discovery, the expert's analysis."""

from __future__ import annotations

import importlib
from dataclasses import dataclass

DICOM_EXT = (".dcm", ".dicom")  # scans, read through pydicom (tools/image_files.py)
# between the paths of one sample's several image files (its views, channels or frames) in an image map's cell: the
# sample is read as one picture, a mosaic of them (tools/image_files.py)
PATHS_SEP = "|"
IMAGE_EXT = (".jpg", ".jpeg", ".png", ".tif", ".tiff", ".bmp", ".gif", ".webp", *DICOM_EXT)
TEXT_EXT = (".txt",)


@dataclass(frozen=True)
class Modality:
    name: str  # the key in modalities.json and in the input maps' file names
    title: str  # for people and prompts
    hint: str  # how to recognise it in a competition folder (a prompt piece)
    extensions: tuple[str, ...]  # per-sample files of this modality; () for table columns
    map_stage: str  # module under stages/ whose make(split) builds the split's input-map stage
    model: str  # module under tools/ with its map-dataset transform and network pieces

    def stage_module(self):
        return importlib.import_module(self.map_stage)

    def input_map(self, split: str):
        """The stage building this modality's input map of a split (its map module's make(split))."""
        return self.stage_module().make(split)

    def model_module(self):
        """Imported on use: torch-heavy model code never loads for a workspace that does not need it."""
        return importlib.import_module(self.model)


TABULAR = Modality("tab", "tabular", "tabular columns", (), "stages.tab_input_map", "tools.modality_tab")
IMAGE = Modality("img", "image", "image files", IMAGE_EXT, "stages.img_input_map", "tools.modality_img")
TEXT = Modality(
    "txt", "text", "long free-text columns or text files", TEXT_EXT, "stages.txt_input_map", "tools.modality_txt"
)

MODALITIES: dict[str, Modality] = {m.name: m for m in (TABULAR, IMAGE, TEXT)}
NAMES: tuple[str, ...] = tuple(MODALITIES)
TARGET = TABULAR.name  # targets are table columns (the target map), whatever the inputs


def file_extensions() -> dict[str, tuple[str, ...]]:
    """The modalities whose samples are files (one per sample), with those files' extensions. Read from the
    registry on each call, like every loop over it, so that an entry added at run time takes part."""
    return {m.name: m.extensions for m in MODALITIES.values() if m.extensions}
