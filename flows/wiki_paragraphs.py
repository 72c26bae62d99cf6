"""``wiki_paragraphs`` stage: CirrusSearch dump -> ``data/wiki/paragraphs.jsonl`` (streaming)."""

from __future__ import annotations

import json
import sys
from collections import Counter
from dataclasses import asdict
from pathlib import Path

from prefect import flow

from flows._common import params_of, stage_main
from pipeline.runtime import atomic_output, get_logger, progress, write_json
from pipeline.wiki.paragraphs import dump_paragraphs


@flow(name="wiki_paragraphs", log_prints=True)
def wiki_paragraphs_flow(params_file: str = "params.yaml") -> dict:
    p = params_of(params_file).wiki
    dump = Path(p.dump)
    if not dump.is_file():
        raise FileNotFoundError(f"wiki.dump: no such file {dump}")
    counts: Counter = Counter()
    with atomic_output("data/wiki/paragraphs.jsonl") as fh:
        for para in progress(dump_paragraphs(dump, counts, get_logger(), p.min_chars), "paragraphs", unit="para"):
            fh.write(json.dumps(asdict(para), ensure_ascii=False) + "\n")
    write_json("metrics/wiki_paragraphs.json", dict(sorted(counts.items())))
    return dict(counts)


if __name__ == "__main__":
    sys.exit(stage_main(wiki_paragraphs_flow))
