"""A BBC page's first publication date, in UTC, from whichever of its layouts' places holds it.

schema.org ``datePublished`` first (the later layouts' ``<time>`` shows the last update), then the story-body
layout's ``div.date[data-seconds]``, the cream layout's ``OriginalPublicationDate`` meta, a ``<time>``; the
2010-2013 pages name their first publication only in the statistics beacon (``first_pub=``).
"""

from __future__ import annotations

import datetime as dt
import json
import re
from urllib.parse import unquote

from bs4 import BeautifulSoup


def meta_content(soup: BeautifulSoup, prop: str) -> str | None:
    el = soup.find("meta", attrs={"property": prop}) or soup.find("meta", attrs={"name": prop})
    return el.get("content") if el and el.get("content") else None


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


def istats_first_pub(page: str) -> str | None:
    """2010-2013 pages name their first publication only in the statistics beacon (``first_pub=``); their
    ``OriginalPublicationDate`` is the last editorial update at capture time."""
    m = _FIRST_PUB.search(page)
    return _utc(unquote(m.group(1))) if m else None


def page_date(soup: BeautifulSoup) -> str | None:
    time_el = soup.find("time", attrs={"datetime": True}) or soup.find("time", attrs={"dateTime": True})
    return (_ld_json_date(soup) or _seconds_date(soup) or _utc(meta_content(soup, "OriginalPublicationDate"))
            or (_utc(time_el.get("datetime") or time_el.get("dateTime")) if time_el is not None else None))
