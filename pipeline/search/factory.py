"""The backend ``search.backend`` selects: tantivy on disk (embedded) or an Elasticsearch cluster."""

from __future__ import annotations

from pathlib import Path

from pipeline.search.config import SearchParams
from pipeline.search.base import SearchBackend


def make_backend(params: SearchParams, index_dir: Path) -> SearchBackend:
    if params.backend == "embedded":
        from pipeline.search.tantivy_backend import TantivyBackend

        return TantivyBackend(index_dir, threads=params.index_threads)
    from pipeline.search.es_backend import ElasticsearchBackend

    return ElasticsearchBackend.from_params(params)
