"""A captured page's bytes to the text the BBC served: its encoding found, the archive's wrapping removed.

Why not leave this to BeautifulSoup's guess: pages of 2004-2009 declare ``iso-8859-1`` in a ``<meta>``
while some copies of them were re-saved as UTF-8 (a Wayback replay saved from a browser), and others hold
raw windows-1252 bytes (a ``£`` as 0xA3) that are invalid UTF-8. Strict UTF-8 first, then the declared
charset, is what browsers effectively get right on these pages: a windows-1252 text that happens to be
valid UTF-8 needs a byte pair like ``Ã£`` that BBC prose does not contain.

Wayback replays saved with the archive's toolbar carry an inserted banner and rewrite every link to
``https://web.archive.org/web/<timestamp>[flag_]/<original>``: the banner is cut out and a rewritten URL is
read as the original, so a replay gives the article of the original bytes.
"""

from __future__ import annotations

import codecs
import re
from urllib.parse import unquote

_CHARSET = re.compile(rb"""<meta[^>]{0,200}?charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]{1,40})""", re.IGNORECASE)
# WHATWG: these labels are decoded as windows-1252 (0x80-0x9F are its quotes and dashes, not controls).
_WINDOWS_1252_LABELS = {"iso-8859-1", "iso8859-1", "latin1", "latin-1", "l1", "us-ascii", "ascii", "cp819",
                        "ibm819", "iso_8859-1", "windows-1252", "cp1252", "x-cp1252"}
_TOOLBAR = re.compile(r"<!--\s*BEGIN WAYBACK TOOLBAR INSERT\s*-->.*?<!--\s*END WAYBACK TOOLBAR INSERT\s*-->",
                      re.IGNORECASE | re.DOTALL)
_WAYBACK_URL = re.compile(
    r"^(?:https?:)?(?://(?:web(?:-beta)?\.|wayback\.)?archive\.org)?/web/\d{1,14}(?:[a-z]{2}_)?/+(.+)$",
    re.IGNORECASE)


WEB_CHARSET_PREFIXES = ("utf-8", "utf-16", "cp", "iso8859", "iso2022", "koi8", "mac-", "gb", "big5", "euc_",
                        "shift_jis", "tis-620", "hz", "johab", "ascii")


def declared_charset(html: bytes) -> str | None:
    """The charset a ``<meta>`` in the first 8 KiB declares, if Python knows it."""
    m = _CHARSET.search(html[:8192])
    if not m:
        return None
    label = m.group(1).decode("ascii", "replace").lower()
    if label in _WINDOWS_1252_LABELS:
        return "windows-1252"
    try:
        name = codecs.lookup(label).name
    except LookupError:
        return None
    # the charsets pages are written in, not Python's own codecs: "unicode_escape" would rewrite every backslash
    # sequence of the page, "utf-7" smuggles markup past a filter
    return name if name.startswith(WEB_CHARSET_PREFIXES) and name not in ("utf-7",) else None


def decode_page(html: bytes | str) -> str:
    """Text of a page: UTF-8 when the bytes are valid UTF-8, else the declared charset, else windows-1252;
    bytes a charset cannot map become U+FFFD rather than an error."""
    if isinstance(html, str):
        return html
    if html.startswith(codecs.BOM_UTF8):
        return html[len(codecs.BOM_UTF8):].decode("utf-8", "replace")
    try:
        return html.decode("utf-8")
    except UnicodeDecodeError:
        pass
    return html.decode(declared_charset(html) or "windows-1252", "replace")


def strip_archive_wrapping(text: str) -> str:
    """Remove the Wayback Machine's toolbar insert; the rest of a replay is the original markup."""
    return _TOOLBAR.sub("", text)


def original_url(url: str | None) -> str | None:
    """``https://web.archive.org/web/20131031012325/http://www.bbc.co.uk/news/x`` -> the BBC URL; any other
    URL unchanged. Percent-encoded originals (``/web/2013/http%3A//...``) are decoded."""
    if not url:
        return url
    m = _WAYBACK_URL.match(url.strip())
    if not m:
        return url
    inner = m.group(1)
    if "%3a" in inner[:8].lower():
        inner = unquote(inner)
    if not re.match(r"^[a-z][a-z0-9+.-]*:", inner, re.IGNORECASE):
        inner = "http://" + inner.lstrip("/")
    inner = re.sub(r"^(https?:)/+", r"\1//", inner, flags=re.IGNORECASE)  # "http:/host" as some replays write it
    return inner
