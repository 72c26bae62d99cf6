"""``extract``: article text, headings and dates from the crawled WARC, duplicates resolved."""

from __future__ import annotations

import json
from pathlib import Path

from pipeline.common.runtime import atomic_output, write_json
from pipeline.common.safe_text import write_plot_csv
from pipeline.nlquad.articles import EraTally, extract_articles
from pipeline.params import Params


def run(params: Params) -> dict:
    eras = EraTally()
    rows, counts = extract_articles(Path("data/raw/pages.warc.gz"), params.extract, eras)
    with atomic_output("data/interim/articles.jsonl") as fh:
        for row in rows:
            fh.write(json.dumps(row, sort_keys=True, ensure_ascii=False) + "\n")
    columns = ("year", "template", "pages", "articles", "questions_per_article")
    write_plot_csv("plots/extract_by_capture_year.csv", columns, ([r[c] for c in columns] for r in eras.rows()))
    write_json("reports/extract.json", dict(sorted(counts.items())) | {"by_capture_year": eras.report()})
    return dict(counts)
