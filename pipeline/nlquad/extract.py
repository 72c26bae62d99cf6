"""Article extraction from archived BBC News pages, for every layout from the pre-2014 one to today's.

Layouts (see ``../shared/fixtures/bbc/SOURCE.md``):
- ``cream`` (to ~2014): body ``div.story-body`` with ``p`` children; sub-headings ``span.cross-head``;
  headline ``h1.story-header``; date ``meta[name=OriginalPublicationDate]``; boxouts ``div.story-feature``.
- ``story-body`` (A, 2014 to spring 2020): body ``div.story-body__inner``; sub-headings
  ``h2.story-body__crosshead``; bullets ``ul``; headline ``h1.story-body__h1``; date ``div.date[data-seconds]``.
- ``data-component`` (B1 ``css-*``, B2 ``ssrcss-*``, B3 ``sc-*``; 2020 on): ordered blocks inside
  ``<article>``: ``text-block``, ``crosshead-block`` / ``subheadline-block`` (sub-headings),
  ``unordered-list-block`` (bullets); headline ``headline-block h1`` or ``h1#main-heading``.

Whether a page is an article is decided by what it holds (a headline and a body of paragraphs). The URL
only rejects what is certainly not an article: video (``/av/``), live pages, picture galleries, topic
pages, sport, section fronts (a last path segment without an id), and hosts other than BBC's.

Furniture never enters the text: boxouts and pull-outs, captions, media and social embeds, bylines,
"Follow X on Twitter", promo paragraphs and lists ("LABEL: link", link-only items), promo boxes opened
by a heading such as "Find out more" or "You may also be interested in" (to the next separator line or
real sub-heading), trailing all-italic editorial notes (author bios, calls for pictures), cookie banners,
related/most-read lists. The date is the first publication (schema.org ``datePublished`` where present:
the later layouts' ``<time>`` shows the last update), in UTC.

    python -m pipeline.experiments.extract_page PAGE.html [PAGE.html ...]   # the same, on any page
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from itertools import chain
from typing import Any
from urllib.parse import unquote, urljoin, urlsplit

from bs4 import BeautifulSoup, NavigableString, Tag
from bs4.filter import ElementFilter
from lxml import etree

from pipeline.nlquad.bbc_urls import is_bbc_host, path_rejection
from pipeline.nlquad.endings import is_call_out, trailing_furniture_start
from pipeline.nlquad.page_bytes import decode_page, original_url, strip_archive_wrapping

_WS = re.compile(r"\s+")
HEADING_BLOCKS = ("crosshead-block", "subheadline-block")
LIST_BLOCKS = ("unordered-list-block", "ordered-list-block")

# Headings that open a promo box, not a section of the article.
_FURNITURE_HEADING = re.compile(
    r"^(?:find out more|you (?:may|might) (?:also )?(?:be interested in|like)|related(?: \w+){0,2}|"
    r"more on this(?: story| topic)?|read more(?: about.*)?|top stories|most (?:read|watched|popular)|features|"
    r"elsewhere on the bbc|around the bbc|share this(?: \w+)?|get in touch|have your say|follow (?:us|bbc).*|"
    r"watch|listen|video|also in the news|more from .*|explore more|latest updates?|bbc news services)[\s:.]*$",
    re.IGNORECASE)
# The label of a box of reader comments, in every era: the 2000s in-body "HAVE YOUR SAY" quote (a reader's words
# and name) and the 2010s closing "YOUR VIEWS" list (comments, each with its author line).
_READER_COMMENTS = re.compile(
    r"^(?:have your say|(?:here (?:is|are) )?(?:a selection of )?(?:your|readers'?) "
    r"(?:views|comments|stories|experiences)(?: so far)?)[\s:.]*$",
    re.IGNORECASE)
_READER_COMMENTS_LEAD = re.compile(
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


@dataclass
class Section:
    heading: str
    paragraphs: list[str]
    bullet: bool = False


@dataclass
class Extraction:
    url: str | None
    canonical_url: str | None = None
    title: str | None = None
    date: str | None = None
    template: str | None = None
    intro: list[str] = field(default_factory=list)  # paragraphs before the first sub-heading
    sections: list[Section] = field(default_factory=list)
    links: list[str] = field(default_factory=list)  # absolute hrefs of in-body links to BBC News articles
    rejected: str | None = None

    def to_json(self) -> dict:
        return asdict(self)


def clean(text: str) -> str:
    return _WS.sub(" ", text).strip()


def text_of(el: Tag) -> str:
    """Visible text with hyperlinks kept as words; comments and scripts do not count."""
    return clean(el.get_text(""))


class ArticleParts(ElementFilter):
    """Build only the head's metadata and the article containers: most of a BBC page is navigation,
    inline CSS and scripts, and never becoming a Tag is the cheapest way to ignore them."""

    KEEP = frozenset({"link", "meta", "h1", "time", "article", "main"})

    def allow_tag_creation(self, nsprefix: str | None, name: str, attrs: dict | None) -> bool:
        if name in self.KEEP:
            return True
        if name == "script":
            return bool(attrs) and attrs.get("type") == "application/ld+json"
        if name != "div" or not attrs:
            return False
        cls = attrs.get("class") or ""
        cls = " ".join(cls) if isinstance(cls, list) else cls
        return ("story-body" in cls or attrs.get("id") == "story-body" or "data-component" in attrs
                or "date" in cls.split())

    def allow_string_creation(self, string: str) -> bool:
        return False  # text outside the kept containers


def _absolute_news_link(href: str | None, base: str | None) -> str | None:
    if not href or href.startswith(("#", "mailto:", "javascript:")):
        return None
    # a replay's link (absolute or "/web/<ts>/http://...") is read as the original before it is joined
    absolute = urljoin(base or "https://www.bbc.co.uk/", original_url(href))
    parts = urlsplit(absolute)
    if not is_bbc_host(parts.netloc) or path_rejection(absolute):
        return None
    return f"{parts.scheme}://{parts.netloc}{parts.path}"


def _meta(soup: BeautifulSoup, prop: str) -> str | None:
    el = soup.find("meta", attrs={"property": prop}) or soup.find("meta", attrs={"name": prop})
    return el.get("content") if el and el.get("content") else None


# ------------------------------------------------------------------------------------------------ blocks

@dataclass
class _Block:
    """One unit of a story body in document order: what the body builder consumes, for every layout."""

    kind: str  # heading | para | list | separator
    el: Tag | None = None
    text: str = ""


def _is_separator_image(el: Tag) -> bool:
    """BBC's "Presentational grey line" image closes an in-body box in every layout since 2016."""
    for img in el.find_all("img"):
        label = f"{img.get('alt') or ''} {img.get('src') or ''}".lower()
        if "grey line" in label or "grey_line" in label or "presentational line" in label:
            return True
    return False


