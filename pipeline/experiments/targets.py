"""Which DVC targets a Prefect run (a rebuild, a sweep point) may ask for: stage names of this project's
``dvc.yaml`` only. Anyone who can reach the Prefect API can start a run; a path or ``file:stage`` target would
reach another ``dvc.yaml`` and choose which commands execute."""

from __future__ import annotations

import re

_TARGET = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_-]*(?:@[A-Za-z0-9_.-]+)?")


def check_targets(targets: list[str], what: str = "targets") -> list[str]:
    """``stage`` or ``stage@item`` names, returned as given; anything else is a ValueError naming it."""
    bad = [t for t in targets if not isinstance(t, str) or not _TARGET.fullmatch(t)]
    if bad:
        raise ValueError(f"{what} must be stage names of this project's dvc.yaml, got {bad}")
    return targets
