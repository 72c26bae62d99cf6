"""``train_boolq_aux``: the auxiliary yes/no classifier on a BoolQ-format file, before StrategyQA.

The StrategyQA paper's RoBERTa* is fine-tuned on DROP, 20 Questions and BoolQ before StrategyQA, and without
that chain its RoBERTa is at the majority (Table 9: IR-Q 53.6 against 53.9). This stage is the BoolQ link of
that chain: the same sentence-pair classifier as the StrategyQA settings (question, passage; label 1 = yes), its
checkpoint chosen on articles carved out of the training part, its own accuracy reported on held-out articles
beside the majority answer with a paired interval that resamples articles (questions on one article share its
passages). ``strategyqa_qa.start_from: boolq_aux`` starts every StrategyQA classifier from it.

Over seeds (``boolq_aux.seeds``, ``pipeline.common.seed_runs``): each seed is one training run on the same
split (the head's initial weights and the batch order differ; the articles held out and those the checkpoint is
chosen on stay the split's, drawn by ``seed``), the first seed's model at ``final/`` and the others' under
``seeds/<seed>/``. The accuracy is the mean over runs beside each run's and their SD; with several runs the
interval against the majority resamples both the runs and the held-out articles
(``pipeline.common.paired_seeds``). StrategyQA starts from the first seed's model, the reference run: the
auxiliary chain is a starting point trained once before StrategyQA, and its own spread is reported here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pipeline.common.headline import spread_name
from pipeline.common.layout import PATHS
from pipeline.common.logs import get_logger
from pipeline.common.model_card import ModelCard
from pipeline.common.paired import paired_difference
from pipeline.common.paired_seeds import paired_difference_over_seeds
from pipeline.common.scoring import write_scores
from pipeline.common.seed_runs import SEEDS_DIR, prepare_runs, run_dir, spread
from pipeline.strategyqa.answering import majority_label
from pipeline.strategyqa.boolq import BoolQuestion, load_boolq, split_by_title
from pipeline.training.choice_model import argmax, choice_dev_set, predict_choice_logits, train_choice_model
from pipeline.training.curves import training_report, training_summary
from pipeline.training.finetune import TrainConfig
from pipeline.training.model_names import resolve_model_path
from pipeline.launcher.parallel_seeds import train_each_seed
from pipeline.training.pair_encoding import encode_pairs

if TYPE_CHECKING:
    from pipeline.params import Params

BOOLQ_MAJORITY_PAPER = 62.2  # Clark et al. (2019): the share of "yes" on BoolQ dev, the majority baseline


def headlines() -> list[tuple[str, str]]:
    """The headline rows this stage writes, ``(track, system)`` of ``metrics/<track>/<system>.json``: the write
    below and dvc.yaml's outs (``python -m pipeline.experiments.stage_deps``) both come from it."""
    return [("strategyqa", "boolq_aux"), ("strategyqa", spread_name("boolq_aux"))]


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


def _run_dir(params: Params, seed: int):
    return run_dir(PATHS.boolq_aux.model_dir, params.boolq_aux.seeds, seed)


def _live_dir(params: Params, seed: int):
    """The reference run's curves where DVC's plots read them; each other seed's beside them."""
    live = PATHS.boolq_aux.live
    return live if seed == params.boolq_aux.seed else live / SEEDS_DIR / str(seed)


def train(params: Params, variant: str = "boolq", seed: int | None = None) -> dict:
    """Fit the classifier under one seed (default: the reference run's); run in the stage's process, in a seed
    process of its own or in every torchrun rank (``pipeline.launcher``). Returns the training statistics and
    the question counts."""
    from transformers import AutoTokenizer

    p = params.boolq_aux
    seed = p.seed if seed is None else seed
    fit, dev, heldout = boolq_sets(params)
    tokenizer = AutoTokenizer.from_pretrained(resolve_model_path(p.model_name_or_path))

    def features(questions: list[BoolQuestion]):
        return encode_pairs(tokenizer, [q.question for q in questions], [q.passage for q in questions], p.max_seq_len)

    get_logger().info("boolq_aux seed %d: %d training, %d dev and %d held-out questions", seed, len(fit), len(dev),
                      len(heldout))
    dev_set = choice_dev_set("classification", features(dev), _labels(dev), 2, p.eval_batch_size)
    stats = train_choice_model(
        "classification", features(fit), _labels(fit), 2, TrainConfig.from_params(p, p.model_name_or_path, seed=seed),
        _run_dir(params, seed),
        {**p.model_dump(exclude={"parallel_runs", "seeds"}), "seed": seed, "train_questions": len(fit)},
        label_names=("no", "yes"),  # label 1 = yes, as the StrategyQA classifiers
        dev=dev_set, log_dir=_live_dir(params, seed), pooling=p.pooling,
        class_balance=p.class_balance)
    return {**stats, "seed": seed, "train_questions": len(fit), "dev_questions": len(dev)}


def run(params: Params) -> dict:
    from transformers import AutoTokenizer

    p = params.boolq_aux
    prepare_runs(PATHS.boolq_aux.model_dir, PATHS.boolq_aux.live, p.seeds)
    every = train_each_seed(train, params, "boolq", p, lambda seed: _run_dir(params, seed))
    fit, _, heldout = boolq_sets(params)
    feats = encode_pairs(AutoTokenizer.from_pretrained(str(PATHS.boolq_aux.model)), [q.question for q in heldout],
                         [q.passage for q in heldout], p.max_seq_len)
    gold = _labels(heldout)
    majority = majority_label(_labels(fit))
    answers = [argmax(predict_choice_logits("classification", _run_dir(params, seed) / "final", feats, 2,
                                            p.eval_batch_size, p.device, p.precision)) for seed in p.seeds]
    correct = [[float(a == g) for a, g in zip(run_answers, gold, strict=True)] for run_answers in answers]
    by_majority = [float(majority == g) for g in gold]
    clusters = [q.title for q in heldout]
    if len(correct) == 1:
        versus = paired_difference(correct[0], by_majority, clusters=clusters, unit="article")
    else:
        versus = paired_difference_over_seeds(correct, [by_majority], clusters=clusters, unit="article")
    over_seeds = spread([100 * sum(c) / len(c) for c in correct])
    runs = [training_report(stats) for stats in every]
    training = {**runs[0], "runs": runs}
    every_answer = [a for run_answers in answers for a in run_answers]
    report = {
        "file": p.file, "seeds": list(p.seeds), "train_questions": every[0]["train_questions"],
        "dev_questions": every[0]["dev_questions"],
        "heldout_questions": len(heldout), "heldout_articles": len(set(clusters)),
        "accuracy": over_seeds["mean"], "over_seeds": over_seeds, "majority_answer": "yes" if majority else "no",
        "majority_baseline": versus["baseline_mean"], "majority_paper": BOOLQ_MAJORITY_PAPER,
        "versus_majority": versus, "predicted_yes_share": round(sum(every_answer) / len(every_answer), 4),
        "heldout_truncated_share": round(feats.truncated / len(feats), 4), "max_seq_len": p.max_seq_len,
        **training_summary(runs[0]),
        "training_per_seed": [{"seed": r["seed"], **training_summary(r)} for r in runs],
    }
    metric = runs[0]["select_metric"]
    dev = {k: spread([r[k][metric] for r in runs])["mean"] for k in ("dev_best", "dev_last")}
    return write_scores(PATHS.boolq_aux.report, report, *headlines()[0],
                        {"acc": report["accuracy"], "majority": report["majority_baseline"]},
                        {**training, **{k: {metric: v} for k, v in dev.items()}}, {"acc": over_seeds["sd"]})
