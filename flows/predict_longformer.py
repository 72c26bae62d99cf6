"""``predict_longformer`` stage (longformer): see ``flows/_span.py`` and ``pipeline/span_qa``."""

from __future__ import annotations

import sys

from prefect import flow

from flows._common import params_of, stage_main
from flows._span import kind_of, run_predict


@flow(name="predict_longformer", log_prints=True)
def predict_longformer_flow(params_file: str = "params.yaml") -> dict:
    kind, p = kind_of(params_of(params_file), "longformer")
    return run_predict(kind, p)


if __name__ == "__main__":
    sys.exit(stage_main(predict_longformer_flow))
