"""The offline sample sources: deterministic, in the real BBC templates, in real CirrusSearch format."""

from __future__ import annotations

import datetime as dt
import gzip
import hashlib
import json
import os
from collections import Counter

from bs4 import BeautifulSoup
from warcio.archiveiterator import ArchiveIterator

from pipeline.sample.build import DUMP_NAME, WARC_NAME, build_sample


def _sha(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _records(warc):
    with warc.open("rb") as fh:
        for rec in ArchiveIterator(fh):
            if rec.rec_type == "response":
                yield rec.rec_headers.get_header("WARC-Target-URI"), rec.http_headers.get_statuscode(), \
                    rec.content_stream().read()


def test_same_seed_same_bytes_other_seed_other_bytes(small_sample, small_sample_params, tmp_path):
    again = tmp_path / "again"
    build_sample(small_sample_params, again)
    for name in (WARC_NAME, DUMP_NAME, "captures.jsonl", "articles.jsonl"):
        assert _sha(small_sample / name) == _sha(again / name), name
    other = tmp_path / "other"
    build_sample(small_sample_params.model_copy(update={"seed": 8}), other)
    assert _sha(small_sample / WARC_NAME) != _sha(other / WARC_NAME)


def test_warc_matches_capture_list(small_sample, small_sample_params):
    rows = [json.loads(line) for line in (small_sample / "captures.jsonl").open()]
    recs = list(_records(small_sample / WARC_NAME))
    assert [(r["url"], str(r["status"])) for r in rows] == [(u, s) for u, s, _ in recs]
    kinds = Counter(r["kind"] for r in rows)
    p = small_sample_params
    assert kinds["article"] == p.n_articles + p.out_of_range_captures
    assert kinds["duplicate"] == p.duplicate_captures
    assert kinds["cross_domain"] == p.cross_domain_duplicates
    assert sum(kinds[k] for k in ("index", "video", "live", "gallery")) == p.non_article_pages
    assert kinds["redirect"] == 1 and kinds["not_found"] == 1
    years = Counter(r["timestamp"][:4] for r in rows if r["in_range"])
    assert set(years) <= {"2016", "2017", "2018", "2019", "2020"} and len(years) >= 4
    # out of range: the planned captures outside [start, end], and first captures of articles published in the
    # last days of the range that the archive made after its end (up to 20 days later, as real first captures are)
    late = [r for r in rows if not r["in_range"] and r["timestamp"][:8] > p.end.strftime("%Y%m%d")
            and r["timestamp"][:8] <= (p.end + dt.timedelta(days=20)).strftime("%Y%m%d")]
    assert all(r["kind"] == "article" for r in late)
    assert 0 <= sum(not r["in_range"] for r in rows) - p.out_of_range_captures <= len(late)
    # some re-captures are byte-identical (CDX collapse=digest removes them), some are later edits
    bodies: dict[str, set[bytes]] = {}
    for url, _status, body in recs:
        bodies.setdefault(url, set()).add(hashlib.sha1(body).digest())
    recaptured = [r["url"] for r in rows if r["kind"] == "duplicate"]
    assert any(len(bodies[u]) > 1 for u in recaptured)
    assert sum(1 for r in rows if r["url"] in set(recaptured)) > len(set(recaptured))


def test_article_pages_use_real_template_markup(small_sample):
    truth = {json.loads(line)["article_id"]: json.loads(line) for line in (small_sample / "articles.jsonl").open()}
    rows = {(r["url"], r["timestamp"]): r for r in map(json.loads, (small_sample / "captures.jsonl").open())}
    seen_templates = Counter()
    for (url, _status, body), row in zip(_records(small_sample / WARC_NAME), rows.values(), strict=True):
        if row["kind"] != "article":
            continue
        soup = BeautifulSoup(body, "lxml")
        art = truth[row["article_id"]]
        seen_templates[row["template"]] += 1
        if row["template"] == "story-body":
            assert soup.select_one("h1.story-body__h1").get_text() == art["headline"]
            heads = [h.get_text() for h in soup.select("div.story-body__inner h2.story-body__crosshead")]
            assert soup.select_one("p.story-body__introduction").get_text() == art["intro"]
            assert soup.select_one("div.date[data-seconds]") is not None
        else:
            block = "crosshead-block" if row["template"].endswith("css") else "subheadline-block"
            heads = [h.get_text() for h in soup.select(f'div[data-component="{block}"] h2')]
            assert soup.select_one('div[data-component="headline-block"] h1').get_text() == art["headline"]
            assert soup.select('div[data-component="text-block"]')
            assert soup.select_one("time[datetime]") is not None
        assert heads == [s["heading"] for s in art["sections"]]
        assert soup.select_one('link[rel="canonical"]')["href"] == url
    assert seen_templates["story-body"] and (seen_templates["data-component-css"] + seen_templates["data-component-sc"])


def test_articles_have_question_and_statement_headings_bullets_and_links(small_sample):
    arts = [json.loads(line) for line in (small_sample / "articles.jsonl").open()]
    headings = [s["heading"] for a in arts for s in a["sections"]]
    assert any(h.endswith("?") for h in headings)
    assert any(not h.endswith("?") for h in headings)
    assert any("?" in h and not h.endswith("?") for h in headings)  # "Why now? The background"
    assert any(s["bullet"] for a in arts for s in a["sections"])
    ids = {a["article_id"] for a in arts}
    linked = {link.rsplit("/", 1)[-1] for a in arts for link in a["links"]}
    assert linked and linked <= ids


def test_cirrus_dump_is_bulk_format_with_wikitext(small_sample, small_sample_params):
    with gzip.open(small_sample / DUMP_NAME, "rt", encoding="utf-8") as fh:
        lines = [json.loads(line) for line in fh]
    actions, docs = lines[0::2], lines[1::2]
    assert len(actions) == len(docs)
    assert all(set(a) == {"index"} and "_id" in a["index"] for a in actions)
    articles = [d for d in docs if d["namespace"] == 0]
    assert len(articles) == small_sample_params.wiki_articles
    for d in articles:
        assert {"title", "text", "source_text", "heading", "opening_text", "namespace"} <= set(d)
        assert "\n== " in d["source_text"] and d["heading"]
        assert d["opening_text"] and d["opening_text"] in d["text"]
    assert any("<ref" in d["source_text"] and "{{" in d["source_text"] and "[[" in d["source_text"] for d in articles)


def test_the_default_sample_is_the_same_bytes_under_any_hash_seed(tmp_path):
    """Python salts str hashes per process (PYTHONHASHSEED): a sum over a set of words ran in another order and a
    near-tie in the ranking of related articles moved a sentence to another section. The project's own sample,
    built in two processes with two hash seeds, is the same bytes."""
    import subprocess
    import sys

    from tests.conftest import REPO

    code = ("import sys; from pathlib import Path; from pipeline.params import project_section; "
            "from pipeline.sample.build import build_sample; build_sample(project_section('sample'), Path(sys.argv[1]))")
    digests = []
    for seed in ("0", "3"):
        out = tmp_path / f"hash-{seed}"
        subprocess.run([sys.executable, "-c", code, str(out)], cwd=REPO, check=True, capture_output=True,
                       env={**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(REPO)}, timeout=600)
        digests.append({p.name: _sha(p) for p in sorted(out.iterdir()) if p.is_file()})
    assert digests[0] == digests[1]
