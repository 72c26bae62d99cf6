"""``split`` stage: ``data/nlquad/nlquad.json`` -> ``data/splits/{train,dev,test}.json`` by article."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from prefect import flow

from flows._common import params_of, stage_main
from pipeline.runtime import write_json_set
from pipeline.span_qa.split import split_dataset, split_sizes


@flow(name="split", log_prints=True)
def split_flow(params_file: str = "params.yaml") -> dict:
    p = params_of(params_file).split
    dataset = json.loads(Path("data/nlquad/nlquad.json").read_text(encoding="utf-8"))
    splits = split_dataset(dataset, p.ratios, p.seed, p.group_key)
    sizes = split_sizes(splits)
    # the split files and their sizes are one set: all written, then all renamed (a kill leaves no mix)
    write_json_set([*((f"data/splits/{name}.json", data, None) for name, data in splits.items()),
                    ("metrics/split.json", sizes, 2)])
    return sizes


if __name__ == "__main__":
    sys.exit(stage_main(split_flow))
