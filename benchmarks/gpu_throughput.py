"""Training throughput of the fusion network's image path against a plain PyTorch loop on the same device.

    uv run python benchmarks/gpu_throughput.py [--device auto|cpu|cuda] [--images N] [--size S] [--epochs E]

It writes a finished workspace of N synthetic JPEG images (twice the training side, two classes told apart by a
stripe) and measures, at S px:
- `train_fusion`: a trained timm resnet18 (random weights), images/s of its training passes as its on_epoch
  callback reports them (the evaluation passes not counted);
- the reference: the same fit images decoded once into a uint8 tensor on the device, the same timm resnet18 and
  batch size, random flips, Adam, bf16 autocast and channels-last on CUDA, nothing else.
Each side's figure is its best epoch after the first (which pays for warm-up), over --repeats runs taken
alternately: on a shared machine other work only slows an epoch down. The ratio train_fusion / reference is the
issue's target: >= 0.8 on CPU, >= 0.6 on a GPU (at 224 px). Defaults: 6000 images at 224 px on CUDA, 256 images
at 64 px on CPU.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from agentk.solve.budgets import PRESETS, training_seconds  # noqa: E402
from agentk.workspace import METRIC, SUBMISSION_FORMAT, TARGET_TRANSFORM, Workspace  # noqa: E402

TRANSFORM = """import numpy as np
import pandas as pd

OUTPUTS = [{"name": "label", "kind": "binary"}]


def transform(df):
    return df[["label"]].to_numpy(float)


def inverse_transform(arr):
    return pd.DataFrame({"label": np.asarray(arr, dtype=float)[:, 0]})
"""
METRIC_CODE = """import numpy as np

METRIC = "accuracy"
HIGHER_IS_BETTER = True


def metric(y_true, y_pred):
    return float(np.mean(y_true["label"].to_numpy() == (y_pred["label"].to_numpy() > 0.5)))
"""


def write_workspace(ws: Path, n: int, side: int, seed: int = 0) -> None:
    """n JPEGs of side x side px, 80 % train (labelled) and 20 % test: noise, plus a bright diagonal stripe on
    class 1."""
    from PIL import Image

    rng = np.random.default_rng(seed)
    layout = Workspace(ws)
    (ws / "images").mkdir(parents=True, exist_ok=True)
    labels = rng.integers(0, 2, n)
    yy, xx = np.mgrid[:side, :side]
    stripe = np.abs(yy - xx) < side // 10
    for i, label in enumerate(labels):
        pixels = rng.integers(0, 200, (side, side, 3), dtype=np.uint8)
        if label:
            pixels[stripe] = 255
        Image.fromarray(pixels).save(ws / "images" / f"{i}.jpg", quality=90)
    n_train = int(0.8 * n)
    ids = [f"im{i}" for i in range(n)]
    paths = [f"images/{i}.jpg" for i in range(n)]
    for split, rows in (("train", slice(0, n_train)), ("test", slice(n_train, n))):
        pd.DataFrame({"id": ids[rows], "path": paths[rows]}).to_csv(layout.input_map(split, "img"), index=False)
    pd.DataFrame({"id": ids[:n_train], "label": labels[:n_train]}).to_csv(layout.target_map, index=False)
    write_task_code(layout)


def write_task_code(layout: Workspace) -> None:
    """The binary label's target transform and accuracy metric that a finished setup would have written."""
    layout.code(TARGET_TRANSFORM).write_text(TRANSFORM)
    layout.code(METRIC).write_text(METRIC_CODE)
    layout.code(SUBMISSION_FORMAT).write_text("")  # only its presence matters to TaskData


def fusion_speed(task, size: int, epochs: int, device: str) -> tuple[float, dict]:
    """train_fusion's training images/s (its best epoch after the first) and its last epoch's report."""
    from tools.fusion import train_fusion
    from tools.fusion_config import FusionConfig

    reports: list[dict] = []
    cfg = FusionConfig(
        image_size=size, finetune_image=True, pretrained=False, max_epochs=epochs, patience=epochs, device=device
    )
    train_fusion(task, cfg, log=lambda line: None, on_epoch=reports.append)
    return max(r["images_per_s"] for r in reports[1:]), reports[-1]


