"""``evaluate_quail_mc@<variant>``: accuracy of the trained model's picks, overall, per question type and per
domain, on the held-out dev texts and the challenge set (``report``, and its headline row). Reads the picks,
the questions and the train stage's report: nothing here loads a model, so an edit reruns this stage alone."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from pipeline.common.layout import PATHS
from pipeline.common.model_card import ModelCard
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
    return [("quail", mc_system(variant))]


def card(variant: str) -> ModelCard:
    """The model card of ``variant``'s model, named by its inputs (passage + options)."""
    return ModelCard(
        f"QuAIL multiple choice, {variant} input", "quail", mc_system(variant), "quail_mc", f"quail_mc.{variant}",
        PATHS.quail_mc[variant].report, f"4-option multiple choice on QuAIL ({variant.replace('_', ' + ')})",
        "The training share of QuAIL's dev texts (by text, per domain, seeded); the held-out dev texts and the "
        "challenge set are never seen in training", "AutoModelForMultipleChoice")


def run(params: Params, variant: str) -> dict:
    training = json.loads(PATHS.quail_mc[variant].train_report.read_text(encoding="utf-8"))
    predicted = json.loads(PATHS.quail_mc[variant].predict_report.read_text(encoding="utf-8"))
    predictions = json.loads(PATHS.quail_mc[variant].predictions.read_text(encoding="utf-8"))
    sets, train_share = quail_sets(params.quail.train_share, params.quail.seed)
    evaluated = {"dev_heldout": heldout_dev(sets, train_share), "challenge": sets["challenge"]}
    results = {}
    for name, questions in evaluated.items():
        picks = predictions[name]
        picked = list(picks.values())
        n_options = len(questions[0].options)
        results[name] = {**accuracy_table(questions, picks),
                         "truncated_share": predicted["sets"][name]["truncated_share"],
                         # a model stuck on one option index shows here (answers are at random positions)
                         "predicted_option_shares": [round(picked.count(i) / len(picked), 4) for i in range(n_options)],
                         # answerability: how often it said "not enough information" (right or not: by_type)
                         "nei_picked_share": predicted["sets"][name].get("nei_picked")}
        print(variant, name, results[name]["all"])
    report = {"variant": variant, "train_questions": training["train_questions"],
              "dev_questions": training["dev_questions"], "max_seq_len": predicted["max_seq_len"], **results,
              "answerability": predicted.get("answerability"),
              **training_summary(training)}
    return write_scores(PATHS.quail_mc[variant].report, report, *headlines(variant)[0],
                        {"acc": results["dev_heldout"]["all"], "acc_challenge": results["challenge"]["all"]},
                        training)
