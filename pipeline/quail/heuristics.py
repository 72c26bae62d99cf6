"""The QuAIL paper's heuristic baselines: random, LongChoice, the PMI solver and the IR solver.

Each ``predict_*`` returns ``{qid: option index}``. "Not enough information" is the option QuAIL puts in
every question; the heuristics fall back to it where they find no evidence, as the paper describes.
"""

from __future__ import annotations

import math
import random
import re
import tempfile
from collections import defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path

from pipeline.common.sentences import split_sentences
from pipeline.quail.data import NOT_ENOUGH_INFO, MCQuestion
from pipeline.common.stop_words import ENGLISH_STOP_WORDS
from pipeline.search.base import SearchBackend

_WORD = re.compile(r"\w+(?:'\w+)?")


def nei_index(q: MCQuestion) -> int | None:
    """The index of the "not enough information" option, if the question has one."""
    return next((i for i, o in enumerate(q.options) if o.strip().lower().rstrip(".") == NOT_ENOUGH_INFO), None)


def predict_random(questions: list[MCQuestion], seed: int) -> dict[str, int]:
    rng = random.Random(seed)
    return {q.qid: rng.randrange(len(q.options)) for q in questions}


def unanswerable_share(training: Iterable[MCQuestion]) -> float:
    qs = list(training)
    return sum(q.question_type == "Unanswerable" for q in qs) / len(qs) if qs else 0.0


def predict_longchoice(questions: list[MCQuestion], p_unanswerable: float, seed: int) -> dict[str, int]:
    """"Not enough information" with probability ``p_unanswerable``, otherwise the longest other option
    (in characters; the first of equally long ones)."""
    rng = random.Random(seed)
    out = {}
    for q in questions:
        nei = nei_index(q)
        draw = rng.random()  # drawn for every question, so one question's options do not shift the others
        if nei is not None and draw < p_unanswerable:
            out[q.qid] = nei
            continue
        candidates = [i for i in range(len(q.options)) if i != nei] or list(range(len(q.options)))
        out[q.qid] = max(candidates, key=lambda i: (len(q.options[i]), -i))
    return out


def content_words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def ngrams(words: list[str], max_n: int, stop_word_ngrams: bool = True) -> set[tuple[str, ...]]:
    """Distinct n-grams (1..max_n); ``stop_word_ngrams=False`` drops those made only of stop words.

    Clark et al.'s PMI solver, which the paper uses, extracts every n-gram. Dropping stop-word n-grams (this
    project's first reading) leaves most options with no pair inside the 10-word window on a ~300-word
    passage, so "all zeros -> not enough information" fired for 37% of dev questions: Unanswerable 62.5%
    right (paper 23.3), the answerable types far below the paper's. With every n-gram: 41.7 overall
    (paper 41.8), Unanswerable 25.0."""
    return {tuple(words[i:i + n]) for n in range(1, max_n + 1) for i in range(len(words) - n + 1)
            if stop_word_ngrams or not all(w in ENGLISH_STOP_WORDS for w in words[i:i + n])}


class PassagePMI:
    """PMI of n-gram pairs estimated on one passage: p(x) = count(x)/N over the N word positions, and
    p(x, y) = (occurrence pairs of x and y starting within ``window`` words of each other)/N."""

    def __init__(self, passage: str, window: int = 10, max_n: int = 3, stop_word_ngrams: bool = True):
        self.words = content_words(passage)
        self.window, self.max_n, self.stop_word_ngrams = window, max_n, stop_word_ngrams
        self.positions: dict[tuple[str, ...], list[int]] = defaultdict(list)
        for n in range(1, max_n + 1):
            for i in range(len(self.words) - n + 1):
                self.positions[tuple(self.words[i:i + n])].append(i)

    def pmi(self, x: tuple[str, ...], y: tuple[str, ...]) -> float:
        px, py = self.positions.get(x, []), self.positions.get(y, [])
        if not px or not py:
            return 0.0
        together = sum(1 for i in px for j in py if abs(i - j) <= self.window)
        if not together:
            return 0.0
        n = len(self.words)
        return math.log((together / n) / ((len(px) / n) * (len(py) / n)))

    def score(self, question: str, option: str) -> float:
        """Mean PMI over all (question n-gram, option n-gram) pairs."""
        qg = ngrams(content_words(question), self.max_n, self.stop_word_ngrams)
        og = ngrams(content_words(option), self.max_n, self.stop_word_ngrams)
        if not qg or not og:
            return 0.0
        # fsum: exactly rounded, so the score does not depend on set order (string hashing differs per process)
        return math.fsum(self.pmi(x, y) for x in qg for y in og) / (len(qg) * len(og))


