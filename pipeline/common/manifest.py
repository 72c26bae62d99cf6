"""The manifest of the published benchmark files (``paths.benchmark_sources.manifest``): where every stage that
reads a benchmark finds its file (and the file's checksum and counts).

The policy for a missing benchmark file is kept in one place, the ``benchmark_sources`` stage: it fails,
naming every missing file, where to get it and the param to set, as ``dvc repro`` already does for a missing
dep. No stage writes stand-in outputs for a track that could not run: such files would be cached, plotted and
compared as if they were results. A researcher without one benchmark runs the stages of the others
(``dvc repro evaluate_span``).

Written by the ``benchmark_sources`` stage: the whole manifest for a reader, and one entry per file
(``paths.benchmark_sources.entries/<name>.json``) for the stages, each of which depends on the entries of the
files it reads and no other: a new QuAIL file reruns what reads QuAIL, not Wikipedia or StrategyQA (an entry
that did not change is rewritten byte for byte, and DVC reruns nothing on it). Read here without any
benchmark's loader, so a stage that needs one benchmark depends on its entries and that benchmark's package.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from pipeline.common.config import BenchmarkSourcesParams
from pipeline.common.layout import PATHS

MANIFEST = PATHS.benchmark_sources.manifest
ENTRIES = PATHS.benchmark_sources.entries
NAMES = tuple(BenchmarkSourcesParams.model_fields)  # an entry per key of the params section, by its name


def entry_path(name: str, entries: Path = ENTRIES) -> Path:
    if name not in NAMES:
        raise KeyError(f"no benchmark file named {name!r}; one of {', '.join(NAMES)}")
    return entries / f"{name}.json"


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def source_path(name: str, entries: Path = ENTRIES) -> str:
    """The path of benchmark file ``name``, from its entry; a missing entry, or one without a checked path
    (written by an older version, or edited), is an error that says how to get a current one."""
    return _entry(name, entries)["path"]


def source_sha256(name: str, entries: Path = ENTRIES) -> str:
    """The checksum of benchmark file ``name`` as the benchmark_sources stage read it."""
    return _entry(name, entries)["sha256"]


def _entry(name: str, entries: Path) -> dict:
    path = entry_path(name, entries)
    try:
        entry = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FileNotFoundError(f"{path} missing: run the benchmark_sources stage first "
                                "(dvc repro benchmark_sources)") from None
    if not isinstance(entry, dict) or "path" not in entry or "sha256" not in entry:
        raise KeyError(f"{path} is not a checked entry for {name!r}: rerun `dvc repro benchmark_sources`")
    return entry
