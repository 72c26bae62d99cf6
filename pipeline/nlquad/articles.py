"""``extract`` stage: every crawled page to an article record, non-articles rejected, duplicates removed.

Duplicates: the same article can arrive under two URLs (bbc.co.uk and bbc.com, or a redirect) or as two
captures. First by canonical URL (host-independent path), then by a hash of the extracted text (headline
plus paragraphs). Of each group the capture that ``extract.keep`` names is kept: ``earliest`` (default;
the text as first published, closest to what the question writers saw) or ``latest`` (the last edit).
"""

from __future__ import annotations

import hashlib
import io
import re
import zlib
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from warcio.archiveiterator import ArchiveIterator
from warcio.exceptions import ArchiveLoadFailed

from pipeline.common.jsonl import iter_jsonl
from pipeline.common.logs import get_logger, progress
from pipeline.nlquad.bbc_urls import article_key
from pipeline.nlquad.extract import Extraction, Section, extract_page
from pipeline.nlquad.page_limits import PageLimits
from pipeline.nlquad.config import ExtractParams


class CorruptWarcError(ValueError):
    """A WARC record that cannot be read back whole: the file and the record's byte offset are named."""


class EmptyWarcError(ValueError):
    """A crawl output with no page in it: extracting it would replace the articles with nothing."""


_GZIP_MAGIC = b"\x1f\x8b\x08"
_CHUNK = 1 << 16
_HEADROOM = 1 << 20  # a record's WARC and HTTP headers beside its page
_HEADER = re.compile(rb"^(WARC-Target-URI|WARC-Date):[ \t]*([^\r\n]*)", re.MULTILINE)


class TooLarge(bytes):
    """The first bytes of a record whose inflated size passed the limit: its headers, not its page."""


def _gzip_members(fh: BinaryIO, path: Path, lost: list[dict] | None,
                  max_member: int | None = None) -> Iterator[tuple[int, bytes]]:
    """``(offset, decompressed member)`` for each gzip member, checked against its CRC. warcio stops
    silently at a truncated record and skips a corrupt one with a message on stderr; here either raises
    :class:`CorruptWarcError`, or, with ``lost`` given, is recorded there and reading resumes at the next
    gzip header. A member that inflates past ``max_member`` bytes is inflated on in bounded steps with the
    output dropped, and comes out as :class:`TooLarge` holding its first bytes (a 23 KB record of zeros would
    otherwise become gigabytes in memory)."""
    data = b""
    offset = 0  # file offset of data[0]
    eof = False
    while True:
        if not data and not eof:
            data = fh.read(_CHUNK)
            eof = not data
        if not data:
            return
        d = zlib.decompressobj(31)
        out: list[bytes] = []
        size, over = 0, False
        pos = 0  # bytes of ``data`` fed to this member
        error = None
        while not d.eof:
            if pos == len(data) and not d.unconsumed_tail:  # all fed, none held back by the output limit
                more = fh.read(_CHUNK)
                if not more:
                    error = "truncated: the file ends inside this record"
                    break
                data += more
            try:
                chunk = d.decompress(d.unconsumed_tail or data[pos:], _CHUNK)
            except zlib.error as exc:
                error = f"corrupt gzip data ({exc})"
                break
            if d.eof or not d.unconsumed_tail:  # at the end zlib leaves the leftover in both
                pos = len(data) - len(d.unused_data)
            size += len(chunk)
            if not over:
                out.append(chunk)
                if max_member is not None and size > max_member:
                    over = True
                    out = [b"".join(out)[:_CHUNK]]  # its headers, for the record's URL and date
        if error is None:
            member = b"".join(out)
            yield offset, TooLarge(member) if over else member
            data, offset = data[pos:], offset + pos
            continue
        if lost is None:
            raise CorruptWarcError(f"{path}: record at byte offset {offset}: {error}")
        lost.append({"offset": offset, "error": error})
        nxt = data.find(_GZIP_MAGIC, 1)
        while nxt < 0 and not eof:  # resynchronise on the next gzip header
            more = fh.read(_CHUNK)
            eof = not more
            data += more
            nxt = data.find(_GZIP_MAGIC, 1)
        if nxt < 0:
            return
        data, offset = data[nxt:], offset + nxt


