"""Which part of a passage a short input holds: the sentences that share most words with the question and options.

A QuAIL passage runs 300-500 words; a multiple-choice input of 128 tokens per option holds about a fifth of it.
Cut at its start, that fifth is where the story begins, not what the question asks about, and a model reading
it can do no better than one that reads the options alone. A retrieve-then-read input keeps the sentences that
share the most content words (lower-cased, stop words removed) with the question and all its options: the same
text for every option, so the options are compared on one piece of evidence. Sentences go in order of that
overlap (ties: earlier first), so the tokenizer's truncation drops the least related ones; a passage that fits
is kept whole and in order.
"""

from __future__ import annotations

import re

from pipeline.common.sentences import split_sentences
from pipeline.common.stop_words import ENGLISH_STOP_WORDS

_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_STOP = frozenset(ENGLISH_STOP_WORDS)


def _content(text: str) -> set[str]:
    return set(_WORD.findall(text.lower())) - _STOP


def relevant_passage(context: str, query: str, max_words: int) -> str:
    """``context`` whole when it has at most ``max_words`` words, else its sentences most related to ``query``
    (most related first) until they hold ``max_words`` words."""
    if len(context.split()) <= max_words:
        return context
    sentences = [s for line in context.splitlines() for s in split_sentences(line)]
    wanted = _content(query)
    ranked = sorted(range(len(sentences)), key=lambda i: (-len(_content(sentences[i]) & wanted), i))
    picked, words = [], 0
    for i in ranked:
        if words >= max_words:
            break
        picked.append(sentences[i])
        words += len(sentences[i].split())
    return " ".join(picked)
