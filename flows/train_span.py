"""``train_span`` stage (span_window): see ``flows/_span.py`` and ``pipeline/span_qa``."""

from __future__ import annotations

import sys

from prefect import flow

from flows._common import params_of, stage_main
from flows._span import kind_of, run_train


@flow(name="train_span", log_prints=True)
def train_span_flow(params_file: str = "params.yaml") -> dict:
    kind, p = kind_of(params_of(params_file), "span_window")
    return run_train(kind, p)


if __name__ == "__main__":
    sys.exit(stage_main(train_span_flow))
