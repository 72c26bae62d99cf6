"""The base of every params section: strict, frozen, and no booleans read as numbers."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, model_validator


def _is_number_type(annotation: Any) -> bool:
    """``int``/``float`` or an optional of one (``bool`` itself is not a number here)."""
    if annotation in (int, float):
        return True
    args = getattr(annotation, "__args__", ())
    return bool(args) and all(a in (int, float, type(None)) for a in args) and any(a in (int, float) for a in args)


class StrictModel(BaseModel):
    """Base for every params section: unknown keys are errors, values are immutable once loaded, and
    ``true``/``false`` are not numbers (pydantic would read ``batch_size: true`` as 1)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    @model_validator(mode="before")
    @classmethod
    def _no_booleans_for_numbers(cls, data: Any) -> Any:
        if isinstance(data, dict):
            for name, field in cls.model_fields.items():
                if isinstance(data.get(name), bool) and _is_number_type(field.annotation):
                    raise ValueError(f"{name}: expected a number, got {str(data[name]).lower()}")
        return data
