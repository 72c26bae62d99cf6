"""URL rules and layout rules of the extractor, on hand-made pages where a rule needs a case the real
fixtures do not have (a Newsbeat or /news/articles/ page, a body closed early, sidebar text blocks)."""

from __future__ import annotations

import pytest

from pipeline.nlquad.build import article_record
from pipeline.nlquad.bbc_urls import article_key
from pipeline.nlquad.discover import classify
from pipeline.nlquad.bbc_urls import is_bbc_host, path_rejection
from pipeline.params import project_section
from tests.extract_helpers import extract_page

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
    ("http://news.bbc.co.uk/1/hi/programmes/from_our_own_correspondent/8029015.stm", None),
    ("http://news.bbc.co.uk/2/hi/business/3630986.stm", None),
    ("http://news.bbc.co.uk/1/hi/video_and_audio/news_channel_live/7459669.stm", "excluded"),
    ("http://news.bbc.co.uk/sport1/hi/football/8452997.stm", "excluded"),  # sport: never an article here
])
def test_discover_accepts_every_article_url_form(path, expected):
    assert classify(path, project_section("discover")) == expected


@pytest.mark.parametrize("url", ["https://www.bbc.co.uk/news/av/uk-49000001", "https://www.bbc.co.uk/news/live/uk-49000001",
                                 "https://www.bbc.co.uk/news/in-pictures-49000001", "https://www.bbc.co.uk/sport/football/49000001",
                                 "https://www.bbc.co.uk/news/video_and_audio/headlines/49000001"])
def test_discovery_and_extraction_leave_out_the_same_sections(url):
    """One rule (pipeline/nlquad/bbc_urls.py): what the extractor rejects by its section, discovery and the
    crawler's link following never collect, whatever discover.exclude_pattern says."""
    assert path_rejection(url) in ("video", "live", "in_pictures", "sport", "index")
    assert classify(url, project_section("discover", exclude_pattern=None)) == "excluded"


def test_exclude_pattern_leaves_out_more_and_is_optional():
    url = "https://www.bbc.co.uk/news/newsbeat-49000001"
    assert classify(url, project_section("discover", exclude_pattern=None)) is None
    assert classify(url, project_section("discover", exclude_pattern="newsbeat")) == "excluded"


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


# ------------------------------------------------------------------ endings that are not the article
# Each layout's own markup for the reader call-out, a Facebook Q&A invitation, a bio, a broadcast note.
_CALL_OUT_LEAD = ('Are you in the area? If it is safe to do so, share with us by emailing '
                  '<a href="mailto:haveyoursay@bbc.co.uk">haveyoursay@bbc.co.uk</a>.')
_CALL_OUT_CONTACT = ("Please include a contact number if you are willing to speak to a BBC journalist. "
                     "You can also get in touch in the following ways:")
_CALL_OUT_ITEMS = ['WhatsApp: <b>+44 7555 173285</b>',
                   'Tweet: <a href="https://twitter.com/BBC_HaveYourSay">@BBC_HaveYourSay</a>',
                   'Send pictures/video to <a href="mailto:yourpics@bbc.co.uk">yourpics@bbc.co.uk</a>',
                   '<a href="https://www.bbc.co.uk/send/u1">Upload your pictures or video</a>',
                   'Text an SMS or MMS to 61124 or +44 7624 800 100',
                   'Please read our <a href="/terms">terms &amp; conditions</a> and <a href="/privacy">privacy '
                   'policy</a>']


def _body_text(ex) -> str:
    return "\n".join(ex.intro + [p for s in ex.sections for p in s.paragraphs])


def test_call_out_box_is_not_the_last_answer_in_the_story_body_layout():
    """2017: the call-out's two paragraphs (plain or bold) and its story-body__unordered-list."""
    for wrap in ("{}", "<b>{}</b>"):
        items = "".join(f'<li class="story-body__list-item">{i}</li>' for i in _CALL_OUT_ITEMS)
        inner = ('<div class="story-body__inner"><p class="story-body__introduction">' + PARAS[0] + "</p>"
                 '<h2 class="story-body__crosshead">What happens now?</h2><p>' + PARAS[1] + "</p><p>" + PARAS[2]
                 + "</p><p>" + wrap.format(_CALL_OUT_LEAD) + "</p><p>" + wrap.format(_CALL_OUT_CONTACT) + "</p>"
                 '<ul class="story-body__unordered-list">' + items + "</ul></div>")
        ex = extract_page(_story_body(inner), "https://www.bbc.co.uk/news/newsbeat-49000001")
        assert [(s.heading, s.paragraphs, s.bullet) for s in ex.sections] == [
            ("What happens now?", PARAS[1:3], False)], wrap


