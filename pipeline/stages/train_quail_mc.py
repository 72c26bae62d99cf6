"""``train_quail_mc@<variant>``: the multiple-choice transformer on whole or partial input, trained on the
training share of the dev texts, its checkpoint chosen on texts carved out of that share, once per seed of
``quail_mc.seeds`` (``pipeline.common.seed_runs``: the first seed's model is ``final/``, the others' under
``seeds/<seed>/``). Writes the models, their curves and ``train_report`` (each run's statistics, what the
evaluate stage and the model card read); predicting and scoring are stages of their own, so an edit to them
retrains nothing."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pipeline.common.files import write_json
from pipeline.common.layout import PATHS
from pipeline.common.logs import get_logger
from pipeline.common.seed_runs import SEEDS_DIR, prepare_runs, run_dir
from pipeline.quail.data import MCQuestion
from pipeline.quail.mc_model import VARIANTS, encode_questions
from pipeline.quail.sets import quail_sets, split_texts
from pipeline.training.choice_model import choice_dev_set, train_choice_model
from pipeline.training.curves import training_report
from pipeline.training.finetune import TrainConfig
from pipeline.training.model_names import resolve_model_path
from pipeline.launcher.parallel_seeds import train_each_seed

if TYPE_CHECKING:
    from pipeline.params import Params


def check_variant(variant: str) -> None:
    if variant not in VARIANTS:
        raise ValueError(f"unknown input variant {variant!r}; one of {', '.join(VARIANTS)}")


def fit_and_select(params: Params, seed: int | None = None) -> tuple[list[MCQuestion], list[MCQuestion]]:
    """The questions the model fits and the ones its checkpoint is chosen on: texts carved out of the training
    share (by text, per domain, drawn with the run's seed: which texts choose the checkpoint is part of what a
    run draws), so the held-out dev texts the figures are reported on stay unseen."""
    _, train = quail_sets(params.quail.train_share, params.quail.seed, params.quail.exclude_from_heldout)
    fit_texts, _ = split_texts(train, 1 - params.quail_mc.dev_share,
                               params.quail_mc.seed if seed is None else seed)
    return [q for q in train if q.text_id in fit_texts], [q for q in train if q.text_id not in fit_texts]


def train(params: Params, variant: str, seed: int | None = None) -> dict:
    """Fit one variant under one seed (default: the reference run's); run in the stage's process or in every
    torchrun rank (``pipeline.launcher.torchrun``). Returns the training statistics and the question counts."""
    from transformers import AutoTokenizer

    check_variant(variant)
    p = params.quail_mc
    seed = p.seed if seed is None else seed
    fit, dev = fit_and_select(params, seed)
    tokenizer = AutoTokenizer.from_pretrained(resolve_model_path(p.model_name_or_path))
    n_options = len(fit[0].options)
    get_logger().info("quail_mc@%s seed %d: encoding %d training and %d dev questions x %d options", variant, seed,
                      len(fit), len(dev), n_options)
    dev_set = choice_dev_set("multiple_choice", encode_questions(tokenizer, dev, variant, p.max_seq_len),
                             [q.answer for q in dev], n_options, p.eval_batch_size)
    stats = train_choice_model(
        "multiple_choice", encode_questions(tokenizer, fit, variant, p.max_seq_len), [q.answer for q in fit],
        n_options, TrainConfig.from_params(p, p.model_name_or_path, seed=seed), _run_dir(params, variant, seed),
        {**p.model_dump(exclude={"seeds", "parallel_runs"}), "seed": seed, "variant": variant, "train_qids": len(fit),
         "train_share": params.quail.train_share, "split_seed": params.quail.seed},
        dev=dev_set, log_dir=_live_dir(params, variant, seed), pooling=p.pooling)
    return {**stats, "seed": seed, "train_questions": len(fit), "dev_questions": len(dev)}


def _run_dir(params: Params, variant: str, seed: int):
    return run_dir(PATHS.quail_mc[variant].model_dir, params.quail_mc.seeds, seed)


def _live_dir(params: Params, variant: str, seed: int):
    """The reference run's curves where DVC's plots read them; each other seed's beside them."""
    live = PATHS.quail_mc[variant].live
    return live if seed == params.quail_mc.seed else live / SEEDS_DIR / str(seed)


def run(params: Params, variant: str) -> dict:
    """Every seed: in turn, or ``parallel_runs`` at a time on a CPU (``pipeline.launcher.parallel_seeds``). A
    killed stage resumes its unfinished seeds from their last checkpoints (DVC keeps ``seeds/`` and the first
    seed's checkpoints beside its ``final/`` while it reruns the stage); a finished seed trains again."""
    check_variant(variant)
    prepare_runs(PATHS.quail_mc[variant].model_dir, PATHS.quail_mc[variant].live, params.quail_mc.seeds)
    every = train_each_seed(train, params, variant, params.quail_mc, lambda seed: _run_dir(params, variant, seed))
    first, runs = every[0], [training_report(stats) for stats in every]
    write_json(PATHS.quail_mc[variant].train_report, {"variant": variant, **runs[0], "runs": runs})
    return {**first, "runs": len(runs)}  # the reference run's statistics (its speed too), for the flow's log
