"""A Wikimedia CirrusSearch content dump made from the vital-article extracts.

The real dump (``enwiki-YYYYMMDD-cirrussearch-content.json.gz``) is Elasticsearch bulk format: an action
line ``{"index": {"_type": "_doc", "_id": PAGE_ID}}`` followed by the document (``title``, ``text``,
``source_text`` wikitext, ``heading``, ``opening_text``, ``namespace`` ...). The sample writes the same
format with wikitext that carries the markup a paragraph splitter must cope with: an infobox template,
bold and italics, internal and external links, ``<ref>`` citations, a file link, a table, a bullet list and
reference sections, around the real prose of each extract.
"""

from __future__ import annotations

import datetime as dt
import gzip
import json
import random
from collections.abc import Iterator
from pathlib import Path

from pipeline.sample.wiki_vital import VitalArticle, split_sentences

SECTION_NAMES = ("Overview", "History", "Characteristics", "Significance", "Legacy")


def _link_words(sentence: str, titles: list[str], rng: random.Random) -> str:
    """Turn one capitalised word into a piped internal link, the commonest wikitext markup."""
    words = sentence.split(" ")
    candidates = [i for i, w in enumerate(words[1:], 1) if w[:1].isupper() and w.isalpha()]
    if not candidates or not titles:
        return sentence
    i = rng.choice(candidates)
    words[i] = f"[[{rng.choice(titles)}|{words[i]}]]"
    return " ".join(words)


def article_wikitext(art: VitalArticle, titles: list[str], rng: random.Random) -> tuple[str, list[str], list[list[str]]]:
    """Wikitext for one article plus its section headings and the plain paragraphs a parser should recover."""
    sents = split_sentences(art.extract)
    lead = sents[:2]
    rest = sents[2:]
    lead_text = lead[0]
    if lead_text.startswith(art.title):
        lead_text = f"'''{art.title}'''" + lead_text[len(art.title):]
    lead_sentences = [lead_text] + [_link_words(s, titles, rng) for s in lead[1:]]
    lead_markup = " ".join(lead_sentences) + f'<ref name="vital">{{{{cite web |title={art.title} |url=https://en.wikipedia.org/wiki/{art.title.replace(" ", "_")}}}}}</ref>'
    parts = [
        f"{{{{Short description|{art.description or art.title}}}}}",
        f"{{{{Infobox topic\n| name = {art.title}\n| topic = {art.topic}\n}}}}",
        lead_markup,
    ]
    headings: list[str] = []
    paragraphs: list[list[str]] = [lead]
    chunk = rng.choice((1, 2))
    chunks = [rest[i : i + chunk] for i in range(0, len(rest), chunk)]
    for n, block in enumerate(chunks):
        if n % 2 == 0:
            heading = SECTION_NAMES[(n // 2) % len(SECTION_NAMES)]
            headings.append(heading)
            parts.append(f"== {heading} ==")
            if n == 0:
                parts.append(f"[[File:{art.title.replace(' ', '_')}.jpg|thumb|upright|{art.title}]]")
        parts.append(" ".join(_link_words(s, titles, rng) for s in block) + "<ref>{{cite book |title=Sources}}</ref>")
        paragraphs.append(block)
    if rng.random() < 0.3:
        parts.append('{| class="wikitable"\n|-\n! Field !! Value\n|-\n| Topic || ' + art.topic + "\n|}")
    parts.append("== See also ==\n" + "\n".join(f"* [[{t}]]" for t in rng.sample(titles, min(3, len(titles)))))
    parts.append("== References ==\n{{Reflist}}")
    parts.append(f"[[Category:{art.topic}]]")
    headings += ["See also", "References"]
    return "\n\n".join(parts), headings, paragraphs


def cirrus_documents(articles: tuple[VitalArticle, ...], seed: int) -> Iterator[tuple[dict, dict, list[str]]]:
    """(action, document) pairs in page-id order; a few project-namespace pages are mixed in to be skipped."""
    rng = random.Random(seed)
    titles = [a.title for a in articles]
    stamp = dt.datetime(2020, 5, 11, 0, 0, 0)
    for page_id, art in enumerate(articles, start=1000):
        wikitext, headings, paragraphs = article_wikitext(art, titles, rng)
        plain_text = " ".join(" ".join(p) for p in paragraphs)
        doc = {
            "namespace": 0,
            "namespace_text": "",
            "title": art.title,
            "wiki": "enwiki",
            "page_id": page_id,
            "timestamp": (stamp + dt.timedelta(minutes=page_id)).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "category": [art.topic],
            "heading": headings,
            "opening_text": " ".join(paragraphs[0]),
            "text": plain_text,
            "source_text": wikitext,
            "description": art.description,
            "redirect": [],
        }
        yield {"index": {"_type": "_doc", "_id": str(page_id)}}, doc, [" ".join(p) for p in paragraphs]
        if page_id % 997 == 0:  # non-article namespace: a reader must skip it
            yield {"index": {"_type": "_doc", "_id": str(10_000_000 + page_id)}}, {
                "namespace": 4, "namespace_text": "Wikipedia", "title": f"Vital articles/{art.topic}",
                "wiki": "enwiki", "page_id": 10_000_000 + page_id, "text": "Project page.",
                "source_text": "Project page.", "heading": [], "opening_text": "Project page.",
            }, []


def write_cirrus_dump(articles: tuple[VitalArticle, ...], path: Path, seed: int) -> tuple[int, dict[str, list[str]]]:
    """Write the gzipped dump with a fixed gzip mtime, so the same params give the same bytes.

    Returns the document count and each article's plain paragraphs in order (paragraph ``i`` of title
    ``T`` is what the paragraph stage will call ``"T-i"``), for generating questions with real evidence ids.
    """
    n = 0
    paragraphs: dict[str, list[str]] = {}
    with path.open("wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as gz:
        for action, doc, paras in cirrus_documents(articles, seed):
            gz.write((json.dumps(action, ensure_ascii=False) + "\n").encode("utf-8"))
            gz.write((json.dumps(doc, ensure_ascii=False) + "\n").encode("utf-8"))
            if doc["namespace"] == 0:
                paragraphs[doc["title"]] = paras
            n += 1
    return n, paragraphs
