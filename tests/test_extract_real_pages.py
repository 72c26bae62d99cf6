"""The extractor on real BBC pages (../shared/fixtures/bbc), expectations checked by reading each page.

Where facts.json's broad heading list differs, the page was read: in the 2017 Egypt page the only other
<h2> is the sticky video player's title (not in div.story-body__inner), and in the April 2020 New York page
"Share this Explainer" is the heading of an embedded Q&A widget nested inside a script-driven include, not a
story-body__crosshead. Neither is an article sub-heading, so neither may become a question.
"""

from __future__ import annotations

import json

import pytest

from pipeline.nlquad.build import article_record
from pipeline.nlquad.extract import extract_page

EXPECTED = {
    # file: (template, headings, bullets, date prefix)
    "bbc_2015-04-12_world-us-canada-32275608.html": (
        "story-body", ["Analysis - Anthony Zurcher, BBC North America reporter, Washington DC"], [False], "2015-04-12T12:10"),
    "bbc_2015-04-12_world-us-canada-32275608_recaptured-2020.html": (
        "data-component", ["Analysis: Gary O'Donoghue, BBC News, Des Moines, Iowa",
                           "Hillary Clinton - her Washington career so far"], [False, True], "2015-04-12T22:36"),
    "bbc_2015-07-24_world-us-canada-33646704.html": (
        "story-body", ["Analysis: Jon Sopel, BBC News, Washington", "Kenya trip"], [False, False], "2015-07-24"),
    "bbc_2016-04-22_business-36108166.html": ("story-body", ["'Gaining momentum'", "Cloud shift"], [False, False], "2016-04-22"),
    "bbc_2017-03-16_world-middle-east-39298218.html": ("story-body", [], [], "2017-03-16T21:07"),
    "bbc_2020-04-10_world-us-canada-52241221.html": ("story-body", ["A city upended"], [False], "2020-04-10T16:58"),
    "bbc_2020-10-13_health-54528983.html": (
        "data-component", ["Full lockdown", "Circuit-breaker", "Going to work", "Mixing with other households",
                           "Pubs and restaurants", "Schools, colleges and universities"],
        [False, False, False, False, False, True], "2020-10-13T23:44"),
    "bbc_2022-10-10_explainers-63159607.html": (
        "data-component", ["What is the OBR and what does it do?", "Why do OBR forecasts matter?",
                           "Does the government have to follow OBR advice?", "Why was the OBR created?",
                           "Who runs the OBR?"], [False] * 5, "2022-10-10T13:21"),
}


@pytest.fixture(scope="module")
def facts(shared):
    return {f["file"]: f for f in json.loads((shared / "fixtures/bbc/facts.json").read_text())}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_article_pages(shared, facts, name):
    template, headings, bullets, date = EXPECTED[name]
    ex = extract_page((shared / "fixtures/bbc" / name).read_bytes(), facts[name]["url"])
    assert ex.rejected is None
    assert ex.template == template
    assert ex.title == facts[name]["title"]
    assert [s.heading for s in ex.sections] == headings
    assert [s.bullet for s in ex.sections] == bullets
    assert ex.date and ex.date.startswith(date)
    text = " ".join(ex.intro + [p for s in ex.sections for p in s.paragraphs])
    for junk in ("Image copyright", "Image caption", "Media caption", "Share this with", "Related Topics",
                 "More on this story", "Cookies on the BBC", "bbcdotcom"):
        assert junk not in text, junk
    assert all(s.paragraphs for s in ex.sections)


def test_obr_explainer_questions_and_spans(shared, facts):
    name = "bbc_2022-10-10_explainers-63159607.html"
    ex = extract_page((shared / "fixtures/bbc" / name).read_bytes(), facts[name]["url"])
    record, dropped = article_record(ex, "explainers-63159607")
    para = record["paragraphs"][0]
    assert [qa["question"] for qa in para["qas"]] == EXPECTED[name][1]
    first = para["qas"][0]["answers"][0]
    assert first["text"].startswith("The OBR assesses the")
    assert para["context"][first["answer_start"]:first["answer_end"]] == first["text"]
    for heading in EXPECTED[name][1]:
        assert heading not in para["context"]  # sub-headings are removed from the document


def test_links_keep_their_text(shared, facts):
    name = "bbc_2016-04-22_business-36108166.html"
    ex = extract_page((shared / "fixtures/bbc" / name).read_bytes(), facts[name]["url"])
    assert ex.links and all("/news/" in link for link in ex.links)


@pytest.mark.parametrize("name,reason", [("bbc-av_2022-06-26_uk-england-dorset-61896381.html", "video"),
                                         ("bbc-sport_2024-05-12_cricket-c4n1l6wx98go.html", "sport")])
def test_non_articles_rejected_with_reason(shared, facts, name, reason):
    ex = extract_page((shared / "fixtures/bbc" / name).read_bytes(), facts[name]["url"])
    assert ex.rejected == reason


def test_cli_prints_json(shared, repo):
    import subprocess
    import sys

    path = shared / "fixtures/bbc/bbc_2016-04-22_business-36108166.html"
    out = subprocess.run([sys.executable, "-m", "pipeline.nlquad.extract", str(path)], cwd=repo,
                         capture_output=True, text=True, check=True).stdout
    row = json.loads(out)
    assert row["template"] == "story-body" and [s["heading"] for s in row["sections"]] == ["'Gaining momentum'", "Cloud shift"]
