"""NLQuAD/SQuAD-shaped data: the one walk over ``data -> paragraphs -> qas`` every reader of a split uses, and
the flat lists of questions, contexts and answer spans the models take."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any


def iter_qas(dataset: dict) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    """``(paragraph, qa)`` for every question, in file order."""
    for art in dataset["data"]:
        for para in art["paragraphs"]:
            for qa in para["qas"]:
                yield para, qa


def iter_examples(dataset: dict) -> Iterator[dict[str, Any]]:
    """One record per question with its first gold answer (NLQuAD has exactly one)."""
    for para, qa in iter_qas(dataset):
        ans = qa["answers"][0]
        yield {"id": qa["id"], "question": qa["question"], "context": para["context"], "gold": ans["text"],
               "gold_span": (ans["answer_start"], ans["answer_end"])}


@dataclass
class SpanExamples:
    ids: list[str]
    questions: list[str]
    contexts: list[str]
    answers: list[tuple[int, int]]


def load_examples(path: str | Path) -> tuple[SpanExamples, dict]:
    dataset = json.loads(Path(path).read_text(encoding="utf-8"))
    ex = SpanExamples([], [], [], [])
    for e in iter_examples(dataset):
        ex.ids.append(e["id"])
        ex.questions.append(e["question"])
        ex.contexts.append(e["context"])
        ex.answers.append(e["gold_span"])
    return ex, dataset
