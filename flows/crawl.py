"""``crawl`` stage: the Scrapy crawl of the discovered captures (Scrapy retries each request; a rerun resumes). The work is ``pipeline.stages.crawl.run``; this is its Prefect flow."""

from __future__ import annotations

import sys

from prefect import flow

from flows._common import params_of, stage_main
from pipeline.stages import crawl as stage


@flow(name="crawl", log_prints=True)
def crawl_flow(params_file: str = "params.yaml") -> dict:
    return stage.run(params_of(params_file))


if __name__ == "__main__":
    sys.exit(stage_main(crawl_flow))