def test_call_out_box_is_not_the_last_answer_in_the_data_component_layout():
    """2020: text-blocks and an unordered-list-block, after the last section's prose."""
    items = "".join(f"<li>{i}</li>" for i in _CALL_OUT_ITEMS)
    blocks = (_text(PARAS[0]) + '<div data-component="crosshead-block"><h2>Why now?</h2></div>' + _text(PARAS[1])
              + _text(PARAS[2]) + _text(f"<b>{_CALL_OUT_LEAD}</b>") + _text(f"<b>{_CALL_OUT_CONTACT}</b>")
              + f'<div data-component="unordered-list-block"><ul>{items}</ul></div>')
    ex = extract_page(_data_component(blocks), "https://www.bbc.com/news/articles/c4n1l6wx98go")
    assert [(s.heading, s.paragraphs, s.bullet) for s in ex.sections] == [("Why now?", PARAS[1:3], False)]


def test_facebook_q_and_a_invitation_is_not_the_last_answer():
    """2015 story-body: an invitation to a Facebook Q&A closes the story."""
    inner = ('<div class="story-body__inner"><p>' + PARAS[0] + '</p><h2 class="story-body__crosshead">'
             "Is it legal?</h2><p>" + PARAS[1] + "</p><p>Join our <a href='https://facebook.com/bbcnews'>"
             "Facebook Q&amp;A</a> with BBC correspondent Jane Doe on Thursday at 15:00 GMT.</p></div>")
    ex = extract_page(_story_body(inner), "https://www.bbc.co.uk/news/newsbeat-49000001")
    assert [(s.heading, s.paragraphs) for s in ex.sections] == [("Is it legal?", [PARAS[1]])]


def _cream(body: str) -> str:
    return ('<html><head><link rel="canonical" href="http://www.bbc.co.uk/news/magazine-20000001">'
            '<meta name="OriginalPublicationDate" content="2012/03/01 10:00:00"/></head><body>'
            '<div class="story-body"><h1 class="story-header">A column</h1>' + body + "</div></body></html>")


def test_bio_and_broadcast_note_are_not_the_last_answer_in_the_2010_2013_layout():
    body = ('<p class="introduction">' + PARAS[0] + '</p><p><span class="cross-head">Who pays?</span></p><p>'
            + PARAS[1] + "</p><p>" + PARAS[2] + "</p><p>Jane Doe is the author of The Long Road, published by "
            "Penguin.</p><p>BBC Radio 4's Analysis is broadcast on Monday 9 March at 20:30 GMT. Or "
            '<a href="http://www.bbc.co.uk/iplayer/x">listen again on BBC iPlayer</a>.</p>')
    ex = extract_page(_cream(body), "http://www.bbc.co.uk/news/magazine-20000001")
    assert ex.template == "cream" and ex.date == "2012-03-01T10:00:00Z"
    assert [(s.heading, s.paragraphs) for s in ex.sections] == [("Who pays?", PARAS[1:3])]


def test_endings_rule_reads_only_the_tail():
    """A broadcast or a book named mid-story is article text, a lone question may end a story, and a long
    closing paragraph that mentions getting in touch is prose."""
    mid = "The programme was broadcast on BBC Radio 4 on Monday, and listeners could listen again on BBC iPlayer."
    closing = ("Police asked anyone who saw the car to get in touch, " + "and said the road would stay closed " * 12
               + "until the investigation ends.")
    body = ('<p class="introduction">' + PARAS[0] + "</p><p>" + mid + "</p><p>" + PARAS[1]
            + "</p><p>Will the plan work?</p>")
    ex = extract_page(_cream(body), "http://www.bbc.co.uk/news/magazine-20000001")
    assert ex.intro == [PARAS[0], mid, PARAS[1], "Will the plan work?"]
    ex = extract_page(_cream('<p class="introduction">' + PARAS[0] + "</p><p>" + closing + "</p>"),
                      "http://www.bbc.co.uk/news/magazine-20000001")
    assert ex.intro == [PARAS[0], closing]


