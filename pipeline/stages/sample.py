"""``sample``: the offline sources (archived BBC pages, a CirrusSearch dump, generated StrategyQA questions)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pipeline.common.layout import PATHS
from pipeline.common.files import write_json
from pipeline.sample.build import build_sample, capture_year_rows, write_capture_plot

if TYPE_CHECKING:
    from pipeline.params import Params


def run(params: Params) -> dict:
    p = params.sample
    stats = build_sample(p, PATHS.sample.dir)
    write_json(PATHS.sample.report, stats)
    write_capture_plot(capture_year_rows(PATHS.sample.dir), PATHS.sample.captures_plot)
    return stats
