"""Bulk indexing throughput of the Elasticsearch backend: ``parallel_bulk`` with 1, 2 and 4 threads against
the reference ``streaming_bulk`` (one request in flight, what the backend used before), same documents, same
server, same run. Documents: StrategyQA's 9,251 official evidence paragraphs (../shared).

The server here is noida-db on 127.0.0.1 (a Python process sharing this machine's 2 cores with the client),
so the figures say what the client side costs and whether keeping several chunks in flight helps; a real
multi-node cluster indexes in parallel on every node and gains more. Each build is the backend's whole
``index()``: create, bulk load, replicas/refresh settings, health wait, count, alias swap.

    .venv/bin/python -m benchmarks.es_bulk_throughput
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path

from elasticsearch import helpers

from benchmarks._common import write_result
from pipeline.search.es_backend import ElasticsearchBackend
from tests.local_es import noida_elasticsearch

PARAGRAPHS = Path(__file__).resolve().parents[2] / "shared/data/strategyqa/strategyqa_train_paragraphs.json"


class StreamingReference(ElasticsearchBackend):
    """The same backend with the bulk load done by ``streaming_bulk`` (one chunk in flight)."""

    def _bulk_load(self, actions):
        n = 0
        for ok, _ in helpers.streaming_bulk(self.client, actions, chunk_size=self.chunk, max_retries=self.retries,
                                            raise_on_error=True):
            n += ok
        return n


def main() -> None:
    raw = json.loads(PARAGRAPHS.read_text(encoding="utf-8"))
    docs = [{"id": k, "title": v.get("title", ""), "text": v.get("content", "")} for k, v in raw.items()]
    results = {}
    with tempfile.TemporaryDirectory() as tmp, noida_elasticsearch(Path(tmp)) as url:
        runs = [("streaming_bulk (reference)", StreamingReference, 1)] + \
               [(f"parallel_bulk x{t}", ElasticsearchBackend, t) for t in (1, 2, 4)]
        for repeat in range(2):
            for name, cls, threads in runs:
                backend = cls(url, f"bench-{threads}-{cls.__name__.lower()}", chunk=500, threads=threads, timeout=30)
                t = time.perf_counter()
                n = backend.index(docs)
                secs = time.perf_counter() - t
                assert n == len(docs)
                best = results.get(name)
                if best is None or secs < best["seconds"]:
                    results[name] = {"seconds": round(secs, 2), "docs_per_s": round(n / secs, 1), "threads": threads}
    ref = results["streaming_bulk (reference)"]["docs_per_s"]
    for r in results.values():
        r["ratio_to_reference"] = round(r["docs_per_s"] / ref, 3)
    write_result("es_bulk_throughput", {
        "documents": len(docs), "source": "StrategyQA train paragraphs (official evidence texts)",
        "server": "noida-db on 127.0.0.1 (single node, shares the 2 cores)", "chunk_size": 500,
        "best_of": 2, "results": results,
    })


if __name__ == "__main__":
    main()
