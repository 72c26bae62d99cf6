"""``index``: the paragraphs into the configured backend (tantivy under ``data/index`` or Elasticsearch)."""

from __future__ import annotations

from pathlib import Path

from pipeline.common.jsonl import iter_jsonl
from pipeline.common.runtime import progress, write_json
from pipeline.params import Params
from pipeline.search.factory import make_backend

INDEX_DIR = Path("data/index")
PARAGRAPHS = Path("data/wiki/paragraphs.jsonl")


def run(params: Params) -> dict:
    p = params.search
    backend = make_backend(p, INDEX_DIR / "tantivy")
    n = backend.index(progress(iter_jsonl(PARAGRAPHS, "paragraph line"), "index", unit="doc"))
    manifest = {"backend": p.backend, "documents": n}
    if p.backend == "elasticsearch":
        manifest["alias"] = p.es_alias
    write_json(INDEX_DIR / "manifest.json", manifest)
    write_json("reports/index.json", manifest)  # no timings here: metrics must repeat; speed is in benchmarks/
    return manifest
