"""The output-head helpers every model shares (tools/heads.py): widths and losses per output kind, target
scaling that model space undoes, losses over known targets only, and target checks that say what is wrong."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch.nn import functional as F

from tools.heads import check_targets, head_loss, output_losses, target_scaling, to_model_space, width

OUTPUTS = [{"kind": "binary"}, {"kind": "multiclass", "n_classes": 3}, {"kind": "regression"}]


def test_width_and_loss_per_kind():
    assert [width(o) for o in OUTPUTS] == [1, 3, 1]
    assert output_losses(OUTPUTS) == ["bce", "ce", "mse"]
    assert output_losses(OUTPUTS, "MAE") == ["bce", "ce", "l1"]


def test_scaling_round_trips_through_model_space():
    rng = np.random.default_rng(0)
    y = np.column_stack([rng.integers(0, 2, 50), rng.integers(0, 3, 50), 1000 + 50 * rng.normal(size=50)])
    y[3, 2] = np.nan  # an unknown target leaves the statistics alone
    mean, scale = target_scaling(y, OUTPUTS)
    assert mean[:2].tolist() == [0, 0] and scale[:2].tolist() == [1, 1]  # classes stay codes
    known = y[np.isfinite(y[:, 2]), 2]
    assert (mean[2], scale[2]) == pytest.approx((known.mean(), known.std()))
    z = (y - mean) / scale
    assert np.nanstd(z[:, 2]) == pytest.approx(1)
    logits = [
        torch.zeros(50, 1),
        torch.tensor([[0.0, np.log(2), 0.0]] * 50),
        torch.tensor(z[:, 2:], dtype=torch.float64),
    ]
    space = to_model_space(logits, OUTPUTS, mean, scale)
    assert space.shape == (50, 5) and space.dtype == np.float64
    np.testing.assert_allclose(space[:, 0], 0.5)
    np.testing.assert_allclose(space[0, 1:4], [0.25, 0.5, 0.25])
    np.testing.assert_allclose(space[:, 4], y[:, 2])  # regression back in the targets' units
    constant = np.full((4, 1), 7.0)
    assert target_scaling(constant, OUTPUTS[2:]) == (pytest.approx([7.0]), pytest.approx([1.0]))  # no zero scale


def test_loss_counts_only_known_targets_and_follows_the_metric():
    y = torch.tensor([[1.0, 2.0, 0.5], [0.0, float("nan"), 1.5], [float("nan"), 0.0, float("nan")]])
    logits = [
        torch.tensor([[2.0], [-1.0], [9.0]]),
        torch.tensor([[0.1, 0.2, 3.0], [9.0, 0, 0], [1.0, 0.5, 0.0]]),
        torch.tensor([[0.0], [3.5], [9.0]]),
    ]
    expected = (
        F.binary_cross_entropy_with_logits(torch.tensor([2.0, -1.0]), torch.tensor([1.0, 0.0]))
        + F.cross_entropy(torch.tensor([[0.1, 0.2, 3.0], [1.0, 0.5, 0.0]]), torch.tensor([2, 0]))
        + F.mse_loss(torch.tensor([0.0, 3.5]), torch.tensor([0.5, 1.5]))
    )
    assert head_loss(logits, y, output_losses(OUTPUTS)).item() == pytest.approx(expected.item())
    l1 = head_loss(logits[2:], y[:, 2:], output_losses(OUTPUTS[2:], "mae"))
    assert l1.item() == pytest.approx((0.5 + 2.0) / 2)
    assert head_loss(logits[:1], torch.full((3, 1), float("nan")), ["bce"]) is None


@pytest.mark.parametrize(
    "column,outputs,message",
    [
        ([0, 1, 2], [{"kind": "binary"}], "output 0 is binary but its transformed targets are not all 0/1"),
        ([0, 1.5, 2], [{"kind": "multiclass", "n_classes": 3}], "multiclass with 3 classes .* class codes 0..2"),
        ([0, 1, 3], [{"kind": "multiclass", "n_classes": 3}], "multiclass with 3 classes"),
        ([0, 1, 1], [{"kind": "ordinal"}], "kind 'ordinal': use binary, multiclass or regression"),
        ([0, 1, 1], OUTPUTS, "the targets have 1 columns but OUTPUTS lists 3 outputs"),
    ],
)
def test_check_targets_says_what_is_wrong(column, outputs, message):
    with pytest.raises(ValueError, match=message):
        check_targets(np.array(column, dtype=float)[:, None], outputs)
    check_targets(np.array([[1.0, 2.0, -4.2], [np.nan, np.nan, np.nan]]), OUTPUTS)  # unknown targets pass
