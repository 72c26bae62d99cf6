"""How much a question's own words give its answer away: the cue a lexical window ranker (BM25L) exploits.

A question *names its answer* when one of its terms (the search stages' English analysis: stop words removed,
stemmed) occurs in its answer section and nowhere else in its document. "Why does Grand Slam (tennis) matter?"
names the section about the Grand Slam; "What happens next?" names nothing. The share is reported with the data
set (``reports/nlquad.json``) so a claim about what a model could learn from the questions is a measurement.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from pipeline.nlquad.squad_format import iter_examples
from pipeline.search.analysis import tantivy_analyzer


@lru_cache(maxsize=1)
def _analyzer():
    return tantivy_analyzer()


def question_terms(text: str) -> set[str]:
    """A text's terms as the search stages analyse it (what a question shares with a section, for BM25L)."""
    return set(_analyzer().analyze(text))


_terms = question_terms


def names_answer(question: str, context: str, span: tuple[int, int]) -> bool:
    """True when a term of ``question`` is in ``context[span]`` and in no other part of ``context``."""
    inside = _terms(context[span[0]:span[1]])
    outside = _terms(context[:span[0]]) | _terms(context[span[1]:])
    return bool(_terms(question) & (inside - outside))


def heading_names_answer(dataset: dict[str, Any]) -> dict[str, Any]:
    """The share (percent) of questions whose heading names its answer section, and the count behind it."""
    flags = [names_answer(ex["question"], ex["context"], ex["gold_span"]) for ex in iter_examples(dataset)]
    return {"share": round(100 * sum(flags) / len(flags), 2) if flags else None, "questions": len(flags),
            "naming": sum(flags),
            "rule": "a question term (English analysis, stop words removed, stemmed) occurs in its answer section "
                    "and nowhere else in the document"}
