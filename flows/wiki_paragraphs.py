"""``wiki_paragraphs`` stage: CirrusSearch dump (+ StrategyQA's evidence paragraphs) -> ``data/wiki/paragraphs.jsonl``."""

from __future__ import annotations

import json
import sys
from collections import Counter
from dataclasses import asdict
from pathlib import Path

from prefect import flow

from flows._common import params_of, stage_main
from pipeline.benchmark_sources import read_manifest, skipped
from pipeline.runtime import atomic_output, get_logger, progress, write_json
from pipeline.wiki.paragraphs import dump_paragraphs, with_evidence


@flow(name="wiki_paragraphs", log_prints=True)
def wiki_paragraphs_flow(params_file: str = "params.yaml") -> dict:
    p = params_of(params_file).wiki
    dump = Path(p.dump)
    if not dump.is_file():
        raise FileNotFoundError(f"wiki.dump: no such file {dump}")
    log = get_logger()
    evidence_path = None
    if p.strategyqa_evidence:
        manifest = read_manifest()
        reason = skipped(manifest, "strategyqa_paragraphs")
        if reason:
            log.warning("StrategyQA evidence paragraphs not added: %s", reason)
        else:
            evidence_path = manifest["strategyqa_paragraphs"]["path"]
    counts: Counter = Counter()
    paragraphs = dump_paragraphs(dump, counts, log, p.min_chars)
    if evidence_path:
        paragraphs = with_evidence(paragraphs, evidence_path, counts)
    with atomic_output("data/wiki/paragraphs.jsonl") as fh:
        for para in progress(paragraphs, "paragraphs", unit="para"):
            fh.write(json.dumps(asdict(para), ensure_ascii=False) + "\n")
    counts["corpus_paragraphs"] = counts["paragraphs"] - counts["dump_replaced_by_evidence"] + counts["evidence_added"]
    write_json("metrics/wiki_paragraphs.json", dict(sorted(counts.items())))
    return dict(counts)


if __name__ == "__main__":
    sys.exit(stage_main(wiki_paragraphs_flow))