def _skip_container(el: Tag) -> bool:
    if el.name in _SKIP_TAGS:
        return True
    cls = " ".join(el.get("class") or [])
    return bool(cls) and bool(_SKIP_CLASS.search(cls))


def is_author_line(text: str) -> bool:
    return len(text.split()) <= 10 and bool(_AUTHOR_LINE.match(text))


def is_byline(text: str) -> bool:
    return len(text.split()) <= _BYLINE_MAX_WORDS and bool(_BYLINE.match(text))


def _is_market_box(el: Tag) -> bool:
    """A short container that says its figures are delayed or when they were updated: the market-data box of
    business pages, not story text."""
    text = text_of(el)
    return len(text.split()) <= _MARKET_BOX_MAX_WORDS and bool(_MARKET_DATA.search(text))


def _bold_heading(el: Tag) -> str | None:
    """The text of a paragraph that is a cross-head in bold (all its words inside ``<b>``/``<strong>``, no
    link, short, no closing sentence punctuation but ``?``; a reader-comments label may end in a colon),
    else None."""
    text = text_of(el)
    if text and _READER_COMMENTS.match(text):
        return text  # the reader-comments label, a link or not: what follows is the box, not the story
    if el.find("a") is not None:
        return None
    inside, outside = _text_inside(el, ("b", "strong"))
    if not inside or outside or not text or len(text.split()) > _BOLD_HEADING_MAX_WORDS:
        return None
    if _READER_COMMENTS.match(text):
        return text
    if re.search(r"[.,;:!]['\"’”]?$", text) or is_author_line(text) or is_byline(text):
        return None  # a byline in bold under a cross-head is not a second heading
    return text


