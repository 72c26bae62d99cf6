"""URL rules and layout rules of the extractor, on hand-made pages where a rule needs a case the real
fixtures do not have (a Newsbeat or /news/articles/ page, a body closed early, sidebar text blocks)."""

from __future__ import annotations

import pytest

from pipeline.nlquad.discover import classify
from pipeline.nlquad.extract import extract_page, is_bbc_host, path_rejection
from pipeline.params import project_section

PARAS = [f"Paragraph {i} of the story says something worth reading about the matter at hand." for i in range(6)]


@pytest.mark.parametrize("url,reason", [
    ("https://www.bbc.co.uk/news/newsbeat-49000001", None),
    ("https://www.bbc.com/news/articles/c4n1l6wx98go", None),
    ("https://www.bbc.co.uk/news/stories-57520169", None),
    ("http://news.bbc.co.uk/2/hi/europe/7000001.stm", None),
    ("https://www.bbc.co.uk/news/av/uk-12345678", "video"),
    ("https://www.bbc.co.uk/news/av/newsbeat-52618788/title", "video"),
    ("https://www.bbc.co.uk/news/live/uk-politics-12345678", "live"),
    ("https://www.bbc.co.uk/news/in-pictures-12345678", "in_pictures"),
    ("https://www.bbc.co.uk/news/topics/cp7r8vgl2lgt/donald-trump", "index"),
    ("https://www.bbc.co.uk/sport/football/52630497", "sport"),
    ("https://www.bbc.co.uk/news", "index"),
    ("https://www.bbc.co.uk/news/world/europe", "index"),
    ("https://www.bbc.co.uk/news/newsbeat", "index"),
    ("https://www.bbc.co.uk/weather/2643743", "not_news"),
    ("https://www.bbc.co.uk/newsround/12345678", "not_news"),
    ("https://evilbbc.co.uk/news/uk-12345678", "not_bbc"),
    ("https://notbbc.com/news/uk-12345678", "not_bbc"),
    ("https://www.bbc.co.uk.example.com/news/uk-12345678", "not_bbc"),
])
def test_url_rules(url, reason):
    assert path_rejection(url) == reason


def test_bbc_host_on_a_dot_boundary():
    assert is_bbc_host("www.bbc.co.uk") and is_bbc_host("bbc.com") and is_bbc_host("WWW.BBC.COM:443")
    assert not is_bbc_host("evilbbc.co.uk") and not is_bbc_host("bbc.com.evil.net")


@pytest.mark.parametrize("path,expected", [
    ("https://www.bbc.co.uk/news/newsbeat-49000001", None),
    ("https://www.bbc.com/news/articles/c4n1l6wx98go", None),
    ("https://www.bbc.co.uk/news/uk-politics-49000001", None),
    ("https://www.bbc.co.uk/news/av/uk-49000001", "excluded"),
    ("https://www.bbc.co.uk/news/world/europe", "not_article_url"),
])
def test_discover_accepts_every_article_url_form(path, expected):
    assert classify(path, project_section("discover")) == expected


def test_discover_date_range_beyond_2020():
    p = project_section("discover", start="2016-01-01", end="2026-06-30")
    assert p.end.year == 2026


def _story_body(inner: str, url_title: str = "Newsbeat story") -> str:
    return (f'<html><head><link rel="canonical" href="https://www.bbc.co.uk/news/newsbeat-49000001"></head><body>'
            f'<div class="story-body"><h1 class="story-body__h1">{url_title}</h1>'
            f'<div class="date date--v2" data-seconds="abc">x</div>{inner}</div></body></html>')


def test_newsbeat_story_body_article_with_question():
    inner = ('<div class="story-body__inner"><p class="story-body__introduction">' + PARAS[0] + "</p>"
             '<h2 class="story-body__crosshead">Why does it matter?</h2><p>' + PARAS[1] + "</p><p>" + PARAS[2]
             + "</p></div>")
    ex = extract_page(_story_body(inner), "https://www.bbc.co.uk/news/newsbeat-49000001")
    assert ex.rejected is None and ex.date is None  # a malformed data-seconds is no date, not a crash
    assert [(s.heading, s.paragraphs) for s in ex.sections] == [("Why does it matter?", PARAS[1:3])]


