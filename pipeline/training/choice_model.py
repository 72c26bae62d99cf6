"""Fine-tune and apply a model that picks one of a few labels: yes/no classification (StrategyQA) or one
of four options (QuAIL). Both come out as logits ``(examples, labels)``, so training, prediction and the
argmax are one piece of code over the shared loop in ``pipeline.training.finetune``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import torch

from pipeline.training.finetune import DevSet, TrainConfig, data_digest, fine_tune, model_outputs, predict_batches
from pipeline.training.pair_encoding import PairFeatures, collate_pairs

Head = Literal["classification", "multiple_choice"]


def _auto_class(head: Head):
    from transformers import (
        AutoModelForMultipleChoice,
        AutoModelForSequenceClassification,
    )

    return AutoModelForSequenceClassification if head == "classification" else AutoModelForMultipleChoice


def train_choice_model(head: Head, feats: PairFeatures, labels: list[int], choices: int, cfg: TrainConfig,
                       out_dir: Path, fingerprint: dict[str, Any],
                       label_names: tuple[str, ...] | None = None, dev: DevSet | None = None,
                       log_dir: Path | None = None) -> dict[str, Any]:
    """``choices``: options per example for multiple choice; the number of classes for classification.
    ``label_names`` go into the saved config (``id2label``), so ``transformers.pipeline("text-classification")``
    answers with them ("yes"/"no") instead of LABEL_0/LABEL_1."""
    per_row = choices if head == "multiple_choice" else 1
    n = len(feats) // per_row
    if n != len(labels):
        raise ValueError(f"{n} encoded examples but {len(labels)} labels")

    def make_batch(idx: list[int], tokenizer, types: bool) -> dict[str, torch.Tensor]:
        return collate_pairs(feats, idx, tokenizer.pad_token_id, types, labels, per_row)

    kwargs: dict[str, Any] = {"num_labels": choices} if head == "classification" else {}
    if head == "classification" and label_names:
        if len(label_names) != choices:
            raise ValueError(f"{len(label_names)} label names for {choices} classes")
        kwargs |= {"id2label": dict(enumerate(label_names)), "label2id": {n: i for i, n in enumerate(label_names)}}
    fingerprint = {**fingerprint, "training_data": data_digest(feats.input_ids, labels)}
    stats = fine_tune(_auto_class(head), n, make_batch, cfg, out_dir, fingerprint, model_kwargs=kwargs, dev=dev,
                      log_dir=log_dir)
    return {**stats, "train_examples": n}


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


@dataclass(frozen=True)
class ChoiceDevEvaluation:
    """Dev accuracy (%) of the weights in training, by the same argmax the stage predicts with. """

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
        return {"accuracy": 100.0 * right / len(self.labels)}


def choice_dev_set(head: Head, feats: PairFeatures, labels: list[int], choices: int, batch_size: int) -> DevSet:
    per_row = choices if head == "multiple_choice" else 1
    if len(feats) // per_row != len(labels):
        raise ValueError(f"{len(feats) // per_row} encoded dev examples but {len(labels)} labels")
    return DevSet(ChoiceDevEvaluation(feats, labels, per_row, batch_size), len(labels))


def argmax(logits: list[list[float]]) -> list[int]:
    return [max(range(len(row)), key=lambda i: (row[i], -i)) for row in logits]
