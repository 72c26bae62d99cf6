"""``compare`` stage: trained systems against their baselines, paired on the same questions. The work is ``pipeline.stages.compare.run``; this is its Prefect flow."""

from __future__ import annotations

import sys

from prefect import flow

from flows._common import params_of, stage_main
from pipeline.stages import compare as stage


@flow(name="compare", log_prints=True)
def compare_flow(params_file: str = "params.yaml") -> dict:
    return stage.run(params_of(params_file))


if __name__ == "__main__":
    sys.exit(stage_main(compare_flow))
