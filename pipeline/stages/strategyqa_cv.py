"""``strategyqa_cv``: k-fold cross-validation of the StrategyQA settings over every labelled question.

Each fold's questions are answered by a classifier trained on the other folds (``strategyqa_qa``'s budget, input
length and start, the auxiliary BoolQ model included), its checkpoint chosen on a seeded share of those other
folds; the out-of-fold answers of all 2,290 questions are scored against the majority answer of each fold's
training part, and settings against each other, with paired intervals over questions (the unit StrategyQA
sampled). Writes ``predictions`` (every question's fold, answer and logits per setting) and ``report``.

The stage reads the contexts and hashes the start weights once; each fold's training reads only the texts and
labels the stage wrote for it (``inputs.json``). A fold's answers are kept under ``work_dir`` as soon as it is
done, with the inputs that made them, so a killed run resumes at the next fold; the folder goes once the stage
has written its outputs. With ``folds: 0`` (the default on two cores) the stage writes an empty result that says
it is off.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pipeline.common.files import write_json, write_json_set
from pipeline.common.layout import PATHS
from pipeline.common.logs import get_logger
from pipeline.common.manifest import source_path
from pipeline.common.paired import paired_difference
from pipeline.strategyqa.answering import GOLD_CONTEXT, PAPER_NAMES, all_paragraphs, build_inputs, labels, majority_label
from pipeline.strategyqa.data import StrategyQuestion, load_questions
from pipeline.strategyqa.folds import CV_SETTINGS, assign_folds, fold_sizes, fold_split, labelled_pool
from pipeline.training.choice_model import argmax, choice_dev_set, predict_choice_logits, train_choice_model
from pipeline.training.finetune import TrainConfig
from pipeline.training.model_names import resolve_model_path
from pipeline.launcher.torchrun import launch
from pipeline.training.pair_encoding import encode_pairs

if TYPE_CHECKING:
    from pipeline.params import Params

RESULT = "result.json"  # a finished fold's answers, beside its checkpoints
INPUTS = "inputs.json"  # what the fold trains on (texts, labels, fingerprint), read by every rank


@dataclass(frozen=True)
class CVData:
    """Every labelled question, its fold, and the contexts each setting gives it."""

    questions: list[StrategyQuestion]
    assignment: dict[str, int]
    paragraphs: dict[str, dict]
    ranked: dict[str, dict[str, list[str]]]  # setting -> qid -> ranked paragraph ids (train and eval runs merged)
    inputs_sha256: str  # the labelled files and the contexts: a changed input never reuses a fold's answers


def _digest(*paths: Path) -> str:
    h = hashlib.sha256()
    for path in paths:
        h.update(path.read_bytes())
    return h.hexdigest()


def load_cv_data(params: Params) -> CVData:
    files = [source_path("strategyqa_train"), source_path("strategyqa_eval")]
    questions = labelled_pool(*(load_questions(f) for f in files))
    contexts_file = PATHS.strategyqa_contexts.contexts
    ctx = json.loads(contexts_file.read_text(encoding="utf-8"))
    ranked = {s: {**runs.get("train", {}), **runs.get("eval", {})} for s, runs in ctx["ranked"].items()}
    assignment = assign_folds([q.qid for q in questions], params.strategyqa_cv.folds, params.strategyqa_cv.seed)
    return CVData(questions, assignment, all_paragraphs(ctx), ranked,
                  _digest(*(Path(f) for f in files), contexts_file))


def setting_pool(data: CVData, setting: str) -> list[StrategyQuestion]:
    """The questions a setting can ask: ORA-P and its one-annotator control only those whose gold paragraphs
    exist (as ``setting_questions`` does for the official split)."""
    if setting not in CV_SETTINGS:
        raise ValueError(f"strategyqa_cv cannot score setting {setting!r}; one of {', '.join(CV_SETTINGS)}")
    if setting in GOLD_CONTEXT:
        ids = GOLD_CONTEXT[setting]
        return [q for q in data.questions if any(i in data.paragraphs for i in ids(q))]
    return data.questions


def parse_variant(variant: str, folds: int) -> tuple[str, int]:
    """``"<setting>:<fold>"`` as (setting, fold), checked: the variant reaches torchrun's workers as data."""
    setting, _, fold = variant.partition(":")
    if setting not in CV_SETTINGS or not fold.isdigit() or not 0 <= int(fold) < folds:
        raise ValueError(f"strategyqa_cv: {variant!r} is not <setting>:<fold> with a setting of "
                         f"{', '.join(CV_SETTINGS)} and a fold below {folds}")
    return setting, int(fold)


