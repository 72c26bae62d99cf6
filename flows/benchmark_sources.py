"""``benchmark_sources`` stage: the published benchmark files' manifest. The work is ``pipeline.stages.benchmark_sources.run``; this is its Prefect flow."""

from __future__ import annotations

import sys

from prefect import flow

from flows._common import params_of, stage_main
from pipeline.stages import benchmark_sources as stage


@flow(name="benchmark_sources", log_prints=True)
def benchmark_sources_flow(params_file: str = "params.yaml") -> dict:
    return stage.run(params_of(params_file))


if __name__ == "__main__":
    sys.exit(stage_main(benchmark_sources_flow))
