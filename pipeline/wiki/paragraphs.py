"""Wikimedia CirrusSearch content dump -> paragraphs JSONL, streaming with constant memory.

The dump is Elasticsearch bulk format: an action line, then the document line. Paragraphs come from the
article wikitext (``source_text``) parsed with mwparserfromhell: split on section headings and blank lines,
markup stripped; templates, references, files, categories, tables and lists dropped. Without wikitext the
plain ``text`` is the one paragraph. Ids are ``"{title}-{para_index}"`` (0-based over the article), the
convention of StrategyQA's evidence annotations. Non-article namespaces and redirects are skipped; a
malformed line is counted and logged with its line number, never fatal.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import multiprocessing
import os
import re
import zlib
from collections import Counter, deque
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import mwparserfromhell
from mwparserfromhell.nodes import Heading, Tag, Template, Wikilink

_LIST_LINE = re.compile(r"^[*#:;].*$", re.MULTILINE)
_BLANK = re.compile(r"\n\s*\n")
_DROP_LINK_NS = ("file:", "image:", "category:", "media:")
_DROP_TAGS = {"ref", "references", "table", "gallery", "math", "score", "timeline", "imagemap", "syntaxhighlight"}


@dataclass
class Paragraph:
    id: str
    title: str
    section: str
    headers: list[str]
    para_index: int
    text: str


def _clean(code: mwparserfromhell.wikicode.Wikicode) -> str:
    for node in code.filter(recursive=False):
        if isinstance(node, Template):
            code.remove(node)
        elif isinstance(node, Tag) and str(node.tag).lower() in _DROP_TAGS:
            code.remove(node)
        elif isinstance(node, Wikilink) and str(node.title).strip().lower().startswith(_DROP_LINK_NS):
            code.remove(node)
    text = code.strip_code(normalize=True, collapse=True)
    return re.sub(r"\s+", " ", text).strip()  # single newlines and non-breaking spaces too


def wikitext_paragraphs(title: str, wikitext: str, min_chars: int) -> Iterator[Paragraph]:
    """Paragraphs of one article, in order, with the heading path they sit under."""
    code = mwparserfromhell.parse(_LIST_LINE.sub("", wikitext))
    index = 0
    path: list[tuple[int, str]] = []  # (level, heading) of enclosing sections
    chunks: list[tuple[list[str], str]] = []  # (headers, raw wikitext) between headings
    buf: list[str] = []

    def flush() -> None:
        if buf:
            chunks.append(([h for _, h in path], "".join(buf)))
            buf.clear()

    for node in code.nodes:
        if isinstance(node, Heading):
            flush()
            heading = node.title.strip_code().strip()
            path[:] = [(lvl, h) for lvl, h in path if lvl < node.level] + [(node.level, heading)]
        else:
            buf.append(str(node))
    flush()
    for headers, raw in chunks:
        for block in _BLANK.split(raw):
            text = _clean(mwparserfromhell.parse(block))
            if len(text) < min_chars:
                continue
            yield Paragraph(id=f"{title}-{index}", title=title, section=headers[-1] if headers else "",
                            headers=headers, para_index=index, text=text)
            index += 1


class TruncatedDumpError(ValueError):
    """The dump's compressed stream is cut short or corrupt: the file (and the line reached) are named."""


DEFAULT_MAX_DOCUMENT_BYTES = 16_000_000  # the longest enwiki CirrusSearch documents are a few megabytes


def _lines(path: Path, max_bytes: int = DEFAULT_MAX_DOCUMENT_BYTES) -> Iterator[tuple[int, str | None]]:
    """``(line number, text)``; a line longer than ``max_bytes`` is skipped unread as ``(n, None)``: held
    whole, a 200 MB line took 3.9 GB to decode and parse."""
    opener = gzip.open if str(path).endswith(".gz") else open
    lineno = 0
    try:
        with opener(path, "rb") as raw:
            while True:
                line = raw.readline(max_bytes + 1)
                if not line:
                    return
                lineno += 1
                if len(line) > max_bytes and not line.endswith(b"\n"):
                    while True:  # the rest of the line, in bounded pieces
                        rest = raw.readline(1 << 20)
                        if not rest or rest.endswith(b"\n"):
                            break
                    yield lineno, None
                    continue
                yield lineno, line.decode("utf-8", "replace")
    except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
        raise TruncatedDumpError(f"{path}: compressed data ends or breaks after line {lineno} "
                                 f"({type(exc).__name__}: {exc}); the download is incomplete or damaged") from None


def _bad(counts: Counter, log, path: Path, lineno: int, why: str) -> None:
    counts["malformed_lines"] += 1
    if log:
        log.warning("%s:%d: %s, skipped", path, lineno, why)


def _title_key(title: str) -> int:
    """64 bits of a title: a full dump's 6.9 million titles fit in a set of ints (~400 MB less than strings)."""
    return int.from_bytes(hashlib.blake2b(title.encode("utf-8"), digest_size=8).digest(), "big")


