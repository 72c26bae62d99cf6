"""NLQuAD's non-neural baselines on the same split: windows of the document chosen without a model.

- first / last window: the first or last ``window_words`` words;
- random window: a window starting at a random sentence (seeded);
- BM25L: windows of ``window_words`` words that move one sentence at a time, ranked by BM25L
  (``rank_bm25``) against the question; the top window is the answer;
- BM25L-oracle: the same with each window as long as the gold answer, an upper bound for window retrieval.

A window is a character span of the document, so every metric (IoU included) applies unchanged.
"""

from __future__ import annotations

import random
from functools import lru_cache
from typing import Any

from rank_bm25 import BM25L

from pipeline.common.logs import progress
from pipeline.common.sentences import sentence_starts
from pipeline.search.analysis import tantivy_analyzer
from pipeline.nlquad.squad_format import iter_examples
from pipeline.nlquad.metrics import token_offsets


@lru_cache(maxsize=1)
def _analyzer():
    return tantivy_analyzer()  # the search stages' English analysis, so "BM25" means one thing here


def analyze(text: str) -> list[str]:
    """The terms BM25L matches: the search stages' English analysis."""
    return _analyzer().analyze(text)


_analyze = analyze


def _window(offsets: list[tuple[int, int]], first_word: int, n_words: int) -> tuple[int, int]:
    last = min(len(offsets), first_word + max(n_words, 1)) - 1
    return offsets[first_word][0], offsets[last][1]


def sentence_windows(context: str, n_words: int) -> list[tuple[int, int]]:
    """Windows of ``n_words`` words starting at each sentence start (deduplicated, in order)."""
    offsets = token_offsets(context)
    if not offsets:
        return []
    word_at = {}
    j = 0
    for start in sentence_starts(context):
        while j < len(offsets) and offsets[j][1] <= start:
            j += 1
        if j < len(offsets):
            word_at.setdefault(j, None)
    return list(dict.fromkeys(_window(offsets, w, n_words) for w in word_at))


def _pred(context: str, span: tuple[int, int]) -> dict:
    return {"text": context[span[0]:span[1]], "start": span[0], "end": span[1]}


def run_baselines(dataset: dict[str, Any], window_words: int, seed: int,
                  oracle: bool = True) -> dict[str, dict[str, dict]]:
    """Every window baseline's prediction per question; ``oracle=False`` skips the BM25L oracle (it re-windows
    each document per question, most of the time here), for a caller that does not report it."""
    rng = random.Random(seed)
    preds: dict[str, dict[str, dict]] = {k: {} for k in ("first_window", "last_window", "random_window",
                                                           "bm25l", "bm25l_oracle")}
    cache: dict[int, tuple] = {}
    questions = sum(len(par["qas"]) for doc in dataset["data"] for par in doc["paragraphs"])
    for ex in progress(iter_examples(dataset), "window baselines", total=questions, unit="questions"):
        ctx = ex["context"]
        if id(ctx) not in cache:
            windows = sentence_windows(ctx, window_words)
            cache[id(ctx)] = (token_offsets(ctx), windows,
                              BM25L([_analyze(ctx[s:e]) for s, e in windows]) if windows else None)
        offsets, windows, bm25 = cache[id(ctx)]
        if not offsets:
            continue
        qid, query = ex["id"], _analyze(ex["question"])
        preds["first_window"][qid] = _pred(ctx, _window(offsets, 0, window_words))
        preds["last_window"][qid] = _pred(ctx, _window(offsets, max(0, len(offsets) - window_words), window_words))
        preds["random_window"][qid] = _pred(ctx, rng.choice(windows))
        scores = bm25.get_scores(query)
        preds["bm25l"][qid] = _pred(ctx, windows[max(range(len(windows)), key=lambda i: (scores[i], -i))])
        if not oracle:
            continue
        oracle_windows = sentence_windows(ctx, len(ex["gold"].split()))
        oracle_bm25 = BM25L([_analyze(ctx[s:e]) for s, e in oracle_windows])
        o_scores = oracle_bm25.get_scores(query)
        preds["bm25l_oracle"][qid] = _pred(ctx, oracle_windows[max(range(len(oracle_windows)), key=lambda i: (o_scores[i], -i))])
    return preds
