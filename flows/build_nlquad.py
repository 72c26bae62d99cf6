"""``build_nlquad`` stage: the NLQuAD dataset. The work is ``pipeline.stages.build_nlquad.run``; this is its Prefect flow."""

from __future__ import annotations

import sys

from prefect import flow

from flows._common import params_of, stage_main
from pipeline.stages import build_nlquad as stage


@flow(name="build_nlquad", log_prints=True)
def build_nlquad_flow(params_file: str = "params.yaml") -> dict:
    return stage.run(params_of(params_file))


if __name__ == "__main__":
    sys.exit(stage_main(build_nlquad_flow))
