"""The tail every trained model's evaluate stage ends with: its report, and its headline row beside the
baselines' (``metrics/<track>/<system>.json``) with the dev columns of the checkpoint training kept."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pipeline.common.files import write_json_set
from pipeline.common.headline import dev_figures, headline_row, spread_name


def write_scores(report_path: Path, report: dict[str, Any], track: str, system: str, figures: dict[str, Any],
                 training: dict[str, Any], spread: dict[str, Any] | None = None) -> dict[str, Any]:
    """Write ``report`` whole to ``report_path`` and the headline ``figures`` of ``system`` (plus ``dev`` and
    ``dev_last`` from the train stage's report ``training``); with ``spread`` (a system trained under several
    seeds) also its row of SDs over the runs, ``<system>.sd`` (``pipeline.common.headline.spread_name``: a row,
    not more columns, so ``dvc metrics show`` keeps its width and ``dvc metrics diff`` shows mean and SD). Returns
    the report."""
    path, row = headline_row(track, system, {**figures, **dev_figures(training)})
    files = [(report_path, report, 2), (path, row, 2)]
    if spread is not None:
        files.append((*headline_row(track, spread_name(system), spread), 2))
    write_json_set(files)  # all written whole, then all renamed
    return report
