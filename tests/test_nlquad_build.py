"""Extraction against the sample's ground truth, and the NLQuAD construction rules on hand-made articles."""

from __future__ import annotations

import json

import pytest

from pipeline.nlquad.articles import extract_articles, iter_warc_pages
from pipeline.nlquad.build import (
    OffsetError,
    build_dataset,
    check_offsets,
    dataset_statistics,
)
from pipeline.nlquad.discover import select_captures
from pipeline.nlquad.extract import Extraction, Section
from pipeline.nlquad.furniture import clean
from pipeline.params import project_section
from pipeline.sample.build import WARC_NAME
from pipeline.wayback.cdx import CdxCapture, parse_cdx_json
from tests.extract_helpers import extract_page


def test_sample_pages_extract_to_what_was_written(small_sample):
    truth = {json.loads(line)["article_id"]: json.loads(line) for line in (small_sample / "articles.jsonl").open()}
    rows = [json.loads(line) for line in (small_sample / "captures.jsonl").open()]
    checked = 0
    for (url, _ts, body), row in zip(iter_warc_pages(small_sample / WARC_NAME), rows, strict=True):
        ex = extract_page(body, url)
        if row["kind"] in ("video", "live", "gallery", "index"):
            assert ex.rejected in ("video", "live", "in_pictures", "index"), (url, ex.rejected)
            continue
        if row["kind"] in ("redirect", "not_found"):
            assert ex.rejected
            continue
        t = truth[row["article_id"]]
        assert ex.rejected is None and ex.title == t["headline"]
        assert ex.intro == [clean(p) for p in [t["intro"], *t["lead"]]]
        assert [(s.heading, s.paragraphs, s.bullet) for s in ex.sections] == [
            (s["heading"], [clean(p) for p in s["paragraphs"]], s["bullet"]) for s in t["sections"]]
        assert sorted(link.split("/news/")[1] for link in ex.links) == sorted(
            link.split("/news/")[1] for link in t["links"])
        checked += 1
    assert checked > 40


def test_dedup_keeps_one_article_per_story(small_sample):
    rows, counts = extract_articles(small_sample / WARC_NAME, project_section("extract"))
    truth_ids = {json.loads(line)["article_id"] for line in (small_sample / "articles.jsonl").open()}
    kept = [r["canonical_url"].rsplit("/", 1)[1] for r in rows]
    assert len(kept) == len(set(kept)) == len(truth_ids)
    assert counts["duplicate_canonical_url"] > 0  # re-captures and bbc.com copies share the path
    first = {r["canonical_url"]: r["capture_timestamp"] for r in rows}
    latest, _ = extract_articles(small_sample / WARC_NAME, project_section("extract", keep="latest"))
    assert any(first[r["canonical_url"]] < r["capture_timestamp"] for r in latest if r["canonical_url"] in first)


def _article(sections, intro=("Intro paragraph one.",)):
    return Extraction(url="https://www.bbc.co.uk/news/uk-12345678", canonical_url="https://www.bbc.co.uk/news/uk-12345678",
                      title="T", date="2018-01-01", template="story-body", intro=list(intro), sections=sections)


def test_question_answer_document_rules():
    ex = _article([
        Section("What happened?", ["First answer paragraph.", "Second answer paragraph."]),
        Section("Why now? The background", ["Not a question section."]),
        Section("Who is affected?", ["Item one", "Item two"], bullet=True),
        Section("What next?", ["Last answer."]),
    ])
    dataset, dropped = build_dataset([ex])
    para = dataset["data"][0]["paragraphs"][0]
    assert para["context"] == ("Intro paragraph one. First answer paragraph. Second answer paragraph. "
                               "Not a question section. Item one Item two Last answer.")
    assert [qa["question"] for qa in para["qas"]] == ["What happened?", "What next?"]
    ans = para["qas"][0]["answers"][0]
    assert ans["text"] == "First answer paragraph. Second answer paragraph."
    assert (ans["answer_start"], ans["answer_end"]) == (21, 69)  # len("Intro paragraph one. ") = 21, answer 23 + 1 + 24
    assert para["qas"][1]["answers"][0]["text"] == "Last answer."
    assert dropped["bullet_answer"] == 1
    assert "What happened?" not in para["context"]
    stats = dataset_statistics(dataset)
    assert stats["documents"] == 1 and stats["questions"] == 2 and stats["answer_words_median"] == 4.0
    # the dataset card shows its columns of the same table, one decimal: answers of 6 and 2 words
    from pipeline.nlquad.hf_export import split_statistics

    card = split_statistics(dataset)
    assert card == {"articles": 1, "questions": 2, "document_words_mean": float(len(para["context"].split())),
                    "question_words_mean": 2.0, "answer_words_mean": 4.0}


def test_article_without_questions_is_counted_not_kept():
    dataset, dropped = build_dataset([_article([Section("Background", ["Text."])])])
    assert dataset["data"] == [] and dropped["article_without_questions"] == 1


def test_offset_check_catches_a_bad_span():
    bad = {"data": [{"paragraphs": [{"context": "abc def", "qas": [
        {"id": "x", "question": "q?", "answers": [{"text": "def", "answer_start": 3, "answer_end": 6}]}]}]}]}
    with pytest.raises(OffsetError):
        check_offsets(bad)


