"""BEIR-format retrieval evaluation (corpus.jsonl, queries.jsonl, qrels/*.tsv) with ranx.

Used as a correctness check of the BM25 backends against BEIR's published Elasticsearch figures.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

from ranx import Qrels, Run, evaluate

from pipeline.search.base import SearchBackend


def load_beir(folder: Path, split: str = "test") -> tuple[list[dict], dict[str, str], dict[str, dict[str, int]]]:
    corpus = []
    with (folder / "corpus.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            d = json.loads(line)
            corpus.append({"id": d["_id"], "title": d.get("title", ""), "text": d.get("text", "")})
    with (folder / "queries.jsonl").open(encoding="utf-8") as fh:
        queries = {q["_id"]: q["text"] for q in map(json.loads, fh)}
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
