"""Params files for tests: the project's own ``params.yaml`` with some values replaced, because every key is
required (the file is the one place values live)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from pipeline.params import PROJECT_PARAMS_FILE


def _merge(base: dict, overrides: dict) -> dict:
    out = dict(base)
    for key, value in overrides.items():
        out[key] = _merge(base[key], value) if isinstance(value, dict) and isinstance(base.get(key), dict) else value
    return out


def write_params(path: str | Path, overrides: dict[str, Any]) -> str:
    """Write the project's params with ``overrides`` (section -> {key: value}) merged in; return the path."""
    raw = yaml.safe_load(PROJECT_PARAMS_FILE.read_text(encoding="utf-8"))
    Path(path).write_text(yaml.safe_dump(_merge(raw, overrides), sort_keys=False), encoding="utf-8")
    return str(path)


def project_benchmark_sources(**overrides: str) -> dict[str, str]:
    """The project's ``benchmark_sources`` (the files in ../shared) as absolute paths, for a test that runs in
    another folder, with ``overrides`` for the files it makes itself."""
    raw = yaml.safe_load(PROJECT_PARAMS_FILE.read_text(encoding="utf-8"))["benchmark_sources"]
    root = PROJECT_PARAMS_FILE.parent
    return {**{k: str((root / v).resolve()) for k, v in raw.items()}, **overrides}
