"""``extract``: article text, headings and dates from the crawled WARC, duplicates resolved."""

from __future__ import annotations

from typing import TYPE_CHECKING

import json

from pipeline.common.layout import PATHS
from pipeline.common.files import atomic_output, write_json
from pipeline.common.safe_text import write_plot_csv
from pipeline.nlquad.articles import EraTally, extract_articles

if TYPE_CHECKING:
    from pipeline.params import Params


def run(params: Params) -> dict:
    eras = EraTally()
    rows, counts = extract_articles(PATHS.crawl.warc, params.extract, eras)
    with atomic_output(PATHS.extract.articles) as fh:
        for row in rows:
            fh.write(json.dumps(row, sort_keys=True, ensure_ascii=False) + "\n")
    columns = ("year", "template", "pages", "articles", "questions_per_article")
    write_plot_csv(PATHS.extract.by_year_plot, columns, ([r[c] for c in columns] for r in eras.rows()))
    write_json(PATHS.extract.report, dict(sorted(counts.items())) | {"by_capture_year": eras.report()})
    return dict(counts)
