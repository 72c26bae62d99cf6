"""``evaluate_strategyqa_qa@<setting>``: accuracy of the trained runs on the eval questions with its 95%
interval, beside the majority baseline (the more frequent training answer) on the same questions (``report``,
and its headline rows). Nothing here loads a model, so an edit reruns this stage alone.

Over seeds (``pipeline.common.seed_runs``; the paper reports each accuracy as the mean and SD of 7 runs): the
accuracy is the mean over the runs, ``over_seeds`` holds its SD and per-run values, and with several runs the
interval covers both what varies (a two-level bootstrap over the runs and the questions,
``pipeline.common.paired_seeds``); with one run it resamples the questions."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from pipeline.common.headline import spread_name
from pipeline.common.intervals import bootstrap_ci
from pipeline.common.layout import PATHS
from pipeline.common.model_card import ModelCard
from pipeline.common.paired_seeds import paired_difference_over_seeds
from pipeline.common.scoring import write_scores
from pipeline.common.seed_runs import runs_of, spread
from pipeline.strategyqa.answering import PAPER_NAMES, accuracy, labels, majority_label
from pipeline.stages.strategyqa_setting import load_setting
from pipeline.training.curves import training_summary

if TYPE_CHECKING:
    from pipeline.params import Params


def headlines(setting: str) -> list[tuple[str, str]]:
    """The headline rows this stage writes, ``(track, system)`` of ``metrics/<track>/<system>.json``: the write
    below and dvc.yaml's outs (``python -m pipeline.experiments.stage_deps``) both come from it."""
    return [("strategyqa", f"qa_{setting}"), ("strategyqa", spread_name(f"qa_{setting}"))]


def card(setting: str) -> ModelCard:
    """The model card of ``setting``'s classifier, under the paper's name of the setting (IR-ORA-D)."""
    name = PAPER_NAMES[setting]
    return ModelCard(
        f"StrategyQA yes/no, {name}", "strategyqa", f"qa_{setting}", "strategyqa_qa", f"strategyqa_qa.{setting}",
        PATHS.strategyqa_qa[setting].report,
        f"yes/no classification of a StrategyQA question (setting {name} of Geva et al. 2021)",
        "StrategyQA train questions (official file, read in place); dev carved out for checkpoint selection; "
        "contexts from `data/strategyqa_qa/contexts.json`", "AutoModelForSequenceClassification")


def run(params: Params, setting: str) -> dict:
    p = params.strategyqa_qa
    training = json.loads(PATHS.strategyqa_qa[setting].train_report.read_text(encoding="utf-8"))
    predicted = json.loads(PATHS.strategyqa_qa[setting].predict_report.read_text(encoding="utf-8"))
    runs = runs_of(json.loads(PATHS.strategyqa_qa[setting].predictions.read_text(encoding="utf-8")))
    data = load_setting(p, setting)
    train, evaluation = data.train, data.evaluation
    for seed, answers in runs.items():
        missing = [q.qid for q in evaluation if q.qid not in answers]
        if missing:
            raise ValueError(f"{PATHS.strategyqa_qa[setting].predictions}: {len(missing)} eval question(s) have no "
                             f"prediction in the run of seed {seed}, e.g. {missing[:3]}")
    gold = labels(evaluation)
    picked = [[int(answers[q.qid]["answer"]) for q in evaluation] for answers in runs.values()]
    correct = [[float(a == g) for a, g in zip(pred, gold, strict=True)] for pred in picked]
    over_seeds = spread([accuracy(pred, gold) for pred in picked])
    if len(runs) == 1:
        interval, resampled = bootstrap_ci(correct[0]), "questions"
    else:
        interval, resampled = paired_difference_over_seeds(correct, [[0.0] * len(gold)])["ci95"], "runs and questions"
    majority = majority_label(labels(train))
    every = [a for pred in picked for a in pred]
    report = {
        "setting": setting, "paper_setting": PAPER_NAMES[setting], "seeds": list(runs),
        "train_questions": training["train_questions"], "dev_questions": training["dev_questions"],
        "eval_questions": len(evaluation),
        "accuracy": over_seeds["mean"], "accuracy_ci95": interval, "accuracy_ci95_resamples": resampled,
        "over_seeds": over_seeds,
        "majority_baseline": accuracy([majority] * len(gold), gold),
        "majority_ci95": bootstrap_ci([float(majority == g) for g in gold]),
        "majority_answer": "yes" if majority else "no",
        "predicted_yes_share": round(sum(every) / len(every), 4) if every else None,
        "eval_truncated_share": predicted["eval_truncated_share"],
        "eval_empty_context": predicted["eval_empty_context"],
        "max_seq_len": predicted["max_seq_len"],
        **training_summary(training), "train_examples": training["train_examples"],
        "training_per_seed": [{"seed": r["seed"], **training_summary(r)} for r in training.get("runs", [training])],
    }
    metric = training["select_metric"]
    dev = {k: spread([r[k][metric] for r in training.get("runs", [training])])["mean"] for k in ("dev_best", "dev_last")}
    return write_scores(PATHS.strategyqa_qa[setting].report, report, *headlines(setting)[0],
                        {"acc": report["accuracy"], "majority": report["majority_baseline"]},
                        {**training, **{k: {metric: v} for k, v in dev.items()}},
                        {"acc": over_seeds["sd"]})  # dev columns: the mean over runs
