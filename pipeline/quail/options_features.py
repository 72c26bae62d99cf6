"""QuAIL's options-only control without a neural network: a conditional logit over six features of the answer
options alone (no passage, no question), fit on the training texts.

An options-only transformer that beats random may have found what any annotator's options leak: the right
answer is the longest, or the one the others paraphrase, or "not enough information" at its base rate. Six
features say how much of that a linear model finds: the option's length (log words), whether it is the
longest, whether it is "not enough information", its mean and its largest word overlap with the question's
other options (Jaccard), and its position. The weights are fit by maximum likelihood of the keyed option
(softmax over a question's options, L2 ``l2``; ``scipy.optimize``), so a full-input model not above this is
not shown to read its passage.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

import numpy as np

from pipeline.quail.heuristics import nei_index
from pipeline.quail.data import MCQuestion

FEATURES = ("log_words", "longest", "not_enough_information", "mean_overlap", "max_overlap", "position")
_WORD = re.compile(r"\w+(?:'\w+)?")


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def option_features(q: MCQuestion) -> np.ndarray:
    """One row of :data:`FEATURES` per option of ``q``."""
    n = len(q.options)
    words = [_words(o) for o in q.options]
    counts = [len(_WORD.findall(o)) for o in q.options]
    nei = nei_index(q)
    longest = max((c for i, c in enumerate(counts) if i != nei), default=0)
    rows = []
    for i in range(n):
        overlaps = [len(words[i] & words[j]) / len(words[i] | words[j]) if words[i] | words[j] else 0.0
                    for j in range(n) if j != i]
        rows.append([math.log1p(counts[i]), float(i != nei and counts[i] == longest), float(i == nei),
                     sum(overlaps) / len(overlaps) if overlaps else 0.0, max(overlaps, default=0.0),
                     i / (n - 1) if n > 1 else 0.0])
    return np.asarray(rows, dtype=float)


def fit(train: Sequence[MCQuestion], l2: float = 1.0) -> dict[str, float]:
    """The conditional logit's weights by feature name, fit on the keyed training questions."""
    from scipy.optimize import minimize

    keyed = [(option_features(q), q.answer) for q in train if q.answer is not None]
    if not keyed:
        raise ValueError("no keyed training question to fit the options-only logit on")

    def loss(w: np.ndarray) -> tuple[float, np.ndarray]:
        total, grad = l2 * float(w @ w) / 2, l2 * w
        for x, y in keyed:
            s = x @ w
            s = s - s.max()
            p = np.exp(s) / np.exp(s).sum()
            total -= float(s[y] - math.log(np.exp(s).sum()))
            grad = grad - (x[y] - p @ x)
        return total / len(keyed), grad / len(keyed)

    res = minimize(loss, np.zeros(len(FEATURES)), jac=True, method="L-BFGS-B")
    return {name: round(float(v), 6) for name, v in zip(FEATURES, res.x, strict=True)}


def predict(questions: Sequence[MCQuestion], weights: dict[str, float]) -> dict[str, int]:
    """The option with the highest score for every question (ties: the first)."""
    w = np.asarray([weights[f] for f in FEATURES])
    return {q.qid: int(np.argmax(option_features(q) @ w)) for q in questions}
