"""Tools around the pipeline: code deps, profiles, sweeps, the results table, publishing.

Each is a command a user types (``python -m pipeline.experiments.would_rerun ...``), and each needs the project's
environment (DVC, pydantic): run with another Python, they say so in one line instead of a traceback."""

import importlib.util
import sys
from pathlib import Path

_missing = [name for name in ("dvc", "pydantic") if importlib.util.find_spec(name) is None]
if _missing:
    _venv = Path(__file__).resolve().parents[2] / ".venv"
    sys.exit(f"{sys.executable} has no {' or '.join(_missing)}: this tool runs in the project's environment. "
             f"Activate it first (source {_venv}/bin/activate), or run {_venv}/bin/python -m ...")
