"""What the benchmark manifest records about the QuAIL files: parsed with QuAIL's own loaders, so a file that
is present but malformed stops the ``benchmark_sources`` stage."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from pipeline.quail.data import load_quail
from pipeline.quail.report import load_reference, paper_rows


def describe_question_set(path: Path) -> dict:
    qs = load_quail(path)
    return {"questions": len(qs), "texts": len({q.text_id for q in qs}), "keyed": sum(q.answer is not None for q in qs),
            "by_type": dict(sorted(Counter(q.question_type for q in qs).items())),
            "by_domain": dict(sorted(Counter(q.domain for q in qs).items()))}


def describe_paper_tables(path: Path) -> dict:
    ref = load_reference(path)
    return {"systems": {s: sorted(paper_rows(ref, s)) for s in ("dev", "challenge")}}
