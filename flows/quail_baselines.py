"""``quail_baselines`` stage: the QuAIL baselines. The work is ``pipeline.stages.quail_baselines.run``; this is its Prefect flow."""

from __future__ import annotations

import sys

from prefect import flow

from flows._common import params_of, stage_main
from pipeline.stages import quail_baselines as stage


@flow(name="quail_baselines", log_prints=True)
def quail_baselines_flow(params_file: str = "params.yaml") -> dict:
    return stage.run(params_of(params_file))


if __name__ == "__main__":
    sys.exit(stage_main(quail_baselines_flow))
