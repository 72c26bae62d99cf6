"""``extract``: article text, headings and dates from the crawled WARC, duplicates resolved."""

from __future__ import annotations

import json
from pathlib import Path

from pipeline.common.runtime import atomic_output, write_json
from pipeline.nlquad.articles import EraTally, extract_articles
from pipeline.params import Params


def run(params: Params) -> dict:
    eras = EraTally()
    rows, counts = extract_articles(Path("data/raw/pages.warc.gz"), params.extract, eras)
    with atomic_output("data/interim/articles.jsonl") as fh:
        for row in rows:
            fh.write(json.dumps(row, sort_keys=True, ensure_ascii=False) + "\n")
    with atomic_output("plots/extract_by_capture_year.csv") as fh:
        csv_rows = eras.rows()
        fh.write("year,template,pages,articles,questions_per_article\n")
        fh.writelines(f"{r['year']},{r['template']},{r['pages']},{r['articles']},{r['questions_per_article']}\n"
                      for r in csv_rows)
    write_json("reports/extract.json", dict(sorted(counts.items())) | {"by_capture_year": eras.report()})
    return dict(counts)
