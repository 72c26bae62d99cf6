"""The Prefect side: ``python -m flows.stage NAME`` runs one DVC stage's work as a flow; ``rebuild``, ``serve``,
``sweep`` and ``worker`` schedule and run ``dvc repro``.

Flows only validate parameters, call the stage function from ``pipeline`` and report; all logic lives in
the library. Telemetry is off unless the user turns it back on in their own environment.
"""

import importlib.util
import os
import sys
from pathlib import Path


def _cache_dir(root: Path) -> Path:
    """DVC's cache folder: ``.dvc/cache`` unless ``cache.dir`` is set (config.local wins, relative to .dvc/)."""
    import configparser

    for name in ("config.local", "config"):
        parser = configparser.ConfigParser(strict=False, interpolation=None)
        try:
            parser.read(root / ".dvc" / name, encoding="utf-8")
        except configparser.Error:
            continue
        if parser.has_option("cache", "dir"):
            return (root / ".dvc" / parser.get("cache", "dir").strip("'\"")).resolve()
    return root / ".dvc" / "cache"


def outputs_restorable(stage: str, root: Path | None = None) -> bool:
    """Whether ``dvc checkout STAGE`` would put the stage's outputs back: dvc.lock records them and every one is
    in the cache, or kept by git (``cache: false``). Not so on a stage's first build, stopped half way."""
    root = root or Path.cwd()
    try:
        import yaml

        lock = yaml.safe_load((root / "dvc.lock").read_text(encoding="utf-8")) or {}
    except (ImportError, OSError, ValueError):
        return False
    name, _, key = stage.partition("@")
    entry = (lock.get("stages") or {}).get(stage) or (lock.get("stages") or {}).get(f"{name}@{key}")
    outs = (entry or {}).get("outs") or []
    if not outs:
        return False
    cache = _cache_dir(root) / "files" / "md5"
    uncached = [o["path"] for o in outs
                if not (isinstance(o.get("md5"), str) and (cache / o["md5"][:2] / o["md5"][2:]).exists())]
    if not uncached:
        return True
    import subprocess

    tracked = subprocess.run(["git", "ls-files", "--", *uncached], cwd=root, capture_output=True, text=True)
    return tracked.returncode == 0 and set(tracked.stdout.split()) >= set(uncached)


def outputs_removed_hint(then: str = "once the above is fixed") -> str:
    """Under ``dvc repro`` a stage that stops before doing anything has already lost its outputs: DVC removes a
    stage's outputs before it runs the command. Where dvc.lock records them they are in the DVC cache and
    ``dvc checkout`` restores them; on a first build there is nothing to restore, and ``dvc repro`` goes on."""
    stage = os.environ.get("DVC_STAGE")
    if not stage:
        return ""
    if not outputs_restorable(stage):
        return (f"\n{stage} had not finished a build here, so it has no outputs to restore; `dvc repro {stage}` "
                f"builds them {then}.")
    return (f"\nDVC removed {stage}'s outputs before running it; `dvc checkout {stage}` puts the ones dvc.lock "
            f"records back from the cache (the stages after it still read as up to date until then), "
            f"`dvc repro {stage}` rebuilds them {then}.")


def params_refused_hint() -> str:
    """After params.yaml is refused: under ``dvc exp run -S`` the bad value is DVC's write into params.yaml, and
    it stays there when the run fails, so the way on is to put the file back, not to check out a stamp."""
    if os.environ.get("DVC_EXP_NAME"):
        return ("\n`dvc exp run -S` wrote the value into params.yaml, and it stays there after this failed run: "
                "`make reset` puts params.yaml and the outputs back as committed (then run again with a value "
                "the message above allows).")
    return outputs_removed_hint()


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
