"""``discover``: the frozen list of captures to crawl, one per article, from CDX queries.

The archive holds many captures per article: byte-identical re-captures (same digest), later edits, and
the same story under bbc.co.uk and bbc.com. Fetching all of them (the policy of wayback-machine-scraper:
every new digest) multiplies the requests a rate-limited crawl can make. Here each article, keyed by its
URL path (``/news/<section>-<id>``), keeps one capture: the earliest in the time range, so the text is the
one first published. ``data/raw/captures.jsonl`` is that list, DVC-tracked, so a crawl is repeatable.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import asdict
from urllib.parse import urlsplit

from pipeline.common.logs import get_logger
from pipeline.nlquad.bbc_urls import article_key, non_article_section
from pipeline.nlquad.config import DiscoverParams
from pipeline.wayback.cdx import CdxCapture, CdxClient, CdxFormatError

# distinct article URLs one discover keeps (one capture each): the BBC News prefix of 2016-2020 has some hundreds of
# thousands of captures, so more is a server sending rows without end; with the CDX client's row cap this bounds
# what selection holds to well under 1 GB (tests/test_nlquad_build.py measures it per row)
MAX_ARTICLES = 750_000


def _seen_key(key: str, digest: str) -> int:
    """An article's capture by content, in 8 bytes: what the duplicate check must remember of every row (a set of
    these takes a tenth of a set of (key, digest) strings)."""
    return int.from_bytes(hashlib.blake2b(f"{key}\0{digest}".encode(), digest_size=8).digest(), "little")


def classify_path(path: str, article_pattern: str, exclude_pattern: str | None) -> str | None:
    """``None`` for an article URL path to collect, else why not: a section that is never an article
    (``pipeline.nlquad.bbc_urls``, the rule the extractor applies too) or one ``exclude_pattern`` leaves out
    is ``excluded``; a path ``article_pattern`` does not match is ``not_article_url``."""
    path = path.rstrip("/")
    if non_article_section(path) or (exclude_pattern and re.search(exclude_pattern, path)):
        return "excluded"
    if not re.search(article_pattern, path):
        return "not_article_url"
    return None


def classify(url: str, params: DiscoverParams) -> str | None:
    """``None`` for an article URL, else the reason it is not one."""
    path = urlsplit(url if "://" in url else "http://" + url).path
    return classify_path(path, params.article_pattern, params.exclude_pattern)


def select_captures(captures: Iterable[CdxCapture], params: DiscoverParams,
                    max_articles: int = MAX_ARTICLES) -> tuple[list[CdxCapture], dict]:
    """One capture per article (earliest, then bbc.co.uk before bbc.com), and counts of what was dropped. Holds
    one capture per article and 8 bytes per distinct (article, digest), never the rows; more than
    ``max_articles`` articles is an error."""
    counts = {"cdx_rows": 0, "excluded": 0, "not_article_url": 0, "duplicate_digest": 0, "later_capture": 0}
    best: dict[str, CdxCapture] = {}
    digests: set[int] = set()
    for cap in captures:
        counts["cdx_rows"] += 1
        reason = classify(cap.url, params)
        if reason:
            counts[reason] += 1
            continue
        key = article_key(cap.url)
        seen = _seen_key(key, cap.digest)
        if seen in digests:  # pywb ignores collapse=digest; IA applies it only to adjacent rows
            counts["duplicate_digest"] += 1
            continue
        digests.add(seen)
        current = best.get(key)
        if current is None and len(best) >= max_articles:
            raise CdxFormatError(f"more than {max_articles} distinct articles in the CDX replies; stopped (the "
                                 "archive's prefix holds far fewer: a server sending rows without end)")
        rank = (cap.timestamp, "bbc.com" in cap.url)
        if current is None or rank < (current.timestamp, "bbc.com" in current.url):
            if current is not None:
                counts["later_capture"] += 1
            best[key] = cap
        else:
            counts["later_capture"] += 1
    chosen = sorted(best.values(), key=lambda c: (c.timestamp, c.url))
    if params.limit:
        chosen = chosen[: params.limit]
    counts["articles"] = len(chosen)
    return chosen, counts


def discover(client: CdxClient, params: DiscoverParams) -> tuple[list[dict], dict]:
    log = get_logger()
    start, end = params.start.strftime("%Y%m%d"), params.end.strftime("%Y%m%d") + "235959"

    def all_rows() -> Iterable[CdxCapture]:
        for prefix in params.url_prefixes:
            n = 0
            for cap in client.query(prefix, start=start, end=end, page_size=params.page_size):
                n += 1
                yield cap
            log.info("CDX %s: %d captures in %s..%s", prefix, n, params.start, params.end)

    chosen, counts = select_captures(all_rows(), params)
    rows = [{**asdict(c), "key": article_key(c.url)} for c in chosen]
    return rows, counts
