"""``evaluate_quail_mc@<variant>``: accuracy of the trained runs' picks, overall, per question type and per
domain, on the held-out dev texts and the challenge set (``report``, and its headline row). Reads the picks,
the questions and the train stage's report: nothing here loads a model, so an edit reruns this stage alone.

Over seeds (``pipeline.common.seed_runs``): each table is the mean over the runs, ``over_seeds`` holds each
figure's mean, SD and per-run values, and ``ci95`` covers both what varies (a two-level bootstrap over the
runs and the texts, ``pipeline.common.paired_seeds``). The headline row is the mean, with its SD and the number
of runs beside it. ``bias_0``: the same runs without the "not enough information" bias chosen on
selection-dev, so the bias's held-out gain is read, not assumed."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from pipeline.common.layout import PATHS
from pipeline.common.headline import spread_name
from pipeline.common.model_card import ModelCard
from pipeline.common.paired_seeds import paired_difference_over_seeds
from pipeline.common.seed_runs import mean_over_runs, runs_of, spread
from pipeline.common.scoring import write_scores
from pipeline.quail.report import accuracy_table
from pipeline.quail.sets import heldout_dev, quail_sets
from pipeline.quail.systems import mc_system
from pipeline.training.curves import training_summary

if TYPE_CHECKING:
    from pipeline.params import Params


def headlines(variant: str) -> list[tuple[str, str]]:
    """The headline rows this stage writes, ``(track, system)`` of ``metrics/<track>/<system>.json``: the write
    below and dvc.yaml's outs (``python -m pipeline.experiments.stage_deps``) both come from it."""
    return [("quail", mc_system(variant)), ("quail", spread_name(mc_system(variant)))]


def card(variant: str) -> ModelCard:
    """The model card of ``variant``'s model, named by its inputs (passage + options)."""
    return ModelCard(
        f"QuAIL multiple choice, {variant} input", "quail", mc_system(variant), "quail_mc", f"quail_mc.{variant}",
        PATHS.quail_mc[variant].report, f"4-option multiple choice on QuAIL ({variant.replace('_', ' + ')})",
        "The training share of QuAIL's dev texts (by text, per domain, seeded); the held-out dev texts and the "
        "challenge set are never seen in training", "AutoModelForMultipleChoice")


def _over_seeds(questions: list, runs: dict[int, dict[str, int]]) -> dict:
    """The mean table over runs, with an interval over runs and texts and each run's overall figure."""
    tables = [accuracy_table(questions, picks) for picks in runs.values()]
    keyed = [q for q in questions if q.answer is not None]
    correct = [[float(picks[q.qid] == q.answer) for q in keyed] for picks in runs.values()]
    interval = paired_difference_over_seeds(correct, [[0.0] * len(keyed)], clusters=[q.text_id for q in keyed],
                                            unit="text")
    return {**mean_over_runs(tables), "ci95": interval["ci95"], "ci95_resamples": "runs and texts",
            "over_seeds": spread([t["all"] for t in tables])}


def run(params: Params, variant: str) -> dict:
    training = json.loads(PATHS.quail_mc[variant].train_report.read_text(encoding="utf-8"))
    predicted = json.loads(PATHS.quail_mc[variant].predict_report.read_text(encoding="utf-8"))
    runs = runs_of(json.loads(PATHS.quail_mc[variant].predictions.read_text(encoding="utf-8")))
    sets, train_share = quail_sets(params.quail.train_share, params.quail.seed, params.quail.exclude_from_heldout)
    evaluated = {"dev_heldout": heldout_dev(sets, train_share), "challenge": sets["challenge"]}
    results, bias_0 = {}, {}
    for name, questions in evaluated.items():
        picked = [p for run in runs.values() for p in run[name].values()]
        n_options = len(questions[0].options)
        nei = [r["sets"][name].get("nei_picked") for r in predicted["runs"]]
        results[name] = {**_over_seeds(questions, {s: r[name] for s, r in runs.items()}),
                         "truncated_share": predicted["sets"][name]["truncated_share"],
                         # a model stuck on one option index shows here (answers are at random positions)
                         "predicted_option_shares": [round(picked.count(i) / len(picked), 4) for i in range(n_options)],
                         # answerability: how often it said "not enough information" (right or not: by_type)
                         "nei_picked_share": round(sum(nei) / len(nei), 4)}
        bias_0[name] = _over_seeds(questions, {s: r["bias_0"][name] for s, r in runs.items()})
        print(variant, name, results[name]["over_seeds"], "bias 0:", bias_0[name]["over_seeds"])
    report = {"variant": variant, "seeds": list(runs), "train_questions": training["train_questions"],
              "dev_questions": training["dev_questions"], "max_seq_len": predicted["max_seq_len"], **results,
              "bias_0": bias_0, "answerability": predicted.get("answerability"),
              "answerability_per_seed": [{"seed": r["seed"], **r["answerability"]} for r in predicted["runs"]],
              **training_summary(training),
              "training_per_seed": [{"seed": r["seed"], **training_summary(r)} for r in training["runs"]]}
    metric = training["select_metric"]
    dev = {k: spread([r[k][metric] for r in training["runs"]])["mean"] for k in ("dev_best", "dev_last")}
    figures = {"acc": results["dev_heldout"]["over_seeds"]["mean"],
               "acc_challenge": results["challenge"]["over_seeds"]["mean"]}
    sds = {"acc": results["dev_heldout"]["over_seeds"]["sd"], "acc_challenge": results["challenge"]["over_seeds"]["sd"]}
    return write_scores(PATHS.quail_mc[variant].report, report, *headlines(variant)[0], figures,
                        {**training, **{k: {metric: v} for k, v in dev.items()}}, sds)  # dev columns: mean over runs