def test_story_body_paragraphs_in_wrappers_and_after_an_early_close():
    """A wrapper div must not hide paragraphs, and a stray </div> that closes story-body__inner early leaves
    the rest of the story as its siblings: both are body text. Boxouts and pull quotes are not."""
    inner = ('<div class="story-body__inner"><p>' + PARAS[0] + "</p><div><p>" + PARAS[1] + "</p></div>"
             '<aside class="pullout"><h2>At the scene</h2><p>Boxout text that is not the story.</p></aside>'
             '<blockquote class="quote"><p>"A pull quote repeated from the body"</p></blockquote>'
             "<p>" + PARAS[2] + "</p></div><p>" + PARAS[3] + '</p><h2 class="story-body__crosshead">Later</h2><p>'
             + PARAS[4] + "</p>")
    ex = extract_page(_story_body(inner), "https://www.bbc.co.uk/news/newsbeat-49000001")
    assert ex.intro == PARAS[:4]
    assert [(s.heading, s.paragraphs) for s in ex.sections] == [("Later", [PARAS[4]])]


def _data_component(blocks: str, outside: str = "") -> str:
    return ('<html><head><link rel="canonical" href="https://www.bbc.com/news/articles/c4n1l6wx98go">'
            '<script type="application/ld+json">{"@context":"https://schema.org","datePublished":'
            '"2024-03-01T10:00:00+01:00"}</script></head><body><main><article>'
            '<div data-component="headline-block"><h1>A headline</h1></div>'
            '<div data-component="byline-block"><time datetime="2024-03-02T12:00:00.000Z">2 March</time></div>'
            + blocks + "</article>" + outside + "</main></body></html>")


def _text(p: str) -> str:
    return f'<div data-component="text-block"><p>{p}</p></div>'


def test_data_component_article_only_with_promo_boxes_and_notes_removed():
    blocks = (_text(PARAS[0]) + '<div data-component="subheadline-block"><h2>What happened next?</h2></div>'
              + _text(PARAS[1])
              + '<div data-component="unordered-list-block"><ul><li><b>READ MORE:</b> <a href="/news/x-1">One</a></li>'
              '<li>WATCH: <a href="/news/av/x-2">Two</a></li></ul></div>'
              + _text("Follow Jane on <a href='https://twitter.com/jane'>Twitter</a>")
              + '<div data-component="subheadline-block"><h2>Find out more</h2></div>'
              + _text("<a href='https://www.bbc.co.uk/sounds/x'>Listen to the podcast on BBC Sounds</a>")
              + '<div data-component="image-block"><img alt="Presentational grey line" src="grey_line.png"></div>'
              + _text(PARAS[2])
              + _text("<i>Jane Doe is the author of a book about the case.</i>")
              + '<div data-component="subheadline-block"><h2>You may also be interested in:</h2></div>'
              + _text(PARAS[3]))
    sidebar = '<aside><div data-component="text-block"><p>' + PARAS[4] + "</p></div></aside>"
    ex = extract_page(_data_component(blocks, sidebar), "https://www.bbc.com/news/articles/c4n1l6wx98go")
    assert ex.rejected is None and ex.title == "A headline"
    assert ex.date == "2024-03-01T09:00:00Z"  # datePublished in UTC, not the <time> of the last update
    assert ex.intro == [PARAS[0]]
    assert [(s.heading, s.paragraphs, s.bullet) for s in ex.sections] == [
        ("What happened next?", [PARAS[1], PARAS[2]], False)]


def test_page_without_article_body_is_rejected_by_content():
    html = ('<html><head><link rel="canonical" href="https://www.bbc.co.uk/news/uk-49000002"></head><body>'
            '<div class="gs-c-promo"><p>Promo one</p></div></body></html>')
    assert extract_page(html, "https://www.bbc.co.uk/news/uk-49000002").rejected == "no_article_body"