def _stm_page(body: str) -> bytes:
    page = ('<html><head><title>BBC NEWS | UK | Floods hit town</title>'
            '<meta http-equiv="content-type" content="text/html;charset=iso-8859-1" />'
            '<meta name="OriginalPublicationDate" content="2007/07/21 09:30:00" /></head><body><table><tr><td>'
            '<div class="mxb"><h1>Floods hit \xa3 town</h1></div></td></tr><tr><td class="storybody">'
            "<!-- S BO -->" + body + "<!-- E BO --></td></tr></table>"
            "<!-- S BO --><p>Most Popular Now | 1,234 people are reading stories on the site right now.</p>"
            "<!-- E BO --></body></html>")
    return page.encode("cp1252")


def test_stm_layout_cross_heads_boxes_and_call_out():
    """news.bbc.co.uk's table layout: unclosed <p> separators, a bold lead, bold cross-heads (one a question:
    an NLQuAD question), an image table and a box cut, bare text after a box its own paragraph, and the
    Have Your Say form and its lead line out."""
    body = ("<!-- S SF --><p class=\"first\"><b>" + PARAS[0] + "</b><!-- E SF --><p>" + PARAS[1]
            + "<p><b>What went wrong?</b><p>" + PARAS[2] + "<!-- S IIMA --><table><tr><td><div class=\"cap\">"
            "A caption</div></td></tr></table><!-- E IIMA -->" + PARAS[3]
            + "<!-- S IBOX --><table><tr><td><div class=\"sih\">WHAT NEXT?</div>Box text.</td></tr></table>"
            "<!-- E IBOX --><p>" + PARAS[4] + "<p></p><hr/><p><b>Add your comments on this story, using the "
            "form below.</b></p><!-- S IFOR --><form><input name='x'></form><!-- E IFOR -->")
    ex = extract_page(_stm_page(body), "http://news.bbc.co.uk/1/hi/uk/6900001.stm")
    assert (ex.template, ex.title, ex.date) == ("stm", "Floods hit \xa3 town", "2007-07-21T09:30:00Z")
    assert ex.intro == PARAS[:2]
    assert [(s.heading, s.paragraphs) for s in ex.sections] == [("What went wrong?", PARAS[2:5])]


def test_stm_page_with_an_interrogative_cross_head_builds_an_nlquad_question():
    body = ("<p><b>" + PARAS[0] + "</b><p>" + PARAS[1] + "<p><b>What went wrong?</b><p>" + PARAS[2] + "<p>"
            + PARAS[3])
    ex = extract_page(_stm_page(body), "http://news.bbc.co.uk/2/hi/uk/6900001.stm")
    record, _ = article_record(ex, article_key(ex.url))
    para = record["paragraphs"][0]
    [qa] = para["qas"]
    answer = qa["answers"][0]
    assert qa["question"] == "What went wrong?" and "What went wrong?" not in para["context"]
    assert para["context"][answer["answer_start"]:answer["answer_end"]] == answer["text"]
    assert answer["text"].startswith(PARAS[2]) and answer["text"].endswith(PARAS[3])
    assert article_key("http://news.bbc.co.uk/1/hi/uk/6900001.stm") == article_key(ex.url)  # one article


# ------------------------------------------------------------------------------------------- reader comments

def _stm(body: str) -> str:
    return ('<html><head><title>BBC NEWS | UK | A story</title><meta name="OriginalPublicationDate" '
            'content="2008/05/01 10:00:00"/></head><body><div class="mxb"><h1>A story</h1></div>'
            "<!-- S BO -->" + body + "<!-- E BO --></body></html>")


STM_URL = "http://news.bbc.co.uk/1/hi/uk/7000001.stm"


