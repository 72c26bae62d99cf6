"""``sample``: the offline sources (archived BBC pages, a CirrusSearch dump, generated StrategyQA questions)."""

from __future__ import annotations

from pipeline.common.layout import PATHS
from pipeline.common.runtime import write_json
from pipeline.params import Params
from pipeline.sample.build import build_sample, capture_year_rows, write_capture_plot


def run(params: Params) -> dict:
    p = params.sample
    stats = build_sample(p, PATHS.sample.dir)
    write_json(PATHS.sample.report, stats)
    write_capture_plot(capture_year_rows(PATHS.sample.dir), PATHS.sample.captures_plot)
    return stats
