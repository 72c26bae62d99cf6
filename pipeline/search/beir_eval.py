"""BEIR-format retrieval evaluation (corpus.jsonl, queries.jsonl, qrels/*.tsv) with ranx.

Used as a correctness check of the BM25 backends against BEIR's published Elasticsearch figures.
"""

from __future__ import annotations

import csv
from pathlib import Path

from ranx import Qrels, Run, evaluate

from pipeline.common.jsonl import iter_jsonl
from pipeline.search.base import SearchBackend


def load_beir(folder: Path, split: str = "test") -> tuple[list[dict], dict[str, str], dict[str, dict[str, int]]]:
    corpus = list(iter_jsonl(folder / "corpus.jsonl", "BEIR corpus line",
                             lambda d: {"id": d["_id"], "title": d.get("title", ""), "text": d.get("text", "")}))
    queries = dict(iter_jsonl(folder / "queries.jsonl", "BEIR query line", lambda q: (q["_id"], q["text"])))
    qrels: dict[str, dict[str, int]] = {}
    with (folder / "qrels" / f"{split}.tsv").open(encoding="utf-8", newline="") as fh:  # CRLF-safe
        for row in csv.DictReader(fh, delimiter="\t"):
            qrels.setdefault(row["query-id"], {})[row["corpus-id"]] = int(row["score"])
    return corpus, {qid: queries[qid] for qid in qrels}, qrels


def evaluate_backend(backend: SearchBackend, folder: Path, k: int = 100, index: bool = True) -> dict[str, float]:
    corpus, queries, qrels = load_beir(folder)
    if index:
        backend.index(corpus)
    run = backend.search(queries, k)
    run = {q: hits for q, hits in run.items() if hits}  # ranx rejects empty rankings; they score 0 anyway
    scores = evaluate(Qrels(qrels), Run(run), ["ndcg@10", "recall@100"], make_comparable=True)
    return {m: round(float(v), 4) for m, v in scores.items()}