def test_2008_in_body_have_your_say_box_in_one_block_is_not_answer_text():
    """news.bbc.co.uk, 2008: the box's label, a reader's quote and name in one block between two paragraphs of
    the story; the story goes on after it."""
    body = (f"<p>{PARAS[0]}<p><b>How did it start?</b><p>{PARAS[1]}"
            '<div class="hys"><b>HAVE YOUR SAY</b><br>"They should have acted years ago, it is a disgrace."'
            '<br><i>Mike, Sheffield</i></div>'
            f'<div><a href="http://newsforums.bbc.co.uk/x">Send us your comments</a></div><p>{PARAS[2]}')
    ex = extract_page(_stm(body), STM_URL)
    assert ex.template == "stm"
    assert [(s.heading, s.paragraphs) for s in ex.sections] == [("How did it start?", PARAS[1:3])]


def test_2008_have_your_say_box_in_blocks_ends_with_its_author_line():
    """The same box as separate blocks: a bold label, the quote, the reader's name in bold (not a cross-head),
    the call to comment; the story's next paragraph is kept."""
    body = (f"<p>{PARAS[0]}<p><b>How did it start?</b><p>{PARAS[1]}<div><b>HAVE YOUR SAY</b></div>"
            '<div>"They should have acted years ago, it is a disgrace."</div><div><b>Mike, Sheffield</b></div>'
            f'<div><a href="http://newsforums.bbc.co.uk/x">Send us your comments</a></div><p>{PARAS[2]}')
    ex = extract_page(_stm(body), STM_URL)
    assert [(s.heading, s.paragraphs) for s in ex.sections] == [("How did it start?", PARAS[1:3])]


@pytest.mark.parametrize("label", ['<p><strong>YOUR VIEWS</strong></p>', "<h2>Your views</h2>",
                                   '<p><b>Here is a selection of your comments:</b></p>'])
def test_2010_closing_your_views_block_is_not_the_last_answer(label):
    """2010 story-body (cream) pages close some stories with five reader comments, each with an author line,
    under a "YOUR VIEWS" label (a bold paragraph or a box title)."""
    readers = ["Mike, Sheffield", "Anna Jones, Cardiff, Wales", "J Smith, London", "Priya, Leicester, UK",
               "Tom O'Neill, Belfast"]
    comments = "".join(f"<p>I have lived here for {n} years and the council never once listened to us.</p>"
                       f"<p><b>{name}</b></p>" for n, name in enumerate(readers, 10))
    body = (f'<p class="introduction">{PARAS[0]}</p><p><span class="cross-head">Who pays?</span></p>'
            f"<p>{PARAS[1]}</p><p>{PARAS[2]}</p>{label}{comments}")
    ex = extract_page(_cream(body), "http://www.bbc.co.uk/news/uk-10000001")
    assert [(s.heading, s.paragraphs) for s in ex.sections] == [("Who pays?", PARAS[1:3])]


def test_bold_paragraph_cross_heads_head_their_sections():
    """A cross-head written as a bold paragraph (story-body, cream, a data-component text block) starts a
    section; a bold sentence, a bold line with a link and a bold paragraph with nothing under it do not."""
    inner = ('<div class="story-body__inner"><p class="story-body__introduction">' + PARAS[0] + "</p>"
             "<p><strong>Why does it matter?</strong></p><p>" + PARAS[1] + "</p>"
             "<p><b>This bold sentence is part of the story.</b></p><p>" + PARAS[2] + "</p>"
             "<p><strong>What happens next</strong></p><p>" + PARAS[3] + "</p></div>")
    ex = extract_page(_story_body(inner), "https://www.bbc.co.uk/news/newsbeat-49000001")
    assert [(s.heading, s.paragraphs) for s in ex.sections] == [
        ("Why does it matter?", [PARAS[1], "This bold sentence is part of the story.", PARAS[2]]),
        ("What happens next", [PARAS[3]])]
    cream = (f'<p class="introduction">{PARAS[0]}</p><p><b>Who pays?</b></p><p>{PARAS[1]}</p>')
    ex = extract_page(_cream(cream), "http://www.bbc.co.uk/news/magazine-20000001")
    assert [(s.heading, s.paragraphs) for s in ex.sections] == [("Who pays?", [PARAS[1]])]
    blocks = _text(PARAS[0]) + _text("<b>Is it safe?</b>") + _text(PARAS[1]) + _text("<b>Dangling</b>")
    ex = extract_page(_data_component(blocks), "https://www.bbc.com/news/articles/c4n1l6wx98go")
    assert [(s.heading, s.paragraphs) for s in ex.sections] == [("Is it safe?", [PARAS[1]])]