def _walk_story(children: Iterable[object], heading: re.Pattern[str]) -> Iterator[_Block]:
    """The story-body and cream layouts: paragraphs, lists and cross-heads at any depth (a wrapper div
    must not hide body paragraphs), never entering boxouts, media, forms or embeds. A bold paragraph that
    reads as a cross-head is one; a box title (an ``h2``-``h4`` outside the cross-head classes) is dropped,
    except a reader-comments label, which is passed on so the comments under it go too."""
    for child in children:
        if not isinstance(child, Tag):
            continue
        if child.name == "hr" or (child.name in ("figure", "div") and _is_separator_image(child)):
            yield _Block("separator")
            continue
        if heading.match(_tag_key(child)):
            yield _Block("heading", child, text_of(child))
            continue
        if _skip_container(child) or (child.name in ("div", "section", "ul", "table") and _is_market_box(child)):
            continue
        if child.name == "p":
            inner = next((c for c in child.find_all(True) if heading.match(_tag_key(c))), None)
            if inner is not None:  # cream: <p><span class="cross-head">…</span></p>
                yield _Block("heading", inner, text_of(inner))
                continue
            bold = _bold_heading(child)
            yield _Block("heading", child, bold) if bold else _Block("para", child)
        elif child.name in ("ul", "ol"):
            yield _Block("list", child)
        elif child.name in ("h2", "h3", "h4"):
            title = text_of(child)
            if _READER_COMMENTS.match(title):
                yield _Block("heading", child, title)
            continue  # a heading of something else (a box title outside the cross-head classes)
        else:
            yield from _walk_story(child.children, heading)


def _tag_key(el: Tag) -> str:
    return f"{el.name}.{'.'.join(el.get('class') or [])}"


_STORY_HEADING = re.compile(r"^(?:h2|h3)(?:$|\..*(?:crosshead|sub-heading|cross-head))|^h2\.?$")
_CREAM_HEADING = re.compile(r"^(?:span|h2|h3|strong|b)\..*(?:cross-?head|section-header)")


def _walk_data_component(article: Tag) -> Iterator[_Block]:
    for block in article.find_all(attrs={"data-component": True}):
        if block.find_parent(attrs={"data-component": True}) is not None:
            continue  # nested block: handled by its container
        kind = block.get("data-component")
        if kind in HEADING_BLOCKS:
            yield _Block("heading", block, text_of(block.find(["h2", "h3"]) or block))
        elif kind == "text-block":
            paras = block.find_all("p")
            for p in paras or [block]:
                bold = _bold_heading(p) if len(paras) == 1 else None
                yield _Block("heading", p, bold) if bold else _Block("para", p)
        elif kind in LIST_BLOCKS:
            yield _Block("list", block)
        elif kind == "image-block" and _is_separator_image(block):
            yield _Block("separator")
        # media, byline, links, tags, ads, embeds: not body text


# --------------------------------------------------------------------------------------------- filtering

def _text_inside(el: Tag, names: tuple[str, ...]) -> tuple[str, str]:
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
    rest = _text_inside(el, ("a",))[1].strip(" :-|–—").strip()
    if not rest:
        return True
    if not _text_inside(el, ("a", "b", "strong"))[1].strip(" .:-|–—") and len(text_of(el).split()) <= 40:
        return True  # a bold line with a link: "The BBC is providing full results. More details here."
    if len(rest.split()) > 6:
        return False
    letters = [c for c in rest if c.isalpha()]
    return bool(letters) and (all(c.isupper() for c in letters) or rest.lower() in _PROMO_LABELS)


