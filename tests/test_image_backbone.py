"""Which image backbone the networks get: pretrained timm weights from a `--weights` folder (before the caches), and
without any weights offline the tiny CNN at its own small image side."""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pytest
import timm
import torch
from PIL import Image
from safetensors.torch import save_file

from agentk.api import run_solve
from agentk.core.errors import BadInput
from agentk.solve import solver
from tools import modality_img
from tools.fusion_config import FusionConfig
from tools.modality_img import ImageEmbedder, TinyCNN

NAME = "resnet18"


@pytest.fixture
def offline(monkeypatch):
    """No cached weights and no hub: only the --weights folder can give them."""
    monkeypatch.setattr(modality_img, "_cached_weights", lambda cfg: None)
    monkeypatch.setattr(modality_img, "_reachable", lambda timeout=3.0: False)
    monkeypatch.delenv(modality_img.WEIGHTS_ENV, raising=False)


@pytest.mark.parametrize("layout", ["resnet18.safetensors", "timm/resnet18.a1_in1k/model.safetensors", "resnet18.pth"])
def test_weights_in_the_folder_are_loaded(tmp_path, monkeypatch, offline, layout):
    torch.manual_seed(1)
    saved = timm.create_model(NAME, pretrained=False).state_dict()  # with its classifier, as published weights are
    path = tmp_path / layout
    path.parent.mkdir(parents=True, exist_ok=True)
    save_file(saved, path) if path.suffix == ".safetensors" else torch.save(saved, path)
    monkeypatch.setenv(modality_img.WEIGHTS_ENV, str(tmp_path))

    encoder = ImageEmbedder(NAME, pretrained=True)
    assert encoder.pretrained
    assert modality_img.image_encoder(NAME, True, [], tmp_path, 64) == (False, 64)  # the plan is told: the backbone
    assert str(path) in encoder.note
    loaded = encoder.backbone.state_dict()
    assert set(loaded) == set(saved) - {"fc.weight", "fc.bias"}  # the classifier is dropped: num_classes=0
    assert all(torch.equal(loaded[k], saved[k]) for k in loaded)


def test_without_weights_the_tiny_cnn_trains_and_the_plan_is_told_so(tmp_path, monkeypatch, offline):
    monkeypatch.setenv(modality_img.WEIGHTS_ENV, str(tmp_path))  # a folder without this model's weights
    encoder = ImageEmbedder(NAME, pretrained=True)
    assert isinstance(encoder.backbone, TinyCNN) and not encoder.pretrained and "tiny CNN" in encoder.note
    features = encoder(torch.randint(0, 256, (2, 40, 40, 3), dtype=torch.uint8))
    assert features.shape == (2, encoder.dim)
    Image.fromarray(np.zeros((96, 96, 3), np.uint8)).save(tmp_path / "a.png")
    assert modality_img.image_encoder(NAME, True, ["a.png"], tmp_path, 64) == (True, modality_img.TINY_SIDE)
    assert modality_img.image_encoder(NAME, False, ["a.png"], tmp_path, 64) == (False, 64)  # random resnet18 asked


@pytest.mark.parametrize(("size", "side"), [((20, 30), 32), ((28, 28), 32), ((40, 36), 40), ((256, 192), 48)])
def test_fusion_branch_decodes_at_the_tiny_cnns_side_for_the_images_size(tmp_path, offline, size, side):
    for i in range(3):
        Image.fromarray(np.full((*size, 3), 40 * i, np.uint8)).save(tmp_path / f"{i}.png")
    frame = pd.DataFrame({"path": [f"{i}.png" for i in range(3)]})
    branch = modality_img.fusion_branch(frame, tmp_path, FusionConfig(image_size=64), np.arange(2))
    assert tuple(branch.inputs.shape) == (3, side, side, 3)  # small images are not blown up to 48 px
    assert modality_img.tiny_side(frame["path"].tolist(), tmp_path) == side
    assert any("tiny CNN" in note for note in branch.notes)


def test_solve_refuses_a_weights_folder_that_does_not_exist(tmp_path):
    with pytest.raises(BadInput, match="--weights .* is not a folder"):
        run_solve(tmp_path, weights=tmp_path / "missing")


def test_the_solver_hands_the_weights_folder_to_the_image_modality(tmp_path, monkeypatch):
    monkeypatch.setenv(modality_img.WEIGHTS_ENV, "")  # restored after the test: main sets it for its process
    assert solver.main([str(tmp_path), "--weights", str(tmp_path)]) == 1  # no setup there: the solve fails
    assert os.environ[modality_img.WEIGHTS_ENV] == str(tmp_path.resolve())