# ------------------------------------------------------------------------- layouts seen on unseen real pages

@pytest.mark.parametrize("line", ["Analysis by Jonathan Amos, science correspondent", "By Jane Smith",
                                  "Jonathan Amos, BBC science correspondent"])
def test_a_bold_correspondent_line_under_a_cross_head_is_not_a_second_heading(line):
    """A bold byline right under a real cross-head (story-body, cream, data-component, .stm): the question keeps
    its section, and the byline is not answer text."""
    inner = ('<div class="story-body__inner"><p class="story-body__introduction">' + PARAS[0] + "</p>"
             '<h2 class="story-body__crosshead">What does it mean?</h2><p><strong>' + line + "</strong></p><p>"
             + PARAS[1] + "</p></div>")
    ex = extract_page(_story_body(inner), "https://www.bbc.co.uk/news/newsbeat-49000001")
    assert [(s.heading, s.paragraphs) for s in ex.sections] == [("What does it mean?", [PARAS[1]])]
    cream = (f'<p class="introduction">{PARAS[0]}</p><p><span class="cross-head">Who pays?</span></p>'
             f"<p><b>{line}</b></p><p>{PARAS[1]}</p>")
    ex = extract_page(_cream(cream), "http://www.bbc.co.uk/news/magazine-20000001")
    assert [(s.heading, s.paragraphs) for s in ex.sections] == [("Who pays?", [PARAS[1]])]
    blocks = (_text(PARAS[0]) + '<div data-component="subheadline-block"><h2>Is it safe?</h2></div>'
              + _text(f"<b>{line}</b>") + _text(PARAS[1]))
    ex = extract_page(_data_component(blocks), "https://www.bbc.com/news/articles/c4n1l6wx98go")
    assert [(s.heading, s.paragraphs) for s in ex.sections] == [("Is it safe?", [PARAS[1]])]
    ex = extract_page(_stm(f"<p>{PARAS[0]}<p><b>How did it start?</b><p><b>{line}</b><p>{PARAS[1]}"), STM_URL)
    assert [(s.heading, s.paragraphs) for s in ex.sections] == [("How did it start?", [PARAS[1]])]


GREY_LINE_FIGURE = ('<figure class="media-landscape no-caption full-width"><span class="image-and-copyright-container">'
                    '<img class="js-image-replace" alt="Presentational grey line" '
                    'src="https://ichef.bbci.co.uk/news/320/cpsprodpb/grey_line.png"></span></figure>')
GREY_LINE_BLOCK = '<div data-component="image-block"><img alt="Presentational grey line" src="grey_line.png"></div>'


@pytest.mark.parametrize("line", ["Analysis box by Anthony Zurcher, North America reporter",
                                  "Analysis: Anthony Zurcher, BBC North America reporter",
                                  "Analysis by Anthony Zurcher, North America reporter",
                                  "Anthony Zurcher, BBC News, Washington"])
def test_an_analysis_box_inside_a_question_section_ends_with_the_section(line):
    """A '?' section that carries an analysis box (a grey line, the analyst's bold byline, the analysis, a grey
    line) before the next cross-head, as 2016-2020 story-body pages and data-component pages do: the answer is
    the section's text to the next cross-head, the analysis included, the byline not; the byline is not a
    heading that ends the answer where the box begins."""
    inner = ('<div class="story-body__inner"><p class="story-body__introduction">' + PARAS[0] + "</p>"
             '<h2 class="story-body__crosshead">What does it mean?</h2><p>' + PARAS[1] + "</p>" + GREY_LINE_FIGURE
             + "<p><strong>" + line + "</strong></p><p>" + PARAS[2] + "</p><p>" + PARAS[3] + "</p>"
             + GREY_LINE_FIGURE + '<h2 class="story-body__crosshead">What next?</h2><p>' + PARAS[4] + "</p></div>")
    ex = extract_page(_story_body(inner), "https://www.bbc.co.uk/news/world-us-canada-43000001")
    assert [(s.heading, s.paragraphs) for s in ex.sections] == [
        ("What does it mean?", [PARAS[1], PARAS[2], PARAS[3]]), ("What next?", [PARAS[4]])]
    blocks = (_text(PARAS[0]) + '<div data-component="subheadline-block"><h2>Is it safe?</h2></div>' + _text(PARAS[1])
              + GREY_LINE_BLOCK + _text(f"<b>{line}</b>") + _text(PARAS[2]) + GREY_LINE_BLOCK
              + '<div data-component="subheadline-block"><h2>What next?</h2></div>' + _text(PARAS[4]))
    ex = extract_page(_data_component(blocks), "https://www.bbc.com/news/articles/c4n1l6wx98go")
    assert [(s.heading, s.paragraphs) for s in ex.sections] == [("Is it safe?", [PARAS[1], PARAS[2]]),
                                                                ("What next?", [PARAS[4]])]


