"""Elasticsearch as a cluster: several shards (searched with dfs_query_then_fetch), replicas added after a
parallel bulk load, several node URLs. The API against noida-db on 127.0.0.1; the per-shard statistics against
a real multi-node cluster when one is reachable (QA_PIPELINE_ES_CLUSTER_URLS, e.g. the nodes of
infra/elasticsearch/docker-compose.cluster.yml), skipped with the reason otherwise.

noida-db keeps one set of BM25 statistics whatever the shard count, so on it rankings are equal with either
search type; only a real cluster shows what dfs_query_then_fetch is for."""

from __future__ import annotations

import logging
import os
import socket
from collections import Counter

import pytest

from pipeline.sample.build import DUMP_NAME
from pipeline.search.es_backend import ElasticsearchBackend
from pipeline.search.tantivy_backend import TantivyBackend
from pipeline.wiki.paragraphs import dump_paragraphs

pytestmark = pytest.mark.slow  # starts noida-db nodes


@pytest.fixture(scope="module")
def corpus(small_sample):
    return [{"id": p.id, "title": p.title, "text": p.text} for p in dump_paragraphs(small_sample / DUMP_NAME, Counter(), min_chars=2)]


@pytest.fixture(scope="module")
def queries(corpus):
    return {f"w{i}": " ".join(d["text"].split()[2:8]) for i, d in enumerate(corpus[::17])}


@pytest.fixture(scope="module")
def embedded_run(corpus, queries, tmp_path_factory):
    backend = TantivyBackend(tmp_path_factory.mktemp("tv") / "index")
    backend.index(corpus)
    return backend.search(queries, 10)


def _closed_port_url() -> str:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return f"http://127.0.0.1:{port}"


def _same_rankings(a, b, queries):
    assert set(a) == set(b) == set(queries)
    differ = [q for q in queries if list(a[q]) != list(b[q])]
    assert not differ, [(q, queries[q], list(a[q])[:3], list(b[q])[:3]) for q in differ[:3]]


def test_sharded_replicated_parallel_build_ranks_like_the_embedded_index(noida_es, corpus, queries, embedded_run,
                                                                         caplog, monkeypatch):
    es = ElasticsearchBackend([_closed_port_url(), noida_es], "cluster-test", shards=3, replicas=1, threads=3,
                              chunk=50, timeout=5)  # a dead node first: the client goes on to the live one
    with caplog.at_level(logging.WARNING):
        assert es.index(corpus) == len(corpus)
    # one data node cannot hold a replica: built anyway, and the log says the index has no second copy
    assert "1 replica(s) cannot be placed on 1 data node(s)" in caplog.text
    (name,) = es.client.indices.get_alias(name="cluster-test")
    settings = es.client.indices.get_settings(index=name)[name]["settings"]["index"]
    assert settings["number_of_shards"] == "3" and settings["number_of_replicas"] == "1"
    assert settings.get("refresh_interval") in (None, "1s")  # refreshes back on after the bulk load
    from elasticsearch import Elasticsearch

    sent = []
    msearch = Elasticsearch.msearch

    def spy(self, **kw):
        sent.append(kw.get("search_type"))
        return msearch(self, **kw)

    monkeypatch.setattr(Elasticsearch, "msearch", spy)
    _same_rankings(embedded_run, es.search(queries, 10), queries)
    assert sent and set(sent) == {"dfs_query_then_fetch"}


def test_one_shard_keeps_the_plain_search_type(noida_es):
    assert ElasticsearchBackend(noida_es, "x").search_type == "query_then_fetch"


def test_a_refused_document_fails_the_build_and_keeps_the_alias(noida_es, corpus):
    es = ElasticsearchBackend(noida_es, "refused-test", threads=2, chunk=20)
    es.index(corpus[:40])
    before = set(es.client.indices.get_alias(name="refused-test"))
    bad = [*corpus[:30], {"id": "x" * 600, "title": "t", "text": "t"}, *corpus[30:60]]  # _id over 512 bytes
    with pytest.raises(RuntimeError, match="was refused"):
        es.index(bad)
    assert set(es.client.indices.get_alias(name="refused-test")) == before
    assert es.client.count(index="refused-test")["count"] == 40


CLUSTER = os.environ.get("QA_PIPELINE_ES_CLUSTER_URLS", "")


@pytest.mark.skipif(not CLUSTER, reason="no multi-node Elasticsearch: set QA_PIPELINE_ES_CLUSTER_URLS to its node "
                                        "URLs (docker compose -f infra/elasticsearch/docker-compose.cluster.yml up)")
def test_real_cluster_shards_agree_with_one_shard(corpus, queries, embedded_run):
    urls = [u.strip() for u in CLUSTER.split(",") if u.strip()]
    es = ElasticsearchBackend(urls, "qa-cluster-test", shards=3, replicas=1, threads=4)
    nodes = int(es.client.cluster.health()["number_of_data_nodes"])
    assert nodes >= 2, f"{urls} is a cluster of {nodes} data node(s)"
    assert es.index(corpus) == len(corpus)
    health = es.client.cluster.health(index="qa-cluster-test")
    assert health["status"] == "green"
    _same_rankings(embedded_run, es.search(queries, 10), queries)
    # what dfs is for: per-shard statistics give other scores (and, on a small corpus, other rankings)
    body = {"query": {"bool": {"should": [{"match": {"text": queries["w0"]}}]}}, "size": 10}
    qtf = es.client.search(index="qa-cluster-test", search_type="query_then_fetch", **body)
    dfs = es.client.search(index="qa-cluster-test", search_type="dfs_query_then_fetch", **body)
    assert [h["_score"] for h in qtf["hits"]["hits"]] != [h["_score"] for h in dfs["hits"]["hits"]]
