"""The extractor on every real BBC page in ../shared/fixtures/bbc, expectations checked by reading each page.

The 21 pages of 2013-2024 are pinned in ``ARTICLES`` below; the ten pages of the older layouts (2004-2013),
whose ``facts.json`` entries carry full counts and texts, are checked against those facts directly.

Where facts.json's broad heading list differs, the page was read:
- 2017 Egypt page: the only other <h2> is the sticky video player's title (outside story-body__inner).
- April 2020 New York page: "Share this Explainer" heads an embedded Q&A widget (div.idt2 include), not a
  story-body__crosshead; its "A city upended" section holds a byline ("By Nada Tawfik, BBC News, New York")
  and a six-item "LABEL: link" explainer box, neither of which is answer text.
- 2017 listicle (business-39441970): "Taxes and Wages", "Benefits", "Others:" are group titles directly
  followed by the next cross-head: not sections (facts.json lists only the 15 numbered ones).
- 2021 long read in the 2024 sc-* layout: "Find out more" opens a podcast promo closed by a grey line (the
  article's last three paragraphs follow it), the italic author bio is an editorial note, and "You may
  also be interested in:" opens a promo for another story: none of it is a section or body text.
- The 2015 Clinton pair are two editions (before and after the announcement, new headline and body), so
  each is checked on its own; the 2013 and 2017 pairs are one text in two layouts.
"""

from __future__ import annotations

import json

import pytest

from pipeline.nlquad.build import article_record
from tests.extract_helpers import extract_page

