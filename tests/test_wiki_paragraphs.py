"""CirrusSearch dump -> paragraphs: markup handling, ids, skips, malformed lines, agreement with the sample."""

from __future__ import annotations

import gzip
import json
import logging
from collections import Counter

import pytest

from pipeline.sample.build import DUMP_NAME
from pipeline.sample.cirrus_dump import cirrus_documents
from pipeline.sample.wiki_vital import load_vital_articles
from pipeline.wiki.paragraphs import dump_paragraphs, wikitext_paragraphs

WIKITEXT = """{{Short description|Test}}
{{Infobox thing
| name = Thing
}}
'''Thing''' is a [[Widget|widget]] made of ''wood''.<ref name="a">{{cite web |title=T}}</ref> It was named in 1900.

A second lead paragraph with an [https://example.org external link].

== History ==
[[File:Thing.jpg|thumb|A thing]]
Early history of the thing.

=== Early years ===
The early years.
* a bullet that is dropped
* another

{| class="wikitable"
|-
| cell || cell
|}

== See also ==
* [[Other thing]]

== References ==
{{Reflist}}
[[Category:Things]]
"""


def test_wikitext_markup_is_stripped_and_sections_tracked():
    paras = list(wikitext_paragraphs("Thing", WIKITEXT, min_chars=2))
    assert [p.text for p in paras] == [
        "Thing is a widget made of wood. It was named in 1900.",
        "A second lead paragraph with an external link.",
        "Early history of the thing.",
        "The early years.",
    ]
    assert [p.id for p in paras] == ["Thing-0", "Thing-1", "Thing-2", "Thing-3"]
    assert [p.headers for p in paras] == [[], [], ["History"], ["History", "Early years"]]
    assert paras[3].section == "Early years" and paras[0].section == ""


def test_sample_dump_paragraphs_match_what_the_generator_wrote(small_sample, small_sample_params):
    vital = load_vital_articles()[: small_sample_params.wiki_articles]
    expected = {d["title"]: paras for _, d, paras in cirrus_documents(vital, small_sample_params.seed) if d["namespace"] == 0}
    counts: Counter = Counter()
    got: dict[str, list[str]] = {}
    for p in dump_paragraphs(small_sample / DUMP_NAME, counts, min_chars=2):
        got.setdefault(p.title, []).append(p.text)
        assert p.id == f"{p.title}-{len(got[p.title]) - 1}"
    squash = lambda t: " ".join(t.split())  # noqa: E731 - the parser collapses runs of spaces
    assert got == {t: [squash(p) for p in ps] for t, ps in expected.items() if ps}
    assert counts["articles"] == small_sample_params.wiki_articles and counts["malformed_lines"] == 0


def test_malformed_lines_are_counted_with_line_numbers_and_skips_apply(tmp_path, caplog):
    lines = [
        {"index": {"_id": "1"}}, {"title": "Good", "namespace": 0, "source_text": "Good text here.", "text": "x"},
        "{not json", "[1, 2]",
        {"index": {"_id": "2"}}, {"namespace": 0, "text": "no title"},
        {"index": {"_id": "3"}}, {"title": "Wikipedia:Project", "namespace": 4, "source_text": "Project."},
        {"index": {"_id": "4"}}, {"title": "Old name", "namespace": 0, "source_text": "#REDIRECT [[Good]]"},
        {"index": {"_id": "5"}}, {"title": "Plain", "namespace": 0, "text": "Only plain   text."},
    ]
    path = tmp_path / "dump.json.gz"
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        for line in lines:
            fh.write((line if isinstance(line, str) else json.dumps(line)) + "\n")
    counts: Counter = Counter()
    with caplog.at_level(logging.WARNING):
        paras = list(dump_paragraphs(path, counts, logging.getLogger("t"), min_chars=2))
    assert [(p.id, p.text) for p in paras] == [("Good-0", "Good text here."), ("Plain-0", "Only plain text.")]
    assert counts["malformed_lines"] == 3
    assert counts["skipped_namespace"] == 1 and counts["skipped_redirect"] == 1 and counts["fallback_to_text"] == 1
    assert f"{path}:3: malformed JSON" in caplog.text and f"{path}:4: not a JSON object" in caplog.text
    assert f"{path}:6: document without a string title" in caplog.text



def _read_dump(tmp_path, lines: list[dict], caplog):
    """Write ``lines`` as a gzipped CirrusSearch dump and read it back: (path, counts, paragraphs)."""
    path = tmp_path / "dump.json.gz"
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        fh.write("".join(json.dumps(line) + "\n" for line in lines))
    counts: Counter = Counter()
    with caplog.at_level(logging.WARNING):
        paras = list(dump_paragraphs(path, counts, logging.getLogger("t"), min_chars=2))
    return path, counts, paras