def _pick(q: MCQuestion, scores: list[float]) -> int:
    """Best-scoring option; "not enough information" when no option scored at all."""
    nei = nei_index(q)
    if all(s == 0.0 for s in scores) and nei is not None:
        return nei
    return max(range(len(scores)), key=lambda i: (scores[i], -i))


def predict_pmi(questions: list[MCQuestion], window: int = 10, max_n: int = 3,
                stop_word_ngrams: bool = True) -> dict[str, int]:
    cache: dict[str, PassagePMI] = {}
    out = {}
    for q in questions:
        if q.text_id not in cache:
            cache[q.text_id] = PassagePMI(q.context, window, max_n, stop_word_ngrams)
        nei = nei_index(q)
        scores = [0.0 if i == nei else cache[q.text_id].score(q.question, o) for i, o in enumerate(q.options)]
        out[q.qid] = _pick(q, scores)
    return out


def passage_sentences(context: str) -> list[str]:
    return [s for line in context.splitlines() for s in split_sentences(line)]


_STOP = frozenset(ENGLISH_STOP_WORDS)


def _non_stop(text: str) -> set[str]:
    return set(content_words(text)) - _STOP


def predict_ir(questions: list[MCQuestion], make_backend: Callable[[Path], SearchBackend],
               require_overlap: bool = True) -> dict[str, int]:
    """Per text, the search backend indexes its sentences; an option scores its best sentence for the query
    ``question + option`` (0 without one), and "not enough information" is taken when no option scored.

    ``require_overlap`` is Clark et al.'s rule, which the paper's IR solver follows: a sentence counts only
    if it shares a non-stop word with the question and one with the option. Without it BM25 nearly always
    returns a sentence for the question's own words, so "no hit" never happens (Unanswerable 2.1% right on
    dev, paper 28.8) and an option is rewarded for words it does not contribute."""
    by_text: dict[str, list[MCQuestion]] = defaultdict(list)
    for q in questions:
        by_text[q.text_id].append(q)
    out: dict[str, int] = {}
    with tempfile.TemporaryDirectory(prefix="quail-ir-") as tmp:
        for text_id, qs in by_text.items():
            backend = make_backend(Path(tmp) / text_id)
            sentences = passage_sentences(qs[0].context)
            words = {f"{text_id}:{i}": _non_stop(s) for i, s in enumerate(sentences)}
            backend.index({"id": f"{text_id}:{i}", "title": "", "text": s} for i, s in enumerate(sentences))
            queries = {f"{q.qid}|{i}": f"{q.question} {o}" for q in qs for i, o in enumerate(q.options)
                       if i != nei_index(q)}
            run = backend.search(queries, len(sentences) if require_overlap else 1)
            for q in qs:
                q_words = _non_stop(q.question)
                scores = []
                for i, option in enumerate(q.options):
                    o_words = _non_stop(option)
                    hits = sorted(run.get(f"{q.qid}|{i}", {}).items(), key=lambda kv: (-kv[1], kv[0]))
                    scores.append(next((score for doc, score in hits
                                        if not require_overlap or (words[doc] & q_words and words[doc] & o_words)),
                                       0.0))
                out[q.qid] = _pick(q, scores)
    return out
