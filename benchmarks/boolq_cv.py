"""Can BoolQ's dev split teach the auxiliary model? Five-fold cross-validation over its 3,270 questions, by article.

The auxiliary BoolQ model of ``train_boolq_aux`` is scored on one held-out draw of articles (685 questions), and
every checkpoint chosen so far answers "yes" to all of them. Whether that means the 3,270 questions of BoolQ's dev
split cannot teach this model, or that one draw and one selection could not show it, is what this study measures:
the articles (titles: questions on one article share its passages) are dealt into ``--folds`` folds; each fold is
answered by a model trained on the others, its checkpoint chosen by AUC on ``boolq_aux.dev_share`` of *their*
articles, so every question is answered once by a model that never saw its article and no question helps choose
the model that answers it. Per arm (``boolq_aux.class_balance``: ``none``, or ``oversample``, the rarer answer's
examples repeated so the label prior lowers no loss; ``pipeline/training/class_balance.py``), over every question:

- accuracy (the paper's measure) beside each fold's training majority, with a paired interval resampling articles;
- AUC (%, 50 for any constant answer) and log-loss (nats; the training prior's log-loss beside it, and each
  arm's difference to it on the same resampled articles), with intervals resampling articles;
- the share of "yes" answered, and the arms' paired differences.

Each fold trains with the stage's own classifier and loop (``pipeline.training.choice_model``) under the
``boolq_aux`` params of the committed params.yaml, some training settings replaced by ``--set``. A finished fold
is written to ``--out`` at once and skipped when the study is started again; a killed fold resumes from its
checkpoints under ``--work``.

    python -m benchmarks.boolq_cv --set max_steps=150 --set eval_every=50 --work /tmp/boolq-cv \\
        --out benchmarks/results/boolq_cv.json
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from benchmarks._common import machine
from benchmarks.boolq_budget import SEARCHABLE, _scalar
from pipeline.params import DEFAULT_PARAMS_FILE, validate_params

ARMS = ("none", "oversample")
RESAMPLES = 2000


def parse_set(items: list[str]) -> dict[str, Any]:
    """``KEY=VALUE`` overrides of boolq_aux's training settings (the questions and folds stay fixed)."""
    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or key not in SEARCHABLE:
            raise SystemExit(f"--set {item!r}: expected KEY=VALUE with KEY one of {', '.join(SEARCHABLE)}")
        out[key] = _scalar(value.strip())
    return out


def fold_titles(titles: list[str], folds: int, seed: int) -> dict[str, int]:
    """``{title: fold}``: titles sorted, shuffled by ``seed``, dealt round-robin (the file's order plays no part)."""
    from pipeline.strategyqa.folds import assign_folds

    return assign_folds(titles, folds, seed)


def carve_dev(titles: list[str], share: float, seed: int) -> set[str]:
    """The articles of the training folds that choose the checkpoint: ``share`` of them, seeded."""
    ordered = sorted(set(titles))
    random.Random(seed).shuffle(ordered)
    return set(ordered[:max(1, round(share * len(ordered)))])


def auc(margins: np.ndarray, labels: np.ndarray) -> float:
    from scipy.stats import rankdata

    pos = int(labels.sum())
    neg = labels.size - pos
    if pos == 0 or neg == 0:
        return 50.0
    ranks = rankdata(margins)
    return 100.0 * (ranks[labels == 1].sum() - pos * (pos + 1) / 2) / (pos * neg)


def log_loss(margins: np.ndarray, labels: np.ndarray) -> float:
    z = np.where(labels == 1, margins, -margins)
    return float(np.mean(np.logaddexp(0.0, -z)))


