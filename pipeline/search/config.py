"""The ``search`` section of params.yaml: which backend, and how an Elasticsearch cluster is reached and loaded."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from pipeline.common.strict_model import StrictModel
from pipeline.common.trust import Infrastructure


class SearchParams(StrictModel):
    """The search backend (``index`` and ``retrieve`` stages, and the QuAIL IR solver)."""

    backend: Infrastructure[Literal["embedded", "elasticsearch"]]
    es_urls: Infrastructure[list[str]] = Field(
        min_length=1, description="the cluster's nodes; overridden by $QA_PIPELINE_ES_URL")
    es_alias: Infrastructure[str]
    es_shards: Infrastructure[int] = Field(
        ge=1, description="more than 1: searched with dfs_query_then_fetch (global BM25 statistics)")
    es_replicas: Infrastructure[int] = Field(
        ge=0, description="copies of each shard on other nodes, added after the bulk load")
    es_timeout_s: Infrastructure[float] = Field(gt=0)
    es_bulk_chunk: Infrastructure[int] = Field(ge=1)
    es_bulk_threads: Infrastructure[int] = Field(
        ge=1, le=64, description="parallel_bulk threads sending chunks at once")
    es_bulk_retries: Infrastructure[int] = Field(ge=0)
    index_threads: Infrastructure[int] = Field(
        ge=1, le=64, description="tantivy writer threads; 1 gives a byte-identical index "
                                 "(DVC sees no change on a rebuild), more are faster")

    @field_validator("es_urls")
    @classmethod
    def _no_credentials_in_url(cls, value: list[str]) -> list[str]:
        # params.yaml is committed and recorded in dvc.lock: a password here would be published
        # Any "@" is refused, not only one in the host part as a URL parser reads it: a password holding "/",
        # "#" or "?" moves the parser's host boundary before the "@". An ES URL needs no "@" anywhere. The
        # URL itself is never echoed when it is refused for this.
        for i, url in enumerate(value):
            if "@" in url:
                raise ValueError(f"entry {i + 1} must not contain credentials; set QA_PIPELINE_ES_USER/"
                                 "QA_PIPELINE_ES_PASSWORD or QA_PIPELINE_ES_API_KEY in the environment (or `dvc exp "
                                 "run` with them exported)")
            if not url.lower().startswith(("http://", "https://")):
                raise ValueError(f"{url!r} is not an http(s) URL such as http://127.0.0.1:9200")
        return value
