"""The manifest of the published benchmark files (``paths.benchmark_sources.manifest``): what every stage that
reads a benchmark asks first, whether its file is there (and where) or why it was skipped.

Written by the ``benchmark_sources`` stage; read here without any benchmark's loader, so a stage that needs one
benchmark depends on this file and that benchmark's package only.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from pipeline.common.layout import PATHS

MANIFEST = PATHS.benchmark_sources.manifest


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def read_manifest(path: Path = MANIFEST) -> dict:
    if not path.exists():
        raise FileNotFoundError(f"{path} missing: run the benchmark_sources stage first (dvc repro benchmark_sources)")
    return json.loads(path.read_text(encoding="utf-8"))


def skipped(manifest: dict, *names: str) -> str | None:
    """The first skip reason among ``names``, or None when all are present."""
    return next((manifest[n]["skipped"] for n in names if manifest.get(n, {}).get("skipped")), None)
