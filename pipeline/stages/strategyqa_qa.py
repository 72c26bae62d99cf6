"""``strategyqa_qa@<setting>``: train the yes/no classifier in one setting and score it on eval, with the
majority baseline (the more frequent training answer) beside it."""

from __future__ import annotations

from typing import TYPE_CHECKING

import json
from collections.abc import Callable
from dataclasses import dataclass

from pipeline.common.layout import PATHS
from pipeline.common.manifest import read_manifest, source_path
from pipeline.common.headline import dev_figures, write_headline
from pipeline.common.intervals import bootstrap_ci
from pipeline.common.files import write_json
from pipeline.common.logs import get_logger
from pipeline.strategyqa.answering import (
    SETTINGS,
    accuracy,
    build_inputs,
    gold_ids,
    labels,
    majority_label,
    split_off_dev,
)
from pipeline.strategyqa.data import StrategyQuestion, load_questions
from pipeline.training.choice_model import (
    argmax,
    choice_dev_set,
    predict_choice_logits,
    train_choice_model,
)
from pipeline.training.curves import training_summary
from pipeline.training.finetune import TrainConfig, resolve_model_path
from pipeline.training.launch import TrainingCall, run_training
from pipeline.training.pair_encoding import PairFeatures, encode_pairs

if TYPE_CHECKING:
    from pipeline.params import Params


@dataclass(frozen=True)
class StrategyQATraining:
    """The training call, and what scoring needs after it: the questions and the setting's encoder."""

    call: TrainingCall
    train: list[StrategyQuestion]
    dev: list[StrategyQuestion]
    evaluation: list[StrategyQuestion]
    features: Callable[[list[StrategyQuestion], str], tuple[PairFeatures, list[str] | None]]


def training_call(params: Params, setting: str) -> StrategyQATraining:
    """The recipe every training process builds the same way (``pipeline.training.launch``)."""
    from transformers import AutoTokenizer

    if setting not in SETTINGS:
        raise ValueError(f"unknown StrategyQA setting {setting!r}; one of {', '.join(SETTINGS)}")
    p = params.strategyqa_qa
    ctx = json.loads(PATHS.strategyqa_contexts.contexts.read_text(encoding="utf-8"))
    manifest = read_manifest()
    train, dev = split_off_dev(load_questions(source_path(manifest, "strategyqa_train")), p.dev_share, p.seed)
    evaluation = load_questions(source_path(manifest, "strategyqa_eval"))
    paragraphs = {**ctx["paragraphs"], **ctx["gold_paragraphs"]}
    if setting == "ora_p":  # only questions whose gold paragraphs exist can be asked with them
        train, dev, evaluation = ([q for q in qs if any(i in paragraphs for i in gold_ids(q))]
                                  for qs in (train, dev, evaluation))
    ranked = ctx["ranked"].get(setting)
    tokenizer = AutoTokenizer.from_pretrained(resolve_model_path(p.model_name_or_path))

    def features(questions: list[StrategyQuestion], part: str) -> tuple[PairFeatures, list[str] | None]:
        first, second = build_inputs(questions, setting, ranked[part] if ranked else None, paragraphs)
        return encode_pairs(tokenizer, first, second, p.max_seq_len), second

    def arguments() -> dict:
        train_feats, _ = features(train, "train")
        dev_feats, _ = features(dev, "train")  # carved out of the training questions: their contexts are there
        get_logger().info("strategyqa_qa@%s: %d training questions, %d dev questions for checkpoint selection",
                          setting, len(train), len(dev))
        return {"head": "classification", "feats": train_feats, "labels": labels(train), "choices": 2,
                "cfg": TrainConfig.from_params(p, p.model_name_or_path),
                "fingerprint": {**p.model_dump(), "setting": setting, "train_questions": len(train),
                                "train_sha256": manifest["strategyqa_train"]["sha256"]},
                "label_names": ("no", "yes"),  # label 1 = answer True
                "dev": choice_dev_set("classification", dev_feats, labels(dev), 2, p.eval_batch_size),
                "log_dir": PATHS.strategyqa_qa[setting].live}

    call = TrainingCall(train_choice_model, PATHS.strategyqa_qa[setting].model_dir, arguments)
    return StrategyQATraining(call, train, dev, evaluation, features)


def run(params: Params, setting: str) -> dict:
    if setting not in SETTINGS:
        raise ValueError(f"unknown StrategyQA setting {setting!r}; one of {', '.join(SETTINGS)}")
    p = params.strategyqa_qa
    prepared, stats = run_training(training_call, params, setting)
    train, dev, evaluation, y_train = prepared.train, prepared.dev, prepared.evaluation, labels(prepared.train)
    out = PATHS.strategyqa_qa[setting]
    eval_feats, eval_context = prepared.features(evaluation, "eval")
    logits = predict_choice_logits("classification", out.model, eval_feats, 2, p.eval_batch_size, p.device)
    pred = argmax(logits)
    gold = labels(evaluation)
    majority = majority_label(y_train)
    write_json(out.predictions,
               {q.qid: {"answer": bool(a), "logits": [round(x, 5) for x in row]}
                for q, a, row in zip(evaluation, pred, logits, strict=True)}, indent=None)
    metrics = {
        "setting": setting,
        "train_questions": len(train), "dev_questions": len(dev), "eval_questions": len(evaluation),
        "accuracy": accuracy(pred, gold),
        "accuracy_ci95": bootstrap_ci([float(a == g) for a, g in zip(pred, gold, strict=True)]),
        "majority_baseline": accuracy([majority] * len(gold), gold),
        "majority_ci95": bootstrap_ci([float(majority == g) for g in gold]),
        "majority_answer": "yes" if majority else "no",
        "predicted_yes_share": round(sum(pred) / len(pred), 4) if pred else None,
        "eval_truncated_share": round(eval_feats.truncated / len(eval_feats), 4) if len(eval_feats) else None,
        "eval_empty_context": sum(not c for c in eval_context) if eval_context is not None else None,
        "max_seq_len": p.max_seq_len,
        **training_summary(stats), "train_examples": stats["train_examples"],
    }
    write_json(out.report, metrics)
    write_headline("strategyqa", f"qa_{setting}", {"acc": metrics["accuracy"], "majority": metrics["majority_baseline"],
                                                   **dev_figures(stats)})
    return metrics
