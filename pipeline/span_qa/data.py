"""The flat lists of questions, contexts and answer spans the span models take, from a split's file (walked
by ``pipeline.nlquad.squad_format``)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from pipeline.nlquad.squad_format import iter_examples


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
