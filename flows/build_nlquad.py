"""``build_nlquad`` stage: articles -> ``data/nlquad/nlquad.json`` (SQuAD-1.1 shape) and Table 2 statistics."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from prefect import flow

from flows._common import params_of, stage_main
from pipeline.nlquad.articles import load_articles
from pipeline.nlquad.build import build_dataset, dataset_statistics
from pipeline.runtime import write_json


@flow(name="build_nlquad", log_prints=True)
def build_nlquad_flow(params_file: str = "params.yaml") -> dict:
    params_of(params_file)  # validated like every stage, though this one reads no keys
    dataset, dropped = build_dataset(load_articles(Path("data/interim/articles.jsonl")))
    write_json("data/nlquad/nlquad.json", dataset, indent=None)
    extract_counts = json.loads(Path("metrics/extract.json").read_text())
    stats = dataset_statistics(dataset) | {
        "dropped": dict(sorted(dropped.items())),
        "rejected": {k.removeprefix("rejected_"): v for k, v in extract_counts.items() if k.startswith("rejected_")},
    }
    write_json("metrics/nlquad.json", stats)
    return stats


if __name__ == "__main__":
    sys.exit(stage_main(build_nlquad_flow))
