"""The late-fusion network's configuration (FusionConfig) and the part each input modality adds to it (Branch):
what the solver, the budgets and the modalities' model modules (tools/modality_*.py) name, below the network
itself (tools/fusion.py), and without torch."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch
    from torch import nn

STOP_ROWS = 20_000  # the most stop rows scored after each epoch (watched_rows): AUC's error on 20,000 is ~0.003


@dataclass
class FusionConfig:
    image_backbone: str = "resnet18"  # a timm model name
    image_size: int = 64
    pretrained: bool = True  # try to load the backbone's weights (random initialisation when unobtainable)
    text_model: str | None = None  # a transformers model folder; None: the packaged all-MiniLM-L6-v2
    max_length: int = 128
    finetune_text: bool = True  # train through the encoder, or embed once with it frozen
    finetune_image: bool = True
    tab_hidden: int = 128
    fusion_hidden: int = 256
    dropout: float = 0.1
    batch_size: int = 32  # on CPU; a GPU multiplies it by its memory factor (device_batch)
    scale_batch: bool = True  # on a GPU, grow the batch size with its memory, and the learning rate with it
    max_epochs: int = 30
    epoch_rows: int | None = None  # rows an epoch trains on, a fresh random sample of the fit rows; None: all
    stop_rows: int = STOP_ROWS  # the most stop rows scored after each epoch (watched_rows; the plan's)
    # learn from, and embed, only a fixed sample of this many learning rows (the stop, validation and test rows stay
    # whole): where a frozen encoder's embedding of every row is past the budget (agentk/solve/budgets.py)
    learn_sample: int | None = None
    # a safety cap in wall seconds for the whole call, embedding included: training stops once past it, and says so
    # loudly (the budget plans epochs, not seconds: this only stops a runaway)
    max_time: float = 36000.0
    lr: float = 1e-3  # at batch_size; scaled with the batch (scaled_lr)
    encoder_lr_factor: float = 0.1  # pretrained encoders train at lr * this: the full rate wrecks their features
    optimizer: str = "Adam"  # Adam | SGD | AdamW
    weight_decay: float = 0.0
    patience: int = 5  # epochs without progress (a better stop score, or the same with a lower loss) before stopping
    seed: int = 0
    device: str = "auto"  # auto: cuda when available
    compile: bool = False  # torch.compile the network: a minute or more of compiling, for long GPU runs


@dataclass
class Branch:
    """One input modality's part of the network, as fusion_branch of its tools/modality_<name>.py builds it."""

    encoder: nn.Module  # a batch of the modality's inputs -> features (rows, dim)
    dim: int
    # every row's inputs (train rows, then test rows): a tensor, a dict of them, or an object with len() whose
    # [rows] is a tensor (a memory-mapped image cache), which stays in host memory and is read by loader workers
    inputs: object = None
    augment: Callable[[torch.Tensor], torch.Tensor] | None = None  # a fit batch on the device -> augmented
    # other views of a batch (mirrored, turned) whose logits the final predictions average with the batch's own
    views: list[Callable[[torch.Tensor], torch.Tensor]] = field(default_factory=list)
    backbone: bool = False  # a large encoder: features batch-normalised; trained, it sets batch sizes and threads
    pretrained: bool = False  # trained, it learns at lr * encoder_lr_factor so as not to wreck its features
    frozen: bool = False  # embed every row once (no grad) and train only the rest on the cached features
    embed_batch: int = 1  # frozen: the embedding batch, in multiples of the batch size
    lengths: torch.Tensor | None = None  # frozen: embed the rows shortest first (each batch is cut to its longest)
    title: str = ""  # how notes name the encoder
    notes: list[str] = field(default_factory=list)
