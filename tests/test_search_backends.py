"""Both backends on one corpus: same top-10 (parity), alias swap, interrupted rebuilds, unreachable cluster."""

from __future__ import annotations

import socket
import time
from collections import Counter

import pytest

from pipeline.sample.build import DUMP_NAME
from pipeline.search.es_backend import ElasticsearchBackend, SearchBackendUnavailable
from pipeline.search.tantivy_backend import TantivyBackend
from pipeline.strategyqa.data import load_questions
from pipeline.strategyqa.retrieval import question_queries, step_queries
from pipeline.wiki.paragraphs import dump_paragraphs
from tests.params_files import PROJECT_PARAMS

pytestmark = pytest.mark.slow  # starts noida-db (Elasticsearch API)


@pytest.fixture(scope="module")
def corpus(small_sample):
    return [{"id": p.id, "title": p.title, "text": p.text} for p in dump_paragraphs(small_sample / DUMP_NAME, Counter(), min_chars=2)]


@pytest.fixture(scope="module")
def queries(corpus):
    titles = sorted({d["title"] for d in corpus})
    qs = {f"t{i}": f"What is known about {t}?" for i, t in enumerate(titles[::7])}
    qs |= {f"w{i}": " ".join(d["text"].split()[3:9]) for i, d in enumerate(corpus[::23])}
    qs |= {"apostrophe": "Isn't it the world's largest city's park?", "syntax": 'NOT (a OR b): "c" [d] +e -f'}
    return qs


@pytest.fixture(scope="module")
def both(corpus, noida_es, tmp_path_factory):
    embedded = TantivyBackend(tmp_path_factory.mktemp("tv") / "index")
    es = ElasticsearchBackend(noida_es, "parity-test")
    assert embedded.index(corpus) == es.index(corpus) == len(corpus)
    return embedded, es


def test_same_top10_on_both_backends(both, queries):
    embedded, es = both
    a, b = embedded.search(queries, 10), es.search(queries, 10)
    assert set(a) == set(b) == set(queries)
    mismatched = []
    for qid in queries:
        if list(a[qid]) != list(b[qid]):
            mismatched.append((qid, queries[qid], list(a[qid])[:3], list(b[qid])[:3]))
            continue
        for doc in a[qid]:
            assert a[qid][doc] == pytest.approx(b[qid][doc], rel=1e-4), (qid, doc)
    assert not mismatched, mismatched[:5]
    assert sum(bool(h) for h in a.values()) > 0.9 * len(queries)


def test_alias_moves_only_after_a_complete_build(noida_es, corpus):
    es = ElasticsearchBackend(noida_es, "alias-test")
    es.index(corpus[:50])
    first = set(es.client.indices.get_alias(name="alias-test"))

    def broken():
        yield from corpus[:30]
        raise RuntimeError("killed mid-build")

    with pytest.raises(RuntimeError, match="killed mid-build"):
        es.index(broken())
    assert set(es.client.indices.get_alias(name="alias-test")) == first  # still the complete index
    assert es.client.count(index="alias-test")["count"] == 50
    es.index(corpus[:80])
    second = set(es.client.indices.get_alias(name="alias-test"))
    assert second != first and es.client.count(index="alias-test")["count"] == 80
    assert set(es.client.indices.get(index="alias-test-*")) == second  # old and half-built indices removed


def test_unreachable_cluster_fails_fast_with_a_clear_message():
    port_closed = socket.socket()
    port_closed.bind(("127.0.0.1", 0))
    port = port_closed.getsockname()[1]
    port_closed.close()  # nothing listens here: connection refused
    t = time.monotonic()
    with pytest.raises(SearchBackendUnavailable, match=f"cannot reach Elasticsearch at http://127.0.0.1:{port}"):
        ElasticsearchBackend(f"http://127.0.0.1:{port}", "x", timeout=2)
    assert time.monotonic() - t < 5
    with socket.socket() as silent:  # accepts connections, never answers: the timeout path
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        t = time.monotonic()
        with pytest.raises(SearchBackendUnavailable, match="within 2s"):
            ElasticsearchBackend(f"http://127.0.0.1:{silent.getsockname()[1]}", "x", timeout=2)
        assert time.monotonic() - t < 6


def test_generated_strategyqa_queries_agree_too(both, small_sample):
    embedded, es = both
    questions = load_questions(small_sample / "strategyqa_generated.json")
    qs = question_queries(questions) | step_queries(questions)
    a, b = embedded.search(qs, 10), es.search(qs, 10)
    assert all(list(a[q]) == list(b[q]) for q in qs)


