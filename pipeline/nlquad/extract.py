"""Article extraction from archived BBC News pages, for every template of 2014 onwards.

Templates (see ``../shared/fixtures/bbc/SOURCE.md``):
- ``story-body`` (2014 to spring 2020): body ``div.story-body__inner``; sub-headings ``h2.story-body__crosshead``;
  bullet lists ``ul``; headline ``h1.story-body__h1``; date ``div.date[data-seconds]``.
- ``data-component`` (2020 on; emotion ``css-*``, ``ssrcss-*`` and ``sc-*`` class families alike): ordered
  blocks ``[data-component=text-block]``, ``crosshead-block`` / ``subheadline-block`` (sub-headings),
  ``unordered-list-block`` (bullets); headline ``headline-block h1`` or ``h1#main-heading``; date ``time[datetime]``.

Only the article body is walked; media, captions, adverts, share tools, related links and tag lists sit in
blocks or elements the walk skips, and hyperlinks contribute their text. Non-articles (video, live,
picture galleries, section fronts, sport) are rejected with a reason rather than silently dropped.

    python -m pipeline.nlquad.extract PAGE.html [PAGE.html ...]
"""

from __future__ import annotations

import datetime as dt
import json
import re
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from urllib.parse import urljoin, urlsplit

from bs4 import BeautifulSoup, SoupStrainer, Tag
from bs4.filter import ElementFilter

_WS = re.compile(r"\s+")
NON_ARTICLE_PATHS = (
    ("/av/", "video"), ("/live/", "live"), ("/in_pictures", "in_pictures"), ("/in-pictures", "in_pictures"),
    ("/sport/", "sport"), ("/newsbeat", "newsbeat"), ("/topics/", "index"),
)
HEADING_BLOCKS = ("crosshead-block", "subheadline-block")


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


def path_rejection(url: str | None) -> str | None:
    """Reject by URL before parsing: cheap, and the archive's URL is the most reliable signal."""
    if not url:
        return None
    parts = urlsplit(url if "://" in url else "http://" + url)
    path = parts.path.rstrip("/") or "/"
    if not parts.netloc.endswith(("bbc.co.uk", "bbc.com")):
        return "not_bbc"
    for needle, reason in NON_ARTICLE_PATHS:
        if needle in path + "/":
            return reason
    if not path.startswith("/news"):
        return "not_news"
    if not re.search(r"\d{6,}$", path):
        return "index"
    return None


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
        return "story-body" in cls or "data-component" in attrs or "date" in cls.split()

    def allow_string_creation(self, string: str) -> bool:
        return False  # text outside the kept containers


def _absolute_news_link(href: str | None, base: str | None) -> str | None:
    if not href or href.startswith(("#", "mailto:", "javascript:")):
        return None
    absolute = urljoin(base or "https://www.bbc.co.uk/", href)
    parts = urlsplit(absolute)
    if not parts.netloc.endswith(("bbc.co.uk", "bbc.com")) or path_rejection(absolute):
        return None
    return f"{parts.scheme}://{parts.netloc}{parts.path}"


def _meta(soup: BeautifulSoup, prop: str) -> str | None:
    el = soup.find("meta", attrs={"property": prop}) or soup.find("meta", attrs={"name": prop})
    return el.get("content") if el and el.get("content") else None


