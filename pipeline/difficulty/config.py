"""The question-difficulty analysis's params section."""

from __future__ import annotations

from pydantic import Field, field_validator

from pipeline.common.strict_model import StrictModel
from pipeline.common.trust import Infrastructure, Science


class DifficultyParams(StrictModel):
    """Question-difficulty analysis (``difficulty`` stage)."""

    human_accuracies: Infrastructure[str | None] = Field(
        description="per-question human accuracy (json {qid: acc} or jsonl); "
                    "null: model side only")
    models: Science[list[str]] = Field(min_length=1,
                              description="systems whose per-question correctness is averaged into model accuracy")

    @field_validator("models")
    @classmethod
    def _known(cls, value: list[str]) -> list[str]:
        from pipeline.quail.systems import all_systems

        known = set(all_systems())
        unknown = [m for m in value if m not in known]
        if unknown:
            raise ValueError(f"unknown systems {unknown}; choose from {sorted(known)}")
        return value