def _timestamp(date: str) -> str:
    return "".join(ch for ch in date if ch.isdigit())[:14]


def _read_bounded(stream, max_bytes: int | None) -> bytes | None:
    """The whole stream, or None once it passes ``max_bytes``: a Content-Encoding bomb inflates as it is read,
    so no more than the limit and one chunk is ever held."""
    if max_bytes is None:
        return stream.read()
    parts, size = [], 0
    while True:
        chunk = stream.read(_CHUNK)
        if not chunk:
            return b"".join(parts)
        size += len(chunk)
        if size > max_bytes:
            return None
        parts.append(chunk)


def iter_warc_pages(warc: Path, lost: list[dict] | None = None,
                    max_bytes: int | None = None) -> Iterator[tuple[str, str, bytes | None]]:
    """``(url, timestamp, body)`` of every response record, each gzip member checked whole (see
    :func:`_gzip_members`); an uncompressed ``.warc`` is read as it is. With ``max_bytes``, a record whose page
    (after its HTTP ``Content-Encoding``) or whose gzip member is larger comes out with ``body`` None, having
    held no more than about that much in memory."""
    with warc.open("rb") as fh:
        if warc.suffix != ".gz":
            members: Iterator[tuple[int, bytes | None]] = iter([(0, None)])
        else:
            members = _gzip_members(fh, warc, lost, None if max_bytes is None else max_bytes + _HEADROOM)
        for offset, member in members:
            if isinstance(member, TooLarge):
                headers = {k.decode(): v.decode("utf-8", "replace") for k, v in _HEADER.findall(member)}
                yield headers.get("WARC-Target-URI") or f"{warc}@{offset}", _timestamp(headers.get("WARC-Date", "")), None
                continue
            stream = fh if member is None else io.BytesIO(member)
            try:
                for rec in ArchiveIterator(stream):
                    if rec.rec_type != "response":
                        continue
                    ts = _timestamp(rec.rec_headers.get_header("WARC-Date") or "")
                    body = _read_bounded(rec.content_stream(), max_bytes)
                    yield rec.rec_headers.get_header("WARC-Target-URI"), ts, body
            except ArchiveLoadFailed as exc:
                if lost is None:
                    raise CorruptWarcError(f"{warc}: record at byte offset {offset}: not a WARC record ({exc})") from None
                lost.append({"offset": offset, "error": f"not a WARC record ({exc})"})


def content_hash(ex: Extraction) -> str:
    text = "\n".join([ex.title or "", *ex.intro, *(p for s in ex.sections for p in [s.heading, *s.paragraphs])])
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


class EraTally:
    """Pages, kept articles, rejections and questions per capture year and page layout: a layout the
    extractor does not know shows up as a year whose articles fall to zero (``no_article_body``)."""

    def __init__(self) -> None:
        self.cells: dict[tuple[str, str], Counter] = {}

    def _cell(self, ts: str, layout: str | None) -> Counter:
        year = ts[:4] if len(ts) >= 4 and ts[:4].isdigit() else "unknown"
        return self.cells.setdefault((year, layout or "none"), Counter())

    def page(self, ts: str, ex: Extraction | None, reason: str | None) -> None:
        cell = self._cell(ts, ex.template if ex else None)
        cell["pages"] += 1
        if reason:
            cell[f"rejected_{reason}"] += 1

    def kept(self, ts: str, ex: Extraction) -> None:
        cell = self._cell(ts, ex.template)
        cell["articles"] += 1
        cell["questions"] += sum(1 for s in ex.sections if s.heading.rstrip().endswith("?"))

    def duplicate(self, ts: str, ex: Extraction) -> None:
        self._cell(ts, ex.template)["duplicates"] += 1

    def report(self) -> dict[str, dict[str, dict]]:
        """``{year: {layout: {pages, articles, duplicates, questions, questions_per_article, rejected}}}``."""
        out: dict[str, dict[str, dict]] = {}
        for (year, layout), c in sorted(self.cells.items()):
            articles = c["articles"]
            out.setdefault(year, {})[layout] = {
                "pages": c["pages"], "articles": articles, "duplicates": c["duplicates"],
                "questions": c["questions"],
                "questions_per_article": round(c["questions"] / articles, 3) if articles else 0.0,
                "rejected": {k.removeprefix("rejected_"): v for k, v in sorted(c.items()) if k.startswith("rejected_")},
            }
        return out

    def rows(self) -> list[dict]:
        """One row per (year, layout) for the plot."""
        return [{"year": year, "template": layout, "pages": cell["pages"], "articles": cell["articles"],
                 "questions_per_article": cell["questions_per_article"]}
                for year, layouts in self.report().items() for layout, cell in layouts.items()]


