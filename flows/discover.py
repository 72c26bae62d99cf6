"""``discover`` stage: CDX discovery of article captures. The work is ``pipeline.stages.discover.run``; this is its Prefect flow."""

from __future__ import annotations

import sys

from prefect import flow, task

from flows._common import params_of, retry_if_transient, stage_main
from pipeline.stages import discover as stage


# A CDX outage or a 429 can pass: the query is retried (pywb restarted with it).
@task(name="discover.run", retries=3, retry_delay_seconds=[10, 60, 300], retry_condition_fn=retry_if_transient, cache_policy=None)
def run_stage(params) -> dict:
    return stage.run(params)


@flow(name="discover", log_prints=True)
def discover_flow(params_file: str = "params.yaml") -> dict:
    return run_stage(params_of(params_file))


if __name__ == "__main__":
    sys.exit(stage_main(discover_flow))
