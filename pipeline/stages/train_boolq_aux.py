"""``train_boolq_aux``: the auxiliary yes/no classifier on a BoolQ-format file, before StrategyQA.

The StrategyQA paper's RoBERTa* is fine-tuned on DROP, 20 Questions and BoolQ before StrategyQA, and without
that chain its RoBERTa is at the majority (Table 9: IR-Q 53.6 against 53.9). This stage is the BoolQ link of
that chain: the same sentence-pair classifier as the StrategyQA settings (question, passage; label 1 = yes), its
checkpoint chosen on articles carved out of the training part, its own accuracy reported on held-out articles
beside the majority answer with a paired interval that resamples articles (questions on one article share its
passages). ``strategyqa_qa.start_from: boolq_aux`` starts every StrategyQA classifier from it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pipeline.common.layout import PATHS
from pipeline.common.logs import get_logger
from pipeline.common.model_card import ModelCard
from pipeline.common.paired import paired_difference
from pipeline.common.scoring import write_scores
from pipeline.strategyqa.answering import majority_label
from pipeline.strategyqa.boolq import BoolQuestion, load_boolq, split_by_title
from pipeline.training.choice_model import argmax, choice_dev_set, predict_choice_logits, train_choice_model
from pipeline.training.curves import training_report, training_summary
from pipeline.training.finetune import TrainConfig, resolve_model_path
from pipeline.launcher.torchrun import launch
from pipeline.training.pair_encoding import encode_pairs

if TYPE_CHECKING:
    from pipeline.params import Params

BOOLQ_MAJORITY_PAPER = 62.2  # Clark et al. (2019): the share of "yes" on BoolQ dev, the majority baseline


def headlines() -> list[tuple[str, str]]:
    """The headline rows this stage writes, ``(track, system)`` of ``metrics/<track>/<system>.json``: the write
    below and dvc.yaml's outs (``python -m pipeline.experiments.stage_deps``) both come from it."""
    return [("strategyqa", "boolq_aux")]


def card() -> ModelCard:
    """The auxiliary model's card: it is scored here, on held-out BoolQ articles."""
    return ModelCard(
        "Auxiliary yes/no model (BoolQ)", "strategyqa", "boolq_aux", "boolq_aux", "boolq_aux", PATHS.boolq_aux.report,
        "yes/no classification of a question given a passage, the BoolQ link of the StrategyQA paper's auxiliary "
        "chain (StrategyQA's classifiers start from it with `strategyqa_qa.start_from: boolq_aux`)",
        "A BoolQ-format file (`boolq_aux.file`; by default BoolQ's official dev split), split by article: a share "
        "held out for the figures below, a share of the rest to choose the checkpoint",
        "AutoModelForSequenceClassification")


def _labels(questions: list[BoolQuestion]) -> list[int]:
    return [int(q.answer) for q in questions]


def boolq_sets(params: Params) -> tuple[list[BoolQuestion], list[BoolQuestion], list[BoolQuestion]]:
    """Training, checkpoint-selection and held-out questions, split by article (seeded)."""
    p = params.boolq_aux
    return split_by_title(load_boolq(p.file), p.heldout_share, p.dev_share, p.seed)


def train(params: Params, variant: str = "boolq") -> dict:
    """Fit the classifier; run in the stage's process or in every torchrun rank (``pipeline.launcher.torchrun``).
    Returns the training statistics and the question counts."""
    from transformers import AutoTokenizer

    p = params.boolq_aux
    fit, dev, heldout = boolq_sets(params)
    tokenizer = AutoTokenizer.from_pretrained(resolve_model_path(p.model_name_or_path))

    def features(questions: list[BoolQuestion]):
        return encode_pairs(tokenizer, [q.question for q in questions], [q.passage for q in questions], p.max_seq_len)

    get_logger().info("boolq_aux: %d training, %d dev and %d held-out questions", len(fit), len(dev), len(heldout))
    dev_set = choice_dev_set("classification", features(dev), _labels(dev), 2, p.eval_batch_size)
    stats = train_choice_model(
        "classification", features(fit), _labels(fit), 2, TrainConfig.from_params(p, p.model_name_or_path),
        PATHS.boolq_aux.model_dir, {**p.model_dump(exclude={"parallel_runs"}), "train_questions": len(fit)},
        label_names=("no", "yes"),  # label 1 = yes, as the StrategyQA classifiers
        dev=dev_set, log_dir=PATHS.boolq_aux.live)
    return {**stats, "train_questions": len(fit), "dev_questions": len(dev)}


def run(params: Params) -> dict:
    from transformers import AutoTokenizer

    p = params.boolq_aux
    stats = launch(train, params, "boolq", PATHS.boolq_aux.model_dir)
    fit, _, heldout = boolq_sets(params)
    model = PATHS.boolq_aux.model
    feats = encode_pairs(AutoTokenizer.from_pretrained(str(model)), [q.question for q in heldout],
                         [q.passage for q in heldout], p.max_seq_len)
    answers = argmax(predict_choice_logits("classification", model, feats, 2, p.eval_batch_size, p.device,
                                   p.precision))
    gold = _labels(heldout)
    majority = majority_label(_labels(fit))
    versus = paired_difference([float(a == g) for a, g in zip(answers, gold, strict=True)],
                               [float(majority == g) for g in gold], clusters=[q.title for q in heldout],
                               unit="article")
    training = training_report(stats)
    report = {
        "file": p.file, "train_questions": stats["train_questions"], "dev_questions": stats["dev_questions"],
        "heldout_questions": len(heldout), "heldout_articles": len({q.title for q in heldout}),
        "accuracy": versus["system_mean"], "majority_answer": "yes" if majority else "no",
        "majority_baseline": versus["baseline_mean"], "majority_paper": BOOLQ_MAJORITY_PAPER,
        "versus_majority": versus, "predicted_yes_share": round(sum(answers) / len(answers), 4),
        "heldout_truncated_share": round(feats.truncated / len(feats), 4), "max_seq_len": p.max_seq_len,
        **training_summary(training),
    }
    return write_scores(PATHS.boolq_aux.report, report, *headlines()[0],
                        {"acc": report["accuracy"], "majority": report["majority_baseline"]}, training)
