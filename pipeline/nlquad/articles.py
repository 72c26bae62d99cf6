"""``extract`` stage: every crawled page to an article record, non-articles rejected, duplicates removed.

Duplicates: the same article can arrive under two URLs (bbc.co.uk and bbc.com, or a redirect) or as two
captures. First by canonical URL (host-independent path), then by a hash of the extracted text (headline
plus paragraphs). Of each group the capture that ``extract.keep`` names is kept: ``earliest`` (default;
the text as first published, closest to what the question writers saw) or ``latest`` (the last edit).
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from warcio.archiveiterator import ArchiveIterator

from pipeline.nlquad.discover import article_key
from pipeline.nlquad.extract import Extraction, Section, extract_page
from pipeline.params import ExtractParams
from pipeline.runtime import progress


def iter_warc_pages(warc: Path) -> Iterator[tuple[str, str, bytes]]:
    with warc.open("rb") as fh:
        for rec in ArchiveIterator(fh):
            if rec.rec_type != "response":
                continue
            date = rec.rec_headers.get_header("WARC-Date") or ""
            ts = "".join(ch for ch in date if ch.isdigit())[:14]
            yield rec.rec_headers.get_header("WARC-Target-URI"), ts, rec.content_stream().read()


def content_hash(ex: Extraction) -> str:
    text = "\n".join([ex.title or "", *ex.intro, *(p for s in ex.sections for p in [s.heading, *s.paragraphs])])
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


def extract_articles(warc: Path, params: ExtractParams) -> tuple[list[dict], Counter]:
    counts: Counter = Counter()
    candidates: list[tuple[str, Extraction]] = []
    for url, ts, body in progress(iter_warc_pages(warc), "extract", unit="page"):
        counts["pages"] += 1
        ex = extract_page(body, url, params.min_words)
        if ex.rejected:
            counts[f"rejected_{ex.rejected}"] += 1
            continue
        candidates.append((ts, ex))
    order = sorted(candidates, key=lambda c: c[0], reverse=params.keep == "latest")
    kept: list[tuple[str, Extraction]] = []
    seen_url: set[str] = set()
    seen_hash: set[str] = set()
    for ts, ex in order:
        key = article_key(ex.canonical_url or ex.url or "")
        h = content_hash(ex)
        if key in seen_url:
            counts["duplicate_canonical_url"] += 1
            continue
        if h in seen_hash:
            counts["duplicate_content"] += 1
            continue
        seen_url.add(key)
        seen_hash.add(h)
        kept.append((ts, ex))
    kept.sort(key=lambda c: article_key(c[1].canonical_url or c[1].url or ""))
    counts["articles"] = len(kept)
    return [{"capture_timestamp": ts, **ex.to_json()} for ts, ex in kept], counts


def load_articles(path: Path) -> list[Extraction]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        row.pop("capture_timestamp", None)
        row["sections"] = [Section(**s) for s in row["sections"]]
        out.append(Extraction(**row))
    return out
