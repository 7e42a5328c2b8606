"""Output heads, as every model here (light net, fusion net, blender) shares them: a task's outputs
(transform.OUTPUTS: binary, multiclass with n_classes, regression) set each head's width, its training loss,
how its raw outputs become model space and how regression targets are scaled while learning.

Model space, per output: P(class 1) for binary, n_classes probabilities for multiclass, the transformed value for
regression. torch loads only in the functions that take tensors: TaskData sizes heads without it."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import torch

KINDS = ("binary", "multiclass", "regression")
L1_METRICS = {"mae", "median_ae"}  # regression outputs of these metrics train on L1 (towards the median)


def width(output: dict) -> int:
    """Columns of an output in model space."""
    return int(output["n_classes"]) if output["kind"] == "multiclass" else 1


def output_losses(outputs: list[dict], metric_name: str = "") -> list[str]:
    """Per output, the training loss matched to the metric: bce, ce, or l1 / mse for regression."""
    regression = "l1" if metric_name.lower() in L1_METRICS else "mse"
    return ["bce" if o["kind"] == "binary" else "ce" if o["kind"] == "multiclass" else regression for o in outputs]


def check_targets(y: np.ndarray, outputs: list[dict]) -> None:
    """Transformed targets (rows, outputs; NaN where unknown) fit the heads: 0/1, class codes 0..k-1, any value."""
    if y.shape[1] != len(outputs):
        raise ValueError(f"the targets have {y.shape[1]} columns but OUTPUTS lists {len(outputs)} outputs")
    for j, out in enumerate(outputs):
        known = y[np.isfinite(y[:, j]), j]
        if out["kind"] == "binary" and not np.isin(known, (0, 1)).all():
            raise ValueError(
                f"output {j} is binary but its transformed targets are not all 0/1 "
                f"(e.g. {known[~np.isin(known, (0, 1))][:3]})"
            )
        if out["kind"] == "multiclass":
            n = int(out["n_classes"])
            bad = known[(known != np.round(known)) | (known < 0) | (known >= n)]
            if len(bad):
                raise ValueError(
                    f"output {j} is multiclass with {n} classes but its transformed targets are not "
                    f"all class codes 0..{n - 1} (e.g. {bad[:3]})"
                )
        elif out["kind"] not in KINDS:
            raise ValueError(f"output {j} has kind {out['kind']!r}: use {', '.join(KINDS[:-1])} or {KINDS[-1]}")


def target_scaling(y: np.ndarray, outputs: list[dict]) -> tuple[np.ndarray, np.ndarray]:
    """(mean, scale) per output: regression targets are learnt standardised over their known rows; class targets
    stay as they are (mean 0, scale 1). to_model_space undoes it."""
    mean, scale = np.zeros(len(outputs)), np.ones(len(outputs))
    for j, out in enumerate(outputs):
        known = y[np.isfinite(y[:, j]), j]
        if out["kind"] == "regression" and len(known):
            mean[j], scale[j] = known.mean(), known.std() if known.std() > 0 else 1.0
    return mean, scale


def head_loss(
    logits: list[torch.Tensor], y: torch.Tensor, losses: list[str], weights: torch.Tensor | None = None
) -> torch.Tensor | None:
    """The summed loss of all heads (losses from output_losses), each over the rows where its target is known, the
    rows' mean or, with weights (rows, outputs: TaskData.fit_weights), their weighted mean; None when no target is
    known."""
    import torch
    from torch.nn import functional as F

    terms = []
    for j, (loss, z) in enumerate(zip(losses, logits)):
        known = torch.isfinite(y[:, j])
        if not known.any():
            continue
        z, t = z[known].float(), y[known, j]
        if loss == "bce":
            each = F.binary_cross_entropy_with_logits(z[:, 0], t, reduction="none")
        elif loss == "ce":
            each = F.cross_entropy(z, t.long(), reduction="none")
        else:
            each = (F.l1_loss if loss == "l1" else F.mse_loss)(z[:, 0], t, reduction="none")
        w = None if weights is None else weights[known, j]
        terms.append(each.mean() if w is None else (each * w).sum() / w.sum().clamp_min(1e-12))
    return torch.stack(terms).sum() if terms else None


def to_model_space(logits: list[torch.Tensor], outputs: list[dict], mean: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """Raw head outputs (one tensor per output) -> model space, float64; regression back in the targets' scale."""
    import torch

    cols = []
    for j, (out, z) in enumerate(zip(outputs, logits)):
        if out["kind"] == "binary":
            cols.append(torch.sigmoid(z).double())
        elif out["kind"] == "multiclass":
            cols.append(torch.softmax(z.double(), dim=1))
        else:
            cols.append(z.double() * scale[j] + mean[j])
    return torch.cat(cols, dim=1).numpy()
