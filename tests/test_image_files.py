"""tools/image_files.py on real DICOM files: the scans that ship with pydicom, written by scanners and toolkits."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pydicom
import pytest

from tools.image_files import image_size, open_image
from tools.modality_img import to_rgb

SCANS = Path(pydicom.__file__).parent / "data" / "test_files"


def pixels(name: str) -> np.ndarray:
    with open_image(SCANS / name) as img:
        return np.asarray(to_rgb(img))


def test_one_mr_scan_stored_four_ways_decodes_to_the_same_picture():
    plain = pixels("MR_small.dcm")  # 16-bit, uncompressed
    assert plain.shape == (64, 64, 3) and plain.min() == 0 and plain.max() == 255 and plain.std() > 30
    for name in ("MR_small_RLE.dcm", "MR_small_jp2klossless.dcm", "MR_small_jpeg_ls_lossless.dcm"):
        np.testing.assert_array_equal(pixels(name), plain, err_msg=name)
    assert image_size(SCANS / "MR_small_jpeg_ls_lossless.dcm") == (64, 64)


def test_colour_scans_decode_in_colour():
    palette = pixels("examples_palette.dcm")  # indices into the scan's colour table
    assert palette.shape == (350, 800, 3)
    assert np.abs(palette[..., 0].astype(int) - palette[..., 2]).mean() > 5  # not grey
    rgb, ybr = pixels("SC_rgb_rle.dcm"), pixels("SC_rgb_dcmtk_+eb+cy+n1.dcm")  # the same picture, RGB and YBR JPEG
    assert np.abs(rgb.astype(int) - ybr).mean() < 3
    two_frames = pixels("SC_rgb_rle_16bit_2frame.dcm")  # 16 bits per channel, the middle (second) frame
    assert two_frames.shape == (100, 100, 3) and two_frames.max() > 200


def test_a_file_that_is_no_scan_says_so(tmp_path):
    (tmp_path / "x.dcm").write_bytes(b"\0" * 300)
    with pytest.raises(ValueError, match="not a DICOM file"):
        open_image(tmp_path / "x.dcm")
    with pytest.raises(ValueError, match="not a DICOM file"):
        image_size(tmp_path / "x.dcm")
    with pytest.raises(ValueError, match="pixel data"):  # cut short: the header reads, the pixels do not
        open_image(SCANS / "MR_truncated.dcm")
