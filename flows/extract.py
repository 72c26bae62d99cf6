"""``extract`` stage: crawled WARC -> ``data/interim/articles.jsonl`` with rejection counts."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from prefect import flow

from flows._common import params_of, stage_main
from pipeline.nlquad.articles import extract_articles
from pipeline.runtime import atomic_output, write_json


@flow(name="extract", log_prints=True)
def extract_flow(params_file: str = "params.yaml") -> dict:
    p = params_of(params_file)
    rows, counts = extract_articles(Path("data/raw/pages.warc.gz"), p.extract)
    with atomic_output("data/interim/articles.jsonl") as fh:
        for row in rows:
            fh.write(json.dumps(row, sort_keys=True, ensure_ascii=False) + "\n")
    write_json("metrics/extract.json", dict(sorted(counts.items())))
    return dict(counts)


if __name__ == "__main__":
    sys.exit(stage_main(extract_flow))
