"""Every DVC stage's work, in one table below every runner: ``python -m flows.stage NAME`` (Prefect, what
dvc.yaml's commands run), the offline GPU node (``pipeline.offline.node``, no Prefect, no DVC), the bundle that
packs the node's stages, and ``stage_deps`` (which writes each stage's code deps from the module named here).

A stage's work is ``pipeline.stages.<module>.<function>(params, *args[, variant])``. Importing this file imports
no stage, no Prefect and no torch: a runner imports the one work module it runs (:func:`work`).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Stage:
    """One DVC stage's work: ``pipeline.stages.<module>.<function>(params, *args[, variant])``."""

    module: str
    function: str = "run"
    args: tuple[str, ...] = ()
    variants: str | None = None  # "package.module:NAME" of the values a foreach stage passes
    retry_delays_s: tuple[int, ...] = ()  # one retry per delay, for failures flows' is_transient accepts
    why_retry: str = ""
    trains: bool = False  # trains, predicts with or scores a model: the offline GPU node runs it
    after: str | None = None  # a training stage whose model this one may start from: the node redoes them together
    card: str | None = None  # "package.module:function" giving the card of the model this stage scores (model_cards)

    @property
    def work_module(self) -> str:
        return f"pipeline.stages.{self.module}"


STRATEGYQA_SETTINGS = "pipeline.strategyqa.answering:SETTINGS"
QUAIL_VARIANTS = "pipeline.quail.systems:MC_VARIANTS"
# the stage that scores a model describes it (its card's text, beside its headlines()); written in full here so
# that model_cards, which reads this table, has these modules among its code deps
SPAN_CARD = "pipeline.stages.evaluate_span_qa:card"
STRATEGYQA_CARD = "pipeline.stages.evaluate_strategyqa_qa:card"
QUAIL_CARD = "pipeline.stages.evaluate_quail_mc:card"

STAGES: dict[str, Stage] = {
    "check_params": Stage("check_params"),
    "sample": Stage("sample"),
    "discover": Stage("discover", retry_delays_s=(10, 60, 300),
                      why_retry="a CDX outage or a 429 can pass: the query is retried (pywb restarted with it)"),
    "crawl": Stage("crawl"),  # Scrapy retries each request; a rerun resumes
    "extract": Stage("extract"),
    "build_nlquad": Stage("build_nlquad"),
    "wiki_paragraphs": Stage("wiki_paragraphs"),
    "index": Stage("index", retry_delays_s=(30, 120),
                   why_retry="a dropped connection or a 429 mid-bulk can pass; the alias swap makes a retry safe"),
    "retrieve": Stage("retrieve"),
    "split": Stage("split"),
    "nlquad_baselines": Stage("nlquad_baselines"),
    "train_span": Stage("train_span_qa", args=("span_window",), trains=True),
    "predict_span": Stage("predict_span_qa", args=("span_window",), trains=True),
    # the control on shuffled questions: the same runs, each question replaced by another of its article
    "predict_span_shuffled": Stage("predict_span_shuffled", args=("span_window",), trains=True),
    "evaluate_span": Stage("evaluate_span_qa", args=("span_window",), trains=True, card=SPAN_CARD),
    "convert_longformer": Stage("convert_longformer", trains=True),
    "train_longformer": Stage("train_span_qa", args=("longformer",), trains=True),
    "predict_longformer": Stage("predict_span_qa", args=("longformer",), trains=True),
    "evaluate_longformer": Stage("evaluate_span_qa", args=("longformer",), trains=True, card=SPAN_CARD),
    "nlquad_f1_iou": Stage("nlquad_f1_iou", trains=True),  # NLQuAD's metric finding over every span system
    "benchmark_sources": Stage("benchmark_sources"),
    "train_boolq_aux": Stage("train_boolq_aux", trains=True, card="pipeline.stages.train_boolq_aux:card"),
    "strategyqa_contexts": Stage("strategyqa_contexts"),
    **{f"{step}_strategyqa_qa": Stage(f"{step}_strategyqa_qa", variants=STRATEGYQA_SETTINGS, trains=True,
                                      after="train_boolq_aux" if step == "train" else None,
                                      card=STRATEGYQA_CARD if step == "evaluate" else None)
       for step in ("train", "predict", "evaluate")},
    "strategyqa_cv": Stage("strategyqa_cv", trains=True),
    "strategyqa_bow": Stage("strategyqa_bow"),  # the bag-of-words question-only control
    "quail_baselines": Stage("quail_baselines"),
    **{f"{step}_quail_mc": Stage(f"{step}_quail_mc", variants=QUAIL_VARIANTS, trains=True,
                                 card=QUAIL_CARD if step == "evaluate" else None)
       for step in ("train", "predict", "evaluate")},
    "difficulty": Stage("difficulty"),
    "compare": Stage("compare", trains=True),  # the systems against their baselines, from the node's figures
    "model_cards": Stage("model_cards"),
}
FULL_CHECK = "check_params"  # the one stage that validates the whole file


