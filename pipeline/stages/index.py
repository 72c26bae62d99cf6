"""``index``: the paragraphs into the configured backend (tantivy in the index folder, or Elasticsearch)."""

from __future__ import annotations

from typing import TYPE_CHECKING


from pipeline.common.jsonl import iter_jsonl
from pipeline.common.layout import PATHS
from pipeline.common.files import write_json
from pipeline.common.logs import progress
from pipeline.search.factory import make_backend

if TYPE_CHECKING:
    from pipeline.params import Params



def run(params: Params) -> dict:
    p = params.search
    backend = make_backend(p, PATHS.index.dir / "tantivy")
    n = backend.index(progress(iter_jsonl(PATHS.wiki_paragraphs.paragraphs, "paragraph line"), "index", unit="doc"))
    manifest = {"backend": p.backend, "documents": n}
    if p.backend == "elasticsearch":
        manifest["alias"] = p.es_alias
    write_json(PATHS.index.dir / "manifest.json", manifest)
    write_json(PATHS.index.report, manifest)  # no timings here: metrics must repeat; speed is in benchmarks/
    return manifest
