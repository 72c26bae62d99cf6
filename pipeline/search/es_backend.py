"""Elasticsearch backend with the official client.

- explicit mappings: ``title`` and ``text`` with the shared English analyzer, ``id`` a keyword;
- one shard by default, so BM25 statistics are index-wide and scores deterministic;
- ``helpers.streaming_bulk`` in chunks, with the client's own retry and back-off on 429;
- a versioned index (``{alias}-{build stamp}``) behind an alias that is swapped in one atomic
  ``update_aliases`` call only after the build is complete, refreshed and counted; an interrupted rebuild
  leaves the alias on the previous index, and its half-built index is removed by the next good build;
- URL and credentials from params or the environment (``QA_PIPELINE_ES_URL``, ``QA_PIPELINE_ES_API_KEY`` or
  ``QA_PIPELINE_ES_USER``/``QA_PIPELINE_ES_PASSWORD``); an unreachable cluster is a clear error within
  ``es_timeout_s`` seconds, not a long retry loop.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from urllib.parse import unquote, urlsplit, urlunsplit

from elasticsearch import Elasticsearch, helpers
from elasticsearch import exceptions as es_exc

from pipeline.params import SearchParams
from pipeline.search.analysis import ANALYZER, elasticsearch_analysis
from pipeline.search.base import Run


class SearchBackendUnavailable(RuntimeError):
    """The configured search service cannot be reached; the message says where and why."""


def split_credentials(url: str) -> tuple[str, tuple[str, str] | None]:
    """``http://user:pass@host:9200`` -> (``http://host:9200``, (user, pass)): credentials never travel in
    a URL that could be printed, logged or stored in the Prefect database."""
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url, None
    host = parts.hostname or ""
    netloc = f"[{host}]" if ":" in host else host
    if parts.port:
        netloc += f":{parts.port}"
    clean = urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))
    return clean, (unquote(parts.username or ""), unquote(parts.password or ""))


def mask_url(url: str) -> str:
    """The URL as it may be shown: any user:password replaced by ``***``."""
    clean, creds = split_credentials(url)
    if creds is None:
        return url
    parts = urlsplit(clean)
    return urlunsplit((parts.scheme, "***@" + parts.netloc, parts.path, parts.query, parts.fragment))


class ElasticsearchBackend:
    def __init__(self, url: str, alias: str, shards: int = 1, timeout: float = 10.0, chunk: int = 1000,
                 retries: int = 5, api_key: str | None = None, basic_auth: tuple[str, str] | None = None,
                 search_batch: int = 100, search_timeout: float = 120.0):
        url, in_url = split_credentials(url)
        basic_auth = basic_auth or in_url
        self.url, self.alias, self.shards, self.chunk, self.retries = url, alias, shards, chunk, retries
        self.search_batch, self.search_timeout = search_batch, search_timeout
        self.client = Elasticsearch(url, request_timeout=timeout, max_retries=0, retry_on_timeout=False,
                                    api_key=api_key, basic_auth=basic_auth)
        try:
            self.client.info()
        except (es_exc.ConnectionError, es_exc.ConnectionTimeout) as exc:
            raise SearchBackendUnavailable(
                f"cannot reach Elasticsearch at {url} within {timeout:.0f}s ({type(exc).__name__}); start it "
                "(infra/elasticsearch), fix search.es_url / $QA_PIPELINE_ES_URL, or use search.backend: embedded"
            ) from None
        except es_exc.AuthenticationException:
            raise SearchBackendUnavailable(f"Elasticsearch at {url} refused the credentials") from None
        # indexing may legitimately take longer than a health check
        self.client = self.client.options(request_timeout=max(timeout, 120.0))

    @classmethod
    def from_params(cls, p: SearchParams) -> "ElasticsearchBackend":
        user, password = os.environ.get("QA_PIPELINE_ES_USER"), os.environ.get("QA_PIPELINE_ES_PASSWORD")
        return cls(os.environ.get("QA_PIPELINE_ES_URL", p.es_url), p.es_alias, p.es_shards, p.es_timeout_s,
                   p.es_bulk_chunk, p.es_bulk_retries, api_key=os.environ.get("QA_PIPELINE_ES_API_KEY"),
                   basic_auth=(user, password) if user and password else None)

    def _body(self) -> dict:
        return {
            "settings": {"number_of_shards": self.shards, "number_of_replicas": 0,
                         "analysis": elasticsearch_analysis()},
            "mappings": {"dynamic": "strict", "properties": {
                "id": {"type": "keyword"},
                "title": {"type": "text", "analyzer": ANALYZER},
                "text": {"type": "text", "analyzer": ANALYZER},
            }},
        }

    def index(self, docs: Iterable[dict]) -> int:
        name = f"{self.alias}-{time.strftime('%Y%m%d%H%M%S')}-{time.time_ns() % 1_000_000:06d}"
        self.client.indices.create(index=name, **self._body())
        actions = ({"_index": name, "_id": str(d["id"]),
                    "_source": {"id": str(d["id"]), "title": d.get("title") or "", "text": d.get("text") or ""}}
                   for d in docs)
        n = 0
        for ok, _item in helpers.streaming_bulk(self.client, actions, chunk_size=self.chunk, max_retries=self.retries,
                                               initial_backoff=2, max_backoff=120, raise_on_error=True):
            n += ok
        self.client.indices.refresh(index=name)
        count = self.client.count(index=name)["count"]
        if count != n:
            raise RuntimeError(f"{name} holds {count} documents after indexing {n}; alias {self.alias} not moved")
        old = list(self.client.indices.get_alias(name=self.alias, ignore_unavailable=True).keys()) \
            if self.client.indices.exists_alias(name=self.alias) else []
        actions_ = [{"remove": {"index": o, "alias": self.alias}} for o in old] + [{"add": {"index": name, "alias": self.alias}}]
        self.client.indices.update_aliases(actions=actions_)
        for stale in self.client.indices.get(index=f"{self.alias}-*"):
            if stale != name:
                self.client.indices.delete(index=stale)
        return n

    def search(self, queries: dict[str, str], k: int) -> Run:
        run: Run = {}
        items = list(queries.items())
        for start in range(0, len(items), self.search_batch):
            batch = items[start:start + self.search_batch]
            body: list[dict] = []
            for _, text in batch:
                body += [{"index": self.alias}, {"size": k, "_source": False, "query": {"bool": {"should": [
                    {"match": {"title": text}}, {"match": {"text": text}}]}}}]
            responses = self.client.options(request_timeout=self.search_timeout).msearch(searches=body)["responses"]
            for (qid, _), resp in zip(batch, responses, strict=True):
                if "error" in resp:
                    raise RuntimeError(f"query {qid!r} failed: {resp['error']}")
                hits = [(float(h["_score"]), h["_id"]) for h in resp["hits"]["hits"]]
                run[qid] = {doc_id: score for score, doc_id in sorted(hits, key=lambda h: (-h[0], h[1]))}
        return run