# file: (template, date (UTC, first publication), intro paragraphs, [(heading, paragraphs, bullet)],
#        first words of the first and of the last body paragraph)
ARTICLES = {
    "bbc_2013-01-28_world-latin-america-21226565_pre-story-body-template.html": (
        "cream", "2013-01-28T05:24:04Z", 14, [("'Dark, heavy smoke'", 15, False)],
        "Brazil has declared three days", "Family members came to identify"),
    "bbc_2013-01-28_world-latin-america-21226565_recaptured-story-body.html": (
        "story-body", "2013-01-28T12:45:51Z", 14, [("'Dark, heavy smoke'", 15, False)],
        "Brazil has declared three days", "Family members came to identify"),
    "bbc_2015-04-12_world-us-canada-32275608.html": (
        "story-body", "2015-04-12T12:10:25Z", 5,
        [("Analysis - Anthony Zurcher, BBC North America reporter, Washington DC", 14, False)],
        "Former US Secretary of State Hillary Clinton is expected", "Mrs Clinton stood by her husband"),
    "bbc_2015-04-12_world-us-canada-32275608_recaptured-2020.html": (
        "data-component", "2015-04-12T22:36:19Z", 11,
        [("Analysis: Gary O'Donoghue, BBC News, Des Moines, Iowa", 12, False),
         ("Hillary Clinton - her Washington career so far", 8, True)],
        "Former US Secretary of State Hillary Clinton has formally", "Investigated by the State Department"),
    "bbc_2015-07-24_world-us-canada-33646704.html": (
        "story-body", "2015-07-24T04:36:09Z", 18,
        [("Analysis: Jon Sopel, BBC News, Washington", 10, False), ("Kenya trip", 7, False)],
        "President Barack Obama has admitted", "Mr Obama will become the first US president"),
    "bbc_2016-04-22_business-36108166.html": (
        "story-body", "2016-04-22T03:40:15Z", 6, [("'Gaining momentum'", 4, False), ("Cloud shift", 3, False)],
        "Microsoft's quarterly profit has missed", "Earlier this week US chipmaker Intel"),
    "bbc_2017-03-16_world-middle-east-39298218.html": (
        "story-body", "2017-03-16T21:07:02Z", 9, [],
        "An ancient statue which was pulled from the mud", "The Ministry of Antiquities said"),
    "bbc_2017-03-16_world-us-canada-39287656.html": (
        "story-body", "2017-03-16T01:15:41Z", 10,
        [("Back to the drawing board: Anthony Zurcher, BBC News, Washington", 13, False)],
        "A Federal judge in Hawaii has blocked", "In his presidential campaign, Mr Trump vowed"),
    "bbc_2017-03-31_business-39441970.html": (
        "story-body", "2017-03-31T21:16:50Z", 4,
        [("1. Income tax", 3, False), ("2. National Living Wage", 8, True), ("3. Lifetime Isa", 3, False),
         ("4. Isa", 3, False), ("5. Car tax (Vehicle Excise Duty)", 5, False), ("6. Inheritance tax", 4, False),
         ("7. Council tax", 4, False), ("8. Child tax credit", 5, False),
         ("9. Employment Support Allowance (ESA)", 3, False), ("10. Freeze to benefits", 3, False),
         ("11. Universal credit", 3, False), ("12. NHS charges", 2, False), ("13. Pre-payment meters", 2, False),
         ("14. Water bills", 2, False), ("15. Other bills", 3, False)],
        "Household budgets are likely to be further stretched", "On 1 April the cost of a TV licence"),
    "bbc_2017-07-10_business-40504764.html": (
        "story-body", "2017-07-09T23:17:52Z", 38, [],
        "Carl Rodrigues says that his family", '"My mother-in-law is not a shy person'),
    "bbc_2017-07-10_business-40504764_recaptured-2024.html": (
        "data-component", "2017-07-09T23:17:52Z", 38, [],
        "Carl Rodrigues says that his family", '"My mother-in-law is not a shy person'),
    "bbc_2018-01-28_world-us-canada-42853225.html": (
        "story-body", "2018-01-28T21:10:37Z", 13, [],
        "President Donald Trump has hit back at Jay-Z", "Mr Trump has denied accusations he is racist"),
    "bbc_2020-04-10_world-us-canada-52241221.html": (
        "story-body", "2020-04-10T16:58:15Z", 14, [("A city upended", 21, False)],
        "Images have emerged of coffins", "He said it had cast a spotlight on inequity"),
    "bbc_2020-10-13_health-54528983.html": (
        "data-component", "2020-10-13T23:44:11Z", 3,
        [("Full lockdown", 3, False), ("Circuit-breaker", 3, False), ("Going to work", 3, False),
         ("Mixing with other households", 3, False), ("Pubs and restaurants", 3, False),
         ("Schools, colleges and universities", 3, False)],
        "Documents have revealed the UK government", "What happened: Schools and universities remain open"),
    "bbc_2020-11-30_technology-55133141.html": (
        "data-component", "2020-11-30T17:00:12Z", 4,
        [("'Employee-surveillance tool'", 4, False), ("Facial expressions", 10, False), ("'False premise'", 6, False),
         ("'Discriminatory outcomes'", 5, False)],
        "Technology giant Microsoft has filed a patent", '"In particular, we advocate more worker consultation'),
    "bbc_2021-06-20_stories-57520169.html": (
        "data-component", "2021-06-20T23:45:52Z", 106, [],
        "In 2016 North Korean hackers planned", "Investigators have uncovered how a tiny"),
    "bbc_2022-10-10_explainers-63159607.html": (
        "data-component", "2022-10-10T13:21:17Z", 2,
        [("What is the OBR and what does it do?", 5, False), ("Why do OBR forecasts matter?", 3, False),
         ("Does the government have to follow OBR advice?", 11, False), ("Why was the OBR created?", 4, False),
         ("Who runs the OBR?", 2, False)],
        "The Office for Budget Responsibility (OBR) monitors", "It has three members, including the current chair"),
}
NON_ARTICLES = {
    "bbc-av_2020-05-11_av-newsbeat-52618788-coronavirus-how-sweden-is-keeping-its-p.html": "video",
    "bbc-av_2022-06-26_uk-england-dorset-61896381.html": "video",
    "bbc-sport_2020-05-12_football-52630497.html": "sport",
    "bbc-sport_2024-05-12_cricket-c4n1l6wx98go.html": "sport",
}
FURNITURE = ("Image copyright", "Image caption", "Image source", "Media caption", "Media playback is unsupported",
             "Share this with", "Related Topics", "More on this story", "Cookies on the BBC", "agree to cookies",
             "bbcdotcom", "Follow Rachel on Twitter", "A SIMPLE GUIDE:", "LOCKDOWN LOOK-UP:", "By Nada Tawfik",
             "Geoff White is the author", "Ruja Ignatova", "Send your pictures", "Read the terms and conditions",
             "Top Stories", "Most Read", "Eyewitness accounts", "The local gym has been turned into")


@pytest.fixture(scope="module")
def facts(shared):
    return {f["file"]: f for f in json.loads((shared / "fixtures/bbc/facts.json").read_text())}


def _extract(shared, facts, name):
    url = facts[name]["url"].split(" ")[0]  # "URL (Wayback capture ...)" on replays
    return extract_page((shared / "fixtures/bbc" / name).read_bytes(), url)


