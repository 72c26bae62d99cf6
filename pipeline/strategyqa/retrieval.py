"""Question- and decomposition-based BM25 retrieval for StrategyQA, and Recall@10 as the authors compute it."""

from __future__ import annotations

import re
import statistics

from pipeline.search.analysis import remove_stop_words
from pipeline.search.base import Run, SearchBackend
from pipeline.strategyqa.data import StrategyQuestion

_STEP_REF = re.compile(r"#\d+")


def question_queries(questions: list[StrategyQuestion]) -> dict[str, str]:
    return {q.qid: remove_stop_words(q.question) for q in questions}


def step_queries(questions: list[StrategyQuestion], decompositions: dict[str, list[str]] | None = None) -> dict[str, str]:
    """One query per step (``{qid}::{i}``); references to earlier answers (``#1``) are removed."""
    out = {}
    for q in questions:
        steps = decompositions.get(q.qid, []) if decompositions is not None else list(q.decomposition)
        for i, step in enumerate(steps):
            text = " ".join(_STEP_REF.sub(" ", step).split())
            if text:
                out[f"{q.qid}::{i}"] = text
    return out


def merge_step_runs(step_run: Run, k: int) -> Run:
    """Per question: hits of all steps merged by score, a paragraph kept once (its best score), top-k."""
    merged: dict[str, dict[str, float]] = {}
    for key, hits in step_run.items():
        qid = key.rsplit("::", 1)[0]
        bucket = merged.setdefault(qid, {})
        for doc_id, score in hits.items():
            if score > bucket.get(doc_id, float("-inf")):
                bucket[doc_id] = score
    return {qid: dict(sorted(h.items(), key=lambda x: (-x[1], x[0]))[:k]) for qid, h in merged.items()}


def retrieve(backend: SearchBackend, questions: list[StrategyQuestion], k: int,
             decompositions: dict[str, list[str]] | None = None) -> dict[str, Run]:
    by_question = backend.search(question_queries(questions), k)
    by_steps = merge_step_runs(backend.search(step_queries(questions, decompositions), k), k)
    for q in questions:  # a question with no usable step still gets an (empty) entry
        by_steps.setdefault(q.qid, {})
    return {"question": by_question, "decomposition": by_steps}


def recall_at_k(question: StrategyQuestion, retrieved: list[str], k: int = 10) -> float:
    """max over annotators of |gold ∩ top-k| / |gold|, with 0 for an annotator without evidence."""
    top = set(retrieved[:k])
    scores = [len(gold & top) / len(gold) if gold else 0.0 for gold in question.gold_paragraphs()]
    return max(scores, default=0.0)


def mean_recall(questions: list[StrategyQuestion], run: Run, k: int = 10) -> float:
    return statistics.fmean(recall_at_k(q, list(run.get(q.qid, {})), k) for q in questions) if questions else 0.0
