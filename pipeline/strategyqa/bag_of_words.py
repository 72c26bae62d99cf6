"""StrategyQA's question-only control without a transformer: logistic regression on the question's words.

StrategyQA's questions are short and their wording carries a prior ("Could a ...?" leans one way), so a trained
question-only classifier above the majority may have learned words, not facts. This fits the linear model a
reviewer would try first: binary unigram and bigram features of the question (``scikit-learn``'s
``CountVectorizer`` and ``LogisticRegression``), its L2 strength chosen by log-loss on the same seeded
selection-dev share the transformers choose their checkpoints on (``strategyqa_qa.dev_share``), the eval
questions never seen. A setting with retrieved or gold paragraphs that is not above it is not shown to read them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from pipeline.strategyqa.answering import split_off_dev
from pipeline.strategyqa.data import StrategyQuestion


@dataclass(frozen=True)
class Fit:
    """A fitted classifier, the strength chosen and the selection-dev log-loss of every strength tried."""

    model: object
    c: float
    dev_log_loss: dict[str, float]


def _pipeline(c: float, ngram_max: int):
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    return make_pipeline(CountVectorizer(ngram_range=(1, ngram_max), binary=True, lowercase=True),
                         LogisticRegression(C=c, max_iter=5000, solver="liblinear"))


def fit(questions: Sequence[StrategyQuestion], c_grid: Sequence[float], ngram_max: int, dev_share: float,
        seed: int) -> Fit:
    """The strength of ``c_grid`` with the lowest log-loss on the seeded selection-dev share (ties: the first
    listed), fit on the rest."""
    from sklearn.metrics import log_loss

    train, dev = split_off_dev(list(questions), dev_share, seed)
    if len({q.answer for q in train}) < 2:
        raise ValueError("the training questions have one answer only: a classifier needs both yes and no")
    best, losses = None, {}
    for c in c_grid:
        model = _pipeline(c, ngram_max).fit([q.question for q in train], [int(q.answer) for q in train])
        loss = float(log_loss([int(q.answer) for q in dev], model.predict_proba([q.question for q in dev])[:, 1],
                              labels=[0, 1]))
        losses[repr(c)] = round(loss, 6)
        if best is None or loss < best[0]:
            best = (loss, c, model)
    assert best is not None
    return Fit(best[2], best[1], losses)


def predict(fitted: Fit, questions: Sequence[StrategyQuestion]) -> dict[str, dict]:
    """``{qid: {"answer": bool, "p_yes": float}}`` (yes where p >= 0.5)."""
    p = fitted.model.predict_proba([q.question for q in questions])[:, 1]
    return {q.qid: {"answer": bool(pi >= 0.5), "p_yes": round(float(pi), 6)} for q, pi in zip(questions, p)}


def auc_and_log_loss(answers: dict[str, dict], questions: Sequence[StrategyQuestion]) -> dict[str, float | None]:
    """ROC AUC and log-loss of the predicted yes-probabilities (AUC None with one class in the gold)."""
    from sklearn.metrics import log_loss, roc_auc_score

    gold = [int(q.answer) for q in questions]
    p = [answers[q.qid]["p_yes"] for q in questions]
    auc = roc_auc_score(gold, p) if len(set(gold)) == 2 else None
    return {"auc": None if auc is None or math.isnan(auc) else round(float(auc), 4),
            "log_loss": round(float(log_loss(gold, p, labels=[0, 1])), 4)}
