"""The manifest of the published benchmark files (``paths.benchmark_sources.manifest``): where every stage that
reads a benchmark finds its file (and the file's checksum and counts).

The policy for a missing benchmark file is kept in one place, the ``benchmark_sources`` stage: it fails,
naming every missing file, where to get it and the param to set, as ``dvc repro`` already does for a missing
dep. No stage writes stand-in outputs for a track that could not run: such files would be cached, plotted and
compared as if they were results. A researcher without one benchmark runs the stages of the others
(``dvc repro evaluate_span``).

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


def source_path(manifest: dict, name: str) -> str:
    """The path of benchmark file ``name``; a manifest without it (written by an older version, or edited) is
    an error that says how to get a current one."""
    entry = manifest.get(name)
    if not isinstance(entry, dict) or "path" not in entry or "sha256" not in entry:
        raise KeyError(f"{MANIFEST} has no checked entry for {name!r}: rerun `dvc repro benchmark_sources`")
    return entry["path"]
