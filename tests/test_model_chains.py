"""The offline node's model chains come from the stage table: every stage that trains, predicts with or scores a
model of a family is in exactly one chain, in the order the models pass along it."""

from __future__ import annotations

from pipeline.stage_table import STAGES, model_chains, variant_choices


def test_the_chains_are_the_families_in_order():
    settings, variants = variant_choices(STAGES["train_strategyqa_qa"]), variant_choices(STAGES["train_quail_mc"])
    steps = ("train", "predict", "evaluate")
    assert model_chains() == (
        ("train_span", "predict_span", "predict_span_shuffled", "evaluate_span"),  # the shuffled control reads its model
        ("convert_longformer", "train_longformer", "predict_longformer", "evaluate_longformer"),
        # every StrategyQA classifier may start from the auxiliary BoolQ model: one chain with it
        ("train_boolq_aux", *(f"{step}_strategyqa_qa@{s}" for s in settings for step in steps)),
        *(tuple(f"{step}_quail_mc@{v}" for step in steps) for v in variants),
    )


def test_every_model_stage_is_in_one_chain():
    chained = [s.split("@")[0] for chain in model_chains() for s in chain]
    family_stages = {name for name, stage in STAGES.items() if stage.trains
                     and name.split("_", 1)[0] in ("convert", "train", "predict", "evaluate")}
    assert set(chained) == family_stages
    flat = [s for chain in model_chains() for s in chain]
    assert len(flat) == len(set(flat))
