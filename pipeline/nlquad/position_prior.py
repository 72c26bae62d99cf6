"""NLQuAD's question-blind control: where an answer usually is, and how long it usually is, read off the
training split and placed in every eval document without looking at its question or its words.

A span model that beats the random window may still have learned only this: sub-headings come at a typical
depth of an article and sections have a typical length. The prior is the training answers' median length in
words, starting at their median relative start (the answer's first word over the document's words), so a
trained reader that is not above it on IoU is not shown to use its question.
"""

from __future__ import annotations

import statistics
from typing import Any

from pipeline.nlquad.metrics import token_offsets, token_positions
from pipeline.nlquad.squad_format import iter_examples


def fit(train: dict[str, Any]) -> dict[str, float]:
    """``{"relative_start", "answer_words"}``: the medians over the training answers (whitespace words, as
    NLQuAD's IoU counts them)."""
    starts, lengths = [], []
    for ex in iter_examples(train):
        offsets = token_offsets(ex["context"])
        positions = token_positions(offsets, *ex["gold_span"])
        if not offsets or not positions:
            continue
        starts.append(min(positions) / len(offsets))
        lengths.append(len(positions))
    if not starts:
        raise ValueError("the training split has no answer to fit the position prior on")
    return {"relative_start": round(statistics.median(starts), 6), "answer_words": int(statistics.median(lengths))}


def predict(dataset: dict[str, Any], prior: dict[str, float]) -> dict[str, dict]:
    """Every question's window: ``answer_words`` words from the word at ``relative_start`` of its document
    (the nearest word; moved back where it would run past the end); a question's words are never read."""
    out = {}
    for ex in iter_examples(dataset):
        ctx = ex["context"]
        offsets = token_offsets(ctx)
        if not offsets:
            continue
        n = min(len(offsets), max(1, int(prior["answer_words"])))
        first = min(round(prior["relative_start"] * len(offsets)), len(offsets) - n)
        start, end = offsets[first][0], offsets[first + n - 1][1]
        out[ex["id"]] = {"text": ctx[start:end], "start": start, "end": end}
    return out
