"""Solve budgets: how long and how wide `agentk solve` searches, from a CPU smoke run to the paper's settings.
No numerical imports, so that the CLI and the curriculum can list and validate budgets without loading the
solver's numerical stack."""

from __future__ import annotations

from dataclasses import dataclass

from agentk.modalities import IMAGE, TEXT


@dataclass(frozen=True)
class SolveBudget:
    name: str
    max_epochs: int  # per network training run
    max_time: float  # seconds per network training run, embedding included
    batch_size: int
    n_trials: int  # HEBO trials per network, the default configuration included
    blend_after: int  # blend once this many solutions exist
    autogluon_time: float  # seconds for the AutoGluon tool
    autogluon_presets: str
    image_size: int
    finetune_image: bool  # train the image backbone end to end; else frozen, embeddings cached
    finetune_text: bool  # the same for the text encoder
    networks: tuple[dict, ...] = ({},)  # FusionConfig overrides, one network solution each


PRESETS = {
    # CPU, a few minutes: the default here and in CI. Frozen encoders train in seconds on cached embeddings;
    # the second network trains its image backbone (offline it starts from random weights, so frozen
    # features alone are weak).
    "quick": SolveBudget(
        "quick",
        max_epochs=30,
        max_time=90,
        batch_size=32,
        n_trials=2,
        blend_after=2,
        autogluon_time=60,
        autogluon_presets="medium_quality",
        image_size=64,
        finetune_image=False,
        finetune_text=False,
        networks=({}, {"finetune_image": True}),
    ),
    # a workstation or one GPU, an hour or two
    "standard": SolveBudget(
        "standard",
        max_epochs=30,
        max_time=1800,
        batch_size=32,
        n_trials=8,
        blend_after=3,
        autogluon_time=900,
        autogluon_presets="good_quality",
        image_size=160,
        finetune_image=True,
        finetune_text=True,
        networks=({}, {"image_backbone": "efficientnet_b0"}, {"fusion_hidden": 512, "dropout": 0.3}),
    ),
    # the paper's Table 5
    "paper": SolveBudget(
        "paper",
        max_epochs=30,
        max_time=36000,
        batch_size=32,
        n_trials=20,
        blend_after=3,
        autogluon_time=4 * 3600,
        autogluon_presets="best_quality",
        image_size=224,
        finetune_image=True,
        finetune_text=True,
        networks=({}, {"image_backbone": "efficientnet_b0"}, {"image_backbone": "convnext_tiny"}),
    ),
}
# which inputs a FusionConfig field concerns: a network whose overrides only touch absent inputs is skipped
FIELD_INPUT = {
    "image_backbone": IMAGE.name,
    "image_size": IMAGE.name,
    "finetune_image": IMAGE.name,
    "pretrained": IMAGE.name,
    "text_model": TEXT.name,
    "max_length": TEXT.name,
    "finetune_text": TEXT.name,
}