def iter_dump_documents(path: Path, counts: Counter, log=None,
                        max_bytes: int = DEFAULT_MAX_DOCUMENT_BYTES) -> Iterator[dict]:
    """Article documents of a CirrusSearch dump; malformed lines and records are counted, logged with their
    line number and skipped; a truncated or corrupt dump raises :class:`TruncatedDumpError`. A document over
    ``max_bytes`` is skipped (``oversized_documents``); a second article of a title already read is skipped
    (``duplicate_titles``): paragraph ids are ``title-index``, so it would repeat the first one's ids."""
    expect_doc = False
    seen_titles: set[int] = set()
    for lineno, line in _lines(path, max_bytes):
        if line is None:
            counts["oversized_documents"] += 1
            if log:
                log.warning("%s:%d: document over %d bytes (wiki.max_document_bytes), skipped", path, lineno,
                            max_bytes)
            expect_doc = False
            continue
        line = line.strip()
        if not line:
            continue
        try:
            obj = json.loads(line)
        except (json.JSONDecodeError, RecursionError) as exc:
            _bad(counts, log, path, lineno, f"malformed JSON ({getattr(exc, 'msg', type(exc).__name__)})")
            expect_doc = False
            continue
        if not isinstance(obj, dict):
            _bad(counts, log, path, lineno, "not a JSON object")
            continue
        if "index" in obj and len(obj) == 1:
            expect_doc = True
            continue
        if not expect_doc:
            counts["documents_without_action"] += 1  # tolerated: some exports drop action lines
        expect_doc = False
        if not isinstance(obj.get("title"), str) or not obj["title"].strip():
            _bad(counts, log, path, lineno, "document without a string title")
            continue
        wrong = [k for k in ("source_text", "text") if obj.get(k) is not None and not isinstance(obj[k], str)]
        if wrong:
            _bad(counts, log, path, lineno, f"document {obj['title']!r} has a non-string {wrong[0]!r}")
            continue
        counts["documents"] += 1
        if obj.get("namespace", 0) != 0:
            counts["skipped_namespace"] += 1
            continue
        src = obj.get("source_text") or ""
        if src.lstrip().upper().startswith("#REDIRECT") or obj.get("is_redirect"):
            counts["skipped_redirect"] += 1
            continue
        key = _title_key(obj["title"])
        if key in seen_titles:
            counts["duplicate_titles"] += 1
            if log:
                log.warning("%s:%d: a second article titled %r, skipped (its paragraph ids would repeat the "
                            "first one's)", path, lineno, obj["title"][:200])
            continue
        seen_titles.add(key)
        yield obj


Article = tuple[str, str, str]  # title, wikitext, plain text: what a worker needs of a dump document

BATCH_ARTICLES = 32  # per task: big enough to amortise pickling, small enough to keep workers evenly busy


def article_paragraphs(article: Article, min_chars: int) -> tuple[list[Paragraph], bool]:
    """Paragraphs of one article, and whether they came from its plain text (no wikitext in the dump)."""
    title, source_text, text = article
    if source_text:
        return list(wikitext_paragraphs(title, source_text, min_chars)), False
    text = re.sub(r"\s+", " ", text).strip()
    return ([Paragraph(f"{title}-0", title, "", [], 0, text)] if text else []), True


def _parse_batch(batch: list[Article], min_chars: int) -> list[tuple[list[Paragraph], bool]]:
    return [article_paragraphs(a, min_chars) for a in batch]


def _batches(articles: Iterator[Article], size: int) -> Iterator[list[Article]]:
    batch: list[Article] = []
    for article in articles:
        batch.append(article)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def _parsed_in_parallel(articles: Iterator[Article], workers: int, min_chars: int
                        ) -> Iterator[tuple[list[Paragraph], bool]]:
    """``workers`` processes parse batches of articles while this one reads the dump. Results are taken in
    submission order (the output does not depend on ``workers``) and at most ``2 * workers`` batches are in
    flight, so memory stays constant however large the dump (``Pool.imap`` would read the whole input ahead)."""
    ctx = multiprocessing.get_context("spawn")  # no fork of a process that may hold threads (Prefect, logging)
    with ctx.Pool(workers) as pool:
        pending: deque = deque()
        for batch in _batches(articles, BATCH_ARTICLES):
            pending.append(pool.apply_async(_parse_batch, (batch, min_chars)))
            while len(pending) >= 2 * workers:
                yield from pending.popleft().get()
        while pending:
            yield from pending.popleft().get()


def resolve_workers(workers: int) -> int:
    """``0``: every core this process may use."""
    if workers > 0:
        return workers
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def dump_paragraphs(path: Path, counts: Counter, log=None, *, min_chars: int, workers: int = 1,
                    max_document_bytes: int = DEFAULT_MAX_DOCUMENT_BYTES) -> Iterator[Paragraph]:
    """Paragraphs of every article in dump order. ``workers`` > 1 parses in that many processes (0: every
    core); the paragraphs and counts are the same as with one."""
    articles = ((d["title"], d.get("source_text") or "", d.get("text") or "")
                for d in iter_dump_documents(path, counts, log, max_document_bytes))
    n = resolve_workers(workers)
    parsed = (article_paragraphs(a, min_chars) for a in articles) if n == 1 else \
        _parsed_in_parallel(articles, n, min_chars)
    for paras, from_text in parsed:
        if from_text:
            counts["fallback_to_text"] += 1
        counts["articles"] += 1
        counts["paragraphs"] += len(paras)
        yield from paras


def with_evidence(paragraphs: Iterator[Paragraph], evidence_path: str | Path, counts: Counter) -> Iterator[Paragraph]:
    """The dump's paragraphs, then StrategyQA's evidence paragraphs (the texts its annotators saw), so that
    retrieval is scored against them. An evidence id that the dump also produced ('{title}-{index}' from a
    different Wikipedia) replaces the dump's paragraph: one id, one text, the annotators'."""
    from pipeline.strategyqa.data import load_paragraph_records

    evidence = load_paragraph_records(evidence_path)
    for para in paragraphs:
        if para.id in evidence:
            counts["dump_replaced_by_evidence"] += 1
            continue
        yield para
    for pid in sorted(evidence):
        row = evidence[pid]
        counts["evidence_added"] += 1
        yield Paragraph(id=pid, title=row["title"], section=row.get("section", ""), headers=row.get("headers", []),
                        para_index=row.get("para_index", 0), text=row["text"])
