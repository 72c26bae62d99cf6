"""``extract``: article text, headings and dates from the crawled WARC, duplicates resolved."""

from __future__ import annotations

import json
from pathlib import Path

from pipeline.common.runtime import atomic_output, write_json
from pipeline.nlquad.articles import extract_articles
from pipeline.params import Params


def run(params: Params) -> dict:
    rows, counts = extract_articles(Path("data/raw/pages.warc.gz"), params.extract)
    with atomic_output("data/interim/articles.jsonl") as fh:
        for row in rows:
            fh.write(json.dumps(row, sort_keys=True, ensure_ascii=False) + "\n")
    write_json("reports/extract.json", dict(sorted(counts.items())))
    return dict(counts)
