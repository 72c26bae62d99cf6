"""``nlquad_baselines``: NLQuAD's window baselines on the evaluation split -> predictions, metrics and a plot;
beside them the question-blind position prior fit on the training split (``pipeline.nlquad.position_prior``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import json

from pipeline.common.headline import span_figures, write_headline
from pipeline.common.intervals import bootstrap_ci
from pipeline.common.layout import PATHS
from pipeline.common.files import write_json
from pipeline.nlquad.baselines import run_baselines
from pipeline.nlquad.metrics import evaluate
from pipeline.nlquad import position_prior
from pipeline.span_qa.plots import write_length_plot

if TYPE_CHECKING:
    from pipeline.params import Params

METHODS = ("bm25l", "bm25l_oracle", "first_window", "last_window", "random_window", "position_prior")


def headlines() -> list[tuple[str, str]]:
    """The headline rows this stage writes, ``(track, system)`` of ``metrics/<track>/<system>.json``: the write
    below and dvc.yaml's outs (``python -m pipeline.experiments.stage_deps``) both come from it."""
    return [("nlquad", method) for method in METHODS]


def run(params: Params) -> dict:
    p = params.nlquad_baselines
    dataset = json.loads((PATHS.split.dir / f"{p.eval_split}.json").read_text(encoding="utf-8"))
    predictions = run_baselines(dataset, p.window_words, p.seed)
    train = json.loads((PATHS.split.dir / "train.json").read_text(encoding="utf-8"))
    prior = position_prior.fit(train)
    predictions["position_prior"] = position_prior.predict(dataset, prior)
    results = {}
    if set(predictions) != set(METHODS):
        raise RuntimeError(f"baselines {sorted(predictions)} differ from the declared {sorted(METHODS)}")
    for method, preds in predictions.items():
        write_json(PATHS.nlquad_baselines.predictions / f"{method}.json", preds, indent=None)
        results[method], rows = evaluate(preds, dataset)
        results[method]["ci95"] = {k: bootstrap_ci([r[k] for r in rows]) for k in ("em", "f1", "iou")}
    write_length_plot(PATHS.nlquad_baselines.by_length_plot, results)
    write_json(PATHS.nlquad_baselines.report, {"eval_split": p.eval_split, "position_prior_fit": prior, **results})
    for track, method in headlines():
        write_headline(track, method, span_figures(results[method]))
    return results
