"""``train_strategyqa_qa@<setting>``: the yes/no classifier of one setting (question only, retrieved by
question or by decomposition, gold paragraphs, the facts control), its checkpoint chosen on a seeded share of
the training questions, started from the base model or from the auxiliary BoolQ model
(``strategyqa_qa.start_from``), once per seed of ``strategyqa_qa.seeds`` (the facts control and question-only:
``strategyqa_qa.control_seeds``; ``pipeline.common.seed_runs``: the
first seed's model is ``final/``, the others' under ``seeds/<seed>/``; the paper reports each accuracy over 7
runs). Writes the models, their curves and ``train_report`` (each run's statistics); predicting and scoring
are stages of their own."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pipeline.common.files import write_json
from pipeline.common.layout import PATHS
from pipeline.common.logs import get_logger
from pipeline.common.seed_runs import SEEDS_DIR, prepare_runs, run_dir
from pipeline.strategyqa.answering import build_inputs, labels
from pipeline.strategyqa.data import StrategyQuestion
from pipeline.stages.strategyqa_setting import load_setting
from pipeline.training.choice_model import choice_dev_set, train_choice_model
from pipeline.training.curves import training_report
from pipeline.training.finetune import TrainConfig
from pipeline.training.model_names import resolve_model_path
from pipeline.launcher.parallel_seeds import train_each_seed
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
    """The weights training starts from: RoBERTa* in the paper is the auxiliary yes/no model, ``start_from:
    boolq_aux``; otherwise the section's model."""
    p = params.strategyqa_qa
    return str(PATHS.boolq_aux.model) if p.start_from == "boolq_aux" else p.model_name_or_path


def fresh_head(params: Params) -> bool:
    """Whether the start model's head is drawn anew (``start_head: reset``, from the auxiliary model): its encoder
    is carried over, its label prior (BoolQ's "yes") is not. The base model has no trained head to keep."""
    p = params.strategyqa_qa
    return p.start_from == "boolq_aux" and p.start_head == "reset"


def train(params: Params, setting: str, seed: int | None = None) -> dict:
    """Fit one setting's classifier under one seed (default: the reference run's); run in the stage's process,
    in a seed process of its own or in every torchrun rank (``pipeline.launcher``). The seed also draws which
    training questions choose the checkpoint. Returns the training statistics, the question counts and the
    start."""
    from transformers import AutoTokenizer

    p = params.strategyqa_qa
    seed = p.seeds_for(setting)[0] if seed is None else seed
    data = load_setting(p, setting, seed)
    fit, dev, paragraphs, ranked = data.train, data.dev, data.paragraphs, data.ranked
    start = start_weights(params)
    tokenizer = AutoTokenizer.from_pretrained(resolve_model_path(start))

    def features(questions: list[StrategyQuestion]):
        # dev is carved out of the training questions: their retrieved contexts are under "train"
        first, second = build_inputs(questions, setting, ranked["train"] if ranked else None, paragraphs)
        return encode_pairs(tokenizer, first, second, p.max_seq_len)

    get_logger().info("strategyqa_qa@%s seed %d: %d training questions, %d dev questions for checkpoint selection",
                      setting, seed, len(fit), len(dev))
    dev_set = choice_dev_set("classification", features(dev), labels(dev), 2, p.eval_batch_size)
    stats = train_choice_model(
        "classification", features(fit), labels(fit), 2,
        TrainConfig.from_params(p.budget_for(setting), start, seed=seed), _run_dir(params, setting, seed),
        {**p.model_dump(exclude={"seeds", "parallel_runs"}), "seed": seed, "setting": setting,
         "train_questions": len(fit), "train_sha256": data.train_sha256, "start_weights": _weights_digest(start)},
        label_names=("no", "yes"),  # label 1 = answer True
        dev=dev_set, log_dir=_live_dir(params, setting, seed), fresh_head=fresh_head(params), pooling=p.pooling,
        class_balance=p.class_balance)
    return {**stats, "seed": seed, "start": start, "train_questions": len(fit), "dev_questions": len(dev)}


def _run_dir(params: Params, setting: str, seed: int):
    return run_dir(PATHS.strategyqa_qa[setting].model_dir, params.strategyqa_qa.seeds_for(setting), seed)


def _live_dir(params: Params, setting: str, seed: int):
    """The reference run's curves where DVC's plots read them; each other seed's beside them."""
    live = PATHS.strategyqa_qa[setting].live
    return live if seed == params.strategyqa_qa.seeds_for(setting)[0] else live / SEEDS_DIR / str(seed)


def run(params: Params, setting: str) -> dict:
    """Every seed: in turn, or ``parallel_runs`` at a time on a CPU (``pipeline.launcher.parallel_seeds``). A
    killed stage resumes its unfinished seeds from their last checkpoints."""
    p = params.strategyqa_qa.budget_for(setting)  # the control pair's own seeds (strategyqa_qa.control_seeds)
    prepare_runs(PATHS.strategyqa_qa[setting].model_dir, PATHS.strategyqa_qa[setting].live, p.seeds)
    every = train_each_seed(train, params, setting, p, lambda seed: _run_dir(params, setting, seed))
    runs = [training_report(stats) for stats in every]
    write_json(PATHS.strategyqa_qa[setting].train_report, {"setting": setting, **runs[0], "runs": runs})
    return {**every[0], "runs": len(runs)}  # the reference run's statistics, for the flow's log