def _body(ex):
    return ex.intro + [p for s in ex.sections for p in s.paragraphs]


# The older layouts: file -> (layout, date). Everything else is read from the page's facts.json entry.
OLDER_LAYOUTS = {
    "bbc_2004-09-06_business-3630986.html": ("stm", "2004-09-06T14:41:29Z"),
    "bbc_2005-01-12_technology-4168111.html": ("stm", "2005-01-12T13:53:28Z"),
    "bbc_2009-05-02_programmes-from-our-own-correspondent-8029015.html": ("stm", "2009-05-02T11:14:14Z"),
    "bbc_2009-05-08_northern-ireland-8040164.html": ("stm", "2009-05-08T11:54:51Z"),
    "bbc_2009-05-22_magazine-8063681.html": ("stm", "2009-05-22T12:27:46Z"),
    "bbc_2010-06-06_england-10249066.html": ("cream", "2010-06-06T13:48:45Z"),
    "bbc_2012-11-07_world-us-canada-20230333.html": ("cream", "2012-11-07T00:13:06Z"),
    "bbc_2013-06-05_science-environment-22780651.html": ("cream", "2013-06-05T17:12:26Z"),
    "bbc_2013-06-06_world-22795420.html": ("cream", "2013-06-06T15:33:56Z"),
    "bbc_2013-10-30_world-us-canada-24751821.html": ("cream", "2013-10-30T21:55:59Z"),
}


def test_every_fixture_is_covered(facts):
    assert set(facts) == set(ARTICLES) | set(NON_ARTICLES) | set(OLDER_LAYOUTS)


@pytest.mark.parametrize("name", sorted(OLDER_LAYOUTS))
def test_older_layout_pages_match_their_facts(shared, facts, name):
    """Headline, date, every section with its paragraph count, first and last paragraph word for word, and
    none of the page's furniture (captions, toolbars, call-outs, broadcast notes, credits) anywhere."""
    fact = facts[name]
    layout, date = OLDER_LAYOUTS[name]
    ex = _extract(shared, facts, name)
    assert ex.rejected is None and (ex.template, ex.date, ex.title) == (layout, date, fact["title"])
    assert fact["published"].replace(" ", "T").replace("+00:00", "")[:19] == date[:19]
    assert len(ex.intro) == fact["intro_paragraphs"]
    assert [(s.heading, len(s.paragraphs), s.bullet) for s in ex.sections] == [
        (s["subheading"], s["paragraphs"], s["bullet_list"]) for s in fact["sections"]]
    body = _body(ex)
    assert len(body) == fact["body_paragraphs"]
    assert (body[0], body[-1]) == (fact["first_body_paragraph"], fact["last_body_paragraph"])
    text = "\n".join([ex.title, *body, *(s.heading for s in ex.sections)])
    for junk in fact["furniture_absent"]:
        assert junk not in text, junk
    assert not any(s.heading.endswith("?") for s in ex.sections)  # no page here has an interrogative one


def test_captures_as_served_give_the_original_article(shared, facts):
    """Non-UTF-8 bytes decode by their declared charset (the raw 0xA3 of a headline is a pound sign), a
    Wayback replay's toolbar and rewritten links are the archive's, not the page's, and the CleanEval copy's
    wrapper line before the doctype changes nothing."""
    woodward = _extract(shared, facts, "bbc_2009-05-08_northern-ireland-8040164.html")
    assert woodward.title.startswith("\u00a3100K") and "\ufffd" not in "".join(_body(woodward))
    snowden = _extract(shared, facts, "bbc_2013-10-30_world-us-canada-24751821.html")
    assert snowden.canonical_url == "http://www.bbc.co.uk/news/world-us-canada-24751821"
    assert all("archive.org" not in link for link in snowden.links)
    raw = (shared / "fixtures/bbc/bbc_2013-10-30_world-us-canada-24751821.html").read_bytes()
    replay_url = "https://web.archive.org/web/20131031012325/http://www.bbc.co.uk/news/world-us-canada-24751821"
    assert extract_page(raw, replay_url).to_json() | {"url": None} == snowden.to_json() | {"url": None}
    page = (shared / "fixtures/bbc/bbc_2004-09-06_business-3630986.html").read_bytes()
    url = facts["bbc_2004-09-06_business-3630986.html"]["url"]
    unwrapped = page.split(b"\n", 1)[1].rsplit(b"</text>", 1)[0]
    assert extract_page(unwrapped, url).to_json() == extract_page(page, url).to_json()


