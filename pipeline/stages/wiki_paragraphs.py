"""``wiki_paragraphs``: a CirrusSearch dump (plus StrategyQA's evidence texts) -> one paragraph per line."""

from __future__ import annotations

from typing import TYPE_CHECKING

import json
from collections import Counter
from dataclasses import asdict
from pathlib import Path

from pipeline.common.layout import PATHS
from pipeline.common.manifest import source_path
from pipeline.common.files import atomic_output, write_json
from pipeline.common.logs import get_logger, progress
from pipeline.wiki.paragraphs import dump_paragraphs, with_evidence

if TYPE_CHECKING:
    from pipeline.params import Params



def run(params: Params) -> dict:
    p = params.wiki
    dump = Path(p.dump)
    if not dump.is_file():
        raise FileNotFoundError(f"wiki.dump: no such file {dump}")
    log = get_logger()
    evidence_path = source_path("strategyqa_paragraphs") if p.strategyqa_evidence else None
    counts: Counter = Counter()
    paragraphs = dump_paragraphs(dump, counts, log, min_chars=p.min_chars, workers=p.workers,
                                 max_document_bytes=p.max_document_bytes)
    if evidence_path:
        paragraphs = with_evidence(paragraphs, evidence_path, counts)
    with atomic_output(PATHS.wiki_paragraphs.paragraphs) as fh:
        for para in progress(paragraphs, "paragraphs", unit="para"):
            fh.write(json.dumps(asdict(para), ensure_ascii=False) + "\n")
    counts["corpus_paragraphs"] = counts["paragraphs"] - counts["dump_replaced_by_evidence"] + counts["evidence_added"]
    write_json(PATHS.wiki_paragraphs.report, dict(sorted(counts.items())))
    return dict(counts)
