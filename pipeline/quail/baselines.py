"""Every QuAIL baseline as ``quail_baselines`` runs it: ``baseline_<name>(questions, inputs)`` for each name that
``pipeline.quail.systems.HEURISTIC_BASELINES`` declares, in that order, each returning ``{qid: option index}``.

Why one signature: the stage, ``compare``, the per-question file, the headline rows (``metrics/quail/<name>.json``)
and dvc.yaml's outs (``python -m pipeline.experiments.stage_deps``) all follow the declared names, so a new
baseline is its function here and its name there, a test and a sentence of docs; nothing else names it.
``inputs`` holds what the stage prepares once for all of them (the section's params, the training texts'
unanswerable share, the word vectors, the options-only logit's weights, a throwaway sentence index).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pipeline.quail import options_features
from pipeline.quail.data import MCQuestion
from pipeline.quail.heuristics import predict_ir, predict_longchoice, predict_pmi, predict_random
from pipeline.quail.systems import HEURISTIC_BASELINES
from pipeline.quail.vector_baselines import WordVectors, predict_avgcos, predict_lstm
from pipeline.search.base import SearchBackend

if TYPE_CHECKING:
    from pipeline.quail.config import QuailParams

PREFIX = "baseline_"
Baseline = Callable[[list[MCQuestion], "BaselineInputs"], dict[str, int]]


@dataclass(frozen=True)
class BaselineInputs:
    """What a baseline may read besides the questions, prepared once by the stage."""

    params: QuailParams
    unanswerable_share: float  # of the training texts' questions: LongChoice's rate of "not enough information"
    vectors: WordVectors
    options_weights: dict[str, float]  # the options-only logit, fit on the training texts
    sentence_index: Callable[[Path], SearchBackend]


def baseline_random(questions: list[MCQuestion], x: BaselineInputs) -> dict[str, int]:
    return predict_random(questions, x.params.seed)


def baseline_longchoice(questions: list[MCQuestion], x: BaselineInputs) -> dict[str, int]:
    return predict_longchoice(questions, x.unanswerable_share, x.params.seed)


def baseline_avgcos(questions: list[MCQuestion], x: BaselineInputs) -> dict[str, int]:
    return predict_avgcos(questions, x.vectors)


def baseline_lstm(questions: list[MCQuestion], x: BaselineInputs) -> dict[str, int]:
    return predict_lstm(questions, x.vectors, x.params.lstm_hidden, x.params.seed)


def baseline_pmi(questions: list[MCQuestion], x: BaselineInputs) -> dict[str, int]:
    p = x.params
    return predict_pmi(questions, p.pmi_window, p.pmi_max_ngram, p.pmi_stop_word_ngrams)


def baseline_ir(questions: list[MCQuestion], x: BaselineInputs) -> dict[str, int]:
    return predict_ir(questions, x.sentence_index, x.params.ir_require_overlap)


def baseline_options_features(questions: list[MCQuestion], x: BaselineInputs) -> dict[str, int]:
    return options_features.predict(questions, x.options_weights)


def baselines() -> dict[str, Baseline]:
    """``{name: function}`` in the declared order; a declared name without its function, or a function no name
    declares, is an error naming it (a baseline that runs must be one the rest of the pipeline knows)."""
    module = sys.modules[__name__]
    defined = {name.removeprefix(PREFIX) for name in vars(module) if name.startswith(PREFIX) and callable(
        getattr(module, name))}
    missing = [n for n in HEURISTIC_BASELINES if n not in defined]
    undeclared = sorted(defined - set(HEURISTIC_BASELINES))
    if missing or undeclared:
        raise RuntimeError(f"QuAIL baselines: declared without a {PREFIX}<name> function here: {missing}; defined "
                           f"here but not in pipeline.quail.systems.HEURISTIC_BASELINES: {undeclared}")
    return {name: getattr(module, PREFIX + name) for name in HEURISTIC_BASELINES}