@pytest.mark.parametrize("name", sorted(ARTICLES))
def test_article_pages(shared, facts, name):
    template, date, n_intro, sections, first, last = ARTICLES[name]
    ex = _extract(shared, facts, name)
    assert ex.rejected is None
    assert ex.template == template
    assert ex.title == facts[name]["title"]
    assert ex.date == date
    assert len(ex.intro) == n_intro
    assert [(s.heading, len(s.paragraphs), s.bullet) for s in ex.sections] == sections
    body = _body(ex)
    assert body[0].startswith(first) and body[-1].startswith(last)
    text = "\n".join(body)
    for junk in FURNITURE:
        assert junk not in text, junk
    assert len(set(body)) == len(body)  # nothing read twice


@pytest.mark.parametrize("name,reason", sorted(NON_ARTICLES.items()))
def test_non_articles_rejected_with_reason(shared, facts, name, reason):
    assert _extract(shared, facts, name).rejected == reason


def test_recapture_in_a_later_layout_gives_the_same_article(shared, facts):
    """2013: the cream page and its story-body re-capture; 2017: story-body and its 2024 ssrcss re-capture,
    which differs in one word the BBC corrected in between ("then need" -> "they need")."""
    cream = _extract(shared, facts, "bbc_2013-01-28_world-latin-america-21226565_pre-story-body-template.html")
    later = _extract(shared, facts, "bbc_2013-01-28_world-latin-america-21226565_recaptured-story-body.html")
    assert (cream.title, cream.intro, cream.sections) == (later.title, later.intro, later.sections)
    # The cream page's statistics beacon says first_pub 05:24:04 (its OriginalPublicationDate, 12:45:51, is
    # the last update); the re-capture's beacon says 04:31:40 and its only shown date is the 12:45:51 update.
    assert cream.date[:10] == later.date[:10] == "2013-01-28"
    a = _extract(shared, facts, "bbc_2017-07-10_business-40504764.html")
    b = _extract(shared, facts, "bbc_2017-07-10_business-40504764_recaptured-2024.html")
    assert (a.title, a.date, len(a.intro)) == (b.title, b.date, len(b.intro))
    differ = [(x, y) for x, y in zip(a.intro, b.intro, strict=True) if x != y]
    assert differ == [(x, x.replace("then need", "they need")) for x, _ in differ] and len(differ) == 1


def test_in_body_explainer_box_stays_out_of_the_answer(shared, facts):
    """The B1 Sage page's last section used to end with a five-item "LABEL: link" box (LOCKDOWN LOOK-UP,
    THREE TIERS, ...), which the NLQuAD builder appended to the answer before it."""
    ex = _extract(shared, facts, "bbc_2020-10-13_health-54528983.html")
    last = ex.sections[-1].paragraphs
    assert last[-1].startswith("What happened: Schools and universities remain open")
    assert not any(":" in p.split()[0] and p.split()[0].isupper() for p in last)


def test_obr_explainer_questions_and_spans(shared, facts):
    name = "bbc_2022-10-10_explainers-63159607.html"
    ex = _extract(shared, facts, name)
    record, dropped = article_record(ex, "explainers-63159607")
    para = record["paragraphs"][0]
    headings = [h for h, _, _ in ARTICLES[name][3]]
    assert [qa["question"] for qa in para["qas"]] == headings
    first = para["qas"][0]["answers"][0]
    assert first["text"].startswith("The OBR assesses the")
    assert para["context"][first["answer_start"]:first["answer_end"]] == first["text"]
    for heading in headings:
        assert heading not in para["context"]  # sub-headings are removed from the document


def test_links_keep_their_text(shared, facts):
    ex = _extract(shared, facts, "bbc_2016-04-22_business-36108166.html")
    assert ex.links and all("/news/" in link for link in ex.links)


def test_cli_prints_json(shared, repo):
    import subprocess
    import sys

    path = shared / "fixtures/bbc/bbc_2016-04-22_business-36108166.html"
    out = subprocess.run([sys.executable, "-m", "pipeline.experiments.extract_page", str(path)], cwd=repo,
                         capture_output=True, text=True, check=True).stdout
    row = json.loads(out)
    assert row["template"] == "story-body" and [s["heading"] for s in row["sections"]] == ["'Gaining momentum'", "Cloud shift"]