def _is_italic_note(el: Tag) -> bool:
    """All of the paragraph's words outside links are in <i>/<em>: an editorial note (author bio, call for
    pictures)."""
    italic = _text_inside(el, ("i", "em"))[0]
    return bool(italic) and not _text_inside(el, ("i", "em", "a"))[1]


def _lines(el: Tag) -> list[str]:
    """The lines of a block as a reader sees them (``<br>`` and child blocks break lines)."""
    return [clean(line) for line in el.get_text("\n").split("\n") if clean(line)]


def is_furniture_text(text: str, el: Tag | None = None) -> bool:
    if _FURNITURE_TEXT.match(text):
        return True
    if is_byline(text):
        return True
    return el is not None and bool(el.find("a")) and bool(_FOLLOW.match(text)) and len(text.split()) <= 12


class _BodyBuilder:
    """Sections in document order from a block stream, with promo boxes and the furniture tail removed.

    A section is a bullet list when list items outnumber paragraphs. A heading that opens a promo box
    ("Find out more") starts skipping until a separator line or the next real sub-heading; text after a
    separator goes on in the section that was open before the box. A heading with nothing under it before
    the next one (a listicle's group title) is not a section. The body's tail is read back from its last
    paragraph: call-outs, broadcast notes, bios and credits (:mod:`pipeline.nlquad.endings`) and all-italic
    editorial notes are cut, across section ends."""

    def __init__(self, ex: Extraction, base: str | None):
        self.ex, self.base = ex, base
        # (section index or -1 for the intro, text, element, from a list)
        self.items: list[tuple[int, str, Tag, bool]] = []
        self.skipping: bool | str = False  # "comments" under a reader-comments label
        self.after_comment_box = False
        self.one_comment = False

    def feed(self, blocks: Iterable[_Block]) -> None:
        for block in blocks:
            if block.kind == "heading":
                self.heading(block.text)
            elif block.kind == "separator":
                self.skipping = False
            elif self.skipping == "comments" and block.el is not None:
                # an in-body "HAVE YOUR SAY" box holds one reader's words: it ends with its author line
                if self.comment_box_ends(block.el):
                    self.skipping, self.after_comment_box = False, True
            elif not self.skipping and block.el is not None:
                if block.kind == "list":
                    self.add(block.el, block.el.find_all("li"), is_list=True)
                else:
                    self.add(block.el, [block.el], is_list=False)
        self.finish()

    def heading(self, text: str) -> None:
        if self.skipping == "comments" and is_author_line(text):
            if self.one_comment:
                self.skipping, self.after_comment_box = False, True
            return  # a reader's signature in bold, not a cross-head
        if self.after_comment_box and is_author_line(text):
            return
        self.after_comment_box = False
        if text and _READER_COMMENTS.match(text):
            self.skipping = "comments"
            self.one_comment = text.lower().startswith("have your say")
            return
        if not text or _FURNITURE_HEADING.match(text):
            self.skipping = bool(text)
            return
        self.skipping = False
        self.ex.sections.append(Section(heading=text, paragraphs=[]))

    def comment_box_ends(self, el: Tag) -> bool:
        """Under an in-body "HAVE YOUR SAY" label: the reader's words go on until their author line."""
        return self.one_comment and any(is_author_line(line) for line in _lines(el))

    def add(self, container: Tag, parts: list[Tag], is_list: bool) -> None:
        kept = [(text_of(x), x) for x in parts if not is_promo(x)]
        kept = [(t, x) for t, x in kept if t and not is_furniture_text(t, x)]
        if self.after_comment_box:  # the box's signature and its "Send us your comments" line
            while kept and (is_author_line(kept[0][0]) or is_call_out(kept[0][0])):
                kept.pop(0)
            self.after_comment_box = not kept
        unboxed = [(t, x) for t, x in kept if not (_READER_COMMENTS_LEAD.match(t) and len(t.split()) > 4)]
        if len(unboxed) < len(kept):  # label, a reader's words and name in one block: the 2000s in-body box
            kept, self.after_comment_box = unboxed, True
        if not kept:
            return
        _collect_links(container, self.ex, self.base)
        owner = len(self.ex.sections) - 1
        self.items.extend((owner, t, x, is_list) for t, x in kept)

    def finish(self) -> None:
        cut = len(self.items)
        while True:
            new = trailing_furniture_start([t for _, t, _, _ in self.items[:cut]])
            while new > 0 and _is_italic_note(self.items[new - 1][2]):
                new -= 1
            if new == cut:
                break
            cut = new
        tally = [[0, 0] for _ in self.ex.sections]  # per section: [paragraphs, list items]
        for owner, text, _, is_list in self.items[:cut]:
            if owner < 0:
                self.ex.intro.append(text)
            else:
                self.ex.sections[owner].paragraphs.append(text)
                tally[owner][1 if is_list else 0] += 1
        for section, (paras, items) in zip(self.ex.sections, tally, strict=True):
            section.bullet = items > paras
        self.ex.sections = [s for s in self.ex.sections if s.paragraphs]


