"""``strategyqa_qa@<setting>`` stages: ``pipeline.stages.strategyqa_qa.run`` for one setting; this is its Prefect flow."""

from __future__ import annotations

import sys

from prefect import flow

from flows._common import params_of, stage_main
from pipeline.stages import strategyqa_qa as stage
from pipeline.strategyqa.answering import SETTINGS


@flow(name="strategyqa_qa", log_prints=True)
def strategyqa_qa_flow(setting: str, params_file: str = "params.yaml") -> dict:
    return stage.run(params_of(params_file), setting)


if __name__ == "__main__":
    sys.exit(stage_main(strategyqa_qa_flow, variants=SETTINGS))