def test_cdx_formats_and_capture_selection():
    ia = json.dumps([["urlkey", "timestamp", "original", "mimetype", "statuscode", "digest", "length"],
                     ["k", "20170101000000", "http://www.bbc.co.uk/news/uk-38000001", "text/html", "200", "A", "1"],
                     [], ["resume-key"]])
    caps, resume = parse_cdx_json(ia)
    assert resume == "resume-key" and caps[0].status == "200" and caps[0].mime == "text/html"
    pywb = '{"urlkey": "k", "timestamp": "20170101000000", "url": "http://x/news/uk-1", "mime": "text/html", "status": "200", "digest": "A"}\n'
    assert parse_cdx_json(pywb)[0][0].url == "http://x/news/uk-1"
    c = lambda url, ts, d: CdxCapture(url, ts, "200", "text/html", d)  # noqa: E731
    chosen, counts = select_captures([
        c("https://www.bbc.co.uk/news/uk-38000001", "20170301000000", "B"),
        c("https://www.bbc.co.uk/news/uk-38000001", "20170201000000", "A"),
        c("https://www.bbc.co.uk/news/uk-38000001", "20170401000000", "A"),   # same digest as the earlier one
        c("https://www.bbc.com/news/uk-38000001", "20170201000000", "A"),     # same story, other host
        c("https://www.bbc.co.uk/news/av/uk-38000002", "20170201000000", "C"),
        c("https://www.bbc.co.uk/news/world", "20170201000000", "D"),
    ], project_section("discover"))
    assert [(x.url, x.timestamp) for x in chosen] == [("https://www.bbc.co.uk/news/uk-38000001", "20170201000000")]
    assert counts["excluded"] == 1 and counts["not_article_url"] == 1 and counts["duplicate_digest"] >= 1


def test_a_2016_to_2026_sample_builds_discovers_and_extracts(tmp_path):
    """Date ranges past the paper's 2020: the sample, discovery's range filter and the extractor all hold."""
    from pipeline.params import project_section
    from pipeline.sample.build import build_sample

    p = project_section("sample", seed=3, n_articles=20, duplicate_captures=2, cross_domain_duplicates=1, non_article_pages=4,
                     out_of_range_captures=2, wiki_articles=20, strategyqa_questions=0,
                     start="2016-01-01", end="2026-06-30")
    build_sample(p, tmp_path)
    rows = [json.loads(line) for line in (tmp_path / "captures.jsonl").open()]
    assert max(r["timestamp"] for r in rows) > "2021"
    caps = [CdxCapture(url=r["url"], timestamp=r["timestamp"], status=str(r["status"]), mime="text/html",
                       digest=r.get("digest") or r["timestamp"]) for r in rows if str(r["status"]) == "200"]
    chosen, counts = select_captures(caps, project_section("discover", start="2016-01-01", end="2026-06-30"))
    assert counts["articles"] == len(chosen) >= 20
    articles, ecounts = extract_articles(tmp_path / WARC_NAME, project_section("extract"))
    assert len(articles) >= 20 and max(a["date"] for a in articles) > "2021"  # (+ the out-of-range ones)


def test_a_question_names_its_answer_when_a_term_of_it_is_only_there():
    """The share reported with the data set: 'Why does Grand Slam (tennis) matter?' names the section on the
    Grand Slam; 'What happens next?' names nothing, and a term the whole document shares names no section."""
    from pipeline.nlquad.question_cues import heading_names_answer, names_answer

    intro = "Tennis players met in London. "
    answer = "The Grand Slam in tennis is winning all four major championships in one year."
    context = intro + answer + " Officials said next season starts in January."
    span = (len(intro), len(intro) + len(answer))
    assert names_answer("Why does Grand Slam (tennis) matter?", context, span)  # 'grand', 'slam': only there
    assert not names_answer("What happens next?", context, span)  # 'next' is outside the answer
    assert not names_answer("Why does tennis matter?", context, span)  # 'tennis' is in the intro too
    data = {"data": [{"paragraphs": [{"context": context, "qas": [
        {"id": "a", "question": "Why does Grand Slam (tennis) matter?",
         "answers": [{"text": answer, "answer_start": span[0], "answer_end": span[1]}]},
        {"id": "b", "question": "What happens next?",
         "answers": [{"text": answer, "answer_start": span[0], "answer_end": span[1]}]}]}]}]}
    assert {k: v for k, v in heading_names_answer(data).items() if k != "rule"} == {"share": 50.0, "questions": 2,
                                                                                   "naming": 1}


def test_capture_selection_holds_under_a_gigabyte_up_to_its_caps():
    """An archive that sends rows without end: selection keeps one capture per article and 8 bytes per distinct
    (article, digest), so at the CDX client's row cap and discover's article cap it holds under 1 GB (measured
    per row here, on rows of real length), and an article past the cap is an error naming it."""
    import tracemalloc

    from pipeline.nlquad import discover
    from pipeline.wayback.cdx import MAX_ROWS, CdxFormatError

    params = project_section("discover")

    def rows(n: int, articles: int | None):
        for i in range(n):
            a = i if articles is None else i % articles
            yield CdxCapture(f"https://www.bbc.co.uk/news/uk-politics-{40_000_000 + a}", f"2017{i % 10**10:010d}",
                             "200", "text/html", f"{i:032d}")

    def peak_per_row(n: int, articles: int | None) -> float:
        tracemalloc.start()
        discover.select_captures(rows(n, articles), params, max_articles=n)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        return peak / n

    per_article = peak_per_row(40_000, None)  # every row a new article: a capture and a digest key each
    per_digest = peak_per_row(40_000, 100)  # 100 articles re-captured with new bytes: a digest key each
    held = per_article * discover.MAX_ARTICLES + per_digest * MAX_ROWS
    assert held < 1 << 30, (per_article, per_digest, held)
    with pytest.raises(CdxFormatError, match="more than 1000 distinct articles"):
        discover.select_captures(rows(1001, None), params, max_articles=1000)