def _story_body(soup: BeautifulSoup, ex: Extraction, base: str | None) -> bool:
    inner = soup.select_one("div.story-body__inner") or soup.select_one('div.story-body [property="articleBody"]')
    if inner is None:
        return False
    ex.template = "story-body"
    h1 = soup.select_one("h1.story-body__h1") or soup.find("h1")
    ex.title = text_of(h1) if h1 else None
    date = soup.select_one("div.date[data-seconds]")
    if date is not None:
        ex.date = dt.datetime.fromtimestamp(int(date["data-seconds"]), tz=dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    body = _BodyBuilder(ex, base)
    for el in inner.find_all(["p", "h2", "ul", "ol"], recursive=False):
        if el.name == "h2":
            body.heading(text_of(el))
        elif el.name in ("ul", "ol"):
            body.add(el, el.find_all("li", recursive=False), is_list=True)
        else:
            body.add(el, [el], is_list=False)
    body.finish()
    return True


class _BodyBuilder:
    """Sections in document order; a section is a bullet list when list items outnumber paragraphs."""

    def __init__(self, ex: Extraction, base: str | None):
        self.ex, self.base = ex, base
        self.tally: list[list[int]] = []  # per section: [paragraphs, list items]

    def heading(self, text: str) -> None:
        self.ex.sections.append(Section(heading=text, paragraphs=[]))
        self.tally.append([0, 0])

    def add(self, container: Tag, parts: list[Tag], is_list: bool) -> None:
        texts = [t for t in (text_of(x) for x in parts if not _is_link_only(x)) if t]
        if not texts:
            return
        _collect_links(container, self.ex, self.base)
        if not self.ex.sections:
            self.ex.intro.extend(texts)
            return
        self.ex.sections[-1].paragraphs.extend(texts)
        self.tally[-1][1 if is_list else 0] += len(texts)

    def finish(self) -> None:
        for section, (paras, items) in zip(self.ex.sections, self.tally, strict=True):
            section.bullet = items > paras


def _is_link_only(el: Tag) -> bool:
    """A paragraph or item that is nothing but one link: an inline 'related story' promo, not prose."""
    anchors = el.find_all("a")
    return len(anchors) == 1 and text_of(anchors[0]) == text_of(el) != ""


def _data_component(soup: BeautifulSoup, ex: Extraction, base: str | None) -> bool:
    blocks = soup.select("[data-component]")
    if not any(b.get("data-component") == "text-block" for b in blocks):
        return False
    ex.template = "data-component"
    h1 = soup.select_one('[data-component="headline-block"] h1') or soup.select_one("h1#main-heading")
    ex.title = text_of(h1) if h1 else None
    time_el = soup.find("time", attrs={"datetime": True}) or soup.find("time", attrs={"dateTime": True})
    if time_el is not None:
        ex.date = time_el.get("datetime") or time_el.get("dateTime")
    body = _BodyBuilder(ex, base)
    for block in blocks:
        kind = block.get("data-component")
        if block.find_parent(attrs={"data-component": True}) is not None:
            continue  # nested block: handled by its container
        if kind in HEADING_BLOCKS:
            body.heading(text_of(block.find(["h2", "h3"]) or block))
        elif kind == "text-block":
            body.add(block, block.find_all("p") or [block], is_list=False)
        elif kind == "unordered-list-block":
            body.add(block, block.find_all("li"), is_list=True)
        # image, media, byline, links and tag-list blocks are not body text
    body.finish()
    return True


def _collect_links(el: Tag, ex: Extraction, base: str | None) -> None:
    for a in el.find_all("a", href=True):
        link = _absolute_news_link(a["href"], base)
        if link and link not in ex.links:
            ex.links.append(link)


def _ld_json_date(soup: BeautifulSoup) -> str | None:
    """schema.org ``datePublished``: the date of record when the page shows no ``<time>``."""
    for script in soup.find_all("script", attrs={"type": "application/ld+json"}):
        try:
            data = json.loads(script.get_text() or "null")
        except json.JSONDecodeError:
            continue
        for item in data if isinstance(data, list) else [data]:
            if isinstance(item, dict) and isinstance(item.get("datePublished"), str):
                return item["datePublished"]
    return None


def extract_page(html: str | bytes, url: str | None = None, min_words: int = 20) -> Extraction:
    """Extract one page. ``url`` is the captured URL (it decides video/live/index rejections); a body of
    fewer than ``min_words`` words is rejected as ``too_short``."""
    ex = Extraction(url=url)
    reason = path_rejection(url)
    if reason:
        ex.rejected = reason
        return ex
    soup = BeautifulSoup(html, "lxml", parse_only=ArticleParts())
    canonical = soup.find("link", rel="canonical")
    ex.canonical_url = canonical.get("href") if canonical else _meta(soup, "og:url")
    canon_reason = path_rejection(ex.canonical_url) if ex.canonical_url else None
    if canon_reason:
        ex.rejected = canon_reason
        return ex
    base = ex.canonical_url or url
    if not (_story_body(soup, ex, base) or _data_component(soup, ex, base)):
        ex.rejected = "no_article_body"
        return ex
    if not ex.date:
        ex.date = _ld_json_date(soup)
    if not ex.title:
        ex.rejected = "no_headline"
    elif sum(len(p.split()) for p in ex.intro + [q for s in ex.sections for q in s.paragraphs]) < min_words:
        ex.rejected = "too_short"
    return ex


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args:
        print("usage: python -m pipeline.nlquad.extract PAGE.html [PAGE.html ...] (URL taken from the page)",
              file=sys.stderr)
        return 2
    status = 0
    for name in args:
        path = Path(name)
        try:
            html = path.read_bytes()
        except OSError as exc:
            print(f"{name}: cannot read: {exc}", file=sys.stderr)
            status = 1
            continue
        head = BeautifulSoup(html, "lxml", parse_only=SoupStrainer(["link", "meta"]))
        canonical = head.find("link", rel="canonical")
        og = head.find("meta", attrs={"property": "og:url"})
        url = (canonical.get("href") if canonical else None) or (og.get("content") if og else None)
        result = extract_page(html, url)
        print(json.dumps({"file": name, **result.to_json()}, ensure_ascii=False, indent=2))
    return status


if __name__ == "__main__":
    sys.exit(main())
