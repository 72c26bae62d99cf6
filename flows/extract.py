"""``extract`` stage: articles from the crawled WARC. The work is ``pipeline.stages.extract.run``; this is its Prefect flow."""

from __future__ import annotations

import sys

from prefect import flow

from flows._common import params_of, stage_main
from pipeline.stages import extract as stage


@flow(name="extract", log_prints=True)
def extract_flow(params_file: str = "params.yaml") -> dict:
    return stage.run(params_of(params_file))


if __name__ == "__main__":
    sys.exit(stage_main(extract_flow))