def fold_dir(setting: str, fold: int) -> Path:
    return PATHS.strategyqa_cv.work_dir / setting / f"fold-{fold}"


def fold_questions(params: Params, data: CVData, setting: str, fold: int):
    """The fold's training, checkpoint-selection and scored questions of one setting."""
    p = params.strategyqa_qa
    return fold_split(setting_pool(data, setting), data.assignment, fold, p.dev_share, p.seed)


def fold_inputs(data: CVData, setting: str, split, fingerprint: dict[str, Any]) -> dict[str, Any]:
    """What a fold trains on, as texts and labels: written by the stage once per fold (``INPUTS``), so the
    training (here or in every torchrun rank) reads a few MB instead of the 15 MB contexts and the 90 MB start
    weights again."""
    def part(questions: list[StrategyQuestion]) -> dict[str, Any]:
        first, second = build_inputs(questions, setting, data.ranked.get(setting), data.paragraphs)
        return {"first": first, "second": second, "labels": labels(questions)}

    return {"fingerprint": fingerprint, "train": part(split.train), "dev": part(split.dev)}


def train(params: Params, variant: str) -> dict[str, Any]:
    """Fit one ``<setting>:<fold>`` from the inputs the stage wrote for it; run in the stage's process or in
    every torchrun rank (``pipeline.launcher.torchrun``). Returns the training statistics."""
    from transformers import AutoTokenizer

    from pipeline.stages.train_strategyqa_qa import fresh_head, start_weights

    p, cv = params.strategyqa_qa, params.strategyqa_cv
    setting, fold = parse_variant(variant, cv.folds)
    inputs = json.loads((fold_dir(setting, fold) / INPUTS).read_text(encoding="utf-8"))
    start = start_weights(params)
    tokenizer = AutoTokenizer.from_pretrained(resolve_model_path(start))

    def features(part: dict[str, Any]):
        return encode_pairs(tokenizer, part["first"], part["second"], p.max_seq_len)

    get_logger().info("strategyqa_cv %s fold %d/%d: %d training, %d dev questions", setting, fold + 1, cv.folds,
                      len(inputs["train"]["labels"]), len(inputs["dev"]["labels"]))
    dev_set = choice_dev_set("classification", features(inputs["dev"]), inputs["dev"]["labels"], 2,
                             p.eval_batch_size)
    return train_choice_model(
        "classification", features(inputs["train"]), inputs["train"]["labels"], 2,
        TrainConfig.from_params(p.budget_for(setting), start), fold_dir(setting, fold), inputs["fingerprint"],
        label_names=("no", "yes"), dev=dev_set, fresh_head=fresh_head(params), pooling=p.pooling,
        class_balance=p.class_balance)


def _fingerprint(params: Params, setting: str, fold: int, data: CVData, start: str,
                 start_weights: str | None) -> dict[str, Any]:
    code = _digest(*(Path(__file__).parent.parent / rel for rel in
                     ("stages/strategyqa_cv.py", "strategyqa/folds.py", "strategyqa/answering.py")))
    return {**params.strategyqa_qa.model_dump(exclude={"parallel_runs"}), **{f"cv_{k}": v for k, v in params.strategyqa_cv.model_dump().items()
                                                   if k != "settings"},
            "setting": setting, "fold": fold, "inputs_sha256": data.inputs_sha256, "start": start,
            "start_weights": start_weights, "code": code}


def _run_fold(params: Params, data: CVData, setting: str, fold: int, start_digest: str | None) -> dict[str, Any]:
    """Train, answer the fold's questions, keep the answers; a fold already answered from the same inputs is
    read back instead. ``data`` and ``start_digest`` are read once by :func:`run` for every fold."""
    from transformers import AutoTokenizer

    from pipeline.stages.train_strategyqa_qa import start_weights

    out = fold_dir(setting, fold)
    done = out / RESULT
    fingerprint = _fingerprint(params, setting, fold, data, start_weights(params), start_digest)
    if done.exists():
        kept = json.loads(done.read_text(encoding="utf-8"))
        if kept.get("fingerprint") == fingerprint:
            get_logger().info("strategyqa_cv %s fold %d: answered in an earlier run, kept", setting, fold)
            return kept
    split = fold_questions(params, data, setting, fold)
    write_json(out / INPUTS, fold_inputs(data, setting, split, fingerprint), None)
    stats = launch(train, params, f"{setting}:{fold}", out)
    p = params.strategyqa_qa
    model = out / "final"
    first, second = build_inputs(split.test, setting, data.ranked.get(setting), data.paragraphs)
    feats = encode_pairs(AutoTokenizer.from_pretrained(str(model)), first, second, p.max_seq_len)
    logits = predict_choice_logits("classification", model, feats, 2, p.eval_batch_size, p.device,
                                   p.precision)
    result = {
        "fingerprint": fingerprint,
        "train_questions": len(split.train), "dev_questions": len(split.dev),
        "test_questions": len(split.test), "majority": majority_label(labels(split.train)),
        "truncated_share": round(feats.truncated / len(feats), 4) if len(feats) else None,
        "steps": stats.get("steps"), "best_step": stats.get("best_step"),
        "best_dev": (stats.get("dev_best") or {}).get("accuracy"),
        "answers": {q.qid: {"answer": bool(a), "logits": [round(x, 5) for x in row]}
                    for q, a, row in zip(split.test, argmax(logits), logits, strict=True)},
    }
    write_json(done, result, None)
    shutil.rmtree(model, ignore_errors=True)  # the answers are what is kept: 25 models would be gigabytes
    return result


