"""Small text utilities shared by stages."""

from __future__ import annotations

import re

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")


def split_sentences(text: str) -> list[str]:
    """A plain regex splitter for English prose: good enough for layout and sentence-stepped windows."""
    return [s.strip() for s in _SENTENCE_END.split(text.strip()) if s.strip()]


def sentence_starts(text: str) -> list[int]:
    """Character offsets where sentences begin (the first is 0 for non-empty text)."""
    starts = [0] if text.strip() else []
    starts += [m.end() for m in _SENTENCE_END.finditer(text)]
    return starts
