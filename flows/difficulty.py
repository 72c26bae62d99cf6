"""``difficulty`` stage: the question-difficulty analysis. The work is ``pipeline.stages.difficulty.run``; this is its Prefect flow."""

from __future__ import annotations

import sys

from prefect import flow

from flows._common import params_of, stage_main
from pipeline.stages import difficulty as stage


@flow(name="difficulty", log_prints=True)
def difficulty_flow(params_file: str = "params.yaml") -> dict:
    return stage.run(params_of(params_file))


if __name__ == "__main__":
    sys.exit(stage_main(difficulty_flow))
