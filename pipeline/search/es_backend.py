"""Elasticsearch backend with the official client.

- explicit mappings: ``title`` and ``text`` with the shared English analyzer, ``id`` a keyword;
- one shard by default, so BM25 statistics are index-wide and scores deterministic; with more shards (a
  cluster) every search is ``dfs_query_then_fetch``: term statistics are gathered from all shards first, so
  scores and rankings stay those of one shard and of the embedded backend (a query_then_fetch search would
  score each shard's documents by that shard's own document frequencies);
- bulk loading with ``helpers.parallel_bulk`` (``es_bulk_threads`` chunks in flight) into an index created
  without replicas and without refreshes; documents the cluster rejects as overloaded (429) are sent again
  with ``helpers.streaming_bulk``'s retry and back-off; then replicas are added and the build waits for them
  (green health, or yellow where the cluster has too few nodes to place them: a warning says so);
- several node URLs: the client spreads requests over them and goes on when one is down;
- a versioned index (``{alias}-{build stamp}``) behind an alias that is swapped in one atomic
  ``update_aliases`` call only after the build is complete, refreshed and counted; an interrupted rebuild
  leaves the alias on the previous index, and its half-built index is removed by the next good build;
- URL and credentials from params or the environment (``QA_PIPELINE_ES_URL``, ``QA_PIPELINE_ES_API_KEY`` or
  ``QA_PIPELINE_ES_USER``/``QA_PIPELINE_ES_PASSWORD``); an unreachable cluster is a clear error within
  ``es_timeout_s`` seconds, not a long retry loop.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterable
from urllib.parse import unquote, urlsplit, urlunsplit

from elasticsearch import Elasticsearch, helpers
from elasticsearch import exceptions as es_exc

from pipeline.search.config import SearchParams
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
    def __init__(self, url: str | list[str], alias: str, shards: int = 1, timeout: float = 10.0, chunk: int = 1000,
                 retries: int = 5, api_key: str | None = None, basic_auth: tuple[str, str] | None = None,
                 search_batch: int = 100, search_timeout: float = 120.0, replicas: int = 0, threads: int = 1):
        urls = [url] if isinstance(url, str) else list(url)
        cleaned = []
        for i, u in enumerate(urls, start=1):
            try:  # a URL that does not parse is not echoed: it may hold a password ($QA_PIPELINE_ES_URL)
                clean, creds = split_credentials(u)
                parts = urlsplit(clean)
                if parts.scheme not in ("http", "https") or not parts.hostname or parts.port == 0:
                    raise ValueError
                cleaned.append((clean, creds))
            except ValueError:
                raise SearchBackendUnavailable(
                    f"Elasticsearch URL {i} of {len(urls)} is not an http(s)://host[:port] URL (not shown: it may "
                    "hold credentials); check search.es_urls / $QA_PIPELINE_ES_URL. A password with '/', '#' or '?' "
                    "goes in $QA_PIPELINE_ES_PASSWORD, not in the URL") from None
        urls = [u for u, _ in cleaned]
        basic_auth = basic_auth or next((c for _, c in cleaned if c), None)
        self.url, self.alias, self.shards, self.chunk, self.retries = ", ".join(urls), alias, shards, chunk, retries
        self.replicas, self.threads = replicas, threads
        self.search_batch, self.search_timeout = search_batch, search_timeout
        # a node that is down is skipped for the next (max_retries counts nodes tried, not back-off rounds)
        self.client = Elasticsearch(urls, request_timeout=timeout, max_retries=len(urls) - 1,
                                    retry_on_timeout=len(urls) > 1, api_key=api_key, basic_auth=basic_auth)
        try:
            self.client.info()
        except (es_exc.ConnectionError, es_exc.ConnectionTimeout) as exc:
            raise SearchBackendUnavailable(
                f"cannot reach Elasticsearch at {self.url} within {timeout:.0f}s ({type(exc).__name__}); start it "
                "(infra/elasticsearch), fix search.es_urls / $QA_PIPELINE_ES_URL, or use search.backend: embedded"
            ) from None
        except es_exc.AuthenticationException:
            raise SearchBackendUnavailable(f"Elasticsearch at {self.url} refused the credentials") from None
        # indexing may legitimately take longer than a health check
        self.client = self.client.options(request_timeout=max(timeout, 120.0))

    @classmethod
    def from_params(cls, p: SearchParams) -> "ElasticsearchBackend":
        user, password = os.environ.get("QA_PIPELINE_ES_USER"), os.environ.get("QA_PIPELINE_ES_PASSWORD")
        env_urls = [u.strip() for u in os.environ.get("QA_PIPELINE_ES_URL", "").split(",") if u.strip()]
        return cls(env_urls or p.es_urls, p.es_alias, p.es_shards, p.es_timeout_s, p.es_bulk_chunk,
                   p.es_bulk_retries, api_key=os.environ.get("QA_PIPELINE_ES_API_KEY"),
                   basic_auth=(user, password) if user and password else None, replicas=p.es_replicas,
                   threads=p.es_bulk_threads)

    @property
    def search_type(self) -> str:
        """Global term statistics when an index is split into shards (one extra round trip per search)."""
        return "dfs_query_then_fetch" if self.shards > 1 else "query_then_fetch"

    def _body(self) -> dict:
        return {
            # replicas and refreshes come after the bulk load: one copy written once, one segment merge
            "settings": {"number_of_shards": self.shards, "number_of_replicas": 0, "refresh_interval": "-1",
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
        n = self._bulk_load(actions)
        self.client.indices.put_settings(index=name, settings={"number_of_replicas": self.replicas,
                                                                "refresh_interval": None})  # back to the default
        self.client.indices.refresh(index=name)
        self._wait_for_copies(name)
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

    def _bulk_load(self, actions: Iterable[dict]) -> int:
        """``parallel_bulk`` keeps ``threads`` chunks in flight and reads ``actions`` lazily (bounded queue),
        so memory does not grow with the corpus. It does not retry: a document the cluster turned away as
        overloaded (429) is kept and sent again by ``streaming_bulk`` with exponential back-off."""
        n, rejected = 0, []
        in_flight: dict[str, dict] = {}  # sent, not yet answered: at most (queue + threads + 1) chunks

        def remembered() -> Iterable[dict]:
            for action in actions:
                in_flight[action["_id"]] = action
                yield action

        for ok, item in helpers.parallel_bulk(self.client, remembered(), thread_count=self.threads,
                                              chunk_size=self.chunk, queue_size=self.threads * 2,
                                              raise_on_error=False, raise_on_exception=True):
            info = next(iter(item.values()))
            action = in_flight.pop(str(info.get("_id")), None)
            if ok:
                n += 1
            elif info.get("status") == 429 and action is not None:
                rejected.append(action)
            else:
                raise RuntimeError(f"document {info.get('_id')!r} was refused: {info.get('error')}")
        if rejected:
            logging.getLogger(__name__).warning("%d documents rejected as overloaded (429): sending again",
                                                len(rejected))
            for ok, _item in helpers.streaming_bulk(self.client, rejected, chunk_size=self.chunk,
                                                   max_retries=self.retries, initial_backoff=2, max_backoff=120,
                                                   raise_on_error=True):
                n += ok
        return n

    def _wait_for_copies(self, name: str) -> None:
        nodes = int(self.client.cluster.health()["number_of_data_nodes"])
        wanted = "green" if self.replicas < nodes else "yellow"
        if wanted == "yellow":
            logging.getLogger(__name__).warning(
                "%d replica(s) cannot be placed on %d data node(s): index %s stays yellow (no second copy)",
                self.replicas, nodes, name)
        health = self.client.cluster.health(index=name, wait_for_status=wanted, timeout="120s")
        if health.get("timed_out"):
            raise RuntimeError(f"{name}: shards not {wanted} after 120 s ({health.get('unassigned_shards')} "
                               f"unassigned); alias {self.alias} not moved")

    def search(self, queries: dict[str, str], k: int) -> Run:
        run: Run = {}
        items = list(queries.items())
        for start in range(0, len(items), self.search_batch):
            batch = items[start:start + self.search_batch]
            body: list[dict] = []
            for _, text in batch:
                # ties broken by id, not by which shard or segment a document landed in (parallel loading
                # makes that order vary): the top k is the same on every build, and the embedded backend's
                body += [{"index": self.alias}, {"size": k, "_source": False,
                                                 "sort": [{"_score": "desc"}, {"id": "asc"}],
                                                 "query": {"bool": {"should": [
                                                     {"match": {"title": text}}, {"match": {"text": text}}]}}}]
            responses = self.client.options(request_timeout=self.search_timeout).msearch(
                searches=body, search_type=self.search_type)["responses"]
            for (qid, _), resp in zip(batch, responses, strict=True):
                if "error" in resp:
                    raise RuntimeError(f"query {qid!r} failed: {resp['error']}")
                hits = [(float(h["_score"]), h["_id"]) for h in resp["hits"]["hits"]]
                run[qid] = {doc_id: score for score, doc_id in sorted(hits, key=lambda h: (-h[0], h[1]))}
        return run
