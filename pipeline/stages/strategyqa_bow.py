"""``strategyqa_bow``: the bag-of-words question-only classifier (``pipeline.strategyqa.bag_of_words``) on the
official split and under the cross-validation's folds.

Official split: fit on the training questions (strength chosen on their selection-dev share), scored on the 229
eval questions against the training majority. Cross-validation: the folds ``strategyqa_cv`` draws (its seed,
``folds`` of this section, so the GPU profile's five-fold run pairs question by question), each fold predicted by
a classifier fit on the others; scored against each fold's training majority. Paired intervals over questions,
the unit StrategyQA sampled. Writes ``predictions`` (``eval`` and ``cv``: every question's answer and
yes-probability) and ``report``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pipeline.common.files import write_json
from pipeline.common.layout import PATHS
from pipeline.common.manifest import source_path
from pipeline.common.paired import paired_difference
from pipeline.strategyqa import bag_of_words
from pipeline.strategyqa.answering import majority_label
from pipeline.strategyqa.data import load_questions
from pipeline.strategyqa.folds import assign_folds, fold_split, labelled_pool

if TYPE_CHECKING:
    from pipeline.params import Params


def _scored(answers: dict[str, dict], questions: list, majority: dict[str, bool]) -> dict:
    right = [float(answers[q.qid]["answer"] == q.answer) for q in questions]
    by_majority = [float(majority[q.qid] == q.answer) for q in questions]
    return {"questions": len(questions), "accuracy": round(100 * sum(right) / len(right), 2),
            "predicted_yes_share": round(sum(answers[q.qid]["answer"] for q in questions) / len(questions), 4),
            **bag_of_words.auc_and_log_loss(answers, questions),
            "versus_majority": paired_difference(right, by_majority)}


def run(params: Params) -> dict:
    p, qa = params.strategyqa_bow, params.strategyqa_qa
    train = load_questions(source_path("strategyqa_train"))
    evaluated = [q for q in load_questions(source_path("strategyqa_eval")) if q.answer is not None]
    fitted = bag_of_words.fit(train, p.c_grid, p.ngram_max, qa.dev_share, qa.seed)
    eval_answers = bag_of_words.predict(fitted, evaluated)
    majority = bool(majority_label([int(q.answer) for q in train]))
    report = {"features": f"binary word 1- to {p.ngram_max}-grams of the question", "c_grid": list(p.c_grid),
              "eval": {"c": fitted.c, "selection_dev_log_loss": fitted.dev_log_loss, "majority_answer":
                       "yes" if majority else "no",
                       **_scored(eval_answers, evaluated, {q.qid: majority for q in evaluated})}}
    cv_answers: dict[str, dict] = {}
    if p.folds:
        pool = labelled_pool(train, evaluated)
        assignment = assign_folds([q.qid for q in pool], p.folds, params.strategyqa_cv.seed)
        fold_majority, chosen = {}, []
        for fold in range(p.folds):
            split = fold_split(pool, assignment, fold, qa.dev_share, qa.seed)
            fitted_fold = bag_of_words.fit(split.train + split.dev, p.c_grid, p.ngram_max, qa.dev_share, qa.seed)
            chosen.append(fitted_fold.c)
            answers = bag_of_words.predict(fitted_fold, split.test)
            cv_answers |= {qid: {**a, "fold": fold} for qid, a in answers.items()}
            m = bool(majority_label([int(q.answer) for q in split.train + split.dev]))
            fold_majority |= {q.qid: m for q in split.test}
        report["cv"] = {"folds": p.folds, "fold_seed": params.strategyqa_cv.seed, "c_per_fold": chosen,
                        **_scored(cv_answers, pool, fold_majority)}
    write_json(PATHS.strategyqa_bow.predictions, {"eval": eval_answers, "cv": cv_answers}, indent=None)
    write_json(PATHS.strategyqa_bow.report, report)
    return {"eval_accuracy": report["eval"]["accuracy"], "cv_accuracy": report.get("cv", {}).get("accuracy")}
