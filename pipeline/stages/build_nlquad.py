"""``build_nlquad``: interrogative sub-headings -> questions, their sections -> answer spans (SQuAD format)."""

from __future__ import annotations

import json
from pathlib import Path

from pipeline.common.runtime import write_json
from pipeline.nlquad.articles import load_articles
from pipeline.nlquad.build import build_dataset, dataset_statistics
from pipeline.params import Params


def run(params: Params) -> dict:
    dataset, dropped = build_dataset(load_articles(Path("data/interim/articles.jsonl")))
    write_json("data/nlquad/nlquad.json", dataset, indent=None)
    extract_counts = json.loads(Path("reports/extract.json").read_text())
    stats = dataset_statistics(dataset) | {
        "dropped": dict(sorted(dropped.items())),
        "rejected": {k.removeprefix("rejected_"): v for k, v in extract_counts.items() if k.startswith("rejected_")},
    }
    write_json("reports/nlquad.json", stats)
    return stats
