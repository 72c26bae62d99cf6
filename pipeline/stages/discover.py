"""``discover``: CDX discovery of article captures -> ``data/raw/captures.jsonl``."""

from __future__ import annotations

import json
from pathlib import Path

from pipeline.common.runtime import atomic_output, write_json
from pipeline.nlquad.discover import discover
from pipeline.params import Params
from pipeline.wayback.archive import open_archive
from pipeline.wayback.cdx import CdxClient, retrying_session

OUT = Path("data/raw/captures.jsonl")


def run(params: Params) -> dict:
    with open_archive(params.archive, Path(".pywb/discover")) as endpoints:
        client = CdxClient(endpoints.cdx_url, retrying_session(contact=params.crawl.contact))
        rows, counts = discover(client, params.discover)
    with atomic_output(OUT) as fh:
        for row in rows:
            fh.write(json.dumps(row, sort_keys=True) + "\n")
    write_json("reports/discover.json", counts)
    return counts
