"""``train_strategyqa_qa@<setting>``: the yes/no classifier of one setting (question only, retrieved by
question or by decomposition, gold paragraphs, the facts control), its checkpoint chosen on a seeded share of
the training questions, started from the base model or from the auxiliary BoolQ model
(``strategyqa_qa.start_from``). Writes the model, its curves and ``train_report``; predicting and scoring are
stages of their own."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pipeline.common.files import write_json
from pipeline.common.layout import PATHS
from pipeline.common.logs import get_logger
from pipeline.strategyqa.answering import build_inputs, labels
from pipeline.strategyqa.data import StrategyQuestion
from pipeline.stages.strategyqa_setting import load_setting
from pipeline.training.choice_model import choice_dev_set, train_choice_model
from pipeline.training.curves import training_report
from pipeline.training.finetune import TrainConfig, resolve_model_path
from pipeline.launcher.torchrun import launch
from pipeline.training.pair_encoding import encode_pairs

if TYPE_CHECKING:
    from pipeline.params import Params


def _weights_digest(start: str) -> str | None:
    """sha256 of the auxiliary model's weights when training starts from it (None for the base model, named by
    its params): a checkpoint left by a run that started from other auxiliary weights is never resumed."""
    import hashlib

    if start != str(PATHS.boolq_aux.model):
        return None
    digest = hashlib.sha256()
    for path in sorted(PATHS.boolq_aux.model.glob("*.safetensors")):
        digest.update(path.read_bytes())
    return digest.hexdigest()


def start_weights(params: Params) -> str:
    """The weights training starts from: RoBERTa* in the paper is the auxiliary yes/no model (its head included:
    label 1 = yes in both), ``start_from: boolq_aux``; otherwise the section's model."""
    p = params.strategyqa_qa
    return str(PATHS.boolq_aux.model) if p.start_from == "boolq_aux" else p.model_name_or_path


def train(params: Params, setting: str) -> dict:
    """Fit one setting's classifier; run in the stage's process or in every torchrun rank
    (``pipeline.launcher.torchrun``). Returns the training statistics, the question counts and the start."""
    from transformers import AutoTokenizer

    p = params.strategyqa_qa
    data = load_setting(p, setting)
    fit, dev, paragraphs, ranked = data.train, data.dev, data.paragraphs, data.ranked
    start = start_weights(params)
    tokenizer = AutoTokenizer.from_pretrained(resolve_model_path(start))

    def features(questions: list[StrategyQuestion]):
        # dev is carved out of the training questions: their retrieved contexts are under "train"
        first, second = build_inputs(questions, setting, ranked["train"] if ranked else None, paragraphs)
        return encode_pairs(tokenizer, first, second, p.max_seq_len)

    get_logger().info("strategyqa_qa@%s: %d training questions, %d dev questions for checkpoint selection",
                      setting, len(fit), len(dev))
    dev_set = choice_dev_set("classification", features(dev), labels(dev), 2, p.eval_batch_size)
    stats = train_choice_model(
        "classification", features(fit), labels(fit), 2, TrainConfig.from_params(p.budget_for(setting), start),
        PATHS.strategyqa_qa[setting].model_dir,
        {**p.model_dump(exclude={"parallel_runs"}), "setting": setting, "train_questions": len(fit), "train_sha256": data.train_sha256,
         "start_weights": _weights_digest(start)},
        label_names=("no", "yes"),  # label 1 = answer True
        dev=dev_set, log_dir=PATHS.strategyqa_qa[setting].live)
    return {**stats, "start": start, "train_questions": len(fit), "dev_questions": len(dev)}


def run(params: Params, setting: str) -> dict:
    stats = launch(train, params, setting, PATHS.strategyqa_qa[setting].model_dir)
    write_json(PATHS.strategyqa_qa[setting].train_report, {"setting": setting, **training_report(stats)})
    return stats
