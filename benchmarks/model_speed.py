"""The budget's modelled training speeds (agentk/solve/budgets.py, MODEL_SPEED) against train_fusion's measured ones
on this machine.

    uv run python benchmarks/model_speed.py [--device auto|cpu|cuda] [--epochs E] [--only KIND ...] [--scale F]

A network's plan (its trials, epochs and rows per epoch) rests on four modelled speeds: a trained timm resnet18
(random weights) at the device's reference side, the tiny CNN that trains when no pretrained weights exist (at 48
and 32 px, its largest and smallest sides), a trained all-MiniLM-L6-v2 text encoder on texts that fill its 128
tokens, and the fusion MLP on 64 tabular columns. For each, this writes a finished workspace of synthetic rows (a
binary label the input shows), runs train_fusion for E epochs on it and reports the best epoch's training samples/s
after the first (which pays for warm-up), as its on_epoch callback gives them, beside budgets.training_speed's
figure for this machine. A ratio well below 1 means the plan gives networks more epochs than they get done; well
above 1, fewer. The frozen kinds (an encoder that embeds every row once, which the plan models at EVAL_FACTOR times
its training speed) report the embedding's rows/s, from train_fusion's note.
--scale multiplies the rows (1 = the defaults below, sized for a few seconds an epoch on each device).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
for path in (ROOT, ROOT / "benchmarks"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from gpu_throughput import write_task_code, write_workspace  # noqa: E402

from agentk.modalities import IMAGE, TABULAR, TEXT  # noqa: E402
from agentk.solve.budgets import EVAL_FACTOR, REFERENCE_PX, Machine, training_speed  # noqa: E402
from agentk.workspace import Workspace  # noqa: E402

# kind -> rows on (cpu, cuda)
ROWS = {
    "image": (512, 6000),
    "tiny image": (2000, 30000),
    "tiny image 32": (3000, 40000),
    "text": (160, 6000),
    "features": (20000, 300000),
    "frozen image": (512, 12000),
    "frozen text": (320, 60000),
}
TINY_SIDES = {"tiny image": 48, "tiny image 32": 32}  # the tiny CNN's largest and smallest sides
WORDS = np.array("the a of river stone light market garden winter engine copper silent bright cold fast".split())


def table_workspace(ws: Path, modality: str, frame: pd.DataFrame, labels: np.ndarray) -> None:
    """A finished workspace over one input map: 80 % of the rows train (labelled), the rest test."""
    layout = Workspace(ws)
    ws.mkdir(parents=True, exist_ok=True)
    n, n_train = len(frame), int(0.8 * len(frame))
    frame = frame.assign(id=[f"r{i}" for i in range(n)]).set_index("id")
    frame.iloc[:n_train].to_csv(layout.input_map("train", modality))
    frame.iloc[n_train:].to_csv(layout.input_map("test", modality))
    pd.DataFrame({"id": frame.index[:n_train], "label": labels[:n_train]}).to_csv(layout.target_map, index=False)
    write_task_code(layout)


def text_workspace(ws: Path, n: int) -> None:
    """Texts of 150 words (past the encoder's 128 tokens, so every batch is full length); the label is whether
    'copper' is among them."""
    rng = np.random.default_rng(0)
    texts = [" ".join(rng.choice(WORDS, 150)) for _ in range(n)]
    labels = np.array(["copper" in t for t in texts], dtype=int)
    table_workspace(ws, TEXT.name, pd.DataFrame({"text": texts}), labels)


def features_workspace(ws: Path, n: int) -> None:
    """64 numeric columns; the label is the sign of their first."""
    x = np.random.default_rng(0).normal(size=(n, 64)).astype(np.float32)
    frame = pd.DataFrame(x, columns=[f"x{i}" for i in range(64)])
    table_workspace(ws, TABULAR.name, frame, (x[:, 0] > 0).astype(int))


def measure(kind: str, ws: Path, rows: int, epochs: int, device: str) -> tuple[float, int, int, str]:
    """(samples/s, side in px or 0, batch size, the encoder's notes): a trained kind's best training pass after
    the first epoch; a frozen kind's embedding of every row, once."""
    from tools import modality_img
    from tools.fusion import train_fusion
    from tools.fusion_config import FusionConfig
    from tools.task_data import TaskData

    side = 0
    frozen = kind.startswith("frozen")
    cfg = FusionConfig(
        max_epochs=2 if frozen else epochs,
        patience=epochs,
        device=device,
        finetune_image=not frozen,
        finetune_text=not frozen,
    )
    if kind in ("image", "frozen image"):
        side = REFERENCE_PX["cuda" if device.startswith("cuda") else "cpu"]
        write_workspace(ws, rows, side if frozen else 2 * side)  # frozen: only the embedding is timed
        cfg = replace(cfg, image_size=side, pretrained=False)
    elif kind in TINY_SIDES:
        side = TINY_SIDES[kind]
        write_workspace(ws, rows, side)
        # as on a machine without the backbone's weights: the tiny CNN trains
        modality_img._cached_weights = lambda _cfg: None
        modality_img._reachable = lambda timeout=3.0: False
        cfg = replace(cfg, image_size=side, pretrained=True)
    elif kind in ("text", "frozen text"):
        text_workspace(ws, rows)
    else:
        features_workspace(ws, rows)
    reports: list[dict] = []
    result = train_fusion(TaskData(ws), cfg, log=lambda line: None, on_epoch=reports.append)
    notes = "; ".join(result.notes)
    if frozen:
        embedded = re.search(r"(\d+) embeddings in ([\d.]+)s", notes)
        if not embedded:
            raise SystemExit(f"{kind}: no frozen embedding was timed ({notes})")
        speed = int(embedded[1]) / max(float(embedded[2]), 0.05)
    else:
        speed = max(r["images_per_s"] for r in reports[1:])
    return speed, side, reports[-1]["batch_size"], notes


def main(argv: list[str] | None = None) -> int:
    import torch

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--device", default="auto", help="auto (cuda when available), cpu or cuda")
    p.add_argument("--epochs", type=int, default=4, help="epochs per kind, the first not counted [4]")
    p.add_argument("--only", nargs="+", choices=list(ROWS), default=list(ROWS), help="kinds to measure [all]")
    p.add_argument("--scale", type=float, default=1.0, help="multiplies each kind's rows [1]")
    args = p.parse_args(argv)
    if args.epochs < 2:
        p.error("--epochs must be at least 2: the first epoch is warm-up")
    device = ("cuda" if torch.cuda.is_available() else "cpu") if args.device == "auto" else args.device
    cuda = device.startswith("cuda")
    machine = Machine(cores=os.cpu_count() or 1, cuda=cuda)
    name = torch.cuda.get_device_name(device) if cuda else f"cpu ({torch.get_num_threads()} threads)"
    lines = [
        f"device: {name}; modelled for {machine.describe()}",
        "",
        "| kind | rows | px | batch | measured samples/s | modelled samples/s | measured / modelled |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for kind in args.only:
        rows = max(50, int(ROWS[kind][cuda] * args.scale))
        with tempfile.TemporaryDirectory() as tmp:
            speed, side, batch, notes = measure(kind, Path(tmp) / "ws", rows, args.epochs, device)
        modality = IMAGE.name if "image" in kind else TEXT.name if "text" in kind else None
        modelled = training_speed(machine, modality, image_size=side or 64, tiny_image=kind in TINY_SIDES)
        modelled *= EVAL_FACTOR if kind.startswith("frozen") else 1.0
        if kind in TINY_SIDES and "tiny CNN" not in notes:
            raise SystemExit(f"the tiny CNN did not train ({notes}): its row would be wrong")
        lines.append(
            f"| {kind} | {rows} | {side or '-'} | {batch} | {speed:.0f} | {modelled:.0f} | {speed / modelled:.2f} |"
        )
        print(lines[-1], flush=True)
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
