"""From per-window logits to one answer per question: the section's ``aggregation``.

Per window: the best (start, end) among the ``n_best`` highest start and end logits, restricted to context
tokens, end >= start and at most ``max_answer_tokens`` long (HF ``utils_qa.py``'s n-best search); the window
is *empty* when the CLS (no-answer) score beats it. Per question, by ``aggregation``:

- ``union`` (the NLQuAD paper's): the span from the earliest start to the latest end among non-empty windows.
  Every NLQuAD question has an answer, so when every window is empty the question gets the best span of the
  window where it came closest to the no-answer score (a model that has learnt "no answer" for most windows of
  a long document still names its best guess, as a SQuAD v1.1 reader does).
- ``margin``: the span of the one window whose best span beats its no-answer score by the most (that nearest
  miss when none beats it). One window that wrongly finds an answer widens a union to whatever lies between;
  it does not move a margin pick unless it is the most confident window of the document.
- ``best``: the span of highest start + end score over all windows, the no-answer score ignored (HF
  ``utils_qa.py`` over a document's features).

Longformer sees the whole document in one window, so every aggregation yields its single span.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np

Aggregation = Literal["union", "margin", "best"]
AGGREGATIONS: tuple[Aggregation, ...] = ("union", "margin", "best")


def best_window_span(start_logits: Sequence[float], end_logits: Sequence[float],
                     offsets: Sequence[tuple[int, int] | None], n_best: int,
                     max_answer_tokens: int) -> tuple[float, int, int] | None:
    """(score, start char, end char) of the window's best span, or None when the no-answer score beats it."""
    found = best_span_and_null(start_logits, end_logits, offsets, n_best, max_answer_tokens)
    if found is None or found[0][0] <= found[1]:
        return None
    return found[0]


def best_span_and_null(start_logits: Sequence[float], end_logits: Sequence[float],
                       offsets: Sequence[tuple[int, int] | None], n_best: int,
                       max_answer_tokens: int) -> tuple[tuple[float, int, int], float] | None:
    """The window's best span (score, start char, end char) whatever the no-answer score, and that score;
    None when no valid span exists."""
    start_logits, end_logits = np.asarray(start_logits), np.asarray(end_logits)
    null_score = float(start_logits[0] + end_logits[0])
    best: tuple[float, int, int] | None = None
    for s in np.argsort(start_logits)[::-1][:n_best]:
        for e in np.argsort(end_logits)[::-1][:n_best]:
            if e < s or e - s + 1 > max_answer_tokens or offsets[s] is None or offsets[e] is None:
                continue
            score = float(start_logits[s] + end_logits[e])
            if best is None or score > best[0]:
                best = (score, offsets[s][0], offsets[e][1])
    return None if best is None else (best, null_score)


def aggregate_windows(spans: Sequence[tuple[int, int] | None]) -> tuple[int, int] | None:
    """Earliest start to latest end over the windows that found an answer; None if none did."""
    found = [s for s in spans if s is not None]
    if not found:
        return None
    return min(s for s, _ in found), max(e for _, e in found)


def predict_from_logits(example_index: Sequence[int], offsets: Sequence[Sequence[tuple[int, int] | None]],
                        start_logits: Sequence[Sequence[float]], end_logits: Sequence[Sequence[float]],
                        contexts: Sequence[str], n_best: int, max_answer_tokens: int,
                        aggregation: Aggregation) -> list[dict]:
    """One ``{"text", "start", "end"}`` per example (empty text and 0/0 only when no window holds a valid span),
    the windows combined by ``aggregation`` (module docstring)."""
    if aggregation not in AGGREGATIONS:
        raise ValueError(f"aggregation {aggregation!r}: one of {AGGREGATIONS}")
    per_example: dict[int, list[tuple[int, int] | None]] = {}
    closest: dict[int, tuple[float, int, int]] = {}  # per example: (span score - null score, start, end)
    top: dict[int, tuple[float, int, int]] = {}  # per example: (span score, start, end)
    for i, ex in enumerate(example_index):
        found = best_span_and_null(start_logits[i], end_logits[i], offsets[i], n_best, max_answer_tokens)
        wins = found is not None and found[0][0] > found[1]
        per_example.setdefault(ex, []).append((found[0][1], found[0][2]) if wins else None)
        if found is not None:
            margin = (found[0][0] - found[1], found[0][1], found[0][2])
            if ex not in closest or margin[0] > closest[ex][0]:
                closest[ex] = margin
            if ex not in top or found[0][0] > top[ex][0]:
                top[ex] = found[0]
    out = []
    for ex, ctx in enumerate(contexts):
        if aggregation == "union":
            span = aggregate_windows(per_example.get(ex, []))
            if span is None and ex in closest:  # every window said "no answer": its nearest miss
                span = closest[ex][1:]
        else:
            pick = (closest if aggregation == "margin" else top).get(ex)
            span = None if pick is None else pick[1:]
        out.append({"text": "", "start": 0, "end": 0} if span is None
                   else {"text": ctx[span[0]:span[1]], "start": span[0], "end": span[1]})
    return out
