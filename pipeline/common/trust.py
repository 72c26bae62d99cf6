"""Whether a params key is science (a run may choose it) or infrastructure (only the worker's own checkout and
environment set it), marked on the field where the key is defined.

``Science[int]`` and ``Infrastructure[str]`` are the field's type with a marker pydantic keeps in the field's
metadata; ``pipeline.params_trust`` derives its allow-list from the markers, so a new key is classified where it
is written, and a key with neither marker is refused by every run until someone marks it
(``tests/test_params_trust.py``). Science: budgets, learning rates, seeds, k, shares, baselines' settings, a model
among the installed ones. Infrastructure: everything that says *where* (paths, URLs, hosts, ports, the archive,
the search backend, distributed settings, devices, module names, schedules) and every resource limit that guards
a stage against its input.
"""

from __future__ import annotations

from enum import Enum
from typing import Annotated, Any, TypeVar

T = TypeVar("T")


class Trust(str, Enum):
    SCIENCE = "science"
    INFRASTRUCTURE = "infrastructure"


Science = Annotated[T, Trust.SCIENCE]
Infrastructure = Annotated[T, Trust.INFRASTRUCTURE]


def trust_of(field: Any) -> Trust | None:
    """The marker on a pydantic field (``model_fields[name]``), or None when it has none (or, wrongly, both)."""
    marks = {m for m in field.metadata if isinstance(m, Trust)}
    return marks.pop() if len(marks) == 1 else None
