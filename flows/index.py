"""``index`` stage: the paragraphs into the search backend. The work is ``pipeline.stages.index.run``; this is its Prefect flow."""

from __future__ import annotations

import sys

from prefect import flow, task

from flows._common import params_of, retry_if_transient, stage_main
from pipeline.stages import index as stage


# A dropped connection or a 429 mid-bulk can succeed on retry; the alias swap makes a retry safe.
@task(name="index.run", retries=2, retry_delay_seconds=[30, 120], retry_condition_fn=retry_if_transient, cache_policy=None)
def run_stage(params) -> dict:
    return stage.run(params)


@flow(name="index", log_prints=True)
def index_flow(params_file: str = "params.yaml") -> dict:
    return run_stage(params_of(params_file))


if __name__ == "__main__":
    sys.exit(stage_main(index_flow))
