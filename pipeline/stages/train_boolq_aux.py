"""``train_boolq_aux``: the auxiliary yes/no classifier on a BoolQ-format file, before StrategyQA.

The StrategyQA paper's RoBERTa* is fine-tuned on DROP, 20 Questions and BoolQ before StrategyQA, and without
that chain its RoBERTa is at the majority (Table 9: IR-Q 53.6 against 53.9). This stage is the BoolQ link of
that chain: the same sentence-pair classifier as the StrategyQA settings (question, passage; label 1 = yes), its
checkpoint chosen on articles carved out of the training part, its own accuracy reported on held-out articles
beside the majority answer with a paired interval that resamples articles (questions on one article share its
passages). ``strategyqa_qa.start_from: boolq_aux`` starts every StrategyQA classifier from it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from pipeline.common.layout import PATHS
from pipeline.common.logs import get_logger
from pipeline.common.paired import paired_difference
from pipeline.common.scoring import write_scores
from pipeline.strategyqa.answering import majority_label
from pipeline.strategyqa.boolq import BoolQuestion, load_boolq, split_by_title
from pipeline.training.choice_model import argmax, choice_dev_set, predict_choice_logits, train_choice_model
from pipeline.training.curves import training_report, training_summary
from pipeline.training.finetune import TrainConfig, resolve_model_path
from pipeline.launcher.torchrun import TrainingCall, run_training
from pipeline.training.pair_encoding import encode_pairs

if TYPE_CHECKING:
    from pipeline.params import Params

BOOLQ_MAJORITY_PAPER = 62.2  # Clark et al. (2019): the share of "yes" on BoolQ dev, the majority baseline


@dataclass(frozen=True)
class BoolQTraining:
    """The training call, and the questions it fits, selects on and is scored on."""

    call: TrainingCall
    train: list[BoolQuestion]
    dev: list[BoolQuestion]
    heldout: list[BoolQuestion]


def headlines() -> list[tuple[str, str]]:
    """The headline rows this stage writes, ``(track, system)`` of ``metrics/<track>/<system>.json``: the write
    below and dvc.yaml's outs (``python -m pipeline.experiments.stage_deps``) both come from it."""
    return [("strategyqa", "boolq_aux")]


def _labels(questions: list[BoolQuestion]) -> list[int]:
    return [int(q.answer) for q in questions]


def training_call(params: Params, variant: str) -> BoolQTraining:
    """The recipe every training process builds the same way (``pipeline.launcher.torchrun``)."""
    from transformers import AutoTokenizer

    p = params.boolq_aux
    train, dev, heldout = split_by_title(load_boolq(p.file), p.heldout_share, p.dev_share, p.seed)
    tokenizer = AutoTokenizer.from_pretrained(resolve_model_path(p.model_name_or_path))

    def features(questions: list[BoolQuestion]):
        return encode_pairs(tokenizer, [q.question for q in questions], [q.passage for q in questions], p.max_seq_len)

    def arguments() -> dict:
        get_logger().info("boolq_aux: %d training, %d dev and %d held-out questions", len(train), len(dev),
                          len(heldout))
        return {"head": "classification", "feats": features(train), "labels": _labels(train), "choices": 2,
                "cfg": TrainConfig.from_params(p, p.model_name_or_path),
                "fingerprint": {**p.model_dump(), "train_questions": len(train)},
                "label_names": ("no", "yes"),  # label 1 = yes, as the StrategyQA classifiers
                "dev": choice_dev_set("classification", features(dev), _labels(dev), 2, p.eval_batch_size),
                "log_dir": PATHS.boolq_aux.live}

    call = TrainingCall(train_choice_model, PATHS.boolq_aux.model_dir, arguments)
    return BoolQTraining(call, train, dev, heldout)


def run(params: Params) -> dict:
    from transformers import AutoTokenizer

    p = params.boolq_aux
    prepared, stats = run_training(training_call, params, "boolq")
    heldout, model = prepared.heldout, PATHS.boolq_aux.model
    feats = encode_pairs(AutoTokenizer.from_pretrained(str(model)), [q.question for q in heldout],
                         [q.passage for q in heldout], p.max_seq_len)
    answers = argmax(predict_choice_logits("classification", model, feats, 2, p.eval_batch_size, p.device,
                                   p.precision))
    gold = _labels(heldout)
    majority = majority_label(_labels(prepared.train))
    versus = paired_difference([float(a == g) for a, g in zip(answers, gold, strict=True)],
                               [float(majority == g) for g in gold], clusters=[q.title for q in heldout],
                               unit="article")
    training = {"train_questions": len(prepared.train), "dev_questions": len(prepared.dev), **training_report(stats)}
    report = {
        "file": p.file, "train_questions": len(prepared.train), "dev_questions": len(prepared.dev),
        "heldout_questions": len(heldout), "heldout_articles": len({q.title for q in heldout}),
        "accuracy": versus["system_mean"], "majority_answer": "yes" if majority else "no",
        "majority_baseline": versus["baseline_mean"], "majority_paper": BOOLQ_MAJORITY_PAPER,
        "versus_majority": versus, "predicted_yes_share": round(sum(answers) / len(answers), 4),
        "heldout_truncated_share": round(feats.truncated / len(feats), 4), "max_seq_len": p.max_seq_len,
        **training_summary(training),
    }
    return write_scores(PATHS.boolq_aux.report, report, *headlines()[0],
                        {"acc": report["accuracy"], "majority": report["majority_baseline"]}, training)
