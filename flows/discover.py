"""``discover`` stage: CDX queries -> ``data/raw/captures.jsonl`` (see ``pipeline.nlquad.discover``)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from prefect import flow, task

from flows._common import params_of, retry_if_transient, stage_main
from pipeline.nlquad.discover import discover
from pipeline.runtime import atomic_output, write_json
from pipeline.wayback.archive import open_archive
from pipeline.wayback.cdx import CdxClient

OUT = Path("data/raw/captures.jsonl")


@task(retries=3, retry_delay_seconds=[10, 60, 300], retry_condition_fn=retry_if_transient)
def query_cdx(cdx_url: str, params) -> tuple[list[dict], dict]:
    return discover(CdxClient(cdx_url), params)


@flow(name="discover", log_prints=True)
def discover_flow(params_file: str = "params.yaml") -> dict:
    p = params_of(params_file)
    with open_archive(p.archive, Path(".pywb/discover")) as endpoints:
        rows, counts = query_cdx(endpoints.cdx_url, p.discover)
    with atomic_output(OUT) as fh:
        for row in rows:
            fh.write(json.dumps(row, sort_keys=True) + "\n")
    write_json("metrics/discover.json", counts)
    return counts


if __name__ == "__main__":
    sys.exit(stage_main(discover_flow))
