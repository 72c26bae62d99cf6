"""The span models' params sections: sliding windows and Longformer."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from pipeline.common.strict_model import StrictModel
from pipeline.common.trust import Science
from pipeline.training.config import TrainBudget


class _FineTuneParams(TrainBudget):
    """What both span-QA model kinds share on top of the budget: question length and decoding."""

    max_question_len: Science[int] = Field(ge=4)
    n_best: Science[int] = Field(ge=1, le=1000)
    max_answer_tokens: Science[int] = Field(ge=1, le=16384)
    # the values of pipeline.span_qa.features.AnswerWindows and pipeline.span_qa.postprocess.Aggregation, spelled here
    # so the schema imports no module that does work (tests/test_span_windows.py checks they agree)
    answer_windows: Science[Literal["every", "fullest"]] = Field(
        description="which training windows carry the answer (pipeline/span_qa/features.py): every (the NLQuAD "
                    "paper's: each window that holds part of it, clipped to the window) or fullest (only the "
                    "windows holding the most of it; the others: no answer)")
    aggregation: Science[Literal["union", "margin", "best"]] = Field(
        description="how the windows' spans become one answer (pipeline/span_qa/postprocess.py): union (the NLQuAD "
                    "paper's: earliest start to latest end of the windows that find an answer), margin (the window "
                    "that beats its no-answer score by the most), best (the highest span score)")
    eval_split: Science[Literal["dev", "test"]]
    select_metric: Science[Literal["f1", "em", "iou"]] = Field(description="NLQuAD dev figure the kept checkpoint is "
                                                                           "chosen by")

    @model_validator(mode="after")
    def _check_lengths(self) -> "_FineTuneParams":
        if self.max_question_len + 3 >= self.max_seq_len:
            raise ValueError("max_question_len leaves no room for context in max_seq_len")
        return self


class SpanWindowParams(_FineTuneParams):
    """Sliding-window span QA fine-tuning (``train_span``, ``predict_span``, ``evaluate_span`` stages)."""

    model_name_or_path: Science[str] = Field(description="hub name, local path, or the PyPI MiniLM")
    doc_stride: Science[int] = Field(ge=1, description="the step between window starts, in tokens")


class LongformerParams(_FineTuneParams):
    """Longformer span QA: question + whole document (``convert_longformer``, ``*_longformer`` stages)."""

    source_model: Science[str] = Field(description="converted to a long model unless already one")
    max_seq_len: Science[int] = Field(ge=64)
    attention_window: Science[int] = Field(ge=2)

    @field_validator("attention_window")
    @classmethod
    def _even(cls, value: int) -> int:
        if value % 2:
            raise ValueError("Longformer needs an even attention window")
        return value
