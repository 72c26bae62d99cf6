"""From per-window logits to one answer per question, as the NLQuAD paper aggregates windows.

Per window: the best (start, end) among the ``n_best`` highest start and end logits, restricted to context
tokens, end >= start and at most ``max_answer_tokens`` long (HF ``utils_qa.py``'s n-best search); the window
is *empty* when the CLS (no-answer) score beats it. Per question: the span from the earliest start to the
latest end among non-empty windows; empty when every window is empty. Longformer sees the whole document
in one window, so the same code yields its single span.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def best_window_span(start_logits: Sequence[float], end_logits: Sequence[float],
                     offsets: Sequence[tuple[int, int] | None], n_best: int,
                     max_answer_tokens: int) -> tuple[float, int, int] | None:
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
    if best is None or best[0] <= null_score:
        return None
    return best


def aggregate_windows(spans: Sequence[tuple[int, int] | None]) -> tuple[int, int] | None:
    """Earliest start to latest end over the windows that found an answer; None if none did."""
    found = [s for s in spans if s is not None]
    if not found:
        return None
    return min(s for s, _ in found), max(e for _, e in found)


def predict_from_logits(example_index: Sequence[int], offsets: Sequence[Sequence[tuple[int, int] | None]],
                        start_logits: Sequence[Sequence[float]], end_logits: Sequence[Sequence[float]],
                        contexts: Sequence[str], n_best: int, max_answer_tokens: int) -> list[dict]:
    """One ``{"text", "start", "end"}`` per example (empty text and 0/0 when every window is empty)."""
    per_example: dict[int, list[tuple[int, int] | None]] = {}
    for i, ex in enumerate(example_index):
        found = best_window_span(start_logits[i], end_logits[i], offsets[i], n_best, max_answer_tokens)
        per_example.setdefault(ex, []).append(None if found is None else (found[1], found[2]))
    out = []
    for ex, ctx in enumerate(contexts):
        span = aggregate_windows(per_example.get(ex, []))
        out.append({"text": "", "start": 0, "end": 0} if span is None
                   else {"text": ctx[span[0]:span[1]], "start": span[0], "end": span[1]})
    return out
