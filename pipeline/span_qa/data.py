"""NLQuAD/SQuAD-shaped splits as flat lists of questions, contexts and answer spans."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path


@dataclass
class SpanExamples:
    ids: list[str]
    questions: list[str]
    contexts: list[str]
    answers: list[tuple[int, int]]


def load_examples(path: str | Path) -> tuple[SpanExamples, dict]:
    dataset = json.loads(Path(path).read_text(encoding="utf-8"))
    ex = SpanExamples([], [], [], [])
    for art in dataset["data"]:
        for para in art["paragraphs"]:
            for qa in para["qas"]:
                ans = qa["answers"][0]
                ex.ids.append(qa["id"])
                ex.questions.append(qa["question"])
                ex.contexts.append(para["context"])
                ex.answers.append((ans["answer_start"], ans["answer_end"]))
    return ex, dataset