def summarise(setting: str, questions: list[StrategyQuestion], folds: list[dict[str, Any]],
              reference: dict[str, bool] | None, reference_name: str | None) -> dict[str, Any]:
    """One setting's out-of-fold accuracy against each fold's majority answer, and against the reference
    setting on the questions both answered, paired by question."""
    answers = {qid: a["answer"] for f in folds for qid, a in f["answers"].items()}
    majority = {qid: bool(f["majority"]) for f in folds for qid in f["answers"]}
    missing = [q.qid for q in questions if q.qid not in answers]
    if missing:
        raise ValueError(f"strategyqa_cv {setting}: {len(missing)} question(s) have no out-of-fold answer, "
                         f"e.g. {missing[:3]}")
    gold = {q.qid: bool(q.answer) for q in questions}
    right = [float(answers[q] == gold[q]) for q in gold]
    versus = paired_difference(right, [float(majority[q] == gold[q]) for q in gold])
    out: dict[str, Any] = {
        "paper_setting": PAPER_NAMES[setting], "questions": len(gold),
        "accuracy": versus["system_mean"], "majority_baseline": versus["baseline_mean"], "versus_majority": versus,
        "predicted_yes_share": round(sum(answers[q] for q in gold) / len(gold), 4),
        "folds": [{k: f[k] for k in ("train_questions", "dev_questions", "test_questions", "majority",
                                      "truncated_share", "steps", "best_step", "best_dev")} for f in folds],
    }
    if reference is not None and reference_name != setting:
        shared = [q for q in gold if q in reference]
        out[f"versus_{reference_name}"] = paired_difference(
            [float(answers[q] == gold[q]) for q in shared], [float(reference[q] == gold[q]) for q in shared])
    return out


def run(params: Params) -> dict[str, Any]:
    cv = params.strategyqa_cv
    if cv.folds == 0:
        report = {"folds": 0, "settings": {}, "note": "off (strategyqa_cv.folds: 0); the GPU profile runs 5 folds"}
        write_json_set([(PATHS.strategyqa_cv.predictions, {}, None), (PATHS.strategyqa_cv.report, report, 2)])
        return report
    from pipeline.stages.train_strategyqa_qa import _weights_digest, start_weights

    data = load_cv_data(params)
    start_digest = _weights_digest(start_weights(params))  # the auxiliary model's 90 MB, hashed once for every fold
    results = {s: [_run_fold(params, data, s, f, start_digest) for f in range(cv.folds)] for s in cv.settings}
    reference_name = "question_only" if "question_only" in cv.settings else None
    reference = ({qid: a["answer"] for f in results[reference_name] for qid, a in f["answers"].items()}
                 if reference_name else None)
    summaries = {s: summarise(s, setting_pool(data, s), results[s], reference, reference_name) for s in cv.settings}
    predictions = {s: {qid: {"fold": f, **a} for f, r in enumerate(results[s]) for qid, a in r["answers"].items()}
                   for s in cv.settings}
    report = {"folds": cv.folds, "seed": cv.seed, "labelled_questions": len(data.questions),
              "fold_sizes": fold_sizes(data.assignment), "start": start_weights(params),
              "max_seq_len": params.strategyqa_qa.max_seq_len, "max_steps": params.strategyqa_qa.max_steps,
              "unit": "question", "settings": summaries}
    write_json_set([(PATHS.strategyqa_cv.predictions, predictions, None), (PATHS.strategyqa_cv.report, report, 2)])
    shutil.rmtree(PATHS.strategyqa_cv.work_dir, ignore_errors=True)  # finished: nothing left to resume
    return report