def test_records_with_wrong_types_are_counted_not_fatal(tmp_path, caplog):
    lines = [
        {"index": {"_id": "1"}}, {"title": "Listy", "namespace": 0, "source_text": ["a", "list"]},
        {"index": {"_id": "2"}}, {"title": "Numbery", "namespace": 0, "text": 12345},
        {"index": {"_id": "3"}}, {"title": None, "namespace": 0, "text": "A title-less text."},
        {"index": {"_id": "4"}}, {"title": "Good", "namespace": 0, "source_text": "Good text here."},
    ]
    path, counts, paras = _read_dump(tmp_path, lines, caplog)
    assert [p.id for p in paras] == ["Good-0"]  # no "None-0"
    assert counts["malformed_lines"] == 3
    assert f"{path}:2: document 'Listy' has a non-string 'source_text'" in caplog.text
    assert f"{path}:4: document 'Numbery' has a non-string 'text'" in caplog.text
    assert f"{path}:6: document without a string title" in caplog.text


def test_a_truncated_dump_fails_naming_the_file(tmp_path):
    from pipeline.wiki.paragraphs import TruncatedDumpError

    path = tmp_path / "dump.json.gz"
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        for i in range(2000):
            fh.write(json.dumps({"index": {"_id": str(i)}}) + "\n")
            fh.write(json.dumps({"title": f"T{i}", "namespace": 0, "source_text": f"Text number {i} " * 20}) + "\n")
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(TruncatedDumpError, match=r"dump\.json\.gz: compressed data ends or breaks after line \d+"):
        list(dump_paragraphs(path, Counter(), min_chars=2))
    path.write_bytes(data[:1000] + b"\0" * 200 + data[1200:])
    with pytest.raises(TruncatedDumpError, match="dump.json.gz"):
        list(dump_paragraphs(path, Counter(), min_chars=2))


def test_parallel_parse_gives_the_same_paragraphs_and_counts(small_sample):
    """wiki.workers changes how fast, never what: same paragraphs in the same order, same counts."""
    from dataclasses import asdict

    from pipeline.sample.build import DUMP_NAME

    results = []
    for workers in (1, 2, 3):
        counts: Counter = Counter()
        results.append(([asdict(p) for p in dump_paragraphs(small_sample / DUMP_NAME, counts, workers=workers, min_chars=2)],
                        counts))
    assert results[0][0] and results[0] == results[1] == results[2]


def test_a_truncated_dump_fails_the_parallel_parse_too(small_sample, tmp_path):
    from pipeline.sample.build import DUMP_NAME
    from pipeline.wiki.paragraphs import TruncatedDumpError

    data = (small_sample / DUMP_NAME).read_bytes()
    cut = tmp_path / "cut.json.gz"
    cut.write_bytes(data[: len(data) * 2 // 3])
    with pytest.raises(TruncatedDumpError, match="cut.json.gz: compressed data ends"):
        list(dump_paragraphs(cut, Counter(), workers=2, min_chars=2))


def test_a_second_article_of_the_same_title_is_skipped_not_given_the_same_ids(tmp_path, caplog):
    """Paragraph ids are title-index: two "Paris" articles used to give two paragraphs "Paris-0"."""
    lines = [{"index": {"_id": "1"}}, {"title": "Paris", "namespace": 0, "source_text": "The first text."},
             {"index": {"_id": "2"}}, {"title": "Lyon", "namespace": 0, "source_text": "Another city."},
             {"index": {"_id": "3"}}, {"title": "Paris", "namespace": 0, "source_text": "A second copy."}]
    path, counts, paras = _read_dump(tmp_path, lines, caplog)
    assert [(p.id, p.text) for p in paras] == [("Paris-0", "The first text."), ("Lyon-0", "Another city.")]
    assert counts["duplicate_titles"] == 1 and f"{path}:6: a second article titled 'Paris'" in caplog.text
    assert len({p.id for p in paras}) == len(paras)


def test_an_oversized_document_is_skipped_without_being_held(tmp_path, caplog):
    """A 200 MB line took 3.9 GB: a line over max_document_bytes is read past in bounded pieces."""
    import tracemalloc

    path = tmp_path / "dump.json"
    huge = json.dumps({"title": "Huge", "namespace": 0, "source_text": "word " * 6_000_000})  # 30 MB
    with path.open("w", encoding="utf-8") as fh:
        fh.write(json.dumps({"index": {"_id": "1"}}) + "\n" + huge + "\n")
        fh.write(json.dumps({"index": {"_id": "2"}}) + "\n")
        fh.write(json.dumps({"title": "Small", "namespace": 0, "source_text": "Kept text."}) + "\n")
    counts: Counter = Counter()
    tracemalloc.start()
    with caplog.at_level(logging.WARNING):
        paras = list(dump_paragraphs(path, counts, logging.getLogger("t"), max_document_bytes=1_000_000, min_chars=2))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert [p.id for p in paras] == ["Small-0"] and counts["oversized_documents"] == 1
    assert f"{path}:2: document over 1000000 bytes" in caplog.text
    assert peak < 10_000_000, peak  # the 30 MB line was never held whole
