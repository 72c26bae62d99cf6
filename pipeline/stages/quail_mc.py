"""``quail_mc@<variant>``: the multiple-choice transformer on whole or partial input, trained on the training
share of the dev texts and scored on the held-out dev texts and the challenge set."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TYPE_CHECKING

from pipeline.common.headline import dev_figures, write_headline
from pipeline.common.layout import PATHS
from pipeline.common.files import write_json
from pipeline.common.logs import get_logger
from pipeline.quail.data import MCQuestion
from pipeline.quail.mc_model import VARIANTS, encode_questions, split_texts
from pipeline.quail.report import accuracy_table
from pipeline.quail.sets import heldout_dev, quail_sets
from pipeline.training.choice_model import (
    argmax,
    choice_dev_set,
    predict_choice_logits,
    train_choice_model,
)
from pipeline.training.curves import training_summary
from pipeline.training.finetune import TrainConfig, resolve_model_path
from pipeline.training.launch import TrainingCall, run_training

if TYPE_CHECKING:
    from pipeline.params import Params


@dataclass(frozen=True)
class QuailTraining:
    """The training call, and what scoring needs after it."""

    call: TrainingCall
    tokenizer: Any
    sets: dict[str, list[MCQuestion]]
    train: list[MCQuestion]
    dev: list[MCQuestion]
    n_options: int


def training_call(params: Params, variant: str) -> QuailTraining:
    """The recipe every training process builds the same way (``pipeline.training.launch``)."""
    from transformers import AutoTokenizer

    if variant not in VARIANTS:
        raise ValueError(f"unknown input variant {variant!r}; one of {', '.join(VARIANTS)}")
    p = params.quail_mc
    sets, train = quail_sets(params.quail.train_share, params.quail.seed)
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
    return QuailTraining(call, tokenizer, sets, train, dev, n_options)


def run(params: Params, variant: str) -> dict:
    if variant not in VARIANTS:
        raise ValueError(f"unknown input variant {variant!r}; one of {', '.join(VARIANTS)}")
    p = params.quail_mc
    out = PATHS.quail_mc[variant]
    prepared, stats = run_training(training_call, params, variant)
    sets, train, dev, tokenizer, n_options = (prepared.sets, prepared.train, prepared.dev, prepared.tokenizer,
                                              prepared.n_options)
    heldout = heldout_dev(sets, train + dev)  # the whole training share: fit and checkpoint-selection texts
    evaluated = {"dev_heldout": heldout, "challenge": sets["challenge"]}
    predictions, results = {}, {}
    for name, questions in evaluated.items():
        get_logger().info("quail_mc@%s: scoring %d %s questions", variant, len(questions), name)
        eval_feats = encode_questions(tokenizer, questions, variant, p.max_seq_len)
        logits = predict_choice_logits("multiple_choice", out.model, eval_feats, n_options,
                                       p.eval_batch_size, p.device)
        predictions[name] = dict(zip((q.qid for q in questions), argmax(logits), strict=True))
        picked = list(predictions[name].values())
        results[name] = {**accuracy_table(questions, predictions[name]),
                         "truncated_share": round(eval_feats.truncated / len(eval_feats), 4),
                         # a model stuck on one option index shows here (answers are at random positions)
                         "predicted_option_shares": [round(picked.count(i) / len(picked), 4) for i in range(n_options)]}
        print(variant, name, results[name]["all"])
    write_json(out.predictions, predictions, indent=None)
    metrics = {"variant": variant, "train_questions": len(train), "dev_questions": len(dev),
               "max_seq_len": p.max_seq_len, **results, **training_summary(stats)}
    write_json(out.report, metrics)
    write_headline("quail", f"mc_{variant}", {"acc": results["dev_heldout"]["all"],
                                              "acc_challenge": results.get("challenge", {}).get("all"),
                                              **dev_figures(stats)})
    return metrics
