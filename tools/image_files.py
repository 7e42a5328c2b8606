"""Reading image files: whatever Pillow opens, and DICOM scans through pydicom. The one place that knows how an
image file is read: decoding (tools/modality_img.py), the sizes the classical candidate and the tiny CNN read from
headers (tools/classical_img.py), and the image map's unit test (unit_tests_lib/media.py) all come here."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from agentk.modalities import DICOM_EXT, PATHS_SEP


def cell_paths(ws: Path, cell) -> list[Path]:
    """The files of an image map's cell (relative to the workspace, or absolute): one, or a sample's several joined
    by PATHS_SEP."""
    return [Path(ws) / part for part in str(cell).split(PATHS_SEP)]


def grid(k: int) -> tuple[int, int]:
    """(columns, rows) of a mosaic of k views: as square as it gets, filled row by row."""
    cols = int(np.ceil(np.sqrt(k)))
    return cols, -(-k // cols)


def mosaic(views: list):
    """One RGB picture of a sample's several (RGB PIL) views: each at the first one's size, in a grid, row by row;
    unfilled places black."""
    from PIL import Image

    (w, h), (cols, rows) = views[0].size, grid(len(views))
    out = Image.new("RGB", (cols * w, rows * h))
    for k, view in enumerate(views):
        out.paste(
            view if view.size == (w, h) else view.resize((w, h), Image.BILINEAR), ((k % cols) * w, (k // cols) * h)
        )
    return out


def open_image(path: Path):
    """The image in a file as a PIL image (use it in a `with`): Pillow's own for its formats; for a DICOM scan its
    pixels as stored are mapped to what they measure (rescale slope and intercept), then through the scan's own
    display window when it has one, inverted where low values are white (MONOCHROME1): a float image ('F'),
    which to_rgb stretches to 0..255. Of a multi-frame scan, the middle frame. Unreadable files raise OSError or
    ValueError."""
    from PIL import Image

    if Path(path).suffix.lower() not in DICOM_EXT:
        return Image.open(path)
    ds = _read_dicom(path)
    try:
        pixels = ds.pixel_array
    except (AttributeError, KeyError, RuntimeError) as exc:  # no pixels, or no decoder for its encoding
        raise ValueError(f"its pixel data does not decode ({exc})") from exc
    frames = int(ds.get("NumberOfFrames", 1) or 1)
    if frames > 1:
        pixels = pixels[frames // 2]
    from pydicom.pixels import apply_color_lut, apply_modality_lut, apply_voi_lut

    if ds.get("PhotometricInterpretation") == "PALETTE COLOR":  # indices into the scan's colour table
        pixels = apply_color_lut(pixels, ds)
    if pixels.ndim == 3:  # colour: pydicom gives RGB, of 8 bits or more
        pixels = pixels >> max(0, int(pixels.max()).bit_length() - 8) if pixels.dtype.kind in "ui" else pixels
        return Image.fromarray(np.ascontiguousarray(pixels).astype(np.uint8), "RGB")
    values = apply_voi_lut(apply_modality_lut(pixels, ds), ds).astype(np.float32)
    if ds.get("PhotometricInterpretation") == "MONOCHROME1":
        values = values.max() - values
    return Image.fromarray(values, "F")


def cell_size(ws: Path, cell) -> tuple[int, int]:
    """(width, height) of the picture an image map's cell gives (a mosaic's for several files), from headers only."""
    paths = cell_paths(ws, cell)
    (w, h), (cols, rows) = image_size(paths[0]), grid(len(paths))
    return cols * w, rows * h


def image_size(path: Path) -> tuple[int, int]:
    """(width, height) of the image in a file, from its header only. Unreadable files raise OSError or ValueError."""
    if Path(path).suffix.lower() in DICOM_EXT:
        ds = _read_dicom(path, header_only=True)
        return int(ds.Columns), int(ds.Rows)
    from PIL import Image

    with Image.open(path) as img:
        return img.size


def _read_dicom(path: Path, header_only: bool = False):
    import pydicom
    from pydicom.errors import InvalidDicomError

    try:
        ds = pydicom.dcmread(path, stop_before_pixels=header_only)
    except InvalidDicomError as exc:
        raise ValueError(f"not a DICOM file ({exc})") from exc
    if "Rows" not in ds or "Columns" not in ds:
        raise ValueError("a DICOM file without an image (no Rows and Columns)")
    return ds