def reference_speed(task, size: int, epochs: int, batch: int, device: str) -> float:
    """The plain loop: fit images decoded once into a uint8 tensor on the device, images/s (its best epoch after
    the first)."""
    import timm
    import torch
    from PIL import Image

    dev = torch.device(device)
    cuda = dev.type == "cuda"
    fit, _ = task.split
    paths = task.train.inputs["img"].iloc[fit, 0].tolist()
    decoded = [np.asarray(Image.open(task.ws / p).convert("RGB").resize((size, size), Image.BILINEAR)) for p in paths]
    images = torch.from_numpy(np.stack(decoded)).permute(0, 3, 1, 2).contiguous().to(dev)
    labels = torch.tensor(task.y[fit, 0], dtype=torch.float32, device=dev)
    mean = torch.tensor([0.485, 0.456, 0.406], device=dev).view(1, 3, 1, 1) * 255
    std = torch.tensor([0.229, 0.224, 0.225], device=dev).view(1, 3, 1, 1) * 255
    torch.manual_seed(0)
    model = timm.create_model("resnet18", pretrained=False, num_classes=1).to(dev)
    if cuda:
        model = model.to(memory_format=torch.channels_last)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    speeds = []
    for _ in range(epochs):
        began = time.perf_counter()
        model.train()
        for rows in torch.randperm(len(images), device=dev).split(batch):
            if len(rows) < 2:
                continue
            x = (images[rows].float() - mean) / std
            flip = torch.rand(len(rows), device=dev) < 0.5
            x = torch.where(flip.view(-1, 1, 1, 1), x.flip(3), x)
            if cuda:
                x = x.contiguous(memory_format=torch.channels_last)
            with torch.autocast(dev.type, dtype=torch.bfloat16, enabled=cuda):
                loss = torch.nn.functional.binary_cross_entropy_with_logits(model(x)[:, 0].float(), labels[rows])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        if cuda:
            torch.cuda.synchronize()
        speeds.append(len(images) / (time.perf_counter() - began))
    return max(speeds[1:])


def main(argv: list[str] | None = None) -> int:
    import torch

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--device", default="auto", help="auto (cuda when available), cpu or cuda")
    p.add_argument("--images", type=int, default=None, help="images in the workspace [6000 on CUDA, 256 on CPU]")
    p.add_argument("--size", type=int, default=None, help="training side in px [224 on CUDA, 64 on CPU]")
    p.add_argument("--epochs", type=int, default=4, help="epochs per side, the first not counted [4]")
    p.add_argument("--repeats", type=int, default=1, help="runs of each side, taken alternately [1]")
    p.add_argument(
        "--threads", type=int, default=None, help="CPU threads of both sides (1 on a machine others share) [torch's]"
    )
    p.add_argument("--out", type=Path, default=None, help="keep the workspace here [a temporary folder]")
    args = p.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    device = ("cuda" if torch.cuda.is_available() else "cpu") if args.device == "auto" else args.device
    if args.epochs < 2:
        p.error("--epochs must be at least 2: the first epoch is warm-up")
    cuda = device.startswith("cuda")
    n, size = args.images or (6000 if cuda else 256), args.size or (224 if cuda else 64)

    from tools.task_data import TaskData

    with tempfile.TemporaryDirectory() as tmp:
        ws = args.out or Path(tmp) / "ws"
        if not Workspace(ws).target_map.exists():
            write_workspace(ws, n, 2 * size)
        task = TaskData(ws)
        fusion = reference = 0.0
        for _ in range(args.repeats):
            speed, report = fusion_speed(task, size, args.epochs, device)
            fusion, batch = max(fusion, speed), report["batch_size"]
            reference = max(reference, reference_speed(task, size, args.epochs, batch, device))
    name = torch.cuda.get_device_name(device) if cuda else f"cpu ({torch.get_num_threads()} threads)"
    memory = f"{report['gpu_mem_gb']:.1f}" if report["gpu_mem_gb"] is not None else "-"
    print("| device | images | px | batch | reference img/s | train_fusion img/s | ratio | fusion GPU GB |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    print(f"| {name} | {n} | {size} | {batch} | {reference:.0f} | {fusion:.0f} | {fusion / reference:.2f} | {memory} |")
    fit_share = len(task.split[0]) / n  # the fit rows of a competition's images (the rest: test and validation)
    projected = [(rows, training_seconds(PRESETS["standard"], int(fit_share * rows), fusion)) for rows in (n, 25_000)]
    print(
        f"\nthe standard budget's time model (agentk/solve/budgets.py) at {fusion:.0f} images/s, at most: "
        + ", ".join(f"{seconds / 60:.1f} min of training steps for {rows} images" for rows, seconds in projected)
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