def _collect_links(el: Tag, ex: Extraction, base: str | None) -> None:
    for a in el.find_all("a", href=True):
        link = _absolute_news_link(a["href"], base)
        if link and link not in ex.links:
            ex.links.append(link)


# ------------------------------------------------------------------------------------------------ layouts

def _data_component(soup: BeautifulSoup, ex: Extraction, base: str | None) -> bool:
    first = soup.find(attrs={"data-component": "text-block"})
    if first is None:
        return False
    article = first.find_parent("article") or first.find_parent("main") or soup
    ex.template = "data-component"
    h1 = (article.select_one('[data-component="headline-block"] h1') or soup.select_one("h1#main-heading")
          or article.find("h1"))
    ex.title = text_of(h1) if h1 else None
    _BodyBuilder(ex, base).feed(_walk_data_component(article))
    return True


def _story_body(soup: BeautifulSoup, ex: Extraction, base: str | None) -> bool:
    candidates = soup.select("div.story-body__inner") or soup.select('div.story-body [property="articleBody"]')
    if not candidates:
        return False
    # A page can hold a second story-body__inner (a contact form): the body is the one with most prose.
    inner = max(candidates, key=lambda c: sum(len(text_of(p)) for p in c.find_all("p")))
    ex.template = "story-body"
    h1 = soup.select_one("h1.story-body__h1") or soup.find("h1")
    ex.title = text_of(h1) if h1 else None
    # A stray </div> in an embed closes the body early in some captures: the rest of the story then
    # follows the inner div as its siblings (in well-formed pages nothing does).
    _BodyBuilder(ex, base).feed(_walk_story(chain(inner.children, inner.next_siblings), _STORY_HEADING))
    return True


def _cream(soup: BeautifulSoup, ex: Extraction, base: str | None) -> bool:
    body = next((d for d in soup.select("div.story-body, div#story-body") if d.find("p", recursive=False)), None)
    if body is None:
        return False
    ex.template = "cream"
    h1 = body.select_one("h1.story-header") or soup.find("h1")
    ex.title = text_of(h1) if h1 else None
    _BodyBuilder(ex, base).feed(_walk_story(body.children, _CREAM_HEADING))
    return True


_BO = re.compile(r"<!--\s*S BO\s*-->(.*?)<!--\s*E BO\s*-->", re.DOTALL)
# Marked regions inside a story body: images (IIMA), boxes (IBOX), bylines (IBYL), forms (IFOR), links...
# Only the standfirst (SF) holds article text.
_MARKED = re.compile(r"<!--\s*S (\w+)\s*-->.*?<!--\s*E \1\s*-->", re.DOTALL)
_STM_BLOCKS = frozenset({"p", "div", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "li", "blockquote", "hr",
                         "center", "dl", "dt", "dd", "pre", "body", "html"})
