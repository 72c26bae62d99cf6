"""``strategyqa_contexts`` stage: StrategyQA contexts per setting. The work is ``pipeline.stages.strategyqa_contexts.run``; this is its Prefect flow."""

from __future__ import annotations

import sys

from prefect import flow

from flows._common import params_of, stage_main
from pipeline.stages import strategyqa_contexts as stage


@flow(name="strategyqa_contexts", log_prints=True)
def strategyqa_contexts_flow(params_file: str = "params.yaml") -> dict:
    return stage.run(params_of(params_file))


if __name__ == "__main__":
    sys.exit(stage_main(strategyqa_contexts_flow))
