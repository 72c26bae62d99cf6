"""``predict_longformer`` stage: ``pipeline.stages.span_qa.predict`` for the longformer model; this is its Prefect flow."""

from __future__ import annotations

import sys

from prefect import flow

from flows._common import params_of, stage_main
from pipeline.stages import span_qa


@flow(name="predict_longformer", log_prints=True)
def predict_longformer_flow(params_file: str = "params.yaml") -> dict:
    return span_qa.predict(params_of(params_file), "longformer")


if __name__ == "__main__":
    sys.exit(stage_main(predict_longformer_flow))
