"""``index`` stage: paragraphs -> the configured search backend (tantivy under ``data/index`` or Elasticsearch)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

from prefect import flow, task

from flows._common import params_of, retry_if_transient, stage_main
from pipeline.runtime import progress, write_json
from pipeline.search import make_backend

INDEX_DIR = Path("data/index")


def read_paragraphs(path: Path) -> Iterator[dict]:
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            yield json.loads(line)


# A dropped connection or a 429 mid-bulk can succeed on retry; the alias swap makes a retry safe.
@task(retries=2, retry_delay_seconds=[30, 120], retry_condition_fn=retry_if_transient, cache_policy=None)
def build_index(search_params) -> int:
    backend = make_backend(search_params, INDEX_DIR / "tantivy")
    return backend.index(progress(read_paragraphs(Path("data/wiki/paragraphs.jsonl")), "index", unit="doc"))


@flow(name="index", log_prints=True)
def index_flow(params_file: str = "params.yaml") -> dict:
    p = params_of(params_file).search
    n = build_index(p)
    manifest = {"backend": p.backend, "documents": n}
    if p.backend == "elasticsearch":
        manifest["alias"] = p.es_alias
    write_json(INDEX_DIR / "manifest.json", manifest)
    write_json("metrics/index.json", manifest)  # no timings here: metrics must repeat; speed is in benchmarks/
    return manifest


if __name__ == "__main__":
    sys.exit(stage_main(index_flow))
