"""``benchmark_sources``: the published benchmark files, read in place: checksum, format check, or why skipped."""

from __future__ import annotations

from pipeline.common.benchmark_sources import MANIFEST, build_manifest
from pipeline.common.runtime import get_logger, write_json
from pipeline.params import Params


def run(params: Params) -> dict:
    manifest = build_manifest(params.benchmark_sources)
    for name, entry in manifest.items():
        if entry.get("skipped"):
            get_logger().warning("%s: skipped - %s", name, entry["skipped"])
    write_json(MANIFEST, manifest)
    return manifest