_STM_SKIP = frozenset({"table", "form", "script", "style", "noscript", "object", "embed", "select", "textarea",
                       "iframe", "map", "img", "input"})
_STM_TITLE_PREFIX = re.compile(r"^BBC NEWS\s*\|.*\|\s*")
_TAG = re.compile(r"<[^>]*>")


def _stm_body(page: str) -> str | None:
    """The ``<!-- S BO -->`` region with most prose once its marked boxes are cut (later pairs on a page
    hold search forms, podcast boxes and "Most Popular Now")."""
    best, best_words = None, 0
    for m in _BO.finditer(page):
        inner = _MARKED.sub(lambda b: b.group(0) if b.group(1) == "SF" else "<div></div>", m.group(1))
        words = len(_TAG.sub(" ", inner).split())  # a ranking only: tags out, no parse
        if words > best_words:
            best, best_words = inner, words
    return best


def _stm_runs(node: Tag, out: BeautifulSoup, runs: list[tuple[Tag, bool]], state: dict) -> None:
    """Flatten an stm story body into runs of inline content between block boundaries: ``<p>`` is often left
    unclosed as a separator, and text sits bare between boxes, so elements are not paragraphs here."""
    def flush() -> None:
        run = state["run"]
        if run.get_text(strip=True):
            runs.append((run, state["li"]))
        state["run"] = out.new_tag("p")

    for child in node.children:
        if isinstance(child, NavigableString):
            if type(child) is NavigableString:  # not a comment, doctype or CDATA
                state["run"].append(NavigableString(str(child)))
            continue
        if not isinstance(child, Tag) or child.name in _STM_SKIP or _skip_container(child):
            if isinstance(child, Tag) and child.name in ("table", "form"):
                flush()
            continue
        if child.name in _STM_BLOCKS:
            flush()
            was_li, state["li"] = state["li"], state["li"] or child.name == "li"
            if child.name == "hr":
                runs.append((out.new_tag("hr"), False))
            else:
                _stm_runs(child, out, runs, state)
            flush()
            state["li"] = was_li
        elif child.find(list(_STM_BLOCKS | {"table", "form"})) is None:
            state["run"].append(_copy(child, out))
        else:  # an inline wrapper (<font>, <b>) around blocks: its blocks still split
            _stm_runs(child, out, runs, state)


def _copy(el: Tag, out: BeautifulSoup) -> Tag:
    tag = out.new_tag(el.name, attrs=dict(el.attrs))
    for child in el.children:
        if isinstance(child, Tag):
            if child.name not in _STM_SKIP:
                tag.append(_copy(child, out))
        elif type(child) is NavigableString:
            tag.append(NavigableString(str(child)))
    return tag


def _stm_blocks(runs: list[tuple[Tag, bool]]) -> Iterator[_Block]:
    for run, in_list in runs:
        if run.name == "hr":
            yield _Block("separator")
            continue
        text = text_of(run)
        if not text:
            continue
        if _READER_COMMENTS.match(text):  # its label, a link or not: the reader's words and name follow
            yield _Block("heading", run, text)
            continue
        cross = run.find(class_=re.compile("cross-?head"))
        bold_only = not _text_inside(run, ("b", "strong"))[1] and not run.find("a")
        if (cross is not None and text_of(cross) == text) or (
                bold_only and len(text.split()) <= 12 and not re.search(r"[.,;:!]['\"’”]?$", text)
                and not is_byline(text)):
            yield _Block("heading", run, text)
        elif in_list:
            run.name = "li"
            holder = BeautifulSoup("", "lxml").new_tag("ul")
            holder.append(run)
            yield _Block("list", holder)
        else:
            yield _Block("para", run)