def by_article(values: dict[str, np.ndarray], labels: np.ndarray, titles: list[str],
               stat) -> dict[str, dict[str, float]]:
    """``stat(margins, labels)`` of each arm and of each arm's difference to the first, with 95% percentile
    intervals from resampling articles (both arms' questions of an article together), seeded."""
    order = list(dict.fromkeys(titles))
    members = {t: [] for t in order}
    for i, t in enumerate(titles):
        members[t].append(i)
    groups = [np.asarray(members[t]) for t in order]
    rng = np.random.default_rng(0)
    names = list(values)
    draws = {n: [] for n in names}
    for _ in range(RESAMPLES):
        idx = np.concatenate([groups[g] for g in rng.integers(0, len(groups), len(groups))])
        for n in names:
            draws[n].append(stat(values[n][idx], labels[idx]))
    out: dict[str, dict[str, float]] = {}
    for n in names:
        point = stat(values[n], labels)
        lo, hi = np.percentile(draws[n], [2.5, 97.5])
        out[n] = {"value": round(point, 4), "low": round(float(lo), 4), "high": round(float(hi), 4)}
        if n != names[0]:
            diff = np.asarray(draws[n]) - np.asarray(draws[names[0]])
            lo, hi = np.percentile(diff, [2.5, 97.5])
            out[f"{n} - {names[0]}"] = {"value": round(point - stat(values[names[0]], labels), 4),
                                        "low": round(float(lo), 4), "high": round(float(hi), 4)}
    return out


def train_fold(params, arm: str, fold: int, assignment: dict[str, int], questions, work: Path) -> dict[str, Any]:
    """Train on the other folds (less their dev articles), answer fold ``fold``: margins (log-odds of "yes")."""
    from transformers import AutoTokenizer

    from pipeline.strategyqa.answering import majority_label
    from pipeline.training.choice_model import choice_dev_set, predict_choice_logits, train_choice_model
    from pipeline.training.curves import training_summary
    from pipeline.training.finetune import TrainConfig
    from pipeline.training.model_names import resolve_model_path
    from pipeline.training.pair_encoding import encode_pairs

    p = params.boolq_aux
    test = [q for q in questions if assignment[q.title] == fold]
    rest = [q for q in questions if assignment[q.title] != fold]
    dev_titles = carve_dev([q.title for q in rest], p.dev_share, p.seed + fold)
    fit = [q for q in rest if q.title not in dev_titles]
    dev = [q for q in rest if q.title in dev_titles]
    tokenizer = AutoTokenizer.from_pretrained(resolve_model_path(p.model_name_or_path))

    def features(qs):
        return encode_pairs(tokenizer, [q.question for q in qs], [q.passage for q in qs], p.max_seq_len)

    def labels(qs):
        return [int(q.answer) for q in qs]

    out_dir = work / arm / f"fold-{fold}"
    start = time.monotonic()
    stats = train_choice_model(
        "classification", features(fit), labels(fit), 2, TrainConfig.from_params(p, p.model_name_or_path),
        out_dir, {**p.model_dump(exclude={"parallel_runs", "seeds"}), "cv_fold": fold, "cv_folds": len(set(
            assignment.values())), "train_questions": len(fit)},
        label_names=("no", "yes"), dev=choice_dev_set("classification", features(dev), labels(dev), 2,
                                                     p.eval_batch_size),
        pooling=p.pooling, class_balance=arm)
    logits = predict_choice_logits("classification", out_dir / "final", features(test), 2, p.eval_batch_size,
                                   p.device, p.precision)
    return {"fold": fold, "train_questions": len(fit), "dev_questions": len(dev), "test_questions": len(test),
            "train_yes_share": round(sum(labels(fit)) / len(fit), 4), "majority": majority_label(labels(fit)),
            "margins": {q.qid: round(row[1] - row[0], 4) for q, row in zip(test, logits, strict=True)},
            "training": training_summary(stats), "seconds": round(time.monotonic() - start, 1)}


