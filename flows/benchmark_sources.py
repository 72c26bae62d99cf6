"""``benchmark_sources`` stage (always runs, cheap): checks and fingerprints the published benchmark files."""

from __future__ import annotations

import sys

from prefect import flow

from flows._common import params_of, stage_main
from pipeline.benchmark_sources import MANIFEST, build_manifest
from pipeline.runtime import get_logger, write_json


@flow(name="benchmark_sources", log_prints=True)
def benchmark_sources_flow(params_file: str = "params.yaml") -> dict:
    manifest = build_manifest(params_of(params_file).benchmark_sources)
    for name, entry in manifest.items():
        if entry.get("skipped"):
            get_logger().warning("%s: skipped - %s", name, entry["skipped"])
    write_json(MANIFEST, manifest)
    return manifest


if __name__ == "__main__":
    sys.exit(stage_main(benchmark_sources_flow))