def variant_choices(stage: Stage) -> tuple[str, ...]:
    """The values of a foreach stage (the StrategyQA settings, the QuAIL input variants); () for the others."""
    if stage.variants is None:
        return ()
    module, _, attr = stage.variants.partition(":")
    return tuple(getattr(importlib.import_module(module), attr))


def expanded(names: list[str] | None = None) -> list[str]:
    """DVC's stage names in this table's order, a foreach stage once per value (``train_quail_mc@full``)."""
    out = []
    for name in names or list(STAGES):
        choices = variant_choices(STAGES[name])
        out += [f"{name}@{v}" for v in choices] if choices else [name]
    return out


def trained_stages() -> list[str]:
    """What the offline GPU node runs, in order: every stage that trains, predicts with or scores a model, a
    foreach stage's values in turn (train, predict, evaluate of one value before the next)."""
    out: list[str] = []
    done: set[str] = set()
    for name, stage in STAGES.items():
        if not stage.trains or name in done:
            continue
        # a foreach family (train, predict, evaluate over the same values) runs value by value
        family = [n for n, s in STAGES.items() if stage.variants and s.variants == stage.variants] or [name]
        done |= set(family)
        choices = variant_choices(stage)
        out += [f"{step}@{v}" for v in choices for step in family] if choices else [name]
    return out


def work(name: str) -> Callable[..., Any]:
    """Stage ``name``'s work function (``name``: a table key, without ``@variant``)."""
    stage = STAGES[name]
    return getattr(importlib.import_module(stage.work_module), stage.function)


def run(name: str, params: Any, variant: str | None = None) -> Any:
    """Run stage ``name``'s work on ``params`` (and a foreach stage's ``variant``): what every runner calls."""
    stage = STAGES[name]
    return work(name)(params, *stage.args, *([variant] if variant is not None else []))


def call(dvc_name: str, params: Any) -> Callable[[], Any]:
    """The work of a DVC stage name (``train_quail_mc@full`` or ``compare``) bound to ``params``; its module is
    imported now, so a missing package stops the runner before any stage runs."""
    name, _, variant = dvc_name.partition("@")
    work(name)
    return lambda: run(name, params, variant or None)


def cards() -> list[Any]:
    """Every trained model's card text (``pipeline.common.model_card.ModelCard``), in this table's order: each
    stage with a ``card`` asked once per fixed arguments and variant (a new QuAIL variant is one more card)."""
    out = []
    for stage in STAGES.values():
        if stage.card is None:
            continue
        module, _, attr = stage.card.partition(":")
        describe = getattr(importlib.import_module(module), attr)
        out += [describe(*stage.args, *variant) for variant in ([(v,) for v in variant_choices(stage)] or [()])]
    return out


def model_chains() -> tuple[tuple[str, ...], ...]:
    """The stages that hand a model on, in order: each ``train_<family>`` with its ``convert_``, ``predict_`` and
    ``evaluate_<family>`` (one chain per variant), or, for a family that starts ``after`` another model, one chain
    of that model and every variant's stages. The offline node redoes a chain it finds half done (models do not
    come back from it)."""
    chains: list[tuple[str, ...]] = []
    starts = {stage.after for stage in STAGES.values() if stage.after}
    for name, stage in STAGES.items():
        if not (stage.trains and name.startswith("train_")) or name in starts:
            continue
        family = name.removeprefix("train_")
        # a control that predicts with the family's model on altered input (predict_span_shuffled) needs it too
        controls = [n for n, s in STAGES.items() if n.startswith(f"predict_{family}_") and s.trains]
        steps = [s for s in (f"convert_{family}", name, f"predict_{family}", *controls, f"evaluate_{family}")
                 if s in STAGES]
        variants = variant_choices(stage)
        per_variant = [tuple(f"{s}@{v}" for s in steps) for v in variants] if variants else [tuple(steps)]
        if stage.after:
            chains.append((stage.after, *(s for chain in per_variant for s in chain)))
        else:
            chains.extend(per_variant)
    return tuple(chains)
