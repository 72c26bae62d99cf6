"""``sample`` stage: the offline sources. The work is ``pipeline.stages.sample.run``; this is its Prefect flow."""

from __future__ import annotations

import sys

from prefect import flow

from flows._common import params_of, stage_main
from pipeline.stages import sample as stage


@flow(name="sample", log_prints=True)
def sample_flow(params_file: str = "params.yaml") -> dict:
    return stage.run(params_of(params_file))


if __name__ == "__main__":
    sys.exit(stage_main(sample_flow))
