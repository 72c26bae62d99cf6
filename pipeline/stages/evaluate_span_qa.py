"""``evaluate_span`` and ``evaluate_longformer``: EM, F1 and IoU of the span model's answers on the eval split
with 95% intervals, per question and by document length (``report``, plots, and its headline row). Nothing here
loads a model, so an edit reruns this stage alone."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from pipeline.common.headline import span_figures
from pipeline.common.intervals import bootstrap_ci
from pipeline.common.layout import PATHS
from pipeline.common.scoring import write_scores
from pipeline.nlquad.metrics import evaluate as score
from pipeline.span_qa.plots import write_length_plot, write_per_question_plot

if TYPE_CHECKING:
    from pipeline.params import Params

KINDS = {"span_window": "span", "longformer": "longformer"}  # model kind: its stages' suffix


def headlines(name: str) -> list[tuple[str, str]]:
    """The headline rows this stage writes, ``(track, system)`` of ``metrics/<track>/<system>.json``: the write
    below and dvc.yaml's outs (``python -m pipeline.experiments.stage_deps``) both come from it."""
    return [("nlquad", name)]


def run(params: Params, name: str) -> dict:
    if name not in KINDS:
        raise ValueError(f"unknown span model kind {name!r}; one of {', '.join(KINDS)}")
    p = getattr(params, name)
    short = KINDS[name]
    dataset = json.loads((PATHS.split.dir / f"{p.eval_split}.json").read_text(encoding="utf-8"))
    preds = json.loads(PATHS[f"predict_{short}"].predictions.read_text(encoding="utf-8"))
    summary, rows = score(preds, dataset)
    training = json.loads(PATHS[f"train_{short}"].report.read_text(encoding="utf-8"))
    intervals = {k: bootstrap_ci([r[k] for r in rows]) for k in ("em", "f1", "iou")}
    out = PATHS[f"evaluate_{short}"]
    write_per_question_plot(out.f1_iou_plot, name, rows)
    write_length_plot(out.by_length_plot, {name: summary})
    write_scores(out.report, {"eval_split": p.eval_split, **summary, "ci95": intervals, "training": training},
                 *headlines(name)[0], span_figures(summary), training)
    return summary