def summarise(result: dict[str, Any], questions) -> dict[str, Any]:
    """Every question's out-of-fold answer per arm -> the figures and intervals of the module docstring."""
    from pipeline.common.paired import paired_difference

    arms = [a for a in result["arms"] if len(result["folds"].get(a, {})) == result["n_folds"]]
    if not arms:
        return {}
    titles = [q.title for q in questions]
    gold = np.asarray([int(q.answer) for q in questions])
    margins = {a: np.asarray([next(f["margins"][q.qid] for f in result["folds"][a].values()
                                   if q.qid in f["margins"]) for q in questions]) for a in arms}
    fold_of = {q.qid: result["assignment"][q.title] for q in questions}
    any_arm = result["folds"][arms[0]]
    majority = np.asarray([any_arm[str(fold_of[q.qid])]["majority"] for q in questions])
    prior = np.asarray([math.log(any_arm[str(fold_of[q.qid])]["train_yes_share"]
                                 / (1 - any_arm[str(fold_of[q.qid])]["train_yes_share"])) for q in questions])
    accuracy = {a: (np.where(margins[a] > 0, 1, 0) == gold).astype(float) for a in arms}
    by_majority = (majority == gold).astype(float)
    out: dict[str, Any] = {
        "questions": len(questions), "articles": len(set(titles)),
        "majority_accuracy": round(100 * float(by_majority.mean()), 2),
        "prior_log_loss": round(log_loss(prior, gold), 4),
        "arms": {a: {"accuracy": round(100 * float(accuracy[a].mean()), 2),
                     "yes_share": round(float((margins[a] > 0).mean()), 4),
                     "versus_majority": paired_difference(accuracy[a], by_majority, clusters=titles, unit="article"),
                     } for a in arms},
        "auc": by_article(margins, gold, titles, auc),
        "log_loss": by_article(margins, gold, titles, log_loss),
        # each arm against the log-odds of its fold's training "yes" share, on the same resampled articles: a
        # model that learned only the label prior scores 0 here
        "log_loss_versus_prior": by_article({"prior": prior, **margins}, gold, titles, log_loss),
    }
    if len(arms) > 1:
        out["accuracy_difference"] = paired_difference(accuracy[arms[1]], accuracy[arms[0]], clusters=titles,
                                                       unit="article")
    return out


def _write(path: Path, result: dict[str, Any]) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(result, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    tmp.replace(path)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--set", action="append", default=[], help="KEY=VALUE: a boolq_aux training setting replaced")
    ap.add_argument("--arms", nargs="+", choices=ARMS, default=list(ARMS))
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--seed", type=int, default=13, help="draws the folds (by article)")
    ap.add_argument("--limit", type=int, default=None, help="the first N articles only (a wiring check)")
    ap.add_argument("--work", type=Path, required=True, help="checkpoints of the folds in training")
    ap.add_argument("--out", type=Path, required=True, help="the result JSON (written fold by fold)")
    args = ap.parse_args(argv)
    from pipeline.strategyqa.boolq import load_boolq

    overrides = parse_set(args.set)
    raw = yaml.safe_load(DEFAULT_PARAMS_FILE.read_text(encoding="utf-8"))
    raw["boolq_aux"] = {**raw["boolq_aux"], **overrides}
    params = validate_params(raw, f"boolq_cv {overrides}", ("boolq_aux",))
    questions = load_boolq(params.boolq_aux.file)
    if args.limit:
        keep = set(sorted({q.title for q in questions})[:args.limit])
        questions = [q for q in questions if q.title in keep]
    assignment = fold_titles([q.title for q in questions], args.folds, args.seed)
    setup = {"overrides": overrides, "n_folds": args.folds, "fold_seed": args.seed, "limit": args.limit,
             "arms": args.arms, "file": params.boolq_aux.file}
    result: dict[str, Any] = json.loads(args.out.read_text()) if args.out.exists() else {}
    if {k: result.get(k) for k in setup} != setup:
        result = {**setup, "folds": {}}
    result["command"] = "python -m benchmarks.boolq_cv " + " ".join(sys.argv[1:] if argv is None else argv)
    result["assignment"] = assignment
    result["settings"] = {k: getattr(params.boolq_aux, k) for k in (*SEARCHABLE, "pooling", "select_metric")}
    for arm in args.arms:
        for fold in range(args.folds):
            done = result["folds"].setdefault(arm, {})
            if str(fold) in done:
                print(f"{arm} fold {fold}: done already")
                continue
            row = train_fold(params, arm, fold, assignment, questions, args.work)
            done[str(fold)] = row
            result["machine"] = machine()
            _write(args.out, result)
            print(json.dumps({"arm": arm, "fold": fold, "best_step": row["training"].get("best_step"),
                              "dev_best": row["training"].get("dev_best"), "seconds": row["seconds"]}), flush=True)
    result["summary"] = summarise(result, questions)
    _write(args.out, result)
    print(json.dumps(result["summary"].get("auc", {})))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
