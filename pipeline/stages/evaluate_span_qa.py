"""``evaluate_span`` and ``evaluate_longformer``: EM, F1 and IoU of the span model's answers on the eval split
with 95% intervals, per question and by document length (``report``, plots, and its headline row). Nothing here
loads a model, so an edit reruns this stage alone.

Over seeds (``pipeline.common.seed_runs``): every figure is the mean over the runs, ``over_seeds`` holds each
headline figure's mean, SD and per-run values, and ``ci95`` resamples what varies: the runs and the articles
(NLQuAD drew articles; a two-level bootstrap, ``pipeline.common.paired_seeds``). The per-question plot is the
reference run's (the first seed's)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from pipeline.common.headline import span_figures, spread_name
from pipeline.common.paired_seeds import paired_difference_over_seeds
from pipeline.common.seed_runs import mean_over_runs, runs_of, spread
from pipeline.common.layout import PATHS, Layout
from pipeline.common.model_card import ModelCard
from pipeline.common.scoring import write_scores
from pipeline.nlquad.clusters import article_clusters
from pipeline.nlquad.metrics import evaluate as score
from pipeline.span_qa.plots import write_length_plot, write_per_question_plot

if TYPE_CHECKING:
    from pipeline.params import Params

MODEL_GROUPS = {"span_window": "train_span", "longformer": "train_longformer"}  # paths.yaml group of each model


def headlines(name: str) -> list[tuple[str, str]]:
    """The headline rows this stage writes, ``(track, system)`` of ``metrics/<track>/<system>.json``: the write
    below and dvc.yaml's outs (``python -m pipeline.experiments.stage_deps``) both come from it."""
    return [("nlquad", name), ("nlquad", spread_name(name))]


SPAN_DATA = ("NLQuAD as this pipeline builds it (`data/splits/train.json`): questions are a BBC article's "
             "interrogative sub-headings, answers the section under each; split 80/10/10 by article")
TASKS = {
    "span_window": ("Sliding-window span QA (NLQuAD)",
                    "extractive QA over windows of {max_seq_len} tokens, one starting every {doc_stride}, the best "
                    "answer across an article's windows"),
    "longformer": ("Longformer span QA (NLQuAD)",
                   "extractive QA over whole articles of up to {max_seq_len} tokens (global attention on the "
                   "question, window {attention_window})"),
}


def _paths(name: str) -> tuple[Path, Path, Layout]:
    """The train report, the predictions and the evaluate group of span model ``name``, named in full: a group
    name built from the kind (``predict_{short}``) would read every ``predict_*`` group, another family's too."""
    if name == "span_window":
        return PATHS.train_span.report, PATHS.predict_span.predictions, PATHS.evaluate_span
    return PATHS.train_longformer.report, PATHS.predict_longformer.predictions, PATHS.evaluate_longformer


def card(name: str) -> ModelCard:
    """The model card of span model ``name`` (``model_cards`` writes it beside the model)."""
    title, task = TASKS[name]
    return ModelCard(title, "nlquad", name, name, MODEL_GROUPS[name], _paths(name)[2].report, task, SPAN_DATA,
                     "AutoModelForQuestionAnswering")


def run(params: Params, name: str) -> dict:
    if name not in MODEL_GROUPS:
        raise ValueError(f"unknown span model kind {name!r}; one of {', '.join(MODEL_GROUPS)}")
    p = getattr(params, name)
    train_report, predictions, out = _paths(name)
    dataset = json.loads((PATHS.split.dir / f"{p.eval_split}.json").read_text(encoding="utf-8"))
    runs = runs_of(json.loads(predictions.read_text(encoding="utf-8")))
    scored = [score(preds, dataset) for preds in runs.values()]
    summary = mean_over_runs([s for s, _ in scored])
    article = article_clusters(dataset)
    ids = [r["id"] for r in scored[0][1]]
    intervals = {k: paired_difference_over_seeds([[r[k] for r in rows] for _, rows in scored], [[0.0] * len(ids)],
                                                 clusters=[article[i] for i in ids], unit="article")["ci95"]
                 for k in ("em", "f1", "iou")}
    over_seeds = {k: spread([s[k] for s, _ in scored]) for k in ("em", "f1", "iou", "rougeL")}
    training = json.loads(train_report.read_text(encoding="utf-8"))
    write_per_question_plot(out.f1_iou_plot, name, scored[0][1])
    write_length_plot(out.by_length_plot, {name: summary})
    figures = span_figures(summary)
    sds = {"EM": over_seeds["em"]["sd"], "F1": over_seeds["f1"]["sd"], "IoU": over_seeds["iou"]["sd"],
              "ROUGE-L": over_seeds["rougeL"]["sd"]}
    metric = training["select_metric"]
    dev = {k: {metric: spread([r[k][metric] for r in training.get("runs", [training])])["mean"]}
           for k in ("dev_best", "dev_last")}  # the dev columns: mean over runs
    write_scores(out.report, {"eval_split": p.eval_split, "seeds": list(runs), **summary, "ci95": intervals,
                              "ci95_resamples": "runs and articles", "over_seeds": over_seeds,
                              "training": training}, *headlines(name)[0], figures, {**training, **dev}, sds)
    return summary
