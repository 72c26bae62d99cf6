"""``split`` stage: the NLQuAD article-level split. The work is ``pipeline.stages.split.run``; this is its Prefect flow."""

from __future__ import annotations

import sys

from prefect import flow

from flows._common import params_of, stage_main
from pipeline.stages import split as stage


@flow(name="split", log_prints=True)
def split_flow(params_file: str = "params.yaml") -> dict:
    return stage.run(params_of(params_file))


if __name__ == "__main__":
    sys.exit(stage_main(split_flow))
