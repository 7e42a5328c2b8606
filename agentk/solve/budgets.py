"""Solve budgets: how long and how wide `agentk solve` searches, from a CPU smoke run to the paper's settings.
No numerical imports, so that the CLI and the curriculum can list and validate budgets without loading the
solver's numerical stack.

The time model. A network solution trains n_trials times (HEBO); a trial runs at most max_epochs epochs over the
fit rows (early stopping ends it after `patience` epochs without a better validation score, usually well
before) and at most max_time seconds. Its training steps therefore take at most

    networks x n_trials x max_epochs x fit rows / (samples per second)        (training_seconds)

plus, per trial, building the network and one evaluation of the validation rows per epoch, and, once per solve,
decoding the images (tools/modality_img.py caches them for every later trial) and AutoGluon's autogluon_time on
tabular inputs. Samples per second is what train_fusion reports after each epoch and what
benchmarks/gpu_throughput.py measures against a plain PyTorch loop; it scales with the hardware, and so does
the batch (tools/fusion.py:device_batch: the batch size grows with the GPU's memory). For a trained resnet18 an
H100 runs a plain bf16 loop at 11,440 images/s at 224 px (issue 18's measurement; train_fusion's target is at
least 0.6 of it), a 2-core CPU about 70 at 64 px per core. With the standard budget on one H100 at ~10,000
images/s: an arena competition of 240 images (192 to fit) needs at most 3 x 8 x 30 x 192 / 10,000 = 14 s of
training steps, so it finishes in minutes, per-epoch evaluation and per-trial set-up dominating; a real one of
25,000 images (20,000 to fit) at most 3 x 8 x 30 x 20,000 / 10,000 s = 40 min if every network ran at
resnet18's speed (efficientnet_b0 is slower: about an hour in all, estimated), and hours from about 100,000
images; early stopping cuts most trials short. Frozen encoders (quick) embed every row once and then train on
cached features at thousands of rows per second on either device."""

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


def training_seconds(budget: SolveBudget, fit_rows: int, samples_per_s: float, networks: int | None = None) -> float:
    """The time model's bound: the most seconds the budget's networks (all of them, or `networks`) spend in
    training steps on fit_rows rows at samples_per_s, each trial capped at max_time."""
    trial = min(budget.max_time, budget.max_epochs * fit_rows / samples_per_s)
    return (len(budget.networks) if networks is None else networks) * budget.n_trials * trial
