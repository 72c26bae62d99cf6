"""What is page furniture in a BBC story body, in every layout, and the text helpers it is read with.

Bylines and correspondents' lines, reader comments and their signatures, promo paragraphs and boxes, market-data
boxes, cookie and media notices, all-italic editorial notes, separator images and the containers that never hold
article text: each a rule about what an element or a paragraph is, used by the extractor's body builder
(``pipeline.nlquad.extract``) for every layout alike.
"""

from __future__ import annotations

import re

from bs4 import Tag

_WS = re.compile(r"\s+")

# Headings that open a promo box, not a section of the article.
FURNITURE_HEADING = re.compile(
    r"^(?:find out more|you (?:may|might) (?:also )?(?:be interested in|like)|related(?: \w+){0,2}|"
    r"more on this(?: story| topic)?|read more(?: about.*)?|top stories|most (?:read|watched|popular)|features|"
    r"elsewhere on the bbc|around the bbc|share this(?: \w+)?|get in touch|have your say|follow (?:us|bbc).*|"
    r"watch|listen|video|also in the news|more from .*|explore more|latest updates?|bbc news services)[\s:.]*$",
    re.IGNORECASE)
# The label of a box of reader comments, in every era: the 2000s in-body "HAVE YOUR SAY" quote (a reader's words
# and name) and the 2010s closing "YOUR VIEWS" list (comments, each with its author line).
READER_COMMENTS = re.compile(
    r"^(?:have your say|(?:here (?:is|are) )?(?:a selection of )?(?:your|readers'?) "
    r"(?:views|comments|stories|experiences)(?: so far)?)[\s:.]*$",
    re.IGNORECASE)
READER_COMMENTS_LEAD = re.compile(
    r"^(?:HAVE YOUR SAY|YOUR (?:VIEWS|COMMENTS|STORIES|EXPERIENCES)|READERS'? (?:COMMENTS|VIEWS))\b")
# A reader's signature under a comment: "Mike, Sheffield", "Anna Jones, Cardiff, Wales", "- Tom, Leeds".
_AUTHOR_LINE = re.compile(
    r"^[-–—\s]*[A-Z][\w'’.-]*(?: [A-Z][\w'’.-]*){0,3}, [A-Z][\w'’. -]{1,40}(?:, [A-Z][\w'’. -]{1,40})?$")
# A paragraph in bold and nothing else, short, not ending a sentence: a cross-head written as a bold
# paragraph (story-body and cream pages, a text-block now and then); a question mark may end it.
_BOLD_HEADING_MAX_WORDS = 12
# Whole paragraphs that are page furniture, wherever they sit.
_FURNITURE_TEXT = re.compile(
    r"^(?:media playback is unsupported on your device|image (?:copyright|caption|source)|media caption|"
    r"last updated at \d{1,2}:\d\d|data delayed by \d+ min|"
    r"share this with|copy this link|read more about these links|related topics|more on this story|"
    r"the bbc is not responsible for the content of external|let us know you agree to cookies|"
    r"we use cookies to give you the best online experience|you may also be interested in)",
    re.IGNORECASE)
# A byline or a correspondent's line, alone in its paragraph (often in bold, sometimes right under a cross-head,
# or opening an analysis box inside a section, the box then going on between grey lines): "By Jane Smith",
# "Analysis by Jonathan Amos, science correspondent", "Analysis box by Jon Sopel, North America editor" (the
# story-body CMS's label), "Analysis: Jon Sopel, North America editor", "Jonathan Amos, BBC science
# correspondent", "Jane Smith, BBC News, Washington". Taken for a bold cross-head, one would end the question's
# answer where the box begins.
_NAME = r"[A-Z][\w'’.-]*(?: [A-Z][\w'’.-]*){0,3}"
_BYLINE = re.compile(
    r"^(?:(?i:analysis|comment|opinion|report|reporting|words|interview)(?:\s+(?i:box))?\s+)?(?i:by)\s+[A-Z][^.!?]*$|"
    r"^(?i:analysis|comment|opinion)(?:\s+(?i:box))?\s*[:|–—-]\s*" + _NAME + r"(?:,\s*[^.!?]{1,60})?$|"
    r"^" + _NAME + r",\s+(?:[\w'’-]+\s+){0,4}"
    r"(?i:correspondent|editor|reporter|analyst|presenter|producer|journalist)(?:,\s*[\w ]{1,30})?$|"
    r"^" + _NAME + r",\s+BBC(?: [A-Z][\w'’-]*){0,3}(?:,\s*[A-Z][\w ]{1,30})?$")
_BYLINE_MAX_WORDS = 12
# In-body market data on business pages (2010s): index values in a box that says when it was updated
_MARKET_DATA = re.compile(r"\bdata delayed by \d+ min|\blast updated at \d{1,2}:\d\d", re.IGNORECASE)
_MARKET_BOX_MAX_WORDS = 80
_FOLLOW = re.compile(r"^Follow\b.{0,80}\b(?:on|at)\b\s*(?:Twitter|X|Facebook|Instagram|Bluesky|Threads)\b", re.I)
_PROMO_LABELS = {"read more", "more", "see also", "also", "related", "watch", "listen", "video", "find out more",
                 "read", "full story", "in pictures", "explainer", "analysis", "live"}
