"""Why does the StrategyQA facts control score far higher on its selection-dev than on the eval set? Each run's
saved model is scored again, through the prediction stage's own path (``predict_choice_logits`` on
``encode_pairs`` of ``build_inputs``), on the selection-dev questions its training drew and on the 229 eval
questions, by AUC and accuracy; beside it, what would explain a gap without the transformer:

* a bag-of-words classifier of the same input (logistic regression on TF-IDF 1-2-grams of question + facts, fit
  on the run's training questions): a harder eval set is harder for it too;
* near duplicates: the share of selection-dev and of eval questions whose facts (and whose question) have a
  training question at TF-IDF cosine > 0.5, and how often that neighbour's answer is theirs;
* the sets' make-up: facts per question, characters of facts, share of "yes".

And on the eval set, the facts control against question-only by AUC (the runs' mean AUC of each, the difference
paired over questions, 2,000 seeded bootstrap resamples of the 229): accuracy reads one threshold, AUC the
ranking the training selected on.

Needs the built ``train_strategyqa_qa@ctl_facts`` (``models/strategyqa_ctl_facts``) and ``strategyqa_contexts``.

    .venv/bin/python -m benchmarks.control_gap      # about 2 min on two cores; writes results/control_gap.json

Question-only at the facts control's budget (the committed question-only trains the section's 20 steps): an
experiment of the pipeline's own stages, then read here from its commit and the DVC cache (about 6 min):

    dvc exp run --temp -n qo-400 -S strategyqa_qa.max_steps=400 evaluate_strategyqa_qa@question_only
    .venv/bin/python -m benchmarks.control_gap --question-only-exp qo-400
"""

from __future__ import annotations

import argparse
from pathlib import Path
from statistics import mean
from typing import Any

from benchmarks._common import write_result

SETTING = "ctl_facts"


def _auc_acc(y: list[int], score: list[float]) -> dict[str, float]:
    from sklearn.metrics import roc_auc_score

    acc = sum((s > 0) == bool(t) for s, t in zip(score, y, strict=True)) / len(y)
    return {"auc": round(100 * roc_auc_score(y, score), 2), "accuracy": round(100 * acc, 2)}


def _make_up(questions) -> dict[str, float]:
    return {"questions": len(questions), "facts_per_question": round(mean(len(q.facts) for q in questions), 2),
            "fact_chars": round(mean(len(" ".join(q.facts)) for q in questions), 1),
            "yes_percent": round(100 * mean(bool(q.answer) for q in questions), 1)}


def _near_duplicates(train, sets: dict[str, list]) -> dict[str, Any]:
    """Per set: share with a training neighbour at cosine > 0.5 (facts; question) and that neighbour's agreement."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    out: dict[str, Any] = {}
    for field, text in (("facts", lambda q: " ".join(q.facts)), ("question", lambda q: q.question)):
        vec = TfidfVectorizer().fit([text(q) for q in train])
        bank = vec.transform([text(q) for q in train])
        for name, qs in sets.items():
            sims = (vec.transform([text(q) for q in qs]) @ bank.T).toarray()
            near = [(row.max(), train[row.argmax()].answer == q.answer) for row, q in zip(sims, qs, strict=True)]
            close = [same for top, same in near if top > 0.5]
            out.setdefault(name, {})[field] = {
                "neighbour_over_0_5_percent": round(100 * len(close) / len(qs), 1),
                "neighbour_answer_agrees_percent": round(100 * mean(same for _, same in near), 1)}
    return out


def _bag_of_words(train, sets: dict[str, list]) -> dict[str, dict[str, float]]:
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression

    def text(q):
        return q.question + " " + " ".join(q.facts)

    vec = TfidfVectorizer(ngram_range=(1, 2), min_df=2, sublinear_tf=True)
    clf = LogisticRegression(C=1.0, max_iter=2000).fit(vec.fit_transform([text(q) for q in train]),
                                                       [int(bool(q.answer)) for q in train])
    return {name: _auc_acc([int(bool(q.answer)) for q in qs], list(clf.decision_function(
        vec.transform([text(q) for q in qs])))) for name, qs in sets.items()}


def experiment_files(name: str) -> dict[str, Any]:
    """The question-only predictions and training report of the experiment ``name`` (``dvc exp run -n``), read
    at its commit through DVC's API (the predictions from the cache its dvc.lock points to)."""
    import json
    import subprocess

    import dvc.api

    from pipeline.common.layout import PATHS

    refs = subprocess.run(["git", "for-each-ref", "--format=%(refname)", "refs/exps"], capture_output=True,
                          text=True, check=True).stdout.split()
    ref = next((r for r in refs if r.rsplit("/", 1)[-1] == name), None)
    if ref is None:
        raise SystemExit(f"no experiment named {name!r} (dvc exp show lists them)")
    sha = subprocess.run(["git", "rev-parse", ref], capture_output=True, text=True, check=True).stdout.strip()
    files = PATHS.strategyqa_qa["question_only"]
    report = json.loads(dvc.api.read(str(files.train_report), rev=sha))
    return {"experiment": name, "ref": ref, "commit": sha,
            "predictions": json.loads(dvc.api.read(str(files.predictions), rev=sha)),
            "selection_dev": [{"seed": r["seed"], "best_step": r["best_step"], "auc": round(r["dev_best"]["auc"], 2),
                               "accuracy": round(r["dev_best"]["accuracy"], 2)} for r in report["runs"]],
            "max_steps": report["max_steps"]}


