"""The QuAIL systems by name, written once: the params check (``difficulty.models``), the heuristic-baselines
stage, the multiple-choice stage and the difficulty stage read these (dvc.yaml's ``foreach`` lists are
checked against them by tests/test_dvc_graph.py)."""

from __future__ import annotations

# the paper's heuristic and word-vector baselines, then the options-only logit (a control fit on the training
# texts: pipeline.quail.options_features)
HEURISTIC_BASELINES: tuple[str, ...] = ("random", "longchoice", "avgcos", "lstm", "pmi", "ir", "options_features")
MC_VARIANTS: tuple[str, ...] = ("full", "passage_options", "question_options", "options")


def mc_system(variant: str) -> str:
    """The name a multiple-choice variant's predictions go by beside the baselines (``mc_full``)."""
    return f"mc_{variant}"


def all_systems() -> tuple[str, ...]:
    """Every system with per-question predictions on QuAIL."""
    return HEURISTIC_BASELINES + tuple(mc_system(v) for v in MC_VARIANTS)
