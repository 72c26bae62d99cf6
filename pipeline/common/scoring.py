"""The tail every trained model's evaluate stage ends with: its report, and its headline row beside the
baselines' (``metrics/<track>/<system>.json``) with the dev columns of the checkpoint training kept."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pipeline.common.files import write_json_set
from pipeline.common.headline import dev_figures, headline_row


def write_scores(report_path: Path, report: dict[str, Any], track: str, system: str, figures: dict[str, Any],
                 training: dict[str, Any]) -> dict[str, Any]:
    """Write ``report`` whole to ``report_path`` and the headline ``figures`` of ``system`` (plus ``dev`` and
    ``dev_last`` from the train stage's report ``training``); returns the report."""
    path, row = headline_row(track, system, {**figures, **dev_figures(training)})
    write_json_set([(report_path, report, 2), (path, row, 2)])  # both written whole, then both renamed
    return report
