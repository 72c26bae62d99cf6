"""The extract stage on damaged archives and hostile pages: a truncated or corrupted WARC fails naming the
file and the offset (or, asked to, goes on and lists what was lost); one bad page never sinks the rest."""

from __future__ import annotations

import json
import time

import pytest

from pipeline.nlquad import articles
from pipeline.nlquad.articles import CorruptWarcError, extract_articles, iter_warc_pages
from tests.extract_helpers import extract_page
from pipeline.params import project_section
from pipeline.sample.build import WARC_NAME
from tests.params_files import write_params

URL = "https://www.bbc.co.uk/news/uk-12345678"


@pytest.fixture()
def warc(small_sample, tmp_path):
    data = (small_sample / WARC_NAME).read_bytes()
    return data, len(list(iter_warc_pages(small_sample / WARC_NAME)))


def _write(tmp_path, blob):
    path = tmp_path / "pages.warc.gz"
    path.write_bytes(blob)
    return path


def test_truncated_warc_fails_naming_file_and_offset(warc, tmp_path):
    data, n = warc
    path = _write(tmp_path, data[: len(data) // 2])
    with pytest.raises(CorruptWarcError, match=r"pages\.warc\.gz: record at byte offset \d+: truncated"):
        extract_articles(path, project_section("extract"))
    rows, counts = extract_articles(path, project_section("extract", bad_records="skip"))
    assert counts["lost_records"] == 1 and counts["pages"] < n and rows
    offset = counts["lost_record_offsets"][0]
    assert 0 < offset < len(data) // 2


def test_zeroed_block_fails_then_skip_resumes_after_it(warc, tmp_path):
    data, n = warc
    mid = len(data) // 2
    path = _write(tmp_path, data[:mid] + b"\0" * 4096 + data[mid + 4096:])
    with pytest.raises(CorruptWarcError, match="corrupt gzip data"):
        list(iter_warc_pages(path))
    lost: list[dict] = []
    pages = list(iter_warc_pages(path, lost))
    assert lost and all(x["offset"] <= mid + 4096 for x in lost)
    assert n - 4 <= len(pages) < n  # only the records the zeros touched are gone
    assert all(body for _, _, body in pages)


def test_the_whole_archive_reads_back(warc, small_sample):
    data, n = warc
    lost: list[dict] = []
    assert len(list(iter_warc_pages(small_sample / WARC_NAME, lost))) == n and lost == []


def test_one_failing_page_is_rejected_not_the_stage(warc, tmp_path, monkeypatch):
    data, _ = warc
    path = _write(tmp_path, data)
    real = articles.extract_page
    calls = {"n": 0}

    def flaky(body, url, *args):
        calls["n"] += 1
        if calls["n"] == 3:
            raise RecursionError("maximum recursion depth exceeded")
        return real(body, url, *args)

    monkeypatch.setattr(articles, "extract_page", flaky)
    rows, counts = extract_articles(path, project_section("extract"))
    assert counts["rejected_parse_error"] == 1 and rows


@pytest.mark.parametrize("head", [
    '<div class="date date--v2" data-seconds="abc">x</div>',
    '<div class="date date--v2" data-seconds="99999999999999999999999">x</div>',
    '<script type="application/ld+json">' + "[" * 100_000 + "]" * 100_000 + "</script>",
])
def test_malformed_metadata_is_no_date_not_an_error(head):
    body = " ".join(["word"] * 30)
    html = (f'<html><head>{head}</head><body><div class="story-body"><h1 class="story-body__h1">T</h1>{head}'
            f'<div class="story-body__inner"><p>{body}</p></div></div></body></html>')
    ex = extract_page(html, URL)
    assert ex.rejected is None and ex.date is None and ex.intro == [body]


def test_oversized_and_deep_pages_are_rejected_cheaply():
    big = "<html><body>" + "<p>" + "x" * 6_000_000 + "</p></body></html>"
    assert extract_page(big, URL).rejected == "too_large"
    assert extract_page(big, URL, max_bytes=10_000_000).rejected != "too_large"
    deep = "<html><body>" + "<div>" * 100_000 + "<p>x</p>" + "</div>" * 100_000 + "</body></html>"
    t = time.perf_counter()
    assert extract_page(deep, URL).rejected == "too_deep"
    assert time.perf_counter() - t < 5  # BeautifulSoup alone took 44 s on this page


def test_extract_metrics_list_lost_records(warc, tmp_path, monkeypatch):

    from flows.stage import stage_flow

    extract_flow = stage_flow("extract")

    data, _ = warc
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data/raw").mkdir(parents=True)
    (tmp_path / "data/raw/pages.warc.gz").write_bytes(data[: len(data) * 2 // 3])
    write_params(tmp_path / "params.yaml", {"extract": {"bad_records": "skip"}})
    extract_flow.fn(params_file=str(tmp_path / "params.yaml"))
    metrics = json.loads((tmp_path / "reports/extract.json").read_text())
    assert metrics["lost_records"] == 1 and len(metrics["lost_record_offsets"]) == 1
    write_params(tmp_path / "params.yaml", {"extract": {"bad_records": "fail"}})
    before = (tmp_path / "data/interim/articles.jsonl").read_bytes()
    with pytest.raises(CorruptWarcError):
        extract_flow.fn(params_file=str(tmp_path / "params.yaml"))
    assert (tmp_path / "data/interim/articles.jsonl").read_bytes() == before  # nothing produced is lost


def test_a_wide_page_is_rejected_before_it_is_parsed():
    """1.2 million <li> in 4.8 MB passed the size and depth guards and took BeautifulSoup 40 s and 640 MB."""
    wide = "<html><body><ul>" + "<li>" * 1_200_000 + "</ul></body></html>"
    assert len(wide) < 5_000_000
    assert extract_page(wide, URL).rejected == "too_many_elements"


def _story(headings: list[str]) -> str:
    body = "".join(f'<h2 class="story-body__crosshead">{h}</h2><p>Answer text for {i} with enough words to count.</p>'
                   for i, h in enumerate(headings))
    return ('<html><head><link rel="canonical" href="' + URL + '"></head><body><div class="story-body">'
            '<h1 class="story-body__h1">A page</h1><div class="story-body__inner"><p>' + "word " * 30 + "</p>"
            + body + "</div></div></body></html>")


def test_a_page_of_thousands_of_sub_headings_is_not_the_data_set():
    """One page with 10,000 interrogative sub-headings made 97% of an NLQuAD build."""
    ex = extract_page(_story([f"Question number {i}?" for i in range(10_000)]), URL)
    assert ex.rejected == "too_many_sections"
    assert extract_page(_story([f"Question number {i}?" for i in range(100)]), URL).rejected is None


def test_headings_that_are_only_punctuation_are_no_questions():
    from pipeline.nlquad.build import article_record, is_question

    assert [is_question(h) for h in ("?", " ?? ", "...?", "2?", "Why?", "What now?", "¿Qué pasa?")] == [
        False, False, False, False, True, True, True]
    ex = extract_page(_story(["?", "Why does it matter?", "...?"]), URL)
    record, _ = article_record(ex, "uk-12345678")
    assert [qa["question"] for qa in record["paragraphs"][0]["qas"]] == ["Why does it matter?"]


def _extracted(folder, warc_bytes: bytes, monkeypatch) -> bytes:
    """The extract stage run in ``folder`` (now the working directory) on ``warc_bytes``: its articles file."""
    from flows.stage import stage_flow

    extract_flow = stage_flow("extract")

    monkeypatch.chdir(folder)
    (folder / "data/raw").mkdir(parents=True)
    (folder / "data/raw/pages.warc.gz").write_bytes(warc_bytes)
    write_params(folder / "params.yaml", {})
    extract_flow.fn(params_file=str(folder / "params.yaml"))
    return (folder / "data/interim/articles.jsonl").read_bytes()


def test_an_empty_warc_fails_and_keeps_the_articles(warc, tmp_path, monkeypatch):
    """An empty crawl output used to empty articles.jsonl with exit 0."""
    from flows.stage import stage_flow

    extract_flow = stage_flow("extract")

    data, _ = warc
    before = _extracted(tmp_path, data, monkeypatch)
    assert before
    for empty in (b"", data[:0] + b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03\x03\x00\x00\x00\x00\x00\x00\x00\x00\x00"):
        (tmp_path / "data/raw/pages.warc.gz").write_bytes(empty)
        with pytest.raises(articles.EmptyWarcError, match=r"pages\.warc\.gz: holds no response record"):
            extract_flow.fn(params_file=str(tmp_path / "params.yaml"))
        assert (tmp_path / "data/interim/articles.jsonl").read_bytes() == before


def test_a_warc_whose_every_page_is_rejected_fails_and_keeps_the_articles(warc, tmp_path, monkeypatch):
    """Pages that are all rejected (an index, a video page, a 404) used to give an empty data set with exit 0
    through extract, build_nlquad and split."""
    import io

    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    from flows.stage import stage_flow

    extract_flow = stage_flow("extract")

    data, _ = warc
    before = _extracted(tmp_path, data, monkeypatch)
    buf = io.BytesIO()
    writer = WARCWriter(buf, gzip=True)
    for i in range(3):
        html = f"<html><head><title>Index {i}</title></head><body><p>Nothing here.</p></body></html>".encode()
        headers = StatusAndHeaders("200 OK", [("Content-Type", "text/html; charset=utf-8")], protocol="HTTP/1.1")
        writer.write_record(writer.create_warc_record(f"https://www.bbc.co.uk/news/{i}", "response",
                                                      payload=io.BytesIO(html), http_headers=headers))
    (tmp_path / "data/raw/pages.warc.gz").write_bytes(buf.getvalue())
    with pytest.raises(articles.EmptyWarcError, match=r"none of its 3 pages is an article .*rejected: \{"):
        extract_flow.fn(params_file=str(tmp_path / "params.yaml"))
    assert (tmp_path / "data/interim/articles.jsonl").read_bytes() == before


def test_articles_without_a_question_fail_build_and_split(tmp_path, monkeypatch, small_sample, warc):
    data, _ = warc
    real = tmp_path / "real"
    real.mkdir()
    _extracted(real, data, monkeypatch)
    real_articles = real / "data/interim/articles.jsonl"
    from pipeline.common.layout import PATHS
    from pipeline.params import load_params
    from pipeline.stages import build_nlquad, split

    monkeypatch.chdir(tmp_path)
    params = load_params(write_params(tmp_path / "params.yaml", {}))
    PATHS.extract.articles.parent.mkdir(parents=True)
    row = json.loads((real_articles).read_text(encoding="utf-8").splitlines()[0])
    for section in row["sections"]:
        section["heading"] = "Background"  # no question left
    PATHS.extract.articles.write_text(json.dumps(row) + "\n")
    PATHS.extract.report.parent.mkdir(parents=True, exist_ok=True)
    PATHS.extract.report.write_text("{}")
    with pytest.raises(ValueError, match="none of the 1 articles .* interrogative sub-heading"):
        build_nlquad.run(params)
    assert not PATHS.build_nlquad.dataset.exists()
    PATHS.build_nlquad.dataset.parent.mkdir(parents=True, exist_ok=True)
    PATHS.build_nlquad.dataset.write_text(json.dumps({"version": "x", "data": []}))
    with pytest.raises(ValueError, match="holds no article with a question"):
        split.run(params)


def test_inflation_bombs_are_rejected_in_bounded_memory(small_sample, tmp_path):
    """Two records of a few hundred KB that inflate to 200 MB each: a gzip member of zeros, and a page whose HTTP
    Content-Encoding is gzip. Each is rejected as too_large (extract.max_page_bytes, 5 MB) without being held
    whole (warcio inflates a Content-Encoding 16 KB of input at a time: tens of MB at most, whatever the bomb's
    size), and the real pages after them are extracted."""
    import gzip
    import io
    import tracemalloc

    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    zeros = b"<html>" + b"\0" * 200_000_000
    path = tmp_path / "bombs.warc.gz"
    with path.open("wb") as fh:
        writer = WARCWriter(fh, gzip=True)
        for url, body, headers in ((f"{URL}1", zeros, []),
                                   (f"{URL}2", gzip.compress(zeros, 9), [("Content-Encoding", "gzip")])):
            http = StatusAndHeaders("200 OK", [("Content-Type", "text/html"), *headers], protocol="HTTP/1.1")
            writer.write_record(writer.create_warc_record(url, "response", payload=io.BytesIO(body),
                                                          http_headers=http))
        fh.write((small_sample / WARC_NAME).read_bytes())
    assert path.stat().st_size < 3_000_000
    tracemalloc.start()
    try:
        rows, counts = extract_articles(path, project_section("extract"))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert counts["rejected_too_large"] == 2 and rows
    assert peak < 64_000_000, peak  # never a 200 MB page in memory


@pytest.mark.parametrize("charset", ["unicode_escape", "raw_unicode_escape", "utf-7", "rot13"])
def test_a_page_declaring_a_python_codec_is_read_as_windows_1252(charset):
    """Only the charsets pages are written in are honoured: a page declaring ``unicode_escape`` would have its
    backslash sequences rewritten (``\\u003c`` becoming ``<``) and ``utf-7`` smuggles markup."""
    from pipeline.nlquad.page_bytes import decode_page

    page = (f'<html><head><meta charset="{charset}"></head><body><p>caf\xe9 \\u003cb\\u003e '
            "+ADw-script+AD4-</p></body></html>").encode("latin-1")
    text = decode_page(page)
    assert "caf\xe9" in text and "\\u003cb\\u003e" in text and "+ADw-script+AD4-" in text
