"""Inputs of the multiple-choice transformer, whole and partial (Sugawara et al. 2022 ablations).

``full`` pairs the passage with question + option (as HF's ``run_swag`` pairs context and ending);
``passage_options`` drops the question, ``question_options`` drops the passage, ``options`` keeps only the
option. A model trained and tested on a partial input shows how far a set can be answered without it.
"""

from __future__ import annotations

from pipeline.quail.data import MCQuestion
from pipeline.quail.passage_window import relevant_passage
from pipeline.quail.systems import MC_VARIANTS
from pipeline.training.pair_encoding import PairFeatures, encode_pairs

VARIANTS = MC_VARIANTS


def pair_texts(q: MCQuestion, variant: str, max_words: int) -> tuple[list[str], list[str] | None]:
    """The two texts per option. A passage longer than the input holds is cut to its sentences most related to
    what the input asks (``pipeline.quail.passage_window``): question and options, or the options alone."""
    if variant == "full":
        passage = relevant_passage(q.context, " ".join((q.question, *q.options)), max_words)
        return [passage] * len(q.options), [f"{q.question} {o}" for o in q.options]
    if variant == "passage_options":
        passage = relevant_passage(q.context, " ".join(q.options), max_words)
        return [passage] * len(q.options), list(q.options)
    if variant == "question_options":
        return [q.question] * len(q.options), list(q.options)
    if variant == "options":
        return list(q.options), None
    raise ValueError(f"unknown input variant {variant!r}; choose one of {', '.join(VARIANTS)}")


def encode_questions(tokenizer, questions: list[MCQuestion], variant: str, max_len: int) -> PairFeatures:
    n_opts = {len(q.options) for q in questions}
    if len(n_opts) > 1:
        raise ValueError(f"questions have different numbers of options: {sorted(n_opts)}")
    first: list[str] = []
    second: list[str] = []
    for q in questions:
        a, b = pair_texts(q, variant, max_len)  # a word is one token or more: max_len words fill the input
        first += a
        if b is not None:
            second += b
    return encode_pairs(tokenizer, first, second if variant != "options" else None, max_len)
