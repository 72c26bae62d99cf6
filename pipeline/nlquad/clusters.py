"""The unit NLQuAD samples: the article. Its split keeps every article's questions together and its intervals
resample articles, so a question's article is looked up in one place. Kept apart from the calibration (which
runs the BM25L baseline) so that the comparison stage, which the GPU node runs, imports no retrieval package."""

from __future__ import annotations

from typing import Any

from pipeline.nlquad.squad_format import iter_article_qas


def article_clusters(dataset: dict[str, Any]) -> dict[str, str]:
    """Question id -> its article (one entry of ``data`` per article)."""
    labels: dict[str, str] = {}
    articles: dict[int, str] = {}
    for art, _, qa in iter_article_qas(dataset):
        labels[qa["id"]] = articles.setdefault(id(art), f"article-{len(articles)}")
    return labels
