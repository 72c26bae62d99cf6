"""Lucene's ``EnglishAnalyzer.ENGLISH_STOP_WORDS_SET`` (what Elasticsearch's ``_english_`` names): the search
analysis removes these, and the sample's question generator skips them, without one depending on the other."""

from __future__ import annotations

ENGLISH_STOP_WORDS: tuple[str, ...] = (
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it", "no", "not",
    "of", "on", "or", "such", "that", "the", "their", "then", "there", "these", "they", "this", "to", "was",
    "will", "with",
)
