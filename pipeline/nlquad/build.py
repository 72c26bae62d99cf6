"""From extracted articles to the NLQuAD data set (Soleimani et al. 2021).

- question: a sub-heading that ends in '?';
- answer: the body of that section, up to the next sub-heading;
- document: the intro plus every section body, with sub-headings and section breaks removed (paragraphs
  joined by single spaces everywhere), so the layout does not reveal where an answer starts or ends;
- questions whose section is a bullet list are dropped (their "answer" is not prose).

Output is SQuAD-1.1 shaped with ``answer_end`` added, and ``context[answer_start:answer_end] == text`` is
checked for every answer before anything is written.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from typing import Any, Iterable

from pipeline.nlquad.extract import Extraction
from pipeline.nlquad.squad_format import iter_qas, table2_statistics

PARA_SEP = " "


class OffsetError(AssertionError):
    """An answer span does not reproduce its text: a bug, never data to ship."""


_WORD = re.compile(r"[^\W\d_]{2,}")


def is_question(heading: str) -> bool:
    """A sub-heading that ends in '?' and says something: at least one word of two letters ("Why?"), so a
    heading that is only '?', '...?' or '2?' is no question."""
    text = heading.strip()
    return text.endswith("?") and bool(_WORD.search(text))


def article_record(ex: Extraction, doc_id: str) -> tuple[dict[str, Any], Counter]:
    """One ``data`` entry (title, date, url, one paragraph holding the document and its qas)."""
    dropped: Counter = Counter()
    pieces: list[str] = list(ex.intro)
    spans: list[tuple[str, int, int]] = []  # (question, start, end)
    offset = len(PARA_SEP.join(pieces)) + (len(PARA_SEP) if pieces else 0)
    for section in ex.sections:
        if not section.paragraphs:
            if is_question(section.heading):
                dropped["empty_answer"] += 1
            continue
        body = PARA_SEP.join(section.paragraphs)
        start = offset
        pieces.extend(section.paragraphs)
        offset = start + len(body) + len(PARA_SEP)
        if not is_question(section.heading):
            continue
        if section.bullet:
            dropped["bullet_answer"] += 1
            continue
        spans.append((section.heading.strip(), start, start + len(body)))
    context = PARA_SEP.join(pieces)
    qas = []
    for n, (question, start, end) in enumerate(spans):
        text = context[start:end]
        qas.append({
            "id": f"{doc_id}_{n}",
            "question": question,
            "answers": [{"text": text, "answer_start": start, "answer_end": end}],
        })
    record = {"title": ex.title, "date": ex.date, "url": ex.canonical_url or ex.url, "id": doc_id,
              "paragraphs": [{"context": context, "qas": qas}]}
    return record, dropped


def check_offsets(dataset: dict[str, Any]) -> int:
    """Raise :class:`OffsetError` unless every answer is exactly its span of the context."""
    n = 0
    for para, qa in iter_qas(dataset):
        for ans in qa["answers"]:
            if para["context"][ans["answer_start"]:ans["answer_end"]] != ans["text"]:
                raise OffsetError(f"{qa['id']}: context[{ans['answer_start']}:{ans['answer_end']}] != answer")
            n += 1
    return n


def doc_id_for(ex: Extraction) -> str:
    """A stable id from the canonical URL's last segment (BBC story ids are unique)."""
    url = (ex.canonical_url or ex.url or "").rstrip("/")
    tail = url.rsplit("/", 1)[-1]
    return tail or hashlib.sha1(url.encode()).hexdigest()[:12]


def build_dataset(articles: Iterable[Extraction]) -> tuple[dict[str, Any], Counter]:
    data, dropped = [], Counter()
    seen: set[str] = set()
    for ex in articles:
        doc_id = doc_id_for(ex)
        if doc_id in seen:
            doc_id = f"{doc_id}-{hashlib.sha1((ex.url or '').encode()).hexdigest()[:6]}"
        seen.add(doc_id)
        record, d = article_record(ex, doc_id)
        dropped += d
        if record["paragraphs"][0]["qas"]:
            data.append(record)
        else:
            dropped["article_without_questions"] += 1
    dataset = {"version": "nlquad-qa-pipeline-1", "data": data}
    check_offsets(dataset)
    return dataset, dropped


REPORT_COLUMNS = ("documents", "questions", "questions_per_document", "document_words_mean",
                  "document_words_median", "answer_words_mean", "answer_words_median")


def dataset_statistics(dataset: dict[str, Any]) -> dict[str, Any]:
    """The build report's columns of NLQuAD's Table 2 (two decimals)."""
    table = table2_statistics(dataset, 2)
    return {k: table[k] for k in REPORT_COLUMNS}