def test_credentials_never_travel_in_a_shown_url(monkeypatch):
    from pipeline.search.es_backend import mask_url, split_credentials

    assert split_credentials("https://el%40stic:s3cr%2Ft@es.example:9243/p") == (
        "https://es.example:9243/p", ("el@stic", "s3cr/t"))
    assert split_credentials("http://127.0.0.1:9200") == ("http://127.0.0.1:9200", None)
    assert mask_url("http://u:s3cret@h:9200") == "http://***@h:9200" and "s3cret" not in mask_url("http://u:s3cret@h")
    port_closed = socket.socket()
    port_closed.bind(("127.0.0.1", 0))
    port = port_closed.getsockname()[1]
    port_closed.close()
    with pytest.raises(SearchBackendUnavailable) as err:  # e.g. $QA_PIPELINE_ES_URL with credentials
        ElasticsearchBackend(f"http://elastic:s3cret@127.0.0.1:{port}", "x", timeout=2)
    assert "s3cret" not in str(err.value) and f"http://127.0.0.1:{port}" in str(err.value)


@pytest.mark.parametrize("url", ["http://elastic:s3cr/et@127.0.0.1:9", "http://elastic:s3cret@127.0.0.1:notaport",
                                 "http://elastic:s3c#ret@127.0.0.1:9", "http://elastic:s3cret@[::1:9",
                                 "ftp://elastic:s3cret@127.0.0.1:9"])
def test_a_url_that_does_not_parse_is_refused_without_its_password(url):
    """urllib's and the client's ValueErrors quoted the whole URL ("Could not parse URL 'http://elastic:...'")."""
    with pytest.raises(SearchBackendUnavailable) as err:
        ElasticsearchBackend(url, "x", timeout=0.5)
    assert "s3c" not in str(err.value) and "not shown" in str(err.value)


def test_params_refuse_credentials_in_es_url_without_echoing_them(repo, tmp_path):
    import yaml

    from pipeline.params import ParamsError, load_params

    raw = yaml.safe_load((PROJECT_PARAMS).read_text())
    for bad in ("http://elastic:s3cret@127.0.0.1:9201", "HTTPS://elastic:s3cret@127.0.0.1:9201",
                "http://elastic:s3/cret@127.0.0.1:9201", "https://elastic:s3cret#x@es.example.org",
                "https://elastic:s3cret?x@es.example.org", "Https://elastic:s3cret/@es.example.org/"):
        raw["search"]["es_urls"] = ["http://127.0.0.1:9200", bad]
        (tmp_path / "params.yaml").write_text(yaml.safe_dump(raw))
        with pytest.raises(ParamsError, match="search.es_urls.*must not contain credentials") as err:
            load_params(tmp_path / "params.yaml")
        assert "s3" not in str(err.value) and "cret" not in str(err.value), bad
    raw["search"]["es_urls"] = ["HTTPS://es.example.org:9200"]  # the scheme in any case is a URL
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(raw))
    assert load_params(tmp_path / "params.yaml").search.es_urls == ["HTTPS://es.example.org:9200"]


def _tree(path):
    return {str(f.relative_to(path)): f.read_bytes() for f in sorted(path.rglob("*")) if f.is_file()}


def test_the_same_paragraphs_give_a_byte_identical_index(corpus, tmp_path):
    """DVC hashes data/index: two builds from the same paragraphs must be the same files, names included
    (tantivy's segment names are random UUIDs; they are renamed after the segment's content), or every index
    rebuild would rerun retrieval and the StrategyQA stages. Different paragraphs: a different index."""
    docs = corpus[:2000]
    TantivyBackend(tmp_path / "a").index(docs)
    TantivyBackend(tmp_path / "b").index(docs)
    a, b = _tree(tmp_path / "a"), _tree(tmp_path / "b")
    assert a == b and any(name.endswith(".store") for name in a)
    TantivyBackend(tmp_path / "c").index(docs[:-1])
    assert _tree(tmp_path / "c").keys() != a.keys()
    hits = TantivyBackend(tmp_path / "a").search({"q": docs[0]["title"]}, 5)["q"]
    assert hits and docs[0]["id"] in hits  # the renamed index opens and answers
    assert _tree(tmp_path / "a") == a  # and reading it changes no file (the output hash stays put)