def _stm(page: str, ex: Extraction, base: str | None) -> bool:
    """news.bbc.co.uk's table layout (2000s to 2010, ``.stm`` URLs): the story between ``<!-- S BO -->``
    and ``<!-- E BO -->``, headline in ``div.mxb`` (``h1``, or ``div.sh`` before 2008), cross-heads as
    bold-only lines."""
    body = _stm_body(page)
    if body is None:
        return False
    ex.template = "stm"
    full = BeautifulSoup(page, "lxml")
    h1 = full.select_one("div.mxb h1") or full.select_one("div.mxb div.sh") or full.select_one("div.sh")
    title = text_of(h1) if h1 else _meta(full, "Headline")
    if not title and full.title:
        title = _STM_TITLE_PREFIX.sub("", text_of(full.title))
    ex.title = title or None
    out = BeautifulSoup("", "lxml")
    runs: list[tuple[Tag, bool]] = []
    state = {"run": out.new_tag("p"), "li": False}
    _stm_runs(BeautifulSoup(body, "lxml"), out, runs, state)
    if state["run"].get_text(strip=True):
        runs.append((state["run"], state["li"]))
    _BodyBuilder(ex, base).feed(_stm_blocks(runs))
    return True


# --------------------------------------------------------------------------------------------------- dates

def _utc(value: str | None) -> str | None:
    """ISO 8601 (with offset, 'Z' or naive = UTC) or 'YYYY/MM/DD HH:MM:SS' to ``YYYY-MM-DDTHH:MM:SSZ``."""
    if not value or not isinstance(value, str):
        return None
    text = value.strip().replace("/", "-").replace("Z", "+00:00")
    try:
        stamp = dt.datetime.fromisoformat(text)
    except ValueError:
        return None
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=dt.timezone.utc)
    try:
        return stamp.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    except (OverflowError, ValueError):
        return None


def _ld_json_date(soup: BeautifulSoup) -> str | None:
    """schema.org ``datePublished``: the first publication, where ``<time>`` may show the last update."""
    for script in soup.find_all("script", attrs={"type": "application/ld+json"}):
        try:
            data = json.loads(script.get_text() or "null")
        except (ValueError, RecursionError):
            continue
        items = data if isinstance(data, list) else [data]
        if isinstance(data, dict) and isinstance(data.get("@graph"), list):
            items = data["@graph"]
        for item in items:
            if isinstance(item, dict):
                date = _utc(item.get("datePublished"))
                if date:
                    return date
    return None


