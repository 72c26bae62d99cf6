"""Embedded backend overhead: indexing docs/s and queries/s of ``TantivyBackend`` against raw tantivy with
the same schema, analyzer and queries, in the same run (target: at most 25% slower).

The raw reference is the minimum any wrapper must pay: one writer, add_document per doc, one commit; and
one boolean term query per question. Corpus: the paragraphs of the sample dump (24k paragraphs).

    .venv/bin/python -m benchmarks.tantivy_overhead
"""

from __future__ import annotations

import tempfile
import time
from collections import Counter
from pathlib import Path

import tantivy

from benchmarks._common import write_result
from pipeline.params import project_section
from pipeline.sample.build import DUMP_NAME, build_sample
from pipeline.search.analysis import ANALYZER, tantivy_analyzer
from pipeline.search.tantivy_backend import TantivyBackend, _schema
from pipeline.wiki.paragraphs import dump_paragraphs


def raw_index(path: Path, docs: list[dict]) -> tantivy.Index:
    path.mkdir(parents=True)
    index = tantivy.Index(_schema(), path=str(path))
    index.register_tokenizer(ANALYZER, tantivy_analyzer())
    writer = index.writer(heap_size=256_000_000, num_threads=1)
    for d in docs:
        writer.add_document(tantivy.Document(id=d["id"], title=d["title"], text=d["text"]))
    writer.commit()
    writer.wait_merging_threads()
    index.reload()
    return index


def raw_search(index: tantivy.Index, queries: dict[str, str], k: int) -> None:
    searcher, analyzer = index.searcher(), tantivy_analyzer()
    for text in queries.values():
        terms = analyzer.analyze(text)
        if terms:
            q = tantivy.Query.boolean_query([(tantivy.Occur.Should, tantivy.Query.term_query(index.schema, f, t))
                                             for f in ("title", "text") for t in terms])
            for _, addr in searcher.search(q, k).hits:
                searcher.doc(addr)["id"][0]


def best_of(n: int, fn) -> float:
    times = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        build_sample(project_section("sample"), tmp / "sample")
        docs = [{"id": p.id, "title": p.title, "text": p.text} for p in dump_paragraphs(tmp / "sample" / DUMP_NAME, Counter(), min_chars=2)]
        queries = {f"q{i}": " ".join(d["text"].split()[:8]) for i, d in enumerate(docs[::24])}
        ours = TantivyBackend(tmp / "ours")
        runs = iter(range(100))
        t_ours_index = best_of(3, lambda: ours.index(docs))
        t_raw_index = best_of(3, lambda: raw_index(tmp / f"raw{next(runs)}", docs))
        raw = raw_index(tmp / "raw_final", docs)
        t_ours_search = best_of(3, lambda: ours.search(queries, 10))
        t_raw_search = best_of(3, lambda: raw_search(raw, queries, 10))
    write_result("tantivy_overhead", {
        "corpus": f"{len(docs)} sample paragraphs", "queries": len(queries), "k": 10,
        "index_docs_per_s": {"qa_pipeline_embedded": round(len(docs) / t_ours_index), "raw_tantivy": round(len(docs) / t_raw_index)},
        "queries_per_s": {"qa_pipeline_embedded": round(len(queries) / t_ours_search), "raw_tantivy": round(len(queries) / t_raw_search)},
        "overhead_index": round(t_ours_index / t_raw_index - 1, 3),
        "overhead_search": round(t_ours_search / t_raw_search - 1, 3),
        "target_overhead": "<= 0.25", "timing": "best of 3",
    })


if __name__ == "__main__":
    main()
