"""NLQuAD's files in the SQuAD layout (``data -> paragraphs -> qas``): the one walk every reader uses, and
the statistics of the paper's Table 2, computed once for the build report and the dataset card.

NLQuAD has one paragraph per article (the article with its headings removed: the document) and exactly one
answer per question; the walk does not rely on either, the flat records take the first answer."""

from __future__ import annotations

import statistics
from collections.abc import Iterator
from typing import Any


def iter_article_qas(dataset: dict) -> Iterator[tuple[dict[str, Any], dict[str, Any], dict[str, Any]]]:
    """``(article, paragraph, qa)`` for every question, in file order."""
    for art in dataset["data"]:
        for para in art["paragraphs"]:
            for qa in para["qas"]:
                yield art, para, qa


def iter_qas(dataset: dict) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    """``(paragraph, qa)`` for every question, in file order."""
    for _, para, qa in iter_article_qas(dataset):
        yield para, qa


def iter_examples(dataset: dict) -> Iterator[dict[str, Any]]:
    """One record per question with its first gold answer (NLQuAD has exactly one)."""
    for para, qa in iter_qas(dataset):
        ans = qa["answers"][0]
        yield {"id": qa["id"], "question": qa["question"], "context": para["context"], "gold": ans["text"],
               "gold_span": (ans["answer_start"], ans["answer_end"])}


def table2_statistics(dataset: dict[str, Any], digits: int) -> dict[str, Any]:
    """The columns of NLQuAD's Table 2 (Soleimani et al. 2021): counts, and document, question and answer
    lengths in whitespace words as the paper counts them, rounded to ``digits``. The build report and the
    dataset card each show their columns of this one table."""
    docs = [p for a in dataset["data"] for p in a["paragraphs"]]
    doc_words = [len(p["context"].split()) for p in docs]
    question_words = [len(qa["question"].split()) for _, qa in iter_qas(dataset)]
    answer_words = [len(qa["answers"][0]["text"].split()) for _, qa in iter_qas(dataset)]

    def stat(xs: list[int], f) -> float:
        return round(float(f(xs)), digits) if xs else 0.0

    return {
        "articles": len(dataset["data"]),
        "documents": len(docs),
        "questions": len(answer_words),
        "questions_per_document": round(len(answer_words) / len(docs), digits) if docs else 0.0,
        "document_words_mean": stat(doc_words, statistics.mean),
        "document_words_median": stat(doc_words, statistics.median),
        "question_words_mean": stat(question_words, statistics.mean),
        "answer_words_mean": stat(answer_words, statistics.mean),
        "answer_words_median": stat(answer_words, statistics.median),
    }