def extract_articles(warc: Path, params: ExtractParams, eras: EraTally | None = None) -> tuple[list[dict], Counter]:
    """Articles and counts. A WARC record that cannot be read fails the stage (file and offset named), or
    with ``bad_records: skip`` is recorded in ``counts["lost_records"]``. A page the extractor cannot
    handle is rejected as ``parse_error`` (logged with its URL), never the whole stage. ``eras`` (when
    given) is filled per capture year and layout."""
    counts: Counter = Counter()
    eras = eras if eras is not None else EraTally()
    candidates: list[tuple[str, Extraction]] = []
    lost: list[dict] | None = [] if params.bad_records == "skip" else None
    limits = PageLimits.of(params)
    log = get_logger()
    for url, ts, body in progress(iter_warc_pages(warc, lost, params.max_page_bytes), "extract", unit="page"):
        counts["pages"] += 1
        if body is None:  # larger than extract.max_page_bytes, never held whole
            counts["rejected_too_large"] += 1
            eras.page(ts, None, "too_large")
            continue
        try:
            ex = extract_page(body, url, limits)
        except Exception as exc:  # one page never sinks the stage
            log.warning("%s: cannot be extracted (%s: %s)", url, type(exc).__name__, str(exc)[:200])
            counts["rejected_parse_error"] += 1
            eras.page(ts, None, "parse_error")
            continue
        eras.page(ts, ex, ex.rejected)
        if ex.rejected:
            counts[f"rejected_{ex.rejected}"] += 1
            continue
        candidates.append((ts, ex))
    if not counts["pages"]:
        raise EmptyWarcError(f"{warc}: holds no response record ({len(lost or [])} unreadable): the crawl "
                             "fetched nothing; rerun the crawl stage (the previous articles are kept)")
    if lost:
        log.warning("%s: %d unreadable record(s) skipped: %s", warc, len(lost), lost[:5])
        counts["lost_records"] = len(lost)
        counts["lost_record_offsets"] = [x["offset"] for x in lost]
    order = sorted(candidates, key=lambda c: c[0], reverse=params.keep == "latest")
    kept: list[tuple[str, Extraction]] = []
    seen_url: set[str] = set()
    seen_hash: set[str] = set()
    for ts, ex in order:
        key = article_key(ex.canonical_url or ex.url or "")
        h = content_hash(ex)
        if key in seen_url:
            counts["duplicate_canonical_url"] += 1
            eras.duplicate(ts, ex)
            continue
        if h in seen_hash:
            counts["duplicate_content"] += 1
            eras.duplicate(ts, ex)
            continue
        seen_url.add(key)
        seen_hash.add(h)
        kept.append((ts, ex))
        eras.kept(ts, ex)
    kept.sort(key=lambda c: article_key(c[1].canonical_url or c[1].url or ""))
    counts["articles"] = len(kept)
    if not kept:
        rejected = {k.removeprefix("rejected_"): v for k, v in sorted(counts.items()) if k.startswith("rejected_")}
        raise EmptyWarcError(f"{warc}: none of its {counts['pages']} pages is an article the extractor keeps "
                             f"(rejected: {rejected or 'none'}); nothing was written, the previous articles are "
                             "kept. Check the crawl's URLs (discover.url_prefixes, article_pattern) and the "
                             "pages' layout")
    return [{"capture_timestamp": ts, **ex.to_json()} for ts, ex in kept], counts


def load_articles(path: Path) -> list[Extraction]:
    def article(row: dict) -> Extraction:
        row.pop("capture_timestamp", None)
        return Extraction(**{**row, "sections": [Section(**s) for s in row["sections"]]})

    return list(iter_jsonl(path, "extracted article line", article))
