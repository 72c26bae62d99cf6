"""``train_quail_mc@<variant>``: the multiple-choice transformer on whole or partial input, trained on the
training share of the dev texts, its checkpoint chosen on texts carved out of that share. Writes the model, its
curves and ``train_report`` (what the evaluate stage and the model card read); predicting and scoring are
stages of their own, so an edit to them retrains nothing."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from pipeline.common.files import write_json
from pipeline.common.layout import PATHS
from pipeline.common.logs import get_logger
from pipeline.quail.data import MCQuestion
from pipeline.quail.mc_model import VARIANTS, encode_questions
from pipeline.quail.sets import quail_sets, split_texts
from pipeline.training.choice_model import choice_dev_set, train_choice_model
from pipeline.training.curves import training_report
from pipeline.training.finetune import TrainConfig, resolve_model_path
from pipeline.launcher.torchrun import TrainingCall, run_training

if TYPE_CHECKING:
    from pipeline.params import Params


@dataclass(frozen=True)
class QuailTraining:
    """The training call, and the questions it fits and selects on."""

    call: TrainingCall
    train: list[MCQuestion]
    dev: list[MCQuestion]


def check_variant(variant: str) -> None:
    if variant not in VARIANTS:
        raise ValueError(f"unknown input variant {variant!r}; one of {', '.join(VARIANTS)}")


def training_call(params: Params, variant: str) -> QuailTraining:
    """The recipe every training process builds the same way (``pipeline.launcher.torchrun``)."""
    from transformers import AutoTokenizer

    check_variant(variant)
    p = params.quail_mc
    _, train = quail_sets(params.quail.train_share, params.quail.seed)
    tokenizer = AutoTokenizer.from_pretrained(resolve_model_path(p.model_name_or_path))
    # the checkpoint is chosen on texts carved out of the training share (by text, per domain, seeded): the
    # held-out dev texts the figures are reported on stay unseen
    fit_texts, _ = split_texts(train, 1 - p.dev_share, p.seed)
    train, dev = [q for q in train if q.text_id in fit_texts], [q for q in train if q.text_id not in fit_texts]
    n_options = len(train[0].options)

    def arguments() -> dict:
        get_logger().info("quail_mc@%s: encoding %d training and %d dev questions x %d options", variant,
                          len(train), len(dev), n_options)
        feats = encode_questions(tokenizer, train, variant, p.max_seq_len)
        dev_set = choice_dev_set("multiple_choice", encode_questions(tokenizer, dev, variant, p.max_seq_len),
                                 [q.answer for q in dev], n_options, p.eval_batch_size)
        return {"head": "multiple_choice", "feats": feats, "labels": [q.answer for q in train], "choices": n_options,
                "cfg": TrainConfig.from_params(p, p.model_name_or_path),
                "fingerprint": {**p.model_dump(), "variant": variant, "train_qids": len(train),
                                "train_share": params.quail.train_share, "split_seed": params.quail.seed},
                "dev": dev_set, "log_dir": PATHS.quail_mc[variant].live}

    call = TrainingCall(train_choice_model, PATHS.quail_mc[variant].model_dir, arguments)
    return QuailTraining(call, train, dev)


def run(params: Params, variant: str) -> dict:
    check_variant(variant)
    prepared, stats = run_training(training_call, params, variant)
    write_json(PATHS.quail_mc[variant].train_report,
               {"variant": variant, "train_questions": len(prepared.train), "dev_questions": len(prepared.dev),
                **training_report(stats)})
    return stats
