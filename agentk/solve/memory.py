"""Memory, planned as well as time (issue 49): what the machine gives, the solve's limit (a share of it by default,
`agentk solve --memory-limit` otherwise), and the solver's estimate of its peak, part by part, stated before it
starts.

The limit binds the solver's whole process tree where a memory cgroup can be made (agentk.core.sandbox.MemoryGroup),
and each process alone in any case (RLIMIT_DATA). Inside the tree, what is left under the limit decides where
decoded images go: memory, or a memory-mapped file on disk (tools/modality_img.py's decoded), so a large image
competition stays under it. The estimate's coefficients are measured on this project's 2-core machine;
benchmarks/scale.py prints the estimate beside the measured peak."""

from __future__ import annotations

from dataclasses import dataclass

import psutil

from tools.machine import cgroup_limit_bytes, images_in_memory

DEFAULT_SHARE = 0.75  # of the machine's memory: the rest for the system, page cache and what else runs
# the solver's interpreter with torch, AutoGluon, transformers and timm imported (0.87 GB measured), the frozen
# encoders' weights and the training's working memory
BASE_GB = 1.5
# a table's frame at once in the task (pandas, its deep size), AutoGluon's transformed copy, its models' datasets and
# the classical candidates' matrices
TABLE_COPIES = 4.0
# a text's characters through the classical TF-IDF (word 1-2-grams and character 2-5-grams: about 4 non-zeros a
# character at 12 bytes each, counted then weighted) and the vectoriser's vocabulary before it is pruned: 300,000
# reviews of 90 characters peaked at 2.9 GB with nothing else (benchmarks/scale.py)
TEXT_BYTES_PER_CHAR = 75.0
EMBEDDING_BYTES = 384 * 2  # a frozen MiniLM's float16 embedding of one row (memory-mapped: the page cache holds it)
# every row is tokenised once, at 128 tokens, into two int64 tensors, in chunks whose encodings take some 0.15 GB
# (tools/modality_txt.py: TOKENISE_CHUNK): 10,000 and 100,000 reviews added 0.148 and 0.333 GB to the process
TOKENISED_BYTES = 2_100
ENCODER_GB = 0.45  # the frozen MiniLM's weights, a batch's activations and a chunk's encodings


def machine_gb() -> float:
    """The memory this process may use, in GB: the machine's, or its cgroup's limit where lower."""
    total = psutil.virtual_memory().total
    limit = cgroup_limit_bytes()
    return min(total, limit) / 2**30 if limit else total / 2**30


def default_limit_gb() -> float:
    return DEFAULT_SHARE * machine_gb()


@dataclass(frozen=True)
class MemoryPlan:
    parts: dict[str, float]  # GB, by what holds it
    limit_gb: float

    @property
    def total_gb(self) -> float:
        return sum(self.parts.values())

    def line(self) -> str:
        parts = ", ".join(f"{what} {gb:.1f}" for what, gb in self.parts.items() if gb >= 0.05)
        verdict = (
            f"under the limit of {self.limit_gb:.1f} GB"
            if self.total_gb <= self.limit_gb
            else f"OVER the limit of {self.limit_gb:.1f} GB: a part past it stops with a memory error, the others go on"
        )
        return f"peak memory estimated at {self.total_gb:.1f} GB ({parts}), {verdict} (--memory-limit)"


def plan_memory(frames: dict[str, list], image_side: int, limit_gb: float, embedded_rows: int = 0) -> MemoryPlan:
    """The solve's peak memory, estimated from its inputs before anything is fitted. frames: per modality
    ("tab", "img", "txt"), its train and test input frames; image_side: the side images are decoded at;
    embedded_rows: the rows a frozen text encoder embeds (0: no text network)."""
    gb = 2**30
    parts = {"python and libraries": BASE_GB}
    tables = frames.get("tab", [])
    if tables:
        parts["tables"] = TABLE_COPIES * sum(int(f.memory_usage(deep=True).sum()) for f in tables) / gb
    images = frames.get("img", [])
    if images:
        decoded = sum(len(f) for f in images) * image_side**2 * 3
        # past the share, the images go to a memory-mapped file: the page cache holds what fits
        parts["decoded images"] = decoded / gb if images_in_memory(decoded) else 0.0
    texts = frames.get("txt", [])
    if texts:
        chars = sum(int(f.astype(str).map(len).to_numpy().sum()) for f in texts)
        rows = sum(len(f) for f in texts)
        parts["texts"] = chars * TEXT_BYTES_PER_CHAR / gb
        if embedded_rows:
            parts["text encoder"] = ENCODER_GB + (embedded_rows * EMBEDDING_BYTES + rows * TOKENISED_BYTES) / gb
    return MemoryPlan(parts, limit_gb)
