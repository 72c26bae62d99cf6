"""``split``: NLQuAD by article into train/dev/test."""

from __future__ import annotations

from typing import TYPE_CHECKING

import json

from pipeline.common.layout import PATHS
from pipeline.common.files import write_json_set
from pipeline.nlquad.hf_export import write_hf_export
from pipeline.nlquad.release import release_splits
from pipeline.nlquad.split import split_dataset, split_sizes

if TYPE_CHECKING:
    from pipeline.params import Params


def run(params: Params) -> dict:
    p = params.split
    dataset = json.loads(PATHS.build_nlquad.dataset.read_text(encoding="utf-8"))
    # a NLQuAD release keeps the authors' split (build_nlquad.source: release); the crawl's articles are split here
    released = release_splits(dataset)
    splits = released or split_dataset(dataset, p.ratios, p.seed, p.group_key)
    sizes = split_sizes(splits)
    if not any(doc["paragraphs"] for data in splits.values() for doc in data["data"]):
        raise ValueError(f"split: {PATHS.build_nlquad.dataset} holds no article with a question; nothing was "
                         "written, the previous splits are kept")
    # the split files and their sizes are one set: all written, then all renamed (a kill leaves no mix)
    write_json_set([*((PATHS.split.dir / f"{name}.json", data, None) for name, data in splits.items()),
                    (PATHS.split.report, sizes, 2)])
    if released:
        source = "the NLQuAD release files (Soleimani et al. 2021), with their own split"
    elif params.archive.endpoint == "local":
        source = "the offline sample archive (pywb over data/sample, articles written from Wikipedia extracts in real BBC templates)"
    else:
        source = f"the Wayback Machine at {params.archive.endpoint}"
    write_hf_export(splits, PATHS.split.hf_export, source, str(params.discover.start), str(params.discover.end),
                    p.ratios, p.seed)
    return sizes
