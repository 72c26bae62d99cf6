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

This module walks the layouts and builds the sections; what counts as furniture is
``pipeline.nlquad.furniture``, the publication date ``pipeline.nlquad.page_dates``, and what a page may be before
it is parsed ``pipeline.nlquad.page_limits`` (which the crawler's link extraction reads too).

    python -m pipeline.experiments.extract_page PAGE.html [PAGE.html ...]   # the same, on any page
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from itertools import chain
from urllib.parse import urljoin, urlsplit

from bs4 import BeautifulSoup, NavigableString, Tag
from bs4.filter import ElementFilter

from pipeline.nlquad.bbc_urls import is_bbc_host, path_rejection
from pipeline.nlquad.endings import is_call_out, trailing_furniture_start
from pipeline.nlquad.page_bytes import decode_page, original_url, strip_archive_wrapping
from pipeline.nlquad.furniture import (FURNITURE_HEADING, READER_COMMENTS, READER_COMMENTS_LEAD, bold_heading,
                                       is_author_line, is_byline, is_furniture_text, is_italic_note,
                                       is_market_box, is_promo, is_separator_image, lines_of, skip_container,
                                       text_inside, text_of)
from pipeline.nlquad.page_dates import istats_first_pub, meta_content, page_date
from pipeline.nlquad.page_limits import PageLimits, shape_rejection

HEADING_BLOCKS = ("crosshead-block", "subheadline-block")
LIST_BLOCKS = ("unordered-list-block", "ordered-list-block")


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



# ------------------------------------------------------------------------------------------------ blocks

@dataclass
class _Block:
    """One unit of a story body in document order: what the body builder consumes, for every layout."""

    kind: str  # heading | para | list | separator
    el: Tag | None = None
    text: str = ""



def _walk_story(children: Iterable[object], heading: re.Pattern[str]) -> Iterator[_Block]:
    """The story-body and cream layouts: paragraphs, lists and cross-heads at any depth (a wrapper div
    must not hide body paragraphs), never entering boxouts, media, forms or embeds. A bold paragraph that
    reads as a cross-head is one; a box title (an ``h2``-``h4`` outside the cross-head classes) is dropped,
    except a reader-comments label, which is passed on so the comments under it go too."""
    for child in children:
        if not isinstance(child, Tag):
            continue
        if child.name == "hr" or (child.name in ("figure", "div") and is_separator_image(child)):
            yield _Block("separator")
            continue
        if heading.match(_tag_key(child)):
            yield _Block("heading", child, text_of(child))
            continue
        if skip_container(child) or (child.name in ("div", "section", "ul", "table") and is_market_box(child)):
            continue
        if child.name == "p":
            inner = next((c for c in child.find_all(True) if heading.match(_tag_key(c))), None)
            if inner is not None:  # cream: <p><span class="cross-head">…</span></p>
                yield _Block("heading", inner, text_of(inner))
                continue
            bold = bold_heading(child)
            yield _Block("heading", child, bold) if bold else _Block("para", child)
        elif child.name in ("ul", "ol"):
            yield _Block("list", child)
        elif child.name in ("h2", "h3", "h4"):
            title = text_of(child)
            if READER_COMMENTS.match(title):
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
                bold = bold_heading(p) if len(paras) == 1 else None
                yield _Block("heading", p, bold) if bold else _Block("para", p)
        elif kind in LIST_BLOCKS:
            yield _Block("list", block)
        elif kind == "image-block" and is_separator_image(block):
            yield _Block("separator")
        # media, byline, links, tags, ads, embeds: not body text



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
        if text and READER_COMMENTS.match(text):
            self.skipping = "comments"
            self.one_comment = text.lower().startswith("have your say")
            return
        if not text or FURNITURE_HEADING.match(text):
            self.skipping = bool(text)
            return
        self.skipping = False
        self.ex.sections.append(Section(heading=text, paragraphs=[]))

    def comment_box_ends(self, el: Tag) -> bool:
        """Under an in-body "HAVE YOUR SAY" label: the reader's words go on until their author line."""
        return self.one_comment and any(is_author_line(line) for line in lines_of(el))

    def add(self, container: Tag, parts: list[Tag], is_list: bool) -> None:
        kept = [(text_of(x), x) for x in parts if not is_promo(x)]
        kept = [(t, x) for t, x in kept if t and not is_furniture_text(t, x)]
        if self.after_comment_box:  # the box's signature and its "Send us your comments" line
            while kept and (is_author_line(kept[0][0]) or is_call_out(kept[0][0])):
                kept.pop(0)
            self.after_comment_box = not kept
        unboxed = [(t, x) for t, x in kept if not (READER_COMMENTS_LEAD.match(t) and len(t.split()) > 4)]
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
            while new > 0 and is_italic_note(self.items[new - 1][2]):
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
        if not isinstance(child, Tag) or child.name in _STM_SKIP or skip_container(child):
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
        if READER_COMMENTS.match(text):  # its label, a link or not: the reader's words and name follow
            yield _Block("heading", run, text)
            continue
        cross = run.find(class_=re.compile("cross-?head"))
        bold_only = not text_inside(run, ("b", "strong"))[1] and not run.find("a")
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
    title = text_of(h1) if h1 else meta_content(full, "Headline")
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
    ex.canonical_url = original_url(canonical.get("href") if canonical else meta_content(soup, "og:url"))
    canon_reason = path_rejection(ex.canonical_url) if ex.canonical_url else None
    if canon_reason:
        ex.rejected = canon_reason
        return ex
    base = ex.canonical_url or url
    if not (_data_component(soup, ex, base) or _story_body(soup, ex, base) or _cream(soup, ex, base)
            or _stm(page, ex, base)):
        ex.rejected = "no_article_body"
        return ex
    ex.date = (istats_first_pub(page) if ex.template == "cream" else None) or page_date(soup)
    if not ex.title:
        ex.rejected = "no_headline"
    elif sum(len(p.split()) for p in ex.intro + [q for s in ex.sections for q in s.paragraphs]) < min_words:
        ex.rejected = "too_short"
    elif len(ex.sections) > max_sections:
        ex.rejected = "too_many_sections"
    return ex
