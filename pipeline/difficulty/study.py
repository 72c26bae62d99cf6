"""Sugawara et al. (2022)'s method on one set of multiple-choice questions, computed once: model accuracy per
question (the mean correctness of the chosen systems), passage measures per text, the human-model gap and its
easy/hard subsets (when human accuracies exist), and the partial-input ablations (accuracy of each input
variant of the multiple-choice model, overall, by question type and on the easy and hard subsets).

Plain values in, a result dict out: the ``difficulty`` stage reads params and files, writes reports and plots."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from pipeline.difficulty.analysis import (PassageMeasures, analyse, easy_hard, gaps, passage_correlations,
                                          passage_measures, wh_word, with_holm)
from pipeline.quail.data import MCQuestion
from pipeline.quail.report import accuracy_table, per_question
from pipeline.quail.systems import MC_VARIANTS, mc_system

Predictions = dict[str, dict[str, int]]  # {system: {qid: option}}


@dataclass(frozen=True)
class Study:
    result: dict  # what reports/difficulty.json holds
    measures: dict[str, PassageMeasures]  # per question (its passage's)
    model_accuracy: dict[str, float]  # per question, %
    gap: dict[str, float]  # human - model per question; empty without human accuracies


def model_accuracy(questions: Sequence[MCQuestion], systems: Predictions, models: Sequence[str]) -> dict[str, float]:
    missing = [m for m in models if m not in systems]
    if missing:
        raise ValueError(f"difficulty.models {missing} have no predictions on the held-out dev texts")
    correct = {m: per_question(questions, systems[m]) for m in models}
    return {q.qid: 100.0 * statistics.fmean(correct[m][q.qid] for m in models) for q in questions}


def measures_by_question(questions: Sequence[MCQuestion]) -> dict[str, PassageMeasures]:
    """Each passage measured once, whatever the number of its questions."""
    by_text: dict[str, PassageMeasures] = {}
    for q in questions:
        if q.text_id not in by_text:
            by_text[q.text_id] = passage_measures(q.context)
    return {q.qid: by_text[q.text_id] for q in questions}


def question_measures(questions: Sequence[MCQuestion]) -> dict[str, dict]:
    """Per question: its length and its options' mean length in words, its wh-word and QuAIL question type."""
    return {q.qid: {"question_words": len(q.question.split()),
                    "option_words": round(statistics.fmean(len(o.split()) for o in q.options), 4),
                    "wh_word": wh_word(q.question), "question_type": q.question_type} for q in questions}


def ablations(sets: dict[str, Sequence[MCQuestion]], predictions: dict[str, Predictions],
              gap: dict[str, float] | None) -> dict:
    """Accuracy of each multiple-choice input variant per question set (overall and by type) and, with a
    gap, on the held-out dev questions of its easy and hard subsets."""
    out: dict = {}
    for name, qs in sets.items():
        preds = predictions[name]
        rows = {v: accuracy_table(qs, preds[mc_system(v)]) for v in MC_VARIANTS if mc_system(v) in preds and qs}
        if rows:
            out[name] = {v: {"all": t["all"], "by_type": t["by_type"]} for v, t in rows.items()}
    if gap is not None:
        questions, systems = sets["dev_heldout"], predictions["dev_heldout"]
        easy, hard = easy_hard(gap)
        for subset, ids in (("easy", set(easy)), ("hard", set(hard))):
            sub = [q for q in questions if q.qid in ids]
            out[f"dev_heldout_{subset}"] = {v: accuracy_table(sub, systems[mc_system(v)])["all"]
                                            for v in MC_VARIANTS if mc_system(v) in systems and sub}
    return out


def study(questions: Sequence[MCQuestion], challenge: Sequence[MCQuestion], predictions: dict[str, Predictions],
          models: Sequence[str], human: dict[str, float] | None, no_humans_note: str) -> Study:
    """``predictions``: ``{"dev_heldout": ..., "challenge": ...}``; ``questions`` the held-out dev ones."""
    model_acc = model_accuracy(questions, predictions["dev_heldout"], models)
    measures = measures_by_question(questions)
    result = analyse(measures, model_acc, human, {q.qid: q.text_id for q in questions}, question_measures(questions))
    result["models_averaged"] = list(models)
    # five measures were tested: each family corrected (Holm), and each system on its own, so a heuristic's
    # signature (IR: lexical overlap) is not hidden in a mean over systems
    passage_of = {q.qid: q.text_id for q in questions}
    family = {**result["vs_model_accuracy"], **result.get("question_measures", {})}
    corrected = with_holm(family)
    result["vs_model_accuracy"] = {m: corrected[m] for m in result["vs_model_accuracy"]}
    if "question_measures" in result:
        result["question_measures"] = {m: corrected[m] for m in result["question_measures"]}
    result["multiple_comparisons"] = (f"Holm over the {len(family)} measures (p_holm); the question-level "
                                      "measures' p treats questions as independent; per_system: Holm over its 3 "
                                      "passage measures")
    result["per_system"] = {}
    for m in models:
        own = model_accuracy(questions, predictions["dev_heldout"], [m])
        result["per_system"][m] = {
            "model_accuracy": round(statistics.fmean(own.values()), 2),
            "vs_model_accuracy": with_holm(passage_correlations(measures, own, passage_of))}
    result["measured"] = ("the human-model gap (Sugawara et al. 2022)" if human is not None else
                          f"model accuracy: the mean correctness of {', '.join(models)} per question, not the "
                          "paper's difficulty (the human side is absent)")
    if human is None:
        result["human_note"] = no_humans_note
    gap = gaps(human, model_acc) if human is not None else None
    result["ablations"] = ablations({"dev_heldout": questions, "challenge": challenge}, predictions, gap)
    return Study(result, measures, model_acc, gap or {})
