"""Which BBC URLs can be news articles: the one set of URL rules that discovery, the crawler's link following
and the extractor share.

``non_article_section`` names the sections that are certainly not articles (video, live pages, picture
galleries, sport, topic indexes); ``path_rejection`` adds what else the URL alone settles (not a BBC host, not
news, a section front). Discovery applies the first and then the researcher's ``discover.article_pattern``
(which article URL shapes to collect) and optional ``discover.exclude_pattern`` (more to leave out); the
extractor applies the second and judges every other page by what it holds.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

BBC_DOMAINS = ("bbc.co.uk", "bbc.com")
# Certainly not an article, whatever the page holds: (substring of the lowercased path + '/', reason).
NON_ARTICLE_PATHS = (
    ("/av/", "video"), ("/video_and_audio/", "video"), ("/live/", "live"), ("/in_pictures", "in_pictures"),
    ("/in-pictures", "in_pictures"), ("/sport/", "sport"), ("/topics/", "index"),
)
_NEWS_PATH = re.compile(r"^/(?:news|newsbeat)(?:/|$)")
_OLD_NEWS_PATH = re.compile(r"^/\d/hi/.*\d+\.stm$")  # news.bbc.co.uk before 2011
_ARTICLES_ID = re.compile(r"/articles/[a-z0-9]+$")


def non_article_section(path: str) -> str | None:
    """The reason a URL path (``/news/av/uk-123``) is certainly not an article, or None."""
    path = path.rstrip("/").lower() or "/"
    for needle, reason in NON_ARTICLE_PATHS:
        if needle in path + "/":
            return reason
    if path.startswith("/sport"):
        return "sport"
    return None


def is_bbc_host(netloc: str) -> bool:
    """On a dot boundary: ``evilbbc.co.uk`` and ``bbc.co.uk.example.com`` are not the BBC."""
    host = netloc.rsplit("@", 1)[-1].split(":", 1)[0].lower().rstrip(".")
    return any(host == d or host.endswith("." + d) for d in BBC_DOMAINS)


def path_rejection(url: str | None) -> str | None:
    """Reject by URL only what is certainly not an article; every other page is judged by its content."""
    if not url:
        return None
    parts = urlsplit(url if "://" in url else "http://" + url)
    path = parts.path.rstrip("/").lower() or "/"
    if not is_bbc_host(parts.netloc):
        return "not_bbc"
    section = non_article_section(path)
    if section:
        return section
    if _OLD_NEWS_PATH.match(path):
        return None
    if not _NEWS_PATH.match(path):
        return "not_news"
    last = path.rsplit("/", 1)[-1]
    if not any(ch.isdigit() for ch in last) and not _ARTICLES_ID.search(path):
        return "index"  # a section front: /news, /news/world/europe, /news/newsbeat
    return None


_STM_EDITION = re.compile(r"^/\d/hi/")


def article_key(url: str) -> str:
    """bbc.co.uk and bbc.com serve one article under one path: the path is the article's identity. On
    news.bbc.co.uk the UK (``/1/hi/``) and international (``/2/hi/``) editions are one article too."""
    parts = urlsplit(url if "://" in url else "http://" + url)
    return _STM_EDITION.sub("/hi/", parts.path.rstrip("/").lower())
