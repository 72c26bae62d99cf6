"""``quail_mc@<variant>`` stages: ``pipeline.stages.quail_mc.run`` for one variant; this is its Prefect flow."""

from __future__ import annotations

import sys

from prefect import flow

from flows._common import params_of, stage_main
from pipeline.quail.mc_model import VARIANTS
from pipeline.stages import quail_mc as stage


@flow(name="quail_mc", log_prints=True)
def quail_mc_flow(variant: str, params_file: str = "params.yaml") -> dict:
    return stage.run(params_of(params_file), variant)


if __name__ == "__main__":
    sys.exit(stage_main(quail_mc_flow, variants=VARIANTS))
