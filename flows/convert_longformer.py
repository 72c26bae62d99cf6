"""``convert_longformer`` stage: the Longformer start checkpoint. The work is ``pipeline.stages.convert_longformer.run``; this is its Prefect flow."""

from __future__ import annotations

import sys

from prefect import flow

from flows._common import params_of, stage_main
from pipeline.stages import convert_longformer as stage


@flow(name="convert_longformer", log_prints=True)
def convert_longformer_flow(params_file: str = "params.yaml") -> dict:
    return stage.run(params_of(params_file))


if __name__ == "__main__":
    sys.exit(stage_main(convert_longformer_flow))
