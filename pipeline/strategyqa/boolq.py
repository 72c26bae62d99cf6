"""BoolQ-format yes/no questions (Clark et al. 2019): the auxiliary data StrategyQA's RoBERTa* is fine-tuned on
before StrategyQA itself (Geva et al. 2021 fine-tune on DROP, 20 Questions and BoolQ first and call it crucial).

A file is jsonl with ``question``, ``passage``, ``answer`` (true/false) and ``title`` (the Wikipedia article
the passage comes from) per line, the official release's format. Questions on one article share its passages,
so the held-out part and the checkpoint-selection part are cut by article, never by question.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pipeline.common.jsonl import iter_jsonl


@dataclass(frozen=True)
class BoolQuestion:
    qid: str  # the line number in its file: BoolQ has no ids
    question: str
    passage: str
    title: str
    answer: bool


def _row(record: dict) -> tuple[str, str, str, bool]:
    answer = record["answer"]
    if not isinstance(answer, bool):
        raise ValueError(f"answer must be true or false, not {answer!r}")
    question, passage, title = (record[k] for k in ("question", "passage", "title"))
    if not all(isinstance(v, str) and v.strip() for v in (question, passage, title)):
        raise ValueError("question, passage and title must be non-empty strings")
    return question, passage, title, answer


def load_boolq(path: str | Path) -> list[BoolQuestion]:
    """Every question of a BoolQ-format jsonl file, ids ``boolq-<n>`` in file order; a bad line is an error
    naming the file and the line."""
    rows = list(iter_jsonl(path, "BoolQ line (question, passage, title, answer)", _row))
    if not rows:
        raise ValueError(f"{path}: no BoolQ questions")
    return [BoolQuestion(f"boolq-{n}", *row) for n, row in enumerate(rows, 1)]


def split_by_title(questions: Sequence[BoolQuestion], heldout_share: float, dev_share: float,
                   seed: int) -> tuple[list[BoolQuestion], list[BoolQuestion], list[BoolQuestion]]:
    """(train, dev, held-out): articles shuffled with ``seed``, ``heldout_share`` of them held out for the
    auxiliary model's own figure, ``dev_share`` of the rest carved out to choose its checkpoint."""
    titles = sorted({q.title for q in questions})
    random.Random(seed).shuffle(titles)
    n_held = max(1, round(heldout_share * len(titles)))
    held = set(titles[:n_held])
    rest = titles[n_held:]
    dev = set(rest[:max(1, round(dev_share * len(rest)))])
    if not rest or len(dev) == len(rest):
        raise ValueError(f"{len(titles)} article(s) are too few to hold out {heldout_share} and select on {dev_share}")
    return ([q for q in questions if q.title not in held and q.title not in dev],
            [q for q in questions if q.title in dev], [q for q in questions if q.title in held])
