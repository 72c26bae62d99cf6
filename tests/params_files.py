"""Params files for tests: the project's own ``params.yaml`` with some values replaced, because every key is
required (the file is the one place values live).

Tests read the *committed* params.yaml (``git show HEAD:params.yaml``), never the checkout's: ``dvc exp run
-S`` leaves its values in the workspace file, and a test suite that read them failed after every experiment.
``PROJECT_PARAMS`` is that copy (the checkout's own file where there is no git history); conftest points
``pipeline.params.PROJECT_PARAMS_FILE`` (what ``project_section`` reads) at it too."""

from __future__ import annotations

import atexit
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]


def _committed_params() -> Path:
    shown = subprocess.run(["git", "show", "HEAD:params.yaml"], cwd=REPO, capture_output=True)
    if shown.returncode != 0:
        return REPO / "params.yaml"
    folder = Path(tempfile.mkdtemp(prefix="qa-pipeline-committed-params-"))
    atexit.register(shutil.rmtree, folder, True)
    (folder / "params.yaml").write_bytes(shown.stdout)
    return folder / "params.yaml"


PROJECT_PARAMS = _committed_params()
PROJECT_PARAMS_FILE = PROJECT_PARAMS


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
    root = REPO  # the file's relative paths are the checkout's
    return {**{k: str((root / v).resolve()) for k, v in raw.items()}, **overrides}
