"""``sample`` stage: build the offline BBC WARC and CirrusSearch dump (see ``pipeline.sample``)."""

from __future__ import annotations

import sys

from prefect import flow, task

from flows._common import params_of, retry_if_transient, stage_main
from pipeline.runtime import write_json
from pipeline.sample import build_sample, capture_year_rows, write_capture_plot


@task(retries=2, retry_delay_seconds=2, retry_condition_fn=retry_if_transient)
def write_reports(stats: dict, out_dir: str) -> None:
    write_json("metrics/sample.json", stats)
    write_capture_plot(capture_year_rows(out_dir), "plots/sample_captures.csv")


@flow(name="sample", log_prints=True)
def sample_flow(params_file: str = "params.yaml") -> dict:
    params = params_of(params_file).sample
    stats = build_sample(params)
    write_reports(stats, params.out_dir)
    return stats


if __name__ == "__main__":
    sys.exit(stage_main(sample_flow))