def _seconds_date(soup: BeautifulSoup) -> str | None:
    el = soup.select_one("div.date[data-seconds]")
    try:
        return dt.datetime.fromtimestamp(int(el["data-seconds"]), tz=dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    except (TypeError, ValueError, OverflowError, OSError):
        return None


_FIRST_PUB = re.compile(r"[?&;]first_pub=(\d{4}-\d\d-\d\dT[0-9:%A-F+.Z-]{8,40}?)(?=&|[\"'\s])")


def _istats_first_pub(page: str) -> str | None:
    """2010-2013 pages name their first publication only in the statistics beacon (``first_pub=``); their
    ``OriginalPublicationDate`` is the last editorial update at capture time."""
    m = _FIRST_PUB.search(page)
    return _utc(unquote(m.group(1))) if m else None


def _page_date(soup: BeautifulSoup) -> str | None:
    time_el = soup.find("time", attrs={"datetime": True}) or soup.find("time", attrs={"dateTime": True})
    return (_ld_json_date(soup) or _seconds_date(soup) or _utc(_meta(soup, "OriginalPublicationDate"))
            or (_utc(time_el.get("datetime") or time_el.get("dateTime")) if time_el is not None else None))


# ----------------------------------------------------------------------------------------------------- page

class _ShapeProbe:
    """lxml parser target that stops at ``max_depth`` levels of nesting or ``max_elements`` elements: a page
    built to be deep or wide (a million ``<li>``) costs BeautifulSoup seconds to minutes and hundreds of
    megabytes, this probe a fraction of that, holding no tree."""

    class TooDeep(Exception):
        pass

    class TooMany(Exception):
        pass

    def __init__(self, max_depth: int, max_elements: int):
        self.max_depth, self.max_elements, self.depth, self.count = max_depth, max_elements, 0, 0

    def start(self, tag, attrib) -> None:
        self.depth += 1
        self.count += 1
        if self.depth > self.max_depth:
            raise self.TooDeep
        if self.count > self.max_elements:
            raise self.TooMany

    def end(self, tag) -> None:
        self.depth -= 1

    def close(self) -> None:
        return None


def shape_rejection(html: str | bytes, max_depth: int, max_elements: int) -> str | None:
    """``too_deep``, ``too_many_elements`` or None."""
    parser = etree.HTMLParser(target=_ShapeProbe(max_depth, max_elements))
    try:
        parser.feed(html)
        parser.close()
    except _ShapeProbe.TooDeep:
        return "too_deep"
    except _ShapeProbe.TooMany:
        return "too_many_elements"
    except etree.LxmlError:
        return None  # left to the real parse, which is lenient
    return None


@dataclass(frozen=True)
class PageLimits:
    """What a page may be before it is rejected (params.yaml ``extract``; the crawler's link extraction uses
    the same, so a hostile page is not parsed by one and refused by the other)."""

    min_words: int
    max_bytes: int
    max_depth: int
    max_elements: int
    max_sections: int

    @classmethod
    def of(cls, extract: Any) -> "PageLimits":
        """From the ``extract`` params section (its ``max_page_bytes`` is ``max_bytes`` here)."""
        return cls(extract.min_words, extract.max_page_bytes, extract.max_depth, extract.max_elements,
                   extract.max_sections)


def extract_page(html: str | bytes, url: str | None, limits: PageLimits) -> Extraction:
    """Extract one page. ``url`` is the captured URL (it decides video/live/section-front rejections);
    a page larger than ``limits.max_bytes`` is rejected as ``too_large``, one nested deeper than
    ``max_depth`` as ``too_deep``, one of more than ``max_elements`` elements as ``too_many_elements``, one
    without an article body as ``no_article_body``, without a headline as ``no_headline``, a body of fewer
    than ``min_words`` words as ``too_short``, one of more than ``max_sections`` sub-headed sections as
    ``too_many_sections`` (one such page would otherwise be most of an NLQuAD data set)."""
    min_words, max_bytes, max_sections = limits.min_words, limits.max_bytes, limits.max_sections
    max_depth, max_elements = limits.max_depth, limits.max_elements
    url = original_url(url)
    ex = Extraction(url=url)
    reason = path_rejection(url)
    if reason:
        ex.rejected = reason
        return ex
    size = len(html) if isinstance(html, bytes) else len(html.encode("utf-8", "replace"))
    if size > max_bytes:
        ex.rejected = "too_large"
        return ex
    page = strip_archive_wrapping(decode_page(html))
    shape = shape_rejection(page, max_depth, max_elements)
    if shape:
        ex.rejected = shape
        return ex
    soup = BeautifulSoup(page, "lxml", parse_only=ArticleParts())
    canonical = soup.find("link", rel="canonical")
    ex.canonical_url = original_url(canonical.get("href") if canonical else _meta(soup, "og:url"))
    canon_reason = path_rejection(ex.canonical_url) if ex.canonical_url else None
    if canon_reason:
        ex.rejected = canon_reason
        return ex
    base = ex.canonical_url or url
    if not (_data_component(soup, ex, base) or _story_body(soup, ex, base) or _cream(soup, ex, base)
            or _stm(page, ex, base)):
        ex.rejected = "no_article_body"
        return ex
    ex.date = (_istats_first_pub(page) if ex.template == "cream" else None) or _page_date(soup)
    if not ex.title:
        ex.rejected = "no_headline"
    elif sum(len(p.split()) for p in ex.intro + [q for s in ex.sections for q in s.paragraphs]) < min_words:
        ex.rejected = "too_short"
    elif len(ex.sections) > max_sections:
        ex.rejected = "too_many_sections"
    return ex
