"""``check_params`` stage: params.yaml validated before any other stage can run (see
``pipeline.stages.check_params``); an invalid file exits 2 naming the key, before the flow starts."""

from __future__ import annotations

import sys

from prefect import flow, task

from flows._common import params_of, stage_main
from pipeline.stages import check_params as stage


@task(name="check_params.run", cache_policy=None)
def run_stage(params) -> dict:
    return stage.run(params)


@flow(name="check_params", log_prints=True)
def check_params_flow(params_file: str = "params.yaml") -> dict:
    return run_stage(params_of(params_file))


if __name__ == "__main__":
    sys.exit(stage_main(check_params_flow))
