"""The backend interface (BEIR's ``search(corpus, queries, k)`` shape): a leaf that imports no backend, so every
backend can import it and the factory in ``pipeline.search.factory`` can import every backend."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

Run = dict[str, dict[str, float]]  # BEIR/ranx: {query_id: {doc_id: score}}


class SearchBackend(Protocol):
    def index(self, docs: Iterable[dict]) -> int:
        """Index docs with ``id``, ``title``, ``text``; return how many. Replaces any earlier index."""

    def search(self, queries: dict[str, str], k: int) -> Run:
        """Top-``k`` BM25 hits per query over ``title`` and ``text`` (scores summed, as ES ``bool.should``)."""
