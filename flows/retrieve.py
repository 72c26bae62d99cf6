"""``retrieve`` stage: StrategyQA retrieval and Recall@k. The work is ``pipeline.stages.retrieve.run``; this is its Prefect flow."""

from __future__ import annotations

import sys

from prefect import flow

from flows._common import params_of, stage_main
from pipeline.stages import retrieve as stage


@flow(name="retrieve", log_prints=True)
def retrieve_flow(params_file: str = "params.yaml") -> dict:
    return stage.run(params_of(params_file))


if __name__ == "__main__":
    sys.exit(stage_main(retrieve_flow))