@pytest.mark.parametrize("text", ["Analysis of the vote shows a split", "Paris, France",
                                  "Jeremy Corbyn, Labour leader, said no.", "By then it was too late."])
def test_prose_that_starts_like_a_byline_stays_answer_text(text):
    from pipeline.nlquad.furniture import is_byline

    assert not is_byline(text)


@pytest.mark.parametrize("label", ['<div><a href="http://newsforums.bbc.co.uk/x"><b>HAVE YOUR SAY</b></a></div>',
                                   '<div><b><a href="http://newsforums.bbc.co.uk/x">HAVE YOUR SAY</a></b></div>'])
def test_2008_have_your_say_box_whose_label_is_a_link_is_not_answer_text(label):
    """The in-body box of 2008 .stm pages with its label as a link: the reader's quote and signature go with it."""
    body = (f"<p>{PARAS[0]}<p><b>How did it start?</b><p>{PARAS[1]}{label}"
            '<div>"They should have acted years ago, it is a disgrace."</div><div><i>Mike, Sheffield</i></div>'
            f'<div><a href="http://newsforums.bbc.co.uk/x">Send us your comments</a></div><p>{PARAS[2]}')
    ex = extract_page(_stm(body), STM_URL)
    assert [(s.heading, s.paragraphs) for s in ex.sections] == [("How did it start?", PARAS[1:3])]


def test_market_data_box_on_a_2011_business_page_is_not_story_text():
    """Business pages of 2011 (cream layout) carry a market-data box in the body: index values, "Last Updated
    at 12:02", "Data delayed by 15 mins". Neither the box nor a stray line of it is text."""
    box = ('<div class="market-data"><h3>Market Data</h3><p>FTSE 100 5,900.12 +12.30 (0.21%)</p>'
           "<p>Dow Jones 12,100.50 -5.20 (0.04%)</p><p>Last Updated at 12:02</p><p>Data delayed by 15 mins</p></div>")
    body = (f'<p class="introduction">{PARAS[0]}</p><p><span class="cross-head">Why are shares falling?</span></p>'
            f"<p>{PARAS[1]}</p>{box}<p>{PARAS[2]}</p><p>Last Updated at 09:45</p>")
    ex = extract_page(_cream(body), "http://www.bbc.co.uk/news/business-12000001")
    assert [(s.heading, s.paragraphs) for s in ex.sections] == [("Why are shares falling?", PARAS[1:3])]


@pytest.mark.parametrize("line", ["For more on this story, click through to our Business Daily podcast.",
                                  "You can listen to our Newscast podcast on BBC Sounds.",
                                  "Download the Global News podcast here."])
def test_a_trailing_line_that_only_points_to_a_podcast_is_not_the_last_answer(line):
    body = (f'<p class="introduction">{PARAS[0]}</p><p><span class="cross-head">Who pays?</span></p>'
            f"<p>{PARAS[1]}</p><p>{line}</p>")
    ex = extract_page(_cream(body), "http://www.bbc.co.uk/news/business-12000001")
    assert [(s.heading, s.paragraphs) for s in ex.sections] == [("Who pays?", [PARAS[1]])]
    # mid-story, the same words are text
    body = (f'<p class="introduction">{PARAS[0]}</p><p><span class="cross-head">Who pays?</span></p>'
            f"<p>{line}</p><p>{PARAS[1]}</p>")
    ex = extract_page(_cream(body), "http://www.bbc.co.uk/news/business-12000001")
    assert ex.sections[0].paragraphs == [line, PARAS[1]]
