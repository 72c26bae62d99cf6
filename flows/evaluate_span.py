"""``evaluate_span`` stage: ``pipeline.stages.span_qa.evaluate`` for the span_window model; this is its Prefect flow."""

from __future__ import annotations

import sys

from prefect import flow

from flows._common import params_of, stage_main
from pipeline.stages import span_qa


@flow(name="evaluate_span", log_prints=True)
def evaluate_span_flow(params_file: str = "params.yaml") -> dict:
    return span_qa.evaluate(params_of(params_file), "span_window")


if __name__ == "__main__":
    sys.exit(stage_main(evaluate_span_flow))
