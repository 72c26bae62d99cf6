"""The Prefect side: ``python -m flows.stage NAME`` runs one DVC stage's work as a flow; ``rebuild``, ``serve``,
``sweep`` and ``worker`` schedule and run ``dvc repro``.

Flows only validate parameters, call the stage function from ``pipeline`` and report; all logic lives in
the library. Telemetry is off unless the user turns it back on in their own environment.
"""

import importlib.util
import os
import sys
from pathlib import Path


def outputs_removed_hint(then: str = "once the above is fixed") -> str:
    """Under ``dvc repro`` a stage that stops before doing anything has already lost its outputs: DVC removes a
    stage's outputs before it runs the command. They are not gone: the committed ones are in the DVC cache."""
    stage = os.environ.get("DVC_STAGE")
    if not stage:
        return ""
    return (f"\nDVC removed {stage}'s outputs before running it; `dvc checkout {stage}` puts the ones dvc.lock "
            f"records back from the cache (the stages after it still read as up to date until then), "
            f"`dvc repro {stage}` rebuilds them {then}.")


def checkout_root(path: Path) -> Path:
    """The checkout ``path`` belongs to. DVC runs a queued or temporary experiment in a copy under the checkout's
    ``.dvc/tmp/exps/`` and deletes it after: its runs belong to the checkout's own Prefect server and database,
    not to a server of the copy's that no UI shows and nothing stops once the copy is gone."""
    parts = path.parts
    for i in range(len(parts) - 2):
        if parts[i:i + 3] == (".dvc", "tmp", "exps"):
            return Path(*parts[:i])
    return path


if importlib.util.find_spec("prefect") is None:  # `.venv/bin/dvc repro` without the venv on PATH
    _venv = Path(__file__).resolve().parents[1] / ".venv"
    sys.exit(f"{sys.executable} has no Prefect: the stages run with the `python` first on PATH, and that is not "
             f"the project's. Activate the project's environment first (source {_venv}/bin/activate), or run "
             f"make repro.{outputs_removed_hint()}")

# One project-local Prefect home (database, settings, logs) whoever starts the process: `make`, a plain
# `dvc repro` or `dvc exp run` in an activated venv, or `make serve`; so every run lands in one database and
# the UI of `make serve` shows them all. An explicit PREFECT_HOME (or PREFECT_API_URL) still wins.
os.environ.setdefault("PREFECT_HOME", str(checkout_root(Path(__file__).resolve().parents[1]) / ".prefect"))

os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("DO_NOT_TRACK", "1")
# A cold ephemeral server on a 2-core machine can take longer than Prefect's 20 s default to answer.
os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "180")