def eval_auc_pair(question_only: dict | None = None, resamples: int = 2000, seed: int = 0) -> dict[str, Any]:
    """The facts control against question-only on eval by AUC and accuracy: each system's figure averaged over
    its runs, the difference's 95% interval resampling the questions (paired; accuracy's as compare draws it). ``question_only``: predictions
    of another question-only (an experiment's) in place of the committed one."""
    import json

    import numpy as np
    from sklearn.metrics import roc_auc_score

    from pipeline.common.layout import PATHS
    from pipeline.common.paired import paired_difference
    from pipeline.params import load_params
    from pipeline.stages.strategyqa_setting import load_setting

    systems = {name: json.loads(PATHS.strategyqa_qa[name].predictions.read_text(encoding="utf-8"))["runs"]
               for name in (SETTING, "question_only")}
    if question_only is not None:
        systems["question_only"] = question_only["runs"]
    ids = sorted(next(iter(systems[SETTING].values())))
    gold = {q.qid: int(bool(q.answer)) for q in load_setting(load_params().strategyqa_qa, SETTING).evaluation}
    y = np.array([gold[i] for i in ids])
    margins = {name: np.array([[run[i]["logits"][1] - run[i]["logits"][0] for i in ids] for run in runs.values()])
               for name, runs in systems.items()}

    def auc(name: str, ix) -> float:
        return float(np.mean([roc_auc_score(y[ix], m[ix]) for m in margins[name]]))

    # accuracy is a per-question mean: compare's own paired bootstrap (each question's correctness over runs);
    # AUC is not, so its questions are resampled here
    correct = {n: ((m > 0) == y).mean(axis=0) for n, m in margins.items()}
    pair = paired_difference(correct[SETTING], correct["question_only"])
    everything = np.arange(len(y))
    rng = np.random.default_rng(seed)
    diffs = []
    for _ in range(resamples):
        ix = rng.integers(0, len(y), len(y))
        if y[ix].min() != y[ix].max():
            diffs.append(auc(SETTING, ix) - auc("question_only", ix))
    return {"per_run_auc": {n: [round(100 * roc_auc_score(y, m), 2) for m in margins[n]] for n in margins},
            "auc": {n: round(100 * auc(n, everything), 2) for n in margins},
            "auc_difference": round(100 * (auc(SETTING, everything) - auc("question_only", everything)), 2),
            "auc_ci95": [round(100 * float(np.percentile(diffs, q)), 2) for q in (2.5, 97.5)],
            "auc_resamples": len(diffs), "questions": len(y),
            "accuracy": {SETTING: pair["system_mean"], "question_only": pair["baseline_mean"]},
            "accuracy_difference": pair["difference"], "accuracy_ci95": pair["ci95"],
            "accuracy_interval": "pipeline.common.paired.paired_difference (compare's), over questions"}


def run_seed(params, seed: int) -> dict[str, Any]:
    from transformers import AutoTokenizer

    from pipeline.common.layout import PATHS
    from pipeline.common.seed_runs import run_dir
    from pipeline.stages.strategyqa_setting import load_setting
    from pipeline.strategyqa.answering import build_inputs, labels
    from pipeline.training.choice_model import predict_choice_logits
    from pipeline.training.finetune import FINAL_DIR
    from pipeline.training.pair_encoding import encode_pairs

    p = params.strategyqa_qa
    data = load_setting(p, SETTING, seed)
    model = run_dir(PATHS.strategyqa_qa[SETTING].model_dir, p.seeds_for(SETTING), seed) / FINAL_DIR
    sets = {"selection_dev": data.dev, "eval": data.evaluation}
    model_figures = {}
    for name, qs in sets.items():
        first, context = build_inputs(qs, SETTING, None, data.paragraphs)
        feats = encode_pairs(AutoTokenizer.from_pretrained(str(model)), first, context, p.max_seq_len)
        logits = predict_choice_logits("classification", model, feats, 2, p.eval_batch_size, p.device,
                                       p.precision, p.cpu_threads)
        model_figures[name] = _auc_acc(labels(qs), [row[1] - row[0] for row in logits])
    return {"seed": seed, "model": model_figures, "bag_of_words_question_facts": _bag_of_words(data.train, sets),
            "near_duplicates": _near_duplicates(data.train, sets),
            "make_up": {"train": _make_up(data.train), **{n: _make_up(qs) for n, qs in sets.items()}}}


def main(argv: list[str] | None = None) -> int:
    from pipeline.params import load_params

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=None, help="results folder (default: benchmarks/results)")
    ap.add_argument("--question-only-exp", default=None,
                    help="also pair the facts control with the question-only of this experiment (dvc exp run -n)")
    args = ap.parse_args(argv)
    params = load_params()
    matched = None
    if args.question_only_exp:
        files = experiment_files(args.question_only_exp)
        matched = {k: v for k, v in files.items() if k != "predictions"}
        matched["eval_against_facts_control"] = eval_auc_pair(files["predictions"])
    runs = [run_seed(params, seed) for seed in params.strategyqa_qa.seeds_for(SETTING)]
    gap = {f"{who}_{m}": round(mean(r[key]["selection_dev"][m] - r[key]["eval"][m] for r in runs), 2)
           for who, key in (("model", "model"), ("bag_of_words", "bag_of_words_question_facts"))
           for m in ("auc", "accuracy")}
    write_result("control_gap", {"setting": SETTING, "runs": runs, "mean_selection_dev_minus_eval": gap,
                                 "eval_auc_against_question_only": eval_auc_pair(),
                                 "question_only_at_the_control_budget": matched,
                                 "reference": "the training report's selection-dev figures "
                                              "(reports/train_strategyqa_qa_ctl_facts.json, dev_best)"}, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
