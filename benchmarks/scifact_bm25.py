"""BEIR SciFact (test split) with both search backends: nDCG@10 and Recall@100 computed by ranx, beside
BEIR's published Elasticsearch BM25 figures (nDCG@10 0.665, Recall@100 0.908).

Elasticsearch here is noida-db on 127.0.0.1 (ES-identical BM25, but seconds per query at this size: the
run takes tens of minutes). Pass --es URL to use a real cluster instead, or --skip-es.

    .venv/bin/python -m benchmarks.scifact_bm25 [--es http://127.0.0.1:9200 | --skip-es]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from benchmarks._common import write_result
from pipeline.search.beir_eval import evaluate_backend
from pipeline.search.es_backend import ElasticsearchBackend
from pipeline.search.tantivy_backend import TantivyBackend
from tests.local_es import noida_elasticsearch

SCIFACT = Path(__file__).resolve().parents[2] / "shared" / "data" / "beir-scifact"
PUBLISHED = {"ndcg@10": 0.665, "recall@100": 0.908}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--es")
    ap.add_argument("--skip-es", action="store_true")
    args = ap.parse_args()
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        results["embedded_tantivy"] = evaluate_backend(TantivyBackend(Path(tmp) / "tv"), SCIFACT)
        results["embedded_tantivy"]["seconds"] = round(time.perf_counter() - t, 1)
        if not args.skip_es:
            def run(url: str, name: str) -> None:
                t = time.perf_counter()
                es = ElasticsearchBackend(url, "scifact-bench", search_batch=5, search_timeout=900)
                results[name] = evaluate_backend(es, SCIFACT)
                results[name]["seconds"] = round(time.perf_counter() - t, 1)

            if args.es:
                run(args.es, "elasticsearch")
            else:
                with noida_elasticsearch(Path(tmp) / "noida") as url:
                    run(url, "elasticsearch_noida_db")
    write_result("scifact_bm25", {
        "data": "BEIR SciFact test (300 queries, 5,183 docs) from ../shared/data/beir-scifact",
        "published_beir_elasticsearch_bm25": PUBLISHED,
        "results": results,
        "gap_to_published": {b: {m: round(r[m] - PUBLISHED[m], 4) for m in PUBLISHED} for b, r in results.items()},
        "analysis": "title+text, standard tokenizer, possessive, lowercase, _english_ stop words, porter2 (both backends)",
    })


if __name__ == "__main__":
    main()
