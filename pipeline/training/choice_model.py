"""Fine-tune and apply a model that picks one of a few labels: yes/no classification (StrategyQA) or one
of four options (QuAIL). Both come out as logits ``(examples, labels)``, so training, prediction and the
argmax are one piece of code over the shared loop in ``pipeline.training.finetune``."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import torch

from pipeline.training.class_balance import balanced_index
from pipeline.training.config import ClassBalance, Pooling
from pipeline.training.finetune import DevSet, TrainConfig, data_digest, fine_tune
from pipeline.training.batches import model_outputs, predict_batches
from pipeline.training.pair_encoding import PairFeatures, collate_pairs
from pipeline.training.pooling import PooledModel

Head = Literal["classification", "multiple_choice"]


def _auto_class(head: Head, pooling: Pooling | None = None) -> PooledModel:
    """The transformers auto class of ``head``, loading with ``pooling`` (``None``: as the saved model says)."""
    from transformers import (
        AutoModelForMultipleChoice,
        AutoModelForSequenceClassification,
    )

    auto = AutoModelForSequenceClassification if head == "classification" else AutoModelForMultipleChoice
    return PooledModel(auto, pooling)


def train_choice_model(head: Head, feats: PairFeatures, labels: list[int], choices: int, cfg: TrainConfig,
                       out_dir: Path, fingerprint: dict[str, Any],
                       label_names: tuple[str, ...] | None = None, dev: DevSet | None = None,
                       log_dir: Path | None = None, fresh_head: bool = False,
                       pooling: Pooling = "pooler", class_balance: ClassBalance = "none") -> dict[str, Any]:
    """``choices``: options per example for multiple choice; the number of classes for classification.
    ``fresh_head``: new head weights on the start model's encoder (``pipeline.training.finetune.reinit_head``).
    ``pooling``: what the head reads from the encoder (``pipeline.training.pooling``), saved with the model.
    ``class_balance``: how a classifier's examples are drawn (``pipeline.training.class_balance``).
    ``label_names`` go into the saved config (``id2label``), so ``transformers.pipeline("text-classification")``
    answers with them ("yes"/"no") instead of LABEL_0/LABEL_1."""
    per_row = choices if head == "multiple_choice" else 1
    n = len(feats) // per_row
    if n != len(labels):
        raise ValueError(f"{n} encoded examples but {len(labels)} labels")
    if class_balance != "none" and head != "classification":
        raise ValueError(f"class_balance {class_balance!r} is for a classifier: a multiple-choice label is an "
                         "option's position, not an answer with a prior")
    drawn = balanced_index(labels, class_balance)

    def make_batch(idx: list[int], tokenizer, types: bool) -> dict[str, torch.Tensor]:
        return collate_pairs(feats, [drawn[i] for i in idx], tokenizer.pad_token_id, types, labels, per_row)

    kwargs: dict[str, Any] = {"num_labels": choices} if head == "classification" else {}
    if head == "classification" and label_names:
        if len(label_names) != choices:
            raise ValueError(f"{len(label_names)} label names for {choices} classes")
        kwargs |= {"id2label": dict(enumerate(label_names)), "label2id": {n: i for i, n in enumerate(label_names)}}
    fingerprint = {**fingerprint, "training_data": data_digest(feats.input_ids, labels)}
    if pooling != "pooler":  # the pooler's runs keep the fingerprint they had before the choice existed
        fingerprint["pooling"] = pooling
    if class_balance != "none":  # likewise: runs without resampling keep their fingerprint
        fingerprint["class_balance"] = class_balance
    stats = fine_tune(_auto_class(head, pooling), len(drawn), make_batch, cfg, out_dir, fingerprint, model_kwargs=kwargs, dev=dev,
                      log_dir=log_dir, fresh_head=fresh_head)
    return {**stats, "train_examples": n, **({"drawn_examples": len(drawn)} if len(drawn) != n else {})}


def _unlabelled(feats: PairFeatures, per_row: int):
    def make_batch(idx: list[int], tokenizer, types: bool) -> dict[str, torch.Tensor]:
        return collate_pairs(feats, idx, tokenizer.pad_token_id, types, None, per_row)

    return make_batch


def predict_choice_logits(head: Head, model_dir: Path, feats: PairFeatures, choices: int, batch_size: int,
                          device: str, precision: str, cpu_threads: int | None = None) -> list[list[float]]:
    per_row = choices if head == "multiple_choice" else 1
    out: list[list[float]] = []
    for _, result in predict_batches(_auto_class(head), model_dir, len(feats) // per_row,
                                     _unlabelled(feats, per_row), batch_size, device, precision, cpu_threads):
        out += result.logits.float().cpu().tolist()
    return out


def binary_figures(logits: list[list[float]], labels: list[int]) -> dict[str, float]:
    """A yes/no model's dev AUC (%, the Mann-Whitney form: the chance that a random "yes" question scores above a
    random "no" one, ties half) and its log-loss (nats), from its two logits per question. Why beside accuracy: a
    model that answers every question with the majority ties or beats a learning one on accuracy for a long
    stretch of training, so selection by accuracy with ties kept early picks the constant; a constant's AUC is
    exactly 50 and a better ranking beats it. scipy, not scikit-learn: the offline GPU node has no scikit-learn."""
    from scipy.stats import rankdata

    margins = [row[1] - row[0] for row in logits]  # log-odds of class 1
    positives = sum(labels)
    negatives = len(labels) - positives
    if positives == 0 or negatives == 0:
        auc = 0.5
    else:
        ranks = rankdata(margins)
        auc = (sum(r for r, y in zip(ranks, labels, strict=True) if y == 1) - positives * (positives + 1) / 2) / (
            positives * negatives)
    loss = 0.0
    for m, y in zip(margins, labels, strict=True):
        z = m if y == 1 else -m  # -log sigmoid(z), computed stably
        loss += math.log1p(math.exp(-z)) if z > 0 else -z + math.log1p(math.exp(z))
    return {"auc": 100.0 * float(auc), "log_loss": loss / len(labels)}


@dataclass(frozen=True)
class ChoiceDevEvaluation:
    """Dev accuracy (%) of the weights in training, by the same argmax the stage predicts with; for a yes/no
    model also its AUC and log-loss (:func:`binary_figures`), which ``select_metric`` may choose by."""

    feats: PairFeatures
    labels: list[int]
    per_row: int
    batch_size: int

    def __call__(self, model, tokenizer) -> dict[str, float]:
        logits: list[list[float]] = []
        for _, result in model_outputs(model, tokenizer, len(self.labels), _unlabelled(self.feats, self.per_row),
                                       self.batch_size):
            logits += result.logits.float().cpu().tolist()
        right = sum(p == y for p, y in zip(argmax(logits), self.labels, strict=True))
        figures = {"accuracy": 100.0 * right / len(self.labels)}
        if self.per_row == 1 and logits and len(logits[0]) == 2:
            figures |= binary_figures(logits, self.labels)
        return figures


def choice_dev_set(head: Head, feats: PairFeatures, labels: list[int], choices: int, batch_size: int) -> DevSet:
    per_row = choices if head == "multiple_choice" else 1
    if len(feats) // per_row != len(labels):
        raise ValueError(f"{len(feats) // per_row} encoded dev examples but {len(labels)} labels")
    return DevSet(ChoiceDevEvaluation(feats, labels, per_row, batch_size), len(labels))


def argmax(logits: list[list[float]]) -> list[int]:
    return [max(range(len(row)), key=lambda i: (row[i], -i)) for row in logits]