# Containers inside a story body that never hold article text (story-body and cream layouts).
_SKIP_TAGS = frozenset({"aside", "figure", "figcaption", "form", "nav", "footer", "header", "script", "style",
                        "noscript", "iframe", "svg", "button", "object", "video", "audio", "h1", "table"})
_SKIP_CLASS = re.compile(
    r"pullout|contact-form|social-embed|media-|mpu-ad|bbccom_|idt2|include|embed|story-feature|share|byline|"
    r"related|caption|off-screen|videoinstory|comment-introduction|story-date|mini-info|story-more|tags-|"
    r"twitter|tweet|"
    r"(?:^|\s)quote",
    re.IGNORECASE)




def clean(text: str) -> str:
    return _WS.sub(" ", text).strip()


def text_of(el: Tag) -> str:
    """Visible text with hyperlinks kept as words; comments and scripts do not count."""
    return clean(el.get_text(""))


def is_separator_image(el: Tag) -> bool:
    """BBC's "Presentational grey line" image closes an in-body box in every layout since 2016."""
    for img in el.find_all("img"):
        label = f"{img.get('alt') or ''} {img.get('src') or ''}".lower()
        if "grey line" in label or "grey_line" in label or "presentational line" in label:
            return True
    return False


def skip_container(el: Tag) -> bool:
    if el.name in _SKIP_TAGS:
        return True
    cls = " ".join(el.get("class") or [])
    return bool(cls) and bool(_SKIP_CLASS.search(cls))


def is_author_line(text: str) -> bool:
    return len(text.split()) <= 10 and bool(_AUTHOR_LINE.match(text))


def is_byline(text: str) -> bool:
    return len(text.split()) <= _BYLINE_MAX_WORDS and bool(_BYLINE.match(text))


def is_market_box(el: Tag) -> bool:
    """A short container that says its figures are delayed or when they were updated: the market-data box of
    business pages, not story text."""
    text = text_of(el)
    return len(text.split()) <= _MARKET_BOX_MAX_WORDS and bool(_MARKET_DATA.search(text))


def bold_heading(el: Tag) -> str | None:
    """The text of a paragraph that is a cross-head in bold (all its words inside ``<b>``/``<strong>``, no
    link, short, no closing sentence punctuation but ``?``; a reader-comments label may end in a colon),
    else None."""
    text = text_of(el)
    if text and READER_COMMENTS.match(text):
        return text  # the reader-comments label, a link or not: what follows is the box, not the story
    if el.find("a") is not None:
        return None
    inside, outside = text_inside(el, ("b", "strong"))
    if not inside or outside or not text or len(text.split()) > _BOLD_HEADING_MAX_WORDS:
        return None
    if READER_COMMENTS.match(text):
        return text
    if re.search(r"[.,;:!]['\"’”]?$", text) or is_author_line(text) or is_byline(text):
        return None  # a byline in bold under a cross-head is not a second heading
    return text


def text_inside(el: Tag, names: tuple[str, ...]) -> tuple[str, str]:
    """(text inside any of the ``names`` tags, text outside them), within ``el``."""
    inside, outside = [], []
    for s in el.find_all(string=True):
        wrapped = False
        for parent in s.parents:
            if parent is el:
                break
            if parent.name in names:
                wrapped = True
                break
        (inside if wrapped else outside).append(str(s))
    return clean("".join(inside)), clean("".join(outside))


def is_promo(el: Tag) -> bool:
    """A paragraph or item that only points elsewhere: one or more links and, outside them, nothing or a
    label ("READ MORE:", "A SIMPLE GUIDE:", "Watch:")."""
    anchors = el.find_all("a")
    if not anchors or not text_of(el):
        return False
    rest = text_inside(el, ("a",))[1].strip(" :-|–—").strip()
    if not rest:
        return True
    if not text_inside(el, ("a", "b", "strong"))[1].strip(" .:-|–—") and len(text_of(el).split()) <= 40:
        return True  # a bold line with a link: "The BBC is providing full results. More details here."
    if len(rest.split()) > 6:
        return False
    letters = [c for c in rest if c.isalpha()]
    return bool(letters) and (all(c.isupper() for c in letters) or rest.lower() in _PROMO_LABELS)


def is_italic_note(el: Tag) -> bool:
    """All of the paragraph's words outside links are in <i>/<em>: an editorial note (author bio, call for
    pictures)."""
    italic = text_inside(el, ("i", "em"))[0]
    return bool(italic) and not text_inside(el, ("i", "em", "a"))[1]


def lines_of(el: Tag) -> list[str]:
    """The lines of a block as a reader sees them (``<br>`` and child blocks break lines)."""
    return [clean(line) for line in el.get_text("\n").split("\n") if clean(line)]


def is_furniture_text(text: str, el: Tag | None = None) -> bool:
    if _FURNITURE_TEXT.match(text):
        return True
    if is_byline(text):
        return True
    return el is not None and bool(el.find("a")) and bool(_FOLLOW.match(text)) and len(text.split()) <= 12
