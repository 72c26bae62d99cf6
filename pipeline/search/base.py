"""The backend interface and the factory that ``search.backend`` selects from."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Protocol

from pipeline.params import SearchParams

Run = dict[str, dict[str, float]]  # BEIR/ranx: {query_id: {doc_id: score}}


class SearchBackend(Protocol):
    def index(self, docs: Iterable[dict]) -> int:
        """Index docs with ``id``, ``title``, ``text``; return how many. Replaces any earlier index."""

    def search(self, queries: dict[str, str], k: int) -> Run:
        """Top-``k`` BM25 hits per query over ``title`` and ``text`` (scores summed, as ES ``bool.should``)."""


def make_backend(params: SearchParams, index_dir: Path) -> SearchBackend:
    if params.backend == "embedded":
        from pipeline.search.tantivy_backend import TantivyBackend

        return TantivyBackend(index_dir)
    from pipeline.search.es_backend import ElasticsearchBackend

    return ElasticsearchBackend.from_params(params)
